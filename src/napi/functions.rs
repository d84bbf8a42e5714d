//! Stateless functions for agents that keep their own history. Each call converts the whole list,
//! so they are for occasional use; per-turn work belongs on a `Session`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::Deserialize;

use super::errors::{guard, JsResult as Result};
use super::objects::{PruneResult, Selection, TailStart, Turn};
use super::tasks::{AbortFlag, CountTask};
use super::value::{self, Json, JsonList, Text};
use crate::convert::convert;
use crate::convert::ConvertArgs;
use crate::error::Result as CoreResult;
use crate::message::Message;
use crate::policy;
use crate::session::{History, SessionOptions};
use crate::tokens::{count_tokens as count, estimate_tokens as estimate, Encoding};

fn history(
    messages: JsonList,
    compaction: Option<Json>,
    model: Option<Json>,
    tokenizer: Option<Text>,
) -> CoreResult<History> {
    let tokenizer = tokenizer.map(|t| t.get("tokenizer")).transpose()?;
    let opts = SessionOptions {
        model: value::optional("model", model)?,
        compaction: value::optional("cfg", compaction)?,
        tokenizer,
        cache: Default::default(),
    };
    History::from_messages(messages.messages()?, opts, &|| false)
}

/// Converts messages (as they are: pass `filterCompacted` output for a compacted history) to AI
/// SDK `ModelMessage`s, or with `format` to the Anthropic Messages or OpenAI chat shape.
#[napi(ts_generic_types = "F extends ModelFormat = 'ai-sdk'", ts_return_type = "ConvertResult<F>")]
pub fn to_model_messages<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "Message[]")] messages: JsonList,
    #[napi(ts_arg_type = "ConvertOptions<F>")] options: Option<Json>,
) -> Result<Unknown<'env>> {
    guard(|| {
        let args = value::optional::<ConvertArgs>("options", options)?;
        let format = args.model_format()?;
        let cache = args.cache_control()?;
        let opts = args.over(Default::default());
        let msgs = messages.messages()?;
        let shown: Vec<&Message> = msgs.iter().collect();
        value::messages_to_js(env, &convert(&shown, &opts, format, cache.as_ref()), &msgs)
    })
}

/// What the model sees of a history: the newest completed summary's request and summary, the
/// kept tail, and everything after. Nothing is deleted from the input.
#[napi(ts_return_type = "Message[]")]
pub fn filter_compacted<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "Message[]")] messages: JsonList,
) -> Result<Unknown<'env>> {
    guard(|| {
        let h = history(messages, None, None, Some(Text::from("estimate")))?;
        let visible: Vec<&Message> = h.visible().into_iter().map(|e| &e.msg).collect();
        value::messages_to_js(env, &visible, visible.iter().copied())
    })
}

/// Which tool outputs a prune would clear; the caller sets `state.compactedAt` on them.
#[napi]
pub fn prune(
    #[napi(ts_arg_type = "Message[]")] messages: JsonList,
    #[napi(ts_arg_type = "CompactionConfig")] cfg: Option<Json>,
    #[napi(ts_arg_type = "TokenizerName")] tokenizer: Option<Text>,
) -> Result<PruneResult> {
    guard(|| {
        let tokenizer = Some(tokenizer.unwrap_or_else(|| Text::from("estimate")));
        let mut h = history(messages, cfg, None, tokenizer)?;
        Ok(h.prune().into())
    })
}

/// Turns of `messages`: one per user message that is not a compaction request.
#[napi]
pub fn turns(#[napi(ts_arg_type = "Message[]")] messages: JsonList) -> Result<Vec<Turn>> {
    guard(|| Ok(policy::message_turns(messages.messages()?).into_iter().map(Turn::from).collect()))
}

/// Where the verbatim tail starts in `messages` (pass `filterCompacted` output).
#[napi]
pub fn select(
    #[napi(ts_arg_type = "Message[]")] messages: JsonList,
    #[napi(ts_arg_type = "CompactionConfig")] cfg: Option<Json>,
    #[napi(ts_arg_type = "ModelInfo")] model: Option<Json>,
    #[napi(ts_arg_type = "TokenizerName")] tokenizer: Option<Text>,
) -> Result<Selection> {
    guard(|| Ok(history(messages, cfg, model, tokenizer)?.select_whole().into()))
}

/// The largest suffix of `turn` that fits `budget` tokens and may start a tail, if any.
#[napi]
pub fn split_turn(
    #[napi(ts_arg_type = "Message[]")] messages: JsonList,
    #[napi(ts_arg_type = "Turn")] turn: Json,
    #[napi(ts_arg_type = "number")] budget: Json,
    #[napi(ts_arg_type = "TokenizerName")] tokenizer: Option<Text>,
) -> Result<Option<TailStart>> {
    guard(|| {
        let h = history(messages, None, None, tokenizer)?;
        let turn: TurnArg = turn.options("turn")?;
        let turn = crate::policy::Turn { start: turn.start, end: turn.end, id: turn.id };
        let split = h.split_turn_whole(&turn, budget.options("budget")?)?;
        Ok(split.map(|(start, id)| TailStart { start: start as u32, id: id.to_string() }))
    })
}

#[derive(Deserialize)]
struct TurnArg {
    start: usize,
    end: usize,
    #[serde(default)]
    id: String,
}

/// Tokens a context may hold before it overflows (0 when the window is unknown).
#[napi]
pub fn usable(#[napi(ts_arg_type = "UsableArgs")] args: Json) -> Result<f64> {
    guard(|| Ok(args.options::<policy::UsableArgs>("args")?.usable() as f64))
}

/// True when `tokens` (a count or a provider `Usage`) reaches `usable`.
#[napi]
pub fn is_overflow(#[napi(ts_arg_type = "OverflowArgs")] args: Json) -> Result<bool> {
    guard(|| Ok(args.options::<policy::OverflowArgs>("args")?.is_overflow()))
}

/// Tokenizer-free estimate, calibrated per character class (not chars/4).
#[napi]
pub fn estimate_tokens(#[napi(ts_arg_type = "string")] text: Text) -> Result<f64> {
    guard(|| Ok(estimate(&text.get("text")?) as f64))
}

/// Exact OpenAI token count (`o200k` or `cl100k`).
#[napi]
pub fn count_tokens(
    #[napi(ts_arg_type = "string")] text: Text,
    #[napi(ts_arg_type = "'o200k' | 'cl100k'")] encoding: Text,
) -> Result<f64> {
    guard(|| Ok(count(&text.get("text")?, Encoding::parse(&encoding.get("encoding")?)?) as f64))
}

/// `countTokens` off the JS thread, for large text; abortable.
#[napi(ts_return_type = "Promise<number>")]
pub fn count_tokens_async(
    env: Env,
    #[napi(ts_arg_type = "string")] text: Text,
    #[napi(ts_arg_type = "'o200k' | 'cl100k'")] encoding: Text,
    #[napi(ts_arg_type = "AbortSignal")] signal: Option<Unknown>,
) -> Result<AsyncTask<CountTask>> {
    guard(|| {
        let text = text.get("text")?;
        let encoding = Encoding::parse(&encoding.get("encoding")?)?;
        let abort = AbortFlag::follow(&env, signal)?;
        Ok(AsyncTask::new(CountTask { text, encoding, abort }))
    })
}

/// Escapes text for a summarizer prompt the way transcript blocks are escaped: the `<` of a
/// reserved tag becomes `&lt;` and a line that starts like a transcript marker gets a backslash.
#[napi]
pub fn escape_text(#[napi(ts_arg_type = "string")] text: Text) -> Result<String> {
    guard(|| Ok(crate::summary_input::escape(&text.get("text")?)))
}

/// A provider's usage report as a contextfold `Usage` (`input` without the cached tokens): AI SDK
/// v5, v6 and v7 step usage, the provider specification's nested shape, OpenAI chat and responses,
/// Anthropic, pi-ai. With the call's `providerMetadata`, Anthropic's own report in it comes first
/// (ai v5's Anthropic provider reports cache writes only there). `undefined` when there is no
/// usage report. The one mapping the importers, the summarizers and the integrations share.
#[napi(ts_return_type = "Usage | undefined")]
pub fn usage_from_provider<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "unknown")] usage: Json,
    #[napi(ts_arg_type = "unknown")] provider_metadata: Option<Json>,
) -> Result<Unknown<'env>> {
    guard(|| {
        let usage = usage.value("usage", crate::error::Code::InvalidArgument)?;
        let metadata =
            provider_metadata.map(|m| m.value("providerMetadata", crate::error::Code::InvalidArgument)).transpose()?;
        match crate::message::step_usage_from_provider(&usage, metadata.as_ref()) {
            Some(u) => value::to_js(env, &u),
            None => value::undefined(env),
        }
    })
}

/// Characters of one tool output a summary request shows: its head and tail around a line saying
/// how many were omitted.
#[napi]
pub const SUMMARY_TOOL_OUTPUT_MAX_CHARS: u32 = crate::summary_input::TOOL_OUTPUT_MAX_CHARS as u32;
