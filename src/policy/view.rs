//! What the model sees once a summary exists (`filterCompacted`).
//!
//! The newest *completed* compaction decides: its request at `request`, its summary at `summary`,
//! and the hidden range `[hidden_from, tail_start)`. The context then reads, in order:
//! `[0, hidden_from)`, the request through the summary, the kept tail `[tail_start, request)`, and
//! everything after the summary. Earlier compaction requests and summaries inside the kept tail are
//! left out: the newer summary was written from them (opencode shows them again, mid-tail).

use std::collections::HashMap;

use crate::model::Message;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub request: usize,
    pub summary: usize,
    pub hidden_from: usize,
    pub tail_start: usize,
    /// Earlier compaction requests and summaries inside the kept tail.
    pub excluded: Vec<usize>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct View {
    pub cut: Option<Cut>,
}

impl View {
    /// Finds the newest completed compaction. `index` maps message ids to positions in `messages`.
    pub fn compute<'a>(
        len: usize,
        message: impl Fn(usize) -> &'a Message,
        index: &HashMap<String, usize>,
    ) -> View {
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
            let request = i;
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
                .filter(|&t| t < request)
                .unwrap_or(request);
            let hidden_from = part
                .hidden_from_id
                .as_ref()
                .and_then(|id| index.get(id).copied())
                .filter(|&h| h <= tail_start)
                .unwrap_or(0);
            let excluded = (tail_start..request)
                .filter(|&t| {
                    let tm = message(t);
                    tm.compaction().is_some() || tm.is_summary()
                })
                .collect();
            return View {
                cut: Some(Cut {
                    request,
                    summary,
                    hidden_from,
                    tail_start,
                    excluded,
                }),
            };
        }
        View { cut: None }
    }

    /// Positions of the visible messages, in the order the model reads them.
    pub fn order(&self, len: usize) -> Vec<usize> {
        match &self.cut {
            None => (0..len).collect(),
            Some(c) => {
                let mut out = Vec::with_capacity(len - (c.tail_start - c.hidden_from));
                out.extend(0..c.hidden_from);
                out.extend(c.request..=c.summary);
                out.extend((c.tail_start..c.request).filter(|i| !c.excluded.contains(i)));
                out.extend(c.summary + 1..len);
                out
            }
        }
    }

    /// Positions before this one belong to the context a summary replaced; provider usage reported
    /// there does not describe the current context.
    pub fn usage_floor(&self) -> usize {
        self.cut.as_ref().map_or(0, |c| c.summary + 1)
    }

    pub fn is_visible(&self, i: usize) -> bool {
        match &self.cut {
            None => true,
            Some(c) => {
                i < c.hidden_from
                    || (c.tail_start..c.request).contains(&i) && !c.excluded.contains(&i)
                    || i >= c.request
            }
        }
    }
}
