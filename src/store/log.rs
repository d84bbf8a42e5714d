//! A session log kept elsewhere (a database row or list item per entry, the caller doing the I/O):
//! the same entries as the lines of a session file, numbered from 1 (the header) in write order.
//! An entry's number stands for both its line and its offset, so compaction entries point at
//! entry numbers, and the file's logic applies unchanged: what a writer knows and writes
//! (`LogWriter`), which entries a tail-first load needs (`plan`), and the loads themselves.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use serde_json::Value;

use super::counts::writer_counter;
use super::file_index::{is_structural, skeleton, Index, Scanned};
use super::format::{self, CompactionRecord, Header, Loc, PruneRecord, VERSION};
use super::load::{tail_first, How, Loaded, Reading, Source, SourceLines, Whole};
use super::replay::decode_all;
use super::warning::Warning;
use crate::error::{CfError, Code, Result};
use crate::message::Message;
use crate::session::Pin;
use crate::tokens::Counter;

/// The place of entry `n`.
fn loc(n: u64) -> Loc {
    Loc { offset: n, line: n }
}

fn corrupt(label: &str, n: u64, problem: &str) -> CfError {
    CfError::new(Code::CorruptSession, format!("{label}: entry {n}: {problem}"))
}

/// The header entry of a new log.
pub fn header_entry(id: &str, created: u64, session: Option<Value>) -> Vec<u8> {
    strip(format::encode_header(&Header { version: VERSION, id: id.to_string(), created, session }))
}

/// `header_entry` for options a caller gave: `CF_INVALID_ARGUMENT` unless they are `SessionOptions`.
pub fn new_header_entry(id: &str, created: u64, session: Option<Value>) -> Result<Vec<u8>> {
    if let Some(v) = &session {
        crate::policy::parse_options::<crate::session::SessionOptions>("session", v.clone())?;
    }
    Ok(header_entry(id, created, session))
}

/// The header of a log, from its first entry.
pub fn parse_header(label: &str, entry: &[u8]) -> Result<Header> {
    format::parse_header(entry).map_err(|p| corrupt(label, 1, &p))
}

fn strip(mut line: Vec<u8>) -> Vec<u8> {
    line.pop();
    line
}

/// What the writer of a log knows (message ids and skeletons, the compaction structure), and the
/// entries each change adds. When writing them fails, the caller rebuilds it from the log.
#[derive(Debug)]
pub struct LogWriter {
    index: Index,
    /// Entries so far, the header included.
    entries: u64,
    /// What the latest compaction entry says (its body).
    written: CompactionRecord,
    /// Entries owed from the scan (a compaction entry a crash left out), written with the next change.
    pending: Vec<Vec<u8>>,
    /// Entries the scan could not read (loads report them too).
    pub warnings: Vec<Warning>,
    /// What counts each message written: the header's session options' counter.
    counter: Option<Counter>,
}

impl LogWriter {
    /// The writer of the log whose entries (the header first) are these.
    pub fn from_entries(label: &str, entries: &[&[u8]]) -> Result<LogWriter> {
        let Some(first) = entries.first() else {
            return Err(corrupt(label, 1, "no header"));
        };
        let header = parse_header(label, first)?;
        let mut out = Scanned { lines: 1, ..Default::default() };
        for (k, entry) in entries.iter().enumerate().skip(1) {
            let n = k as u64 + 1;
            if let Err(problem) = super::file_index::scan_line(&mut out, loc(n), n + 1, entry) {
                out.warnings.push(Warning::at(loc(n), problem));
            }
        }
        let mut w = LogWriter {
            index: out.index,
            entries: out.lines,
            written: out.latest.map(|r| r.body()).unwrap_or_default(),
            pending: Vec::new(),
            warnings: out.warnings,
            counter: writer_counter(header.session.as_ref()),
        };
        let mut owed = Vec::new();
        w.record_view(out.stale, &mut owed);
        w.pending = owed;
        Ok(w)
    }

    /// Entries so far, the header included (those this writer returned count as written).
    pub fn entries(&self) -> u64 {
        self.entries
    }

    fn push(&mut self, out: &mut Vec<Vec<u8>>, line: Vec<u8>) -> Loc {
        self.entries += 1;
        out.push(strip(line));
        loc(self.entries)
    }

    /// What is owed, then room for the entries of a change.
    fn start(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.pending)
    }

    /// Adds a compaction entry when the view differs from the one last recorded (or with `force`).
    fn record_view(&mut self, force: bool, out: &mut Vec<Vec<u8>>) {
        let rec = self.index.record(self.entries + 1);
        if force || rec.body() != self.written {
            self.written = rec.body();
            self.push(out, format::encode_compaction(&rec));
        }
    }

    /// The entries for appending `msg` (`CF_DUPLICATE_ID`, nothing returned, for a known id).
    pub fn append(&mut self, msg: &Message) -> Result<Vec<Vec<u8>>> {
        self.index.check_append(msg)?;
        let mut out = self.start();
        let at = self.push(&mut out, format::encode_message(msg, self.counter.as_ref()));
        self.index.on_message(at, at.offset + 1, skeleton(msg));
        if is_structural(msg) {
            self.record_view(false, &mut out);
        }
        Ok(out)
    }

    /// The entries for updating `msg` (`CF_NOT_FOUND` for an unknown id).
    pub fn update(&mut self, msg: &Message) -> Result<Vec<Vec<u8>>> {
        let view = self.index.check_update(msg)?;
        let mut out = self.start();
        let at = self.push(&mut out, format::encode_update(msg, view, self.counter.as_ref()));
        self.index.on_update(at, skeleton(msg));
        if view {
            self.record_view(true, &mut out);
        }
        Ok(out)
    }

    /// The entries for a prune (`CF_NOT_FOUND` when a message is not in the log).
    pub fn prune(&mut self, p: &PruneRecord) -> Result<Vec<Vec<u8>>> {
        p.check()?;
        self.index.check_prune(p)?;
        let mut out = self.start();
        if !p.message_ids.is_empty() {
            let at = self.push(&mut out, format::encode_prune(p));
            self.index.on_prune(&p.message_ids, at);
        }
        Ok(out)
    }

    /// The entries recording the session's pins.
    pub fn pins(&mut self, pins: &[Pin]) -> Vec<Vec<u8>> {
        let mut out = self.start();
        self.push(&mut out, format::encode_pins(pins));
        out
    }
}

/// Which entries a tail-first load from this compaction entry reads: ranges `[from, to)` of entry
/// numbers, and every entry from `tail` on. `None` when no compaction applies as of the entry (a
/// full load is needed) or the entry cannot be read.
pub fn plan(compaction: &[u8]) -> Option<(Vec<[u64; 2]>, u64)> {
    let rec = format::parse_compaction(compaction).ok()?;
    let last = rec.runs.last()?;
    rec.request.as_ref()?;
    let mut ranges: Vec<[u64; 2]> = rec.runs[..rec.runs.len() - 1].iter().map(|r| [r.offset, r.end]).collect();
    ranges.extend(rec.patches.iter().filter(|p| p.offset < last.offset).map(|p| [p.offset, p.offset + 1]));
    ranges.sort_unstable();
    Some((ranges, last.offset))
}

/// Entries fetched from a log, by number.
struct Fetched(BTreeMap<u64, Vec<u8>>);

impl Source for Fetched {
    fn line_at(&self, offset: u64, end: u64) -> io::Result<Option<Cow<'_, [u8]>>> {
        Ok(if offset < end { self.0.get(&offset).map(|l| Cow::Borrowed(l.as_slice())) } else { None })
    }

    fn lines(&self, start: Loc, end: u64) -> io::Result<Option<SourceLines<'_>>> {
        // Every number of the range must be there: a gap is a range the caller did not fetch.
        let lines: SourceLines<'_> =
            self.0.range(start.offset..end).map(|(&n, l)| (loc(n), Cow::Borrowed(l.as_slice()))).collect();
        Ok((lines.len() as u64 == end.saturating_sub(start.offset)).then_some(lines))
    }
}

/// A tail-first load from the compaction entry numbered `at`, given the entries `plan` named
/// (the compaction entry among them); `None` when they do not match it (load everything instead).
pub fn load_tail(
    label: &str,
    entries: Vec<(u64, Vec<u8>)>,
    at: u64,
    counter: Option<&Counter>,
) -> Result<Option<Loaded>> {
    let fetched = Fetched(entries.into_iter().collect());
    let Some(rec) = fetched.0.get(&at).and_then(|e| format::parse_compaction(e).ok()) else {
        return Ok(None);
    };
    let end = fetched.0.keys().next_back().map_or(0, |n| n + 1);
    let path = Path::new(label);
    let mut reading = Reading { path, recover: false, warnings: Vec::new() };
    let read = tail_first(&fetched, (2, end), &rec, loc(at), None, &mut reading, counter)?;
    Ok(read.map(|r| Loaded::from_tail(r, reading.warnings)))
}

/// Every entry after the header (numbered from 2, in order), replayed.
pub fn load_full(label: &str, entries: &[&[u8]], counter: Option<&Counter>) -> Result<Loaded> {
    let lines: Vec<(Loc, &[u8])> = entries.iter().enumerate().map(|(k, e)| (loc(k as u64 + 2), *e)).collect();
    let mut whole = Whole::new(Path::new(label), How { counter, ..How::default() }, 0);
    for ((at, line), decoded) in lines.iter().zip(decode_all(&lines, counter)) {
        whole.apply(*at, line.len(), decoded)?;
    }
    Ok(whole.finish(None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{request, summary, user};

    fn log_of(writer: &mut LogWriter, header: Vec<u8>, msgs: &[Message]) -> Vec<Vec<u8>> {
        let mut entries = vec![header];
        for m in msgs {
            entries.extend(writer.append(m).unwrap());
        }
        entries
    }

    #[test]
    fn a_new_header_takes_only_session_options() {
        let ok = new_header_entry("s", 1, Some(serde_json::json!({"model": {"limit": {"context": 1000}}}))).unwrap();
        assert_eq!(parse_header("log", &ok).unwrap().id, "s");
        let e = new_header_entry("s", 1, Some(serde_json::json!({"model": {}}))).unwrap_err();
        assert_eq!(e.code, crate::error::Code::InvalidArgument);
        assert!(e.message.starts_with("session.model"), "{}", e.message);
    }

    #[test]
    fn a_summary_adds_a_compaction_entry_that_plans_a_tail_first_load() {
        let header = header_entry("s", 1, None);
        let mut w = LogWriter::from_entries("log", &[&header]).unwrap();
        let r = request("r", Some("b"), None);
        let msgs = [user("a", "x"), user("b", "y"), r, summary("s1", "r", true), user("c", "z")];
        let entries = log_of(&mut w, header, &msgs);
        // header, a, b, r, s1, compaction, c
        assert_eq!(entries.len(), 7);
        assert!(entries[5].starts_with(b"{\"type\":\"compaction\""));
        let (ranges, tail) = plan(&entries[5]).unwrap();
        assert!(ranges.is_empty());
        assert_eq!(tail, 3, "from b, the kept tail");
        let fetched: Vec<(u64, Vec<u8>)> = (3..=7).map(|n| (n, entries[n as usize - 1].clone())).collect();
        let loaded = load_tail("log", fetched, 6, None).unwrap().unwrap();
        let ids: Vec<&str> = loaded.messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["b", "r", "s1", "c"]);
        // Without the entries the plan named, the load says so instead of guessing.
        let missing: Vec<(u64, Vec<u8>)> = (4..=7).map(|n| (n, entries[n as usize - 1].clone())).collect();
        assert!(load_tail("log", missing, 6, None).unwrap().is_none());
    }

    #[test]
    fn bad_entries_are_coded_errors_and_writes_check_ids() {
        let e = LogWriter::from_entries("pg s", &[b"{\"type\":\"message\"}"]).unwrap_err();
        assert_eq!(e.code, Code::CorruptSession);
        assert!(e.message.starts_with("pg s: entry 1:"), "{}", e.message);
        let e = load_full("pg s", &[b"{\"type\":\"message\",\"message\":{}}"], None).unwrap_err();
        assert_eq!(e.code, Code::CorruptSession);
        let header = header_entry("s", 1, None);
        let mut w = LogWriter::from_entries("log", &[&header]).unwrap();
        w.append(&user("a", "x")).unwrap();
        assert_eq!(w.append(&user("a", "x")).unwrap_err().code, Code::DuplicateId);
        assert_eq!(w.update(&user("b", "x")).unwrap_err().code, Code::NotFound);
        assert_eq!(w.entries(), 2, "refused changes add nothing");
    }

    #[test]
    fn a_crash_between_a_marked_update_and_its_compaction_entry_is_repaired_by_the_next_writer() {
        let header = header_entry("s", 1, None);
        let mut w = LogWriter::from_entries("log", &[&header]).unwrap();
        let msgs = [user("a", "x"), request("r", None, None), summary("s1", "r", true)];
        let mut entries = log_of(&mut w, header, &msgs);
        let mut update = w.update(&summary("s1", "r", false)).unwrap();
        assert_eq!(update.len(), 2, "a marked update and its compaction entry");
        entries.push(update.remove(0));
        let refs: Vec<&[u8]> = entries.iter().map(|e| e.as_slice()).collect();
        let mut again = LogWriter::from_entries("log", &refs).unwrap();
        let out = again.append(&user("b", "y")).unwrap();
        assert_eq!(out.len(), 2);
        assert!(out[0].starts_with(b"{\"type\":\"compaction\""), "the owed entry comes first");
        assert_eq!(again.entries(), entries.len() as u64 + 2);
    }
}
