//! What the history works out of each message when first asked, kept until the message changes
//! (an update or a prune starts it again).

use std::sync::OnceLock;

use super::History;
use crate::convert::cache::Shape;
use crate::summary_input::{digest, Digest};

#[derive(Clone, Debug, Default)]
struct Derived {
    /// What the message gives a prompt: placing cache breakpoints converts only new messages.
    shape: OnceLock<Shape>,
    /// Its transcript block and facts: a prepare gathers them (boxed: most messages never have one).
    digest: OnceLock<Box<Digest>>,
}

/// One `Derived` per history position, and the positions whose digest was dropped or never made
/// since the last `warm_compaction`, so warming costs what is new, not the session's length.
#[derive(Clone, Debug, Default)]
pub(super) struct DerivedList {
    items: Vec<Derived>,
    undigested: Vec<usize>,
}

impl DerivedList {
    pub(super) fn with_len(n: usize) -> DerivedList {
        DerivedList { items: (0..n).map(|_| Derived::default()).collect(), undigested: (0..n).collect() }
    }

    pub(super) fn push(&mut self) {
        self.undigested.push(self.items.len());
        self.items.push(Derived::default());
    }

    /// The message at `i` changed.
    pub(super) fn reset(&mut self, i: usize) {
        let digested = self.items[i].digest.get().is_some();
        self.items[i] = Derived::default();
        self.relist(i, digested);
    }

    /// Lists `i` for the next warm when it had a digest. One without is listed already (new or
    /// changed since the last warm), or was passed over as hidden and is made when a prepare asks:
    /// a session that never warms keeps a list no longer than itself.
    fn relist(&mut self, i: usize, digested: bool) {
        if digested {
            self.undigested.push(i);
        }
    }

    /// Drops the digests of the messages `visible` says the model no longer sees (a compaction
    /// replaced them): a prepare never reads them again.
    pub(super) fn forget_hidden(&mut self, visible: impl Fn(usize) -> bool) {
        for (i, d) in self.items.iter_mut().enumerate() {
            if d.digest.get().is_some() && !visible(i) {
                d.digest = OnceLock::new();
            }
        }
    }

    /// How many messages have a digest.
    #[cfg(test)]
    pub(super) fn digested(&self) -> usize {
        self.items.iter().filter(|d| d.digest.get().is_some()).count()
    }

    /// Positions waiting for the next warm.
    #[cfg(test)]
    pub(super) fn listed(&self) -> usize {
        self.undigested.len()
    }

    /// The message at `i` was pruned: its block changed, its prompt shape did not.
    pub(super) fn forget_digest(&mut self, i: usize) {
        let digested = self.items[i].digest.take().is_some();
        self.relist(i, digested);
    }
}

/// Fewer missing digests than this are worked out on the calling thread.
const PARALLEL_MIN: usize = 256;

impl History {
    /// What the message at position `i` gives a prompt. A prune leaves it as it was: a cleared
    /// output is still one result, with the app's breakpoints where they were.
    pub fn shape(&self, i: usize) -> Shape {
        *self.derived.items[i].shape.get_or_init(|| Shape::of(&self.entries[i].msg))
    }

    /// The message at position `i` as a prepare reads it.
    pub fn digest(&self, i: usize) -> &Digest {
        self.derived.items[i].digest.get_or_init(|| Box::new(digest(&self.entries[i].msg)))
    }

    /// Works out the digests `positions` lack, on every core when there are many; returns how
    /// many it made.
    pub fn warm_digests(&self, positions: &[usize]) -> usize {
        let missing: Vec<usize> =
            positions.iter().copied().filter(|&i| self.derived.items[i].digest.get().is_none()).collect();
        let threads = crate::cores::cores();
        let work = |i: &usize| {
            self.digest(*i);
        };
        if missing.len() < PARALLEL_MIN || threads == 1 {
            missing.iter().for_each(work);
        } else {
            // Interleaved, so long and short messages spread over the threads alike.
            std::thread::scope(|scope| {
                for t in 0..threads {
                    let missing = &missing;
                    scope.spawn(move || missing.iter().skip(t).step_by(threads).for_each(work));
                }
            });
        }
        missing.len()
    }

    /// `warm_digests` of the messages the model sees that are new or changed since the last call:
    /// a prepare at the next overflow then only gathers.
    pub fn warm_compaction(&mut self) -> usize {
        let mut positions = std::mem::take(&mut self.derived.undigested);
        positions.sort_unstable();
        positions.dedup();
        positions.retain(|&i| i < self.entries.len() && self.view.is_visible(i));
        self.warm_digests(&positions)
    }
}
