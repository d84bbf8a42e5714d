//! The canonical message model (opencode-like: a tool call and its result are one part).

mod message;
mod parse;
mod part;

pub use message::{Message, MessageError, ModelRef, Role, Time, Usage};
pub use parse::{check_message, parse_message};
pub use part::{CompactionPart, FilePart, Part, ReasoningPart, TextPart, ToolPart, ToolState};

/// `image/*` and PDFs: what `stripMedia` replaces and what counts a fixed token cost.
pub fn is_media(mime: &str) -> bool {
    mime.starts_with("image/") || mime == "application/pdf"
}
