//! Prunes in time order. Provider usage reported before a prune still counts the outputs it
//! cleared; these marks say how much to take off, whatever happened to the view since.

use crate::tokens::Entry;

#[derive(Clone, Debug, Default)]
pub struct Prunes {
    /// (when, message position, tokens cleared), sorted by time.
    marks: Vec<(f64, usize, u64)>,
}

fn marks_of(position: usize, e: &Entry) -> impl Iterator<Item = (f64, usize, u64)> + '_ {
    e.msg.parts.iter().zip(&e.parts).filter_map(move |(p, c)| p.cleared_at().map(|at| (at, position, c.cleared)))
}

impl Prunes {
    pub fn of(entries: &[Entry]) -> Prunes {
        let mut marks: Vec<_> = entries.iter().enumerate().flat_map(|(i, e)| marks_of(i, e)).collect();
        marks.sort_by(|a, b| a.0.total_cmp(&b.0));
        Prunes { marks }
    }

    /// The time of the newest prune (0 without any).
    pub fn latest(&self) -> f64 {
        self.marks.last().map_or(0.0, |m| m.0)
    }

    pub fn record(&mut self, at: f64, position: usize, cleared: u64) {
        let k = self.marks.partition_point(|m| m.0 <= at);
        self.marks.insert(k, (at, position, cleared));
    }

    /// The message at `position` changed: its marks are read again.
    pub fn replace(&mut self, position: usize, e: &Entry) {
        self.marks.retain(|m| m.1 != position);
        for (at, p, cleared) in marks_of(position, e).collect::<Vec<_>>() {
            self.record(at, p, cleared);
        }
    }

    /// Tokens cleared after `time` from messages before `position` that `counts` accepts.
    pub fn cleared_after(&self, time: f64, position: usize, counts: impl Fn(usize) -> bool) -> u64 {
        let from = self.marks.partition_point(|m| m.0 <= time);
        self.marks[from..].iter().filter(|m| m.1 < position && counts(m.1)).map(|m| m.2).sum()
    }
}
