//! Prefix sums with O(log n) point updates: message token totals by position.

#[derive(Clone, Debug, Default)]
pub struct Fenwick {
    tree: Vec<i64>,
}

impl Fenwick {
    pub fn from_values(values: impl Iterator<Item = u64>) -> Fenwick {
        let mut tree: Vec<i64> = values.map(|v| v as i64).collect();
        for i in 0..tree.len() {
            let parent = i | (i + 1);
            if parent < tree.len() {
                tree[parent] += tree[i];
            }
        }
        Fenwick { tree }
    }

    pub fn push(&mut self, value: u64) {
        // Node i covers [i & (i + 1), i]: its value plus the positions below it in that range.
        let i = self.tree.len();
        let low = i & (i + 1);
        let node = value as i64 + self.prefix_i(i) - self.prefix_i(low);
        self.tree.push(node);
    }

    fn prefix_i(&self, end: usize) -> i64 {
        let mut sum = 0;
        let mut i = end;
        while i > 0 {
            sum += self.tree[i - 1];
            i &= i - 1;
        }
        sum
    }

    pub fn add(&mut self, i: usize, delta: i64) {
        let mut j = i;
        while j < self.tree.len() {
            self.tree[j] += delta;
            j |= j + 1;
        }
    }

    /// Sum of positions [start, end).
    pub fn range(&self, start: usize, end: usize) -> u64 {
        if start >= end {
            return 0;
        }
        (self.prefix_i(end) - self.prefix_i(start)).max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_naive_sums_under_pushes_and_updates() {
        let mut values: Vec<u64> = (0..37).map(|i| (i * 7 % 11) as u64).collect();
        let mut f = Fenwick::from_values(values[..20].iter().copied());
        for v in &values[20..] {
            f.push(*v);
        }
        f.add(5, 3);
        values[5] += 3;
        f.add(36, -2);
        values[36] -= 2;
        for a in 0..=values.len() {
            for b in a..=values.len() {
                assert_eq!(f.range(a, b), values[a..b].iter().sum::<u64>());
            }
        }
    }
}
