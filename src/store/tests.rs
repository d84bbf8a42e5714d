//! The store as a whole: round trips, torn and corrupt lines, locking, compaction entries and
//! tail-first loads that read only what the context needs.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::format::{parse_compaction, CompactionRecord, PruneRecord};
use super::{lock_path, Durability, OpenOptions, SessionStore};
use crate::error::Code;
use crate::message::{parse_message, Message};
use crate::policy::{ModelInfo, ModelLimit};
use crate::session::{History, SessionOptions};

pub(super) fn opts() -> SessionOptions {
    SessionOptions {
        model: ModelInfo { limit: ModelLimit { context: 100_000, ..Default::default() }, ..Default::default() },
        tokenizer: Some("estimate".into()),
        ..Default::default()
    }
}

fn session_json() -> Value {
    json!({"model": {"limit": {"context": 100000}}, "tokenizer": "estimate"})
}

pub(super) fn msg(v: Value) -> Message {
    parse_message(v).unwrap()
}

pub(super) fn user(id: &str, text: &str) -> Message {
    msg(json!({"id": id, "role": "user", "parts": [{"type": "text", "id": format!("{id}-t"), "text": text}]}))
}

fn assistant(id: &str, text: &str) -> Message {
    msg(
        json!({"id": id, "role": "assistant", "finish": "stop", "parts": [{"type": "text", "id": format!("{id}-t"), "text": text}]}),
    )
}

fn tool_answer(id: &str, output: &str) -> Message {
    msg(json!({"id": id, "role": "assistant", "finish": "tool-calls", "parts": [
        {"type": "tool", "id": format!("{id}-tool"), "callID": format!("{id}-call"), "tool": "bash",
         "state": {"status": "completed", "input": {"cmd": "ls"}, "output": output}}]}))
}

pub(super) fn request(id: &str, tail: Option<&str>, hidden: Option<&str>) -> Message {
    let mut part = json!({"type": "compaction", "id": format!("{id}-c"), "auto": true});
    if let Some(t) = tail {
        part["tailStartID"] = json!(t);
    }
    if let Some(h) = hidden {
        part["hiddenFromID"] = json!(h);
    }
    msg(json!({"id": id, "role": "user", "parts": [part]}))
}

pub(super) fn summary(id: &str, parent: &str, finished: bool) -> Message {
    let mut m = json!({"id": id, "role": "assistant", "parentID": parent, "summary": true,
        "parts": [{"type": "text", "id": format!("{id}-t"), "text": format!("summary of {parent}")}]});
    if finished {
        m["finish"] = json!("stop");
    }
    msg(m)
}

fn writer(path: &Path) -> SessionStore {
    SessionStore::open(path, OpenOptions { session: Some(session_json()), ..Default::default() }).unwrap()
}

fn reader(path: &Path) -> SessionStore {
    SessionStore::open(path, OpenOptions { read_only: true, ..Default::default() }).unwrap()
}

fn recovering(path: &Path) -> SessionStore {
    SessionStore::open(path, OpenOptions { read_only: true, recover: true, ..Default::default() }).unwrap()
}

fn visible(h: &History) -> Vec<Message> {
    h.visible().into_iter().map(|e| e.msg.clone()).collect()
}

/// What a full load shows: the reference every tail-first load must match.
pub(super) fn full_view(messages: Vec<Message>) -> Vec<Message> {
    visible(&History::from_messages(messages, opts(), &|| false).unwrap())
}

fn ids(ms: &[Message]) -> Vec<&str> {
    ms.iter().map(|m| m.id.as_str()).collect()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(String::from).collect()
}

fn compaction_entries(path: &Path) -> Vec<CompactionRecord> {
    lines(path)
        .iter()
        .filter(|l| l.starts_with("{\"type\":\"compaction\""))
        .map(|l| parse_compaction(l.as_bytes()).unwrap())
        .collect()
}

fn append_raw(path: &Path, bytes: &[u8]) {
    std::fs::OpenOptions::new().append(true).open(path).unwrap().write_all(bytes).unwrap();
}

fn tmp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    (dir, path)
}

/// Checks that a tail-first load of `path` shows what a full load shows, and whether it read only
/// part of the file.
fn check_equivalent(path: &Path) -> bool {
    let mut store = reader(path);
    let all = store.load_all().unwrap();
    let loaded = store.loader().unwrap().context_messages().unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let tail_first = loaded.tail_first();
    let h = History::from_messages_at(loaded.messages, loaded.base.unwrap_or_default(), opts(), &|| false).unwrap();
    let full = History::from_messages(all.clone(), opts(), &|| false).unwrap();
    assert_eq!(ids(&visible(&h)), ids(&visible(&full)));
    assert_eq!(visible(&h), visible(&full));
    assert_eq!(h.usage(), full.usage());
    assert_eq!(visible(&store.load(None, &|| false).unwrap()), full_view(all));
    tail_first
}

#[test]
fn messages_round_trip_with_updates_and_prunes() {
    let (_d, path) = tmp();
    let mut s = writer(&path);
    let id = s.id().unwrap().to_string();
    assert_eq!(id.len(), 36);
    s.append(&user("u1", "hello")).unwrap();
    s.append(&tool_answer("a1", "lots of output")).unwrap();
    let mut a1 = tool_answer("a1", "even more output");
    a1.finish = Some("stop".into());
    s.update(&a1).unwrap();
    s.prune(&PruneRecord {
        compacted_at: 42.0,
        message_ids: vec!["a1".into()],
        part_ids: vec!["a1-tool".into()],
        ..Default::default()
    })
    .unwrap();
    s.append(&assistant("a2", "done")).unwrap();
    let all = s.load_all().unwrap();
    assert_eq!(ids(&all), ["u1", "a1", "a2"]);
    assert_eq!(all[1].finish.as_deref(), Some("stop"));
    let crate::message::Part::Tool(t) = &all[1].parts[0] else { panic!() };
    assert!(t.is_pruned());
    assert_eq!(visible(&s.load(None, &|| false).unwrap()), all);
    s.close().unwrap();
    let mut r = reader(&path);
    assert_eq!(r.id(), Some(id.as_str()));
    assert_eq!(r.load_all().unwrap(), all);
    assert!(r.warnings().is_empty());
    // The header holds the session options: a load without options uses them.
    let h = r.load(None, &|| false).unwrap();
    assert_eq!(h.options(), &opts());
    let l = lines(&path);
    assert_eq!(l.len(), 6);
    assert!(l[0].starts_with("{\"type\":\"header\",\"version\":1,"), "{}", l[0]);
    assert!(l[3].starts_with("{\"type\":\"update\""));
    assert!(l[4].starts_with("{\"type\":\"prune\""));
}

#[test]
fn rejected_writes_write_nothing() {
    let (_d, path) = tmp();
    let mut s = writer(&path);
    s.append(&user("u1", "hello")).unwrap();
    let before = std::fs::read(&path).unwrap();
    assert_eq!(s.append(&user("u1", "again")).unwrap_err().code, Code::DuplicateId);
    assert_eq!(s.update(&user("nope", "x")).unwrap_err().code, Code::NotFound);
    let bad_prune =
        PruneRecord { compacted_at: 1.0, message_ids: vec!["u1".into()], part_ids: vec![], ..Default::default() };
    assert_eq!(s.prune(&bad_prune).unwrap_err().code, Code::InvalidArgument);
    let unknown = PruneRecord {
        compacted_at: 1.0,
        message_ids: vec!["zz".into()],
        part_ids: vec!["p".into()],
        ..Default::default()
    };
    assert_eq!(s.prune(&unknown).unwrap_err().code, Code::NotFound);
    s.prune(&PruneRecord::default()).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Duplicates are caught after a reopen too (the index is rebuilt from the file).
    s.close().unwrap();
    let mut s = writer(&path);
    assert_eq!(s.append(&user("u1", "again")).unwrap_err().code, Code::DuplicateId);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_writer_creates_the_folders_of_a_new_file() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("a/b/s.jsonl");
    let e = SessionStore::open(&path, OpenOptions { create: false, ..Default::default() }).err().unwrap();
    assert_eq!(e.code, Code::SessionNotFound);
    assert!(!d.path().join("a").exists());
    let mut s = writer(&path);
    s.append(&user("u1", "hi")).unwrap();
    s.close().unwrap();
    assert!(path.exists() && lock_path(&path).exists());
    // A folder that cannot be made is CF_IO naming it.
    std::fs::write(d.path().join("file"), "").unwrap();
    let e = SessionStore::open(d.path().join("file/s.jsonl"), OpenOptions::default()).err().unwrap();
    assert_eq!(e.code, Code::Io);
    assert!(e.message.contains("cannot create the folder") && e.message.contains("file"), "{}", e.message);
}

#[test]
fn opening_errors_have_their_codes() {
    let (_d, path) = tmp();
    let missing = |o: OpenOptions| SessionStore::open(&path, o).err().unwrap().code;
    assert_eq!(missing(OpenOptions { create: false, ..Default::default() }), Code::SessionNotFound);
    assert_eq!(missing(OpenOptions { read_only: true, ..Default::default() }), Code::SessionNotFound);
    assert!(!path.exists());
    assert!(!lock_path(&path).exists());
    std::fs::write(&path, "{\"role\":\"user\"}\n").unwrap();
    let e = SessionStore::open(&path, OpenOptions::default()).err().unwrap();
    assert_eq!(e.code, Code::CorruptSession);
    assert!(e.message.contains("line 1"), "{}", e.message);
    // Nothing was written to a file that is not a session.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"role\":\"user\"}\n");
}

#[test]
fn one_writer_at_a_time_and_readers_never_wait() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    w.append(&user("u1", "x")).unwrap();
    let e = SessionStore::open(&path, OpenOptions::default()).err().unwrap();
    assert_eq!(e.code, Code::SessionLocked);
    let mut r = reader(&path);
    assert_eq!(ids(&r.load_all().unwrap()), ["u1"]);
    let mut r = r;
    assert_eq!(r.append(&user("u2", "x")).unwrap_err().code, Code::ReadOnly);
    w.close().unwrap();
    w.close().unwrap();
    assert_eq!(w.append(&user("u2", "x")).unwrap_err().code, Code::StoreClosed);
    assert_eq!(w.load_all().unwrap_err().code, Code::StoreClosed);
    let mut w2 = writer(&path);
    w2.append(&user("u2", "x")).unwrap();
    drop(w2);
    let _w3 = writer(&path);
}

#[test]
fn a_torn_last_line_is_ignored_reported_and_cut_by_the_next_append() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    w.append(&user("u1", "x")).unwrap();
    w.append(&user("u2", "y")).unwrap();
    w.close().unwrap();
    let good = std::fs::read(&path).unwrap();
    append_raw(&path, b"{\"type\":\"message\",\"message\":{\"id\":\"u3\",\"ro");
    let mut r = reader(&path);
    assert_eq!(ids(&r.load_all().unwrap()), ["u1", "u2"]);
    let warnings = r.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].line, 4);
    assert_eq!(warnings[0].offset, good.len() as u64);
    assert!(warnings[0].message.contains("incomplete last line"));
    // A writer cuts it before its first append; the file is valid JSONL again.
    let mut w = writer(&path);
    assert_eq!(w.warnings().len(), 1);
    w.append(&user("u3", "z")).unwrap();
    w.close().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with('\n'));
    for l in text.lines() {
        serde_json::from_str::<Value>(l).unwrap();
    }
    let mut r = reader(&path);
    assert_eq!(ids(&r.load_all().unwrap()), ["u1", "u2", "u3"]);
    assert!(r.warnings().is_empty());
}

#[test]
fn a_torn_header_is_rewritten_by_a_writer() {
    let (_d, path) = tmp();
    std::fs::write(&path, b"{\"type\":\"header\",\"vers").unwrap();
    let mut r = reader(&path);
    assert!(r.load_all().unwrap().is_empty());
    assert_eq!(r.warnings()[0].line, 1);
    let mut w = writer(&path);
    w.append(&user("u1", "x")).unwrap();
    assert_eq!(ids(&reader(&path).load_all().unwrap()), ["u1"]);
}

#[test]
fn a_corrupt_middle_line_names_its_line_and_recover_skips_it() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    w.append(&user("u1", "x")).unwrap();
    w.close().unwrap();
    let offset = std::fs::metadata(&path).unwrap().len();
    append_raw(&path, b"{\"type\":\"message\",\"message\":{\"id\":\"bad\"}}\n");
    append_raw(&path, b"not json at all\n");
    let mut w = writer(&path);
    w.append(&user("u2", "y")).unwrap();
    w.close().unwrap();
    let e = reader(&path).load_all().unwrap_err();
    assert_eq!(e.code, Code::CorruptSession);
    assert!(e.message.contains(&format!("line 3 (byte {offset})")), "{}", e.message);
    assert!(e.message.contains("missing field `role`"), "{}", e.message);
    assert_eq!(reader(&path).load(None, &|| false).unwrap_err().code, Code::CorruptSession);
    let mut r = recovering(&path);
    assert_eq!(ids(&r.load_all().unwrap()), ["u1", "u2"]);
    let w = r.warnings();
    assert_eq!(w.iter().map(|w| w.line).collect::<Vec<_>>(), [3, 4]);
    assert!(w[1].message.contains("not a JSON entry"), "{:?}", w[1]);
    // The writer's index saw the same lines.
    let wr = writer(&path);
    let mut wr = wr;
    wr.append(&user("u3", "z")).unwrap();
    assert_eq!(wr.warnings().len(), 2);
}

#[test]
fn unknown_entry_types_are_skipped_with_a_warning() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    w.append(&user("u1", "x")).unwrap();
    w.close().unwrap();
    append_raw(&path, b"{\"type\":\"label\",\"target\":\"u1\"}\n");
    let mut r = reader(&path);
    assert_eq!(ids(&r.load_all().unwrap()), ["u1"]);
    assert_eq!(r.warnings()[0].line, 3);
}

#[test]
fn a_completed_summary_writes_a_compaction_entry_with_offsets() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    for i in 0..6 {
        w.append(&user(&format!("u{i}"), &"old words ".repeat(50))).unwrap();
    }
    w.append(&request("r1", Some("u4"), None)).unwrap();
    // An unfinished summary (streaming) is not a compaction yet.
    w.append(&summary("s1", "r1", false)).unwrap();
    assert!(compaction_entries(&path).is_empty());
    w.update(&summary("s1", "r1", true)).unwrap();
    w.append(&user("u6", "new")).unwrap();
    let entries = compaction_entries(&path);
    assert_eq!(entries.len(), 1);
    let c = &entries[0];
    let text = std::fs::read_to_string(&path).unwrap();
    // Shown after the summary: r1, s1, then u4, u5 — in the file one run from u4 to s1.
    assert_eq!(c.runs.len(), 1);
    let run = &c.runs[0];
    assert_eq!((run.id.as_str(), run.line, run.count), ("u4", 6, 4));
    assert!(text[run.offset as usize..].starts_with("{\"type\":\"message\",\"message\":{\"id\":\"u4\""));
    let req = c.request.as_ref().unwrap();
    assert!(text[req.offset as usize..].starts_with("{\"type\":\"message\",\"message\":{\"id\":\"r1\""));
    assert_eq!(c.summary.as_ref().unwrap().id, "s1");
    assert_eq!(run.end, text.lines().take(9).map(|l| l.len() as u64 + 1).sum::<u64>());
    assert_eq!(c.line, 11);
    assert_eq!(c.order, vec![[2, 4], [0, 2]]);
    assert_eq!(c.answered, vec![2]);
    assert!(c.patches.is_empty());
    // The summary fails after all: the entry says there is no compaction any more.
    w.update(&summary("s1", "r1", false)).unwrap();
    let entries = compaction_entries(&path);
    assert_eq!(entries.len(), 2);
    assert!(entries[1].request.is_none());
    assert!(!check_equivalent(&path));
    w.update(&summary("s1", "r1", true)).unwrap();
    assert_eq!(compaction_entries(&path).len(), 3);
    assert!(check_equivalent(&path));
    // Updating something else writes no entry.
    w.update(&user("u6", "newer")).unwrap();
    assert_eq!(compaction_entries(&path).len(), 3);
    assert!(check_equivalent(&path));
}

/// A long session, compacted twice, the second time keeping a head and with the head changed
/// between head and tail; loads read only part of the file and show what a full load shows.
#[test]
fn tail_first_loads_match_full_loads_with_heads_patches_and_updates() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    w.append(&user("sys", "the first message, kept as head")).unwrap();
    w.append(&tool_answer("h1", "head tool output")).unwrap();
    for i in 0..40 {
        w.append(&user(&format!("u{i}"), &"filler ".repeat(200))).unwrap();
        w.append(&tool_answer(&format!("t{i}"), &"output ".repeat(300))).unwrap();
    }
    // Keeps [sys, h1] as head and the tail from u30.
    w.append(&request("r1", Some("u30"), Some("u0"))).unwrap();
    w.append(&summary("s1", "r1", true)).unwrap();
    assert!(check_equivalent(&path));
    // Between the head and the next tail: an update and a prune of head messages.
    let mut h1 = tool_answer("h1", "head tool output, edited");
    h1.finish = Some("stop".into());
    w.update(&h1).unwrap();
    w.prune(&PruneRecord {
        compacted_at: 9.0,
        message_ids: vec!["h1".into(), "t31".into()],
        part_ids: vec!["h1-tool".into(), "t31-tool".into()],
        ..Default::default()
    })
    .unwrap();
    for i in 40..50 {
        w.append(&user(&format!("u{i}"), &"more ".repeat(200))).unwrap();
        w.append(&assistant(&format!("a{i}"), "ok")).unwrap();
    }
    // Partial again: keep what came before u30 in the context (sys, h1, r1, s1), the tail from u45.
    w.append(&request("r2", Some("u45"), Some("u30"))).unwrap();
    w.append(&summary("s2", "r2", true)).unwrap();
    let last = compaction_entries(&path).pop().unwrap();
    assert_eq!(last.runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["sys", "r1", "u45"]);
    assert_eq!(last.patches.len(), 2, "{last:?}");
    assert!(check_equivalent(&path));
    // Updates after the compaction: of a head message, of a tail message, of a hidden one.
    w.update(&user("sys", "the first message, edited after")).unwrap();
    w.update(&user("u46", "tail edited")).unwrap();
    w.update(&user("u3", "hidden edited")).unwrap();
    w.append(&assistant("a-end", "end")).unwrap();
    assert!(check_equivalent(&path));
    let mut r = reader(&path);
    let loaded = r.loader().unwrap().context_messages().unwrap();
    let all = r.load_all().unwrap();
    assert!(loaded.messages.len() < all.len() / 3);
    let view = full_view(all);
    assert_eq!(ids(&view)[..6], ["sys", "h1", "r1", "s1", "r2", "s2"]);
    assert_eq!(view[0].id, "sys");
    assert_eq!(view[0].parts, user("sys", "the first message, edited after").parts);
    assert_eq!(view[1], h1_pruned());
    fn h1_pruned() -> Message {
        let mut h1 = tool_answer("h1", "head tool output, edited");
        h1.finish = Some("stop".into());
        if let crate::message::Part::Tool(t) = &mut h1.parts[0] {
            if let crate::message::ToolState::Completed { compacted_at, .. } = &mut t.state {
                *compacted_at = Some(9.0);
            }
        }
        h1
    }
}

/// The part of the file a compaction hid is never read: a corrupt line there does not stop a
/// load (a full load still reports it).
#[test]
fn tail_first_loads_do_not_read_the_hidden_part() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    w.append(&user("u0", "start")).unwrap();
    w.close().unwrap();
    append_raw(&path, b"{\"type\":\"message\",\"message\":{\"id\":\"broken\"\n");
    let mut w = SessionStore::open(&path, OpenOptions { recover: true, ..Default::default() }).unwrap();
    for i in 1..20 {
        w.append(&user(&format!("u{i}"), "words")).unwrap();
    }
    w.append(&request("r", Some("u15"), None)).unwrap();
    w.append(&summary("s", "r", true)).unwrap();
    w.append(&user("u20", "after")).unwrap();
    w.close().unwrap();
    let mut r = reader(&path);
    let h = r.load(Some(opts()), &|| false).unwrap();
    assert_eq!(ids(&visible(&h)), ["r", "s", "u15", "u16", "u17", "u18", "u19", "u20"]);
    assert!(r.warnings().is_empty());
    let e = r.load_all().unwrap_err();
    assert_eq!(e.code, Code::CorruptSession);
    assert!(e.message.contains("line 3"), "{}", e.message);
}

/// Ten user messages, a compaction keeping the last five (completed), and a second request.
fn compacted_then_asked_again(path: &Path) {
    let mut w = writer(path);
    for i in 0..10 {
        w.append(&user(&format!("u{i}"), "words")).unwrap();
    }
    w.append(&request("r1", Some("u5"), None)).unwrap();
    w.append(&summary("s1", "r1", true)).unwrap();
    w.append(&request("r2", Some("u8"), None)).unwrap();
    w.close().unwrap();
}

/// A crash right after a summary line costs nothing (the load applies it on top of the recorded
/// view); a crash between a marked update and the compaction entry that follows it leaves the
/// entry behind: loads notice, read everything, and the next writer writes a fresh entry.
#[test]
fn a_stale_compaction_entry_falls_back_to_a_full_load_and_is_repaired() {
    let (_d, path) = tmp();
    compacted_then_asked_again(&path);
    // The second summary reaches the file; no compaction entry follows it.
    append_raw(&path, &super::format::encode_message(&summary("s2", "r2", true), None));
    assert!(check_equivalent(&path));
    let mut r = reader(&path);
    assert_eq!(ids(&visible(&r.load(None, &|| false).unwrap()))[..2], ["r2", "s2"]);
    assert!(r.warnings().is_empty());
    // Now the summary is marked failed, and the writer dies before the entry.
    append_raw(&path, &super::format::encode_update(&summary("s2", "r2", false), true, None));
    let mut r = reader(&path);
    let all = r.load_all().unwrap();
    let h = r.load(None, &|| false).unwrap();
    assert_eq!(visible(&h), full_view(all));
    assert_eq!(visible(&h)[0].id, "r1");
    assert!(r.warnings()[0].message.contains("does not match"), "{:?}", r.warnings());
    let mut w = writer(&path);
    w.flush().unwrap();
    w.append(&user("u-next", "x")).unwrap();
    assert_eq!(compaction_entries(&path).last().unwrap().request.as_ref().unwrap().id, "r1");
    assert!(check_equivalent(&path));
}

/// A writer whose first load reads every line takes its index from that load and goes on as one
/// that read the file itself: known ids refused, a stale compaction entry repaired. After a
/// tail-first load it reads the file itself.
#[test]
fn a_writer_takes_its_index_from_a_load_that_read_every_line() {
    let (_d, path) = tmp();
    compacted_then_asked_again(&path);
    // A second summary, then its update marked failed; the writer dies before the entry.
    append_raw(&path, &super::format::encode_message(&summary("s2", "r2", true), None));
    append_raw(&path, &super::format::encode_update(&summary("s2", "r2", false), true, None));
    let mut w = writer(&path);
    let h = w.load(None, &|| false).unwrap();
    assert_eq!(visible(&h)[0].id, "r1");
    assert!(w.index_from_load());
    assert_eq!(w.append(&user("u2", "again")).unwrap_err().code, Code::DuplicateId);
    w.append(&user("u-next", "x")).unwrap();
    assert_eq!(compaction_entries(&path).last().unwrap().request.as_ref().unwrap().id, "r1");
    assert!(check_equivalent(&path));
    w.close().unwrap();
    let mut w = writer(&path);
    w.load(None, &|| false).unwrap();
    assert!(!w.index_from_load());
    w.append(&user("u-last", "x")).unwrap();
    assert!(check_equivalent(&path));
}

#[test]
fn batch_durability_and_export() {
    let (dir, path) = tmp();
    let mut w = SessionStore::open(
        &path,
        OpenOptions { durability: Durability::Batch { max_entries: 3, max_ms: 10_000 }, ..Default::default() },
    )
    .unwrap();
    for i in 0..10 {
        w.append(&user(&format!("u{i}"), "x")).unwrap();
    }
    w.flush().unwrap();
    // Entries reach the file at once, whatever the policy (a process crash loses nothing).
    assert_eq!(reader(&path).load_all().unwrap().len(), 10);
    let out = dir.path().join("export.jsonl");
    assert_eq!(w.export(&out).unwrap(), 10);
    let exported: Vec<Message> =
        std::fs::read_to_string(&out).unwrap().lines().map(|l| msg(serde_json::from_str(l).unwrap())).collect();
    assert_eq!(exported, w.load_all().unwrap());
    assert_eq!(w.export(&path).unwrap_err().code, Code::InvalidArgument);
    // Without options anywhere, a load says what is missing.
    w.close().unwrap();
    let e = reader(&path).load(None, &|| false).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("no session options"), "{}", e.message);
    assert!(reader(&path).load(Some(opts()), &|| false).is_ok());
    assert_eq!(reader(&path).load(Some(opts()), &|| true).unwrap_err().code, Code::Aborted);
}

#[test]
fn messages_larger_than_the_scan_blocks_load() {
    let (_d, path) = tmp();
    let mut w = writer(&path);
    let big = "x".repeat(200_000);
    for i in 0..6 {
        w.append(&tool_answer(&format!("t{i}"), &big)).unwrap();
    }
    w.append(&request("r", Some("t4"), None)).unwrap();
    w.append(&summary("s", "r", true)).unwrap();
    for i in 6..9 {
        w.append(&tool_answer(&format!("t{i}"), &big)).unwrap();
    }
    assert!(check_equivalent(&path));
    append_raw(&path, big.as_bytes());
    let mut r = reader(&path);
    let h = r.load(None, &|| false).unwrap();
    assert_eq!(ids(&visible(&h)), ["r", "s", "t4", "t5", "t6", "t7", "t8"]);
    assert_eq!(r.warnings().len(), 1);
    assert_eq!(r.warnings()[0].line, 14);
}

#[test]
fn open_options_parse_with_defaults_and_name_bad_fields() {
    use super::parse_open_options;
    let o = parse_open_options(None).unwrap();
    assert_eq!(o, OpenOptions::default());
    let o = parse_open_options(Some(
        json!({"readOnly": true, "durability": "batch", "batchEntries": 5, "recover": true, "session": session_json()}),
    ))
    .unwrap();
    assert!(o.read_only && o.recover);
    assert_eq!(o.durability, Durability::Batch { max_entries: 5, max_ms: 200 });
    let e = parse_open_options(Some(json!({"readonly": true}))).unwrap_err();
    assert_eq!(e.code, Code::InvalidArgument);
    assert!(e.message.contains("readonly"), "{}", e.message);
    let e = parse_open_options(Some(json!({"durability": "always"}))).unwrap_err();
    assert!(e.message.contains("options.durability"), "{}", e.message);
    let e = parse_open_options(Some(json!({"session": {"model": {}}}))).unwrap_err();
    assert!(e.message.starts_with("options.session.model"), "{}", e.message);
}

#[test]
fn fractional_times_read_back_exactly() {
    // Shortest decimal forms that a parser rounding in two steps reads one unit off (the
    // session clock advances by fractions of a millisecond).
    let (_d, path) = tmp();
    let mut s = writer(&path);
    let at = 1_795_322_118_900.294_7_f64;
    let mut u = user("u1", "hello");
    u.time = Some(crate::message::Time { created: at, completed: None });
    s.append(&u).unwrap();
    s.append(&tool_answer("a1", "output")).unwrap();
    s.prune(&PruneRecord {
        compacted_at: at,
        message_ids: vec!["a1".into()],
        part_ids: vec!["a1-tool".into()],
        ..Default::default()
    })
    .unwrap();
    let all = s.load_all().unwrap();
    assert_eq!(all[0].time.as_ref().map(|t| t.created), Some(at));
    let crate::message::Part::Tool(t) = &all[1].parts[0] else { panic!() };
    assert!(matches!(t.state, crate::message::ToolState::Completed { compacted_at: Some(c), .. } if c == at));
}

#[test]
fn pins_round_trip_through_entries_and_compaction_requests() {
    let (_d, path) = tmp();
    let mut s = writer(&path);
    s.append(&user("u1", "hello")).unwrap();
    let pin =
        |id: &str, text: &str| crate::session::Pin { id: id.into(), message_id: None, text: text.into(), note: None };
    s.pins(&[pin("p1", "one"), pin("p2", "two")]).unwrap();
    s.pins(&[pin("p2", "two")]).unwrap();
    assert_eq!(s.load(None, &|| false).unwrap().pins(), [pin("p2", "two")]);
    // A compaction request records the pins as they stood; later `pins` lines replace them.
    let mut req = request("r1", None, None);
    if let crate::message::Part::Compaction(c) = &mut req.parts[0] {
        c.extra.insert("pins".into(), json!([pin("p3", "three")]));
    }
    s.append(&req).unwrap();
    s.append(&summary("s1", "r1", true)).unwrap();
    s.append(&user("u2", "more")).unwrap();
    let h = s.load(None, &|| false).unwrap();
    assert_eq!(h.pins(), [pin("p3", "three")]);
    s.pins(&[]).unwrap();
    assert!(s.load(None, &|| false).unwrap().pins().is_empty());
    s.close().unwrap();
    assert!(reader(&path).load(None, &|| false).unwrap().pins().is_empty());
}

#[test]
fn prune_stubs_round_trip() {
    let (_d, path) = tmp();
    let mut s = writer(&path);
    s.append(&user("u1", "hello")).unwrap();
    s.append(&tool_answer("a1", "lots of output")).unwrap();
    let stub = "[Same output as the later bash call c9]".to_string();
    s.prune(&PruneRecord {
        compacted_at: 5.0,
        message_ids: vec!["a1".into()],
        part_ids: vec!["a1-tool".into()],
        stubs: vec![Some(stub.clone())],
    })
    .unwrap();
    let bad = PruneRecord {
        compacted_at: 5.0,
        message_ids: vec!["a1".into()],
        part_ids: vec!["a1-tool".into()],
        stubs: vec![None, None],
    };
    assert_eq!(s.prune(&bad).unwrap_err().code, crate::error::Code::InvalidArgument);
    s.close().unwrap();
    let h = reader(&path).load(None, &|| false).unwrap();
    let crate::message::Part::Tool(t) = &h.get("a1").unwrap().msg.parts[0] else { panic!() };
    assert_eq!(t.state.cleared_text(), Some(stub.as_str()));
}
