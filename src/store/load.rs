//! Reading messages back: everything (`load_all`), or only what the context needs (`load`).
//!
//! A tail-first load reads backward from the end to the latest compaction entry, then parses the
//! lines it points to: the kept head (when a partial compaction kept one) and its patches, and
//! everything from the first kept line to the end. The result is checked against the entry (the
//! compaction it names must be the one the loaded messages show); when it is not, or when the
//! entry's offsets do not fit the file, the whole file is read instead. When the last `KEEP` bytes
//! hold no entry, the scan goes on parsing what it reads (`backward`): a file never compacted is
//! read once, and the lines after an entry far back are not read twice.

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::path::Path;

use super::backward::{parse_back, Back, Parsed};
use super::file_index::{skeleton, Noted, Scanned};
use super::format::{CompactionRecord, Loc};
use super::lines::{read_region, scan_back_within, split, BackScan, Blocks, Layout, LineChunks, BLOCK, KEEP};
use super::replay::{decode, decode_all, Applied, Decode, Decoded, Replay, Replayed};
use super::snapshot::LaterIndex;
use super::warning::Warning;
use crate::error::{CfError, Code, Result};
use crate::message::Message;
use crate::policy::{Base, Cut};
use crate::session::{History, Pin, SessionOptions};
use crate::tokens::{Counter, MessageCount};

#[derive(Debug, Default, PartialEq)]
pub struct Loaded {
    pub messages: Vec<Message>,
    /// With a counter, the messages' token counts where they are known (as long as `messages`).
    pub counts: Vec<Option<MessageCount>>,
    pub warnings: Vec<Warning>,
    /// Set when only part of the file was read: the view of the first `base.len` messages (give
    /// it to `History::from_messages_at`).
    pub base: Option<Base>,
    /// The pins the file recorded last (`None`: no line recorded any).
    pub pins: Option<Vec<Pin>>,
    /// When asked for, and every line was read without a problem: the index a writer of the file
    /// would build (so it need not read the file again).
    pub scanned: Option<Scanned>,
    /// When the load started from the file's snapshot: the bytes of the file it covered.
    pub snapshot: Option<u64>,
    /// In place of `scanned`, when the load started from a snapshot: the index it holds, for a
    /// writer to decode off the load's path.
    pub later: Option<LaterIndex>,
}

impl Loaded {
    /// What a tail-first load read, with the warnings its reading gave.
    pub fn from_tail(((messages, counts), base, pins): TailFirst, warnings: Vec<Warning>) -> Loaded {
        Loaded { messages, counts, warnings, base: Some(base), pins, ..Loaded::default() }
    }

    pub fn tail_first(&self) -> bool {
        self.base.is_some()
    }

    /// The history of the loaded messages (their warnings are the caller's to report).
    pub fn into_history(self, opts: SessionOptions, aborted: &(dyn Fn() -> bool + Sync)) -> Result<History> {
        if aborted() {
            return Err(CfError::aborted());
        }
        let base = self.base.unwrap_or_default();
        let mut h = History::from_counted_at(self.messages, self.counts, base, opts, aborted)?;
        if let Some(p) = self.pins {
            h.set_pins(p);
        }
        Ok(h)
    }
}

/// Applies lines, turning problems into `CF_CORRUPT_SESSION` (or warnings with `recover`).
pub struct Reading<'a> {
    pub path: &'a Path,
    pub recover: bool,
    pub warnings: Vec<Warning>,
}

impl Reading<'_> {
    fn corrupt(&mut self, loc: Loc, problem: String) -> Result<()> {
        if self.recover {
            self.warnings.push(Warning::at(loc, format!("{problem}; line skipped")));
            Ok(())
        } else {
            Err(CfError::new(
                Code::CorruptSession,
                format!("{}: line {} (byte {}): {problem}", self.path.display(), loc.line, loc.offset),
            ))
        }
    }

    pub fn apply(&mut self, replay: &mut Replay, loc: Loc, (decoded, count): Decode) -> Result<()> {
        match decoded.and_then(|d| replay.apply(loc, d, count)) {
            Ok(Applied::Done) => Ok(()),
            Ok(Applied::Skipped) => {
                self.warnings.push(Warning::at(loc, "entry type unknown to this version; skipped"));
                Ok(())
            }
            Err(problem) => self.corrupt(loc, problem),
        }
    }

    fn torn(&mut self, layout: &Layout, line: u64) {
        if layout.torn() {
            self.warnings.push(torn_warning(layout, line));
        }
    }
}

pub fn torn_warning(layout: &Layout, line: u64) -> Warning {
    Warning::at(
        Loc { offset: layout.end, line },
        format!("incomplete last line ({} bytes, a write cut short): ignored", layout.len - layout.end),
    )
}

pub fn io_error(path: &Path, e: &io::Error) -> CfError {
    super::io_error(path, "cannot read", e)
}

/// Bytes parsed per step of a full read (shared by the decoding threads).
const CHUNK: usize = 4 << 20;

/// Bytes a core reads and parses at a time reading backward (`backward`): small enough that the
/// cores finish together, large enough that taking one costs nothing next to parsing it.
const PIECE: usize = 1 << 20;

/// What a decoded line tells a writer's index (`None`: a line the index would not take).
pub fn noted(decoded: &std::result::Result<Decoded, String>) -> Option<Noted> {
    Some(match decoded.as_ref().ok()? {
        Decoded::Message(m) => Noted::Message(skeleton(m)),
        Decoded::Update(m, view) => Noted::Update(skeleton(m), *view),
        Decoded::Prune(p) => Noted::Prune(p.message_ids.clone()),
        Decoded::Compaction(rec) => Noted::Compaction(rec.clone()),
        Decoded::Pins(_) | Decoded::Unknown => Noted::Nothing,
        Decoded::Header => return None,
    })
}

/// How a load reads.
#[derive(Clone, Copy, Default)]
pub struct How<'a> {
    /// Skip corrupt lines (with a warning) instead of failing.
    pub recover: bool,
    /// Count the messages as they are parsed.
    pub counter: Option<&'a Counter>,
    /// A load that reads every line also builds a writer's index of them (`Loaded::scanned`).
    pub index: bool,
    /// Start from the file's snapshot when it has a usable one (see `snapshot`).
    pub snapshot: bool,
}

/// Every line of a file (or of a log's entries) applied in order: the messages, the warnings, and
/// when asked for, the writer's index.
pub struct Whole<'a> {
    reading: Reading<'a>,
    replay: Replay,
    scanned: Option<Scanned>,
    /// Lines applied.
    count: u64,
}

impl<'a> Whole<'a> {
    /// `body`: where the lines start (the index's first offset).
    pub fn new(path: &'a Path, how: How, body: u64) -> Whole<'a> {
        Whole {
            reading: Reading { path, recover: how.recover, warnings: Vec::new() },
            replay: Replay::new(false, how.counter),
            scanned: how.index.then(|| Scanned { lines: 1, end: body, ..Default::default() }),
            count: 0,
        }
    }

    /// Goes on from the replay of the lines before `next` (the line number after them), without
    /// a writer's index: a load from a snapshot leaves that to the writer (`LaterIndex`).
    pub fn resume(path: &'a Path, how: How, replay: Replay, next: u64) -> Whole<'a> {
        Whole {
            reading: Reading { path, recover: how.recover, warnings: Vec::new() },
            replay,
            scanned: None,
            count: next.saturating_sub(2),
        }
    }

    /// The next line: where it starts, its length, what it parsed to.
    pub fn apply(&mut self, loc: Loc, len: usize, decoded: Decode) -> Result<()> {
        self.count += 1;
        if let Some(s) = self.scanned.as_mut() {
            if noted(&decoded.0).is_none_or(|n| s.note(loc, loc.offset + len as u64 + 1, n).is_err()) {
                self.scanned = None;
            }
        }
        self.reading.apply(&mut self.replay, loc, decoded)
    }

    /// `layout`: the file's, to report a torn last line.
    pub fn finish(mut self, layout: Option<&Layout>) -> Loaded {
        if let Some(layout) = layout {
            self.reading.torn(layout, self.count + 2);
        }
        let pins = self.replay.take_pins();
        let (messages, counts) = self.replay.into_messages();
        // A line the load skipped or warned about: the writer's own scan decides what it makes of it.
        let scanned = self.scanned.filter(|_| self.reading.warnings.is_empty());
        Loaded { messages, counts, warnings: self.reading.warnings, pins, scanned, ..Loaded::default() }
    }
}

/// Every line, in order.
pub fn load_all(file: &File, layout: &Layout, path: &Path, how: How) -> Result<Loaded> {
    let mut whole = Whole::new(path, how, layout.body);
    let mut chunks = LineChunks::new(file, Loc { offset: layout.body, line: 2 }, layout.end, CHUNK);
    while let Some(lines) = chunks.next_lines().map_err(|e| io_error(path, &e))? {
        for ((loc, line), decoded) in lines.iter().zip(decode_all(&lines, how.counter)) {
            whole.apply(*loc, line.len(), decoded)?;
        }
    }
    Ok(whole.finish(Some(layout)))
}

/// Every line, as `parse_back` parsed them.
fn load_parsed(lines: Vec<Parsed>, layout: &Layout, path: &Path, how: How) -> Result<Loaded> {
    let mut whole = Whole::new(path, how, layout.body);
    for (loc, len, decoded) in lines {
        whole.apply(loc, len, decoded)?;
    }
    Ok(whole.finish(Some(layout)))
}

/// How far from the end the backward scan looks for a compaction entry before it parses the lines
/// it reads (0: from the end), and the pieces it then reads.
#[cfg(not(test))]
fn sizes() -> (u64, usize) {
    (KEEP, PIECE)
}

#[cfg(test)]
thread_local! {
    /// Tests make them small (see `sizes`) to take every path with small files.
    pub static SIZES: std::cell::Cell<(u64, usize)> = const { std::cell::Cell::new((KEEP, PIECE)) };
}

#[cfg(test)]
fn sizes() -> (u64, usize) {
    SIZES.get()
}

/// What the context needs: from the latest compaction entry when there is a usable one.
pub fn load(file: &File, layout: &Layout, path: &Path, how: How) -> Result<Loaded> {
    if how.snapshot {
        if let Some(loaded) = super::snapshot::load(file, layout, path, how) {
            return Ok(loaded);
        }
    }
    let How { recover, counter, .. } = how;
    let io = |e: io::Error| io_error(path, &e);
    let (near, piece) = sizes();
    let scanned = if near == 0 { None } else { scan_back_within(file, layout.body, layout.end, near).map_err(io)? };
    let (scan, parsed) = match scanned {
        Some(scan) => (scan, None),
        // No entry near the end: the rest is read once, and parsed as it is read.
        None => match parse_back(file, layout.body, layout.end, piece, counter).map_err(io)? {
            Back::All(lines) => return load_parsed(lines, layout, path, how),
            Back::Found(at, rec, after) => {
                (BackScan { found: Some((at, rec)), after: after.len() as u64, read: None }, Some(after))
            }
        },
    };
    let next_line = scan.next_line();
    let Some((at, rec)) = scan.found else {
        return load_all(file, layout, path, how);
    };
    if rec.request.is_none() {
        return load_all(file, layout, path, how);
    }
    let mut reading = Reading { path, recover, warnings: Vec::new() };
    // The lines before the entry that the last run starts with, read with the ones the scan read.
    let mut read = scan.read;
    if let Some(first) = rec.runs.last().map(|r| r.offset).filter(|&o| o >= layout.body && o < at.offset) {
        read = read.map(|r| r.extend_to(file, first - 1)).transpose().map_err(io)?;
    }
    let src = FileSource { file, read };
    match tail_first(&src, (layout.body, layout.end), &rec, at, parsed, &mut reading, counter)? {
        Some(read) => {
            reading.torn(layout, next_line);
            Ok(Loaded::from_tail(read, reading.warnings))
        }
        None => {
            let mut all = load_all(file, layout, path, how)?;
            all.warnings.insert(
                0,
                Warning::at(at, "compaction entry does not match the file (a crash between writes?): read every line"),
            );
            Ok(all)
        }
    }
}

/// Lines read, with where they start: borrowed from what the source holds, or read for the call.
pub type SourceLines<'a> = Vec<(Loc, Cow<'a, [u8]>)>;

/// Where a tail-first load reads its lines: a file, or the entries a database returned.
pub trait Source {
    /// The line starting at `offset` (without its `\n`), if one starts there before `end`.
    fn line_at(&self, offset: u64, end: u64) -> io::Result<Option<Cow<'_, [u8]>>>;
    /// The complete lines of `[start.offset, end)`; `None` when `end` does not end a line.
    fn lines(&self, start: Loc, end: u64) -> io::Result<Option<SourceLines<'_>>>;
}

/// A file, and the bytes at its end its backward scan read (lines there are not read again).
pub struct FileSource<'a> {
    pub file: &'a File,
    pub read: Option<Blocks>,
}

impl FileSource<'_> {
    fn read(&self, from: u64, end: u64) -> Option<&Blocks> {
        self.read.as_ref().filter(|r| r.covers(from, end))
    }
}

impl Source for FileSource<'_> {
    fn line_at(&self, offset: u64, end: u64) -> io::Result<Option<Cow<'_, [u8]>>> {
        if offset >= end {
            return Ok(None);
        }
        if let Some(r) = self.read(offset, end) {
            return Ok(r.line_at(offset, end));
        }
        if offset > 0 && read_region(self.file, offset - 1, offset)?[0] != b'\n' {
            return Ok(None);
        }
        let mut line = Vec::new();
        let mut pos = offset;
        while pos < end {
            let chunk = read_region(self.file, pos, end.min(pos + BLOCK as u64))?;
            if let Some(i) = memchr::memchr(b'\n', &chunk) {
                line.extend_from_slice(&chunk[..i]);
                return Ok(Some(Cow::Owned(line)));
            }
            line.extend_from_slice(&chunk);
            pos += chunk.len() as u64;
        }
        Ok(None)
    }

    fn lines(&self, start: Loc, end: u64) -> io::Result<Option<SourceLines<'_>>> {
        if let Some(r) = self.read(start.offset, end) {
            return Ok(r.lines(start, end));
        }
        let buf = read_region(self.file, start.offset, end)?;
        if buf.last() != Some(&b'\n') {
            return Ok(None);
        }
        Ok(Some(split(&buf, start).map(|(loc, l)| (loc, Cow::Owned(l.to_vec()))).collect()))
    }
}

/// The id of the message a `message` line adds, if it is one.
fn message_id(line: &[u8]) -> Option<String> {
    match decode(line) {
        Ok(Decoded::Message(m)) => Some(m.id),
        _ => None,
    }
}

/// What a tail-first load read: the messages, the view they start from, the pins recorded last.
pub type TailFirst = (Replayed, Base, Option<Vec<Pin>>);

/// Loads the runs and patches `rec` (the entry at `at`) points to, the last run up to `end`;
/// `None` when they do not fit the lines of `[body, end)`, or when an update that may change the
/// view follows the entry (the writer stopped before the entry that would have followed it).
/// `after`: the lines after the entry, when they were parsed already (else they are read).
pub fn tail_first(
    src: &impl Source,
    (body, end): (u64, u64),
    rec: &CompactionRecord,
    at: Loc,
    after: Option<Vec<Parsed>>,
    reading: &mut Reading<'_>,
    counter: Option<&Counter>,
) -> Result<Option<TailFirst>> {
    let io = |e: io::Error| io_error(reading.path, &e);
    let (Some(_), Some(summary), Some(last)) = (&rec.request, &rec.summary, rec.runs.last()) else {
        return Ok(None);
    };
    // Runs in file order, inside the file, before this entry; the summary in the last one.
    let ordered = rec.runs.windows(2).all(|w| w[0].end <= w[1].offset);
    let inside = rec.runs.iter().all(|r| r.offset >= body && r.offset < r.end && r.end <= at.offset && r.count > 0);
    if !ordered || !inside || summary.offset < last.offset || summary.offset >= at.offset {
        return Ok(None);
    }
    // Every line to read, with where it is.
    let mut lines: SourceLines<'_> = Vec::new();
    // Where the lines still to read end.
    let read_to = after.as_ref().map_or(end, |a| a.first().map_or(end, |(loc, _, _)| loc.offset));
    for (k, run) in rec.runs.iter().enumerate() {
        let until = if k + 1 == rec.runs.len() { read_to } else { run.end };
        if message_id(&src.line_at(run.offset, until).map_err(io)?.unwrap_or_default()).as_deref()
            != Some(run.id.as_str())
        {
            return Ok(None);
        }
        let Some(read) = src.lines(Loc { offset: run.offset, line: run.line }, until).map_err(io)? else {
            return Ok(None);
        };
        lines.extend(read);
    }
    for p in &rec.patches {
        let outside = p.offset >= body
            && p.offset < last.offset
            && !rec.runs.iter().any(|r| (r.offset..r.end).contains(&p.offset));
        let Some(line) = outside.then(|| src.line_at(p.offset, last.offset)).transpose().map_err(io)?.flatten() else {
            return Ok(None);
        };
        lines.push((*p, line));
    }
    lines.sort_by_key(|(loc, _)| loc.offset);
    // The entry's own numbering must agree with its place in the file.
    if !lines.iter().any(|(loc, _)| *loc == at) {
        return Ok(None);
    }
    let refs: Vec<(Loc, &[u8])> = lines.iter().map(|(loc, l)| (*loc, l.as_ref())).collect();
    let mut replay = Replay::new(true, counter);
    let decoded = refs.iter().map(|(loc, _)| *loc).zip(decode_all(&refs, counter));
    for (loc, decoded) in decoded.chain(after.into_iter().flatten().map(|(loc, _, d)| (loc, d))) {
        if loc.offset > at.offset && matches!(decoded.0, Ok(Decoded::Update(_, true))) {
            return Ok(None);
        }
        if !matches!(decoded.0, Ok(Decoded::Update(..) | Decoded::Prune(_)) | Err(_)) && rec.patches.contains(&loc) {
            return Ok(None);
        }
        reading.apply(&mut replay, loc, decoded)?;
    }
    let pins = replay.take_pins();
    Ok(base_of(&replay, rec).map(|base| (replay.into_messages(), base, pins)))
}

/// The view state `rec` records, in positions of the loaded messages; `None` if they are not the
/// messages it names.
fn base_of(replay: &Replay, rec: &CompactionRecord) -> Option<Base> {
    let (msgs, lines) = (replay.messages(), replay.lines());
    let summary = rec.summary.as_ref()?;
    let request = rec.request.as_ref()?;
    // The shown messages are the loaded ones up to the summary; their runs start where recorded.
    let len = lines.iter().position(|&l| l == summary.line)? + 1;
    if msgs[len - 1].id != summary.id || rec.runs.iter().map(|r| r.count).sum::<u64>() != len as u64 {
        return None;
    }
    let mut k = 0usize;
    for run in &rec.runs {
        if msgs[k].id != run.id || lines[k] != run.line {
            return None;
        }
        k += run.count as usize;
    }
    let order: Vec<usize> = rec.order.iter().flat_map(|&[a, b]| a as usize..b as usize).filter(|&i| i < len).collect();
    let answered: Vec<usize> = rec.answered.iter().map(|&a| a as usize).filter(|&i| i < len).collect();
    let request = msgs[..len].iter().position(|m| m.id == request.id)?;
    if order.len() != rec.order.iter().map(|&[a, b]| b.saturating_sub(a) as usize).sum::<usize>()
        || answered.len() != rec.answered.len()
    {
        return None;
    }
    Some(Base { len, order, answered, cut: Some(Cut { request, summary: len - 1 }) })
}
