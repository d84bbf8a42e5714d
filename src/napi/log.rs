//! The logic of database-backed stores (`contextfold/postgres`, `contextfold/redis`): conversions
//! around `store::log`; the database I/O is TypeScript's.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{guard, JsResult as Result};
use super::session::Session;
use super::store::StoreWarning;
use super::value::{messages_to_js, Json, Text};
use crate::error::Code;
use crate::store::{self, PruneRecord};

/// One entry of a session log: its number (1 is the header) and its JSON text.
#[napi(object)]
pub struct LogEntry {
    pub seq: f64,
    pub entry: String,
}

/// Which entries a tail-first load reads: `ranges` of entry numbers `[from, to)`, and every entry
/// from `tail` on.
#[napi(object)]
pub struct LogPlan {
    pub ranges: Vec<Vec<f64>>,
    pub tail: f64,
}

fn texts(entries: &[String]) -> Vec<&[u8]> {
    entries.iter().map(|e| e.as_bytes()).collect()
}

fn out(entries: Vec<Vec<u8>>) -> Vec<String> {
    // Entries are serialized JSON: valid UTF-8.
    entries.into_iter().map(|e| String::from_utf8(e).expect("entries are UTF-8")).collect()
}

/// What the writer of a session log kept in a database knows, and the entries each change adds
/// (the caller writes them, numbered on from `entries + 1`, all or none; when that fails it
/// rebuilds the writer from the log).
#[napi]
pub struct LogWriter {
    inner: store::LogWriter,
}

#[napi]
impl LogWriter {
    /// The writer of a log whose entries, in order from the header, are `entries`; `label` names
    /// the log in errors. A first entry that is not a header is `CF_CORRUPT_SESSION`.
    #[napi(factory)]
    pub fn from_entries(label: String, entries: Vec<String>) -> Result<Self> {
        guard(|| Ok(LogWriter { inner: store::LogWriter::from_entries(&label, &texts(&entries))? }))
    }

    /// Entries in the log once what this writer returned is written (the header included).
    #[napi(getter)]
    pub fn entries(&self) -> f64 {
        self.inner.entries() as f64
    }

    /// The entries appending `message` adds (`CF_DUPLICATE_ID` for an id already in the log).
    #[napi]
    pub fn append(&mut self, #[napi(ts_arg_type = "Message")] message: Json) -> Result<Vec<String>> {
        guard(|| Ok(out(self.inner.append(&message.message()?)?)))
    }

    /// The entries updating `message` adds (`CF_NOT_FOUND` for an id not in the log).
    #[napi]
    pub fn update(&mut self, #[napi(ts_arg_type = "Message")] message: Json) -> Result<Vec<String>> {
        guard(|| Ok(out(self.inner.update(&message.message()?)?)))
    }

    /// The entries recording a prune, as `Session.prune()` returned it.
    #[napi]
    pub fn prune(&mut self, #[napi(ts_arg_type = "PruneRecord")] result: Json) -> Result<Vec<String>> {
        guard(|| {
            let record: PruneRecord = result.options("result")?;
            Ok(out(self.inner.prune(&record)?))
        })
    }

    /// The entries recording the session's pins.
    #[napi]
    pub fn pins(&mut self, #[napi(ts_arg_type = "Pin[]")] pins: Json) -> Result<Vec<String>> {
        guard(|| Ok(out(self.inner.pins(&pins.options::<Vec<crate::session::Pin>>("pins")?))))
    }

    /// Entries the scan could not read.
    #[napi(getter)]
    pub fn warnings(&self) -> Vec<StoreWarning> {
        self.inner.warnings.iter().map(StoreWarning::from).collect()
    }
}

/// The header entry of a new session log.
#[napi]
pub fn log_header(
    id: String,
    created: f64,
    #[napi(ts_arg_type = "SessionOptions")] session: Option<Json>,
) -> Result<String> {
    guard(|| {
        let session = session.map(|s| s.value("session", Code::InvalidArgument)).transpose()?;
        Ok(out(vec![store::new_header_entry(&id, created.max(0.0) as u64, session)?]).remove(0))
    })
}

/// Which entries a tail-first load from this compaction entry reads; null when a full load is
/// needed (no compaction applies, or the entry cannot be read).
#[napi]
pub fn log_load_plan(compaction: String) -> Option<LogPlan> {
    store::plan(compaction.as_bytes()).map(|(ranges, tail)| LogPlan {
        ranges: ranges.into_iter().map(|[a, b]| vec![a as f64, b as f64]).collect(),
        tail: tail as f64,
    })
}

fn seqs(entries: Vec<LogEntry>) -> Vec<(u64, Vec<u8>)> {
    entries.into_iter().map(|e| (e.seq as u64, e.entry.into_bytes())).collect()
}

/// A session from a log's entries. With `compaction` (the number of the latest compaction entry),
/// `entries` are those `logLoadPlan` named and the load is tail-first: null when they do not
/// match the entry (load every entry instead). Without, `entries` are every entry after the
/// header, in order. `CF_CORRUPT_SESSION` names a bad entry.
#[napi]
pub fn log_load(
    #[napi(ts_arg_type = "string")] label: Text,
    header: String,
    entries: Vec<LogEntry>,
    #[napi(ts_arg_type = "SessionOptions")] options: Option<Json>,
    compaction: Option<f64>,
) -> Result<Option<Session>> {
    guard(|| {
        let label = label.get("label")?;
        let given = options.map(|o| o.value("options", Code::InvalidArgument)).transpose()?;
        let opts = store::log_options(&label, header.as_bytes(), given)?;
        let compaction = compaction.map(|at| at as u64);
        Ok(store::load_session(&label, opts, seqs(entries), compaction)?.map(Session::wrap))
    })
}

/// Every message of a log (every entry after the header, in order), each in its latest version.
#[napi(ts_return_type = "Message[]")]
pub fn log_messages<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "string")] label: Text,
    entries: Vec<String>,
) -> Result<Unknown<'env>> {
    guard(|| {
        let loaded = store::load_full(&label.get("label")?, &texts(&entries), None)?;
        messages_to_js(env, &loaded.messages, &loaded.messages)
    })
}
