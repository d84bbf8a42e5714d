//! The summarizer's input: messages serialized with role markers, anything in them that could pass
//! for the prompt's own structure escaped, plus what the summary must not lose (files, facts).

mod escape;
mod facts;
mod files;
mod serialize;

pub use escape::{escape, MARKERS, TAGS};
pub use facts::{facts, Facts};
pub use files::{track_files, FileOps};
pub use serialize::{serialize_message, TOOL_OUTPUT_MAX_CHARS};
