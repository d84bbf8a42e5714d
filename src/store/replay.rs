//! Entries applied in file order give the messages: `message` adds one, `update` replaces it,
//! `prune` marks tool outputs with `compactedAt`; `compaction` entries only say where to read
//! (a load uses them before the replay).

use rustc_hash::FxHashMap;

use super::format::{self, CompactionRecord, Kind, Loc, PruneRecord};
use crate::message::{Message, Part, ToolState};
use crate::session::{recorded_pins, Pin};
use crate::tokens::{message_total, Counter, MessageCount};

/// One line, parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    Header,
    Message(Message),
    /// The new version, and whether the line is marked as one that may change the view.
    Update(Message, bool),
    Prune(PruneRecord),
    Compaction(CompactionRecord),
    Pins(Vec<Pin>),
    /// An entry type this version does not know.
    Unknown,
}

/// Parses one line (no `\n`). The error says what is wrong with it.
pub fn decode(line: &[u8]) -> Result<Decoded, String> {
    decode_counted(line, None).0
}

/// A parsed line, and with a counter its message's token counts: those the line records when
/// they are the counter's (see `counts`), else counted by the thread that parsed it, while its
/// text is in that core's cache.
pub type Decode = (Result<Decoded, String>, Option<MessageCount>);

pub fn decode_counted(line: &[u8], counter: Option<&Counter>) -> Decode {
    let message = |line| -> Result<(Message, bool, Option<MessageCount>), String> {
        let (m, view, recorded) = format::parse_message_line(line)?;
        let count = counter.map(|c| recorded.and_then(|r| r.counts(c, &m)).unwrap_or_else(|| c.message(&m)));
        Ok((m, view, count))
    };
    let kind = match format::kind(line) {
        Ok(k) => k,
        Err(e) => return (Err(e), None),
    };
    let decoded = match kind {
        Kind::Message | Kind::Update => {
            return match message(line) {
                Ok((m, _, count)) if kind == Kind::Message => (Ok(Decoded::Message(m)), count),
                Ok((m, view, count)) => (Ok(Decoded::Update(m, view)), count),
                Err(e) => (Err(e), None),
            }
        }
        Kind::Header => Ok(Decoded::Header),
        Kind::Prune => format::parse_prune(line).map(Decoded::Prune),
        Kind::Compaction => format::parse_compaction(line).map(Decoded::Compaction),
        Kind::Pins => format::parse_pins(line).map(Decoded::Pins),
        Kind::Unknown => Ok(Decoded::Unknown),
    };
    (decoded, None)
}

/// A thread is worth starting for this many bytes (most of a ms of parsing): below, waking another
/// core costs about what it saves.
pub const MIN_PER_THREAD: usize = 256 << 10;

/// Parses lines on every core (the order of the results is the order of the lines).
pub fn decode_all(lines: &[(Loc, &[u8])], counter: Option<&Counter>) -> Vec<Decode> {
    let total: usize = lines.iter().map(|(_, l)| l.len() + 1).sum();
    let threads = crate::cores::cores().min(total / MIN_PER_THREAD).max(1);
    if threads == 1 {
        return lines.iter().map(|(_, l)| decode_counted(l, counter)).collect();
    }
    // Split by bytes, not by lines: one long line should not leave a thread with all the work.
    let share = total.div_ceil(threads);
    let mut chunks: Vec<&[(Loc, &[u8])]> = Vec::with_capacity(threads);
    let (mut start, mut acc) = (0, 0);
    for (i, (_, l)) in lines.iter().enumerate() {
        acc += l.len() + 1;
        if acc >= share {
            chunks.push(&lines[start..=i]);
            start = i + 1;
            acc = 0;
        }
    }
    if start < lines.len() {
        chunks.push(&lines[start..]);
    }
    std::thread::scope(|scope| {
        let workers: Vec<_> = chunks
            .into_iter()
            .map(|chunk| scope.spawn(move || chunk.iter().map(|(_, l)| decode_counted(l, counter)).collect::<Vec<_>>()))
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("decoding never panics")).collect()
    })
}

/// Messages, and their counts where known.
pub type Replayed = (Vec<Message>, Vec<Option<MessageCount>>);

/// What applying an entry did, besides changing messages.
#[derive(Debug, PartialEq)]
pub enum Applied {
    Done,
    /// An entry type this version does not know, skipped.
    Skipped,
}

/// Messages rebuilt from entries. A partial replay (a tail-first load) ignores updates and prunes
/// of messages it did not read; a full one treats an update of an unknown id as corrupt.
#[derive(Debug, Default)]
pub struct Replay {
    messages: Vec<Message>,
    /// Token counts of the messages as they stand (`None`: not counted, or changed since).
    counts: Vec<Option<MessageCount>>,
    index: FxHashMap<String, usize>,
    lines: Vec<u64>,
    partial: bool,
    /// The newest pins: a `pins` line, or the snapshot a compaction request recorded.
    pins: Option<Vec<Pin>>,
    /// The counter of `counts`: a prune's new counts come from the ones before it.
    counter: Option<Counter>,
}

impl Replay {
    pub fn new(partial: bool, counter: Option<&Counter>) -> Replay {
        Replay { partial, counter: counter.copied(), ..Default::default() }
    }

    /// Applies one entry; `count` is the counts of the message it carries, if known.
    /// The replay of a file's first lines, as a snapshot of it kept them: `lines[i]` is the line
    /// that added `messages[i]`. `None` when two messages have the same id.
    pub fn resume(
        messages: Vec<Message>,
        counts: Vec<Option<MessageCount>>,
        lines: Vec<u64>,
        pins: Option<Vec<Pin>>,
        counter: Option<&Counter>,
    ) -> Option<Replay> {
        let index: FxHashMap<String, usize> = messages.iter().enumerate().map(|(i, m)| (m.id.clone(), i)).collect();
        (index.len() == messages.len() && lines.len() == messages.len() && counts.len() == messages.len())
            .then(|| Replay { messages, counts, index, lines, partial: false, pins, counter: counter.copied() })
    }

    pub fn apply(&mut self, loc: Loc, entry: Decoded, count: Option<MessageCount>) -> Result<Applied, String> {
        match entry {
            Decoded::Header => return Err("a second header".into()),
            Decoded::Message(m) => {
                if let Some(&i) = self.index.get(&m.id) {
                    return Err(format!("message {:?} was already added at line {}", m.id, self.lines[i]));
                }
                if let Some(pins) = recorded_pins(&m) {
                    self.pins = Some(pins);
                }
                self.index.insert(m.id.clone(), self.messages.len());
                self.messages.push(m);
                self.counts.push(count);
                self.lines.push(loc.line);
            }
            Decoded::Update(m, _) => match self.index.get(&m.id) {
                Some(&i) => {
                    self.messages[i] = m;
                    self.counts[i] = count;
                }
                None if self.partial => {}
                None => return Err(format!("update of message {:?}, which no earlier line adds", m.id)),
            },
            Decoded::Prune(p) => self.prune(&p),
            Decoded::Compaction(_) => {}
            Decoded::Pins(p) => self.pins = Some(p),
            Decoded::Unknown => return Ok(Applied::Skipped),
        }
        Ok(Applied::Done)
    }

    /// Marks the listed tool outputs as cleared; parts that are not completed tool calls, and
    /// messages not read, are left alone. A part's counts follow from its counts before (its
    /// output is not counted again); a part pruned again is counted afresh.
    fn prune(&mut self, p: &PruneRecord) {
        for (k, (mid, pid)) in p.message_ids.iter().zip(&p.part_ids).enumerate() {
            let stub = p.stubs.get(k).cloned().flatten();
            let Some(&i) = self.index.get(mid) else {
                continue;
            };
            for (j, part) in self.messages[i].parts.iter_mut().enumerate() {
                let Part::Tool(t) = part else {
                    continue;
                };
                let ToolState::Completed { compacted_at, extra, .. } = &mut t.state else {
                    continue;
                };
                if &t.id != pid {
                    continue;
                }
                let first = compacted_at.is_none();
                *compacted_at = Some(p.compacted_at);
                if let Some(s) = &stub {
                    extra.insert("compactedAs".into(), serde_json::Value::String(s.clone()));
                }
                let counted = self.counts[i].as_mut().filter(|_| first).zip(self.counter.as_ref());
                match counted.and_then(|((parts, total), c)| Some((c.pruned(part, parts[j])?, parts, total))) {
                    Some((now, parts, total)) => {
                        parts[j] = now;
                        *total = message_total(parts);
                    }
                    None => self.counts[i] = None,
                }
            }
        }
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Line numbers of the messages' `message` lines.
    pub fn lines(&self) -> &[u64] {
        &self.lines
    }

    /// The newest pins read, if any line recorded them.
    pub fn take_pins(&mut self) -> Option<Vec<Pin>> {
        self.pins.take()
    }

    /// The messages, and their counts where known.
    pub fn into_messages(self) -> Replayed {
        (self.messages, self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::json;

    fn loc(line: u64) -> Loc {
        Loc { offset: line * 100, line }
    }

    fn tool_msg(id: &str) -> Message {
        parse_message(json!({"id": id, "role": "assistant", "parts": [
            {"type": "tool", "id": format!("{id}-t"), "callID": "c", "tool": "bash",
             "state": {"status": "completed", "input": {}, "output": "out"}},
            {"type": "text", "id": format!("{id}-x"), "text": "t"}
        ]}))
        .unwrap()
    }

    #[test]
    fn entries_apply_in_order() {
        let mut r = Replay::new(false, None);
        r.apply(loc(2), Decoded::Message(tool_msg("a")), None).unwrap();
        r.apply(loc(3), Decoded::Message(tool_msg("b")), None).unwrap();
        let prune = PruneRecord {
            compacted_at: 7.0,
            message_ids: vec!["a".into(), "a".into(), "zz".into()],
            part_ids: vec!["a-t".into(), "a-x".into(), "zz-t".into()],
            ..Default::default()
        };
        r.apply(loc(4), Decoded::Prune(prune), None).unwrap();
        let Part::Tool(t) = &r.messages()[0].parts[0] else { panic!() };
        assert!(t.is_pruned());
        let mut b2 = tool_msg("b");
        b2.finish = Some("stop".into());
        r.apply(loc(5), Decoded::Update(b2.clone(), false), None).unwrap();
        assert_eq!(r.messages()[1], b2);
        assert_eq!(
            r.apply(loc(6), Decoded::Message(tool_msg("a")), None).unwrap_err(),
            "message \"a\" was already added at line 2"
        );
        assert!(r
            .apply(loc(7), Decoded::Update(tool_msg("c"), false), None)
            .unwrap_err()
            .contains("no earlier line adds"));
        assert_eq!(r.apply(loc(8), Decoded::Unknown, None).unwrap(), Applied::Skipped);
        assert!(r.apply(loc(9), Decoded::Header, None).is_err());
        let mut partial = Replay::new(true, None);
        assert_eq!(partial.apply(loc(2), Decoded::Update(tool_msg("c"), true), None).unwrap(), Applied::Done);
        assert!(partial.messages().is_empty());
    }

    #[test]
    fn counts_follow_updates_and_prunes() {
        let counter =
            Counter { tokenizer: crate::tokens::Tokenizer::Estimate, image_tokens: 1000, output_max_chars: None };
        let count = |id: &str| Some(counter.message(&tool_msg(id)));
        let mut r = Replay::new(false, Some(&counter));
        r.apply(loc(2), Decoded::Message(tool_msg("a")), count("a")).unwrap();
        r.apply(loc(3), Decoded::Message(tool_msg("b")), count("b")).unwrap();
        r.apply(loc(4), Decoded::Message(tool_msg("c")), count("c")).unwrap();
        // A pruned output's counts follow from those it was read with; pruned again (another
        // stub), it is counted afresh; an update brings its own.
        let prune = |stubs: Vec<Option<String>>| PruneRecord {
            compacted_at: 7.0,
            message_ids: vec!["a".into()],
            part_ids: vec!["a-t".into()],
            stubs,
        };
        r.apply(loc(5), Decoded::Prune(prune(vec![])), None).unwrap();
        let pruned = counter.message(&r.messages()[0]);
        assert_ne!(Some(pruned.clone()), count("a"));
        assert_eq!(r.counts[0], Some(pruned));
        r.apply(loc(6), Decoded::Prune(prune(vec![Some("[gone]".into())])), None).unwrap();
        assert_eq!(r.counts[0], None);
        r.apply(loc(7), Decoded::Update(tool_msg("b"), false), None).unwrap();
        let (messages, counts) = r.into_messages();
        assert_eq!(messages.len(), 3);
        assert_eq!(counts, vec![None, None, count("c")]);
    }

    #[test]
    fn parallel_decoding_keeps_the_order() {
        // Lines long enough (3 MB in all) to be shared between threads.
        let long = |id: &str| {
            let mut m = tool_msg(id);
            let Part::Tool(t) = &mut m.parts[0] else { unreachable!() };
            let ToolState::Completed { output, .. } = &mut t.state else { unreachable!() };
            *output = "out ".repeat(750).into();
            m
        };
        let lines: Vec<Vec<u8>> = (0..1000)
            .map(|i| {
                let mut l = format::encode_message(&long(&format!("m{i}")), None);
                l.pop();
                if i % 97 == 5 {
                    l.truncate(l.len() / 2);
                }
                l
            })
            .collect();
        let refs: Vec<(Loc, &[u8])> =
            lines.iter().enumerate().map(|(i, l)| (loc(i as u64 + 2), l.as_slice())).collect();
        let counter =
            Counter { tokenizer: crate::tokens::Tokenizer::Estimate, image_tokens: 1000, output_max_chars: None };
        let serial: Vec<_> = refs.iter().map(|(_, l)| decode_counted(l, Some(&counter))).collect();
        assert_eq!(decode_all(&refs, Some(&counter)), serial);
        assert!(serial[5].0.is_err() && serial[5].1.is_none());
        assert_eq!(serial[6].1, Some(counter.message(&long("m6"))));
        assert!(decode_all(&refs, None).iter().all(|(_, count)| count.is_none()));
    }
}
