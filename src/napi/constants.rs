//! The core's lists of names, for the TypeScript layer (CLI choices, validation): written once,
//! in Rust.

use napi_derive::napi;

use super::errors::{guard, JsResult as Result};
use super::value::Text;

/// The transcript formats `importTranscript` reads.
#[napi(ts_return_type = "TranscriptFormat[]")]
pub fn transcript_formats() -> Vec<&'static str> {
    crate::formats::Format::ALL.iter().map(|f| f.as_str()).collect()
}

/// The tokenizers a session can count with.
#[napi(ts_return_type = "TokenizerName[]")]
pub fn tokenizer_names() -> Vec<&'static str> {
    crate::tokens::Tokenizer::ALL.iter().map(|t| t.name()).collect()
}

/// The shapes `toModelMessages` returns.
#[napi(ts_return_type = "ModelFormat[]")]
pub fn model_formats() -> Vec<&'static str> {
    crate::convert::ModelFormat::ALL.iter().map(|f| f.name()).collect()
}

/// Whether `line` is a session file's header line (`{"type":"header",...}`), well-formed or not: a
/// file that starts with one is a session file.
#[napi]
pub fn is_store_header(#[napi(ts_arg_type = "string")] line: Text) -> Result<bool> {
    guard(|| Ok(crate::store::is_header(line.get("line")?.as_bytes())))
}

/// Images and PDFs: what `stripMedia` and the overflow replay turn into
/// `[Attached <mime>: <filename>]`, and what counts a fixed token cost.
#[napi]
pub fn is_media(#[napi(ts_arg_type = "string")] mime: Text) -> Result<bool> {
    guard(|| Ok(crate::message::is_media(&mime.get("mime")?)))
}

/// What the model reads in place of a pruned tool output.
#[napi]
pub const PRUNED_MARKER: &str = crate::message::markers::PRUNED;
