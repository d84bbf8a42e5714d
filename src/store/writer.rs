//! The appending side: each entry is one line handed to the OS with a single write, synced as the
//! durability policy says, and a compaction entry follows whenever the newest completed
//! compaction changes.
//!
//! Opening a file for writing does not read it: a thread indexes it (ids and compaction structure,
//! message contents skipped) in the background, started once the caller's first load is done (so
//! it does not compete with it) or by the first write, which waits for it.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use super::durability::{Durability, SyncState};
use super::file_index::{is_structural, scan, skeleton, Index, Scanned};
use super::format::{self, CompactionRecord, Loc, PruneRecord};
use super::lines::Layout;
use super::lock::WriterLock;
use super::snapshot::LaterIndex;
use super::warning::Warning;
use crate::error::{CfError, Code, Result};
use crate::message::Message;
use crate::tokens::Counter;

enum Known {
    /// The index scan has not started yet.
    Unread(Layout),
    Scanning {
        handle: JoinHandle<io::Result<Scanned>>,
        cancel: Arc<AtomicBool>,
    },
    /// Built by a load that read every line, taken in at the first write.
    Scanned(Box<Scanned>),
    /// In the file's snapshot, as a load from it found it: decoded at the first write (decoding it
    /// while the caller turns the load into model messages would take a core V8 uses).
    Later(Box<LaterIndex>, Layout),
    Ready {
        index: Box<Index>,
        /// What the latest compaction entry on file says (its body; the default: no entry).
        written: CompactionRecord,
    },
    Failed(CfError),
    Closed,
}

pub struct Writer {
    path: PathBuf,
    file: File,
    _lock: WriterLock,
    /// Offset after the last complete line.
    end: u64,
    /// Bytes after `end` (a torn line) are cut before the next write.
    torn: bool,
    /// Complete lines (the header included); known once the index is ready.
    lines: u64,
    sync: SyncState,
    /// A written line awaits its sync (done once per operation, by `commit`).
    must_sync: bool,
    known: Known,
    /// What counts each message written (`counts`); none: lines without counts.
    counter: Option<Counter>,
    /// Problems found by the index scan or while writing a compaction entry.
    pub warnings: Vec<Warning>,
}

fn write_error(path: &Path, e: &io::Error) -> CfError {
    super::io_error(path, "cannot write", e)
}

impl Writer {
    /// A writer for a file that holds only its header (`lines` = 1).
    pub fn fresh(
        path: &Path,
        file: File,
        lock: WriterLock,
        end: u64,
        policy: Durability,
        counter: Option<Counter>,
    ) -> Writer {
        Writer {
            path: path.to_path_buf(),
            file,
            _lock: lock,
            end,
            torn: false,
            lines: 1,
            sync: SyncState::new(policy),
            must_sync: false,
            known: Known::Ready { index: Box::default(), written: CompactionRecord::default() },
            counter,
            warnings: Vec::new(),
        }
    }

    /// A writer for an existing file; its index is built in the background (see `start_index`).
    pub fn existing(
        path: &Path,
        file: File,
        lock: WriterLock,
        layout: &Layout,
        policy: Durability,
        counter: Option<Counter>,
    ) -> Writer {
        let mut w = Writer::fresh(path, file, lock, layout.end, policy, counter);
        w.torn = layout.torn();
        w.lines = 0;
        w.known = Known::Unread(layout.clone());
        w
    }

    /// Takes the index a load found in the file's snapshot, to decode at the first write (the
    /// file is scanned then if it cannot be), if it covers exactly what the writer found.
    pub fn adopt_later(&mut self, later: LaterIndex) {
        if let Known::Unread(layout) = std::mem::replace(&mut self.known, Known::Closed) {
            self.known =
                if layout.end == later.end { Known::Later(Box::new(later), layout) } else { Known::Unread(layout) };
        }
    }

    /// Starts indexing the file in the background, if not started yet.
    pub fn start_index(&mut self) {
        let Known::Unread(layout) = &self.known else {
            return;
        };
        let layout = layout.clone();
        let path = self.path.clone();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = cancel.clone();
        let started = File::open(&path).and_then(|reader| {
            std::thread::Builder::new().name("contextfold-index".into()).spawn(move || scan(&reader, &layout, &stop))
        });
        self.known = match started {
            Ok(handle) => Known::Scanning { handle, cancel },
            Err(e) => Known::Failed(super::io_error(&path, "cannot index", &e)),
        };
    }

    /// True while the file is not indexed yet and no scan has started.
    pub fn wants_index(&self) -> bool {
        matches!(self.known, Known::Unread(_))
    }

    /// Takes the index a load built of the whole file, if it covers exactly what the writer found.
    pub fn adopt_index(&mut self, scanned: Scanned) {
        if matches!(&self.known, Known::Unread(layout) if layout.end == scanned.end) {
            self.known = Known::Scanned(Box::new(scanned));
        }
    }

    /// The index waiting to be taken in came from a load.
    #[cfg(test)]
    pub fn index_from_load(&self) -> bool {
        matches!(self.known, Known::Scanned(_))
    }

    /// Waits for the index; then makes sure the latest compaction entry describes the file (a
    /// crash between a summary and its compaction entry leaves it behind).
    fn ready(&mut self) -> Result<()> {
        self.start_index();
        match std::mem::replace(&mut self.known, Known::Closed) {
            Known::Scanning { handle, .. } => {
                let scanned = handle
                    .join()
                    .map_err(|_| CfError::new(Code::Internal, "the index thread panicked"))
                    .and_then(|r| r.map_err(|e| super::io_error(&self.path, "cannot read", &e)));
                match scanned {
                    Ok(s) => self.take_index(s)?,
                    Err(e) => {
                        self.known = Known::Failed(e.clone());
                        return Err(e);
                    }
                }
            }
            Known::Scanned(s) => self.take_index(*s)?,
            Known::Later(later, layout) => match later.decode() {
                Some(s) => self.take_index(s)?,
                None => {
                    self.known = Known::Unread(layout);
                    return self.ready();
                }
            },
            Known::Failed(e) => {
                self.known = Known::Failed(e.clone());
                return Err(e);
            }
            Known::Closed => {
                return Err(CfError::new(Code::StoreClosed, format!("{}: the store is closed", self.path.display())))
            }
            ready @ Known::Ready { .. } => self.known = ready,
            Known::Unread(_) => unreachable!("start_index ran"),
        }
        Ok(())
    }

    fn take_index(&mut self, s: Scanned) -> Result<()> {
        self.lines = s.lines;
        self.warnings.extend(s.warnings);
        let stale = s.stale;
        self.known = Known::Ready { index: Box::new(s.index), written: s.latest.map(|r| r.body()).unwrap_or_default() };
        self.record_view(stale);
        self.commit()
    }

    fn index(&mut self) -> &mut Index {
        match &mut self.known {
            Known::Ready { index, .. } => index,
            _ => unreachable!("ready() runs first"),
        }
    }

    /// Appends a message: `CF_DUPLICATE_ID` (and nothing written) if its id is in the file.
    pub fn append(&mut self, msg: &Message) -> Result<()> {
        self.ready()?;
        self.index().check_append(msg)?;
        let line = format::encode_message(msg, self.counter.as_ref());
        let loc = self.write_line(&line)?;
        self.index().on_message(loc, loc.offset + line.len() as u64, skeleton(msg));
        if is_structural(msg) {
            self.record_view(false);
        }
        self.commit()
    }

    /// Replaces a message: `CF_NOT_FOUND` (and nothing written) if its id is not in the file.
    pub fn update(&mut self, msg: &Message) -> Result<()> {
        self.ready()?;
        // An update of a request or summary (before or after) is marked, and a compaction entry
        // always follows it: a load that finds a marked update after the latest entry knows the
        // writer stopped in between.
        let view = self.index().check_update(msg)?;
        let loc = self.write_line(&format::encode_update(msg, view, self.counter.as_ref()))?;
        self.index().on_update(loc, skeleton(msg));
        if view {
            self.record_view(true);
        }
        self.commit()
    }

    /// Records a prune; every message id must be in the file (`CF_NOT_FOUND` otherwise).
    pub fn prune(&mut self, p: &PruneRecord) -> Result<()> {
        self.ready()?;
        self.index().check_prune(p)?;
        if p.message_ids.is_empty() {
            return Ok(());
        }
        let loc = self.write_line(&format::encode_prune(p))?;
        self.index().on_prune(&p.message_ids, loc);
        self.commit()
    }

    /// Records the session's pins as they stand.
    pub fn pins(&mut self, pins: &[crate::session::Pin]) -> Result<()> {
        self.ready()?;
        self.write_line(&format::encode_pins(pins))?;
        self.commit()
    }

    /// Writes a compaction entry when the view the file's latest entry records is not the current
    /// one (or always, with `force`). A failure only costs later loads their shortcut: it is
    /// reported as a warning and retried with the next change.
    fn record_view(&mut self, force: bool) {
        let line = self.lines + 1;
        let Known::Ready { index, written } = &self.known else {
            return;
        };
        let rec = index.record(line);
        if !force && rec.body() == *written {
            return;
        }
        match self.write_line(&format::encode_compaction(&rec)) {
            Ok(_) => {
                if let Known::Ready { written, .. } = &mut self.known {
                    *written = rec.body();
                }
            }
            Err(e) => self.warnings.push(Warning::at(
                Loc { offset: self.end, line },
                format!("could not write the compaction entry: {}", e.message),
            )),
        }
    }

    /// Writes one whole line with a single write. A failed write is taken back so the file stays
    /// valid JSONL.
    fn write_line(&mut self, bytes: &[u8]) -> Result<Loc> {
        if self.torn {
            self.file.set_len(self.end).map_err(|e| write_error(&self.path, &e))?;
            self.torn = false;
        }
        let loc = Loc { offset: self.end, line: self.lines + 1 };
        if let Err(e) = self.file.write_all(bytes) {
            let _ = self.file.set_len(self.end);
            return Err(write_error(&self.path, &e));
        }
        self.end += bytes.len() as u64;
        self.lines += 1;
        if self.sync.wrote(Instant::now()) {
            self.sync.synced();
            self.must_sync = true;
        }
        Ok(loc)
    }

    /// Syncs what `write_line` asked to sync.
    fn commit(&mut self) -> Result<()> {
        if std::mem::take(&mut self.must_sync) {
            self.file.sync_data().map_err(|e| write_error(&self.path, &e))?;
        }
        Ok(())
    }

    /// Syncs everything written.
    pub fn flush(&mut self) -> Result<()> {
        if self.sync.pending() || self.must_sync {
            self.must_sync = false;
            self.file.sync_data().map_err(|e| write_error(&self.path, &e))?;
            self.sync.synced();
        }
        Ok(())
    }

    /// Flushes, stops the index thread if it still runs, and lets go of the lock (on drop).
    pub fn close(&mut self) -> Result<()> {
        let flushed = self.flush();
        if let Known::Scanning { handle, cancel } = std::mem::replace(&mut self.known, Known::Closed) {
            cancel.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        self.known = Known::Closed;
        flushed
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
