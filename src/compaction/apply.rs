//! `apply`: records a compaction as two messages, the request (a user message with a `compaction`
//! part naming the hidden range) and the summary that answers it.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Audit, CompactionPlan, Fact, FactKind};
use crate::error::{CfError, Code, Result};
use crate::message::{CompactionFiles, CompactionPart, Message, ModelRef, Part, Role, TextPart, Time, Usage};
use crate::session::History;

/// The summary as the caller got it from the model.
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct SummaryInput {
    pub text: String,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub finish: Option<String>,
    #[serde(default)]
    pub model: Option<ModelRef>,
    /// The loss audit's result, recorded in the compaction part.
    #[serde(default)]
    pub audit: Option<Audit>,
    /// Why the summarizer's answer was not used and the extractive summary was recorded
    /// instead (`compact()`'s fallback), recorded in the compaction part.
    #[serde(default)]
    pub fallback: Option<String>,
}

/// What `applyCompaction` reads of a plan: a caller sends back these fields, not the summarizer's
/// input. A `CompactionPlan` is one.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ApplyPlan {
    #[serde(rename = "tailStartID")]
    pub tail_start_id: Option<String>,
    #[serde(rename = "hiddenFromID")]
    pub hidden_from_id: Option<String>,
    pub auto: bool,
    pub overflow: bool,
    pub read_files: Vec<String>,
    pub modified_files: Vec<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<Fact>>", optional))]
    pub keep: Vec<Fact>,
}

impl From<&CompactionPlan> for ApplyPlan {
    fn from(p: &CompactionPlan) -> Self {
        ApplyPlan {
            tail_start_id: p.tail_start_id.clone(),
            hidden_from_id: p.hidden_from_id.clone(),
            auto: p.auto,
            overflow: p.overflow,
            read_files: p.read_files.clone(),
            modified_files: p.modified_files.clone(),
            keep: p.keep.clone(),
        }
    }
}

/// The latest request, restated as a user message after the summary when the kept tail holds no
/// user request (no tail, or one that starts inside the request's own tool loop): the context then
/// ends on a user turn or a tool result, never on the summary (which a provider reads as a
/// prefill), and the model reads the request as one, not only inside a summary that says it is
/// a record. `tail`: the messages kept after the summary; `summarized`: those it replaces.
pub(crate) fn restated_request<'a>(
    mut tail: impl Iterator<Item = &'a Message>,
    summarized: impl DoubleEndedIterator<Item = &'a Message>,
) -> Option<String> {
    let is_request = |m: &Message| m.is_user() && m.compaction().is_none();
    if tail.any(is_request) {
        return None;
    }
    // The newest request replaced, or the one an earlier compaction in the span restated.
    summarized.rev().find_map(|m| match m.role {
        Role::Assistant => m.latest_request().map(str::to_string),
        Role::User if m.compaction().is_none() => request_text(m),
        _ => None,
    })
}

/// What the model reads of a user message: its texts, and a marker for each attachment.
fn request_text(m: &Message) -> Option<String> {
    let text: Vec<String> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) if !t.text.trim().is_empty() => Some(t.text.to_string()),
            Part::File(f) => Some(crate::message::markers::attached(&f.mime, f.display_name())),
            _ => None,
        })
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

fn json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("plain data serializes")
}

/// Appends the request and the summary to `h` and returns them. Fails without changing anything
/// if the plan's messages are gone or the summary is empty.
pub fn apply(h: &mut History, plan: &ApplyPlan, summary: SummaryInput) -> Result<[Message; 2]> {
    if summary.text.trim().is_empty() {
        return Err(CfError::invalid_argument("summary: the text is empty"));
    }
    for (what, id) in [("tailStartID", &plan.tail_start_id), ("hiddenFromID", &plan.hidden_from_id)] {
        if let Some(id) = id {
            if h.get(id).is_none() {
                return Err(CfError::new(Code::NotFound, format!("plan.{what}: message {id:?} is not in the session")));
            }
        }
    }
    let now = crate::session::now_ms() as f64;
    let request_id = h.new_id("cmp");
    // What the next compaction carries over, and what this one's audit found.
    let carried: Vec<&Fact> =
        plan.keep.iter().filter(|f| !matches!(f.kind, FactKind::ReadFile | FactKind::ModifiedFile)).collect();
    let mut extra = Map::new();
    extra.insert("keep".into(), json(&carried));
    extra.insert("pins".into(), json(&h.pins()));
    if let Some(a) = summary.audit {
        extra.insert("audit".into(), json(&Audit { section: None, ..a }));
    }
    if let Some(reason) = summary.fallback.filter(|r| !r.is_empty()) {
        extra.insert("fallback".into(), Value::String(reason));
    }
    let order = h.visible();
    let at = |id: &Option<String>| id.as_ref().and_then(|id| order.iter().position(|e| &e.msg.id == id));
    let tail_start = at(&plan.tail_start_id).unwrap_or(order.len());
    let hidden_from = at(&plan.hidden_from_id).unwrap_or(0).min(tail_start);
    let msgs = |r: std::ops::Range<usize>| order[r].iter().map(|e| &e.msg);
    let restated = restated_request(msgs(tail_start..order.len()), msgs(hidden_from..tail_start));
    let part = CompactionPart {
        id: format!("{request_id}_c"),
        auto: plan.auto,
        overflow: plan.overflow.then_some(true),
        hidden_from_id: plan.hidden_from_id.clone(),
        tail_start_id: plan.tail_start_id.clone(),
        files: Some(CompactionFiles { read: plan.read_files.clone(), modified: plan.modified_files.clone() }),
        extra,
    };
    let time = Time { created: now, completed: None };
    let request = Message::new(request_id.clone(), Role::User, vec![Part::Compaction(part)], Some(time));
    let summary_id = h.new_id("sum");
    let text =
        TextPart { id: format!("{summary_id}_t"), text: summary.text.into(), synthetic: None, extra: Map::new() };
    let time = Time { created: now, completed: Some(now) };
    let mut answer = Message::new(summary_id, Role::Assistant, vec![Part::Text(text)], Some(time));
    answer.parent_id = Some(request_id);
    answer.summary = Some(true);
    answer.finish = Some(summary.finish.unwrap_or_else(|| "stop".into()));
    answer.tokens = summary.usage;
    answer.model = summary.model;
    if let Some(text) = restated {
        answer.extra.insert(crate::message::LATEST_REQUEST.into(), Value::String(text));
    }
    h.append(request.clone())?;
    h.append(answer.clone())?;
    Ok([request, answer])
}
