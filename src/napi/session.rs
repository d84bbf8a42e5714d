//! The native `Session`: the history lives here; each message crosses the boundary once.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use super::errors::{guard, JsResult as Result};
use super::objects::{ContextUsage, PruneResult, Selection, Turn};
use super::tasks::{AbortFlag, FromMessagesTask, PrepareTask};
use super::value::{self, to_js, ConvertArgs, Json, JsonList, Text};
use crate::compaction::{self, PrepareOptions, SummaryInput};
use crate::convert::reshape;
use crate::message::Message;
use crate::session::History;

#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PinOptions {
    note: Option<String>,
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

    /// The options the session was created with, defaults filled in.
    #[napi(getter, ts_return_type = "SessionOptions & { tokenizer: TokenizerName }")]
    pub fn options<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| {
            let h = self.read();
            let mut opts = h.options().clone();
            opts.tokenizer = Some(h.counter().tokenizer.name().to_string());
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

    /// Clears old tool output (opencode's prune); idempotent.
    #[napi]
    pub fn prune(&mut self) -> Result<PruneResult> {
        guard(|| Ok(self.write().prune().into()))
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

    /// Where the verbatim tail would start if the session were compacted now.
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
            let h = self.read();
            let opts = args.over(h.convert_options());
            let shown = h.visible().into_iter().map(|e| &e.msg);
            value::messages_to_js(env, &reshape(h.to_model_messages(&opts), format), shown)
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
            compaction::prepare(&self.read(), &opts)?.map(|plan| to_js(env, &plan)).transpose()
        })
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
    /// verbatim (append it to the summary). Changes nothing.
    #[napi(ts_return_type = "Audit")]
    pub fn audit_compaction<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "CompactionPlan")] plan: Json,
        #[napi(ts_arg_type = "string")] summary: Text,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let plan: compaction::CompactionPlan = plan.options("plan")?;
            to_js(env, &compaction::audit_summary(&self.read(), &plan, &summary.get("summary")?))
        })
    }

    /// The context's size now and after recording `summary` for `plan` (and `following`, the
    /// message appended after it), both counted locally. Changes nothing.
    #[napi(ts_return_type = "CompactionPreview")]
    pub fn preview_compaction<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "CompactionPlan")] plan: Json,
        #[napi(ts_arg_type = "string")] summary: Text,
        #[napi(ts_arg_type = "string")] following: Option<Text>,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let plan: compaction::CompactionPlan = plan.options("plan")?;
            let following = following.map(|t| t.get("following")).transpose()?;
            to_js(env, &compaction::preview(&self.read(), &plan, &summary.get("summary")?, following.as_deref()))
        })
    }

    /// Records a compaction: appends the request (a user message whose `compaction` part names the
    /// hidden range) and the summary answering it, and returns both, e.g. for a store. `summary`
    /// is the summary text or `{ text, usage?, finish?, model? }`. Nothing changes on error.
    #[napi(ts_return_type = "[Message, Message]")]
    pub fn apply_compaction<'env>(
        &self,
        env: &'env Env,
        #[napi(ts_arg_type = "CompactionPlan")] plan: Json,
        #[napi(ts_arg_type = "string | SummaryInput")] summary: Json,
    ) -> Result<Unknown<'env>> {
        guard(|| {
            let plan: compaction::CompactionPlan = plan.options("plan")?;
            let summary: SummaryInput = match summary.value("summary", crate::error::Code::InvalidArgument)? {
                Value::String(text) => SummaryInput { text, ..Default::default() },
                other => crate::policy::parse_options("summary", other)?,
            };
            let written = compaction::apply(&mut self.write(), &plan, summary)?;
            to_js(env, &written)
        })
    }
}
