//! Property tests over random sessions: the invariants the rest of contextfold relies on.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::fenwick::Summable;
use super::{Breakdown, History, SessionOptions};
use crate::invariants::{check_all, reference_view};
use crate::message::{parse_message, Message};
use crate::policy::{self, can_start_tail, turns, CompactionConfig, ModelInfo, ModelLimit, Selection, Turn};
use crate::tokens::Entry;

/// The tail as first specified, over a copied context: every turn listed, then whole turns from
/// the newest back, then the first position of the next turn whose suffix fits.
fn reference_select(seq: &[&Entry], budget: u64, tail_turns: Option<i64>) -> Selection {
    let everything = Selection { head_end: seq.len(), tail_start_id: None, tail_tokens: 0 };
    if tail_turns.is_some_and(|t| t <= 0) {
        return everything;
    }
    let size = |a: usize, b: usize| -> u64 { seq[a..b].iter().map(|e| e.tokens).sum() };
    let mut all = turns(seq);
    let first = all.first().map_or(seq.len(), |t| t.start);
    if let Some(start) = (0..first).find(|&i| can_start_tail(seq[i])) {
        all.insert(0, Turn { start, end: first, id: String::new() });
    }
    let recent = &all[all.len().saturating_sub(tail_turns.map_or(usize::MAX, |t| t as usize))..];
    let (mut total, mut keep) = (0u64, None);
    for turn in recent.iter().rev() {
        if total + size(turn.start, turn.end) <= budget {
            total += size(turn.start, turn.end);
            keep = Some(turn.start);
            continue;
        }
        let left = budget - total;
        let split = (left > 0)
            .then(|| (turn.start + 1..turn.end).find(|&s| size(s, turn.end) <= left && can_start_tail(seq[s])))
            .flatten();
        if let Some(s) = split {
            total += size(s, turn.end);
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

/// The growth per request by a walk over the context (summaries and compaction requests left out).
fn growth_from_scratch(h: &History) -> u64 {
    let counted: Vec<_> =
        h.visible().into_iter().filter(|e| !e.msg.is_summary() && e.msg.compaction().is_none()).collect();
    let answers = counted.iter().filter(|e| e.msg.is_assistant()).count() as u64;
    counted.iter().map(|e| e.tokens).sum::<u64>() / answers.max(1)
}

fn breakdown_from_scratch(h: &History) -> Breakdown {
    h.visible().into_iter().fold(Breakdown::default(), |b, e| b.plus(Breakdown::of(e, &h.counter)))
}

/// The tool-pair rule in all three output formats, on what the model sees.
fn check_tool_pairs(h: &History) {
    let visible: Vec<&Message> = h.visible().into_iter().map(|e| &e.msg).collect();
    check_all(&visible, "random session");
}

/// One step of a random conversation, turned into a message by `build`.
#[derive(Clone, Debug)]
enum Step {
    User { text_len: usize, image: bool },
    Answer { tools: Vec<(u8, usize)>, text_len: usize, errored: bool, usage: Option<u32> },
    Compaction { tail_back: usize, hidden_back: usize, finished: bool },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0usize..400, any::<bool>()).prop_map(|(text_len, image)| Step::User { text_len, image }),
        6 => (prop::collection::vec((0u8..5, 0usize..3000), 0..4), 0usize..300, prop::bool::weighted(0.1), prop::option::of(1u32..200_000))
            .prop_map(|(tools, text_len, errored, usage)| Step::Answer { tools, text_len, errored, usage }),
        1 => (0usize..8, 0usize..16, prop::bool::weighted(0.8))
            .prop_map(|(tail_back, hidden_back, finished)| Step::Compaction { tail_back, hidden_back, finished }),
    ]
}

fn build(steps: &[Step]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let id = format!("m{i}");
        match s {
            Step::User { text_len, image } => {
                let mut parts = vec![json!({"type": "text", "id": format!("{id}-t"), "text": "x ".repeat(*text_len)})];
                if *image {
                    parts.push(json!({"type": "file", "id": format!("{id}-f"), "mime": "image/png", "url": "data:image/png;base64,AAAA", "filename": "a.png"}));
                }
                out.push(json!({"id": id, "role": "user", "parts": parts}));
            }
            Step::Answer { tools, text_len, errored, usage } => {
                let mut parts = vec![json!({"type": "text", "id": format!("{id}-t"), "text": "y ".repeat(*text_len)})];
                for (k, (status, len)) in tools.iter().enumerate() {
                    let state = match status {
                        0 => json!({"status": "pending", "input": {}}),
                        1 => json!({"status": "running", "input": {"a": 1}}),
                        2 => json!({"status": "error", "input": {}, "error": "boom"}),
                        _ => {
                            json!({"status": "completed", "input": {"k": k}, "output": "out ".repeat(*len)})
                        }
                    };
                    // Reused call ids on purpose: the conversion must make them unique.
                    parts.push(json!({"type": "tool", "id": format!("{id}-p{k}"), "callID": format!("call{}", k % 2), "tool": if k == 3 { "skill" } else { "bash" }, "state": state}));
                }
                let mut m = json!({"id": id, "role": "assistant", "finish": "stop", "parts": parts});
                if *errored {
                    m["error"] = json!({"name": "APIError", "message": "x"});
                }
                if let Some(u) = usage {
                    m["tokens"] = json!({"input": u, "output": 10});
                }
                out.push(m);
            }
            Step::Compaction { tail_back, hidden_back, finished } => {
                let mut part = json!({"type": "compaction", "id": format!("{id}-c"), "auto": true});
                if *tail_back > 0 && *tail_back <= out.len() {
                    part["tailStartID"] = out[out.len() - tail_back]["id"].clone();
                }
                // Sometimes a partial compaction that keeps a head (possibly an invalid one).
                if *hidden_back > 8 && *hidden_back - 8 <= out.len() {
                    part["hiddenFromID"] = out[out.len() - (*hidden_back - 8)]["id"].clone();
                }
                out.push(json!({"id": id, "role": "user", "parts": [part]}));
                let mut summary = json!({"id": format!("{id}-s"), "role": "assistant", "summary": true, "parentID": id,
                    "parts": [{"type": "text", "id": format!("{id}-st"), "text": "summary"}]});
                if *finished {
                    summary["finish"] = json!("stop");
                }
                out.push(summary);
            }
        }
    }
    out
}

fn options(budget: u64) -> SessionOptions {
    let mut compaction = CompactionConfig {
        preserve_recent_tokens: Some(budget),
        prune_protect: Some(2_000),
        prune_minimum: Some(500),
        ..Default::default()
    };
    compaction.tool_output_max_chars = Some(500);
    SessionOptions {
        model: ModelInfo {
            limit: ModelLimit { context: 100_000, input: None, output: Some(4_000) },
            ..Default::default()
        },
        compaction,
        tokenizer: Some("estimate".into()),
        cache: Default::default(),
    }
}

/// What `prepare` plans now (its size before left out: usage reports count by arrival).
fn plan(h: &History) -> Option<crate::compaction::CompactionPlan> {
    let mut plan = crate::compaction::prepare(h, &Default::default()).unwrap();
    if let Some(p) = &mut plan {
        p.tokens_before = 0;
    }
    plan
}

fn history(values: &[Value], budget: u64) -> History {
    let msgs = values.iter().map(|v| parse_message(v.clone()).unwrap()).collect();
    History::from_messages(msgs, options(budget), &|| false).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_on_random_sessions(steps in prop::collection::vec(step(), 0..40), budget in 0u64..6_000) {
        let values = build(&steps);
        let mut h = history(&values, budget);
        check_tool_pairs(&h);

        // The tail fits its budget and starts on a message a provider accepts.
        let s = h.select();
        let visible = h.visible();
        // Read in place (prefix sums, turn index) or over a copy, it is the tail first specified.
        prop_assert_eq!(&s, &reference_select(&visible, budget, h.options().compaction.tail_turns));
        for turns in [0, 1, 2, 3] {
            prop_assert_eq!(policy::select(&visible[..], budget, Some(turns)), reference_select(&visible, budget, Some(turns)));
        }
        if let Some(id) = &s.tail_start_id {
            let tail: u64 = visible[s.head_end..].iter().map(|e| e.tokens).sum();
            prop_assert!(tail <= budget);
            prop_assert_eq!(tail, s.tail_tokens);
            let first = &visible[s.head_end].msg;
            prop_assert_eq!(&first.id, id);
            prop_assert!(first.compaction().is_none() && !first.is_summary() && first.error.is_none());
        }

        // The view equals a plain recursive reading of the compaction rule.
        let msgs: Vec<&Message> = h.entries().iter().map(|e| &e.msg).collect();
        prop_assert_eq!(h.visible_positions(), reference_view(&msgs, msgs.len()));

        // Incremental counting equals counting from scratch, before and after a prune.
        let mut incremental = History::new(options(budget)).unwrap();
        for v in &values {
            incremental.append(parse_message(v.clone()).unwrap()).unwrap();
        }
        prop_assert_eq!(incremental.usage(), h.usage());
        // Digests worked out ahead (as `AutoCompactor` does each step) and kept through the prune
        // below and the updates further down.
        h.warm_compaction();
        incremental.warm_compaction();
        // A dry run clears the same outputs and tells the usage the prune leaves.
        let dry = h.prune_dry_run();
        let first = h.prune();
        prop_assert_eq!(&dry.part_ids, &first.part_ids);
        prop_assert_eq!(first.tokens_after, h.usage().tokens);
        prop_assert_eq!(dry.tokens_after, first.tokens_after);
        let again = h.prune();
        prop_assert!(again.part_ids.is_empty(), "prune is idempotent");
        prop_assert_eq!(again.tokens_freed, 0);
        let rebuilt = History::from_messages(h.entries().iter().map(|e| e.msg.clone()).collect(), options(budget), &|| false).unwrap();
        prop_assert_eq!(rebuilt.visible_tokens_for_tests(), h.visible_tokens_for_tests());
        prop_assert!(first.tokens_freed == 0 || !first.part_ids.is_empty());
        check_tool_pairs(&h);
        // A prepare that gathers kept digests makes the plan of one that reads every message.
        prop_assert_eq!(plan(&h), plan(&rebuilt));

        // Tokens by kind, kept as prefix sums through appends, prunes and updates, equal a sum
        // over the context.
        prop_assert_eq!(h.breakdown(), breakdown_from_scratch(&h));
        prop_assert_eq!(incremental.breakdown(), breakdown_from_scratch(&incremental));
        for e in h.entries() {
            incremental.update(e.msg.clone()).unwrap();
        }
        prop_assert_eq!(incremental.breakdown(), h.breakdown());
        let fresh = History::from_messages(incremental.entries().iter().map(|e| e.msg.clone()).collect(), options(budget), &|| false).unwrap();
        prop_assert_eq!(plan(&incremental), plan(&fresh));
        // So is the growth per request the cache policy weighs.
        prop_assert_eq!(h.growth_per_request(), growth_from_scratch(&h));
        prop_assert_eq!(incremental.growth_per_request(), growth_from_scratch(&incremental));
    }

    #[test]
    fn no_json_value_panics_the_parser(v in any_json(4)) {
        let _ = parse_message(v);
    }
}

fn any_json(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("id".to_string()),
            Just("text".to_string()),
            Just("tool".to_string()),
            ".{0,8}".prop_map(|s| s)
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("id"),
                        Just("role"),
                        Just("parts"),
                        Just("type"),
                        Just("state"),
                        Just("status"),
                        Just("tokens")
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}
