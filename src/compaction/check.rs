//! Checks made between the summarizer's answer and `apply`: what of the facts the model will still
//! see (the loss audit), and whether the compaction shrinks the context at all.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::audit::{audit, preserved_budget, Audit, Fact};
use super::CompactionPlan;
use crate::message::{markers, Message, Part, ToolState};
use crate::session::History;
use crate::tokens::MESSAGE_OVERHEAD;

/// The text the model reads of a message (tool calls with their inputs and results).
fn seen_text(m: &Message, out: &mut String) {
    for p in &m.parts {
        match p {
            Part::Text(t) => out.push_str(&t.text),
            Part::Tool(t) => {
                out.push_str(&t.state.input().to_string());
                out.push('\n');
                match &t.state {
                    ToolState::Completed { compacted_at: None, output, .. } => out.push_str(output),
                    ToolState::Error { error, .. } => out.push_str(error),
                    _ => {}
                }
            }
            _ => {}
        }
        out.push('\n');
    }
}

/// What the loss audit reads of a plan (`auditCompaction`): a caller sends back these fields, not
/// the summarizer's input. A `CompactionPlan` is one.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AuditPlan {
    #[serde(rename = "summarizedIDs")]
    pub summarized_ids: Vec<String>,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<Vec<Fact>>", optional))]
    pub keep: Vec<Fact>,
    pub summary_budget: u64,
}

impl From<&CompactionPlan> for AuditPlan {
    fn from(p: &CompactionPlan) -> Self {
        AuditPlan { summarized_ids: p.summarized_ids.clone(), keep: p.keep.clone(), summary_budget: p.summary_budget }
    }
}

/// What `previewCompaction` reads of a plan. A `CompactionPlan` is one.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PreviewPlan {
    #[serde(rename = "summarizedIDs")]
    pub summarized_ids: Vec<String>,
}

/// The context messages a compaction keeps (everything it does not summarize).
fn kept<'a>(h: &'a History, summarized_ids: &'a [String]) -> impl Iterator<Item = &'a crate::tokens::Entry> {
    let summarized: HashSet<&str> = summarized_ids.iter().map(String::as_str).collect();
    h.visible().into_iter().filter(move |e| !summarized.contains(e.msg.id.as_str()))
}

/// The loss audit of `summary` (the text to be stored) for `plan`: which of `plan.keep` the
/// summary and the kept messages hold, and the Preserved section for the others.
pub fn audit_summary(h: &History, plan: &AuditPlan, summary: &str) -> Audit {
    let mut seen = summary.to_string();
    seen.push('\n');
    for e in kept(h, &plan.summarized_ids) {
        seen_text(&e.msg, &mut seen);
    }
    audit(&plan.keep, &seen, preserved_budget(plan.summary_budget), h.counter())
}

/// The context's size before and after a compaction, both counted locally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "CompactionPreview"))]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// What the context would hold after recording `summary` for `plan` (and `following`, the message
/// appended after it), against what it holds now.
pub fn preview(h: &History, plan: &PreviewPlan, summary: &str, following: Option<&str>) -> Preview {
    let visible = h.visible();
    let before: u64 = visible.iter().map(|e| e.tokens).sum();
    let c = h.counter();
    let summarized: HashSet<&str> = plan.summarized_ids.iter().map(String::as_str).collect();
    let last = visible.iter().rposition(|e| summarized.contains(e.msg.id.as_str())).map_or(0, |k| k + 1);
    let restated = super::apply::restated_request(
        visible[last..].iter().map(|e| &e.msg),
        visible[..last].iter().filter(|e| summarized.contains(e.msg.id.as_str())).map(|e| &e.msg),
    );
    let added = 2 * MESSAGE_OVERHEAD
        + c.text(markers::COMPACTION_REQUEST)
        + restated.map_or(0, |t| MESSAGE_OVERHEAD + c.text(&t))
        + c.text(summary)
        + following.map_or(0, |t| MESSAGE_OVERHEAD + c.text(t));
    let after = kept(h, &plan.summarized_ids).map(|e| e.tokens).sum::<u64>() + added;
    Preview { tokens_before: before, tokens_after: after }
}
