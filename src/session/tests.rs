//! Tests of the history against the policies: usage sources, prune, select, the compacted view.

use serde_json::{json, Value};

use super::{History, SessionOptions, Source};
use crate::message::{parse_message, Message, Part, ToolState};
use crate::policy::{self, CompactionConfig, ModelInfo, ModelLimit, Rule, Tier};

fn msg(v: Value) -> Message {
    parse_message(v).unwrap()
}

fn user(id: &str, text: &str) -> Message {
    msg(json!({"id": id, "role": "user", "parts": [{"type": "text", "id": format!("{id}-t"), "text": text}]}))
}

fn assistant(id: &str, text: &str) -> Message {
    msg(
        json!({"id": id, "role": "assistant", "finish": "stop", "parts": [{"type": "text", "id": format!("{id}-t"), "text": text}]}),
    )
}

fn tool_answer(id: &str, tool: &str, output: &str) -> Message {
    msg(json!({"id": id, "role": "assistant", "finish": "tool-calls", "parts": [
        {"type": "tool", "id": format!("{id}-tool"), "callID": format!("{id}-call"), "tool": tool,
         "state": {"status": "completed", "input": {"cmd": "x"}, "output": output}}
    ]}))
}

fn request(id: &str, tail: Option<&str>) -> Message {
    let mut part = json!({"type": "compaction", "id": format!("{id}-c"), "auto": true});
    if let Some(t) = tail {
        part["tailStartID"] = json!(t);
    }
    msg(json!({"id": id, "role": "user", "parts": [part]}))
}

fn summary(id: &str, parent: &str, finished: bool) -> Message {
    let mut v = json!({"id": id, "role": "assistant", "summary": true, "parentID": parent,
        "tokens": {"input": 90000, "output": 2000},
        "parts": [{"type": "text", "id": format!("{id}-t"), "text": "## Goal\nsummary"}]});
    if finished {
        v["finish"] = json!("stop");
    }
    msg(v)
}

fn options(context: u64) -> SessionOptions {
    SessionOptions {
        model: ModelInfo { limit: ModelLimit { context, input: None, output: Some(8_000) }, ..Default::default() },
        compaction: CompactionConfig::default(),
        tokenizer: Some("estimate".into()),
        cache: Default::default(),
    }
}

fn history(msgs: Vec<Message>, opts: SessionOptions) -> History {
    History::from_messages(msgs, opts, &|| false).unwrap()
}

fn ids(h: &History) -> Vec<&str> {
    h.visible().into_iter().map(|e| e.msg.id.as_str()).collect()
}

#[test]
fn usage_trusts_the_newest_finished_answer_and_counts_what_follows() {
    let mut h = History::new(options(200_000)).unwrap();
    h.append(user("u1", "hello")).unwrap();
    assert_eq!(h.usage().source, Source::Estimate);
    let mut a = assistant("a1", "hi there");
    a.tokens = Some(crate::message::Usage { input: 1000, output: 50, ..Default::default() });
    h.append(a.clone()).unwrap();
    let u = h.usage();
    assert_eq!((u.source, u.tokens, u.usage_tokens), (Source::Usage, 1050, 1050));
    h.append(user("u2", "next question")).unwrap();
    let u = h.usage();
    assert_eq!(u.source, Source::Mixed);
    assert_eq!(u.tokens, 1050 + h.get("u2").unwrap().tokens);
    // An answer that errored is not trusted.
    let mut bad = assistant("a2", "x");
    bad.tokens = Some(crate::message::Usage { input: 5, output: 5, ..Default::default() });
    bad.error = Some(crate::message::MessageError { name: "APIError".into(), message: "x".into() });
    h.append(bad).unwrap();
    assert_eq!(h.usage().usage_tokens, 1050);
    // Streaming: appended unfinished, then updated with usage.
    let mut streaming = assistant("a3", "partial");
    streaming.finish = None;
    h.append(streaming.clone()).unwrap();
    assert_eq!(h.usage().usage_tokens, 1050);
    streaming.finish = Some("stop".into());
    streaming.tokens = Some(crate::message::Usage { input: 3000, output: 10, ..Default::default() });
    h.update(streaming.clone()).unwrap();
    assert_eq!((h.usage().source, h.usage().tokens), (Source::Usage, 3010));
    streaming.tokens = None;
    h.update(streaming).unwrap();
    assert_eq!(h.usage().usage_tokens, 1050, "falls back to the previous trusted answer");
}

#[test]
fn pressure_tiers_and_overflow() {
    let mut h = History::new(options(10_000)).unwrap(); // usable = 2,000
    h.append(user("u1", "x")).unwrap();
    let mut a = assistant("a1", "y");
    a.tokens = Some(crate::message::Usage { input: 1700, output: 0, ..Default::default() });
    h.append(a.clone()).unwrap();
    assert_eq!(h.usage().tier, Tier::Prune);
    assert!(!h.is_overflow());
    a.tokens = Some(crate::message::Usage { input: 2000, output: 0, ..Default::default() });
    h.update(a).unwrap();
    assert_eq!(h.usage().tier, Tier::Compact);
    assert!(h.is_overflow());
}

#[test]
fn rejected_appends_change_nothing() {
    let mut h = history(vec![user("u1", "a"), assistant("a1", "b")], options(100_000));
    let before = (h.len(), h.usage(), ids(&h).join(","));
    assert_eq!(h.append(user("u1", "dup")).unwrap_err().code, crate::error::Code::DuplicateId);
    assert_eq!(h.update(user("nope", "x")).unwrap_err().code, crate::error::Code::NotFound);
    assert_eq!((h.len(), h.usage(), ids(&h).join(",")), before);
}

#[test]
fn a_completed_summary_hides_what_it_replaced_and_moves_the_tail_after_it() {
    let msgs = vec![
        user("u1", "one"),
        assistant("a1", "one"),
        user("u2", "two"),
        assistant("a2", "two"),
        request("r1", Some("u2")),
        summary("s1", "r1", true),
        user("u3", "three"),
    ];
    let h = history(msgs, options(100_000));
    assert_eq!(ids(&h), ["r1", "s1", "u2", "a2", "u3"]);
    // Usage before the summary (its own included) never counts.
    assert_eq!(h.usage().source, Source::Estimate);
}

#[test]
fn failed_or_unfinished_summaries_hide_nothing_and_do_not_shadow_an_earlier_one() {
    let msgs = vec![
        user("u1", "one"),
        request("r1", None),
        summary("s1", "r1", true),
        user("u2", "two"),
        request("r2", None),
        summary("s2", "r2", false),
    ];
    let h = history(msgs, options(100_000));
    assert_eq!(ids(&h), ["r1", "s1", "u2", "r2", "s2"]);
    let mut failed = summary("s2", "r2", true);
    failed.error = Some(crate::message::MessageError { name: "APIError".into(), message: "500".into() });
    let mut h = h;
    h.update(failed).unwrap();
    assert_eq!(ids(&h), ["r1", "s1", "u2", "r2", "s2"]);
    h.update(summary("s2", "r2", true)).unwrap();
    assert_eq!(ids(&h), ["r2", "s2"]);
}

#[test]
fn a_newer_tail_inside_an_older_tail_drops_the_older_summary() {
    let msgs = vec![
        user("u1", "one"),
        user("u2", "two"),
        request("r1", Some("u2")),
        summary("s1", "r1", true),
        user("u3", "three"),
        request("r2", Some("u2")),
        summary("s2", "r2", true),
        user("u4", "four"),
    ];
    let h = history(msgs, options(100_000));
    assert_eq!(ids(&h), ["r2", "s2", "u2", "u3", "u4"]);
}

#[test]
fn a_missing_tail_id_keeps_no_tail_and_hidden_from_keeps_the_head() {
    let h = history(
        vec![user("u1", "a"), user("u2", "b"), request("r1", Some("gone")), summary("s1", "r1", true)],
        options(100_000),
    );
    assert_eq!(ids(&h), ["r1", "s1"]);
    let mut r = request("r1", Some("u3"));
    if let crate::message::Part::Compaction(c) = &mut r.parts[0] {
        c.hidden_from_id = Some("u2".into());
    }
    let h = history(
        vec![user("u1", "a"), user("u2", "b"), user("u3", "c"), r, summary("s1", "r1", true)],
        options(100_000),
    );
    assert_eq!(ids(&h), ["u1", "r1", "s1", "u3"]);
}

fn big(n: usize) -> String {
    "word ".repeat(n)
}

fn turns_with_outputs(n: usize, tool: impl Fn(usize) -> &'static str) -> Vec<Message> {
    let mut msgs = Vec::new();
    for i in 0..n {
        msgs.push(user(&format!("u{i}"), "go"));
        msgs.push(tool_answer(&format!("a{i}"), tool(i), &big(20_000)));
    }
    msgs
}

/// The tokens of the first tool output of `msgs` (an answer's, second message).
fn output_tokens(msgs: &[Message], opts: &SessionOptions) -> u64 {
    history(msgs.to_vec(), opts.clone()).entries()[1].parts[0].output
}

#[test]
fn prune_clears_old_output_beyond_the_protected_window_once() {
    let msgs = turns_with_outputs(6, |i| if i == 1 { "skill" } else { "bash" });
    let mut opts = options(1_000_000);
    let t = output_tokens(&msgs, &opts);
    opts.compaction.prune_protect = Some(t * 3 / 2);
    opts.compaction.prune_minimum = Some(t / 2);
    let mut h = history(msgs, opts);
    let before = h.usage().tokens;
    let out = h.prune();
    // The last two user turns (5, 4) are skipped; 3 stays within the protection, 2 crosses it;
    // 1 is a protected tool; 0 is cleared.
    assert_eq!(out.part_ids, ["a2-tool", "a0-tool"]);
    assert_eq!(out.message_ids, ["a2", "a0"]);
    assert!(out.tokens_freed > t);
    assert_eq!(h.usage().tokens, before - out.tokens_freed);
    assert!(h.get("a0").unwrap().msg.parts.iter().all(|p| matches!(p, crate::message::Part::Tool(t) if t.is_pruned())));
    assert!(h.prune().part_ids.is_empty(), "idempotent");
    let converted = serde_json::to_value(h.to_model_messages(&Default::default())).unwrap();
    // u0, a0's call, a0's result, u1, ...: each turn converts to three messages.
    for (i, cleared) in [(2, true), (5, false), (8, true), (11, false)] {
        let value = &converted[i]["content"][0]["output"]["value"];
        assert_eq!(value == "[Old tool result content cleared]", cleared, "message {i}");
    }
}

#[test]
fn a_prune_renews_the_digests_of_what_it_cleared() {
    let msgs = turns_with_outputs(6, |_| "bash");
    let mut opts = options(1_000_000);
    let t = output_tokens(&msgs, &opts);
    opts.compaction = CompactionConfig {
        prune_protect: Some(t * 3 / 2),
        prune_minimum: Some(t / 2),
        preserve_recent_tokens: Some(t),
        ..opts.compaction
    };
    let mut h = history(msgs, opts.clone());
    assert_eq!(h.warm_compaction(), 12);
    assert_eq!(h.warm_compaction(), 0, "kept");
    assert!(!h.prune().part_ids.is_empty());
    let plan = |h: &History| {
        let mut p = crate::compaction::prepare(h, &Default::default()).unwrap().unwrap();
        p.tokens_before = 0;
        p
    };
    let gathered = plan(&h);
    assert!(gathered.transcript.iter().any(|b| b.contains("[Old tool result content cleared]")));
    let from_scratch = history(h.entries().iter().map(|e| e.msg.clone()).collect(), opts);
    assert_eq!(gathered, plan(&from_scratch));
}

#[test]
fn a_compaction_drops_the_digests_of_what_it_replaced() {
    let mut h = history(turns_with_outputs(4, |_| "bash"), options(1_000_000));
    assert_eq!(h.warm_compaction(), 8);
    h.append(request("r", Some("u3"))).unwrap();
    h.append(summary("s", "r", true)).unwrap();
    // u3 and a3 stay; the request and the summary are new.
    assert_eq!(h.derived.digested(), 2);
    assert_eq!(h.warm_compaction(), 2);
}

/// A session that never warms (no `AutoCompactor`) lists each message once, however often it
/// changes; one warmed and changed again is listed again, once.
#[test]
fn updates_list_a_message_for_warming_once() {
    let msgs = turns_with_outputs(2, |_| "bash");
    let mut h = history(msgs.clone(), options(1_000_000));
    for _ in 0..100 {
        h.update(msgs[1].clone()).unwrap();
    }
    assert_eq!(h.derived.listed(), msgs.len());
    assert_eq!(h.warm_compaction(), msgs.len());
    for _ in 0..100 {
        h.update(msgs[1].clone()).unwrap();
    }
    assert_eq!(h.derived.listed(), 1);
    assert_eq!(h.warm_compaction(), 1);
}

#[test]
fn a_dry_run_tells_the_usage_the_prune_leaves() {
    let mut msgs = turns_with_outputs(6, |_| "bash");
    // The provider reported usage on the answers of turns 4 (a tool answer) and 5 (text after
    // it): outputs cleared before a report are taken off it, the rest counted locally.
    let report = |m: &mut Message| {
        m.tokens = Some(serde_json::from_value(json!({"input": 150_000, "output": 100})).unwrap());
    };
    report(&mut msgs[9]);
    msgs.push(assistant("a5-text", "done"));
    let mut opts = options(1_000_000);
    let t = output_tokens(&msgs, &opts);
    opts.compaction.prune_protect = Some(t);
    opts.compaction.prune_minimum = Some(t / 2);
    for reported_last in [false, true] {
        let mut msgs = msgs.clone();
        if reported_last {
            report(msgs.last_mut().unwrap());
        }
        let mut h = history(msgs, opts.clone());
        let before = h.usage();
        assert_ne!(before.source, Source::Estimate);
        let dry = h.prune_dry_run();
        assert_eq!(h.usage(), before, "a dry run changes nothing");
        let out = h.prune();
        assert!(out.part_ids.len() >= 2, "{:?}", out.part_ids);
        assert_eq!(dry.part_ids, out.part_ids);
        assert_eq!(out.tokens_after, h.usage().tokens);
        assert_eq!(dry.tokens_after, out.tokens_after);
        assert!(out.tokens_after < before.tokens);
    }
}

#[test]
fn a_single_request_loop_prunes_beyond_its_protected_steps() {
    // One request, 30 tool steps: before, the last two user turns covered everything.
    let mut msgs = vec![user("u0", "audit the service")];
    msgs.extend((0..30).map(|i| tool_answer(&format!("a{i}"), "bash", &big(5_000))));
    let mut opts = options(10_000_000);
    let t = history(msgs.clone(), opts.clone()).get("a0").unwrap().parts[0].output;
    opts.compaction.prune_protect = Some(t * 5);
    opts.compaction.prune_minimum = Some(t);
    let mut h = history(msgs.clone(), opts.clone());
    let out = h.prune();
    // The newest 10 steps are protected, then 5 steps' worth of output; the 15 oldest are cleared.
    assert_eq!(out.message_ids.len(), 15);
    assert_eq!(out.message_ids.last().map(String::as_str), Some("a0"));
    assert!(!out.message_ids.iter().any(|id| id == "a15"));
    assert!(h.prune().part_ids.is_empty(), "idempotent");
    opts.compaction.prune_protect_steps = Some(100);
    assert!(history(msgs, opts).prune().part_ids.is_empty(), "protecting every step keeps opencode's rule");
}

#[test]
fn prune_does_nothing_below_the_minimum_and_stops_at_a_summary() {
    let msgs = turns_with_outputs(5, |_| "bash");
    let mut opts = options(1_000_000);
    let t = output_tokens(&msgs, &opts);
    opts.compaction.prune_protect = Some(t * 5 / 2);
    opts.compaction.prune_minimum = Some(t * 2);
    assert!(history(msgs.clone(), opts.clone()).prune().part_ids.is_empty());

    opts.compaction.prune_protect = Some(t);
    opts.compaction.prune_minimum = Some(0);
    assert_eq!(history(msgs.clone(), opts.clone()).prune().part_ids, ["a1-tool", "a0-tool"]);
    let mut with_summary = msgs[..4].to_vec();
    with_summary.extend([request("r", None), summary("s", "r", true)]);
    with_summary.extend(msgs[4..].iter().cloned());
    // Walking back from the newest: turns 4 and 3 skipped, 2 protected, then the summary stops it.
    assert!(history(with_summary, opts).prune().part_ids.is_empty());
}

#[test]
fn a_loop_going_on_after_a_summary_keeps_its_newest_steps_verbatim() {
    // One request, a summary that hid it, then more tool steps: no user turn is in view.
    let mut opts = options(1_000_000);
    let msgs = vec![
        user("u1", "audit it"),
        tool_answer("a1", "bash", &big(3_000)),
        request("c1", Some("a2")),
        summary("s1", "c1", true),
        tool_answer("a2", "bash", &big(3_000)),
        tool_answer("a3", "bash", &big(3_000)),
        tool_answer("a4", "bash", &big(1_000)),
    ];
    let h = history(msgs.clone(), opts.clone());
    let last_two = h.get("a3").unwrap().tokens + h.get("a4").unwrap().tokens;
    opts.compaction.preserve_recent_tokens = Some(last_two + 10);
    let s = history(msgs, opts).select();
    assert_eq!(s.tail_start_id.as_deref(), Some("a3"));
    assert_eq!(s.tail_tokens, last_two);
}

#[test]
fn select_keeps_whole_turns_then_a_suffix_within_budget() {
    let mut opts = options(1_000_000);
    let msgs = vec![
        user("u1", &big(5_000)),
        assistant("a1", &big(5_000)),
        user("u2", "short"),
        tool_answer("a2", "bash", &big(1_000)),
        assistant("a3", &big(1_000)),
        user("u3", "last"),
        assistant("a4", "done"),
    ];
    let h = history(msgs.clone(), opts.clone());
    let size = |id: &str| h.get(id).unwrap().tokens;
    let last_turn = size("u3") + size("a4");
    let middle_turn = size("u2") + size("a2") + size("a3");

    opts.compaction.preserve_recent_tokens = Some(last_turn + middle_turn + 10);
    let s = history(msgs.clone(), opts.clone()).select();
    assert_eq!(s.tail_start_id.as_deref(), Some("u2"), "the oldest turn cannot be split to fit");
    assert_eq!((s.head_end, s.tail_tokens), (2, last_turn + middle_turn));

    opts.compaction.preserve_recent_tokens = Some(last_turn + size("a3") + 5);
    let s = history(msgs.clone(), opts.clone()).select();
    assert_eq!(s.tail_start_id.as_deref(), Some("a3"), "the largest suffix of turn u2 that fits");
    assert!(s.tail_tokens <= last_turn + size("a3") + 5);

    opts.compaction.tail_turns = Some(1);
    opts.compaction.preserve_recent_tokens = Some(1_000_000);
    assert_eq!(history(msgs.clone(), opts.clone()).select().tail_start_id.as_deref(), Some("u3"));

    opts.compaction.tail_turns = Some(0);
    let s = history(msgs, opts).select();
    assert_eq!((s.tail_start_id, s.head_end), (None, 7));
}

#[test]
fn calibration_learns_from_provider_usage_with_the_estimate() {
    let mut h = History::new(options(1_000_000)).unwrap();
    let mut prompt = 5_000u64; // system prompt and tools
    for i in 0..4 {
        let u = user(&format!("u{i}"), &big(2_000));
        h.append(u).unwrap();
        // The provider sees 1.5 tokens for each local one.
        let local: u64 = h.entries().iter().map(|e| e.tokens).sum();
        let mut a = assistant(&format!("a{i}"), "ok");
        prompt = 5_000 + (local as f64 * 1.5) as u64;
        a.tokens = Some(crate::message::Usage { input: prompt, output: 1, ..Default::default() });
        h.append(a).unwrap();
    }
    let c = h.usage().calibration;
    assert!((c - 1.5).abs() < 0.1, "calibration {c}");
    assert!(prompt > 0);
}

#[test]
fn a_partial_compaction_keeps_the_head_as_the_earlier_compaction_left_it() {
    let mut from = request("r2", None);
    if let crate::message::Part::Compaction(c) = &mut from.parts[0] {
        c.hidden_from_id = Some("u3".into());
    }
    let msgs = vec![
        user("u1", "one"),
        user("u2", "two"),
        request("r1", Some("u2")),
        summary("s1", "r1", true),
        user("u3", "three"),
        assistant("a3", "three"),
        from,
        summary("s2", "r2", true),
        user("u4", "four"),
    ];
    let mut h = history(msgs, options(100_000));
    assert_eq!(ids(&h), ["r1", "s1", "u2", "r2", "s2", "u4"]);
    let all: u64 = ["r1", "s1", "u2", "r2", "s2", "u4"].iter().map(|id| h.get(id).unwrap().tokens).sum();
    assert_eq!(h.usage().tokens, all);
    h.append(user("u5", "five")).unwrap();
    assert_eq!(ids(&h).last(), Some(&"u5"));
}

fn file_call(id: &str, tool: &str, path: &str, output: &str) -> Message {
    msg(json!({"id": id, "role": "assistant", "finish": "tool-calls", "parts": [
        {"type": "tool", "id": format!("{id}-tool"), "callID": format!("{id}-call"), "tool": tool,
         "state": {"status": "completed", "input": {"filePath": path}, "output": output}}
    ]}))
}

#[test]
fn microcompact_stubs_rereads_duplicates_and_stale_reads_and_counts_each_rule() {
    let body = |s: &str| format!("{s}\n{}", "line of the file\n".repeat(60));
    let msgs = vec![
        user("u1", "start"),
        file_call("r1", "read", "a.rs", &body("A")),
        file_call("r2", "read", "b.rs", &body("B")),
        tool_answer("g1", "bash", &body("grep output")),
        file_call("e1", "edit", "b.rs", "ok"),
        file_call("r3", "read", "a.rs", &body("A")),
        tool_answer("g2", "bash", &body("grep output")),
        user("u2", "next"),
        assistant("x", "ok"),
        user("u3", "last"),
    ];
    let mut opts = options(200_000);
    opts.compaction =
        CompactionConfig { prune_duplicates: true, prune_rereads: true, prune_stale_reads: true, ..Default::default() };
    let mut h = History::from_messages(msgs.clone(), opts.clone(), &|| false).unwrap();
    let before = h.usage().tokens;
    let out = h.prune();
    assert_eq!(out.message_ids, ["g1", "r2", "r1"], "newest first: {out:?}");
    let rules: Vec<_> = out.rules.iter().map(|(r, c)| (*r, c.parts)).collect();
    use crate::policy::Rule;
    assert_eq!(rules, [(Rule::Duplicate, 1), (Rule::Reread, 1), (Rule::Stale, 1)]);
    assert_eq!(out.stubs[2].as_deref(), Some("[Unchanged: same content as the later read of a.rs (call r3-call)]"));
    assert_eq!(
        out.stubs[1].as_deref(),
        Some("[Stale: b.rs was modified after this read; read it again for its current content]")
    );
    assert_eq!(out.stubs[0].as_deref(), Some("[Same output as the later bash call g2-call]"));
    assert_eq!(h.usage().tokens, before - out.tokens_freed);
    let text = serde_json::to_string(&h.to_model_messages(&Default::default())).unwrap();
    assert!(text.contains("[Unchanged: same content as the later read of a.rs (call r3-call)]"));
    // Reversible: the outputs are still there, marked; nothing more to do.
    let crate::message::Part::Tool(t) = &h.get("r1").unwrap().msg.parts[0] else { panic!() };
    assert!(matches!(&t.state, crate::message::ToolState::Completed { output, .. } if output.starts_with("A\n")));
    assert!(h.prune().part_ids.is_empty());
    // Off by default.
    let mut plain = opts;
    plain.compaction = CompactionConfig { prune_minimum: Some(0), prune_protect: Some(0), ..Default::default() };
    let mut h = History::from_messages(msgs, plain, &|| false).unwrap();
    assert!(h.prune().stubs.iter().all(Option::is_none));
}

#[test]
fn unsent_messages_are_counted_from_the_end_of_the_context() {
    let mut h = history(vec![user("u1", "a"), tool_answer("a1", "bash", "out")], options(100_000));
    // Nothing recorded: the newest answer's request carried everything before it.
    assert_eq!(h.unsent_in_context(), 1);
    h.record_request(Some(1.0));
    assert_eq!(h.unsent_in_context(), 0);
    h.append(assistant("a2", "done")).unwrap();
    h.append(user("u2", "more")).unwrap();
    assert_eq!(h.unsent_in_context(), 2);
    // A compaction after the request: its messages lead the context, the kept tail follows it,
    // and only what arrived since the request counts.
    h.record_request(Some(2.0));
    h.append(request("r1", Some("u2"))).unwrap();
    h.append(summary("s1", "r1", true)).unwrap();
    h.append(assistant("a3", "next")).unwrap();
    let ids: Vec<&str> = h.visible().iter().map(|e| e.msg.id.as_str()).collect();
    assert_eq!(ids, ["r1", "s1", "u2", "a3"]);
    assert_eq!(h.unsent_in_context(), 1);
}

#[test]
fn overhead_counts_the_system_prompt_and_the_tool_definitions() {
    let mut h = History::new(SessionOptions::default()).unwrap();
    let tools = json!([{"name": "bash", "parameters": {"type": "object"}}]);
    let counter = *h.counter();
    let text = |t: &str| counter.text(t);
    let expected = text("You are terse.") + text("Be brief.") + text(&tools.to_string());
    let set = h.set_overhead_of(&json!({"system": ["You are terse.", 7, "Be brief."], "tools": tools}));
    assert_eq!((set, h.overhead()), (expected, expected));
    let one = text("You are terse.");
    assert_eq!(h.set_overhead_of(&json!({"system": "You are terse.", "tools": null})), one);
    assert_eq!(h.set_overhead_of(&json!({"other": "ignored"})), 0);
}

/// A 32k-window session whose last step, an output of `words` words, arrived after the last request.
fn unread_step(words: usize) -> History {
    let mut opts = options(32_000);
    opts.model.limit.output = Some(4_096);
    let mut h = history(
        vec![
            user("u1", "read the files"),
            tool_answer("a1", "read", &big(3_000)),
            tool_answer("a2", "read", &big(3_000)),
        ],
        opts,
    );
    h.record_request(Some(1.0));
    h.append(tool_answer("a3", "read", &big(words))).unwrap();
    h
}

#[test]
fn a_compaction_keeps_an_unread_output_whole_when_it_fits_beside_a_summary() {
    // About 18k tokens of a 27.9k usable window: more than a quarter, less than what fits.
    let mut h = unread_step(18_000);
    let unread = h.get("a3").unwrap().tokens;
    assert!(unread > h.usable() / 4 && unread < h.usable(), "{unread} of {}", h.usable());
    assert_eq!(h.cut_unread().part_ids.len(), 0);
    assert_eq!(h.compaction_selection().tail_start_id.as_deref(), Some("a3"));
}

#[test]
fn an_unread_output_too_large_for_the_window_is_cut_to_fit_beside_a_summary_once() {
    let mut h = unread_step(60_000);
    let cap = policy::unread_cap(&h.options().model, &h.options().compaction, h.overhead());
    assert!(h.get("a3").unwrap().tokens > h.usable());
    let cut = h.cut_unread();
    assert_eq!(cut.part_ids, ["a3-tool"]);
    assert_eq!(cut.rules[&Rule::Fit].parts, 1);
    let kept = h.get("a3").unwrap().tokens;
    assert!(kept <= cap && kept > cap * 9 / 10, "{kept} of {cap}");
    // The model reads the head and the tail, and how much was left out between them.
    let Part::Tool(t) = &h.get("a3").unwrap().msg.parts[0] else { panic!() };
    let text = t.state.cleared_text().unwrap();
    assert!(
        text.starts_with("word word") && text.ends_with("word ") && text.contains("[... omitted "),
        "{}",
        &text[..80]
    );
    // The output itself is kept, and a compaction keeps the step it was cut to.
    assert!(matches!(&t.state, ToolState::Completed { output, .. } if output.len() == 60_000 * 5));
    assert_eq!(h.compaction_selection().tail_start_id.as_deref(), Some("a3"));
    assert_eq!(h.cut_unread().part_ids.len(), 0);
}

#[test]
fn a_request_the_provider_refused_leaves_the_step_before_it_unread() {
    // A context overflow: the provider answered the request after `a3` with an error and no word.
    let mut h = unread_step(18_000);
    h.append(msg(json!({"id": "e1", "role": "assistant", "parts": [{"type": "text", "id": "e1-t", "text": ""}],
        "error": {"name": "APIError", "message": "prompt is too long"}})))
        .unwrap();
    assert_eq!(h.unread_in_context(), 2);
    assert_eq!(h.compaction_selection().tail_start_id.as_deref(), Some("a3"));
    // An answer that wrote something before it failed read its request.
    h.append(msg(json!({"id": "e2", "role": "assistant", "parts": [{"type": "text", "id": "e2-t", "text": "Partly"}],
        "error": {"name": "APIError", "message": "connection reset"}})))
        .unwrap();
    assert_eq!(h.unread_in_context(), 0);
}

/// `hand_model_messages(held)`: the held messages' first `unchanged`, then `messages`, are what a
/// whole conversion gives.
fn handed_matches_whole(h: &mut History, held: &mut Vec<Value>) -> usize {
    let opts = h.convert_options();
    let back = h.hand_model_messages(&opts, held.len());
    let unchanged = back.unchanged;
    let new: Vec<Value> = back.messages.iter().map(|m| serde_json::to_value(m).unwrap()).collect();
    held.truncate(unchanged);
    held.extend(new);
    assert_eq!(Value::Array(held.clone()), serde_json::to_value(h.to_model_messages(&opts)).unwrap());
    unchanged
}

#[test]
fn a_hand_back_converts_only_what_changed_or_arrived_since_the_last() {
    let msgs = turns_with_outputs(6, |_| "bash");
    let mut opts = options(1_000_000);
    let t = output_tokens(&msgs, &opts);
    opts.compaction.prune_protect = Some(t * 3 / 2);
    opts.compaction.prune_minimum = Some(t / 2);
    let mut h = history(msgs, opts);
    let mut held = Vec::new();
    assert_eq!(handed_matches_whole(&mut h, &mut held), 0);
    let whole = held.len();
    // Nothing new: all of it stands.
    assert_eq!(handed_matches_whole(&mut h, &mut held), whole);
    // Appended, with a call id used before (it takes the same suffix as in a whole conversion).
    h.append(user("u9", "again")).unwrap();
    let mut reused = tool_answer("a9", "bash", "more");
    if let Part::Tool(t) = &mut reused.parts[0] {
        t.call_id = "a0-call".into();
    }
    h.append(reused).unwrap();
    assert_eq!(handed_matches_whole(&mut h, &mut held), whole);
    let converted = serde_json::to_value(h.to_model_messages(&h.convert_options())).unwrap();
    assert_eq!(converted.as_array().unwrap().last().unwrap()["content"][0]["toolCallId"], "a0-call_1");
    // A prune changes old outputs: the hand-back starts at the first message it changed.
    let pruned = h.prune();
    assert_eq!(pruned.message_ids.last().map(String::as_str), Some("a0"));
    assert_eq!(handed_matches_whole(&mut h, &mut held), 1, "u0 stands, a0 is converted again");
    // An update in the middle.
    let n = held.len();
    h.update(tool_answer("a3", "bash", "shorter now")).unwrap();
    let unchanged = handed_matches_whole(&mut h, &mut held);
    assert!(unchanged > 1 && unchanged < n, "{unchanged} of {n}");
    // The caller holds fewer than were handed: no more than that stands.
    held.truncate(4);
    assert!(handed_matches_whole(&mut h, &mut held) <= 4);
    // A compaction changes what is visible: everything is converted.
    h.append(request("c1", None)).unwrap();
    h.append(summary("s1", "c1", true)).unwrap();
    assert_eq!(handed_matches_whole(&mut h, &mut held), 0);
}
