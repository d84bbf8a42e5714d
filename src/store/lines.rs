//! Reading a session file by lines: its layout (header, complete lines, torn tail), regions read
//! forward, and the backward scan that finds the latest compaction entry (and keeps the blocks it
//! read, for the load that follows).

use std::borrow::Cow;
use std::fs::File;
use std::io;

use super::format::COMPACTION_PREFIX;
use super::format::{parse_compaction, parse_header, CompactionRecord, Header, Loc};

/// Blocks read by the backward scans.
pub const BLOCK: usize = 64 * 1024;

/// Reads `[start, end)` of the file.
pub fn read_region(file: &File, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0; (end - start) as usize];
    read_at(file, start, &mut buf)?;
    Ok(buf)
}

/// Fills `buf` from `start` without moving a cursor the file shares, so threads may read one file
/// at once; in one read when the OS gives it all (`read_to_end` would read in steps from 8 KB up:
/// four calls for a 64 KB block, a dozen for 4 MB).
pub fn read_at(file: &File, start: u64, buf: &mut [u8]) -> io::Result<()> {
    positional_read(file, start, buf).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => {
            io::Error::new(io::ErrorKind::UnexpectedEof, "the file is shorter than expected")
        }
        _ => e,
    })
}

#[cfg(unix)]
fn positional_read(file: &File, start: u64, buf: &mut [u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, start)
}

#[cfg(windows)]
fn positional_read(file: &File, start: u64, mut buf: &mut [u8]) -> io::Result<()> {
    let mut at = start;
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, at) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                at += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Splits `buf` (which starts a line at `base`) into lines without their `\n`. The bytes after the
/// last `\n` are not returned.
pub fn split(buf: &[u8], base: Loc) -> impl Iterator<Item = (Loc, &[u8])> {
    let mut start = 0usize;
    let mut line = base.line;
    memchr::memchr_iter(b'\n', buf).map(move |nl| {
        let loc = Loc { offset: base.offset + start as u64, line };
        let text = &buf[start..nl];
        start = nl + 1;
        line += 1;
        (loc, text)
    })
}

/// Lines with where they start.
pub type Lines<'a> = Vec<(Loc, &'a [u8])>;

/// Reads a region forward in pieces of whole lines, reusing one buffer: a long file costs its
/// bytes, not a buffer (and page faults) of its size.
pub struct LineChunks<'f> {
    file: &'f File,
    /// The next byte to read, and the end of the region (which ends a line).
    pos: u64,
    end: u64,
    size: usize,
    /// Read into in place: its first `filled` bytes are the file's.
    buf: Vec<u8>,
    filled: usize,
    /// The bytes of `buf` the previous piece returned.
    used: usize,
    /// Where `buf` starts.
    base: Loc,
}

impl<'f> LineChunks<'f> {
    /// Pieces of about `size` bytes (a longer line comes whole) of `[start.offset, end)`.
    pub fn new(file: &'f File, start: Loc, end: u64, size: usize) -> LineChunks<'f> {
        LineChunks { file, pos: start.offset, end, size, buf: Vec::new(), filled: 0, used: 0, base: start }
    }

    /// The lines of the next piece, without their `\n`; `None` at the end. Bytes after the last
    /// `\n` of the region are not returned.
    pub fn next_lines(&mut self) -> io::Result<Option<Lines<'_>>> {
        // The start of a line the previous piece did not end moves to the front.
        self.buf.copy_within(self.used..self.filled, 0);
        self.filled -= self.used;
        self.used = 0;
        let mut scanned = 0;
        while self.pos < self.end
            && (self.filled < self.size || memchr::memchr(b'\n', &self.buf[scanned..self.filled]).is_none())
        {
            scanned = self.filled;
            let n = (self.end - self.pos).min(self.size as u64) as usize;
            // Zeroed once (by the allocator when it can): later pieces are read over the same bytes.
            if self.buf.is_empty() {
                self.buf = vec![0; n];
            } else if self.buf.len() < self.filled + n {
                self.buf.resize(self.filled + n, 0);
            }
            read_at(self.file, self.pos, &mut self.buf[self.filled..self.filled + n])?;
            self.filled += n;
            self.pos += n as u64;
        }
        let Some(last) = memchr::memrchr(b'\n', &self.buf[..self.filled]) else {
            return Ok(None);
        };
        self.used = last + 1;
        let lines: Vec<(Loc, &[u8])> = split(&self.buf[..self.used], self.base).collect();
        self.base = Loc { offset: self.base.offset + self.used as u64, line: self.base.line + lines.len() as u64 };
        Ok(Some(lines))
    }
}

/// What a file holds, found without reading its body.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub header: Header,
    /// Offset of line 2.
    pub body: u64,
    /// Offset after the last `\n`: the end of the complete lines.
    pub end: u64,
    /// The file's length; bytes in `[end, len)` are a torn last line.
    pub len: u64,
}

impl Layout {
    pub fn torn(&self) -> bool {
        self.len > self.end
    }
}

/// How a file without a complete header reads.
#[derive(Debug, PartialEq)]
pub enum Start {
    /// A header and its newline.
    Header(Layout),
    /// Nothing, or a header cut short by a crash while the file was being created.
    Empty { len: u64 },
}

/// The start of every header line this code writes.
const HEADER_PREFIX: &[u8] = b"{\"type\":\"header\"";

/// Reads the header and finds the end of the complete lines. Errors are the problem with line 1.
pub fn layout(file: &File) -> io::Result<std::result::Result<Start, String>> {
    let len = file.metadata()?.len();
    let mut first = Vec::new();
    let mut pos = 0u64;
    let nl = loop {
        if pos >= len {
            break None;
        }
        let chunk = read_region(file, pos, len.min(pos + BLOCK as u64))?;
        let found = memchr::memchr(b'\n', &chunk);
        match found {
            Some(i) => {
                first.extend_from_slice(&chunk[..i]);
                break Some(pos + i as u64);
            }
            None => first.extend_from_slice(&chunk),
        }
        pos += chunk.len() as u64;
        if first.len() > 64 << 20 {
            return Ok(Err("the first line is not a contextfold session header".into()));
        }
    };
    let Some(nl) = nl else {
        // No complete first line: a header torn while the file was created, or not a session.
        let n = first.len().min(HEADER_PREFIX.len());
        return Ok(if first[..n] == HEADER_PREFIX[..n] {
            Ok(Start::Empty { len })
        } else {
            Err("not a contextfold session file (the first line is not a header)".into())
        });
    };
    let header = match parse_header(&first) {
        Ok(h) => h,
        Err(e) => return Ok(Err(e)),
    };
    let body = nl + 1;
    let end = complete_end(file, body, len)?;
    Ok(Ok(Start::Header(Layout { header, body, end, len })))
}

/// The offset after the last `\n` at or after `floor` (which follows a `\n`).
fn complete_end(file: &File, floor: u64, len: u64) -> io::Result<u64> {
    let mut hi = len;
    while hi > floor {
        let lo = hi.saturating_sub(BLOCK as u64).max(floor);
        let block = read_region(file, lo, hi)?;
        if let Some(i) = memchr::memrchr(b'\n', &block) {
            return Ok(lo + i as u64 + 1);
        }
        hi = lo;
    }
    Ok(floor)
}

/// The result of reading backward from the end to the latest compaction entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BackScan {
    /// The latest compaction entry and where it starts (its line number is its own `line`).
    pub found: Option<(Loc, CompactionRecord)>,
    /// Complete lines after the found entry (or after the header when none was found).
    pub after: u64,
    /// The bytes read, up to the end (none when there were more than `KEEP`): a tail-first load
    /// parses them rather than reading them again.
    pub read: Option<Blocks>,
}

impl BackScan {
    /// The line number of the first line at or after `end` (the torn line, if any).
    pub fn next_line(&self) -> u64 {
        match &self.found {
            Some((_, rec)) => rec.line + self.after + 1,
            None => 2 + self.after,
        }
    }
}

/// The most bytes a backward scan keeps.
pub const KEEP: u64 = 4 << 20;

/// Reads `[body, end)` backward in blocks until a line that starts with the compaction prefix
/// parses (one that does not is passed over; the forward read reports it). Only lines written the
/// canonical way are found (every compaction line this code writes); the cost is the bytes after
/// that entry.
pub fn scan_back(file: &File, body: u64, end: u64) -> io::Result<BackScan> {
    Ok(scan_back_within(file, body, end, u64::MAX)?.expect("a scan without a limit reaches the header"))
}

/// `scan_back` over at most the last `limit` bytes (rounded up to blocks): `None` when they hold
/// no entry and the file goes on before them.
pub fn scan_back_within(file: &File, body: u64, end: u64, limit: u64) -> io::Result<Option<BackScan>> {
    let mut scan = BackScan::default();
    if end <= body {
        return Ok(Some(scan));
    }
    // The line being looked at ends with the `\n` at `line_end`; `after` lines follow it.
    let mut line_end = end - 1;
    // The first bytes of the block after the current one, for prefixes that cross blocks.
    let mut later: Vec<u8> = Vec::new();
    let mut hi = end;
    // The header's `\n` (at body - 1) starts the first entry line.
    let floor = body - 1;
    let mut read = Some(Blocks { start: end, blocks: Vec::new() });
    loop {
        let lo = hi.saturating_sub(BLOCK as u64).max(floor);
        let block = read_region(file, lo, hi)?;
        for i in memchr::memrchr_iter(b'\n', &block) {
            let start = lo + i as u64 + 1;
            if start == end {
                // The last line's own `\n`.
                continue;
            }
            if let Some(rec) = check(file, &block, lo, &later, start, line_end)? {
                scan.found = Some((Loc { offset: start, line: rec.line }, rec));
                break;
            }
            scan.after += 1;
            line_end = start - 1;
        }
        if scan.found.is_some() || lo == floor {
            scan.read = read.map(|r| r.with_front(lo, block));
            return Ok(Some(scan));
        }
        if end - lo >= limit {
            return Ok(None);
        }
        later = block[..block.len().min(COMPACTION_PREFIX.len())].to_vec();
        read = read.filter(|_| end - lo <= KEEP).map(|r| r.with_front(lo, block));
        hi = lo;
    }
}

/// Bytes of a file, `[start, end)`, as read in blocks (newest first: a backward scan adds them
/// at the front).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Blocks {
    start: u64,
    /// In reverse file order.
    blocks: Vec<Vec<u8>>,
}

impl Blocks {
    fn with_front(mut self, start: u64, block: Vec<u8>) -> Blocks {
        debug_assert_eq!(start + block.len() as u64, self.start);
        self.start = start;
        self.blocks.push(block);
        self
    }

    /// Reads `[start, self.start)` of `file` too.
    pub fn extend_to(self, file: &File, start: u64) -> io::Result<Blocks> {
        if start >= self.start {
            return Ok(self);
        }
        let block = read_region(file, start, self.start)?;
        Ok(self.with_front(start, block))
    }

    /// Each block with where it starts, in file order.
    fn in_order(&self) -> impl Iterator<Item = (u64, &[u8])> {
        let mut at = self.start;
        self.blocks.iter().rev().map(move |b| {
            let here = at;
            at += b.len() as u64;
            (here, b.as_slice())
        })
    }

    fn end(&self) -> u64 {
        self.start + self.blocks.iter().map(|b| b.len() as u64).sum::<u64>()
    }

    fn byte(&self, offset: u64) -> Option<u8> {
        self.in_order()
            .find(|(at, b)| (*at..*at + b.len() as u64).contains(&offset))
            .map(|(at, b)| b[(offset - at) as usize])
    }

    /// Whether `[from, end)` was read, with the byte before it (which says whether a line starts at `from`).
    pub fn covers(&self, from: u64, end: u64) -> bool {
        from > self.start && end <= self.end()
    }

    /// The lines of `[start.offset, end)` without their `\n` (`None` unless a line starts at
    /// `start` and `end` ends one); `covers` must hold. A line that crosses blocks is copied.
    pub fn lines(&self, start: Loc, end: u64) -> Option<Vec<(Loc, Cow<'_, [u8]>)>> {
        if self.byte(start.offset - 1) != Some(b'\n') || self.byte(end - 1) != Some(b'\n') {
            return None;
        }
        let mut out = Vec::new();
        let mut carry: Option<Vec<u8>> = None;
        let mut next = start;
        for (at, block) in self.in_order() {
            let (lo, hi) = (start.offset.max(at), end.min(at + block.len() as u64));
            if lo >= hi {
                continue;
            }
            let part = &block[(lo - at) as usize..(hi - at) as usize];
            let mut from = 0;
            for nl in memchr::memchr_iter(b'\n', part) {
                let text = match carry.take() {
                    Some(mut c) => {
                        c.extend_from_slice(&part[from..nl]);
                        Cow::Owned(c)
                    }
                    None => Cow::Borrowed(&part[from..nl]),
                };
                out.push((next, text));
                from = nl + 1;
                next = Loc { offset: lo + from as u64, line: next.line + 1 };
            }
            if from < part.len() {
                carry.get_or_insert_with(Vec::new).extend_from_slice(&part[from..]);
            }
        }
        Some(out)
    }

    /// The line starting at `offset` (without its `\n`), if one starts there and ends before
    /// `end`; `covers(offset, end)` must hold.
    pub fn line_at(&self, offset: u64, end: u64) -> Option<Cow<'_, [u8]>> {
        let nl = self.in_order().find_map(|(at, b)| {
            let lo = offset.max(at);
            let hi = end.min(at + b.len() as u64);
            (lo < hi)
                .then(|| memchr::memchr(b'\n', &b[(lo - at) as usize..(hi - at) as usize]).map(|i| lo + i as u64))
                .flatten()
        })?;
        self.lines(Loc { offset, line: 0 }, nl + 1)?.pop().map(|(_, l)| l)
    }
}

/// Looks at the line `[start, line_end)`: the compaction entry it holds, if it holds one that
/// parses.
fn check(
    file: &File,
    block: &[u8],
    lo: u64,
    later: &[u8],
    start: u64,
    line_end: u64,
) -> io::Result<Option<CompactionRecord>> {
    let len = (line_end - start) as usize;
    if len < COMPACTION_PREFIX.len() {
        return Ok(None);
    }
    // The line's first bytes: in this block, or crossing into the next one.
    let from = (start - lo) as usize;
    let here = &block[from.min(block.len())..];
    let n = here.len().min(COMPACTION_PREFIX.len());
    let crosses = || here.len() < COMPACTION_PREFIX.len() && later.starts_with(&COMPACTION_PREFIX[n..]);
    if here[..n] != COMPACTION_PREFIX[..n] || !(n == COMPACTION_PREFIX.len() || crosses()) {
        return Ok(None);
    }
    let line = read_region(file, start, line_end)?;
    Ok(parse_compaction(&line).ok())
}

#[cfg(test)]
mod tests {
    use super::super::format::{encode_compaction, encode_header, VERSION};
    use super::*;
    use std::io::Write;

    /// The number of `\n` in `[start, end)`.
    pub fn count_lines(file: &File, start: u64, end: u64) -> io::Result<u64> {
        let mut n = 0u64;
        let mut pos = start;
        while pos < end {
            let hi = end.min(pos + (BLOCK as u64) * 16);
            n += memchr::memchr_iter(b'\n', &read_region(file, pos, hi)?).count() as u64;
            pos = hi;
        }
        Ok(n)
    }

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.jsonl");
        std::fs::File::create(&path).unwrap().write_all(bytes).unwrap();
        let f = File::open(&path).unwrap();
        (dir, f)
    }

    fn header() -> Vec<u8> {
        encode_header(&Header { version: VERSION, id: "s".into(), created: 0, session: None })
    }

    fn compaction(line: u64) -> Vec<u8> {
        encode_compaction(&CompactionRecord { line, ..Default::default() })
    }

    proptest::proptest! {
        /// Pieces of any size give the lines of one whole read, with their places.
        #[test]
        fn line_chunks_give_every_line_once(lens in proptest::collection::vec(0usize..40, 0..60), size in 1usize..50, torn in 0usize..5) {
            let mut bytes = b"head\n".to_vec();
            for (i, n) in lens.iter().enumerate() {
                bytes.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *n));
                bytes.push(b'\n');
            }
            let end = bytes.len() as u64;
            bytes.extend(std::iter::repeat_n(b'x', torn));
            let (_d, f) = file_with(&bytes);
            let start = Loc { offset: 5, line: 2 };
            let whole: Vec<(Loc, Vec<u8>)> = split(&bytes[5..end as usize], start).map(|(l, t)| (l, t.to_vec())).collect();
            let mut chunks = LineChunks::new(&f, start, end, size);
            let mut got: Vec<(Loc, Vec<u8>)> = Vec::new();
            while let Some(lines) = chunks.next_lines().unwrap() {
                proptest::prop_assert!(!lines.is_empty());
                got.extend(lines.into_iter().map(|(l, t)| (l, t.to_vec())));
            }
            proptest::prop_assert_eq!(got, whole);
        }
    }

    proptest::proptest! {
        /// Lines of bytes read in blocks are the lines of the bytes read at once, wherever the
        /// blocks split them; a range must start and end lines.
        #[test]
        fn blocks_give_the_lines_of_a_whole_read(lens in proptest::collection::vec(0usize..30, 1..40), cuts in proptest::collection::vec(1usize..25, 1..20), from in 0usize..40) {
            let mut bytes = b"h\n".to_vec();
            for (i, n) in lens.iter().enumerate() {
                bytes.extend(std::iter::repeat_n(b'a' + (i % 26) as u8, *n));
                bytes.push(b'\n');
            }
            // Blocks of the sizes `cuts`, read back from the end as the scan does.
            let mut read = Blocks { start: bytes.len() as u64, blocks: Vec::new() };
            for c in cuts.iter().cycle() {
                if read.start == 0 {
                    break;
                }
                let lo = read.start.saturating_sub(*c as u64);
                let block = bytes[lo as usize..read.start as usize].to_vec();
                read = read.with_front(lo, block);
            }
            let starts: Vec<usize> = std::iter::once(0).chain(memchr::memchr_iter(b'\n', &bytes).map(|i| i + 1)).collect();
            let first = starts[1 + from % (starts.len() - 2)];
            let start = Loc { offset: first as u64, line: 7 };
            let whole: Vec<(Loc, Vec<u8>)> = split(&bytes[first..], start).map(|(l, t)| (l, t.to_vec())).collect();
            let got: Vec<(Loc, Vec<u8>)> = read.lines(start, bytes.len() as u64).unwrap().into_iter().map(|(l, t)| (l, t.into_owned())).collect();
            proptest::prop_assert_eq!(&got, &whole);
            proptest::prop_assert_eq!(read.line_at(first as u64, bytes.len() as u64).map(|l| l.into_owned()), Some(whole[0].1.clone()));
            if first + 1 < bytes.len() && bytes[first] != b'\n' {
                let inside = Loc { offset: first as u64 + 1, line: 0 };
                proptest::prop_assert!(read.lines(inside, bytes.len() as u64).is_none());
                proptest::prop_assert!(read.line_at(inside.offset, bytes.len() as u64).is_none());
            }
        }
    }

    #[test]
    fn layout_finds_the_header_and_the_torn_tail() {
        let mut bytes = header();
        let body = bytes.len() as u64;
        bytes.extend_from_slice(b"{\"type\":\"message\"}\n{\"type\":\"mess");
        let (_d, f) = file_with(&bytes);
        let Start::Header(l) = layout(&f).unwrap().unwrap() else { panic!() };
        assert_eq!(l.body, body);
        assert_eq!(l.end, body + 19);
        assert!(l.torn());
        let (_d, f) = file_with(b"{\"type\":\"hea");
        assert_eq!(layout(&f).unwrap().unwrap(), Start::Empty { len: 12 });
        let (_d, f) = file_with(b"");
        assert_eq!(layout(&f).unwrap().unwrap(), Start::Empty { len: 0 });
        let (_d, f) = file_with(b"hello world");
        assert!(layout(&f).unwrap().is_err());
        let (_d, f) = file_with(b"{\"a\":1}\n");
        assert!(layout(&f).unwrap().unwrap_err().contains("not a contextfold"));
    }

    #[test]
    fn torn_tails_longer_than_a_block_are_found() {
        let mut bytes = header();
        bytes.extend_from_slice(b"{\"type\":\"prune\"}\n");
        let end = bytes.len() as u64;
        bytes.extend(std::iter::repeat_n(b'x', BLOCK * 3 + 17));
        let (_d, f) = file_with(&bytes);
        let Start::Header(l) = layout(&f).unwrap().unwrap() else { panic!() };
        assert_eq!(l.end, end);
    }

    #[test]
    fn the_backward_scan_crosses_blocks_and_counts_lines() {
        // Lines of every size around the block size, so prefixes and lines straddle blocks.
        for filler in [1usize, 7, BLOCK - 30, BLOCK - 5, BLOCK, BLOCK + 3, 3 * BLOCK] {
            for split_prefix in 0..4usize {
                let mut bytes = header();
                let body = bytes.len() as u64;
                let mut line = 2u64;
                let pad = |n: usize| {
                    let mut v = b"{\"type\":\"message\",\"x\":\"".to_vec();
                    v.extend(std::iter::repeat_n(b'a', n));
                    v.extend_from_slice(b"\"}\n");
                    v
                };
                bytes.extend(pad(filler));
                line += 1;
                let c_at = bytes.len() as u64;
                bytes.extend(compaction(line));
                line += 1;
                for k in 0..5 {
                    bytes.extend(pad(filler / (k + 1) + split_prefix));
                    line += 1;
                }
                // A compaction-looking line that does not parse, after the good one.
                bytes.extend_from_slice(b"{\"type\":\"compaction\",\"line\":\"x\"}\n");
                line += 1;
                bytes.extend(pad(3));
                line += 1;
                let end = bytes.len() as u64;
                let (_d, f) = file_with(&bytes);
                let scan = scan_back(&f, body, end).unwrap();
                let (loc, rec) = scan.found.clone().unwrap();
                assert_eq!(loc.offset, c_at, "filler {filler}");
                let read = scan.read.clone().unwrap();
                let kept: Vec<u8> =
                    read.lines(loc, end).unwrap().iter().flat_map(|(_, l)| [l.as_ref(), b"\n"].concat()).collect();
                assert_eq!(kept, bytes[c_at as usize..]);
                assert_eq!(rec.line, 3);
                assert_eq!(scan.after, 7);
                assert_eq!(scan.next_line(), line);
                assert_eq!(count_lines(&f, 0, end).unwrap(), line - 1);
            }
        }
    }

    #[test]
    fn a_scan_without_compaction_reaches_the_header() {
        let mut bytes = header();
        let body = bytes.len() as u64;
        for _ in 0..1000 {
            bytes.extend_from_slice(b"{\"type\":\"prune\",\"compactedAt\":1}\n");
        }
        let (_d, f) = file_with(&bytes);
        let scan = scan_back(&f, body, bytes.len() as u64).unwrap();
        assert!(scan.found.is_none());
        assert_eq!(scan.after, 1000);
        assert_eq!(scan.next_line(), 1002);
        let first = compaction(2);
        let mut bytes = header();
        bytes.extend(first);
        let (_d, f) = file_with(&bytes);
        let scan = scan_back(&f, body, bytes.len() as u64).unwrap();
        assert_eq!(scan.found.unwrap().0, Loc { offset: body, line: 2 });
    }

    #[test]
    fn a_limited_scan_stops_after_its_limit() {
        let mut bytes = header();
        let body = bytes.len() as u64;
        bytes.extend(compaction(2));
        while bytes.len() < 3 * BLOCK {
            bytes.extend_from_slice(b"{\"type\":\"prune\",\"compactedAt\":1}\n");
        }
        let end = bytes.len() as u64;
        let (_d, f) = file_with(&bytes);
        assert_eq!(scan_back_within(&f, body, end, BLOCK as u64).unwrap(), None);
        let whole = scan_back_within(&f, body, end, 4 * BLOCK as u64).unwrap().unwrap();
        assert_eq!(whole.found.as_ref().unwrap().0, Loc { offset: body, line: 2 });
        assert_eq!(whole, scan_back(&f, body, end).unwrap());
    }

    #[test]
    fn split_numbers_lines_and_leaves_the_tail_out() {
        let lines: Vec<_> = split(b"a\nbb\n\nccc", Loc { offset: 10, line: 4 }).collect();
        assert_eq!(
            lines,
            vec![
                (Loc { offset: 10, line: 4 }, &b"a"[..]),
                (Loc { offset: 12, line: 5 }, &b"bb"[..]),
                (Loc { offset: 15, line: 6 }, &b""[..]),
            ]
        );
    }
}
