//! Turns and the verbatim tail: whole turns from the newest back, then the largest suffix of the
//! next turn that fits, never starting on a message a provider would reject.

use super::{usable, CompactionConfig, ModelInfo};
use crate::message::Message;
use crate::tokens::{Counter, Entry, Tokenizer};

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

/// The tail a compaction keeps of `seq`, whose last `unread` messages the provider has not read:
/// `select` within the budget, then `keep_unread` up to `unread_cap`. A context within the budget
/// would be the whole tail, and `select` then summarizes all of it (opencode's rule), the current
/// request too: a compaction asked for that early keeps its newer half verbatim instead.
/// `overhead`: the tokens of the system prompt and tools.
pub fn compaction_tail<'a, S: Seq<'a> + ?Sized>(
    seq: &S,
    model: &ModelInfo,
    cfg: &CompactionConfig,
    unread: usize,
    overhead: u64,
) -> Selection {
    let (budget, total) = (preserve_recent_budget(model, cfg), seq.tokens(0, seq.len()));
    let mut sel = select(seq, budget, cfg.tail_turns);
    if sel.tail_start_id.is_none() && total <= budget {
        sel = select(seq, total / 2, cfg.tail_turns);
    }
    match unread_cap(model, cfg, overhead) {
        0 => sel,
        cap => keep_unread(seq, sel, unread, cap),
    }
}

/// Tokens of unread messages a compaction's tail keeps past its budget: what the usable window
/// holds beside the system prompt and tools (`overhead`) and the longest summary, so the model
/// reads the newest step whole when it fits beside them; none when `tail_turns` asks for no tail.
pub fn unread_cap(model: &ModelInfo, cfg: &CompactionConfig, overhead: u64) -> u64 {
    if cfg.tail_turns.is_some_and(|t| t <= 0) {
        0
    } else {
        usable(model, cfg).saturating_sub(overhead + summary_ceiling(model.limit.context))
    }
}

/// The fewest tokens a summary is given.
pub const SUMMARY_FLOOR: u64 = 2_000;

/// The most tokens a summary is given in a window of `context_window`: 5% of it, at most 10,000
/// (never below the floor).
pub fn summary_ceiling(context_window: u64) -> u64 {
    const CEILING: u64 = 10_000;
    if context_window == 0 { CEILING } else { (context_window / 20).min(CEILING) }.max(SUMMARY_FLOOR)
}

/// Where a tail that keeps the last `unread` messages of `seq` starts: the nearest message at or
/// before the first of them that may start a tail.
pub fn unread_start<'a, S: Seq<'a> + ?Sized>(seq: &S, unread: usize) -> Option<usize> {
    let first_unread = seq.len().checked_sub(unread).filter(|_| unread > 0)?;
    (0..=first_unread).rev().find(|&k| can_start_tail(seq.at(k)))
}

/// A turn starts at each user message that is not a compaction request.
pub fn turns(seq: &[&Entry]) -> Vec<Turn> {
    let starts: Vec<usize> = seq.iter().enumerate().filter(|(_, e)| is_turn_start(e)).map(|(i, _)| i).collect();
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

/// Turns of `messages` as given (no view applies): one per user message that is not a compaction
/// request.
pub fn message_turns(messages: Vec<Message>) -> Vec<Turn> {
    // Turns read roles and parts only: the cheapest counter will do.
    let counter = Counter { tokenizer: Tokenizer::Estimate, image_tokens: 0, output_max_chars: None };
    let entries: Vec<Entry> = messages.into_iter().map(|m| Entry::new(m, &counter)).collect();
    turns(&entries.iter().collect::<Vec<_>>())
}

/// Entries in context order, by index: a slice, or a session's view read in place. The per-turn
/// queries walk it from the newest end and stop at the tail, so they cost what the tail costs.
pub trait Seq<'a> {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn at(&self, k: usize) -> &'a Entry;
    /// Tokens of `[a, b)`.
    fn tokens(&self, a: usize, b: usize) -> u64 {
        (a..b).map(|k| self.at(k).tokens).sum()
    }
    /// The newest turn start (see `is_turn_start`) before `end`.
    fn turn_start_before(&self, end: usize) -> Option<usize> {
        (0..end).rev().find(|&k| is_turn_start(self.at(k)))
    }
}

impl<'a> Seq<'a> for [&'a Entry] {
    fn len(&self) -> usize {
        <[&Entry]>::len(self)
    }
    fn at(&self, k: usize) -> &'a Entry {
        self[k]
    }
}

/// A turn starts at each user message that is not a compaction request.
pub fn is_turn_start(e: &Entry) -> bool {
    e.msg.is_user() && e.msg.compaction().is_none()
}

/// A tail may start on a user or assistant message that is not part of a compaction and not an
/// errored answer (those are left out of the model messages, so the tail would start elsewhere).
pub fn can_start_tail(e: &Entry) -> bool {
    let m = &e.msg;
    (m.is_user() && m.compaction().is_none()) || (m.is_assistant() && !m.is_summary() && m.error.is_none())
}

/// The largest suffix of `turn` that fits `budget`, starting after the turn's first message.
/// Walks back from the turn's end only as far as the budget reaches.
pub fn split_turn<'a, S: Seq<'a> + ?Sized>(seq: &S, turn: &Turn, budget: u64) -> Option<usize> {
    if budget == 0 || turn.end - turn.start < 2 {
        return None;
    }
    let mut suffix = 0u64;
    let mut best = None;
    for s in (turn.start + 1..turn.end).rev() {
        let e = seq.at(s);
        suffix += e.tokens;
        if suffix > budget {
            break;
        }
        if can_start_tail(e) {
            best = Some(s);
        }
    }
    best
}

/// The verbatim tail: whole turns from the newest back while they fit `budget` (at most
/// `tail_turns` of them), then the largest suffix of the next turn that fits.
pub fn select<'a, S: Seq<'a> + ?Sized>(seq: &S, budget: u64, tail_turns: Option<i64>) -> Selection {
    let everything = Selection { head_end: seq.len(), tail_start_id: None, tail_tokens: 0 };
    if tail_turns.is_some_and(|t| t <= 0) {
        return everything;
    }
    let max_turns = tail_turns.map_or(usize::MAX, |t| t as usize);
    let mut total = 0u64;
    let mut keep: Option<usize> = None;
    let mut end = seq.len();
    let mut taken = 0usize;
    while taken < max_turns && end > 0 {
        let turn = match seq.turn_start_before(end) {
            Some(start) => Turn { start, end, id: String::new() },
            // Messages before the first user request (an agent loop going on after a summary hid
            // its request, a transcript that starts mid-turn) are a turn of their own: the tail
            // may keep their newest part.
            None => match (0..end).find(|&k| can_start_tail(seq.at(k))) {
                Some(start) => Turn { start, end, id: String::new() },
                None => break,
            },
        };
        taken += 1;
        let turn_size = seq.tokens(turn.start, turn.end);
        if total + turn_size <= budget {
            total += turn_size;
            keep = Some(turn.start);
            end = turn.start;
            continue;
        }
        if let Some(s) = split_turn(seq, &turn, budget - total) {
            total += seq.tokens(s, turn.end);
            keep = Some(s);
        }
        break;
    }
    match keep {
        Some(start) if start > 0 => {
            Selection { head_end: start, tail_start_id: Some(seq.at(start).msg.id.clone()), tail_tokens: total }
        }
        _ => everything,
    }
}

/// `sel` moved back so the tail keeps the last `unread` messages of `seq` (those the provider has
/// not read: the output of the step the model just asked for), from the nearest message at or
/// before them that may start a tail, when that suffix is at most `cap` tokens. Summarizing them
/// would hand the model a summary of a result it never saw, from a cut of it, and it would ask for
/// the result again. Past `cap` they are summarized: cut them to fit first (`History::cut_unread`).
pub fn keep_unread<'a, S: Seq<'a> + ?Sized>(seq: &S, sel: Selection, unread: usize, cap: u64) -> Selection {
    let Some(first_unread) = seq.len().checked_sub(unread).filter(|_| unread > 0) else {
        return sel;
    };
    if sel.head_end <= first_unread {
        return sel;
    }
    match unread_start(seq, unread) {
        Some(start) if start > 0 && start < sel.head_end => {
            let tokens = seq.tokens(start, seq.len());
            if tokens > cap {
                return sel;
            }
            Selection { head_end: start, tail_start_id: Some(seq.at(start).msg.id.clone()), tail_tokens: tokens }
        }
        _ => sel,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::parse_message;

    #[test]
    fn message_turns_start_at_user_messages_but_not_at_compaction_requests() {
        let text = |id: &str, role: &str| json!({"id": id, "role": role, "parts": [{"type": "text", "id": format!("{id}-t"), "text": id}]});
        let request = json!({"id": "r", "role": "user", "parts": [{"type": "compaction", "id": "r-c", "auto": true}]});
        let values =
            [text("a0", "assistant"), text("u1", "user"), text("a1", "assistant"), request, text("u2", "user")];
        let turns = message_turns(values.into_iter().map(|v| parse_message(v).unwrap()).collect());
        let expected = [(1, 4, "u1"), (4, 5, "u2")].map(|(start, end, id)| Turn { start, end, id: id.into() });
        assert_eq!(turns, expected);
        assert_eq!(message_turns(Vec::new()), []);
    }

    fn entry(id: &str, role: &str, tokens: u64) -> Entry {
        let msg = json!({"id": id, "role": role, "parts": [{"type": "text", "id": format!("{id}-t"), "text": id}]});
        Entry { msg: parse_message(msg).unwrap(), parts: Vec::new(), tokens, seen_at: 0.0, reported_tokens: tokens }
    }

    #[test]
    fn a_compaction_of_a_context_within_the_budget_keeps_its_newer_half() {
        let owned = [
            entry("u1", "user", 100),
            entry("a1", "assistant", 100),
            entry("u2", "user", 100),
            entry("a2", "assistant", 100),
        ];
        let seq: Vec<&Entry> = owned.iter().collect();
        let (model, cfg) =
            (ModelInfo::default(), CompactionConfig { preserve_recent_tokens: Some(10_000), ..Default::default() });
        // `select` alone keeps everything, so summarizes everything.
        assert_eq!(select(&seq[..], 10_000, None).tail_start_id, None);
        let s = compaction_tail(&seq[..], &model, &cfg, 0, 0);
        assert_eq!((s.head_end, s.tail_start_id.as_deref(), s.tail_tokens), (2, Some("u2"), 200));
        // One turn: the newer half of its answers.
        let owned = [
            entry("u1", "user", 100),
            entry("a1", "assistant", 100),
            entry("a2", "assistant", 100),
            entry("a3", "assistant", 100),
        ];
        let seq: Vec<&Entry> = owned.iter().collect();
        assert_eq!(compaction_tail(&seq[..], &model, &cfg, 0, 0).tail_start_id.as_deref(), Some("a2"));
        // Over the budget: the budget.
        let cfg = CompactionConfig { preserve_recent_tokens: Some(250), ..cfg };
        assert_eq!(compaction_tail(&seq[..], &model, &cfg, 0, 0).tail_start_id.as_deref(), Some("a2"));
        let cfg = CompactionConfig { preserve_recent_tokens: Some(150), ..cfg };
        assert_eq!(compaction_tail(&seq[..], &model, &cfg, 0, 0).tail_start_id.as_deref(), Some("a3"));
    }

    #[test]
    fn keep_unread_keeps_what_the_provider_has_not_read_when_it_fits_the_cap() {
        // u1 a1 a2 | a3 (a big step the provider has not read)
        let owned = [
            entry("u1", "user", 100),
            entry("a1", "assistant", 100),
            entry("a2", "assistant", 100),
            entry("a3", "assistant", 5_000),
        ];
        let seq: Vec<&Entry> = owned.iter().collect();
        let everything = select(&seq[..], 1_000, None);
        assert_eq!(everything.tail_start_id, None, "the step alone is over the budget");
        let kept = keep_unread(&seq[..], everything.clone(), 1, 6_000);
        assert_eq!((kept.head_end, kept.tail_start_id.as_deref(), kept.tail_tokens), (3, Some("a3"), 5_000));
        // Over the cap, or nothing unread: the budgeted tail as it was.
        assert_eq!(keep_unread(&seq[..], everything.clone(), 1, 4_999), everything);
        assert_eq!(keep_unread(&seq[..], everything.clone(), 0, 6_000), everything);
        // Already in the tail: unchanged.
        let small = select(&seq[..], 5_050, None);
        assert_eq!(small.tail_start_id.as_deref(), Some("a3"));
        assert_eq!(keep_unread(&seq[..], small.clone(), 1, 6_000), small);
        // Several unread messages: the tail starts at the first of them.
        let owned = [
            entry("u1", "user", 100),
            entry("a1", "assistant", 100),
            entry("u2", "user", 100),
            entry("a2", "assistant", 3_000),
        ];
        let seq: Vec<&Entry> = owned.iter().collect();
        let kept = keep_unread(&seq[..], select(&seq[..], 1_000, None), 2, 6_000);
        assert_eq!(kept.tail_start_id.as_deref(), Some("u2"));
        // Everything unread: nothing may be kept before the first message, so all is summarized.
        assert_eq!(keep_unread(&seq[..], select(&seq[..], 1_000, None), 4, 1_000_000).tail_start_id, None);
    }
}
