//! The canonical message model (opencode-like: a tool call and its result are one part), and the
//! exact strings the model reads in place of what was cut, cleared or never finished.

pub mod ai_sdk_layout;
mod envelope;
pub mod markers;
mod parse;
mod part;
mod provider_usage;
mod text;
mod tool_state;
mod truncate;

pub use envelope::{Message, MessageError, ModelRef, Role, Time, Usage, LATEST_REQUEST};
pub use parse::{check_message, parse_message};
pub use part::{
    is_other, other_fields, CompactionFiles, CompactionPart, FilePart, Part, ReasoningPart, TextPart, ToolPart,
    ToolState, KINDS, RAW,
};
pub use provider_usage::{step_usage_from_provider, usage_from_provider};
pub use text::{Snapshot, Text};
pub use truncate::{head_and_tail, keep_head_and_tail, Cut};

/// `image/*` and PDFs: what `stripMedia` replaces and what counts a fixed token cost.
pub fn is_media(mime: &str) -> bool {
    mime.starts_with("image/") || mime == "application/pdf"
}
