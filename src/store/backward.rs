//! Reading a file backward in large pieces and parsing each piece as it comes. When the end of a
//! file holds no compaction entry (never compacted, or compacted long ago), the backward scan
//! would read on to the header and the load would then read the whole file again; this reads it
//! once, and parses each piece while its bytes are in cache. The parsed lines are held until the
//! first one is read (they are applied in file order), so what they hold is about what the
//! messages they make hold: an update that a newer one replaces is kept as its skeleton only.

use std::fs::File;
use std::io;

use rustc_hash::FxHashSet;

use super::file_index::skeleton;
use super::format::{parse_compaction, CompactionRecord, Loc, COMPACTION_PREFIX};
use super::lines::{read_at, split};
use super::replay::{decode_all, Decode, Decoded};
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

/// Reads `[body, end)` (`end` ends a line) backward in pieces of about `size` bytes, until a line
/// that starts with the compaction prefix parses, as `lines::scan_back` does; the lines after it
/// are parsed on every core, a piece at a time as it is read.
pub fn parse_back(file: &File, body: u64, end: u64, size: usize, counter: Option<&Counter>) -> io::Result<Back> {
    // The header's `\n` (at body - 1) starts the first entry line.
    let floor = body - 1;
    // Newest first; numbered when the first line's number is known.
    let mut pieces: Vec<Vec<Parsed>> = Vec::new();
    let parse = |lines: &[(Loc, &[u8])]| -> Vec<Parsed> {
        lines.iter().zip(decode_all(lines, counter)).map(|((loc, line), d)| (*loc, line.len(), d)).collect()
    };
    // Messages a (newer) update was read for.
    let mut updated = FxHashSet::default();
    // One buffer for every piece, and the bytes from `hi` to the end of the line that crosses it.
    let mut buf: Vec<u8> = Vec::new();
    let mut carry: Vec<u8> = Vec::new();
    let mut hi = end;
    while hi > floor {
        let lo = hi.saturating_sub(size as u64).max(floor);
        let n = (hi - lo) as usize;
        // Zeroed only where it grows: a piece is read over the bytes of the one before.
        if buf.len() < n + carry.len() {
            buf.resize(n + carry.len(), 0);
        }
        read_at(file, lo, &mut buf[..n])?;
        buf[n..n + carry.len()].copy_from_slice(&carry);
        let bytes = &buf[..n + carry.len()];
        // The bytes end a line; the first `\n` ends one that starts before `lo` (at `floor`, the header).
        let first = memchr::memchr(b'\n', bytes).expect("a piece ends a line");
        let lines: Vec<_> = split(&bytes[first + 1..], Loc { offset: lo + first as u64 + 1, line: 0 }).collect();
        for (k, (loc, line)) in lines.iter().enumerate().rev() {
            if line.starts_with(COMPACTION_PREFIX) {
                if let Ok(rec) = parse_compaction(line) {
                    pieces.push(parse(&lines[k + 1..]));
                    let at = Loc { offset: loc.offset, line: rec.line };
                    return Ok(Back::Found(at, rec, numbered(pieces, at.line + 1)));
                }
            }
        }
        let mut piece = parse(&lines);
        supersede(&mut piece, &mut updated);
        pieces.push(piece);
        carry = bytes[..=first].to_vec();
        hi = lo;
    }
    Ok(Back::All(numbered(pieces, 2)))
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
