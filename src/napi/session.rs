//! The native `Session`: the history lives here; each message crosses the boundary once.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use super::errors::{guard, JsResult as Result};
use super::objects::{
    CacheBreakpoint, ContextTokens, ContextUsage, PruneDecision, PruneResult, Selection, SentRequest, Turn,
};
use super::tasks::{AbortFlag, FromMessagesTask, PrepareTask};
use super::value::{self, to_js, Json, JsonList, Picked, Text};
use crate::compaction::{self, PrepareOptions, SummaryInput};
use crate::convert::convert;
use crate::convert::ConvertArgs;
use crate::message::Message;
use crate::session::History;

#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PinOptions {
    note: Option<String>,
}

#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PruneOptions {
    #[serde(default)]
    dry_run: bool,
}

#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DecideOptions {
    #[serde(default, deserialize_with = "crate::policy::opt_limit")]
    now: Option<u64>,
    #[serde(default)]
    threshold: compaction::Threshold,
}

/// A conversation held natively: counted once per message, queried per turn in O(log n).
/// Shared with background tasks (`prepareCompactionAsync`) behind a lock.
#[napi]
pub struct Session {
    inner: Arc<RwLock<History>>,
}

impl Session {
    pub fn wrap(inner: History) -> Session {
        Session { inner: Arc::new(RwLock::new(inner)) }
    }

    /// The history for reading. A panic caught while the lock was held cannot have left it half
    /// changed (every change is validated first), so a poisoned lock is still usable.
    fn read(&self) -> RwLockReadGuard<'_, History> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, History> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[napi]
impl Session {
    #[napi(constructor)]
    pub fn new(#[napi(ts_arg_type = "SessionOptions")] options: Json) -> Result<Self> {
        guard(|| Ok(Session::wrap(History::new(value::session_options(options)?)?)))
    }

    /// A session holding `messages` (validated, counted on every core). Prefer
    /// `fromMessagesAsync` for long histories: it keeps the event loop free.
    #[napi(factory)]
    pub fn from_messages(
        #[napi(ts_arg_type = "Message[]")] messages: JsonList,
        #[napi(ts_arg_type = "SessionOptions")] options: Json,
    ) -> Result<Self> {
        guard(|| {
            let opts = value::session_options(options)?;
            let messages = messages.messages()?;
            Ok(Session::wrap(History::from_messages(messages, opts, &|| false)?))
        })
    }

    /// `fromMessages` off the JS thread. An aborted `signal` rejects with an `AbortError`
    /// (`code: 'CF_ABORTED'`).
    #[napi(ts_return_type = "Promise<Session>")]
    pub fn from_messages_async(
        env: Env,
        #[napi(ts_arg_type = "Message[]")] messages: JsonList,
        #[napi(ts_arg_type = "SessionOptions")] options: Json,
        #[napi(ts_arg_type = "AbortSignal")] signal: Option<Unknown>,
    ) -> Result<AsyncTask<FromMessagesTask>> {
        guard(|| {
            let abort = AbortFlag::follow(&env, signal)?;
            Ok(AsyncTask::new(FromMessagesTask { messages: Some(messages), options: Some(options), abort }))
        })
    }

    /// Appends a message. A rejected message (`CF_INVALID_MESSAGE`, `CF_DUPLICATE_ID`) leaves the
    /// session exactly as it was.
    #[napi]
    pub fn append(&mut self, #[napi(ts_arg_type = "Message")] message: Json) -> Result<()> {
        guard(|| self.write().append(message.message()?))
    }

    /// Replaces the message with the same id (`CF_NOT_FOUND` if there is none).
    #[napi]
    pub fn update(&mut self, #[napi(ts_arg_type = "Message")] message: Json) -> Result<()> {
        guard(|| self.write().update(message.message()?))
    }

    /// Every message, hidden ones included, in arrival order.
    #[napi(ts_return_type = "Message[]")]
    pub fn messages<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| {
            let h = self.read();
            let messages: Vec<&Message> = h.entries().iter().map(|e| &e.msg).collect();
            value::messages_to_js(env, &messages, messages.iter().copied())
        })
    }

    /// What the model sees (`filterCompacted`): the newest completed summary's request and
    /// summary, the kept tail, and everything after.
    #[napi(ts_return_type = "Message[]")]
    pub fn context<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| {
            let h = self.read();
            let messages: Vec<&Message> = h.visible().into_iter().map(|e| &e.msg).collect();
            value::messages_to_js(env, &messages, messages.iter().copied())
        })
    }

    /// The message with this id, if any.
    #[napi(ts_return_type = "Message | undefined")]
    pub fn get<'env>(&self, env: &'env Env, #[napi(ts_arg_type = "string")] id: Text) -> Result<Unknown<'env>> {
        guard(|| {
            let id = id.get("id")?;
            match self.read().get(&id) {
                Some(e) => to_js(env, &e.msg),
                None => value::undefined(env),
            }
        })
    }

    /// A new message id, `<prefix>_` (default `msg`) and the time: no message of the session has
    /// it, and it sorts after every id made before it with the same prefix (the compaction
    /// requests and summaries `applyCompaction` writes use `cmp` and `sum`).
    #[napi(js_name = "newMessageID")]
    pub fn new_message_id(&self, #[napi(ts_arg_type = "string")] prefix: Option<Text>) -> Result<String> {
        guard(|| {
            let prefix = prefix.map(|p| p.get("prefix")).transpose()?;
            Ok(self.read().new_id(prefix.as_deref().unwrap_or("msg")))
        })
    }

    /// The user message the provider rejected as too long, again as a new message (not appended):
    /// its fields carried over, its parts with new ids, images and PDFs as
    /// `[Attached <mime>: <filename>]` text, compaction parts left out.
    #[napi(ts_return_type = "Message")]
    pub fn replay_message<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "Message")] original: Json,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let original = original.message()?;
            let now = crate::session::now_ms() as f64;
            to_js(env, &crate::compaction::replay(&original, self.read().new_id("msg"), now))
        })
    }

    /// The options the session was created with, defaults filled in (the prune thresholds as its
    /// window scales them).
    #[napi(getter, ts_return_type = "SessionOptions & { tokenizer: TokenizerName }")]
    pub fn options<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| {
            let h = self.read();
            let mut opts = h.options().clone();
            opts.tokenizer = Some(h.counter().tokenizer.name().to_string());
            let limits = opts.compaction.prune_limits(opts.model.limit.context);
            opts.compaction.prune_protect = Some(limits.protect);
            opts.compaction.prune_protect_steps = Some(limits.protect_steps);
            opts.compaction.prune_minimum = Some(limits.minimum);
            to_js(env, &opts)
        })
    }

    /// Tokens of the context by kind (system, user, assistant, reasoning, tool calls, tool output,
    /// media, summaries, per-message overhead); they add up to the local count of the context.
    #[napi(ts_return_type = "Breakdown")]
    pub fn breakdown<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| to_js(env, &self.read().breakdown()))
    }

    /// The largest tool results in the context, largest first (default 10).
    #[napi(ts_return_type = "ToolOutputSize[]")]
    pub fn largest_tool_outputs<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "number")] limit: Option<Json>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let limit: u64 = value::optional::<Option<u64>>("limit", limit)?.unwrap_or(10);
            to_js(env, &self.read().largest_tool_outputs(limit as usize))
        })
    }

    /// The session over time: each message's tokens, the context's size after every answer,
    /// every prune and every compaction (what it summarized and kept), as a session built message
    /// by message would have said them.
    #[napi(ts_return_type = "Timeline")]
    pub fn timeline<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| to_js(env, &self.read().timeline()?))
    }

    /// Number of messages, hidden ones included.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        self.read().len() as u32
    }

    /// How full the context is (O(log n)).
    #[napi]
    pub fn usage(&self) -> Result<ContextUsage> {
        guard(|| Ok(self.read().usage().into()))
    }

    /// True when the context holds at least `usable` tokens (never with `auto: false` or an
    /// unknown window).
    #[napi]
    pub fn is_overflow(&self) -> Result<bool> {
        guard(|| Ok(self.read().is_overflow()))
    }

    /// Clears old tool output (opencode's prune); idempotent. With `dryRun: true`, reports what it
    /// would clear and free, and where the prompt would first change, without changing anything.
    #[napi]
    pub fn prune(
        &mut self,
        #[napi(ts_arg_type = "{ dryRun?: boolean }")] options: Option<Json>,
    ) -> Result<PruneResult> {
        guard(|| {
            let o: PruneOptions = value::optional("options", options)?;
            let mut h = self.write();
            Ok(if o.dry_run { h.prune_dry_run() } else { h.prune() }.into())
        })
    }

    /// Cuts the tool outputs the model has not read yet (head and tail kept, a marker saying how
    /// much was left out) when they would not fit beside a summary: a compaction then keeps them,
    /// and the model reads the newest results instead of a summary of what it never saw. Nothing
    /// when they fit. The result is a prune's (rule `fit`): store it as one.
    #[napi]
    pub fn cut_unread(&mut self) -> Result<PruneResult> {
        guard(|| Ok(self.write().cut_unread().into()))
    }

    /// Records that the context as it stands was sent to the provider, at `at` (epoch ms;
    /// default: the newest message's own time). The cache-aware prune policy reads it.
    #[napi]
    pub fn record_request(&mut self, at: Option<f64>) -> Result<SentRequest> {
        guard(|| {
            if at.is_some_and(|t| !t.is_finite() || t < 0.0) {
                return Err(crate::error::CfError::invalid_argument("recordRequest: `at` must be a time in epoch ms"));
            }
            let mut h = self.write();
            let sent = h.record_request(at);
            Ok(SentRequest::new(sent, h.unsent_after(sent)))
        })
    }

    /// The last request: the one recorded, or the one the newest answer replied to.
    #[napi]
    pub fn last_request(&self) -> Result<Option<SentRequest>> {
        guard(|| {
            let h = self.read();
            Ok(h.last_sent().map(|sent| SentRequest::new(sent, h.unsent_after(sent))))
        })
    }

    /// The context's message ids with their token counts (nothing is counted again).
    #[napi]
    pub fn context_tokens(&self) -> Result<ContextTokens> {
        guard(|| {
            let h = self.read();
            let (ids, tokens) = h.visible().into_iter().map(|e| (e.msg.id.clone(), e.tokens as f64)).unzip();
            Ok(ContextTokens { ids, tokens, unsent: h.unsent_in_context() as u32 })
        })
    }

    /// Whether a prune pays now with the provider's prompt cache (the `cache` prune policy):
    /// what it saves on the requests expected to follow against what breaking the cache costs.
    /// `now` (epoch ms) judges the cache's age (default: the newest message's own time);
    /// `threshold` is where the next compaction runs: tokens, or `'cost'` for the cheapest
    /// threshold (`compactAt: 'cost'`); default: the usable window. Changes nothing.
    #[napi]
    pub fn decide_prune(
        &self,
        #[napi(ts_arg_type = "{ now?: number; threshold?: number | 'cost' }")] options: Option<Json>,
    ) -> Result<PruneDecision> {
        guard(|| {
            let o: DecideOptions = value::optional("options", options)?;
            Ok(compaction::decide_prune(&self.read(), o.now.map(|t| t as f64), o.threshold).into())
        })
    }

    /// Pins a message: what the model reads of it stays verbatim through every compaction (in
    /// the summary's Preserved section, within its budget). `CF_NOT_FOUND` for an unknown id.
    #[napi(ts_return_type = "Pin")]
    pub fn pin<'env>(
        &mut self,
        env: &'env Env,
        #[napi(ts_arg_type = "string")] message_id: Text,
        #[napi(ts_arg_type = "{ note?: string }")] options: Option<Json>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let o: PinOptions = value::optional("options", options)?;
            to_js(env, &self.write().pin(&message_id.get("messageID")?, o.note)?)
        })
    }

    /// Pins a text: kept verbatim through every compaction, like a pinned message.
    #[napi(ts_return_type = "Pin")]
    pub fn pin_text<'env>(
        &mut self,
        env: &'env Env,
        #[napi(ts_arg_type = "string")] text: Text,
        #[napi(ts_arg_type = "{ note?: string }")] options: Option<Json>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let o: PinOptions = value::optional("options", options)?;
            to_js(env, &self.write().pin_text(&text.get("text")?, o.note)?)
        })
    }

    /// Removes a pin, by its id or the pinned message's id; false when there was none.
    #[napi]
    pub fn unpin(&mut self, #[napi(ts_arg_type = "string")] id: Text) -> Result<bool> {
        guard(|| Ok(self.write().unpin(&id.get("id")?)))
    }

    /// The pins, oldest first.
    #[napi(ts_return_type = "Pin[]")]
    pub fn pins<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| to_js(env, &self.read().pins()))
    }

    /// Turns of the context (indices into `context()`).
    #[napi]
    pub fn turns(&self) -> Result<Vec<Turn>> {
        guard(|| Ok(self.read().turns().into_iter().map(Turn::from).collect()))
    }

    /// Where the verbatim tail within `preserveRecentTokens` starts (a compaction also keeps the
    /// messages that arrived after the last request recorded with `recordRequest`, unread by the
    /// model, when they fit a quarter of the window).
    #[napi]
    pub fn select(&self) -> Result<Selection> {
        guard(|| Ok(self.read().select().into()))
    }

    /// The context as AI SDK `ModelMessage`s, ready for `generateText` / `streamText`; with
    /// `format: 'anthropic'` an Anthropic Messages `{ system?, messages }`, with `'openai'` OpenAI
    /// chat completions messages.
    #[napi(ts_generic_types = "F extends ModelFormat = 'ai-sdk'", ts_return_type = "ConvertResult<F>")]
    pub fn to_model_messages<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "ConvertOptions<F>")] options: Option<Json>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let args: ConvertArgs = value::optional("options", options)?;
            let format = args.model_format()?;
            let cache = args.cache_control()?;
            let h = self.read();
            let opts = args.over(h.convert_options());
            let shown: Vec<&Message> = h.visible().into_iter().map(|e| &e.msg).collect();
            value::messages_to_js(env, &convert(&shown, &opts, format, cache.as_ref()), shown.iter().copied())
        })
    }

    /// `toModelMessages()` (AI SDK shape, the session's options) as a change to what the previous
    /// call of this method returned, for a caller that sends the session's messages on every model
    /// call: the first `unchanged` of those stand as they were, and `messages` follow them. `held`
    /// is how many of them the caller still holds (default 0: everything is converted). Only what
    /// changed (an update, a prune) or arrived since is converted; a compaction converts all.
    #[napi(ts_return_type = "HandedMessages")]
    pub fn hand_model_messages<'env>(&self, env: &'env Env, held: Option<u32>) -> Result<Unknown<'env>> {
        guard(|| {
            let mut h = self.write();
            let opts = h.convert_options();
            let back = h.hand_model_messages(&opts, held.unwrap_or(0) as usize);
            value::messages_to_js(env, &HandedOut { unchanged: back.unchanged, messages: &back.messages }, back.sources)
        })
    }

    /// Where to put Anthropic prompt-cache breakpoints in a prompt made of `head` (AI SDK messages
    /// sent before the session's: the app's system prompt) and `toModelMessages()`: after the
    /// system prompt, the newest summary, the newest prune mark, and the end, most valuable first,
    /// at most 4 with those the app set itself (in `head` or in the messages' `providerOptions`),
    /// which are not repeated.
    #[napi]
    pub fn cache_breakpoints(
        &self,
        #[napi(ts_arg_type = "ModelMessageLike[]")] head: Option<Json>,
    ) -> Result<Vec<CacheBreakpoint>> {
        guard(|| {
            let head = match head {
                None => Vec::new(),
                Some(h) => match h.value("head", crate::error::Code::InvalidArgument)? {
                    Value::Null => Vec::new(),
                    Value::Array(items) => items,
                    _ => return Err(crate::error::CfError::invalid_argument("head: expected an array of messages")),
                },
            };
            Ok(self.read().cache_breakpoints(&head).into_iter().map(CacheBreakpoint::from).collect())
        })
    }

    /// What a compaction would summarize and keep now, with the summarizer's input; `null` when
    /// there is nothing to summarize. Pure CPU: the LLM call is the caller's.
    #[napi(ts_return_type = "CompactionPlan | null")]
    pub fn prepare_compaction<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "PrepareOptions")] options: Option<Json>,
    ) -> Result<Option<Unknown<'env>>> {
        guard(|| {
            let opts: PrepareOptions = value::optional("options", options)?;
            compaction::prepare(&self.read(), &opts)?.map(|plan| value::plan_to_js(env, plan)).transpose()
        })
    }

    /// Works out now, for each message the model sees that is new or changed since the last call,
    /// what `prepareCompaction` reads of it (its transcript block and facts), so a prepare at the
    /// next overflow only gathers. Kept with each message until it changes. Returns how many
    /// messages it worked on. `AutoCompactor` calls it after each step.
    #[napi]
    pub fn warm_compaction(&self) -> Result<u32> {
        guard(|| Ok(self.write().warm_compaction() as u32))
    }

    /// `prepareCompaction` off the JS thread; abortable.
    #[napi(ts_return_type = "Promise<CompactionPlan | null>")]
    pub fn prepare_compaction_async(
        &self,
        env: Env,
        #[napi(ts_arg_type = "PrepareOptions")] options: Option<Json>,
        #[napi(ts_arg_type = "AbortSignal")] signal: Option<Unknown>,
    ) -> Result<AsyncTask<PrepareTask>> {
        guard(|| {
            let abort = AbortFlag::follow(&env, signal)?;
            Ok(AsyncTask::new(PrepareTask { history: self.inner.clone(), options, abort }))
        })
    }

    /// The loss audit of a summary for `plan`: which of `plan.keep` the summary (the text to be
    /// stored) and the messages the compaction keeps hold, and a `section` restoring the others
    /// verbatim (append it to the summary). Of `plan` it reads only the fields it needs. Changes
    /// nothing.
    #[napi(ts_return_type = "Audit")]
    pub fn audit_compaction<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "AuditPlan")] plan: Picked<compaction::AuditPlan>,
        #[napi(ts_arg_type = "string")] summary: Text,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let plan = plan.get("plan")?;
            to_js(env, &compaction::audit_summary(&self.read(), &plan, &summary.get("summary")?))
        })
    }

    /// The context's size now and after recording `summary` for `plan` (and `following`, the
    /// message appended after it), both counted locally. Changes nothing.
    #[napi(ts_return_type = "CompactionPreview")]
    pub fn preview_compaction<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "PreviewPlan")] plan: Picked<compaction::PreviewPlan>,
        #[napi(ts_arg_type = "string")] summary: Text,
        #[napi(ts_arg_type = "string")] following: Option<Text>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let plan = plan.get("plan")?;
            let following = following.map(|t| t.get("following")).transpose()?;
            to_js(env, &compaction::preview(&self.read(), &plan, &summary.get("summary")?, following.as_deref()))
        })
    }

    /// Records a compaction: appends the request (a user message whose `compaction` part names the
    /// hidden range) and the summary answering it, and returns both, e.g. for a store. `summary`
    /// is the summary text or `{ text, usage?, finish?, model? }`. Of `plan` it reads only what it
    /// records (never the transcript). Nothing changes on error.
    #[napi(ts_return_type = "[Message, Message]")]
    pub fn apply_compaction<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "ApplyPlan")] plan: Picked<compaction::ApplyPlan>,
        #[napi(ts_arg_type = "string | SummaryInput")] summary: Json,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let plan = plan.get("plan")?;
            let summary: SummaryInput = match summary.value("summary", crate::error::Code::InvalidArgument)? {
                Value::String(text) => SummaryInput { text, ..Default::default() },
                other => crate::policy::parse_options("summary", other)?,
            };
            let written = compaction::apply(&mut self.write(), &plan, summary)?;
            to_js(env, &written)
        })
    }
}

/// What `handModelMessages` gives.
#[derive(serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "HandedMessages"))]
pub(crate) struct HandedOut<'a> {
    /// How many of the messages the previous call gave stand as they were.
    unchanged: usize,
    /// The messages that follow them.
    #[cfg_attr(test, ts(type = "ModelMessage[]"))]
    messages: &'a [crate::convert::ModelMessage<'a>],
}

/// What `appendModelMessages` / `syncModelMessages` did.
#[derive(serde::Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "ModelMessagesResult"))]
pub(crate) struct ModelMessagesOut<'a> {
    /// `appended`: new messages were taken; `unchanged`: nothing past what the session has;
    /// `diverged` (sync only): the array does not extend what the session took, nothing was taken.
    #[cfg_attr(test, ts(type = "'appended' | 'unchanged' | 'diverged'"))]
    status: &'static str,
    /// Ids of the messages added.
    appended: &'a [String],
    /// Ids of earlier messages completed (an answer whose tool results arrived).
    updated: &'a [String],
    /// Parts kept as they came because contextfold does not know them, and other notes.
    warnings: &'a [crate::formats::Warning],
    /// How many ModelMessages the session has taken in all.
    count: usize,
    /// A tool output taken now is longer than `toolOutputMaxChars`: send `toModelMessages()`,
    /// which cuts it, not the messages given.
    cut: bool,
}

fn model_values(messages: Json) -> crate::error::Result<Vec<Value>> {
    match messages.value("messages", crate::error::Code::InvalidArgument)? {
        Value::Array(items) => Ok(items),
        _ => Err(crate::error::CfError::new(
            crate::error::Code::InvalidArgument,
            "messages: must be an array of ModelMessages",
        )),
    }
}

fn step_usage(options: Option<Json>) -> crate::error::Result<Option<crate::message::Usage>> {
    let options = match options {
        None => return Ok(None),
        Some(o) => o.value("options", crate::error::Code::InvalidArgument)?,
    };
    Ok(options.get("usage").and_then(crate::message::usage_from_provider))
}

fn model_result<'env>(
    env: &'env Env,
    status: crate::session::SyncStatus,
    r: &crate::session::ModelAppend,
    count: usize,
) -> crate::error::Result<Unknown<'env>> {
    let status = r.status(status).as_str();
    to_js(
        env,
        &ModelMessagesOut {
            status,
            appended: &r.appended,
            updated: &r.updated,
            warnings: &r.warnings,
            count,
            cut: r.cut,
        },
    )
}

#[napi]
impl Session {
    /// A session holding AI SDK `ModelMessage`s (ai v5, v6, v7: `response.messages`,
    /// `convertToModelMessages(...)`): each becomes a canonical message, a tool result joins its
    /// call, and `toModelMessages()` gives back exactly what went in while nothing is pruned or
    /// compacted. Parts contextfold does not know are kept in place, counted and reported.
    #[napi(factory)]
    pub fn from_model_messages(
        #[napi(ts_arg_type = "ModelMessageLike[]")] messages: Json,
        #[napi(ts_arg_type = "SessionOptions")] options: Json,
    ) -> Result<Self> {
        guard(|| {
            let mut h = History::new(value::session_options(options)?)?;
            h.append_model_messages(&model_values(messages)?, None)?;
            Ok(Session::wrap(h))
        })
    }

    /// Appends new AI SDK `ModelMessage`s (a step's `response.messages` in ai v7, the new ones in
    /// v5 / v6). A tool message completes the calls of the session's last answer. `usage` (the
    /// step's usage, any shape) goes on the last assistant message. Nothing changes on an error.
    #[napi(ts_return_type = "ModelMessagesResult")]
    pub fn append_model_messages<'env>(
        &mut self,
        env: &'env Env,
        #[napi(ts_arg_type = "ModelMessageLike[]")] messages: Json,
        #[napi(ts_arg_type = "AppendModelMessagesOptions")] options: Option<Json>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let usage = step_usage(options)?;
            let values = model_values(messages)?;
            let mut h = self.write();
            let r = h.append_model_messages(&values, usage)?;
            model_result(env, crate::session::SyncStatus::Appended, &r, h.model_cursor().count)
        })
    }

    /// Takes from `all` (the whole `ModelMessage` array an app holds) only what lies past the
    /// messages this session already took, recognised by the hash of the first and the last of
    /// them: idempotent, and it costs what the new messages cost. An array that does not extend
    /// them (edited, shortened, another conversation) is `diverged`: nothing is taken.
    #[napi(ts_return_type = "ModelMessagesResult")]
    pub fn sync_model_messages<'env>(
        &mut self,
        env: &'env Env,
        #[napi(ts_arg_type = "ModelMessageLike[]")] all: Unknown<'env>,
        #[napi(ts_arg_type = "AppendModelMessagesOptions")] options: Option<Json>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let usage = step_usage(options)?;
            let mut h = self.write();
            let count = h.model_cursor().count;
            let (first, from_last, total) = super::value::array_window(env, &all, count.saturating_sub(1))?;
            let (status, r) = h.sync_model_messages(first.as_ref(), &from_last, total, usage)?;
            model_result(env, status, &r, h.model_cursor().count)
        })
    }

    /// For a session loaded from a store: finds how many of `all` (the whole `ModelMessage` array
    /// an app holds) the session already holds, looking from the end for the newest message it
    /// took, and continues from there: the next `syncModelMessages(all)` takes only what follows.
    /// `null` when `all` does not continue the session (nothing changes).
    #[napi(ts_return_type = "number | null")]
    pub fn resume_model_messages<'env>(
        &mut self,
        env: &'env Env,
        #[napi(ts_arg_type = "ModelMessageLike[]")] all: Unknown<'env>,
    ) -> Result<Option<u32>> {
        guard(|| {
            let all = super::value::ArrayReader::new(env, &all)?;
            let mut failed = None;
            let found = self.write().resume_model_messages(all.len, |i| all.get(i).map_err(|e| failed = Some(e)).ok());
            match failed {
                Some(e) => Err(e),
                None => Ok(found.map(|n| n as u32)),
            }
        })
    }

    /// Sets what the provider receives besides the messages (system prompt, tool definitions),
    /// counted with the session's tokenizer: `usage()`, `isOverflow()` and the compaction trigger
    /// include it until a provider usage report covers it. Returns the tokens counted.
    #[napi]
    pub fn set_overhead(&mut self, #[napi(ts_arg_type = "Overhead")] overhead: Json) -> Result<f64> {
        guard(|| {
            let o = overhead.value("overhead", crate::error::Code::InvalidArgument)?;
            Ok(self.write().set_overhead_of(&o) as f64)
        })
    }
}
