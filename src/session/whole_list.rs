//! Tail queries over a list of messages exactly as a caller keeps it (the stateless `select` and
//! `splitTurn`): every entry counts, not just the view a compaction leaves.

use super::History;
use crate::error::{CfError, Result};
use crate::policy::{self, Selection, Turn};
use crate::tokens::Entry;

impl History {
    /// Where the verbatim tail starts among all the entries, with the session's budget and
    /// `tail_turns`.
    pub fn select_whole(&self) -> Selection {
        let entries: Vec<&Entry> = self.entries().iter().collect();
        let opts = self.options();
        let budget = policy::preserve_recent_budget(&opts.model, &opts.compaction);
        policy::select(&entries[..], budget, opts.compaction.tail_turns)
    }

    /// The largest suffix of `turn` (indices into all the entries) that fits `budget` tokens and
    /// may start a tail: its index and message id. A budget that is not a positive finite number
    /// fits nothing; a turn outside the entries is an invalid argument.
    pub fn split_turn_whole(&self, turn: &Turn, budget: f64) -> Result<Option<(usize, &str)>> {
        let entries: Vec<&Entry> = self.entries().iter().collect();
        if turn.start >= turn.end || turn.end > entries.len() {
            return Err(CfError::invalid_argument(format!(
                "turn: start {} and end {} must satisfy start < end <= {}",
                turn.start,
                turn.end,
                entries.len()
            )));
        }
        let budget = if budget.is_finite() && budget > 0.0 { budget as u64 } else { 0 };
        Ok(policy::split_turn(&entries[..], turn, budget).map(|s| (s, entries[s].msg.id.as_str())))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::Code;
    use crate::message::{parse_message, Message};
    use crate::policy::CompactionConfig;
    use crate::session::SessionOptions;

    fn text(id: &str, role: &str, words: usize) -> Message {
        let text = "word ".repeat(words);
        parse_message(
            json!({"id": id, "role": role, "parts": [{"type": "text", "id": format!("{id}-t"), "text": text}]}),
        )
        .unwrap()
    }

    /// Two turns, the second with a long first answer and a short second one; a compaction request
    /// and its summary hide the first turn from the view.
    fn history(cfg: CompactionConfig) -> History {
        let request = json!({"id": "r", "role": "user", "parts": [{"type": "compaction", "id": "r-c", "auto": true}]});
        let summary = json!({"id": "s", "role": "assistant", "summary": true, "parentID": "r", "finish": "stop",
            "parts": [{"type": "text", "id": "s-t", "text": "summary"}]});
        let msgs = vec![
            text("u1", "user", 50),
            text("a1", "assistant", 50),
            parse_message(request).unwrap(),
            parse_message(summary).unwrap(),
            text("u2", "user", 50),
            text("a2", "assistant", 400),
            text("a3", "assistant", 50),
        ];
        let opts = SessionOptions { compaction: cfg, ..Default::default() };
        History::from_messages(msgs, opts, &|| false).unwrap()
    }

    #[test]
    fn select_whole_reads_every_entry_where_select_reads_the_view() {
        let last_turn: u64 = history(CompactionConfig::default()).entries()[4..].iter().map(|e| e.tokens).sum();
        let h = history(CompactionConfig { preserve_recent_tokens: Some(last_turn), ..Default::default() });
        let whole = h.select_whole();
        assert_eq!((whole.head_end, whole.tail_start_id.as_deref(), whole.tail_tokens), (4, Some("u2"), last_turn));
        // The view holds the request, the summary and the last turn.
        let view = h.select();
        assert_eq!((view.head_end, view.tail_start_id.as_deref()), (2, Some("u2")));
    }

    #[test]
    fn select_whole_keeps_the_configured_turns() {
        let h = history(CompactionConfig {
            preserve_recent_tokens: Some(10_000),
            tail_turns: Some(1),
            ..Default::default()
        });
        let s = h.select_whole();
        assert_eq!((s.head_end, s.tail_start_id.as_deref()), (4, Some("u2")));
    }

    #[test]
    fn split_turn_whole_finds_the_suffix_that_fits() {
        let h = history(CompactionConfig::default());
        let turn = Turn { start: 4, end: 7, id: "u2".into() };
        let small = h.entries()[6].tokens as f64;
        assert_eq!(h.split_turn_whole(&turn, small).unwrap(), Some((6, "a3")));
        let all = h.entries()[4..].iter().map(|e| e.tokens).sum::<u64>() as f64;
        assert_eq!(h.split_turn_whole(&turn, all).unwrap(), Some((5, "a2")));
        for budget in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(h.split_turn_whole(&turn, budget).unwrap(), None, "budget {budget}");
        }
    }

    #[test]
    fn split_turn_whole_rejects_a_turn_outside_the_entries() {
        let h = history(CompactionConfig::default());
        for (start, end) in [(4, 8), (5, 5), (6, 4)] {
            let err = h.split_turn_whole(&Turn { start, end, id: String::new() }, 100.0).unwrap_err();
            assert_eq!(err.code, Code::InvalidArgument);
            assert!(err.message.contains("<= 7"), "{}", err.message);
        }
    }
}
