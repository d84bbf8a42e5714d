//! A snapshot: the replay of a session file that was never compacted, kept beside it in binary
//! (`<file>.snapshot`), so that loading the file again copies its texts rather than parsing them
//! out of JSON, where a `\n` every few dozen bytes makes unescaping most of the work.
//!
//! A writer's first load of a file of `min_bytes()` or more without a compaction entry writes one,
//! when there is none or when it covers less than four fifths of the file. The file stays the
//! truth: a snapshot is used only when this version wrote it, for the load's counter, over bytes
//! of the file whose crc32 it records and which still match, and its own checksums match; the
//! lines appended since are parsed and applied after it. Those bytes are read again at each load,
//! unless the file is the very one the snapshot checked (`Stamp`). When any of that does not hold,
//! or a later line is a compaction entry or does not read cleanly, the load reads the file as if
//! there were no snapshot. Once the file has a compaction entry, a writer's load removes it.
//!
//! ```text
//! MAGIC | head length (u64 LE) | head crc32 (u32 LE) | head (msgpack) | blocks
//! block: texts (UTF-8) | body (msgpack: the writer's index, or messages with their counts)
//! ```

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::file_index::{Noted, Scanned};
use super::format::{self, Kind, Loc};
use super::lines::{read_at, read_region, split, Layout};
use super::load::{noted, How, Loaded, Whole};
use super::replay::{decode_all, Replay};
use crate::message::{check_message, Message, Snapshot};
use crate::session::Pin;
use crate::tokens::{Counter, MessageCount};

const MAGIC: &[u8; 8] = b"CFSNAP1\n";
/// Magic, head length, head crc.
const START: usize = 20;

/// Files smaller than this load fast enough from their JSON.
#[cfg(not(test))]
pub fn min_bytes() -> u64 {
    8 << 20
}

#[cfg(test)]
thread_local! {
    /// Tests make it small.
    pub static MIN_BYTES: std::cell::Cell<u64> = const { std::cell::Cell::new(8 << 20) };
}

#[cfg(test)]
pub fn min_bytes() -> u64 {
    MIN_BYTES.get()
}

/// Text bytes per block of messages: a thread reads and decodes a block at a time.
const BLOCK_TEXT: usize = 4 << 20;
/// Bytes of the session file a thread checks at a time.
const PIECE: u64 = 4 << 20;

#[derive(Serialize, Deserialize)]
struct Head {
    /// contextfold's version: another version's snapshot is not read.
    writer: String,
    /// The counter its counts were made with (`counter_key`).
    counter: Option<String>,
    /// The lines replayed: `[0, covered)` of the file, and their crc32.
    covered: u64,
    crc: u32,
    /// The file as the OS described it after its crc32 was taken, when it was all covered.
    stamp: Option<Stamp>,
    /// The number of the line after them.
    next: u64,
    /// The line that added each message.
    lines: Vec<u64>,
    pins: Option<Vec<Pin>>,
    /// The writer's index, then the messages.
    blocks: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Block {
    texts: u64,
    body: u64,
    /// crc32 of texts and body.
    crc: u32,
}

/// A file as `stat` describes it. While all of these stay the same, the file has not been written
/// to: any write sets its change time, which no program can set back. A stamp is recorded only
/// when the file's last change is `SETTLED` old, so that a write in the same tick of the clock
/// as the snapshot (file times move in steps of a few ms) is not mistaken for none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

impl Stamp {
    #[cfg(unix)]
    fn of(m: &fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let modified = (m.mtime(), m.mtime_nsec());
        let changed = (m.ctime(), m.ctime_nsec());
        Some(Stamp { dev: m.dev(), ino: m.ino(), len: m.len(), modified, changed })
    }

    /// Windows' standard library does not give a file's identity and change time.
    #[cfg(not(unix))]
    fn of(_: &fs::Metadata) -> Option<Stamp> {
        None
    }

    /// The stamp of a file last changed at least `SETTLED` before `now` (seconds since the epoch).
    fn settled(self, now: i64) -> Option<Stamp> {
        let last = self.modified.0.max(self.changed.0);
        (now - last > SETTLED.as_secs() as i64).then_some(self)
    }
}

/// Seconds since the epoch.
fn now() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| d.as_secs() as i64)
}

/// Messages and their counts, as a block holds them.
type Counted = Vec<(Message, Option<MessageCount>)>;

pub fn path_of(session: &Path) -> PathBuf {
    let mut p = session.as_os_str().to_owned();
    p.push(".snapshot");
    PathBuf::from(p)
}

/// Removes the snapshot of `session`, if it has one.
pub fn remove(session: &Path) {
    let _ = fs::remove_file(path_of(session));
}

/// Counts are reused only with the counter, tokenizer version included, that made them.
fn counter_key(c: Option<&Counter>) -> Option<String> {
    c.map(|c| {
        let t = c.tokenizer;
        format!("{}@{} image {} output {:?}", t.name(), t.version(), c.image_tokens, c.output_max_chars)
    })
}

/// crc32 of `[start, end)` of `file`, read through a buffer that stays in the core's cache.
fn crc_of(file: &File, start: u64, end: u64) -> io::Result<crc32fast::Hasher> {
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; (end - start).min(256 << 10) as usize];
    let mut at = start;
    while at < end {
        let n = (end - at).min(buf.len() as u64) as usize;
        read_at(file, at, &mut buf[..n])?;
        h.update(&buf[..n]);
        at += n as u64;
    }
    Ok(h)
}

/// `len` bytes of `path` from `at`, into memory not cleared first (a block is megabytes).
fn read_fresh(path: &Path, at: u64, len: u64) -> Option<Vec<u8>> {
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(at)).ok()?;
    let mut buf = Vec::with_capacity(usize::try_from(len).ok()?);
    file.take(len).read_to_end(&mut buf).ok()?;
    (buf.len() as u64 == len).then_some(buf)
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// `value` as a block: its texts, and the rest.
fn block<T: Serialize>(value: &T) -> io::Result<(String, Vec<u8>)> {
    let (body, texts) = Snapshot::writing(|| rmp_serde::to_vec_named(value));
    Ok((texts, body.map_err(invalid)?))
}

/// Writes the snapshot of `loaded`: a writer's load of every line of the file, which has no
/// compaction entry, without a warning (its `scanned`), counted with `counter`. Written to a
/// temporary file renamed over the old one; not synced (a torn one fails its checksums).
pub fn save(session: &Path, loaded: &Loaded, counter: Option<&Counter>) -> io::Result<()> {
    let Some(scanned) = &loaded.scanned else {
        return Ok(());
    };
    let lines = scanned.index.message_lines();
    if lines.len() != loaded.messages.len() || loaded.counts.len() != loaded.messages.len() {
        return Ok(());
    }
    let file = File::open(session)?;
    let crc = crc_of(&file, 0, scanned.end)?.finalize();
    let stamp = Stamp::of(&file.metadata()?).filter(|s| s.len == scanned.end).and_then(|s| s.settled(now()));
    let mut blocks = vec![block(scanned)?];
    let (mut from, mut size) = (0, 0);
    for (i, m) in loaded.messages.iter().enumerate() {
        size += m.texts().map(|t| t.len()).sum::<usize>();
        if size >= BLOCK_TEXT || i + 1 == loaded.messages.len() {
            let pairs: Vec<_> = loaded.messages[from..=i].iter().zip(&loaded.counts[from..=i]).collect();
            blocks.push(block(&pairs)?);
            (from, size) = (i + 1, 0);
        }
    }
    let head = Head {
        writer: env!("CARGO_PKG_VERSION").to_string(),
        counter: counter_key(counter),
        covered: scanned.end,
        crc,
        stamp,
        next: scanned.lines + 1,
        lines,
        pins: loaded.pins.clone(),
        blocks: blocks
            .iter()
            .map(|(texts, body)| {
                let mut h = crc32fast::Hasher::new();
                h.update(texts.as_bytes());
                h.update(body);
                Block { texts: texts.len() as u64, body: body.len() as u64, crc: h.finalize() }
            })
            .collect(),
    };
    let head = rmp_serde::to_vec_named(&head).map_err(invalid)?;
    let path = path_of(session);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let write = || -> io::Result<()> {
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        w.write_all(MAGIC)?;
        w.write_all(&(head.len() as u64).to_le_bytes())?;
        w.write_all(&crc32fast::hash(&head).to_le_bytes())?;
        w.write_all(&head)?;
        for (texts, body) in &blocks {
            w.write_all(texts.as_bytes())?;
            w.write_all(body)?;
        }
        w.into_inner().map_err(|e| e.into_error())?;
        fs::rename(&tmp, &path)
    };
    write().inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// What a thread does: check a piece of the session file, or read a block.
enum Work {
    Check(u64, u64),
    Block(u64, usize),
}

enum Done {
    Checked(crc32fast::Hasher),
    Messages(Counted),
}

/// The writer's index a snapshot holds, for a writer to decode off the load's path: where it is,
/// and what the lines after the snapshot add to it.
#[derive(Debug, PartialEq)]
pub struct LaterIndex {
    path: PathBuf,
    at: u64,
    block: Block,
    after: Vec<(Loc, u64, Noted)>,
    /// The end of the lines it indexes.
    pub end: u64,
}

impl LaterIndex {
    /// The index; `None` when the snapshot no longer holds it, or a line after it does not fit.
    pub fn decode(self) -> Option<Scanned> {
        let (texts, body) = read_block(&self.path, self.at, &self.block)?;
        let mut s: Scanned = Snapshot::reading(texts, || rmp_serde::from_slice(&body).ok())?;
        for (loc, next, noted) in self.after {
            s.note(loc, next, noted).ok()?;
        }
        (s.end == self.end && s.warnings.is_empty()).then_some(s)
    }
}

/// A block's texts, checked and read as UTF-8, and its body.
fn read_block(snap: &Path, at: u64, b: &Block) -> Option<(Arc<String>, Vec<u8>)> {
    let mut buf = read_fresh(snap, at, b.texts.checked_add(b.body)?)?;
    if crc32fast::hash(&buf) != b.crc {
        return None;
    }
    let body = buf.split_off(usize::try_from(b.texts).ok()?);
    Some((Arc::new(String::from_utf8(buf).ok()?), body))
}

fn run(work: &Work, file: &File, snap: &Path, blocks: &[Block]) -> Option<Done> {
    match *work {
        Work::Check(start, end) => crc_of(file, start, end).ok().map(Done::Checked),
        Work::Block(at, k) => {
            let (texts, body) = read_block(snap, at, &blocks[k])?;
            // Messages as the file's lines would give them (the checksums already say so, unless
            // the snapshot was made to deceive).
            let m: Counted = Snapshot::reading(texts, || rmp_serde::from_slice(&body).ok())?;
            m.iter().all(|(m, _)| check_message(m, "message").is_ok()).then_some(Done::Messages(m))
        }
    }
}

/// Every piece of work done, on a thread per core (results in the order of `work`); `None` if
/// any failed.
fn run_all(work: &[Work], file: &File, snap: &Path, blocks: &[Block]) -> Option<Vec<Done>> {
    let next = AtomicUsize::new(0);
    let threads = crate::cores::cores().min(work.len()).max(1);
    let mut done: Vec<(usize, Option<Done>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(w) = work.get(i) else {
                            return out;
                        };
                        out.push((i, run(w, file, snap, blocks)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    (done.len() == work.len()).then_some(())?;
    done.into_iter().map(|(_, d)| d).collect()
}

/// The file is the one the snapshot checked, not written to since: nothing to check.
fn unchanged(head: &Head, file: &File) -> bool {
    head.stamp.is_some() && file.metadata().ok().and_then(|m| Stamp::of(&m)) == head.stamp
}

/// A snapshot's head, where its blocks start, and its length.
fn read_head(path: &Path) -> Option<(Head, u64, u64)> {
    let snap = File::open(path).ok()?;
    let len = snap.metadata().ok()?.len();
    let mut start = [0u8; START];
    read_at(&snap, 0, &mut start).ok()?;
    let head_len = u64::from_le_bytes(start[8..16].try_into().ok()?);
    let head_crc = u32::from_le_bytes(start[16..].try_into().ok()?);
    if &start[..8] != MAGIC || head_len > len - START as u64 {
        return None;
    }
    let head = read_region(&snap, START as u64, START as u64 + head_len).ok()?;
    if crc32fast::hash(&head) != head_crc {
        return None;
    }
    let head: Head = rmp_serde::from_slice(&head).ok()?;
    Some((head, START as u64 + head_len, len))
}

/// The load `how` asks for, from the snapshot of `session` and the lines after it; `None` when it
/// has no snapshot this load may use.
pub fn load(file: &File, layout: &Layout, session: &Path, how: How) -> Option<Loaded> {
    let snap_path = path_of(session);
    let (head, mut at, len) = read_head(&snap_path)?;
    if head.writer != env!("CARGO_PKG_VERSION")
        || head.counter != counter_key(how.counter)
        || head.covered < layout.body
        || head.covered > layout.end
        || head.blocks.is_empty()
        || head.next < 2
    {
        return None;
    }
    // The lines after it: none may be a compaction entry, and each must read.
    let after = read_region(file, head.covered, layout.end).ok()?;
    let lines: Vec<(Loc, &[u8])> = split(&after, Loc { offset: head.covered, line: head.next }).collect();
    if lines.iter().any(|(_, l)| !matches!(format::kind(l), Ok(k) if k != Kind::Compaction)) {
        return None;
    }
    let decoded = decode_all(&lines, how.counter);
    if decoded.iter().any(|(d, _)| d.is_err()) {
        return None;
    }
    // The messages' blocks first, then the file's pieces; the index (the first block) is left
    // for the writer to decode.
    let index_at = at;
    let mut work = Vec::new();
    for (k, b) in head.blocks.iter().enumerate() {
        if k > 0 {
            work.push(Work::Block(at, k));
        }
        at = at.checked_add(b.texts)?.checked_add(b.body)?;
    }
    if at != len {
        return None;
    }
    let unchanged = unchanged(&head, file);
    let mut piece = if unchanged { head.covered } else { 0 };
    while piece < head.covered {
        work.push(Work::Check(piece, head.covered.min(piece + PIECE)));
        piece += PIECE;
    }
    let (mut messages, mut counts) = (Vec::new(), Vec::new());
    let mut crc = crc32fast::Hasher::new();
    for done in run_all(&work, file, &snap_path, &head.blocks)? {
        match done {
            Done::Checked(h) => crc.combine(&h),
            Done::Messages(m) => {
                for (m, c) in m {
                    messages.push(m);
                    counts.push(c);
                }
            }
        }
    }
    if !unchanged && crc.finalize() != head.crc {
        return None;
    }
    let replay = Replay::resume(messages, counts, head.lines, head.pins, how.counter)?;
    let mut whole = Whole::resume(session, how, replay, head.next);
    let mut after = Some(Vec::new());
    for ((loc, line), d) in lines.iter().zip(decoded) {
        let next = loc.offset + line.len() as u64 + 1;
        after = after.zip(noted(&d.0)).map(|(mut a, n)| {
            a.push((*loc, next, n));
            a
        });
        whole.apply(*loc, line.len(), d).ok()?;
    }
    let loaded = whole.finish(Some(layout));
    let later = after.filter(|_| how.index && loaded.warnings.is_empty()).map(|after| LaterIndex {
        path: snap_path,
        at: index_at,
        block: head.blocks[0].clone(),
        after,
        end: layout.end,
    });
    Some(Loaded { snapshot: Some(head.covered), later, ..loaded })
}

/// A load of `file` as tests compare it with one from the file alone: the snapshot's index as the
/// writer takes it (decoded, else the file scanned), the snapshot left out.
#[cfg(test)]
pub fn resolved(mut l: Loaded, file: &File, layout: &Layout) -> Loaded {
    if let Some(later) = l.later.take() {
        let scan = || super::file_index::scan(file, layout, &std::sync::atomic::AtomicBool::new(false)).ok();
        l.scanned = later.decode().or_else(scan);
    }
    Loaded { snapshot: None, ..l }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::lines::{layout, Start};
    use super::super::load::load;
    use super::super::tests::{full_view, msg, opts, request, summary, user};
    use super::super::{OpenOptions, SessionStore};
    use super::*;
    use crate::session::History;

    fn store(path: &Path, snapshot: bool) -> SessionStore {
        let session = json!({"model": {"limit": {"context": 100000}}, "tokenizer": "estimate"});
        SessionStore::open(path, OpenOptions { session: Some(session), snapshot, ..Default::default() }).unwrap()
    }

    fn tools(id: &str, output: &str) -> Message {
        msg(json!({"id": id, "role": "assistant", "finish": "tool-calls", "parts": [
            {"type": "tool", "id": format!("{id}-p"), "callID": format!("{id}-c"), "tool": "bash",
             "state": {"status": "completed", "input": {"cmd": "ls"}, "output": output}},
            {"type": "text", "id": format!("{id}-x"), "text": "done \u{e9}\n\"quoted\""}]}))
    }

    /// A session of `n` exchanges, written and closed.
    fn session(path: &Path, n: usize) {
        let mut s = store(path, true);
        for i in 0..n {
            s.append(&user(&format!("u{i}"), &format!("question {i}\n"))).unwrap();
            s.append(&tools(&format!("a{i}"), &"line of output\n".repeat(40 + i))).unwrap();
        }
        s.close().unwrap();
    }

    /// A load with the estimate's counter (`snapshot`: whether it may start from the snapshot),
    /// and the bytes the snapshot covered when it did.
    fn loaded(path: &Path, index: bool, snapshot: bool) -> (Loaded, Option<u64>) {
        let file = File::open(path).unwrap();
        let Ok(Start::Header(l)) = layout(&file).unwrap() else { panic!("no header") };
        let counter = opts().counter().unwrap();
        let how = How { recover: false, counter: Some(&counter), index, snapshot };
        let out = load(&file, &l, path, how).unwrap();
        let covered = out.snapshot;
        (resolved(out, &file, &l), covered)
    }

    /// Loads from the snapshot when `used` says so, and gives what the file alone gives either way.
    fn same(path: &Path, used: impl Into<Option<bool>>) {
        let used = used.into();
        for index in [true, false] {
            let (with, covered) = loaded(path, index, true);
            if let Some(used) = used {
                assert_eq!(covered.is_some(), used, "index: {index}");
            }
            assert_eq!(with, loaded(path, index, false).0);
        }
    }

    /// A writer's first load.
    fn writer_load(path: &Path, snapshot: bool) {
        let mut s = store(path, snapshot);
        s.load(Some(opts()), &|| false).unwrap();
        s.close().unwrap();
    }

    /// A session of `n` exchanges in a new directory, snapshots made whatever its size.
    fn fresh(n: usize) -> (tempfile::TempDir, PathBuf) {
        MIN_BYTES.set(0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        session(&path, n);
        (dir, path)
    }

    #[test]
    fn a_writers_first_load_writes_it_and_later_loads_start_from_it() {
        let (_dir, path) = fresh(30);
        same(&path, false);
        writer_load(&path, true);
        assert!(path_of(&path).exists());
        same(&path, true);
        // Lines appended since are read after it: an update and a prune of messages it holds.
        let mut s = store(&path, true);
        s.append(&user("late", "more")).unwrap();
        s.update(&tools("a3", "shorter")).unwrap();
        let p = super::super::PruneRecord {
            compacted_at: 5.0,
            message_ids: vec!["a4".into()],
            part_ids: vec!["a4-p".into()],
            stubs: vec![],
        };
        s.prune(&p).unwrap();
        s.close().unwrap();
        same(&path, true);
        // The texts are the file's, through the snapshot's shared buffer.
        let (l, _) = loaded(&path, false, true);
        assert_eq!(l.messages[1], tools("a0", &"line of output\n".repeat(40)));
    }

    #[test]
    fn a_snapshot_that_does_not_match_is_not_used() {
        let (_dir, path) = fresh(12);
        writer_load(&path, true);
        let snap = std::fs::read(path_of(&path)).unwrap();
        // Any byte changed, or the file cut short: the load reads the file. (The writer's index is
        // read after the load, by a writer: a byte changed there has the writer scan the file.)
        let (head, start, _) = read_head(&path_of(&path)).unwrap();
        let index = start..start + head.blocks[0].texts + head.blocks[0].body;
        for k in (0..snap.len()).step_by(snap.len() / 97 + 1).chain([snap.len() - 1]) {
            let mut bad = snap.clone();
            bad[k] ^= 0x20;
            std::fs::write(path_of(&path), &bad).unwrap();
            same(&path, (!index.contains(&(k as u64))).then_some(false));
        }
        std::fs::write(path_of(&path), &snap[..snap.len() - 1]).unwrap();
        same(&path, false);
        std::fs::write(path_of(&path), &snap).unwrap();
        same(&path, true);
        // A byte of the session file changed where the snapshot covers it, length unchanged.
        let original = std::fs::read(&path).unwrap();
        let mut edited = original.clone();
        let at = edited.windows(14).position(|w| w == b"line of output").unwrap();
        edited[at] = b'L';
        std::fs::write(&path, &edited).unwrap();
        same(&path, false);
        std::fs::write(&path, &original).unwrap();
        same(&path, true);
        // Another counter's counts.
        let file = File::open(&path).unwrap();
        let Ok(Start::Header(l)) = layout(&file).unwrap() else { panic!("no header") };
        let o200k =
            Counter { tokenizer: crate::tokens::Tokenizer::parse("o200k").unwrap(), ..opts().counter().unwrap() };
        let how = How { recover: false, counter: Some(&o200k), index: false, snapshot: true };
        assert_eq!(load(&file, &l, &path, how).unwrap().snapshot, None);
    }

    #[test]
    fn a_compaction_entry_ends_it() {
        let (_dir, path) = fresh(10);
        writer_load(&path, true);
        let mut s = store(&path, true);
        s.append(&request("r", Some("u8"), None)).unwrap();
        s.append(&summary("s", "r", true)).unwrap();
        s.close().unwrap();
        same(&path, false);
        writer_load(&path, true);
        assert!(!path_of(&path).exists());
    }

    #[test]
    fn a_stamp_is_taken_only_of_a_file_settled_for_a_while() {
        let s = Stamp { dev: 1, ino: 2, len: 3, modified: (1_000, 5), changed: (1_010, 0) };
        assert_eq!(s.settled(1_013), Some(s));
        assert_eq!(s.settled(1_012), None);
        assert_eq!(Stamp { changed: (900, 0), ..s }.settled(1_003), Some(Stamp { changed: (900, 0), ..s }));
        assert_eq!(Stamp { modified: (1_011, 0), ..s }.settled(1_013), None);
        // A session file's own stamp changes with any write to it, whatever its length.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"abc").unwrap();
        let before = Stamp::of(&std::fs::metadata(&path).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, b"abd").unwrap();
        if let Some(b) = before {
            assert_ne!(Stamp::of(&std::fs::metadata(&path).unwrap()), Some(b));
        }
    }

    #[test]
    fn a_file_unchanged_since_it_was_checked_is_not_read_again() {
        let (_dir, path) = fresh(10);
        // Only a file whose last change is a few seconds old gets a stamp.
        std::thread::sleep(SETTLED + std::time::Duration::from_millis(1100));
        writer_load(&path, true);
        let head = read_head(&path_of(&path)).unwrap().0;
        assert!(cfg!(not(unix)) || unchanged(&head, &File::open(&path).unwrap()));
        same(&path, true);
        // Changed in place, its length kept: its stamp is not the snapshot's, and its bytes are
        // checked again.
        let original = std::fs::read(&path).unwrap();
        let mut edited = original.clone();
        let at = edited.windows(14).position(|w| w == b"line of output").unwrap();
        edited[at] = b'L';
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().write_all(&edited).unwrap();
        assert!(!unchanged(&head, &File::open(&path).unwrap()));
        same(&path, false);
    }

    #[test]
    fn a_writer_takes_its_index_from_the_snapshot_or_else_from_the_file() {
        for damaged in [false, true] {
            let (_dir, path) = fresh(10);
            writer_load(&path, true);
            if damaged {
                let (_, start, _) = read_head(&path_of(&path)).unwrap();
                let mut snap = std::fs::read(path_of(&path)).unwrap();
                snap[start as usize + 1] ^= 0x20;
                std::fs::write(path_of(&path), &snap).unwrap();
            }
            let mut s = store(&path, true);
            s.load(Some(opts()), &|| false).unwrap();
            s.append(&user("late", "after the snapshot")).unwrap();
            s.append(&request("r", Some("u8"), None)).unwrap();
            s.append(&summary("s", "r", true)).unwrap();
            s.close().unwrap();
            // The compaction entry the writer wrote from its index shows what the whole file shows.
            let (tail, _) = loaded(&path, false, false);
            assert!(tail.tail_first());
            let shown = History::from_messages_at(tail.messages, tail.base.unwrap(), opts(), &|| false).unwrap();
            let shown: Vec<Message> = shown.visible().into_iter().map(|e| e.msg.clone()).collect();
            let mut r = SessionStore::open(&path, OpenOptions { read_only: true, ..Default::default() }).unwrap();
            assert_eq!(shown, full_view(r.load_all().unwrap()), "damaged: {damaged}");
        }
    }

    #[test]
    fn it_is_written_when_due_only() {
        let (_dir, path) = fresh(10);
        let size = std::fs::metadata(&path).unwrap().len();
        // Below the size, or with `snapshot: false`: none.
        MIN_BYTES.set(size + 1);
        writer_load(&path, true);
        assert!(!path_of(&path).exists());
        MIN_BYTES.set(0);
        writer_load(&path, false);
        assert!(!path_of(&path).exists());
        writer_load(&path, true);
        let first = std::fs::read(path_of(&path)).unwrap();
        // A few lines behind: kept as it is; more than a fifth of the file behind: written again.
        let mut s = store(&path, true);
        s.append(&user("x1", "short")).unwrap();
        s.close().unwrap();
        writer_load(&path, true);
        assert_eq!(std::fs::read(path_of(&path)).unwrap(), first);
        let mut s = store(&path, true);
        for i in 0..5 {
            s.append(&tools(&format!("y{i}"), &"more output\n".repeat(80))).unwrap();
        }
        s.close().unwrap();
        writer_load(&path, true);
        assert_ne!(std::fs::read(path_of(&path)).unwrap(), first);
        same(&path, true);
        // A reader never writes one.
        std::fs::remove_file(path_of(&path)).unwrap();
        let mut r = SessionStore::open(&path, OpenOptions { read_only: true, ..Default::default() }).unwrap();
        r.load(Some(opts()), &|| false).unwrap();
        assert!(!path_of(&path).exists());
    }
}
