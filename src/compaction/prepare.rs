//! `prepare`: what a compaction would summarize and keep, and the summarizer's input.

use serde::{Deserialize, Serialize};

use super::audit::{facts_to_keep, Fact};
use super::summary_budget;
use crate::error::{CfError, Result};
use crate::message::{Message, Part};
use crate::policy::{self, can_start_tail};
use crate::session::History;
use crate::summary_input::{gather, redact, Block, Facts, FileOps};

/// Where `prepareCompaction` cuts, and what the compaction part records.
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct PrepareOptions {
    /// Triggered automatically (recorded in the compaction part).
    pub auto: bool,
    /// The provider rejected the context as too long (recorded in the compaction part; `compact()`
    /// adds the media notice to the continue message).
    pub overflow: bool,
    /// Summarize up to and including this message, keep everything after it verbatim.
    #[serde(rename = "upTo")]
    pub up_to: Option<String>,
    /// Summarize from this message to the end, keep everything before it verbatim.
    pub from: Option<String>,
    /// The session's first turns that are never summarized (default 0).
    pub protect_first_turns: u32,
    /// Leading system messages are never summarized (default true).
    pub protect_system: Option<bool>,
}

/// What `prepareCompaction` decided, and the summarizer's input: everything the summary call
/// needs, and what `applyCompaction` records. Pass it back to `applyCompaction`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields, rename = "CompactionPlan"))]
#[serde(rename_all = "camelCase")]
pub struct CompactionPlan {
    /// Messages summarized, in context order (earlier compaction messages included).
    #[serde(rename = "summarizedIDs")]
    pub summarized_ids: Vec<String>,
    /// Transcript blocks of the history part, one per message, oldest first (shared with the
    /// session, which keeps each message's block).
    #[cfg_attr(test, ts(as = "Vec<String>"))]
    pub transcript: Vec<Block>,
    /// When the cut falls inside a turn: transcript blocks of that turn's beginning, summarized
    /// apart so the kept suffix of the turn still has its context.
    #[cfg_attr(test, ts(as = "Vec<String>"))]
    pub turn_prefix: Vec<Block>,
    /// The first message kept verbatim (none: nothing is kept after the summarized range).
    #[serde(rename = "tailStartID", skip_serializing_if = "Option::is_none")]
    pub tail_start_id: Option<String>,
    /// The first hidden message when a head is kept (protected turns, or `from`).
    #[serde(rename = "hiddenFromID", skip_serializing_if = "Option::is_none")]
    pub hidden_from_id: Option<String>,
    /// The summary this one replaces, for an anchored update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_summary: Option<String>,
    /// Files only read, cumulative across compactions.
    pub read_files: Vec<String>,
    /// Files modified, cumulative across compactions.
    pub modified_files: Vec<String>,
    pub tokens_before: u64,
    pub tokens_summarized: u64,
    /// Output tokens the summary may use.
    pub summary_budget: u64,
    pub facts: Facts,
    /// What the summary must keep (checked by the audit after the summarizer answers): the
    /// previous compaction's facts carried over, and this one's.
    #[serde(default)]
    pub keep: Vec<Fact>,
    pub auto: bool,
    pub overflow: bool,
    /// The newest user message that is not a compaction request.
    #[serde(rename = "lastUserID", skip_serializing_if = "Option::is_none")]
    pub last_user_id: Option<String>,
    /// Secrets replaced by `[REDACTED:<kind>]` in what the summarizer reads.
    #[serde(default)]
    pub redacted: u64,
}

/// Replaces secrets in `texts`, returning how many were replaced.
fn redact_all<'a>(texts: impl Iterator<Item = &'a mut String>) -> u64 {
    let mut n = 0u64;
    for s in texts {
        let (out, k) = redact(s);
        if k > 0 {
            n += k as u64;
            *s = out.into_owned();
        }
    }
    n
}

/// Replaces secrets in everything of `plan` a summarizer reads or a summary may quote, except the
/// transcript blocks and the user messages (each message's are replaced once, with its digest).
fn redact_plan(plan: &mut CompactionPlan) -> u64 {
    let f = &mut plan.facts;
    let texts = plan
        .previous_summary
        .iter_mut()
        .chain(f.commands.iter_mut())
        .chain(f.errors.iter_mut())
        .chain(f.open_tool_calls.iter_mut())
        .chain(f.constraints.iter_mut())
        .chain(f.identifiers.iter_mut())
        .chain(f.decisions.iter_mut())
        .chain(f.command_groups.iter_mut().map(|g| &mut g.last))
        .chain(f.last_assistant_text.iter_mut())
        .chain(f.latest_request.iter_mut())
        .chain(f.last_error.iter_mut().map(|e| &mut e.text))
        .chain(plan.keep.iter_mut().map(|k| &mut k.text));
    redact_all(texts)
}

/// How many leading context messages are protected: system messages (unless disabled) and the
/// first `protect_first_turns` turns.
fn protected_head(h: &History, order: &[usize], opts: &PrepareOptions) -> usize {
    let mut turns_seen = 0u32;
    let mut n = 0;
    for (k, &i) in order.iter().enumerate() {
        let m = &h.entries()[i].msg;
        if m.is_user() && m.compaction().is_none() {
            if turns_seen == opts.protect_first_turns {
                break;
            }
            turns_seen += 1;
        } else if m.compaction().is_some()
            || m.is_summary()
            || turns_seen == 0 && !(m.role == crate::message::Role::System && opts.protect_system != Some(false))
        {
            break;
        }
        n = k + 1;
    }
    n
}

fn position(order: &[usize], h: &History, id: &str, what: &str) -> Result<usize> {
    order
        .iter()
        .position(|&i| h.entries()[i].msg.id == id)
        .ok_or_else(|| CfError::invalid_argument(format!("{what}: message {id:?} is not in the context")))
}

/// The plan for compacting `h` now, or `None` when there is nothing to summarize.
pub fn prepare(h: &History, opts: &PrepareOptions) -> Result<Option<CompactionPlan>> {
    if opts.up_to.is_some() && opts.from.is_some() {
        return Err(CfError::invalid_argument("upTo and from cannot be used together"));
    }
    let order = h.visible_positions();
    let entries = h.entries();
    let at = |k: usize| &entries[order[k]];
    let (start, end, hidden_from) = if let Some(id) = &opts.from {
        let k = position(&order, h, id, "from")?;
        (k, order.len(), Some(id.clone()))
    } else {
        let protected = protected_head(h, &order, opts);
        let hidden_from = (protected > 0 && protected < order.len()).then(|| at(protected).msg.id.clone());
        let end = match &opts.up_to {
            Some(id) => {
                let k = position(&order, h, id, "upTo")?;
                if k < protected {
                    return Err(CfError::invalid_argument(format!("upTo: message {id:?} is in the protected head")));
                }
                // The tail starts at the first message after `upTo` that may start one.
                (k + 1..order.len()).find(|&s| can_start_tail(at(s))).unwrap_or(order.len())
            }
            None => {
                let seq: Vec<_> = order[protected..].iter().map(|&i| &entries[i]).collect();
                let cfg = &h.options().compaction;
                protected
                    + policy::compaction_tail(&seq[..], &h.options().model, cfg, h.unread_in_context(), h.overhead())
                        .head_end
            }
        };
        (protected, end, hidden_from)
    };
    let summarized: Vec<&Message> = (start..end).map(|k| &at(k).msg).collect();
    if summarized.iter().all(|m| m.compaction().is_some() || m.is_summary()) {
        return Ok(None);
    }
    let tail_start_id = (opts.from.is_none() && end < order.len()).then(|| at(end).msg.id.clone());

    // A cut inside a turn: the turn's beginning is summarized apart.
    let turn_start = (tail_start_id.is_some() && !at(end).msg.is_user())
        .then(|| (start..end).rev().find(|&k| at(k).msg.is_user() && at(k).msg.compaction().is_none()))
        .flatten();
    // Each message's block and facts are worked out once and kept with it: a session whose
    // messages were digested as they came (`warm_compaction`) only gathers here; the rest are
    // worked out now, on every core.
    h.warm_digests(&order[start..]);
    let redact = h.options().compaction.redact_secrets;
    let mut redacted = 0u64;
    let mut blocks = |range: std::ops::Range<usize>| -> Vec<Block> {
        range
            .filter_map(|k| h.digest(order[k]).block(redact))
            .map(|(block, n)| {
                redacted += n;
                block
            })
            .collect()
    };
    let (transcript, turn_prefix) = match turn_start {
        Some(t) => (blocks(start..t), blocks(t..end)),
        None => (blocks(start..end), Vec::new()),
    };
    let mut plan = plan_without_transcript(h, &order, &summarized, start, end, opts);
    if redact {
        plan.redacted += redact_plan(&mut plan);
    }
    plan.transcript = transcript;
    plan.turn_prefix = turn_prefix;
    plan.redacted += redacted;
    plan.tail_start_id = tail_start_id;
    plan.hidden_from_id = hidden_from;
    Ok(Some(plan))
}

/// Everything of the plan but the transcript: files, facts, what the summary must keep, sizes.
fn plan_without_transcript(
    h: &History,
    order: &[usize],
    summarized: &[&Message],
    start: usize,
    end: usize,
    opts: &PrepareOptions,
) -> CompactionPlan {
    let entries = h.entries();
    let at = |k: usize| &entries[order[k]];

    // The newest summary among what is summarized is updated in place; its files carry over.
    let previous = (start..end).rev().find(|&k| h.digest(order[k]).completed_summary).map(|k| &at(k).msg);
    let previous_request = previous.and_then(|s| s.parent_id.as_deref()).and_then(|id| h.get(id));
    let mut files = FileOps::default();
    let mut previous_keep: Vec<Fact> = Vec::new();
    if let Some(Part::Compaction(c)) =
        previous_request.and_then(|r| r.msg.parts.iter().find(|p| matches!(p, Part::Compaction(_))))
    {
        if let Some(f) = &c.files {
            files.merge(f.read.clone(), f.modified.clone());
        }
        previous_keep = c.extra.get("keep").and_then(|k| serde_json::from_value(k.clone()).ok()).unwrap_or_default();
    }
    for &i in &order[start..end] {
        let d = h.digest(i);
        files.merge(d.read_files.iter().cloned(), d.modified_files.iter().cloned());
    }

    let tokens_summarized = (start..end).map(|k| at(k).tokens).sum();
    let digested = |k: usize| (&at(k).msg, &h.digest(order[k]).facts);
    let redact = h.options().compaction.redact_secrets;
    let (facts, redacted) = gather((start..end).map(digested), (end..order.len()).map(digested), redact);
    let read_files = files.read_only();
    let modified_files: Vec<String> = files.modified.iter().cloned().collect();
    let keep = facts_to_keep(&previous_keep, &facts, h.pins(), &read_files, &modified_files);
    let last_user_id = order
        .iter()
        .rev()
        .map(|&i| &entries[i].msg)
        .find(|m| m.is_user() && m.compaction().is_none())
        .map(|m| m.id.clone());
    CompactionPlan {
        summarized_ids: summarized.iter().map(|m| m.id.clone()).collect(),
        transcript: Vec::new(),
        turn_prefix: Vec::new(),
        tail_start_id: None,
        hidden_from_id: None,
        previous_summary: previous.map(summary_text),
        read_files,
        modified_files,
        tokens_before: h.usage().tokens,
        tokens_summarized,
        summary_budget: summary_budget(tokens_summarized, h.options().model.limit.context),
        facts,
        keep,
        auto: opts.auto,
        overflow: opts.overflow,
        last_user_id,
        redacted,
    }
}

/// The text of a summary message.
pub(crate) fn summary_text(m: &Message) -> String {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
