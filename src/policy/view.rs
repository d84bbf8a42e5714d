//! What the model sees once summaries exist (`filterCompacted`).
//!
//! Each completed compaction (a request with a `compaction` part, answered by a finished,
//! error-free summary) applies to the context as it stood when it was requested: in that order,
//! it hides the run from `hiddenFromID` (default: the start) up to `tailStartID` (default: the
//! end), and puts the request and its summary where the run was. Messages after the summary
//! follow the kept tail. So a later compaction whose tail starts inside an earlier kept tail hides
//! the earlier summary with everything else it replaces, and one whose tail starts inside a kept
//! head neither brings back what the earlier one hid nor drops its summary. (opencode cuts by
//! storage position instead and shows an earlier summary again in the middle of a tail.)

use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::message::Message;

/// The newest completed compaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub request: usize,
    pub summary: usize,
}

/// The end of the last segment: whatever is appended later is visible too.
pub const OPEN: usize = usize::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub cut: Option<Cut>,
    /// Visible positions as half-open runs, in the order the model reads them; the last one ends
    /// at `OPEN`.
    pub segments: Vec<(usize, usize)>,
    /// Compaction requests whose summary has been applied.
    pub answered: Vec<usize>,
}

impl Default for View {
    fn default() -> Self {
        View { cut: None, segments: vec![(0, OPEN)], answered: Vec::new() }
    }
}

/// Where the computation of a view starts: the state it reached after the first `len` messages.
/// A store that loads only the messages a context shows gives the state its file recorded, so
/// the view of the loaded messages is the view of the whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Base {
    /// Messages `[0, len)` are covered.
    pub len: usize,
    /// The visible ones among them, in the order the model reads them.
    pub order: Vec<usize>,
    /// Requests among them whose summary has been applied.
    pub answered: Vec<usize>,
    pub cut: Option<Cut>,
}

impl View {
    /// Computes the view of `len` messages. `index` maps message ids to positions.
    pub fn compute<'a, S: BuildHasher>(
        len: usize,
        message: &impl Fn(usize) -> &'a Message,
        index: &HashMap<String, usize, S>,
    ) -> View {
        View::compute_from(&Base::default(), len, message, index)
    }

    /// Computes the view of `len` messages, the first `base.len` of them as `base` says.
    pub fn compute_from<'a, S: BuildHasher>(
        base: &Base,
        len: usize,
        message: &impl Fn(usize) -> &'a Message,
        index: &HashMap<String, usize, S>,
    ) -> View {
        let mut order: Vec<usize> = Vec::with_capacity(len);
        order.extend_from_slice(&base.order);
        let mut answered: Vec<usize> = base.answered.clone();
        let mut cut = base.cut.clone();
        for i in base.len.min(len)..len {
            let m = message(i);
            let request = m
                .is_completed_summary()
                .then(|| m.parent_id.as_deref().and_then(|p| index.get(p).copied()))
                .flatten()
                .filter(|&w| w < i && message(w).compaction().is_some() && !answered.contains(&w));
            let Some(w) = request else {
                order.push(i);
                continue;
            };
            // The request was placed as an ordinary message; what came before it is the context
            // the compaction applies to.
            let Some(pw) = order.iter().rposition(|&x| x == w) else {
                order.push(i);
                continue;
            };
            answered.push(w);
            let part = message(w).compaction().expect("checked above");
            let before = &order[..pw];
            let find = |id: &Option<String>| {
                id.as_ref().and_then(|id| index.get(id)).and_then(|p| before.iter().position(|x| x == p))
            };
            let tail = find(&part.tail_start_id).unwrap_or(before.len());
            let head = find(&part.hidden_from_id).filter(|&h| h <= tail).unwrap_or(0);
            let mut next = Vec::with_capacity(order.len() + 1);
            next.extend_from_slice(&before[..head]);
            next.extend_from_slice(&order[pw..]);
            next.push(i);
            next.extend_from_slice(&before[tail..]);
            order = next;
            cut = Some(Cut { request: w, summary: i });
        }
        View { cut, segments: runs(&order, len), answered }
    }

    /// The state after the newest applied compaction's summary (what a store records so a load
    /// can start there); `None` when no compaction applies.
    pub fn base(&self, len: usize) -> Option<Base> {
        let cut = self.cut.clone()?;
        let order = self.order(len).into_iter().filter(|&p| p <= cut.summary).collect();
        Some(Base { len: cut.summary + 1, order, answered: self.answered.clone(), cut: Some(cut) })
    }

    /// Positions of the visible messages among `len`, in the order the model reads them.
    pub fn order(&self, len: usize) -> Vec<usize> {
        self.segments.iter().flat_map(|&(a, b)| a..b.min(len)).collect()
    }

    /// Positions before this one belong to a context a summary replaced; provider usage reported
    /// there does not describe the current context.
    pub fn usage_floor(&self) -> usize {
        self.cut.as_ref().map_or(0, |c| c.summary + 1)
    }

    pub fn is_visible(&self, i: usize) -> bool {
        self.segments.iter().any(|&(a, b)| (a..b).contains(&i))
    }
}

/// Compresses an order into runs of consecutive positions; messages appended later go last.
fn runs(order: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &i in order {
        match out.last_mut() {
            Some((_, end)) if *end == i => *end += 1,
            _ => out.push((i, i + 1)),
        }
    }
    match out.last_mut() {
        Some((_, end)) if *end == len => *end = OPEN,
        _ => out.push((len, OPEN)),
    }
    out
}
