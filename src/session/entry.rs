use crate::model::Message;
use crate::tokens::{Counter, PartCount};

/// A message with its token counts, computed once when it enters the history.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub msg: Message,
    pub parts: Vec<PartCount>,
    pub tokens: u64,
}

impl Entry {
    pub fn new(msg: Message, counter: &Counter) -> Entry {
        let (parts, tokens) = counter.message(&msg);
        Entry { msg, parts, tokens }
    }
}
