//! Property: on random sequences of appends, updates, prunes, compactions (full and partial,
//! completed or not, completed later or failed later) and reopenings, a tail-first load shows
//! exactly what a full load shows, and the full load is the sequence applied in memory. Whatever
//! counter wrote the token counts the lines carry (or none), a load with any counter counts as a
//! load from scratch does, also after the counts or the messages beside them were corrupted.
//! Snapshots are written whatever the file's size: a load that starts from one (and the lines
//! after it) gives what the file alone gives, also after any of its bytes changed.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use proptest::prelude::*;
use serde_json::{json, Value};

use super::file_index::scan;
use super::format::PruneRecord;
use super::lines::{layout, Start};
use super::load::{load, load_all, How, SIZES};
use super::snapshot::{path_of, resolved, MIN_BYTES};
use super::tests::{full_view, msg, opts, request, summary, user};
use super::{header_entry, load_full, load_tail, plan, LogWriter, OpenOptions, SessionStore};
use crate::message::{Message, Part, ToolState};
use crate::policy::parse_options;
use crate::session::{History, SessionOptions};

#[derive(Clone, Debug)]
enum Op {
    User(usize),
    Tools(u8, usize),
    /// Replace the message `k` (from the end) with a longer text.
    Edit(usize),
    /// Prune the newest `n` tool outputs.
    Prune(usize),
    /// A request keeping `tail_back` messages (0: no tail id; past the start: a missing id),
    /// optionally hiding from `hidden_back`; the summary finished or not.
    Compact {
        tail_back: usize,
        hidden_back: Option<usize>,
        finished: bool,
    },
    /// Flip the latest summary between completed and failed.
    FlipSummary,
    /// Close the writer and open it again; with `true`, load the session with it before writing.
    Reopen(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (1usize..300).prop_map(Op::User),
        4 => (1u8..3, 1usize..2000).prop_map(|(n, len)| Op::Tools(n, len)),
        2 => (0usize..12).prop_map(Op::Edit),
        1 => (1usize..4).prop_map(Op::Prune),
        2 => (0usize..15, prop::option::of(0usize..30), prop::bool::weighted(0.8))
            .prop_map(|(tail_back, hidden_back, finished)| Op::Compact { tail_back, hidden_back, finished }),
        1 => Just(Op::FlipSummary),
        1 => any::<bool>().prop_map(Op::Reopen),
    ]
}

fn tools(id: &str, n: u8, len: usize) -> Message {
    let parts: Vec<_> = (0..n)
        .map(|k| {
            json!({"type": "tool", "id": format!("{id}-p{k}"), "callID": format!("{id}-c{k}"), "tool": "bash",
                   "state": {"status": "completed", "input": {"k": k}, "output": "o ".repeat(len)}})
        })
        .collect();
    msg(json!({"id": id, "role": "assistant", "finish": "stop", "parts": parts}))
}

/// The same operations on a plain list: what a full load must give back.
#[derive(Default)]
struct Model {
    messages: Vec<Message>,
}

impl Model {
    fn find(&mut self, id: &str) -> &mut Message {
        self.messages.iter_mut().find(|m| m.id == id).unwrap()
    }
}

/// Session options of every counter: each tokenizer, and one that cuts tool outputs and prices
/// images differently.
fn counting() -> Vec<Value> {
    let model = json!({"limit": {"context": 100000}});
    let mut out: Vec<Value> =
        ["estimate", "o200k", "cl100k"].iter().map(|t| json!({"model": model, "tokenizer": t})).collect();
    out.push(
        json!({"model": model, "tokenizer": "o200k", "compaction": {"toolOutputMaxChars": 300, "imageTokens": 500}}),
    );
    out
}

fn session_options(v: &Value) -> SessionOptions {
    parse_options("session", v.clone()).unwrap()
}

/// The writer's session options: one of `counting()`, or none (lines without counts).
fn writer_session(writer: usize) -> Option<Value> {
    counting().get(writer).cloned()
}

fn open(path: &Path, writer: usize) -> SessionStore {
    SessionStore::open(path, OpenOptions { session: writer_session(writer), ..Default::default() }).unwrap()
}

fn counts_of(h: &History) -> Vec<(Message, Vec<crate::tokens::PartCount>, u64)> {
    h.entries().iter().map(|e| (e.msg.clone(), e.parts.clone(), e.tokens)).collect()
}

/// With each of `counters`, a store's load (recorded counts where they apply) counts its
/// messages as a history built from the same messages does.
fn counts_as_from_scratch(path: &Path, recover: bool, counters: &[Value]) {
    for o in counters.iter().map(session_options) {
        let reader = SessionStore::open(path, OpenOptions { read_only: true, recover, ..Default::default() }).unwrap();
        let loader = reader.loader().unwrap();
        let counted = loader.history(Some(o.clone()), &|| false).unwrap();
        let loaded = loader.context_messages().unwrap();
        let scratch =
            History::from_messages_at(loaded.messages, loaded.base.unwrap_or_default(), o, &|| false).unwrap();
        assert_eq!(counts_of(&counted), counts_of(&scratch));
    }
}

/// A load that reads every line, asked for the writer's index, builds the one a writer's scan of
/// the file builds; when it warned about a line it builds none (the scan decides about it).
fn full_loads_index_as_a_scan_does(path: &Path, recover: bool) {
    let file = std::fs::File::open(path).unwrap();
    let Ok(Start::Header(l)) = layout(&file).unwrap() else {
        return;
    };
    let scanned = scan(&file, &l, &AtomicBool::new(false)).unwrap();
    let Ok(loaded) = load_all(&file, &l, path, How { recover, counter: None, index: true, snapshot: false }) else {
        return;
    };
    if loaded.warnings.is_empty() {
        assert_eq!(loaded.scanned, Some(scanned));
    } else {
        assert_eq!(loaded.scanned, None);
    }
}

/// A load that parses backward from the end as it reads (what a file without a compaction entry
/// near its end gets) gives what the scan-then-read load gives, with pieces of any size: the same
/// messages, counts, view, warnings and writer's index, or the same error.
fn parsing_from_the_end_loads_the_same(path: &Path, recover: bool) {
    let file = std::fs::File::open(path).unwrap();
    let Ok(Start::Header(l)) = layout(&file).unwrap() else {
        return;
    };
    let counter = opts().counter().unwrap();
    let how = How { recover, counter: Some(&counter), index: true, snapshot: false };
    let usual = load(&file, &l, path, how).map_err(|e| e.message);
    for piece in [1, 97, 4096] {
        let before = SIZES.replace((0, piece));
        let parsed = load(&file, &l, path, how).map_err(|e| e.message);
        SIZES.set(before);
        assert_eq!(parsed, usual, "pieces of {piece} bytes");
    }
}

/// A load that may start from the file's snapshot gives what a load of the file alone gives: the
/// same messages, counts, pins, warnings and writer's index, or the same error.
fn snapshots_load_the_same(path: &Path, recover: bool) {
    let file = std::fs::File::open(path).unwrap();
    let Ok(Start::Header(l)) = layout(&file).unwrap() else {
        return;
    };
    let counter = opts().counter().unwrap();
    for index in [false, true] {
        let how = How { recover, counter: Some(&counter), index, snapshot: false };
        let plain = load(&file, &l, path, how).map_err(|e| e.message);
        let from_snapshot = load(&file, &l, path, How { snapshot: true, ..how });
        assert_eq!(from_snapshot.map(|s| resolved(s, &file, &l)).map_err(|e| e.message), plain);
    }
}

/// Changes the bytes `edits` pick in the file's snapshot, if it has one.
fn corrupt_snapshot(path: &Path, edits: &[(usize, u8)]) {
    let snap = path_of(path);
    let Ok(mut bytes) = std::fs::read(&snap) else {
        return;
    };
    for &(pick, by) in edits {
        let k = pick % bytes.len();
        bytes[k] ^= by.max(1);
    }
    std::fs::write(snap, bytes).unwrap();
}

/// Changes the alphanumeric bytes `edits` pick among those of the message lines (the message and
/// its recorded counts), each into another of its kind: digits stay non-zero digits, letters
/// letters, so every line is still JSON.
fn corrupt(path: &Path, edits: &[(usize, u8)]) {
    let mut bytes = std::fs::read(path).unwrap();
    let mut candidates = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            let line = &bytes[start..i];
            if let Some(body) = [&b"{\"type\":\"message\",\"message\":"[..], b"{\"type\":\"update\","]
                .iter()
                .find(|p| line.starts_with(p))
                .map(|p| start + p.len())
            {
                candidates.extend((body..i).filter(|&k| bytes[k].is_ascii_alphanumeric()));
            }
            start = i + 1;
        }
    }
    if candidates.is_empty() {
        return;
    }
    for &(pick, by) in edits {
        let k = candidates[pick % candidates.len()];
        let b = bytes[k];
        bytes[k] = match b {
            b'0'..=b'9' => b'1' + (b - b'0' + 1 + by % 8) % 9,
            b'a'..=b'z' => b'a' + (b - b'a' + 1 + by % 25) % 26,
            _ => b'A' + (b - b'A' + 1 + by % 25) % 26,
        };
    }
    std::fs::write(path, bytes).unwrap();
}

/// The same session as a log in memory (what a database backend holds), written through `LogWriter`.
struct MemLog {
    entries: Vec<Vec<u8>>,
    writer: LogWriter,
}

impl MemLog {
    fn new(writer: usize) -> MemLog {
        let entries = vec![header_entry("s", 1, writer_session(writer))];
        let writer = LogWriter::from_entries("log", &[&entries[0]]).unwrap();
        MemLog { entries, writer }
    }

    fn write(&mut self, change: impl FnOnce(&mut LogWriter) -> crate::error::Result<Vec<Vec<u8>>>) {
        let new = change(&mut self.writer).unwrap();
        self.entries.extend(new);
        assert_eq!(self.writer.entries(), self.entries.len() as u64);
    }

    fn reopen(&mut self) {
        let refs: Vec<&[u8]> = self.entries.iter().map(|e| e.as_slice()).collect();
        self.writer = LogWriter::from_entries("log", &refs).unwrap();
    }

    /// A tail-first load as a backend does it: the latest compaction entry, the entries its plan
    /// names, then the load (`None`: the plan did not apply).
    fn load_tail(&self) -> Option<super::Loaded> {
        let at = self.entries.iter().rposition(|e| e.starts_with(b"{\"type\":\"compaction\""))?;
        let (ranges, tail) = plan(&self.entries[at])?;
        let mut fetched: Vec<(u64, Vec<u8>)> = Vec::new();
        for n in ranges.into_iter().flat_map(|[a, b]| a..b).chain(tail..=self.entries.len() as u64) {
            fetched.push((n, self.entries[n as usize - 1].clone()));
        }
        load_tail("log", fetched, at as u64 + 1, None).unwrap()
    }

    /// A full load with each of `counters` counts as a history built from the same messages does.
    fn counts_as_from_scratch(&self, counters: &[Value]) {
        let refs: Vec<&[u8]> = self.entries[1..].iter().map(|e| e.as_slice()).collect();
        for o in counters.iter().map(session_options) {
            let loaded = load_full("log", &refs, Some(&o.counter().unwrap())).unwrap();
            let counted = loaded.into_history(o.clone(), &|| false).unwrap();
            let messages = counted.entries().iter().map(|e| e.msg.clone()).collect();
            assert_eq!(counts_of(&counted), counts_of(&History::from_messages(messages, o, &|| false).unwrap()));
        }
    }

    fn load_all(&self) -> Vec<Message> {
        let refs: Vec<&[u8]> = self.entries[1..].iter().map(|e| e.as_slice()).collect();
        load_full("log", &refs, None).unwrap().messages
    }
}

/// Applies `ops` to a store whose writer counts with `counting()[writer]` (none past its end) and
/// to a log, checking both after each one; the file stays in the directory returned.
fn run(ops: &[Op], writer: usize) -> (tempfile::TempDir, PathBuf) {
    MIN_BYTES.set(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut store = open(&path, writer);
    let mut log = MemLog::new(writer);
    let mut model = Model::default();
    let mut seq = 0usize;
    let mut last_summary: Option<(String, String, bool)> = None;
    for op in ops {
        seq += 1;
        let n = model.messages.len();
        match op {
            Op::User(len) => {
                let m = user(&format!("u{seq}"), &"w ".repeat(*len));
                store.append(&m).unwrap();
                log.write(|w| w.append(&m));
                model.messages.push(m);
            }
            Op::Tools(k, len) => {
                let m = tools(&format!("a{seq}"), *k, *len);
                store.append(&m).unwrap();
                log.write(|w| w.append(&m));
                model.messages.push(m);
            }
            Op::Edit(back) => {
                if n == 0 {
                    continue;
                }
                let old = &model.messages[n - 1 - back % n];
                // Keep structural messages what they are (FlipSummary changes summaries).
                if old.compaction().is_some() || old.is_summary() {
                    continue;
                }
                let m = user(&old.id, &format!("edited {seq}"));
                store.update(&m).unwrap();
                log.write(|w| w.update(&m));
                let id = m.id.clone();
                *model.find(&id) = m;
            }
            Op::Prune(count) => {
                let mut p = PruneRecord { compacted_at: seq as f64, ..Default::default() };
                'outer: for m in model.messages.iter_mut().rev() {
                    for part in &mut m.parts {
                        if let Part::Tool(t) = part {
                            if let ToolState::Completed { compacted_at, .. } = &mut t.state {
                                if compacted_at.is_none() {
                                    *compacted_at = Some(seq as f64);
                                    p.message_ids.push(m.id.clone());
                                    p.part_ids.push(t.id.clone());
                                    if p.part_ids.len() == *count {
                                        break 'outer;
                                    }
                                }
                            }
                        }
                    }
                }
                store.prune(&p).unwrap();
                log.write(|w| w.prune(&p));
            }
            Op::Compact { tail_back, hidden_back, finished } => {
                let tail = match *tail_back {
                    0 => None,
                    b if b > n => Some("missing".to_string()),
                    b => Some(model.messages[n - b].id.clone()),
                };
                let hidden =
                    hidden_back.map(|b| if b >= n { "missing".to_string() } else { model.messages[b].id.clone() });
                let r = request(&format!("r{seq}"), tail.as_deref(), hidden.as_deref());
                let s = summary(&format!("s{seq}"), &r.id, *finished);
                store.append(&r).unwrap();
                store.append(&s).unwrap();
                log.write(|w| w.append(&r));
                log.write(|w| w.append(&s));
                last_summary = Some((s.id.clone(), r.id.clone(), *finished));
                model.messages.push(r);
                model.messages.push(s);
            }
            Op::FlipSummary => {
                let Some((id, parent, done)) = last_summary.as_mut() else {
                    continue;
                };
                *done = !*done;
                let s = summary(id, parent, *done);
                store.update(&s).unwrap();
                log.write(|w| w.update(&s));
                *model.find(id) = s;
            }
            Op::Reopen(load) => {
                store.close().unwrap();
                store = open(&path, writer);
                if *load {
                    // A load that reads every line hands the writer its index (see below).
                    store.load(Some(opts()), &|| false).unwrap();
                }
                log.reopen();
            }
        }
        full_loads_index_as_a_scan_does(&path, false);
        parsing_from_the_end_loads_the_same(&path, false);
        snapshots_load_the_same(&path, false);
        // The file on disk is always what was applied in memory.
        let mut reader = SessionStore::open(&path, OpenOptions { read_only: true, ..Default::default() }).unwrap();
        assert_eq!(reader.load_all().unwrap(), model.messages);
        let loaded = reader.loader().unwrap().context_messages().unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let was_tail_first = loaded.tail_first();
        let tail_first =
            History::from_messages_at(loaded.messages, loaded.base.unwrap_or_default(), opts(), &|| false).unwrap();
        // A store's own load counts messages as it parses them, updates and prunes applied.
        let counted = reader.loader().unwrap().history(Some(opts()), &|| false).unwrap();
        assert_eq!(counts_of(&counted), counts_of(&tail_first));
        // The writer's own counter is the one that finds its counts recorded (and keeps them
        // through prunes); every counter is checked at the end.
        let own: Vec<Value> = writer_session(writer).into_iter().collect();
        counts_as_from_scratch(&path, false, &own);
        let full = History::from_messages(model.messages.clone(), opts(), &|| false).unwrap();
        let shown: Vec<Message> = tail_first.visible().into_iter().map(|e| e.msg.clone()).collect();
        assert_eq!(shown, full_view(model.messages.clone()));
        assert_eq!(tail_first.usage(), full.usage());
        assert_eq!(tail_first.select(), full.select());
        // Whenever a compaction is in force, the load read only part of the file.
        if full.view().cut.is_some() {
            assert!(was_tail_first);
        }
        // The log gives the same: every message in full, and tail-first what the file shows.
        assert_eq!(log.load_all(), model.messages);
        log.counts_as_from_scratch(&own);
        let from_log = log.load_tail();
        assert_eq!(from_log.is_some(), was_tail_first);
        if let Some(l) = from_log {
            let h = History::from_messages_at(l.messages, l.base.unwrap_or_default(), opts(), &|| false).unwrap();
            let ids = |h: &History| h.visible().into_iter().map(|e| e.msg.clone()).collect::<Vec<_>>();
            assert_eq!(ids(&h), shown);
            assert_eq!(h.usage(), full.usage());
        }
        // A session loaded that way goes on like the whole one: compacted again, keeping the
        // second half of its context and the first message as head.
        let (mut a, mut b) = (tail_first, full);
        if !shown.is_empty() {
            let tail = shown[shown.len() / 2].id.clone();
            let head = shown[shown.len().min(2) - 1].id.clone();
            let r = request(&format!("next-r{seq}"), Some(&tail), Some(&head));
            let s = summary(&format!("next-s{seq}"), &r.id, true);
            for m in [r, s, user(&format!("next-u{seq}"), "after")] {
                a.append(m.clone()).unwrap();
                b.append(m).unwrap();
            }
            let ids = |h: &History| h.visible().into_iter().map(|e| e.msg.id.clone()).collect::<Vec<_>>();
            assert_eq!(ids(&a), ids(&b));
            assert_eq!(a.usage(), b.usage());
        }
    }
    store.close().unwrap();
    counts_as_from_scratch(&path, false, &counting());
    log.counts_as_from_scratch(&counting());
    (dir, path)
}

proptest! {
    // PROPTEST_CASES=N runs more.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn tail_first_loads_show_what_full_loads_show(ops in prop::collection::vec(op(), 1..40), writer in 0usize..6) {
        run(&ops, writer);
    }

    #[test]
    fn corrupted_counts_never_change_what_a_load_counts(
        ops in prop::collection::vec(op(), 1..25),
        writer in 0usize..4,
        edits in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6),
    ) {
        let (_dir, path) = run(&ops, writer);
        corrupt_snapshot(&path, &edits);
        snapshots_load_the_same(&path, false);
        corrupt(&path, &edits);
        counts_as_from_scratch(&path, true, &counting());
        full_loads_index_as_a_scan_does(&path, true);
        parsing_from_the_end_loads_the_same(&path, true);
        snapshots_load_the_same(&path, true);
    }
}

#[test]
fn a_long_sequence_with_many_compactions() {
    let mut ops = Vec::new();
    for i in 0..120usize {
        ops.push(match i % 11 {
            0 | 3 | 6 => Op::User(50 + i),
            1 | 4 | 7 => Op::Tools(2, 300 + i * 7),
            2 => Op::Edit(i % 5),
            5 => Op::Prune(2),
            8 => Op::Compact {
                tail_back: 1 + i % 9,
                hidden_back: if i % 2 == 0 { Some(i % 13) } else { None },
                finished: i % 7 != 0,
            },
            9 => Op::FlipSummary,
            _ => Op::Reopen(i % 2 == 0),
        });
    }
    for writer in [0, 1, 4] {
        run(&ops, writer);
    }
}
