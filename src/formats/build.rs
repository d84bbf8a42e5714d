//! The message builder every importer writes through: unique ids, tool calls paired with their
//! results, compactions in our shape, and the bookkeeping behind `ImportStats`.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use super::{Format, ImportStats, Imported, Warning};
use crate::message::{
    is_media, other_fields, usage_from_provider, CompactionPart, FilePart, Message, MessageError, ModelRef, Part,
    ReasoningPart, Role, TextPart, Time, ToolPart, ToolState, Usage,
};

/// What a tool call came back with.
#[derive(Clone, Debug)]
pub enum Outcome {
    Ok { output: String, attachments: Vec<(String, String)> },
    Err(String),
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
    }
}

impl Outcome {
    pub fn text(output: impl Into<String>) -> Outcome {
        Outcome::Ok { output: output.into(), attachments: Vec::new() }
    }
}

pub struct Builder {
    format: Format,
    pub messages: Vec<Message>,
    warnings: Vec<Warning>,
    pub stats: ImportStats,
    /// A system prompt and tool definitions the source records outside the messages.
    pub overhead: super::Overhead,
    ids: HashSet<String>,
    seq: usize,
    /// Tool parts still waiting for a result, per call id, oldest first.
    open: HashMap<String, VecDeque<(usize, usize)>>,
    answered: HashSet<String>,
    calls: HashSet<String>,
    /// Count every call made, even under a reused id (formats whose ids repeat across calls).
    count_each: bool,
    /// The parent of answers with no user message before them in this import.
    parent: Option<String>,
    each: usize,
}

impl Builder {
    pub fn new(format: Format, warnings: Vec<Warning>) -> Builder {
        Builder {
            format,
            messages: Vec::new(),
            warnings,
            stats: ImportStats::default(),
            overhead: super::Overhead::default(),
            ids: HashSet::new(),
            seq: 0,
            open: HashMap::new(),
            answered: HashSet::new(),
            calls: HashSet::new(),
            count_each: false,
            each: 0,
            parent: None,
        }
    }

    /// Generated ids continue after `n` (`<format>-<n+1>`...): messages appended to a session that
    /// holds `n` messages get ids no earlier import gave.
    pub fn ids_after(&mut self, n: usize) {
        self.seq = n;
    }

    /// The user message new answers reply to when none was imported with them (the session's).
    pub fn answer_to(&mut self, parent: Option<String>) {
        self.parent = parent;
    }

    /// Takes up an existing message (the last one of a session) so that results arriving now
    /// complete its open calls.
    pub fn resume(&mut self, m: Message) -> usize {
        self.ids.insert(m.id.clone());
        let mi = self.messages.len();
        for (pi, p) in m.parts.iter().enumerate() {
            if let Part::Tool(t) = p {
                if matches!(t.state, ToolState::Pending { .. } | ToolState::Running { .. }) {
                    self.open.entry(t.call_id.clone()).or_default().push_back((mi, pi));
                } else {
                    self.answered.insert(t.call_id.clone());
                }
            }
        }
        self.messages.push(m);
        mi
    }

    pub fn warn(&mut self, line: usize, message: impl Into<String>) {
        self.warnings.push(Warning { line, message: message.into() });
    }

    /// Counts a conversation record of the source.
    pub fn record(&mut self) {
        self.stats.records += 1;
    }

    /// Counts each call `tool_call` adds, reused ids included (where a source reuses an id for a
    /// new call, as SWE-agent replays do), instead of distinct ids.
    pub fn count_each_call(&mut self) {
        self.count_each = true;
    }

    /// Counts a tool-call id of the source (distinct ids only).
    pub fn note_call(&mut self, id: &str) {
        self.calls.insert(id.to_string());
    }

    /// A fresh message id: `preferred` when it is free, else a numbered variant; a generated
    /// `<format>-<n>` without one. Ids depend only on the input, so re-importing gives the same ids.
    pub fn message_id(&mut self, preferred: Option<&str>) -> String {
        if let Some(p) = preferred.filter(|p| !p.is_empty()) {
            if self.ids.insert(p.to_string()) {
                return p.to_string();
            }
            let mut n = 2;
            loop {
                let candidate = format!("{p}-{n}");
                if self.ids.insert(candidate.clone()) {
                    return candidate;
                }
                n += 1;
            }
        }
        loop {
            self.seq += 1;
            let candidate = format!("{}-{}", self.format.as_str(), self.seq);
            if self.ids.insert(candidate.clone()) {
                return candidate;
            }
        }
    }

    /// Starts a message (not yet added).
    pub fn message(&mut self, id: Option<&str>, role: Role, time: Option<f64>) -> Message {
        Message::new(self.message_id(id), role, Vec::new(), time.map(|created| Time { created, completed: None }))
    }

    /// Adds a message; `from_record` says whether a source record of its own stands behind it.
    pub fn push(&mut self, mut m: Message, from_record: bool) -> usize {
        if m.role == Role::Assistant && m.parent_id.is_none() {
            m.parent_id = self
                .messages
                .iter()
                .rev()
                .find(|p| p.role == Role::User && p.compaction().is_none())
                .map(|p| p.id.clone())
                .or_else(|| self.parent.clone());
        }
        if !from_record {
            self.stats.added += 1;
        }
        self.messages.push(m);
        self.messages.len() - 1
    }

    /// Adds a message made of one record: a new message, or nothing when it is empty (skipped).
    pub fn push_nonempty(&mut self, m: Message) -> Option<usize> {
        if m.parts.is_empty() && m.error.is_none() {
            self.skip(&format!("{} (empty)", role_name(m.role)));
            None
        } else {
            Some(self.push(m, true))
        }
    }

    /// A conversation record with nothing for the model, by its kind in the source.
    pub fn skip(&mut self, kind: &str) {
        self.stats.skipped += 1;
        self.omit(kind);
    }

    /// A line outside the conversation (metadata, UI events), by its kind in the source.
    pub fn omit(&mut self, kind: &str) {
        *self
            .stats
            .omitted
            .entry(if kind.is_empty() { "(no type)".to_string() } else { kind.to_string() })
            .or_default() += 1;
    }

    /// Marks the results of these calls as cleared by the source agent at `at` (epoch ms), as a
    /// prune would (an error result too: it reads as cleared, and keeps its status); returns how
    /// many were found.
    pub fn clear_results(&mut self, call_ids: &[&str], at: f64) -> usize {
        let mut n = 0;
        for m in &mut self.messages {
            for p in &mut m.parts {
                let Part::Tool(t) = p else { continue };
                if !call_ids.contains(&t.call_id.as_str()) {
                    continue;
                }
                match &mut t.state {
                    ToolState::Completed { compacted_at, .. } => {
                        compacted_at.get_or_insert(at);
                    }
                    ToolState::Error { extra, .. } => {
                        extra.entry("compactedAt").or_insert(Value::from(at));
                    }
                    ToolState::Pending { .. } | ToolState::Running { .. } => continue,
                }
                n += 1;
            }
        }
        n
    }

    /// Marks the oldest `limit` images and PDFs still in the context (after the newest summary)
    /// as cleared by the source agent at `at`; returns how many it cleared and how many the
    /// context held.
    pub fn clear_media(&mut self, limit: usize, at: f64) -> (usize, usize) {
        let start = self.messages.iter().rposition(|m| m.summary == Some(true)).map_or(0, |i| i + 1);
        let mut files: Vec<&mut FilePart> = self.messages[start..]
            .iter_mut()
            .flat_map(|m| &mut m.parts)
            .filter_map(|p| match p {
                Part::File(f) if is_media(&f.mime) && !f.is_cleared() => Some(f),
                _ => None,
            })
            .collect();
        let held = files.len();
        for f in files.iter_mut().take(limit) {
            f.extra.insert("compactedAt".into(), Value::from(at));
        }
        (held.min(limit), held)
    }

    pub fn merged(&mut self) {
        self.stats.merged += 1;
    }

    pub fn off_branch(&mut self, n: usize) {
        self.stats.off_branch += n;
    }

    fn next_part_id(m: &Message) -> String {
        format!("{}.{}", m.id, m.parts.len())
    }

    pub fn text(m: &mut Message, text: impl Into<String>, synthetic: bool) {
        let text = text.into();
        if text.is_empty() {
            return;
        }
        let id = Self::next_part_id(m);
        m.parts.push(Part::Text(TextPart {
            id,
            text: text.into(),
            synthetic: synthetic.then_some(true),
            extra: Map::new(),
        }));
    }

    pub fn reasoning(m: &mut Message, text: impl Into<String>, extra: Map<String, Value>) {
        let text = text.into();
        if text.is_empty() {
            return;
        }
        let id = Self::next_part_id(m);
        m.parts.push(Part::Reasoning(ReasoningPart { id, text: text.into(), extra }));
    }

    pub fn file(m: &mut Message, mime: &str, url: String, filename: Option<String>) {
        if url.is_empty() {
            Self::text(m, super::content::stripped_image(mime), true);
            return;
        }
        let id = Self::next_part_id(m);
        m.parts.push(Part::File(FilePart { id, mime: mime.to_string(), url, filename, extra: Map::new() }));
    }

    /// Keeps a transcript item this model has no part for, as a part of unknown kind
    /// ([`other_fields`]: wrapped when it could not read back as one).
    pub fn other(m: &mut Message, item: &Value) {
        let mut value = other_fields(item);
        value.insert("id".into(), Value::String(Self::next_part_id(m)));
        m.parts.push(Part::Other(Value::Object(value)));
    }

    /// Adds a tool call to message `mi`, waiting for its result.
    pub fn tool_call(&mut self, mi: usize, call_id: &str, tool: &str, input: Value) {
        if self.count_each {
            self.each += 1;
        } else {
            self.note_call(call_id);
        }
        self.add_call(mi, call_id, tool, input);
    }

    fn add_call(&mut self, mi: usize, call_id: &str, tool: &str, input: Value) {
        let m = &mut self.messages[mi];
        let part = ToolPart {
            id: Self::next_part_id(m),
            call_id: call_id.to_string(),
            tool: if tool.is_empty() { "unknown" } else { tool }.to_string(),
            state: ToolState::Pending { input, extra: Map::new() },
            extra: Map::new(),
        };
        m.parts.push(Part::Tool(part));
        let pi = m.parts.len() - 1;
        self.open.entry(call_id.to_string()).or_default().push_back((mi, pi));
    }

    /// Whether message `mi` already holds a call with this id.
    pub fn has_call(&self, mi: usize, call_id: &str) -> bool {
        self.messages[mi].parts.iter().any(|p| matches!(p, Part::Tool(t) if t.call_id == call_id))
    }

    /// Completes the oldest open call with this id. A result without a call gets an assistant
    /// message of its own (with a warning), so nothing is lost and every result keeps its call; a
    /// second result for an answered call is dropped with a warning.
    pub fn result(&mut self, line: usize, call_id: &str, tool: Option<&str>, outcome: Outcome) {
        let slot = self.open.get_mut(call_id).and_then(VecDeque::pop_front);
        let (mi, pi) = match slot {
            Some(s) => s,
            None if self.answered.contains(call_id) => {
                self.warn(line, format!("a second result for tool call {call_id:?} was ignored"));
                return;
            }
            None => {
                self.warn(
                    line,
                    format!("result for tool call {call_id:?}, which has no call: kept with a call of its own"),
                );
                let mut m = self.message(None, Role::Assistant, None);
                m.finish = Some("tool-calls".into());
                let mi = self.push(m, false);
                self.add_call(mi, call_id, tool.unwrap_or("unknown"), Value::Object(Map::new()));
                self.open.get_mut(call_id).and_then(VecDeque::pop_back).expect("the call just added")
            }
        };
        self.answered.insert(call_id.to_string());
        let Part::Tool(part) = &mut self.messages[mi].parts[pi] else { unreachable!("open slots point at tool parts") };
        let input = std::mem::take(match &mut part.state {
            ToolState::Pending { input, .. } | ToolState::Running { input, .. } => input,
            ToolState::Completed { input, .. } | ToolState::Error { input, .. } => input,
        });
        part.state = match outcome {
            Outcome::Err(error) => ToolState::Error { input, error: error.into(), extra: Map::new() },
            Outcome::Ok { output, attachments } => {
                let base = part.id.clone();
                let files: Vec<FilePart> = attachments
                    .into_iter()
                    .enumerate()
                    .map(|(k, (mime, url))| FilePart {
                        id: format!("{base}.a{k}"),
                        mime,
                        url,
                        filename: None,
                        extra: Map::new(),
                    })
                    .collect();
                ToolState::Completed {
                    input,
                    output: output.into(),
                    title: None,
                    compacted_at: None,
                    attachments: (!files.is_empty()).then_some(files),
                    extra: Map::new(),
                }
            }
        };
    }

    /// Adds a compaction in our shape: a request (a user message with a `compaction` part) and a
    /// completed summary answering it. `summary_from_record`: the summary stands for a source
    /// record (Claude Code's summary line); the request never does.
    #[allow(clippy::too_many_arguments)]
    pub fn compaction(
        &mut self,
        auto: bool,
        summary: String,
        tail_start: Option<String>,
        hidden_from: Option<String>,
        time: Option<f64>,
        summary_id: Option<&str>,
        summary_from_record: bool,
        extra: Map<String, Value>,
    ) -> usize {
        let mut req = self.message(None, Role::User, time);
        let part = CompactionPart {
            id: Self::next_part_id(&req),
            auto,
            overflow: None,
            hidden_from_id: hidden_from,
            tail_start_id: tail_start,
            files: None,
            extra,
        };
        req.parts.push(Part::Compaction(part));
        let req_id = req.id.clone();
        self.push(req, false);
        let mut sum = self.message(summary_id, Role::Assistant, time);
        sum.summary = Some(true);
        sum.finish = Some("stop".into());
        sum.parent_id = Some(req_id);
        Self::text(&mut sum, summary, false);
        self.stats.compactions += 1;
        self.push(sum, summary_from_record)
    }

    /// The last message, if it is an assistant message.
    pub fn last_assistant(&self) -> Option<usize> {
        self.messages
            .last()
            .filter(|m| m.role == Role::Assistant && m.summary.is_none())
            .map(|_| self.messages.len() - 1)
    }

    pub fn finish(mut self) -> Imported {
        for m in &mut self.messages {
            if m.role == Role::Assistant && m.finish.is_none() && m.error.is_none() {
                let calls = m.parts.iter().any(|p| matches!(p, Part::Tool(_)));
                m.finish = Some(if calls { "tool-calls" } else { "stop" }.into());
            }
        }
        self.stats.tool_calls = self.calls.len() + self.each;
        Imported {
            format: self.format,
            messages: self.messages,
            warnings: self.warnings,
            stats: self.stats,
            overhead: self.overhead,
        }
    }
}

/// Usage in our shape from OpenAI-style counts (`input` includes the cached part).
pub fn usage_openai(input: u64, cached: u64, output: u64, reasoning: Option<u64>, total: Option<u64>) -> Usage {
    Usage {
        input: input.saturating_sub(cached),
        output,
        reasoning,
        cache_read: (cached > 0).then_some(cached),
        cache_write: None,
        total: total.or(Some(input + output)),
    }
}

/// Takes the usage and model of an OpenAI chat-completions response object into `m`.
pub fn chat_response(m: &mut Message, resp: &Value) {
    if let Some(u) = resp.get("usage").and_then(usage_from_provider) {
        m.tokens = Some(u);
    }
    if let Some(model) = resp.get("model").and_then(Value::as_str) {
        m.model = model_ref("", model);
    }
}

pub fn model_ref(provider: &str, model: &str) -> Option<ModelRef> {
    (!model.is_empty()).then(|| ModelRef { provider_id: provider.to_string(), model_id: model.to_string() })
}

pub fn error(name: &str, message: impl Into<String>) -> MessageError {
    MessageError { name: name.to_string(), message: message.into() }
}

/// A number field as u64 (JSON numbers, possibly floats).
pub fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(|n| n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))).unwrap_or(0)
}
