//! `SessionStore`: a session file opened for writing (one writer, OS-locked) or for reading.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::Value;

use super::counts::writer_counter;
use super::durability::Durability;
use super::file_index::Scanned;
use super::format::{self, Header, Loc, PruneRecord, VERSION};
use super::lines::{layout, scan_back, Layout, Start};
use super::load::{self, torn_warning, How, Loaded};
use super::lock::WriterLock;
use super::replay::Replayed;
use super::snapshot::{self, LaterIndex};
use super::warning::{Warning, Warnings};
use super::writer::Writer;
use crate::error::{CfError, Code, Result};
use crate::message::Message;
use crate::policy::parse_options;
use crate::session::{History, SessionOptions};
use crate::tokens::Counter;

#[derive(Clone, Debug, PartialEq)]
pub struct OpenOptions {
    /// Create the file, and the folders it goes in, when it does not exist (writers only; default
    /// true).
    pub create: bool,
    /// Read only: never takes the writer lock, never writes.
    pub read_only: bool,
    pub durability: Durability,
    /// Skip corrupt lines (reported in `warnings`) instead of failing.
    pub recover: bool,
    /// Written to the header of a new file, and the default options of `load()`.
    pub session: Option<Value>,
    /// Load from the file's snapshot when it has a usable one; a writer's first load keeps it up
    /// to date (see `snapshot`). Default true.
    pub snapshot: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            create: true,
            read_only: false,
            durability: Durability::Entry,
            recover: false,
            session: None,
            snapshot: true,
        }
    }
}

/// Options of `SessionFile.open`, as JS passes them.
#[derive(Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct StoreOptions {
    /// Create the file when it does not exist (writers; default true).
    create: Option<bool>,
    /// Never writes and never takes the writer lock.
    read_only: Option<bool>,
    /// `'entry'` (default): fsync after every entry. `'batch'`: on `flush()` / `close()`, and by
    /// the first write once `batchEntries` entries or `batchMs` ms are unsynced.
    #[cfg_attr(test, ts(type = "'entry' | 'batch'", optional))]
    durability: Option<String>,
    /// Default 64.
    batch_entries: Option<u32>,
    /// Default 200.
    batch_ms: Option<u32>,
    /// Skip corrupt lines (listed in `warnings`) instead of failing with `CF_CORRUPT_SESSION`.
    recover: Option<bool>,
    /// Written to the header of a new file; the default options of `load()`.
    #[cfg_attr(test, ts(as = "Option<SessionOptions>"))]
    session: Option<Value>,
    /// Default true: a long session that was never compacted loads from a binary snapshot kept
    /// beside it (`<file>.snapshot`, written by a writer's first load of a file of 8 MB or more),
    /// checked against the file, rather than from its JSON. false: never read nor write one.
    snapshot: Option<bool>,
}

/// Reads `StoreOptions`.
pub fn parse_open_options(value: Option<Value>) -> Result<OpenOptions> {
    let args: StoreOptions = match value {
        None | Some(Value::Null) => StoreOptions::default(),
        Some(v) => parse_options("options", v)?,
    };
    let durability = Durability::parse(args.durability.as_deref(), args.batch_entries, args.batch_ms)
        .map_err(|e| CfError::invalid_argument(format!("options.{e}")))?;
    let session = match args.session {
        None | Some(Value::Null) => None,
        Some(v) => {
            parse_options::<SessionOptions>("options.session", v.clone())?;
            Some(v)
        }
    };
    Ok(OpenOptions {
        create: args.create.unwrap_or(true),
        read_only: args.read_only.unwrap_or(false),
        durability,
        recover: args.recover.unwrap_or(false),
        session,
        snapshot: args.snapshot.unwrap_or(true),
    })
}

/// A writer's first load (`loaded`, with the index of the whole file when it read every line)
/// writes the file's snapshot when it is due, or removes it once the file has a compaction entry.
/// A snapshot that cannot be written is left out: the file is the truth.
fn keep_snapshot(path: &Path, loaded: &mut Loaded, counter: &Counter) {
    let due = |end: u64, covered: Option<u64>| {
        end >= snapshot::min_bytes() && covered.is_none_or(|covered| (end - covered) * 5 > end)
    };
    // A load from an older snapshot: its index is needed now, for the new one.
    if loaded.later.as_ref().is_some_and(|l| due(l.end, loaded.snapshot)) {
        loaded.scanned = loaded.later.take().and_then(LaterIndex::decode);
    }
    match &loaded.scanned {
        Some(s) if s.latest.is_some() || s.stale => snapshot::remove(path),
        Some(s) if due(s.end, loaded.snapshot) => {
            let _ = snapshot::save(path, loaded, Some(counter));
        }
        None if loaded.base.is_some() => snapshot::remove(path),
        _ => {}
    }
}

/// The writer's index a load found.
enum Index {
    Built(Box<Scanned>),
    Later(LaterIndex),
}

fn not_found(path: &Path) -> CfError {
    CfError::new(Code::SessionNotFound, format!("{}: no such session file", path.display()))
}

fn corrupt_header(path: &Path, problem: &str) -> CfError {
    CfError::new(Code::CorruptSession, format!("{}: line 1 (byte 0): {problem}", path.display()))
}

fn open_error(path: &Path, e: &io::Error) -> CfError {
    if e.kind() == io::ErrorKind::NotFound {
        not_found(path)
    } else {
        super::io_error(path, "cannot open", e)
    }
}

/// What loads need, independent of the writer: can be sent to another thread.
#[derive(Clone, Debug)]
pub struct Loader {
    path: PathBuf,
    recover: bool,
    session: Option<Value>,
    snapshot: bool,
    warnings: Warnings,
}

impl Loader {
    /// A fresh handle and the file's current layout (`None`: no header yet).
    fn open(&self) -> Result<(File, Option<Layout>)> {
        let file = File::open(&self.path).map_err(|e| open_error(&self.path, &e))?;
        let read = |e: io::Error| load::io_error(&self.path, &e);
        match layout(&file).map_err(read)? {
            Err(problem) => Err(corrupt_header(&self.path, &problem)),
            Ok(Start::Empty { len }) => {
                if len > 0 {
                    self.warnings.add([torn_header(len)]);
                }
                Ok((file, None))
            }
            Ok(Start::Header(l)) => Ok((file, Some(l))),
        }
    }

    fn report(&self, loaded: Loaded) -> Replayed {
        self.warnings.add(loaded.warnings);
        (loaded.messages, loaded.counts)
    }

    /// The messages the context needs (tail-first when the file has a compaction entry).
    pub fn context_messages(&self) -> Result<Loaded> {
        self.context_messages_counted(None, false)
    }

    /// `context_messages`, counted with `counter` as they are parsed; with `index`, a load of
    /// every line also builds a writer's index of them.
    fn context_messages_counted(&self, counter: Option<&Counter>, index: bool) -> Result<Loaded> {
        let (file, l) = self.open()?;
        match l {
            None => Ok(Loaded::default()),
            Some(l) => {
                let how = How { recover: self.recover, counter, index, snapshot: self.snapshot };
                load::load(&file, &l, &self.path, how)
            }
        }
    }

    /// Every message, in order, each in its latest version.
    pub fn all_messages(&self) -> Result<Vec<Message>> {
        let (file, l) = self.open()?;
        match l {
            None => Ok(Vec::new()),
            Some(l) => Ok(self
                .report(load::load_all(&file, &l, &self.path, How { recover: self.recover, ..How::default() })?)
                .0),
        }
    }

    /// The options a load uses: the given ones, else those given to `open`, else the header's.
    fn options(&self, given: Option<SessionOptions>) -> Result<SessionOptions> {
        if let Some(o) = given {
            return Ok(o);
        }
        if let Some(v) = &self.session {
            return parse_options("options.session", v.clone());
        }
        let (_, l) = self.open()?;
        match l.and_then(|l| l.header.session) {
            Some(v) => parse_options("the header's session options", v),
            None => Err(CfError::invalid_argument(format!(
                "{}: no session options: pass them to load(), or to open() as `session`",
                self.path.display()
            ))),
        }
    }

    /// A history of what the context needs; its `visible()` is what a full load would show.
    pub fn history(&self, given: Option<SessionOptions>, aborted: &(dyn Fn() -> bool + Sync)) -> Result<History> {
        self.history_indexed(given, aborted, false).map(|(h, _)| h)
    }

    /// `history`; with `index`, also the writer's index when the load read every line (built, or
    /// found in the file's snapshot).
    fn history_indexed(
        &self,
        given: Option<SessionOptions>,
        aborted: &(dyn Fn() -> bool + Sync),
        index: bool,
    ) -> Result<(History, Option<Index>)> {
        let opts = self.options(given)?;
        if aborted() {
            return Err(CfError::aborted());
        }
        let counter = opts.counter()?;
        let mut loaded = self.context_messages_counted(Some(&counter), index)?;
        if index && self.snapshot {
            keep_snapshot(&self.path, &mut loaded, &counter);
        }
        self.warnings.add(std::mem::take(&mut loaded.warnings));
        let found = match (loaded.scanned.take(), loaded.later.take()) {
            (Some(s), _) => Some(Index::Built(Box::new(s))),
            (None, later) => later.map(Index::Later),
        };
        Ok((loaded.into_history(opts, aborted)?, found))
    }

    /// Writes every message, one JSON object per line, to `to` (through a temporary file renamed
    /// over it). Returns how many.
    pub fn export(&self, to: &Path) -> Result<usize> {
        if same_file(to, &self.path) {
            return Err(CfError::invalid_argument(format!("export: {} is the session file itself", to.display())));
        }
        let messages = self.all_messages()?;
        let mut tmp = to.as_os_str().to_owned();
        tmp.push(format!(".{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let write = || -> io::Result<()> {
            let mut w = BufWriter::new(File::create(&tmp)?);
            for m in &messages {
                serde_json::to_writer(&mut w, m)?;
                w.write_all(b"\n")?;
            }
            w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            std::fs::rename(&tmp, to)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            super::io_error(to, "cannot export to", &e)
        })?;
        Ok(messages.len())
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn torn_header(len: u64) -> Warning {
    Warning::at(
        Loc { offset: 0, line: 1 },
        format!("incomplete header ({len} bytes, the file was being created): ignored"),
    )
}

/// The warning for a torn last line, with its line number (found by reading back to the latest
/// compaction entry).
fn torn_tail(file: &File, path: &Path, l: &Layout) -> Result<Warning> {
    let scan = scan_back(file, l.body, l.end).map_err(|e| load::io_error(path, &e))?;
    Ok(torn_warning(l, scan.next_line()))
}

/// A random id in the UUID v4 layout.
fn new_session_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let word = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.write_u64(SEQ.fetch_add(1, Ordering::Relaxed));
        h.write_u64(salt);
        h.finish()
    };
    let (a, b) = (word(1), word(2));
    let a = (a & !0xf000) | 0x4000;
    let b = (b & !(0b11 << 62)) | (0b10 << 62);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// Makes a new file's directory entry durable (Unix; elsewhere a no-op).
fn sync_dir(path: &Path) {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// The folders a new session file goes in, when missing (the lock file beside it needs them first).
fn create_folder(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => {
            std::fs::create_dir_all(dir).map_err(|e| super::io_error(dir, "cannot create the folder", &e))?;
            sync_dir(dir);
            Ok(())
        }
        _ => Ok(()),
    }
}

pub struct SessionStore {
    path: PathBuf,
    header: Option<Header>,
    loader: Loader,
    writer: Option<Writer>,
    closed: bool,
}

impl SessionStore {
    pub fn open(path: impl AsRef<Path>, opts: OpenOptions) -> Result<SessionStore> {
        let path = path.as_ref().to_path_buf();
        let loader = Loader {
            path: path.clone(),
            recover: opts.recover,
            session: opts.session.clone(),
            snapshot: opts.snapshot,
            warnings: Warnings::default(),
        };
        let read = |e: io::Error| load::io_error(&path, &e);
        if opts.read_only {
            let file = File::open(&path).map_err(|e| open_error(&path, &e))?;
            let header = match layout(&file).map_err(read)? {
                Err(problem) => return Err(corrupt_header(&path, &problem)),
                Ok(Start::Empty { len }) => {
                    if len > 0 {
                        loader.warnings.add([torn_header(len)]);
                    }
                    None
                }
                Ok(Start::Header(l)) => {
                    if l.torn() {
                        loader.warnings.add([torn_tail(&file, &path, &l)?]);
                    }
                    Some(l.header)
                }
            };
            return Ok(SessionStore { path, header, loader, writer: None, closed: false });
        }
        if !path.exists() {
            if !opts.create {
                return Err(not_found(&path));
            }
            create_folder(&path)?;
        }
        let lock = WriterLock::acquire(&path)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(opts.create)
            .open(&path)
            .map_err(|e| open_error(&path, &e))?;
        let (header, writer) = match layout(&file).map_err(read)? {
            Err(problem) => return Err(corrupt_header(&path, &problem)),
            Ok(Start::Empty { len }) => {
                if len > 0 {
                    loader.warnings.add([torn_header(len)]);
                }
                let header = Header {
                    version: VERSION,
                    id: new_session_id(),
                    created: crate::session::now_ms(),
                    session: opts.session.clone(),
                };
                let line = format::encode_header(&header);
                let write = || -> io::Result<()> {
                    file.set_len(0)?;
                    (&file).write_all(&line)?;
                    file.sync_all()
                };
                write().map_err(|e| super::io_error(&path, "cannot write", &e))?;
                sync_dir(&path);
                let end = line.len() as u64;
                let counter = writer_counter(header.session.as_ref());
                let writer = Writer::fresh(&path, file, lock, end, opts.durability, counter);
                (header, writer)
            }
            Ok(Start::Header(l)) => {
                if l.torn() {
                    loader.warnings.add([torn_tail(&file, &path, &l)?]);
                }
                let counter = writer_counter(opts.session.as_ref().or(l.header.session.as_ref()));
                let writer = Writer::existing(&path, file, lock, &l, opts.durability, counter);
                (l.header, writer)
            }
        };
        Ok(SessionStore { path, header: Some(header), loader, writer: Some(writer), closed: false })
    }

    fn check_open(&self) -> Result<()> {
        if self.closed {
            return Err(CfError::new(Code::StoreClosed, format!("{}: the store is closed", self.path.display())));
        }
        Ok(())
    }

    /// Runs a write on the writer, then moves its warnings to the store's.
    fn write<T>(&mut self, f: impl FnOnce(&mut Writer) -> Result<T>) -> Result<T> {
        self.check_open()?;
        let Some(w) = self.writer.as_mut() else {
            return Err(CfError::new(Code::ReadOnly, format!("{}: opened with readOnly: true", self.path.display())));
        };
        let out = f(w);
        self.loader.warnings.add(std::mem::take(&mut w.warnings));
        out
    }

    pub fn append(&mut self, msg: &Message) -> Result<()> {
        self.write(|w| w.append(msg))
    }

    pub fn update(&mut self, msg: &Message) -> Result<()> {
        self.write(|w| w.update(msg))
    }

    /// Records a prune as `Session.prune()` reported it.
    pub fn prune(&mut self, p: &PruneRecord) -> Result<()> {
        p.check()?;
        self.write(|w| w.prune(p))
    }

    /// Records the session's pins as they stand (`Session.pins()`); a load restores them.
    pub fn pins(&mut self, pins: &[crate::session::Pin]) -> Result<()> {
        self.write(|w| w.pins(pins))
    }

    /// Syncs what was written (the `batch` policy's pending entries; a no-op for `entry`).
    pub fn flush(&mut self) -> Result<()> {
        self.write(|w| w.flush()).or_else(|e| if e.code == Code::ReadOnly { Ok(()) } else { Err(e) })
    }

    /// Flushes and lets go of the lock; later calls fail with `CF_STORE_CLOSED`. Closing twice is
    /// fine.
    pub fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        match self.writer.take() {
            Some(mut w) => {
                let r = w.close();
                self.loader.warnings.add(std::mem::take(&mut w.warnings));
                r
            }
            None => Ok(()),
        }
    }

    /// What loads need, for running them on another thread.
    pub fn loader(&self) -> Result<Loader> {
        self.check_open()?;
        Ok(self.loader.clone())
    }

    /// A writer indexes its file once the first load is done (or at its first write).
    fn loaded<T>(&mut self, out: Result<T>) -> Result<T> {
        if let Some(w) = self.writer.as_mut() {
            w.start_index();
        }
        out
    }

    /// A writer whose file has no usable compaction entry (the load reads every line) takes its
    /// index from the load instead of reading the file again.
    pub fn load(&mut self, opts: Option<SessionOptions>, aborted: &(dyn Fn() -> bool + Sync)) -> Result<History> {
        let index = self.writer.as_ref().is_some_and(|w| w.wants_index());
        let out = self.loader().and_then(|l| l.history_indexed(opts, aborted, index));
        let out = out.map(|(h, found)| {
            match (self.writer.as_mut(), found) {
                (Some(w), Some(Index::Built(s))) => w.adopt_index(*s),
                (Some(w), Some(Index::Later(l))) => w.adopt_later(l),
                _ => {}
            }
            h
        });
        self.loaded(out)
    }

    #[cfg(test)]
    pub fn index_from_load(&self) -> bool {
        self.writer.as_ref().is_some_and(|w| w.index_from_load())
    }

    pub fn load_all(&mut self) -> Result<Vec<Message>> {
        let out = self.loader().and_then(|l| l.all_messages());
        self.loaded(out)
    }

    pub fn export(&mut self, to: &Path) -> Result<usize> {
        let out = self.loader().and_then(|l| l.export(to));
        self.loaded(out)
    }

    /// What loads need, for running them on another thread (a writer starts indexing now).
    pub fn loader_for_async(&mut self) -> Result<Loader> {
        let out = self.loader();
        self.loaded(out)
    }

    pub fn warnings(&self) -> Vec<Warning> {
        self.loader.warnings.list()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session id from the header (none for a read-only open of a file without one yet).
    /// The file's header (`None`: a read-only open of a file without one yet).
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    pub fn id(&self) -> Option<&str> {
        self.header.as_ref().map(|h| h.id.as_str())
    }

    pub fn is_read_only(&self) -> bool {
        self.writer.is_none()
    }
}
