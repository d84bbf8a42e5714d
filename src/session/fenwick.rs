//! Prefix sums with O(log n) point updates, by position: message token totals, and the context's
//! tokens by kind (`Breakdown`).

/// A value prefix sums are kept of. Arithmetic wraps: a node may go through negative partial sums
/// while every range of real values stays non-negative.
pub trait Summable: Copy + Default {
    fn plus(self, other: Self) -> Self;
    fn minus(self, other: Self) -> Self;
}

impl Summable for u64 {
    fn plus(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    fn minus(self, other: Self) -> Self {
        self.wrapping_sub(other)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Fenwick<T = u64> {
    tree: Vec<T>,
}

impl<T: Summable> Fenwick<T> {
    pub fn from_values(values: impl Iterator<Item = T>) -> Fenwick<T> {
        let mut tree: Vec<T> = values.collect();
        for i in 0..tree.len() {
            let parent = i | (i + 1);
            if parent < tree.len() {
                tree[parent] = tree[parent].plus(tree[i]);
            }
        }
        Fenwick { tree }
    }

    pub fn push(&mut self, value: T) {
        // Node i covers [i & (i + 1), i]: its value plus the positions below it in that range.
        let i = self.tree.len();
        let low = i & (i + 1);
        let node = value.plus(self.prefix(i)).minus(self.prefix(low));
        self.tree.push(node);
    }

    fn prefix(&self, end: usize) -> T {
        let mut sum = T::default();
        let mut i = end;
        while i > 0 {
            sum = sum.plus(self.tree[i - 1]);
            i &= i - 1;
        }
        sum
    }

    /// Position `i` changes from `old` to `new`.
    pub fn replace(&mut self, i: usize, old: T, new: T) {
        let delta = new.minus(old);
        let mut j = i;
        while j < self.tree.len() {
            self.tree[j] = self.tree[j].plus(delta);
            j |= j + 1;
        }
    }

    /// Sum of positions [start, end).
    pub fn range(&self, start: usize, end: usize) -> T {
        if start >= end {
            return T::default();
        }
        self.prefix(end).minus(self.prefix(start))
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
        f.replace(5, values[5], values[5] + 3);
        values[5] += 3;
        f.replace(36, values[36], values[36] - 2);
        values[36] -= 2;
        for a in 0..=values.len() {
            for b in a..=values.len() {
                assert_eq!(f.range(a, b), values[a..b].iter().sum::<u64>());
            }
        }
    }
}
