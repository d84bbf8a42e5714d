//! The session over time (`contextfold view`): the context's size after every model call, every
//! prune and every compaction, as a session built message by message would have said it. The
//! history is replayed from its own entries (nothing is counted again but the messages a prune
//! changed), each prune applied when it happened: after the messages that came before its mark.

use serde::Serialize;

use super::History;
use crate::error::Result;
use crate::message::{Message, Part, ToolState};
use crate::tokens::Entry;

/// The session over time.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    /// Each message's local token count, hidden ones included, in arrival order.
    pub tokens: Vec<u64>,
    /// After each answer (an assistant message that is not a summary): the context's size.
    pub calls: Vec<CallPoint>,
    pub prunes: Vec<PrunePoint>,
    pub compactions: Vec<CompactionPoint>,
}

/// The context's size after one model call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CallPoint {
    /// The answer's index in `messages()`.
    pub index: usize,
    /// What `usage()` said once the answer arrived.
    pub tokens: u64,
    /// Where it comes from: the answer's provider usage, local counts, or both.
    #[cfg_attr(test, ts(type = "'usage' | 'estimate' | 'mixed'"))]
    pub source: &'static str,
}

/// One prune: the outputs cleared at one time.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PrunePoint {
    /// Its time (epoch ms): the mark on the outputs it cleared.
    pub at: f64,
    /// Messages that came before it (it lies between message `index - 1` and message `index`).
    pub index: usize,
    /// Tool outputs it cleared.
    pub parts: usize,
    /// Tokens it cleared, as counted before it.
    pub tokens_freed: u64,
    pub tokens_before: u64,
    pub tokens_after: u64,
}

/// One compaction: a completed summary and the request it answers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CompactionPoint {
    /// The request's index in `messages()` (the summary's, when its request is not found).
    pub request: usize,
    /// The summary's index.
    pub summary: usize,
    /// `usage()` before the request and once the summary arrived.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// Indices of the messages the model saw before and no longer sees: what was summarized.
    pub summarized: Vec<usize>,
    pub summarized_tokens: u64,
    /// Indices of the messages it saw before and still sees: what stayed verbatim.
    pub kept: Vec<usize>,
    pub kept_tokens: u64,
    /// Tool outputs already pruned among what the model saw before: how many, and the tokens
    /// they had held.
    pub pruned_parts: usize,
    pub pruned_tokens: u64,
    /// USD of the summary call, from the usage the summary records, when prices are known
    /// (`cache.prices` or `model.cost`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub cost: Option<f64>,
}

/// The prune marks of the history, grouped by time: (time, [(position, part)]), oldest first.
fn prune_groups(entries: &[Entry]) -> Vec<(f64, Vec<(usize, usize)>)> {
    let mut marks: Vec<(f64, usize, usize)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        for (j, p) in e.msg.parts.iter().enumerate() {
            if let Part::Tool(t) = p {
                if let ToolState::Completed { compacted_at: Some(at), .. } = t.state {
                    marks.push((at, i, j));
                }
            }
        }
    }
    marks.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut groups: Vec<(f64, Vec<(usize, usize)>)> = Vec::new();
    for (at, i, j) in marks {
        match groups.last_mut() {
            Some((t, parts)) if *t == at => parts.push((i, j)),
            _ => groups.push((at, vec![(i, j)])),
        }
    }
    groups
}

/// `msg` with the prune marks of the parts `pending` names removed (as it was before those prunes).
fn unpruned(msg: &Message, pending: impl Fn(usize) -> bool) -> Message {
    let mut m = msg.clone();
    for (j, p) in m.parts.iter_mut().enumerate() {
        if !pending(j) {
            continue;
        }
        if let Part::Tool(t) = p {
            if let ToolState::Completed { compacted_at, extra, .. } = &mut t.state {
                *compacted_at = None;
                extra.remove("compactedAs");
            }
        }
    }
    m
}

impl History {
    /// The session over time: replays the history into a fresh one with the same options and
    /// overhead, reading `usage()` after every answer, around every prune and every compaction.
    pub fn timeline(&self) -> Result<Timeline> {
        let mut h = History::new(self.opts.clone())?;
        h.overhead = self.overhead;
        let groups = prune_groups(&self.entries);
        // Per message, the groups (by index) that pruned its parts, with the part.
        let mut marks_of: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.entries.len()];
        for (g, (_, parts)) in groups.iter().enumerate() {
            for &(i, j) in parts {
                marks_of[i].push((g, j));
            }
        }
        let mut applied = 0; // groups applied so far (in time order)
        let mut out = Timeline { tokens: self.entries.iter().map(|e| e.tokens).collect(), ..Timeline::default() };
        // The state of message `i` once the first `applied` groups have run.
        let state = |i: usize, applied: usize| -> Option<Message> {
            let marks = &marks_of[i];
            marks
                .iter()
                .any(|&(g, _)| g >= applied)
                .then(|| unpruned(&self.entries[i].msg, |j| marks.iter().any(|&(g, k)| k == j && g >= applied)))
        };
        let apply = |h: &mut History, g: usize, out: &mut Timeline| -> Result<()> {
            let (at, parts) = &groups[g];
            let before = h.usage().tokens;
            let mut positions: Vec<usize> = parts.iter().map(|&(i, _)| i).collect();
            positions.dedup();
            for &i in &positions {
                let msg = state(i, g + 1).unwrap_or_else(|| self.entries[i].msg.clone());
                h.update(msg)?;
            }
            let freed = parts.iter().map(|&(i, j)| self.entries[i].parts[j].cleared).sum();
            out.prunes.push(PrunePoint {
                at: *at,
                index: h.len(),
                parts: parts.len(),
                tokens_freed: freed,
                tokens_before: before,
                tokens_after: h.usage().tokens,
            });
            Ok(())
        };
        let mut open: Option<(usize, u64, Vec<usize>)> = None; // a request seen: (index, before, visible)
        for (i, e) in self.entries.iter().enumerate() {
            // Prunes that happened before this message, once every message they cleared is here.
            while applied < groups.len()
                && groups[applied].0 < e.seen_at
                && groups[applied].1.iter().all(|&(p, _)| p < i)
            {
                apply(&mut h, applied, &mut out)?;
                applied += 1;
            }
            let summary = e.msg.is_completed_summary();
            let request = summary.then(|| e.msg.parent_id.as_deref().and_then(|id| h.position(id))).flatten();
            if e.msg.compaction().is_some() || (summary && request.is_none()) {
                open = Some((i, h.usage().tokens, h.visible_positions()));
            }
            let entry = match state(i, applied) {
                Some(msg) => Entry { seen_at: e.seen_at, ..Entry::new(msg, &h.counter) },
                None => e.clone(),
            };
            h.push_entry(entry);
            if summary {
                let at = request.unwrap_or(i);
                let (before, visible) = match open.take() {
                    Some((r, before, visible)) if r == at => (before, visible),
                    _ => (h.usage().tokens, h.visible_positions()),
                };
                out.compactions.push(self.compaction_point(&h, at, i, before, &visible, applied, &marks_of));
            } else if e.msg.is_assistant() {
                let u = h.usage();
                out.calls.push(CallPoint { index: i, tokens: u.tokens, source: u.source.as_str() });
            }
        }
        while applied < groups.len() {
            apply(&mut h, applied, &mut out)?;
            applied += 1;
        }
        Ok(out)
    }

    /// What a compaction did, from the view before it (`visible`) and the view `h` has now.
    #[allow(clippy::too_many_arguments)]
    fn compaction_point(
        &self,
        h: &History,
        request: usize,
        summary: usize,
        tokens_before: u64,
        visible: &[usize],
        applied: usize,
        marks_of: &[Vec<(usize, usize)>],
    ) -> CompactionPoint {
        let now: std::collections::HashSet<usize> = h.visible_positions().into_iter().collect();
        let (kept, summarized): (Vec<usize>, Vec<usize>) = visible.iter().partition(|p| now.contains(p));
        let sum = |ps: &[usize]| ps.iter().map(|&p| self.entries[p].tokens).sum();
        let pruned: Vec<(usize, usize)> = visible
            .iter()
            .flat_map(|&p| marks_of[p].iter().filter(|&&(g, _)| g < applied).map(move |&(_, j)| (p, j)))
            .collect();
        CompactionPoint {
            request,
            summary,
            tokens_before,
            tokens_after: h.usage().tokens,
            summarized_tokens: sum(&summarized),
            kept_tokens: sum(&kept),
            summarized,
            kept,
            pruned_parts: pruned.len(),
            pruned_tokens: pruned.iter().map(|&(p, j)| self.entries[p].parts[j].cleared).sum(),
            cost: self.summary_cost(&self.entries[summary].msg),
        }
    }

    /// What the summary call of `summary` cost, from its recorded usage, when prices are known.
    fn summary_cost(&self, summary: &Message) -> Option<f64> {
        let o = &self.opts;
        crate::cost::known_prices(&o.cache, o.model.cost.as_ref())?;
        let u = summary.tokens.as_ref()?;
        let m = crate::cost::CacheModel::resolve(&o.cache, o.model.cost.as_ref());
        Some(m.request_usd(u.input, u.cache_read.unwrap_or(0), u.cache_write.unwrap_or(0), u.output))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::parse_message;
    use crate::policy::{ModelInfo, ModelLimit};
    use crate::session::SessionOptions;

    fn options() -> SessionOptions {
        SessionOptions {
            model: ModelInfo {
                limit: ModelLimit { context: 1_000_000, input: None, output: Some(8_000) },
                ..Default::default()
            },
            tokenizer: Some("estimate".into()),
            ..Default::default()
        }
    }

    fn msg(v: serde_json::Value) -> Message {
        parse_message(v).unwrap()
    }

    fn user(id: &str, at: f64) -> Message {
        msg(
            json!({"id": id, "role": "user", "time": {"created": at}, "parts": [{"type": "text", "id": format!("{id}.t"), "text": format!("{id}: go on")}]}),
        )
    }

    /// An answer with a tool call and its output; `report`: the provider's usage on it.
    fn answer(id: &str, at: f64, words: usize, report: Option<u64>) -> Message {
        let mut v = json!({"id": id, "role": "assistant", "finish": "tool-calls", "time": {"created": at}, "parts": [
            {"type": "tool", "id": format!("{id}.tool"), "callID": format!("{id}.call"), "tool": "read",
             "state": {"status": "completed", "input": {"path": format!("src/{id}.rs")}, "output": "word ".repeat(words)}}]});
        if let Some(input) = report {
            v["tokens"] = json!({"input": input, "output": 10});
        }
        msg(v)
    }

    fn history(msgs: &[Message]) -> History {
        History::from_messages(msgs.to_vec(), options(), &|| false).unwrap()
    }

    /// A session built live: the timeline of its history says what `usage()` said at each step.
    #[test]
    fn replays_what_usage_said_after_each_answer_prune_and_compaction() {
        let mut opts = options();
        opts.compaction.prune_protect = Some(100);
        opts.compaction.prune_minimum = Some(100);
        let mut h = History::new(opts).unwrap();
        let mut said = Vec::new();
        let step = |h: &mut History, m: Message, said: &mut Vec<u64>| {
            let assistant = m.is_assistant();
            h.append(m).unwrap();
            if assistant {
                said.push(h.usage().tokens);
            }
        };
        for i in 0..4 {
            step(&mut h, user(&format!("u{i}"), 0.0), &mut said);
            step(&mut h, answer(&format!("a{i}"), 0.0, 2_000, (i == 1).then_some(9_000)), &mut said);
        }
        let before_prune = h.usage().tokens;
        let pruned = h.prune();
        assert!(!pruned.part_ids.is_empty());
        let after_prune = h.usage().tokens;
        step(&mut h, user("u4", 0.0), &mut said);
        step(&mut h, answer("a4", 0.0, 500, None), &mut said);
        let before_compaction = h.usage().tokens;
        let mut request = msg(
            json!({"id": "r", "role": "user", "parts": [{"type": "compaction", "id": "r.c", "auto": true, "tailStartID": "u4"}]}),
        );
        request.time = None;
        h.append(request).unwrap();
        h.append(msg(json!({"id": "s", "role": "assistant", "summary": true, "parentID": "r", "finish": "stop",
            "parts": [{"type": "text", "id": "s.t", "text": "## Goal\nwork"}]})))
            .unwrap();
        let after_compaction = h.usage().tokens;
        step(&mut h, user("u5", 0.0), &mut said);
        step(&mut h, answer("a5", 0.0, 100, None), &mut said);

        let t = h.timeline().unwrap();
        assert_eq!(t.calls.iter().map(|c| c.tokens).collect::<Vec<_>>(), said);
        assert_eq!(t.calls[1].source, "usage");
        assert_eq!(t.calls[2].source, "mixed");
        assert_eq!(t.tokens, h.entries().iter().map(|e| e.tokens).collect::<Vec<_>>());
        let p = &t.prunes[..];
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].index, p[0].parts), (8, pruned.part_ids.len()));
        assert_eq!((p[0].tokens_before, p[0].tokens_after), (before_prune, after_prune));
        let c = &t.compactions[..];
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].request, c[0].summary), (10, 11));
        assert_eq!((c[0].tokens_before, c[0].tokens_after), (before_compaction, after_compaction));
        assert_eq!(c[0].summarized, (0..8).collect::<Vec<_>>());
        assert_eq!(c[0].kept, [8, 9]);
        let sum = |ps: &[usize]| ps.iter().map(|&p| t.tokens[p]).sum::<u64>();
        assert_eq!((c[0].summarized_tokens, c[0].kept_tokens), (sum(&c[0].summarized), sum(&c[0].kept)));
        assert_eq!(c[0].pruned_parts, pruned.part_ids.len());
        assert!(c[0].pruned_tokens > 0);
        assert_eq!(c[0].cost, None, "no prices known");
    }

    /// A prune recorded in a file (its mark's time between two messages' times) is replayed
    /// there: the context before it holds the outputs it cleared.
    #[test]
    fn a_loaded_prune_applies_between_the_messages_around_its_time() {
        let mut msgs = vec![
            user("u0", 1_000.0),
            answer("a0", 2_000.0, 3_000, None),
            user("u1", 4_000.0),
            answer("a1", 5_000.0, 10, None),
        ];
        let unpruned = msgs.clone();
        if let Part::Tool(t) = &mut msgs[1].parts[0] {
            if let ToolState::Completed { compacted_at, .. } = &mut t.state {
                *compacted_at = Some(3_000.0);
            }
        }
        let t = history(&msgs).timeline().unwrap();
        assert_eq!(t.prunes.len(), 1);
        assert_eq!(t.prunes[0].index, 2);
        assert_eq!(t.calls[0].tokens, history(&unpruned[..2]).usage().tokens);
        assert_eq!(t.calls[1].tokens, history(&msgs).usage().tokens);
        let p = &t.prunes[0];
        assert_eq!(
            (p.tokens_before, p.tokens_after),
            (history(&unpruned[..2]).usage().tokens, history(&msgs[..2]).usage().tokens)
        );
        assert_eq!(p.tokens_freed, history(&msgs).entries()[1].parts[0].cleared);
    }

    #[test]
    fn prices_the_summary_call_when_prices_are_known() {
        let msgs = vec![
            user("u0", 1.0),
            answer("a0", 2.0, 100, None),
            msg(json!({"id": "r", "role": "user", "parts": [{"type": "compaction", "id": "r.c", "auto": false}]})),
            msg(json!({"id": "s", "role": "assistant", "summary": true, "parentID": "r", "finish": "stop",
                "tokens": {"input": 1_000_000, "output": 100_000, "cacheRead": 2_000_000},
                "parts": [{"type": "text", "id": "s.t", "text": "## Goal\nwork"}]})),
        ];
        let mut opts = options();
        opts.model.cost = Some(crate::cost::Prices {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: None,
            cache_write_1h: None,
        });
        let h = History::from_messages(msgs.clone(), opts, &|| false).unwrap();
        let c = &h.timeline().unwrap().compactions[0];
        assert_eq!(c.cost, Some(3.0 + 1.5 + 0.6));
        assert_eq!((c.request, c.summary, c.summarized.clone(), c.kept.clone()), (2, 3, vec![0, 1], vec![]));
        assert_eq!(history(&msgs).timeline().unwrap().compactions[0].cost, None);
    }
}
