//! The native `Session`: the history lives here; each message crosses the boundary once.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use super::errors::{guard, JsResult as Result};
use super::objects::{ContextUsage, PruneResult, Selection, Turn};
use super::tasks::{AbortFlag, FromMessagesTask};
use super::value::{self, ConvertArgs, Js};
use crate::convert::{reshape, Converted};
use crate::model::Message;
use crate::session::History;

/// A conversation held natively: counted once per message, queried per turn in O(log n).
#[napi]
pub struct Session {
    inner: History,
}

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}

impl Session {
    pub fn wrap(inner: History) -> Session {
        Session { inner }
    }

    pub fn history(&self) -> &History {
        &self.inner
    }
}

#[napi]
impl Session {
    #[napi(constructor)]
    pub fn new(#[napi(ts_arg_type = "SessionOptions")] options: Value) -> Result<Self> {
        guard(|| {
            Ok(Session {
                inner: History::new(value::session_options(options)?)?,
            })
        })
    }

    /// A session holding `messages` (validated, counted on every core). Prefer
    /// `fromMessagesAsync` for long histories: it keeps the event loop free.
    #[napi(factory)]
    pub fn from_messages(
        #[napi(ts_arg_type = "Message[]")] messages: Vec<Value>,
        #[napi(ts_arg_type = "SessionOptions")] options: Value,
    ) -> Result<Self> {
        guard(|| {
            let opts = value::session_options(options)?;
            let messages = value::messages(messages)?;
            Ok(Session {
                inner: History::from_messages(messages, opts, &|| false)?,
            })
        })
    }

    /// `fromMessages` off the JS thread. An aborted `signal` rejects with an `AbortError`
    /// (`code: 'CF_ABORTED'`).
    #[napi(ts_return_type = "Promise<Session>")]
    pub fn from_messages_async(
        env: Env,
        #[napi(ts_arg_type = "Message[]")] messages: Vec<Value>,
        #[napi(ts_arg_type = "SessionOptions")] options: Value,
        #[napi(ts_arg_type = "AbortSignal")] signal: Option<Object>,
    ) -> napi::Result<AsyncTask<FromMessagesTask>> {
        let abort = AbortFlag::follow(&env, signal)?;
        Ok(AsyncTask::new(FromMessagesTask {
            messages: Some(messages),
            options: Some(options),
            abort,
        }))
    }

    /// Appends a message. A rejected message (`CF_INVALID_MESSAGE`, `CF_DUPLICATE_ID`) leaves the
    /// session exactly as it was.
    #[napi]
    pub fn append(&mut self, #[napi(ts_arg_type = "Message")] message: Value) -> Result<()> {
        guard(|| self.inner.append(value::message(message)?))
    }

    /// Replaces the message with the same id (`CF_NOT_FOUND` if there is none).
    #[napi]
    pub fn update(&mut self, #[napi(ts_arg_type = "Message")] message: Value) -> Result<()> {
        guard(|| self.inner.update(value::message(message)?))
    }

    /// Every message, hidden ones included, in arrival order.
    #[napi(ts_return_type = "Message[]")]
    pub fn messages(&self) -> Result<Js<Vec<&Message>>> {
        guard(|| Ok(Js(self.inner.entries().iter().map(|e| &e.msg).collect())))
    }

    /// What the model sees (`filterCompacted`): the newest completed summary's request and
    /// summary, the kept tail, and everything after.
    #[napi(ts_return_type = "Message[]")]
    pub fn context(&self) -> Result<Js<Vec<&Message>>> {
        guard(|| {
            Ok(Js(self
                .inner
                .visible()
                .into_iter()
                .map(|e| &e.msg)
                .collect()))
        })
    }

    /// The message with this id, if any.
    #[napi(ts_return_type = "Message | undefined")]
    pub fn get(&self, id: String) -> Result<Option<Js<&Message>>> {
        guard(|| Ok(self.inner.get(&id).map(|e| Js(&e.msg))))
    }

    /// Number of messages, hidden ones included.
    #[napi(getter)]
    pub fn length(&self) -> u32 {
        self.inner.len() as u32
    }

    /// How full the context is (O(log n)).
    #[napi]
    pub fn usage(&self) -> Result<ContextUsage> {
        guard(|| Ok(self.inner.usage().into()))
    }

    /// True when the context holds at least `usable` tokens (never with `auto: false` or an
    /// unknown window).
    #[napi]
    pub fn is_overflow(&self) -> Result<bool> {
        guard(|| Ok(self.inner.is_overflow()))
    }

    /// Clears old tool output (opencode's prune); idempotent.
    #[napi]
    pub fn prune(&mut self) -> Result<PruneResult> {
        guard(|| Ok(self.inner.prune(now_ms()).into()))
    }

    /// Turns of the context (indices into `context()`).
    #[napi]
    pub fn turns(&self) -> Result<Vec<Turn>> {
        guard(|| Ok(self.inner.turns().into_iter().map(Turn::from).collect()))
    }

    /// Where the verbatim tail would start if the session were compacted now.
    #[napi]
    pub fn select(&self) -> Result<Selection> {
        guard(|| Ok(self.inner.select().into()))
    }

    /// The context as AI SDK `ModelMessage`s, ready for `generateText` / `streamText`; with
    /// `format: 'anthropic'` an Anthropic Messages `{ system?, messages }`, with `'openai'` OpenAI
    /// chat completions messages.
    #[napi(
        ts_generic_types = "F extends ModelFormat = 'ai-sdk'",
        ts_return_type = "ConvertResult<F>"
    )]
    pub fn to_model_messages(
        &self,
        #[napi(ts_arg_type = "ConvertOptions<F>")] options: Option<Value>,
    ) -> Result<Js<Converted<'_>>> {
        guard(|| {
            let args: ConvertArgs = value::optional("options", options)?;
            let format = args.model_format()?;
            let opts = args.over(self.inner.convert_options());
            Ok(Js(reshape(self.inner.to_model_messages(&opts), format)))
        })
    }
}
