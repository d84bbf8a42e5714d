//! What the model sees once a summary exists (`filterCompacted`).
//!
//! The newest *completed* compaction decides: its request at `request`, its summary at `summary`,
//! and the hidden range `[hidden_from, tail_start)`. The context then reads, in order: what the
//! head `[0, hidden_from)` shows (itself subject to the compactions inside it), the request
//! through the summary, the kept tail `[tail_start, request)`, and everything after the summary.
//! Earlier compaction requests and summaries inside the kept tail are left out: the newer summary
//! was written from them (opencode shows them again, mid-tail).

use std::collections::HashMap;

use crate::model::Message;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub request: usize,
    pub summary: usize,
    pub hidden_from: usize,
    pub tail_start: usize,
}

/// The end of the last segment: whatever is appended later is visible too.
pub const OPEN: usize = usize::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    /// The newest completed compaction, if any.
    pub cut: Option<Cut>,
    /// Visible positions as half-open ranges, in the order the model reads them; the last one
    /// may end at `OPEN`.
    pub segments: Vec<(usize, usize)>,
    /// Positions inside `segments` that are left out (absorbed compaction requests and summaries).
    pub excluded: Vec<usize>,
}

impl Default for View {
    fn default() -> Self {
        View {
            cut: None,
            segments: vec![(0, OPEN)],
            excluded: Vec::new(),
        }
    }
}

impl View {
    /// Computes the view of `len` messages. `index` maps message ids to positions.
    pub fn compute<'a>(
        len: usize,
        message: &impl Fn(usize) -> &'a Message,
        index: &HashMap<String, usize>,
    ) -> View {
        View::of_prefix(len, OPEN, message, index)
    }

    /// The view of the first `len` messages, its last segment ending at `end`.
    fn of_prefix<'a>(
        len: usize,
        end: usize,
        message: &impl Fn(usize) -> &'a Message,
        index: &HashMap<String, usize>,
    ) -> View {
        let Some(cut) = newest_cut(len, message, index) else {
            return View {
                cut: None,
                segments: vec![(0, end)],
                excluded: Vec::new(),
            };
        };
        // The head a partial compaction kept is itself seen through the compactions inside it.
        let mut view = if cut.hidden_from > 0 {
            View::of_prefix(cut.hidden_from, cut.hidden_from, message, index)
        } else {
            View {
                cut: None,
                segments: Vec::new(),
                excluded: Vec::new(),
            }
        };
        view.segments.push((cut.request, cut.summary + 1));
        view.segments.push((cut.tail_start, cut.request));
        view.excluded
            .extend((cut.tail_start..cut.request).filter(|&t| {
                let tm = message(t);
                tm.compaction().is_some() || tm.is_summary()
            }));
        view.segments.push((cut.summary + 1, end));
        view.segments.retain(|(a, b)| a < b);
        view.cut = Some(cut);
        view
    }

    /// Positions of the visible messages among `len`, in the order the model reads them.
    pub fn order(&self, len: usize) -> Vec<usize> {
        self.segments
            .iter()
            .flat_map(|&(a, b)| a..b.min(len))
            .filter(|i| !self.excluded.contains(i))
            .collect()
    }

    /// Positions before this one belong to a context a summary replaced; provider usage reported
    /// there does not describe the current context.
    pub fn usage_floor(&self) -> usize {
        self.cut.as_ref().map_or(0, |c| c.summary + 1)
    }

    pub fn is_visible(&self, i: usize) -> bool {
        self.segments.iter().any(|&(a, b)| (a..b).contains(&i)) && !self.excluded.contains(&i)
    }
}

fn newest_cut<'a>(
    len: usize,
    message: &impl Fn(usize) -> &'a Message,
    index: &HashMap<String, usize>,
) -> Option<Cut> {
    let mut completed: Vec<&str> = Vec::new();
    for i in (0..len).rev() {
        let m = message(i);
        if m.is_completed_summary() {
            if let Some(parent) = m.parent_id.as_deref() {
                completed.push(parent);
            }
            continue;
        }
        let Some(part) = m.compaction() else { continue };
        if !completed.contains(&m.id.as_str()) {
            continue;
        }
        let summary = (i + 1..len)
            .find(|&s| {
                let sm = message(s);
                sm.is_completed_summary() && sm.parent_id.as_deref() == Some(m.id.as_str())
            })
            .expect("a completed summary answers this request after it");
        // A tail id that is missing, or not before the request, keeps no tail.
        let tail_start = part
            .tail_start_id
            .as_ref()
            .and_then(|id| index.get(id).copied())
            .filter(|&t| t < i)
            .unwrap_or(i);
        let hidden_from = part
            .hidden_from_id
            .as_ref()
            .and_then(|id| index.get(id).copied())
            .filter(|&h| h <= tail_start)
            .unwrap_or(0);
        return Some(Cut {
            request: i,
            summary,
            hidden_from,
            tail_start,
        });
    }
    None
}
