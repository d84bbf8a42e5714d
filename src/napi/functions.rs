//! Stateless functions for agents that keep their own history. Each call converts the whole list,
//! so they are for occasional use; per-turn work belongs on a `Session`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde::Deserialize;
use serde_json::Value;

use super::errors::{guard, to_js, JsResult as Result};
use super::objects::{PruneResult, Selection, TailStart, Turn};
use super::tasks::{AbortFlag, CountTask};
use super::value::{self, ConvertArgs};
use crate::convert::{reshape, to_model_messages as convert};
use crate::error::Result as CoreResult;
use crate::model::{Message, Usage};
use crate::policy::{self, parse_options, CompactionConfig, ModelInfo};
use crate::session::{History, SessionOptions};
use crate::tokens::{count_tokens as count, estimate_tokens as estimate, Encoding};

fn history(
    messages: Vec<Value>,
    compaction: Option<Value>,
    model: Option<Value>,
    tokenizer: Option<String>,
) -> CoreResult<History> {
    let opts = SessionOptions {
        model: value::optional("model", model)?,
        compaction: value::optional("cfg", compaction)?,
        tokenizer,
    };
    History::from_messages(value::messages(messages)?, opts, &|| false)
}

fn to_js_value<'env, T: serde::Serialize>(env: &'env Env, value: &T) -> CoreResult<Unknown<'env>> {
    env.to_js_value(value)
        .map_err(|e| crate::error::CfError::new(crate::error::Code::Internal, e.to_string()))
}

/// Converts messages (as they are: pass `filterCompacted` output for a compacted history) to AI
/// SDK `ModelMessage`s, or with `format` to the Anthropic Messages or OpenAI chat shape.
#[napi(
    ts_generic_types = "F extends ModelFormat = 'ai-sdk'",
    ts_return_type = "ConvertResult<F>"
)]
pub fn to_model_messages<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "Message[]")] messages: Vec<Value>,
    #[napi(ts_arg_type = "ConvertOptions<F>")] options: Option<Value>,
) -> Result<Unknown<'env>> {
    guard(|| {
        let args = value::optional::<ConvertArgs>("options", options)?;
        let format = args.model_format()?;
        let opts = args.over(Default::default());
        let msgs = value::messages(messages)?;
        to_js_value(env, &reshape(convert(&msgs, &opts), format))
    })
}

/// What the model sees of a history: the newest completed summary's request and summary, the
/// kept tail, and everything after. Nothing is deleted from the input.
#[napi(ts_return_type = "Message[]")]
pub fn filter_compacted<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "Message[]")] messages: Vec<Value>,
) -> Result<Unknown<'env>> {
    guard(|| {
        let h = history(messages, None, None, Some("estimate".into()))?;
        let visible: Vec<&Message> = h.visible().into_iter().map(|e| &e.msg).collect();
        to_js_value(env, &visible)
    })
}

/// Which tool outputs a prune would clear; the caller sets `state.compactedAt` on them.
#[napi]
pub fn prune(
    #[napi(ts_arg_type = "Message[]")] messages: Vec<Value>,
    #[napi(ts_arg_type = "CompactionConfig")] cfg: Option<Value>,
    #[napi(ts_arg_type = "TokenizerName")] tokenizer: Option<String>,
) -> Result<PruneResult> {
    guard(|| {
        let mut h = history(messages, cfg, None, tokenizer.or(Some("estimate".into())))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_millis() as f64);
        Ok(h.prune(now).into())
    })
}

/// Turns of `messages`: one per user message that is not a compaction request.
#[napi]
pub fn turns(#[napi(ts_arg_type = "Message[]")] messages: Vec<Value>) -> Result<Vec<Turn>> {
    guard(|| {
        let msgs = value::messages(messages)?;
        let counter = crate::tokens::Counter {
            tokenizer: crate::tokens::Tokenizer::Estimate,
            image_tokens: 0,
        };
        let entries: Vec<crate::session::Entry> = msgs
            .into_iter()
            .map(|m| crate::session::Entry::new(m, &counter))
            .collect();
        let refs: Vec<&crate::session::Entry> = entries.iter().collect();
        Ok(policy::turns(&refs).into_iter().map(Turn::from).collect())
    })
}

/// Where the verbatim tail starts in `messages` (pass `filterCompacted` output).
#[napi]
pub fn select(
    #[napi(ts_arg_type = "Message[]")] messages: Vec<Value>,
    #[napi(ts_arg_type = "CompactionConfig")] cfg: Option<Value>,
    #[napi(ts_arg_type = "ModelInfo")] model: Option<Value>,
    #[napi(ts_arg_type = "TokenizerName")] tokenizer: Option<String>,
) -> Result<Selection> {
    guard(|| {
        let h = history(messages, cfg, model, tokenizer)?;
        let entries: Vec<&crate::session::Entry> = h.entries().iter().collect();
        let opts = h.options();
        let budget = policy::preserve_recent_budget(&opts.model, &opts.compaction);
        Ok(policy::select(&entries, budget, opts.compaction.tail_turns).into())
    })
}

/// The largest suffix of `turn` that fits `budget` tokens and may start a tail, if any.
#[napi]
pub fn split_turn(
    #[napi(ts_arg_type = "Message[]")] messages: Vec<Value>,
    turn: Turn,
    budget: f64,
    #[napi(ts_arg_type = "TokenizerName")] tokenizer: Option<String>,
) -> Result<Option<TailStart>> {
    guard(|| {
        let h = history(messages, None, None, tokenizer)?;
        let entries: Vec<&crate::session::Entry> = h.entries().iter().collect();
        let turn: crate::policy::Turn = turn.into();
        if turn.start >= turn.end || turn.end > entries.len() {
            return Err(crate::error::CfError::invalid_argument(format!(
                "turn: start {} and end {} must satisfy start < end <= {}",
                turn.start,
                turn.end,
                entries.len()
            )));
        }
        let budget = if budget.is_finite() && budget > 0.0 {
            budget as u64
        } else {
            0
        };
        Ok(
            policy::split_turn(&entries, &turn, budget).map(|s| TailStart {
                start: s as u32,
                id: entries[s].msg.id.clone(),
            }),
        )
    })
}

#[derive(Deserialize)]
struct LimitArgs {
    model: ModelInfo,
    #[serde(default, alias = "compaction")]
    cfg: CompactionConfig,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TokensArg {
    Count(#[serde(deserialize_with = "crate::policy::limit")] u64),
    Usage(Usage),
}

#[derive(Deserialize)]
struct OverflowArgs {
    tokens: TokensArg,
    model: ModelInfo,
    #[serde(default, alias = "compaction")]
    cfg: CompactionConfig,
}

/// Tokens a context may hold before it overflows (0 when the window is unknown).
#[napi]
pub fn usable(
    #[napi(ts_arg_type = "{ model: ModelInfo; cfg?: CompactionConfig }")] args: Value,
) -> Result<f64> {
    guard(|| {
        let a: LimitArgs = parse_options("args", args)?;
        Ok(policy::usable(&a.model, &a.cfg) as f64)
    })
}

/// True when `tokens` (a count or a provider `Usage`) reaches `usable`.
#[napi]
pub fn is_overflow(
    #[napi(ts_arg_type = "{ tokens: number | Usage; model: ModelInfo; cfg?: CompactionConfig }")]
    args: Value,
) -> Result<bool> {
    guard(|| {
        let a: OverflowArgs = parse_options("args", args)?;
        let tokens = match a.tokens {
            TokensArg::Count(n) => n,
            TokensArg::Usage(u) => u.context_tokens(),
        };
        Ok(policy::is_overflow(tokens, &a.model, &a.cfg))
    })
}

/// Tokenizer-free estimate, calibrated per character class (not chars/4).
#[napi]
pub fn estimate_tokens(text: String) -> Result<f64> {
    guard(|| Ok(estimate(&text) as f64))
}

/// Exact OpenAI token count (`o200k` or `cl100k`).
#[napi]
pub fn count_tokens(
    text: String,
    #[napi(ts_arg_type = "'o200k' | 'cl100k'")] encoding: String,
) -> Result<f64> {
    guard(|| Ok(count(&text, Encoding::parse(&encoding)?) as f64))
}

/// `countTokens` off the JS thread, for large text; abortable.
#[napi(ts_return_type = "Promise<number>")]
pub fn count_tokens_async(
    env: Env,
    text: String,
    #[napi(ts_arg_type = "'o200k' | 'cl100k'")] encoding: String,
    #[napi(ts_arg_type = "AbortSignal")] signal: Option<Object>,
) -> Result<AsyncTask<CountTask>> {
    let encoding = Encoding::parse(&encoding).map_err(to_js)?;
    let abort = AbortFlag::follow(&env, signal)
        .map_err(|e| to_js(crate::error::CfError::invalid_argument(e.reason.clone())))?;
    Ok(AsyncTask::new(CountTask {
        text,
        encoding,
        abort,
    }))
}
