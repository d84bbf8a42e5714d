//! The lines of a session file: one JSON object per line, `type` first.
//!
//! ```text
//! {"type":"header","version":1,"id":"…","created":1700000000000,"session":{…}}
//! {"type":"message","message":{…},"counts":{…}}
//! {"type":"update","message":{…},"counts":{…}}
//! {"type":"prune","compactedAt":1700000000000,"messageIDs":["m3"],"prunedPartIDs":["p7"]}
//! {"type":"compaction","line":42,"request":{…},"summary":{…},"tail":{…},"head":{…},…}
//! ```
//!
//! Lines are numbered from 1 (the header); offsets are byte offsets of a line's first byte.
//! `counts` (the message's token counts, see `counts`) is there when the writer had a counter.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::counts::{self, Recorded};
use crate::message::{check_message, Message};
use crate::session::Pin;
use crate::tokens::Counter;

/// The format version this code writes and reads.
pub const VERSION: u64 = 1;

/// Where a line starts: byte offset and line number (1 is the header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Loc {
    pub offset: u64,
    pub line: u64,
}

/// A message line: the message id and where its `message` entry starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct At {
    pub id: String,
    pub offset: u64,
    pub line: u64,
}

impl At {
    pub fn new(id: &str, loc: Loc) -> At {
        At { id: id.to_string(), offset: loc.offset, line: loc.line }
    }

    pub fn loc(&self) -> Loc {
        Loc { offset: self.offset, line: self.line }
    }
}

/// The first line of a session file (`{"type":"header",...}`), without its `type`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields, rename = "StoreHeader"))]
pub struct Header {
    /// The file format's version.
    pub version: u64,
    /// The session id.
    pub id: String,
    /// Creation time, epoch ms.
    pub created: u64,
    /// The `SessionOptions` given when the file was created, as they were given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(as = "Option<crate::session::SessionOptions>"))]
    pub session: Option<Value>,
}

/// A prune, as `Session.prune()` reports it: `messageIDs[i]` holds `prunedPartIDs[i]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct PruneRecord {
    #[serde(rename = "compactedAt")]
    pub compacted_at: f64,
    #[serde(rename = "messageIDs")]
    pub message_ids: Vec<String>,
    #[serde(rename = "prunedPartIDs")]
    pub part_ids: Vec<String>,
    /// The stub each part reads as (`null`: cleared by age); empty when no part has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(test, ts(as = "Option<Vec<Option<String>>>", optional))]
    pub stubs: Vec<Option<String>>,
}

impl PruneRecord {
    /// `CF_INVALID_ARGUMENT` unless the lists line up and `compactedAt` is a finite number.
    pub fn check(&self) -> crate::error::Result<()> {
        use crate::error::CfError;
        if self.message_ids.len() != self.part_ids.len() {
            return Err(CfError::invalid_argument(format!(
                "prune: messageIDs has {} ids but prunedPartIDs has {}",
                self.message_ids.len(),
                self.part_ids.len()
            )));
        }
        if !self.stubs.is_empty() && self.stubs.len() != self.part_ids.len() {
            return Err(CfError::invalid_argument(format!(
                "prune: stubs has {} entries but prunedPartIDs has {}",
                self.stubs.len(),
                self.part_ids.len()
            )));
        }
        if !self.compacted_at.is_finite() {
            return Err(CfError::invalid_argument("prune: compactedAt must be a finite number"));
        }
        Ok(())
    }
}

/// A run of message lines that a tail-first load reads: `count` consecutive `message` lines (other
/// kinds of lines may sit between them), from the one at `offset` (message `id`, line `line`) to
/// the byte before `end`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub id: String,
    pub offset: u64,
    pub line: u64,
    pub end: u64,
    pub count: u64,
}

/// Where the context of the session starts, written whenever the newest applied compaction or
/// what it shows may have changed. Without `summary`, no compaction applies (as of this line).
///
/// The messages the context showed right after `summary` are the `count`s of `runs`, in file
/// order; `order` lists them (as ranges of their indices) in the order the model reads them,
/// `answered` the compaction requests among them whose summary was applied. A tail-first load
/// reads the runs (the last one up to the end of the file) and the `patches` (later updates and
/// prunes of those messages that lie outside the runs), and starts the view there.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompactionRecord {
    /// This entry's own line number.
    pub line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<At>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<At>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Run>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<[u64; 2]>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answered: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<Loc>,
}

impl CompactionRecord {
    /// The same record, as if written at line 0: what the entry says, not where it sits.
    pub fn body(&self) -> CompactionRecord {
        CompactionRecord { line: 0, ..self.clone() }
    }
}

/// Entry types, read from a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Header,
    Message,
    Update,
    Prune,
    Compaction,
    /// The session's pins as they stand (each such line replaces the ones before).
    Pins,
    /// A type this version does not know: skipped (and reported).
    Unknown,
}

impl Kind {
    fn from_name(name: &[u8]) -> Kind {
        match name {
            b"header" => Kind::Header,
            b"message" => Kind::Message,
            b"update" => Kind::Update,
            b"prune" => Kind::Prune,
            b"compaction" => Kind::Compaction,
            b"pins" => Kind::Pins,
            _ => Kind::Unknown,
        }
    }
}

const TYPE_PREFIX: &[u8] = b"{\"type\":\"";

/// The first bytes of every compaction line this code writes (what the backward scan looks for).
pub const COMPACTION_PREFIX: &[u8] = b"{\"type\":\"compaction\"";

/// The entry type of a line: read from the canonical prefix `{"type":"…"` when it is there (every
/// line this code writes), else by parsing the line.
pub fn kind(line: &[u8]) -> Result<Kind, String> {
    if let Some(rest) = line.strip_prefix(TYPE_PREFIX) {
        if let Some(end) = memchr::memchr(b'"', rest) {
            return Ok(Kind::from_name(&rest[..end]));
        }
    }
    #[derive(Deserialize)]
    struct TypeOnly {
        #[serde(rename = "type")]
        ty: String,
    }
    let t: TypeOnly = serde_json::from_slice(line).map_err(|e| describe_json_error(line, &e))?;
    Ok(Kind::from_name(t.ty.as_bytes()))
}

/// A serde_json error without its "at line 1 column N" (the line is the file's, given apart):
/// the column is kept.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) if e.column() > 0 => format!("{} (column {})", &text[..i], e.column()),
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn describe_json_error(line: &[u8], e: &serde_json::Error) -> String {
    if line.iter().all(|b| b.is_ascii_whitespace()) {
        return "empty line".to_string();
    }
    if e.is_data() {
        return without_position(e);
    }
    format!("not a JSON entry: {}", without_position(e))
}

/// Deserializes a line into `T`, with the path of the problem in the error text.
fn parse<'a, T: Deserialize<'a>>(line: &'a [u8]) -> Result<T, String> {
    // Lines are almost always good: parse them plainly, and again with path tracking only to say
    // what is wrong with a bad one.
    if let Ok(value) = serde_json::from_slice(line) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_slice(line);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner();
        if inner.is_syntax() || inner.is_eof() {
            describe_json_error(line, inner)
        } else if path == "." {
            without_position(inner)
        } else {
            format!("{path}: {}", without_position(inner))
        }
    })?;
    de.end().map_err(|e| describe_json_error(line, &e))?;
    Ok(value)
}

pub fn parse_header(line: &[u8]) -> Result<Header, String> {
    if !is_header(line) {
        return Err("not a contextfold session file (the first line is not a header)".into());
    }
    let header: Header = parse(line)?;
    if header.version > VERSION {
        return Err(format!("format version {} is newer than this contextfold reads ({VERSION})", header.version));
    }
    Ok(header)
}

/// Whether `line` is a header line (`{"type":"header",...}`), well-formed or not: a file that
/// starts with one is a session file.
pub fn is_header(line: &[u8]) -> bool {
    kind(line) == Ok(Kind::Header)
}

/// The message of a `message` or `update` line, validated like an appended message, the line's
/// `view` mark, and the counts it records (unchecked).
pub fn parse_message_line(line: &[u8]) -> Result<(Message, bool, Option<Recorded<'_>>), String> {
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(default)]
        view: bool,
        message: Message,
        #[serde(default, borrow)]
        counts: Option<&'a RawValue>,
    }
    let Line { view, message, counts } = parse(line)?;
    check_message(&message, "message").map_err(|e| e.message)?;
    Ok((message, view, counts.and_then(|c| Recorded::find(line, c))))
}

pub fn parse_prune(line: &[u8]) -> Result<PruneRecord, String> {
    let p: PruneRecord = parse(line)?;
    if p.message_ids.len() != p.part_ids.len() {
        return Err(format!("messageIDs has {} ids but prunedPartIDs has {}", p.message_ids.len(), p.part_ids.len()));
    }
    if !p.stubs.is_empty() && p.stubs.len() != p.part_ids.len() {
        return Err(format!("stubs has {} entries but prunedPartIDs has {}", p.stubs.len(), p.part_ids.len()));
    }
    Ok(p)
}

/// The pins of a `pins` line.
pub fn parse_pins(line: &[u8]) -> Result<Vec<Pin>, String> {
    #[derive(Deserialize)]
    struct Line {
        pins: Vec<Pin>,
    }
    Ok(parse::<Line>(line)?.pins)
}

pub fn encode_pins(pins: &[Pin]) -> Vec<u8> {
    #[derive(Serialize)]
    struct Body<'a> {
        pins: &'a [Pin],
    }
    encode("pins", &Body { pins })
}

pub fn parse_compaction(line: &[u8]) -> Result<CompactionRecord, String> {
    let c: CompactionRecord = parse(line)?;
    if c.line == 0 {
        return Err("line: must be at least 1".into());
    }
    if c.request.is_some() != c.summary.is_some() || c.summary.is_some() == c.runs.is_empty() {
        return Err("request, summary and runs go together".into());
    }
    Ok(c)
}

#[derive(Serialize)]
struct Tagged<'a, T: Serialize> {
    #[serde(rename = "type")]
    ty: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

fn finish(mut bytes: Vec<u8>) -> Vec<u8> {
    bytes.push(b'\n');
    bytes
}

fn encode<T: Serialize>(ty: &'static str, body: &T) -> Vec<u8> {
    // Serializing plain data to memory cannot fail: maps have string keys, floats are finite.
    finish(serde_json::to_vec(&Tagged { ty, body }).expect("entries serialize"))
}

pub fn encode_header(h: &Header) -> Vec<u8> {
    encode("header", h)
}

/// `{"type":…,"message":…}`, with the message's counts by `counter` last when there is one.
fn message_line(prefix: &[u8], message: &Message, counter: Option<&Counter>) -> Vec<u8> {
    let mut out = prefix.to_vec();
    // Serializing a message to memory cannot fail: its maps have string keys, its floats are finite.
    serde_json::to_writer(&mut out, message).expect("messages serialize");
    if let Some(counter) = counter {
        let tail = counts::encode(&out[prefix.len()..], counter, &counter.message(message).0);
        out.extend_from_slice(&tail);
    }
    out.push(b'}');
    finish(out)
}

pub fn encode_message(message: &Message, counter: Option<&Counter>) -> Vec<u8> {
    message_line(b"{\"type\":\"message\",\"message\":", message, counter)
}

/// An update; `view` marks one of a compaction request or summary (before or after it).
pub fn encode_update(message: &Message, view: bool, counter: Option<&Counter>) -> Vec<u8> {
    let prefix: &[u8] =
        if view { b"{\"type\":\"update\",\"view\":true,\"message\":" } else { b"{\"type\":\"update\",\"message\":" };
    message_line(prefix, message, counter)
}

pub fn encode_prune(p: &PruneRecord) -> Vec<u8> {
    encode("prune", p)
}

pub fn encode_compaction(c: &CompactionRecord) -> Vec<u8> {
    encode("compaction", c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::json;

    #[test]
    fn every_line_starts_with_its_type_and_ends_with_a_newline() {
        let m =
            parse_message(json!({"id": "m1", "role": "user", "parts": [{"type": "text", "id": "p", "text": "a\nb"}]}))
                .unwrap();
        let lines = [
            encode_header(&Header { version: VERSION, id: "s".into(), created: 1, session: None }),
            encode_message(&m, None),
            encode_update(&m, true, None),
            encode_prune(&PruneRecord::default()),
            encode_compaction(&CompactionRecord { line: 3, ..Default::default() }),
        ];
        let kinds = [Kind::Header, Kind::Message, Kind::Update, Kind::Prune, Kind::Compaction];
        for (line, k) in lines.iter().zip(kinds) {
            assert_eq!(line.last(), Some(&b'\n'));
            assert_eq!(memchr::memchr(b'\n', line), Some(line.len() - 1));
            assert_eq!(kind(&line[..line.len() - 1]).unwrap(), k);
        }
        assert!(lines[4].starts_with(COMPACTION_PREFIX));
        let back = parse_message_line(&lines[1][..lines[1].len() - 1]).unwrap();
        assert_eq!(back, (m.clone(), false, None));
        assert_eq!(parse_message_line(&lines[2][..lines[2].len() - 1]).unwrap(), (m, true, None));
        assert!(lines[2].starts_with(b"{\"type\":\"update\",\"view\":true,"));
    }

    #[test]
    fn type_is_found_in_any_key_order() {
        assert_eq!(kind(br#"{"message": {"id": "x"}, "type": "update"}"#).unwrap(), Kind::Update);
        assert_eq!(kind(br#"{"type":"label","x":1}"#).unwrap(), Kind::Unknown);
        assert!(kind(b"{\"type\":\"mess").is_err());
        assert_eq!(kind(b"   ").unwrap_err(), "empty line");
        assert!(kind(b"garbage").unwrap_err().starts_with("not a JSON entry"));
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let e = parse_message_line(
            br#"{"type":"message","message":{"id":"m1","role":"user","parts":[{"type":"text","id":"p"}]}}"#,
        )
        .unwrap_err();
        assert!(e.starts_with("message.parts"), "{e}");
        assert!(e.contains("text"), "{e}");
        let e = parse_message_line(br#"{"type":"message","message":{"id":"","role":"user","parts":[]}}"#).unwrap_err();
        assert!(e.contains("id: must not be empty"), "{e}");
        let e =
            parse_message_line(br#"{"type":"message","message":{"id":"m","role":"user","parts":[]}} x"#).unwrap_err();
        assert!(e.starts_with("not a JSON entry: trailing characters (column"), "{e}");
        let e = parse_message_line(br#"{"type":"message","message":{"id":"m","parts":[]}}"#).unwrap_err();
        assert_eq!(e, "message: missing field `role` (column 49)");
        assert_eq!(kind(br#"{"a":1}"#).unwrap_err(), "missing field `type` (column 7)");
        let e = parse_prune(br#"{"type":"prune","compactedAt":1,"messageIDs":["a"],"prunedPartIDs":[]}"#).unwrap_err();
        assert!(e.contains("messageIDs has 1"), "{e}");
        let e = parse_compaction(br#"{"type":"compaction","line":4,"request":{"id":"r","offset":1,"line":2}}"#)
            .unwrap_err();
        assert!(e.contains("go together"), "{e}");
        let e = parse_header(br#"{"type":"header","version":9,"id":"s","created":1}"#).unwrap_err();
        assert!(e.contains("version 9"), "{e}");
        let e = parse_header(br#"{"type":"message","message":{}}"#).unwrap_err();
        assert!(e.contains("not a contextfold session"), "{e}");
    }

    #[test]
    fn compaction_records_round_trip() {
        let at = |id: &str, o, l| At { id: id.into(), offset: o, line: l };
        let c = CompactionRecord {
            line: 9,
            request: Some(at("r", 100, 6)),
            summary: Some(at("s", 200, 7)),
            runs: vec![
                Run { id: "h".into(), offset: 30, line: 3, end: 40, count: 1 },
                Run { id: "t".into(), offset: 50, line: 4, end: 250, count: 4 },
            ],
            order: vec![[0, 1], [2, 4], [1, 2]],
            answered: vec![2],
            patches: vec![Loc { offset: 45, line: 4 }],
        };
        let line = encode_compaction(&c);
        assert_eq!(parse_compaction(&line[..line.len() - 1]).unwrap(), c);
        assert_eq!(c.body().line, 0);
        let none = CompactionRecord { line: 5, ..Default::default() };
        assert_eq!(String::from_utf8(encode_compaction(&none)).unwrap(), "{\"type\":\"compaction\",\"line\":5}\n");
        let half = br#"{"type":"compaction","line":4,"summary":{"id":"s","offset":1,"line":2}}"#;
        assert!(parse_compaction(half).unwrap_err().contains("go together"));
    }
}
