//! The context read in place: the view's runs of positions over the entries, with token sums from
//! the prefix sums and turn starts from their sorted index, so the per-turn queries (`select`)
//! walk only the tail instead of copying the whole context first.

use super::fenwick::Fenwick;
use crate::policy::Seq;
use crate::tokens::Entry;

pub struct Visible<'h> {
    entries: &'h [Entry],
    sums: &'h Fenwick,
    turn_starts: &'h [usize],
    /// Runs of positions `[a, b)` in context order, each with the context index it starts at.
    runs: Vec<(usize, usize, usize)>,
    len: usize,
}

impl<'h> Visible<'h> {
    pub fn new(entries: &'h [Entry], sums: &'h Fenwick, turn_starts: &'h [usize], segments: &[(usize, usize)]) -> Self {
        let mut runs = Vec::with_capacity(segments.len());
        let mut len = 0;
        for &(a, b) in segments {
            let b = b.min(entries.len());
            if a < b {
                runs.push((a, b, len));
                len += b - a;
            }
        }
        Visible { entries, sums, turn_starts, runs, len }
    }

    /// The history position of context index `k`.
    pub fn position(&self, k: usize) -> usize {
        let (a, _, at) = self.runs[self.run_of(k)];
        a + k - at
    }

    /// The run holding context index `k` (the last run for `k == len`).
    fn run_of(&self, k: usize) -> usize {
        self.runs.iter().rposition(|&(_, _, at)| at <= k).unwrap_or(0)
    }
}

impl<'h> Seq<'h> for Visible<'h> {
    fn len(&self) -> usize {
        self.len
    }

    fn at(&self, k: usize) -> &'h Entry {
        &self.entries[self.position(k)]
    }

    fn tokens(&self, from: usize, to: usize) -> u64 {
        self.runs
            .iter()
            .map(|&(a, b, at)| {
                let lo = a + from.saturating_sub(at).min(b - a);
                let hi = a + to.saturating_sub(at).min(b - a);
                self.sums.range(lo, hi)
            })
            .sum()
    }

    fn turn_start_before(&self, end: usize) -> Option<usize> {
        if end == 0 {
            return None;
        }
        let last = self.run_of(end - 1);
        for (r, &(a, b, at)) in self.runs.iter().enumerate().take(last + 1).rev() {
            let limit = if r == last { a + end - at } else { b };
            // The newest turn start in positions [a, limit).
            let i = self.turn_starts.partition_point(|&p| p < limit);
            if let Some(&p) = i.checked_sub(1).map(|i| &self.turn_starts[i]) {
                if p >= a {
                    return Some(at + p - a);
                }
            }
        }
        None
    }
}
