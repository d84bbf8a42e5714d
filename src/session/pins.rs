//! Pins: messages and texts a compaction never summarizes away. They are kept verbatim in the
//! summary's Preserved section, recorded in each compaction request (so they survive
//! `filterCompacted` and tail-first loads), and in the store as `pins` entries.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::message::{Message, Part, ToolState};

/// A pinned message or text: kept verbatim through every compaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    pub id: String,
    /// The pinned message (absent for a pinned text).
    #[serde(rename = "messageID", default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// What is kept verbatim: the text, or what the model reads of the message.
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What the model reads of a message: its texts, and each tool call's input and result.
pub fn readable_text(m: &Message) -> String {
    // Texts are borrowed until the join, which copies them once.
    let mut out: Vec<Cow<'_, str>> = Vec::new();
    for p in &m.parts {
        match p {
            Part::Text(t) if !t.text.trim().is_empty() => out.push(Cow::Borrowed(&t.text)),
            Part::Tool(t) => {
                out.push(Cow::Owned(format!("{}({})", t.tool, t.state.input())));
                match &t.state {
                    ToolState::Completed { compacted_at: None, output, .. } => out.push(Cow::Borrowed(output)),
                    ToolState::Error { error, .. } => out.push(Cow::Borrowed(error)),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    out.join("\n")
}

/// The pins a compaction request recorded (its `pins` field), if `m` is one.
pub fn recorded_pins(m: &Message) -> Option<Vec<Pin>> {
    let c = m.compaction()?;
    serde_json::from_value(c.extra.get("pins")?.clone()).ok()
}

/// The pins of a history: those the newest compaction request recorded.
pub fn pins_of<'a>(messages: impl DoubleEndedIterator<Item = &'a Message>) -> Vec<Pin> {
    messages.rev().find_map(recorded_pins).unwrap_or_default()
}
