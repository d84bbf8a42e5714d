//! Work that can take long runs off the JS thread, with an optional `AbortSignal`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use napi::bindgen_prelude::*;

use super::errors::{catching, js_error};
use super::session::Session;
use super::value::{self, Json, JsonList};
use crate::compaction::{self, CompactionPlan, PrepareOptions};
use crate::error::{CfError, Result as CoreResult};
use crate::session::History;
use crate::tokens::{count_tokens_in_slices, Encoding};

/// Set when the caller's signal aborts; checked between chunks of work.
#[derive(Clone, Default)]
pub struct AbortFlag(Arc<AtomicBool>);

impl AbortFlag {
    /// Follows `signal` (an `AbortSignal`, or undefined); an already aborted signal aborts at once.
    pub fn follow(env: &Env, signal: Option<Unknown>) -> CoreResult<AbortFlag> {
        let flag = AbortFlag::default();
        let Some(signal) = signal else { return Ok(flag) };
        let not_a_signal = || CfError::invalid_argument("signal: expected an AbortSignal");
        match signal.get_type() {
            Ok(ValueType::Undefined | ValueType::Null) => return Ok(flag),
            Ok(ValueType::Object) => {}
            _ => return Err(not_a_signal()),
        }
        let object = Object::from_raw(env.raw(), signal.raw());
        match object.get_named_property::<Unknown>("aborted").and_then(|a| a.get_type()) {
            Ok(ValueType::Boolean) => {}
            _ => return Err(not_a_signal()),
        }
        if object.get_named_property::<bool>("aborted").unwrap_or(false) {
            flag.0.store(true, Ordering::Relaxed);
        }
        // SAFETY: `env` and `object` are live handles of the current call and `object` is an
        // object; the conversion checks what the object wraps before it reads it (and fails on a
        // wrap another addon made).
        let abort = unsafe { AbortSignal::from_napi_value(env.raw(), object.raw()) }.map_err(|_| not_a_signal())?;
        let inner = flag.0.clone();
        abort.on_abort(move || inner.store(true, Ordering::Relaxed));
        Ok(flag)
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn check(&self) -> CoreResult<()> {
        if self.is_set() {
            Err(CfError::aborted())
        } else {
            Ok(())
        }
    }
}

pub struct FromMessagesTask {
    pub messages: Option<JsonList>,
    pub options: Option<Json>,
    pub abort: AbortFlag,
}

impl Task for FromMessagesTask {
    type Output = CoreResult<History>;
    type JsValue = Session;

    fn compute(&mut self) -> Result<Self::Output> {
        let (messages, options) = (self.messages.take(), self.options.take());
        let abort = self.abort.clone();
        Ok(catching(|| {
            abort.check()?;
            let missing = || CfError::new(crate::error::Code::Internal, "the task ran twice");
            let opts = value::session_options(options.ok_or_else(missing)?)?;
            let messages = messages.ok_or_else(missing)?.messages()?;
            History::from_messages(messages, opts, &|| abort.is_set())
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        output.map(Session::wrap).map_err(|e| js_error(&env, &e))
    }
}

pub struct PrepareTask {
    pub history: Arc<RwLock<History>>,
    pub options: Option<Json>,
    pub abort: AbortFlag,
}

impl Task for PrepareTask {
    type Output = CoreResult<Option<CompactionPlan>>;
    type JsValue = Unknown<'static>;

    fn compute(&mut self) -> Result<Self::Output> {
        let (history, options, abort) = (&self.history, self.options.take(), &self.abort);
        Ok(catching(|| {
            abort.check()?;
            let opts: PrepareOptions = value::optional("options", options)?;
            let h = history.read().unwrap_or_else(|e| e.into_inner());
            let plan = compaction::prepare(&h, &opts)?;
            abort.check()?;
            Ok(plan)
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        let plan = output.map_err(|e| js_error(&env, &e))?;
        let value = match plan {
            Some(p) => value::plan_to_js(&env, p).map_err(|e| js_error(&env, &e))?,
            None => Null.into_unknown(&env)?,
        };
        // SAFETY: the lifetime only ties the handle to `env`; napi-rs resolves the promise with it
        // as soon as `resolve` returns, inside the same handle scope, and keeps it no longer.
        Ok(unsafe { std::mem::transmute::<Unknown<'_>, Unknown<'static>>(value) })
    }
}

pub struct CountTask {
    pub text: String,
    pub encoding: Encoding,
    pub abort: AbortFlag,
}

impl Task for CountTask {
    type Output = CoreResult<u64>;
    type JsValue = f64;

    fn compute(&mut self) -> Result<Self::Output> {
        let (text, encoding, abort) = (&self.text, self.encoding, &self.abort);
        Ok(catching(|| count_tokens_in_slices(text, encoding, &|| abort.is_set())))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        output.map(|n| n as f64).map_err(|e| js_error(&env, &e))
    }
}
