//! What the provider last received: when, and how far into the history it went. The cache-aware
//! prune policy reads it to know whether the provider still caches that prompt and which part of
//! a prune's change it had already cached.

use super::fenwick::Summable;
use super::History;
use crate::message::{Message, Part};
use crate::tokens::Entry;

/// An answer the provider refused before writing a word (a context overflow, an API error): the
/// request it answers was never read.
fn refused(m: &Message) -> bool {
    m.error.is_some() && m.parts.iter().all(|p| matches!(p, Part::Text(t) if t.text.trim().is_empty()))
}

/// The last request: its time (epoch ms) and the number of messages of the history it followed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sent {
    pub at: f64,
    /// Messages `[0, len)` of the history (in arrival order) existed when it was sent.
    pub len: usize,
    /// Recorded by the caller (`record_request`) rather than read from the newest answer.
    pub recorded: bool,
}

impl History {
    /// Records that the context as it stands was sent to the provider at `at` (default: the
    /// newest message's own time, else the history's clock).
    pub fn record_request(&mut self, at: Option<f64>) -> Sent {
        let at = at.or_else(|| self.message_time()).unwrap_or_else(|| self.tick());
        let sent = Sent { at, len: self.entries.len(), recorded: true };
        self.last_request = Some(sent);
        sent
    }

    /// The newest request: the one recorded, or the one the newest answer replied to (sent when
    /// that answer started, with every message before it), whichever came later.
    pub fn last_sent(&self) -> Option<Sent> {
        let answered =
            self.entries.iter().rposition(|e| e.msg.is_assistant() && !e.msg.is_summary() && !refused(&e.msg)).map(
                |i| {
                    let e = &self.entries[i];
                    let at = e.msg.time.as_ref().map(|t| t.created).filter(|t| *t > 0.0).unwrap_or(e.seen_at);
                    Sent { at, len: i, recorded: false }
                },
            );
        match (self.last_request, answered) {
            (Some(r), Some(a)) => Some(if a.len > r.len { a } else { r }),
            (r, a) => r.or(a),
        }
    }

    /// How many messages at the end of the context arrived after the last request (the provider has
    /// not read them yet; 0 when nothing was sent). O(segments of the view).
    pub fn unsent_in_context(&self) -> usize {
        self.last_sent().map_or(0, |sent| self.unsent_after(sent))
    }

    /// How many messages at the end of the context arrived after the last request recorded with
    /// `record_request` (0 when the newest answer is later: reading it from an answer cannot tell
    /// whether the answer's own tool output was read by a later step of it).
    pub fn unread_in_context(&self) -> usize {
        self.last_sent().filter(|s| s.recorded).map_or(0, |sent| self.unsent_after(sent))
    }

    /// How many messages at the end of the context arrived after `sent`. O(segments of the view).
    pub fn unsent_after(&self, sent: Sent) -> usize {
        let len = self.entries.len();
        let mut n = 0;
        for &(a, b) in self.view.segments.iter().rev() {
            let b = b.min(len);
            n += b.saturating_sub(a.max(sent.len));
            if a < sent.len {
                break;
            }
        }
        n
    }

    /// The newest time the messages state themselves (an answer's completion, else creation).
    pub fn message_time(&self) -> Option<f64> {
        self.entries.iter().rev().take(8).filter_map(|e| e.stated_time()).reduce(f64::max)
    }

    /// Tokens a request adds to the context, on average: the context since the newest summary
    /// (or all of it) over the answers in it, from prefix sums (O(log n) per run of the view).
    pub fn growth_per_request(&self) -> u64 {
        let len = self.entries.len();
        let g = self
            .view
            .segments
            .iter()
            .fold(Growth::default(), |acc, &(a, b)| acc.plus(self.growth.range(a, b.min(len))));
        g.tokens / g.answers.max(1)
    }
}

/// What one message adds to the context's growth: its tokens, and whether it is an answer (a
/// request). Summaries and compaction requests add nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Growth {
    tokens: u64,
    answers: u64,
}

impl Growth {
    pub fn of(e: &Entry) -> Growth {
        if e.msg.is_summary() || e.msg.compaction().is_some() {
            return Growth::default();
        }
        Growth { tokens: e.tokens, answers: u64::from(e.msg.is_assistant()) }
    }
}

impl Summable for Growth {
    fn plus(self, other: Self) -> Self {
        Growth { tokens: self.tokens.wrapping_add(other.tokens), answers: self.answers.wrapping_add(other.answers) }
    }
    fn minus(self, other: Self) -> Self {
        Growth { tokens: self.tokens.wrapping_sub(other.tokens), answers: self.answers.wrapping_sub(other.answers) }
    }
}
