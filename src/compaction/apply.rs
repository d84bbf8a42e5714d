//! `apply`: records a compaction as two messages, the request (a user message with a `compaction`
//! part naming the hidden range) and the summary that answers it.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::json;

use super::{Audit, CompactionPlan, FactKind};
use crate::error::{CfError, Code, Result};
use crate::message::{parse_message, Message, Usage};
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
    #[cfg_attr(test, ts(as = "Option<crate::message::ModelRef>"))]
    pub model: Option<serde_json::Value>,
    /// The loss audit's result, recorded in the compaction part.
    #[serde(default)]
    pub audit: Option<Audit>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Ascending ids that sort after every message written before them.
fn next_id(h: &History, prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let id = format!("{prefix}_{:012x}{:06x}", now_ms(), COUNTER.fetch_add(1, Ordering::Relaxed) & 0xff_ffff);
        if h.get(&id).is_none() {
            return id;
        }
    }
}

/// Appends the request and the summary to `h` and returns them. Fails without changing anything
/// if the plan's messages are gone or the summary is empty.
pub fn apply(h: &mut History, plan: &CompactionPlan, summary: SummaryInput) -> Result<[Message; 2]> {
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
    let now = now_ms();
    let request_id = next_id(h, "cmp");
    let mut part = json!({
        "type": "compaction", "id": format!("{request_id}_c"), "auto": plan.auto,
        "files": {"read": plan.read_files, "modified": plan.modified_files}
    });
    if plan.overflow {
        part["overflow"] = json!(true);
    }
    // What the next compaction carries over, and what this one's audit found.
    let carried: Vec<_> =
        plan.keep.iter().filter(|f| !matches!(f.kind, FactKind::ReadFile | FactKind::ModifiedFile)).collect();
    part["keep"] = json!(carried);
    part["pins"] = json!(h.pins());
    if let Some(a) = &summary.audit {
        part["audit"] = json!({"kept": a.kept, "restored": a.restored, "dropped": a.dropped});
    }
    if let Some(t) = &plan.tail_start_id {
        part["tailStartID"] = json!(t);
    }
    if let Some(f) = &plan.hidden_from_id {
        part["hiddenFromID"] = json!(f);
    }
    let request = parse_message(json!({"id": request_id, "role": "user", "time": {"created": now}, "parts": [part]}))?;
    let summary_id = next_id(h, "sum");
    let mut answer = json!({
        "id": summary_id, "role": "assistant", "parentID": request_id, "summary": true,
        "finish": summary.finish.unwrap_or_else(|| "stop".into()),
        "time": {"created": now, "completed": now},
        "parts": [{"type": "text", "id": format!("{summary_id}_t"), "text": summary.text}]
    });
    if let Some(u) = summary.usage {
        answer["tokens"] = serde_json::to_value(u).expect("usage serializes");
    }
    if let Some(m) = summary.model {
        answer["model"] = m;
    }
    let answer = parse_message(answer)?;
    h.append(request.clone())?;
    h.append(answer.clone())?;
    Ok([request, answer])
}
