use super::{Counter, PartCount};
use crate::message::Message;

/// A message with its token counts, computed once when it enters the history.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub msg: Message,
    pub parts: Vec<PartCount>,
    pub tokens: u64,
    /// When this version's provider usage was reported (ms, the history's clock; for a message
    /// loaded in bulk, its own completion time when it has one).
    pub seen_at: f64,
    /// The message's tokens when its provider usage was reported: what it grew by since (tool
    /// results that arrived after the answer) the report does not cover.
    pub reported_tokens: u64,
}

impl Entry {
    pub fn new(msg: Message, counter: &Counter) -> Entry {
        let (parts, tokens) = counter.message(&msg);
        Entry { msg, parts, tokens, seen_at: 0.0, reported_tokens: tokens }
    }

    /// The message's own completion (or creation) time, if it states one.
    pub fn stated_time(&self) -> Option<f64> {
        self.msg.time.as_ref().and_then(|t| t.completed.or(Some(t.created))).filter(|t| *t > 0.0)
    }
}
