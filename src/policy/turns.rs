//! Turns and the verbatim tail: whole turns from the newest back, then the largest suffix of the
//! next turn that fits, never starting on a message a provider would reject.

use super::{usable, CompactionConfig, ModelInfo};
use crate::tokens::Entry;

/// One user request and everything that answered it: `[start, end)` in the sequence given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    pub start: usize,
    pub end: usize,
    pub id: String,
}

/// Where the verbatim tail starts: `[0, head_end)` gets summarized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub head_end: usize,
    pub tail_start_id: Option<String>,
    /// Tokens of the kept tail.
    pub tail_tokens: u64,
}

/// `clamp(usable × 0.25, 2000, 15000)` unless configured.
pub fn preserve_recent_budget(model: &ModelInfo, cfg: &CompactionConfig) -> u64 {
    cfg.preserve_recent_tokens.unwrap_or_else(|| (usable(model, cfg) / 4).clamp(2_000, 15_000))
}

/// A turn starts at each user message that is not a compaction request.
pub fn turns(seq: &[&Entry]) -> Vec<Turn> {
    let starts: Vec<usize> = seq
        .iter()
        .enumerate()
        .filter(|(_, e)| e.msg.is_user() && e.msg.compaction().is_none())
        .map(|(i, _)| i)
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, &start)| Turn {
            start,
            end: starts.get(k + 1).copied().unwrap_or(seq.len()),
            id: seq[start].msg.id.clone(),
        })
        .collect()
}

fn size(seq: &[&Entry]) -> u64 {
    seq.iter().map(|e| e.tokens).sum()
}

/// A tail may start on a user or assistant message that is not part of a compaction and not an
/// errored answer (those are left out of the model messages, so the tail would start elsewhere).
pub fn can_start_tail(e: &Entry) -> bool {
    let m = &e.msg;
    (m.is_user() && m.compaction().is_none()) || (m.is_assistant() && !m.is_summary() && m.error.is_none())
}

/// The largest suffix of `turn` that fits `budget`, starting after the turn's first message.
pub fn split_turn(seq: &[&Entry], turn: &Turn, budget: u64) -> Option<usize> {
    if budget == 0 || turn.end - turn.start < 2 {
        return None;
    }
    let mut suffix = size(&seq[turn.start + 1..turn.end]);
    for (s, e) in seq.iter().enumerate().take(turn.end).skip(turn.start + 1) {
        if suffix <= budget && can_start_tail(e) {
            return Some(s);
        }
        suffix -= e.tokens;
    }
    None
}

pub fn select(seq: &[&Entry], budget: u64, tail_turns: Option<i64>) -> Selection {
    let everything = Selection { head_end: seq.len(), tail_start_id: None, tail_tokens: 0 };
    if tail_turns.is_some_and(|t| t <= 0) {
        return everything;
    }
    let mut all = turns(seq);
    // Messages before the first user request (an agent loop going on after a summary hid its
    // request, a transcript that starts mid-turn) are a turn of their own: the tail may keep their
    // newest part.
    let first = all.first().map_or(seq.len(), |t| t.start);
    if let Some(start) = (0..first).find(|&i| can_start_tail(seq[i])) {
        all.insert(0, Turn { start, end: first, id: seq[start].msg.id.clone() });
    }
    let recent = match tail_turns {
        Some(t) => &all[all.len().saturating_sub(t as usize)..],
        None => &all[..],
    };
    let mut total = 0u64;
    let mut keep: Option<usize> = None;
    for turn in recent.iter().rev() {
        let turn_size = size(&seq[turn.start..turn.end]);
        if total + turn_size <= budget {
            total += turn_size;
            keep = Some(turn.start);
            continue;
        }
        if let Some(s) = split_turn(seq, turn, budget - total) {
            total += size(&seq[s..turn.end]);
            keep = Some(s);
        }
        break;
    }
    match keep {
        Some(start) if start > 0 => {
            Selection { head_end: start, tail_start_id: Some(seq[start].msg.id.clone()), tail_tokens: total }
        }
        _ => everything,
    }
}
