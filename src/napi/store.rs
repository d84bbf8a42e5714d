//! The native `SessionFile`: conversions around `store::SessionStore`.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use super::errors::{catching, guard, js_error, JsResult as Result};
use super::session::Session;
use super::tasks::AbortFlag;
use super::value::{messages_to_js, to_js, Json, Text};
use crate::error::{Code, Result as CoreResult};
use crate::session::{History, SessionOptions};
use crate::store::{self, Loader, PruneRecord};

/// A session file: append-only JSONL, one writer at a time (an OS lock), any number of readers.
#[napi]
pub struct SessionFile {
    inner: store::SessionStore,
}

#[napi(object)]
pub struct StoreWarning {
    /// Line number (1 is the header).
    pub line: f64,
    /// Byte offset of the line.
    pub offset: f64,
    pub message: String,
}

impl From<&store::Warning> for StoreWarning {
    fn from(w: &store::Warning) -> Self {
        StoreWarning { line: w.line as f64, offset: w.offset as f64, message: w.message.clone() }
    }
}

fn open(path: String, options: Option<Value>) -> CoreResult<store::SessionStore> {
    let opts = store::parse_open_options(options)?;
    store::SessionStore::open(path, opts)
}

/// The raw value of an optional options argument (`undefined` reads as absent).
fn raw(what: &str, options: Option<Json>) -> CoreResult<Option<Value>> {
    options.map(|o| o.value(what, Code::InvalidArgument)).transpose()
}

fn load_options(options: Option<Value>) -> CoreResult<Option<SessionOptions>> {
    match options {
        None | Some(Value::Null) => Ok(None),
        Some(v) => crate::policy::parse_options("options", v).map(Some),
    }
}

#[napi]
impl SessionFile {
    /// Opens (by default creates) a session file. A second writer gets `CF_SESSION_LOCKED`;
    /// `readOnly: true` never takes the lock. A missing file with `create: false` or `readOnly`
    /// is `CF_SESSION_NOT_FOUND`.
    #[napi(factory)]
    pub fn open(
        #[napi(ts_arg_type = "string")] path: Text,
        #[napi(ts_arg_type = "StoreOptions")] options: Option<Json>,
    ) -> Result<Self> {
        guard(|| Ok(SessionFile { inner: open(path.get("path")?, raw("options", options)?)? }))
    }

    /// `open` off the JS thread.
    #[napi(ts_return_type = "Promise<SessionFile>")]
    pub fn open_async(
        #[napi(ts_arg_type = "string")] path: Text,
        #[napi(ts_arg_type = "StoreOptions")] options: Option<Json>,
    ) -> Result<AsyncTask<OpenTask>> {
        guard(|| Ok(AsyncTask::new(OpenTask { path: Some(path.get("path")?), options: raw("options", options)? })))
    }

    /// Appends a message (one line, synced per the durability policy). A rejected message
    /// (`CF_INVALID_MESSAGE`, `CF_DUPLICATE_ID`) writes nothing. A completed summary answering a
    /// compaction request also writes the compaction entry that tail-first loads start from.
    #[napi]
    pub fn append(&mut self, #[napi(ts_arg_type = "Message")] message: Json) -> Result<()> {
        guard(|| self.inner.append(&message.message()?))
    }

    /// Records the new version of a message (`CF_NOT_FOUND` if the file has no such id).
    #[napi]
    pub fn update(&mut self, #[napi(ts_arg_type = "Message")] message: Json) -> Result<()> {
        guard(|| self.inner.update(&message.message()?))
    }

    /// Records a prune, as `Session.prune()` returned it.
    #[napi]
    pub fn prune(&mut self, #[napi(ts_arg_type = "PruneRecord")] result: Json) -> Result<()> {
        guard(|| {
            let record: PruneRecord = result.options("result")?;
            self.inner.prune(&record)
        })
    }

    /// Records the session's pins as they stand (pass `session.pins()` after each change); a
    /// load restores the last ones recorded.
    #[napi]
    pub fn pins(&mut self, #[napi(ts_arg_type = "Pin[]")] pins: Json) -> Result<()> {
        guard(|| {
            let pins: Vec<crate::session::Pin> = pins.options("pins")?;
            self.inner.pins(&pins)
        })
    }

    /// Syncs what was written (`batch` durability; nothing to do with `entry`).
    #[napi]
    pub fn flush(&mut self) -> Result<()> {
        guard(|| self.inner.flush())
    }

    /// Flushes and releases the lock; the store cannot be used afterwards (`CF_STORE_CLOSED`).
    #[napi]
    pub fn close(&mut self) -> Result<()> {
        guard(|| self.inner.close())
    }

    /// A `Session` with what the context needs, read tail-first: its `context()` is what the
    /// whole history shows. Options: the given ones, else `open`'s `session`, else the header's.
    #[napi]
    pub fn load(&mut self, #[napi(ts_arg_type = "SessionOptions")] options: Option<Json>) -> Result<Session> {
        guard(|| {
            let opts = load_options(raw("options", options)?)?;
            Ok(Session::wrap(self.inner.load(opts, &|| false)?))
        })
    }

    /// `load` off the JS thread; an aborted `signal` rejects with `CF_ABORTED`.
    #[napi(ts_return_type = "Promise<Session>")]
    pub fn load_async(
        &mut self,
        env: Env,
        #[napi(ts_arg_type = "SessionOptions")] options: Option<Json>,
        #[napi(ts_arg_type = "AbortSignal")] signal: Option<Unknown>,
    ) -> Result<AsyncTask<LoadTask>> {
        guard(|| {
            let abort = AbortFlag::follow(&env, signal)?;
            Ok(AsyncTask::new(LoadTask {
                loader: self.inner.loader_for_async(),
                options: raw("options", options)?,
                abort,
            }))
        })
    }

    /// Every message in the file, hidden ones included, each in its latest version.
    #[napi(ts_return_type = "Message[]")]
    pub fn load_all<'env>(&mut self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| {
            let messages = self.inner.load_all()?;
            messages_to_js(env, &messages, &messages)
        })
    }

    /// Writes every message as plain JSONL (one message per line) to `path`; returns how many.
    #[napi]
    pub fn export(&mut self, #[napi(ts_arg_type = "string")] path: Text) -> Result<u32> {
        guard(|| Ok(self.inner.export(std::path::Path::new(&path.get("path")?))? as u32))
    }

    /// What opens and loads skipped or repaired (torn last line, skipped corrupt lines, ...).
    #[napi(getter)]
    pub fn warnings(&self) -> Result<Vec<StoreWarning>> {
        guard(|| Ok(self.inner.warnings().iter().map(StoreWarning::from).collect()))
    }

    #[napi(getter)]
    pub fn path(&self) -> String {
        self.inner.path().to_string_lossy().into_owned()
    }

    /// The session id from the header (null for a read-only open of a file without one yet).
    #[napi(getter)]
    pub fn id(&self) -> Option<String> {
        self.inner.id().map(String::from)
    }

    /// The file's header (null when the file has none yet).
    #[napi(getter, ts_return_type = "StoreHeader | null")]
    pub fn header<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        guard(|| match self.inner.header() {
            Some(h) => to_js(env, &h),
            None => to_js(env, &Value::Null),
        })
    }

    /// True when opened with `readOnly: true`.
    #[napi(getter)]
    pub fn read_only(&self) -> bool {
        self.inner.is_read_only()
    }
}

pub struct OpenTask {
    path: Option<String>,
    options: Option<Value>,
}

impl Task for OpenTask {
    type Output = CoreResult<store::SessionStore>;
    type JsValue = SessionFile;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let (path, options) = (self.path.take().unwrap_or_default(), self.options.take());
        Ok(catching(|| open(path, options)))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        output.map(|inner| SessionFile { inner }).map_err(|e| js_error(&env, &e))
    }
}

pub struct LoadTask {
    loader: CoreResult<Loader>,
    options: Option<Value>,
    abort: AbortFlag,
}

impl Task for LoadTask {
    type Output = CoreResult<History>;
    type JsValue = Session;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let (loader, options, abort) = (self.loader.clone(), self.options.take(), &self.abort);
        Ok(catching(|| {
            let opts = load_options(options)?;
            loader?.history(opts, &|| abort.is_set())
        }))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<Self::JsValue> {
        output.map(Session::wrap).map_err(|e| js_error(&env, &e))
    }
}
