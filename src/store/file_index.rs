//! What a writer knows about the file without holding its messages: where each message's lines
//! are, and a skeleton of each (id, role, summary flags, compaction part), enough to compute the
//! view with `policy::View` and so the compaction entry a tail-first load starts from.

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Map;

use super::format::{self, At, CompactionRecord, Kind, Loc, Run};
use super::lines::{Layout, LineChunks};
use super::warning::Warning;
use crate::error::{CfError, Code};
use crate::message::{CompactionPart, Message, MessageError, Part, Role};
use crate::policy::View;

/// What of a message the view depends on; everything else is left out (the same whether the
/// message was read whole or only its `LightMessage` fields).
pub fn skeleton(m: &Message) -> Message {
    let compaction = m.compaction().map(|c| (c.hidden_from_id.clone(), c.tail_start_id.clone()));
    skeleton_of(m.id.clone(), m.role, compaction, m.parent_id.clone(), m.summary, m.finish.clone(), m.error.is_some())
}

/// A skeleton: `compaction` gives the request's hidden range (`hiddenFromID`, `tailStartID`).
fn skeleton_of(
    id: String,
    role: Role,
    compaction: Option<(Option<String>, Option<String>)>,
    parent_id: Option<String>,
    summary: Option<bool>,
    finish: Option<String>,
    failed: bool,
) -> Message {
    let part = |(hidden_from_id, tail_start_id)| {
        Part::Compaction(CompactionPart {
            id: String::new(),
            auto: true,
            overflow: None,
            hidden_from_id,
            tail_start_id,
            files: None,
            extra: Map::new(),
        })
    };
    Message {
        id,
        role,
        parts: compaction.map(|c| vec![part(c)]).unwrap_or_default(),
        time: None,
        parent_id,
        summary,
        finish,
        error: failed.then(|| MessageError { name: String::new(), message: String::new() }),
        tokens: None,
        model: None,
        extra: Map::new(),
    }
}

/// True for compaction requests and summaries: the messages that can change the view.
pub fn is_structural(m: &Message) -> bool {
    m.is_summary() || m.compaction().is_some()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct MsgInfo {
    /// Its `message` line.
    at: Loc,
    /// The offset after its `message` line.
    end: u64,
    /// Its latest `message` or `update` line.
    last: Loc,
    /// `prune` lines naming it after `last`.
    prunes: Vec<Loc>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Index {
    infos: Vec<MsgInfo>,
    skeletons: Vec<Message>,
    positions: HashMap<String, usize>,
}

impl Index {
    /// The line each message was added by, in order.
    pub fn message_lines(&self) -> Vec<u64> {
        self.infos.iter().map(|i| i.at.line).collect()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.positions.contains_key(id)
    }

    pub fn is_structural(&self, id: &str) -> bool {
        self.positions.get(id).is_some_and(|&p| is_structural(&self.skeletons[p]))
    }

    /// `CF_DUPLICATE_ID` when the log already has a message with this id.
    pub fn check_append(&self, msg: &Message) -> crate::error::Result<()> {
        if self.contains(&msg.id) {
            return Err(CfError::new(Code::DuplicateId, format!("message {:?}: id already in the session", msg.id)));
        }
        Ok(())
    }

    /// `CF_NOT_FOUND` when the log has no message with this id; else whether the update is
    /// marked as one that may change the view (of a request or summary, before or after it).
    pub fn check_update(&self, msg: &Message) -> crate::error::Result<bool> {
        if !self.contains(&msg.id) {
            return Err(CfError::new(
                Code::NotFound,
                format!("message {:?}: no message with this id to update", msg.id),
            ));
        }
        Ok(self.is_structural(&msg.id) || is_structural(msg))
    }

    /// `CF_NOT_FOUND` when a pruned message is not in the log.
    pub fn check_prune(&self, p: &format::PruneRecord) -> crate::error::Result<()> {
        match p.message_ids.iter().find(|id| !self.contains(id)) {
            Some(id) => Err(CfError::new(Code::NotFound, format!("prune: message {id:?} is not in the session"))),
            None => Ok(()),
        }
    }

    /// A `message` line `[at, end)`. False (and nothing changes) when the id is already known.
    pub fn on_message(&mut self, at: Loc, end: u64, skeleton: Message) -> bool {
        if self.positions.contains_key(&skeleton.id) {
            return false;
        }
        self.positions.insert(skeleton.id.clone(), self.skeletons.len());
        self.infos.push(MsgInfo { at, end, last: at, prunes: Vec::new() });
        self.skeletons.push(skeleton);
        true
    }

    /// An `update` line at `loc`. False when the id is unknown.
    pub fn on_update(&mut self, loc: Loc, skeleton: Message) -> bool {
        let Some(&p) = self.positions.get(&skeleton.id) else {
            return false;
        };
        let info = &mut self.infos[p];
        info.last = loc;
        info.prunes.clear();
        self.skeletons[p] = skeleton;
        true
    }

    /// A `prune` line at `loc` naming these messages.
    pub fn on_prune<'a>(&mut self, ids: impl IntoIterator<Item = &'a String>, loc: Loc) {
        for id in ids {
            if let Some(&p) = self.positions.get(id) {
                let info = &mut self.infos[p];
                if info.prunes.last() != Some(&loc) {
                    info.prunes.push(loc);
                }
            }
        }
    }

    /// The compaction entry describing the file now, to be written as line `line`.
    pub fn record(&self, line: u64) -> CompactionRecord {
        let n = self.skeletons.len();
        let view = View::compute(n, &|i| &self.skeletons[i], &self.positions);
        let Some(base) = view.base(n) else {
            return CompactionRecord { line, ..Default::default() };
        };
        let cut = base.cut.clone().expect("a base has a cut");
        // The messages shown after the summary, in file order, and their runs of positions.
        let mut shown = base.order.clone();
        shown.sort_unstable();
        let mut runs: Vec<Run> = Vec::new();
        let mut prev: Option<usize> = None;
        for &p in &shown {
            let info = &self.infos[p];
            match runs.last_mut() {
                Some(run) if prev == Some(p - 1) => {
                    run.end = info.end;
                    run.count += 1;
                }
                _ => runs.push(Run {
                    id: self.skeletons[p].id.clone(),
                    offset: info.at.offset,
                    line: info.at.line,
                    end: info.end,
                    count: 1,
                }),
            }
            prev = Some(p);
        }
        let index_of = |p: usize| shown.binary_search(&p).expect("shown") as u64;
        let mut order: Vec<[u64; 2]> = Vec::new();
        for &p in &base.order {
            let k = index_of(p);
            match order.last_mut() {
                Some(r) if r[1] == k => r[1] += 1,
                _ => order.push([k, k + 1]),
            }
        }
        let answered = base.answered.iter().filter(|p| shown.binary_search(p).is_ok()).map(|&p| index_of(p)).collect();
        // Later versions of shown messages that the runs do not cover.
        let last_start = runs.last().map_or(u64::MAX, |r| r.offset);
        let covered = |l: &Loc| l.offset >= last_start || runs.iter().any(|r| (r.offset..r.end).contains(&l.offset));
        let mut patches: Vec<Loc> = shown
            .iter()
            .map(|&p| &self.infos[p])
            .flat_map(|i| std::iter::once(i.last).chain(i.prunes.iter().copied()))
            .filter(|l| !covered(l))
            .collect();
        patches.sort();
        patches.dedup();
        let at = |p: usize| At::new(&self.skeletons[p].id, self.infos[p].at);
        CompactionRecord {
            line,
            request: Some(at(cut.request)),
            summary: Some(at(cut.summary)),
            runs,
            order,
            answered,
            patches,
        }
    }
}

/// The fields of a message line the index needs; the rest is skipped without being built.
#[derive(Deserialize)]
struct LightLine {
    #[serde(default)]
    view: bool,
    message: LightMessage,
}

#[derive(Deserialize)]
struct LightMessage {
    id: String,
    role: Role,
    #[serde(rename = "parentID", default)]
    parent_id: Option<String>,
    #[serde(default)]
    summary: Option<bool>,
    #[serde(default)]
    finish: Option<String>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    parts: Vec<LightPart>,
}

#[derive(Deserialize)]
struct LightPart {
    #[serde(rename = "type")]
    ty: String,
    #[serde(rename = "tailStartID", default)]
    tail: Option<String>,
    #[serde(rename = "hiddenFromID", default)]
    hidden: Option<String>,
}

impl LightMessage {
    fn skeleton(self) -> Message {
        let compaction = match self.role {
            Role::User => self.parts.into_iter().find(|p| p.ty == "compaction").map(|p| (p.hidden, p.tail)),
            _ => None,
        };
        skeleton_of(self.id, self.role, compaction, self.parent_id, self.summary, self.finish, self.error.is_some())
    }
}

/// The index of a whole file, as a writer needs it.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scanned {
    pub index: Index,
    /// Complete lines, the header included.
    pub lines: u64,
    /// The offset after the last line indexed.
    pub end: u64,
    /// The latest compaction entry.
    pub latest: Option<CompactionRecord>,
    /// An update marked `view` follows the latest compaction entry (a crash came between them).
    pub stale: bool,
    /// Lines that could not be read (the loads report them too, when they read them).
    pub warnings: Vec<Warning>,
}

/// Bytes read per step of the scan: small enough that a close waiting for a cancelled scan
/// waits for little more than one read.
const CHUNK: usize = 256 << 10;

/// Reads every line of `[body, end)`, skipping message contents. `cancel` stops it early.
pub fn scan(file: &File, layout: &Layout, cancel: &AtomicBool) -> io::Result<Scanned> {
    let mut out = Scanned { lines: 1, end: layout.body, ..Default::default() };
    let mut chunks = LineChunks::new(file, Loc { offset: layout.body, line: 2 }, layout.end, CHUNK);
    let cancelled = || cancel.load(Ordering::Relaxed).then(|| io::Error::new(io::ErrorKind::Interrupted, "closed"));
    loop {
        if let Some(e) = cancelled() {
            return Err(e);
        }
        let Some(lines) = chunks.next_lines()? else {
            break;
        };
        for (loc, line) in lines {
            // A line costs microseconds to index: checked at each one, a close waits for one.
            if let Some(e) = cancelled() {
                return Err(e);
            }
            if let Err(problem) = scan_line(&mut out, loc, loc.offset + line.len() as u64 + 1, line) {
                out.warnings.push(Warning::at(loc, problem));
            }
        }
    }
    Ok(out)
}

/// What a line tells the index, however it was read.
#[derive(Debug, PartialEq)]
pub enum Noted {
    Message(Message),
    /// The new version's skeleton, and whether the line is marked as one that may change the view.
    Update(Message, bool),
    Prune(Vec<String>),
    Compaction(CompactionRecord),
    /// Nothing the index keeps (pins, entry types unknown to this version).
    Nothing,
}

impl Scanned {
    /// Indexes the line at `loc`; the next line starts at `next`.
    pub fn note(&mut self, loc: Loc, next: u64, line: Noted) -> Result<(), String> {
        self.lines += 1;
        self.end = next;
        match line {
            Noted::Message(m) => {
                let id = m.id.clone();
                if !self.index.on_message(loc, next, m) {
                    return Err(format!("message {id:?} was already added"));
                }
            }
            Noted::Update(m, view) => {
                self.stale |= view;
                let id = m.id.clone();
                if !self.index.on_update(loc, m) {
                    return Err(format!("update of message {id:?}, which no earlier line adds"));
                }
            }
            Noted::Prune(ids) => self.index.on_prune(&ids, loc),
            Noted::Compaction(rec) => {
                self.latest = Some(rec);
                self.stale = false;
            }
            Noted::Nothing => {}
        }
        Ok(())
    }
}

/// Indexes one line at `loc`, reading only what the index needs; the next line starts at `next`.
pub fn scan_line(out: &mut Scanned, loc: Loc, next: u64, line: &[u8]) -> Result<(), String> {
    let light = |line: &[u8]| -> Result<LightLine, String> {
        serde_json::from_slice::<LightLine>(line).map_err(|e| format!("not a valid entry ({e})"))
    };
    let noted = match format::kind(line) {
        Ok(Kind::Message) => light(line).map(|l| Noted::Message(l.message.skeleton())),
        Ok(Kind::Update) => light(line).map(|l| Noted::Update(l.message.skeleton(), l.view)),
        Ok(Kind::Prune) => format::parse_prune(line).map(|p| Noted::Prune(p.message_ids)),
        Ok(Kind::Compaction) => format::parse_compaction(line).map(Noted::Compaction),
        Ok(Kind::Pins) => format::parse_pins(line).map(|_| Noted::Nothing),
        Ok(Kind::Header) => Err("a second header".into()),
        Ok(Kind::Unknown) => Ok(Noted::Nothing),
        Err(e) => Err(e),
    };
    match noted {
        Ok(n) => out.note(loc, next, n),
        // A line that does not read still counts, as one that tells the index nothing.
        Err(problem) => out.note(loc, next, Noted::Nothing).and(Err(problem)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::{json, Value};

    fn loc(n: u64) -> Loc {
        Loc { offset: n * 10, line: n }
    }

    fn msg(v: Value) -> Message {
        parse_message(v).unwrap()
    }

    fn plain(ix: &mut Index, id: &str, n: u64) {
        assert!(ix.on_message(loc(n), n * 10 + 9, msg(json!({"id": id, "role": "user", "parts": []}))));
    }

    fn request(id: &str, tail: Option<&str>, hidden: Option<&str>) -> Message {
        let mut part = json!({"type": "compaction", "id": "c", "auto": true});
        if let Some(t) = tail {
            part["tailStartID"] = json!(t);
        }
        if let Some(h) = hidden {
            part["hiddenFromID"] = json!(h);
        }
        msg(json!({"id": id, "role": "user", "parts": [{"type": "text", "id": "t", "text": "x"}, part]}))
    }

    fn summary(id: &str, parent: &str, completed: bool) -> Message {
        let mut m = json!({"id": id, "role": "assistant", "parentID": parent, "summary": true, "parts": []});
        if completed {
            m["finish"] = json!("stop");
        }
        msg(m)
    }

    #[test]
    fn skeletons_keep_what_the_view_reads() {
        let req = request("r", Some("m3"), Some("m1"));
        let sk = skeleton(&req);
        let range = |m: &Message| m.compaction().map(|c| (c.hidden_from_id.clone(), c.tail_start_id.clone()));
        assert_eq!(range(&sk), range(&req));
        assert_eq!(sk.parts.len(), 1);
        let light = |v: Value| -> Message {
            let l: LightLine = serde_json::from_value(json!({ "message": v })).unwrap();
            l.message.skeleton()
        };
        for v in [
            json!({"id": "s", "role": "assistant", "parentID": "r", "summary": true, "finish": "stop", "parts": [{"type": "text", "id": "t", "text": "x"}]}),
            json!({"id": "s", "role": "assistant", "parentID": "r", "summary": true, "finish": "", "parts": []}),
            json!({"id": "s", "role": "assistant", "parentID": "r", "summary": true, "finish": "stop", "error": {"name": "E", "message": "x"}, "parts": []}),
            json!({"id": "r", "role": "user", "parts": [{"type": "compaction", "id": "c", "auto": false, "tailStartID": "m3"}]}),
            json!({"id": "a", "role": "assistant", "parts": [{"type": "compaction", "id": "c", "auto": true}]}),
        ] {
            let m = msg(v.clone());
            let (a, b) = (skeleton(&m), light(v));
            // Read whole or light, a message gives the same skeleton, which the view reads as the
            // message.
            assert_eq!(a, b);
            assert_eq!(a.is_completed_summary(), m.is_completed_summary());
            assert_eq!(a.is_summary(), m.is_summary());
            assert_eq!(a.parent_id, m.parent_id);
            assert_eq!(range(&a), range(&m));
            assert_eq!(is_structural(&a), is_structural(&m));
        }
    }

    #[test]
    fn the_record_names_what_the_context_shows() {
        let mut ix = Index::default();
        for (i, id) in ["m1", "m2", "m3", "m4"].iter().enumerate() {
            plain(&mut ix, id, i as u64 + 2);
        }
        assert_eq!(ix.record(6), CompactionRecord { line: 6, ..Default::default() });
        assert!(ix.on_message(loc(6), 69, request("r1", Some("m3"), Some("m2"))));
        assert!(ix.on_message(loc(7), 79, summary("s1", "r1", false)));
        assert!(ix.record(8).summary.is_none());
        assert!(ix.on_update(loc(8), summary("s1", "r1", true)));
        assert!(ix.is_structural("s1") && !ix.is_structural("m1"));
        // An update of a shown message before the runs' end becomes a patch.
        assert!(ix.on_update(loc(9), msg(json!({"id": "m1", "role": "user", "parts": []}))));
        ix.on_prune(&["m3".to_string(), "m3".to_string(), "zz".to_string()], loc(10));
        let rec = ix.record(11);
        assert_eq!(rec.request, Some(At::new("r1", loc(6))));
        assert_eq!(rec.summary, Some(At::new("s1", loc(7))));
        // Shown: m1 (head), then r1, s1, then m3, m4 (the tail); in file order m1 | m3 m4 r1 s1.
        assert_eq!(
            rec.runs,
            vec![
                Run { id: "m1".into(), offset: 20, line: 2, end: 29, count: 1 },
                Run { id: "m3".into(), offset: 40, line: 4, end: 79, count: 4 },
            ]
        );
        assert_eq!(rec.order, vec![[0, 1], [3, 5], [1, 3]]);
        assert_eq!(rec.answered, vec![3]);
        // Both later lines fall inside the last run's reach (it is read to the end of the file).
        assert_eq!(rec.patches, vec![]);
        // The summary fails after all: no compaction applies any more.
        assert!(ix.on_update(loc(12), summary("s1", "r1", false)));
        assert!(ix.record(13).summary.is_none());
        assert!(!ix.on_message(loc(14), 149, summary("s1", "r1", true)));
        assert!(!ix.on_update(loc(14), summary("nope", "r1", true)));
    }

    #[test]
    fn updates_between_runs_become_patches() {
        let mut ix = Index::default();
        plain(&mut ix, "h", 2);
        plain(&mut ix, "x1", 3);
        // h edited and pruned while x1.. are still shown; then a compaction keeps h and t.
        assert!(ix.on_update(loc(4), msg(json!({"id": "h", "role": "user", "parts": []}))));
        ix.on_prune(&["h".to_string()], loc(5));
        plain(&mut ix, "x2", 6);
        plain(&mut ix, "t", 7);
        assert!(ix.on_message(loc(8), 89, request("r", Some("t"), Some("x1"))));
        assert!(ix.on_message(loc(9), 99, summary("s", "r", true)));
        let rec = ix.record(10);
        assert_eq!(rec.runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["h", "t"]);
        assert_eq!(rec.patches, vec![loc(4), loc(5)]);
        assert_eq!(rec.order, vec![[0, 1], [2, 4], [1, 2]]);
    }
}
