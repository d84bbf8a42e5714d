//! What a prepare needs of one message, worked out from the message alone: its transcript block
//! (shared, so a plan hands it to JS without copying it), the block with its secrets replaced,
//! the facts the message adds and the files it names. A session keeps one per message until the
//! message changes, so a compaction gathers them instead of reading every message again.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::facts::{message_facts, MessageFacts};
use super::files::message_files;
use super::secrets::redact;
use super::serialize::serialize_message;
use crate::message::Message;

/// A transcript block: its text, shared with the digest it came from, and whether it is ASCII
/// (known when it is made, so handing it to JS as an external string scans nothing).
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// An `Arc<String>` rather than an `Arc<str>`: made from a `String` without copying it.
    pub text: Arc<String>,
    pub ascii: bool,
}

impl Block {
    pub fn new(text: impl Into<String>) -> Block {
        let text = Arc::new(text.into());
        Block { ascii: text.is_ascii(), text }
    }

    /// The block with its secrets replaced, and how many, when it holds any.
    pub fn redacted(&self) -> Option<(Block, u64)> {
        let (out, n) = redact(&self.text);
        (n > 0).then(|| (Block::new(out), n as u64))
    }
}

impl std::ops::Deref for Block {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl PartialEq<&str> for Block {
    fn eq(&self, other: &&str) -> bool {
        self.text.as_str() == *other
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Block, D::Error> {
        String::deserialize(d).map(Block::new)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Digest {
    /// The message's transcript block, secrets left in (`None`: the message says nothing).
    pub block: Option<Block>,
    /// The block with its secrets replaced, and how many, when it holds any.
    pub redacted: Option<(Block, u64)>,
    /// The message is a completed summary.
    pub completed_summary: bool,
    pub facts: MessageFacts,
    /// Files the message's tool calls read and modified.
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
}

pub fn digest(m: &Message) -> Digest {
    let block = serialize_message(m).map(Block::new);
    let redacted = block.as_ref().and_then(Block::redacted);
    let (read_files, modified_files) = message_files(m);
    let completed_summary = m.is_completed_summary();
    Digest { block, redacted, completed_summary, facts: message_facts(m), read_files, modified_files }
}

impl Digest {
    /// The block as the summarizer reads it, and how many secrets were replaced in it.
    pub fn block(&self, redact_secrets: bool) -> Option<(Block, u64)> {
        match &self.redacted {
            Some(r) if redact_secrets => Some(r.clone()),
            _ => self.block.clone().map(|b| (b, 0)),
        }
    }
}
