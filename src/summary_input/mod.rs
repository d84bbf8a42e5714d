//! The summarizer's input: messages serialized with role markers, anything in them that could pass
//! for the prompt's own structure escaped, plus what the summary must not lose (files, facts).

mod commands;
mod digest;
mod escape;
mod facts;
mod files;
mod identifiers;
mod prefilter;
#[cfg(test)]
mod prefilter_props;
mod secrets;
mod serialize;
mod user_text;

pub use commands::{failed_exit_code, identifying_line, program, CommandGroup};
pub use digest::{digest, Block, Digest};
pub use escape::{escape, MARKERS, TAGS};
pub use facts::{facts, gather, message_facts, request_text, Facts, LastError, MessageFacts};
pub use files::{call_files, file_op, track_files, FileOps};
pub use secrets::redact;
pub use serialize::{serialize_message, TOOL_OUTPUT_MAX_CHARS};
pub use user_text::{decode_entities, is_constraint, sentences, user_text};
