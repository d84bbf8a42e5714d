//! Reading a file backward in pieces and parsing each piece as it comes. When the end of a file
//! holds no compaction entry (never compacted, or compacted long ago), the backward scan would
//! read on to the header and the load would then read the whole file again; this reads it once.
//! Every core takes the next piece from the end, reads it and parses it, so reading the file is
//! shared by the cores as parsing is, and no core waits for another between pieces. The parsed
//! lines are held until the first one is read (they are applied in file order), so what they hold
//! is about what the messages they make hold: an update that a newer one replaces is kept as its
//! skeleton only.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::sync::Mutex;

use rustc_hash::FxHashSet;

use super::file_index::skeleton;
use super::format::{parse_compaction, CompactionRecord, Loc, COMPACTION_PREFIX};
use super::lines::{read_at, split, BLOCK};
use super::replay::{decode_counted, Decode, Decoded, MIN_PER_THREAD};
use crate::tokens::Counter;

/// A line parsed: where it starts, its length without the `\n`, what it parsed to.
pub type Parsed = (Loc, usize, Decode);

#[derive(Debug)]
pub enum Back {
    /// The latest compaction entry, and the lines after it, parsed.
    Found(Loc, CompactionRecord, Vec<Parsed>),
    /// No compaction entry: every line, parsed.
    All(Vec<Parsed>),
}

/// Reads `[body, end)` (`end` ends a line) backward in pieces of at most `size` bytes, until a
/// line that starts with the compaction prefix parses, as `lines::scan_back` does; the lines after
/// it are parsed, a piece at a time as it is read, on every core.
pub fn parse_back(file: &File, body: u64, end: u64, size: usize, counter: Option<&Counter>) -> io::Result<Back> {
    // The header's `\n` (at body - 1) starts the first entry line.
    let floor = body - 1;
    // A short file in as many pieces as there are cores, while each is worth a thread.
    let size = size.min(((end - floor) as usize / crate::cores::cores()).max(MIN_PER_THREAD));
    let pieces = (end - floor).div_ceil(size as u64) as usize;
    let shared = Mutex::new(Pieces::default());
    let work = || {
        let mut buf = Vec::new();
        loop {
            // Taken in its own statement: the lock is not held while the piece is parsed.
            let next = shared.lock().expect("a piece never panics").take(pieces);
            let Some(k) = next else { break };
            let piece = read_piece(file, (floor, end), k, size, counter, &mut buf);
            shared.lock().expect("a piece never panics").put(k, piece);
        }
    };
    // With more than one piece the calling thread only waits: in Node, loads where it took pieces
    // too were 2-8 ms slower than with a thread per core (measured side by side on the store
    // benchmark's files). One piece is read where the call runs: a thread would cost more.
    match crate::cores::cores().min(pieces) {
        1 => work(),
        threads => std::thread::scope(|scope| (0..threads).for_each(|_| drop(scope.spawn(work)))),
    }
    let Pieces { error, ordered, .. } = shared.into_inner().expect("a piece never panics");
    if let Some(e) = error {
        return Err(e);
    }
    Ok(match ordered.last().and_then(|p| p.found.clone()) {
        Some((at, rec)) => {
            let first = at.line + 1;
            Back::Found(at, rec, numbered(ordered.into_iter().map(|p| p.lines).collect(), first))
        }
        None => Back::All(numbered(ordered.into_iter().map(|p| p.lines).collect(), 2)),
    })
}

/// The lines one piece owns, parsed: those whose `\n` before them is in the piece. With an entry
/// among them, only the lines after the latest one that parses.
#[derive(Default)]
struct Piece {
    lines: Vec<Parsed>,
    found: Option<(Loc, CompactionRecord)>,
}

/// The pieces the cores share, numbered from the end (0 is the newest).
#[derive(Default)]
struct Pieces {
    /// The next piece to read.
    next: usize,
    /// The newest piece with an entry: older ones are not needed.
    last: Option<usize>,
    error: Option<io::Error>,
    /// Parsed, waiting for the newer ones.
    waiting: BTreeMap<usize, Piece>,
    /// Newest first, up to the first still being parsed, their superseded updates made skeletons.
    ordered: Vec<Piece>,
    /// Messages a (newer) update was read for.
    updated: FxHashSet<String>,
}

impl Pieces {
    fn take(&mut self, pieces: usize) -> Option<usize> {
        let k = self.next;
        let done = k >= pieces || self.error.is_some() || self.last.is_some_and(|l| k > l);
        (!done).then(|| {
            self.next += 1;
            k
        })
    }

    /// Keeps piece `k`, and takes every piece that now follows the ordered ones.
    fn put(&mut self, k: usize, piece: io::Result<Piece>) {
        let piece = match piece {
            Ok(p) => p,
            Err(e) => {
                self.error.get_or_insert(e);
                return;
            }
        };
        if piece.found.is_some() {
            self.last = Some(self.last.map_or(k, |l| l.min(k)));
        }
        self.waiting.insert(k, piece);
        while self.last.is_none_or(|l| self.ordered.len() <= l) {
            let Some(mut piece) = self.waiting.remove(&self.ordered.len()) else { break };
            // The lines after an entry are not held long: the load applies them next.
            if piece.found.is_none() {
                supersede(&mut piece.lines, &mut self.updated);
            }
            self.ordered.push(piece);
        }
        if self.last.is_some_and(|l| self.ordered.len() > l) {
            self.waiting.clear();
        }
    }
}

/// Reads and parses piece `k` of `(floor, end)`: its bytes, and the rest of the line that crosses
/// its upper end. `buf` is the caller's, kept for its next piece.
fn read_piece(
    file: &File,
    (floor, end): (u64, u64),
    k: usize,
    size: usize,
    counter: Option<&Counter>,
    buf: &mut Vec<u8>,
) -> io::Result<Piece> {
    let hi = end - (k * size) as u64;
    let lo = hi.saturating_sub(size as u64).max(floor);
    buf.resize((hi - lo) as usize, 0);
    read_at(file, lo, buf)?;
    // The first `\n` ends a line an older piece owns (at `floor`, the header).
    let Some(first) = memchr::memchr(b'\n', buf) else {
        return Ok(Piece::default());
    };
    // The line after the piece's last `\n` is the piece's: read on to its end (`end` ends one).
    let mut at = hi;
    while at < end {
        let n = buf.len();
        let more = ((end - at) as usize).min(BLOCK);
        buf.resize(n + more, 0);
        read_at(file, at, &mut buf[n..])?;
        if let Some(i) = memchr::memchr(b'\n', &buf[n..]) {
            buf.truncate(n + i + 1);
            break;
        }
        at += more as u64;
    }
    let lines: Vec<_> = split(&buf[first + 1..], Loc { offset: lo + first as u64 + 1, line: 0 }).collect();
    for (j, (loc, line)) in lines.iter().enumerate().rev() {
        if line.starts_with(COMPACTION_PREFIX) {
            if let Ok(rec) = parse_compaction(line) {
                let at = Loc { offset: loc.offset, line: rec.line };
                return Ok(Piece { lines: parse(&lines[j + 1..], counter), found: Some((at, rec)) });
            }
        }
    }
    Ok(Piece { lines: parse(&lines, counter), found: None })
}

fn parse(lines: &[(Loc, &[u8])], counter: Option<&Counter>) -> Vec<Parsed> {
    lines.iter().map(|(loc, line)| (*loc, line.len(), decode_counted(line, counter))).collect()
}

/// Keeps an update that a newer update of the same message (read before, reading backward) will
/// replace whole as its skeleton, which is what the writer's index reads of it: a file of many
/// updates holds one whole version of a message until the lines are applied, not every version.
fn supersede(piece: &mut [Parsed], updated: &mut FxHashSet<String>) {
    for (_, _, (decoded, count)) in piece.iter_mut().rev() {
        if let Ok(Decoded::Update(m, _)) = decoded {
            if !updated.insert(m.id.clone()) {
                *m = skeleton(m);
                *count = None;
            }
        }
    }
}

/// The lines of `pieces` (newest first) in file order, numbered from `first`.
fn numbered(pieces: Vec<Vec<Parsed>>, first: u64) -> Vec<Parsed> {
    let lines = pieces.into_iter().rev().flatten();
    lines.zip(first..).map(|((loc, len, d), line)| (Loc { line, ..loc }, len, d)).collect()
}

#[cfg(test)]
mod tests {
    use super::super::format::{encode_compaction, encode_header, Header, VERSION};
    use super::super::replay::decode;
    use super::*;
    use std::io::Write;

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        File::create(&path).unwrap().write_all(bytes).unwrap();
        let f = File::open(&path).unwrap();
        (dir, f)
    }

    fn header() -> Vec<u8> {
        encode_header(&Header { version: VERSION, id: "s".into(), created: 0, session: None })
    }

    /// A message line of about `pad` bytes of text, with an escape in it.
    fn message(k: usize, pad: usize) -> Vec<u8> {
        let text = format!("{k}:{}\\n{}", "x".repeat(pad), "y".repeat(pad / 3));
        format!(
            "{{\"type\":\"message\",\"message\":{{\"id\":\"m{k}\",\"role\":\"user\",\"time\":{{\"created\":{k}}},\"parts\":[{{\"type\":\"text\",\"id\":\"p{k}\",\"text\":\"{text}\"}}]}}}}\n"
        )
        .into_bytes()
    }

    /// Lines of lengths up to well over a small piece: a line may cross one piece or several.
    fn lines_of(n: usize, from: usize) -> Vec<Vec<u8>> {
        (from..from + n).map(|k| message(k, (k * 37) % 300)).collect()
    }

    proptest::proptest! {
        /// Every line is parsed once, with its place, whatever the piece size.
        #[test]
        fn every_line_is_parsed_once(n in 0usize..40, size in 1usize..1500) {
            let lines = lines_of(n, 0);
            let mut bytes = header();
            let body = bytes.len() as u64;
            lines.iter().for_each(|l| bytes.extend_from_slice(l));
            let (_d, f) = file_with(&bytes);
            let Back::All(got) = parse_back(&f, body, bytes.len() as u64, size, None).unwrap() else {
                panic!("no compaction entry here")
            };
            proptest::prop_assert_eq!(got.len(), lines.len());
            let mut offset = body;
            for (k, ((loc, len, (d, _)), line)) in got.into_iter().zip(&lines).enumerate() {
                proptest::prop_assert_eq!((loc, len), (Loc { offset, line: 2 + k as u64 }, line.len() - 1));
                proptest::prop_assert!(d.is_ok());
                proptest::prop_assert_eq!(d, decode(&line[..line.len() - 1]));
                offset += line.len() as u64;
            }
        }
    }

    #[test]
    fn an_update_a_newer_one_replaces_is_kept_as_its_skeleton() {
        let mut bytes = header();
        let body = bytes.len() as u64;
        bytes.extend(message(1, 50));
        bytes.extend(message(2, 50));
        for pad in [60, 70, 80] {
            let line = String::from_utf8(message(1, pad)).unwrap().replacen("\"message\",", "\"update\",", 1);
            bytes.extend(line.into_bytes());
        }
        let (_d, f) = file_with(&bytes);
        let Back::All(got) = parse_back(&f, body, bytes.len() as u64, 100, None).unwrap() else {
            panic!("no compaction entry here")
        };
        let parts: Vec<(&str, usize)> = got
            .iter()
            .map(|(_, _, (d, _))| match d {
                Ok(Decoded::Message(m)) => ("message", m.parts.len()),
                Ok(Decoded::Update(m, _)) => ("update", m.parts.len()),
                _ => panic!("{d:?}"),
            })
            .collect();
        assert_eq!(parts, [("message", 1), ("message", 1), ("update", 0), ("update", 0), ("update", 1)]);
    }

    #[test]
    fn stops_at_the_latest_compaction_entry_that_parses() {
        let mut bytes = header();
        let body = bytes.len() as u64;
        lines_of(20, 0).iter().for_each(|l| bytes.extend_from_slice(l));
        let at = bytes.len() as u64;
        let rec = CompactionRecord { line: 22, ..Default::default() };
        bytes.extend(encode_compaction(&rec));
        lines_of(30, 20).iter().for_each(|l| bytes.extend_from_slice(l));
        // One that starts like an entry and does not parse is passed over (the load reports it).
        let bad = b"{\"type\":\"compaction\",\"line\":\"x\"}";
        assert!(decode(bad).is_err());
        bytes.extend_from_slice(bad);
        bytes.push(b'\n');
        bytes.extend(message(99, 5));
        let (_d, f) = file_with(&bytes);
        for size in [1, 5, 200, 4096, 1 << 20] {
            let Back::Found(loc, found, after) = parse_back(&f, body, bytes.len() as u64, size, None).unwrap() else {
                panic!("size {size}: the entry is there")
            };
            assert_eq!(loc, Loc { offset: at, line: 22 }, "size {size}");
            assert_eq!(found, rec);
            // The lines after it, parsed and numbered; the one that does not parse among them.
            let numbers: Vec<u64> = after.iter().map(|(l, _, _)| l.line).collect();
            assert_eq!(numbers, (23..55).collect::<Vec<_>>(), "size {size}");
            assert_eq!(after[0].0.offset, at + encode_compaction(&rec).len() as u64);
            assert_eq!(after.iter().filter(|(_, _, (d, _))| d.is_err()).count(), 1);
        }
    }
}
