use serde_json::{json, Value};

use super::{apply, prepare, PrepareOptions, SummaryInput};
use crate::message::{parse_message, Message};
use crate::policy::{CompactionConfig, ModelInfo, ModelLimit};
use crate::session::{History, SessionOptions};

fn msg(v: Value) -> Message {
    parse_message(v).unwrap()
}

fn user(id: &str, text: &str) -> Message {
    msg(json!({"id": id, "role": "user", "parts": [{"type": "text", "id": format!("{id}-t"), "text": text}]}))
}

fn edit(id: &str, path: &str, size: usize) -> Message {
    msg(json!({"id": id, "role": "assistant", "finish": "tool-calls", "parts": [
        {"type": "tool", "id": format!("{id}-e"), "callID": format!("{id}-c"), "tool": "edit",
         "state": {"status": "completed", "input": {"filePath": path}, "output": "ok ".repeat(size)}}
    ]}))
}

fn session(msgs: Vec<Message>, budget: u64) -> History {
    let opts = SessionOptions {
        model: ModelInfo {
            limit: ModelLimit { context: 200_000, input: None, output: Some(8_000) },
            ..Default::default()
        },
        compaction: CompactionConfig { preserve_recent_tokens: Some(budget), ..Default::default() },
        tokenizer: Some("estimate".into()),
        cache: Default::default(),
    };
    History::from_messages(msgs, opts, &|| false).unwrap()
}

fn ids(h: &History) -> Vec<String> {
    h.visible().into_iter().map(|e| e.msg.id.clone()).collect()
}

fn summary(text: &str) -> SummaryInput {
    SummaryInput { text: text.into(), ..Default::default() }
}

#[test]
fn prepares_and_applies_a_compaction_that_keeps_the_tail() {
    let mut msgs =
        vec![msg(json!({"id": "sys", "role": "system", "parts": [{"type": "text", "id": "s", "text": "rules"}]}))];
    for i in 0..6 {
        msgs.push(user(&format!("u{i}"), &format!("step {i}")));
        msgs.push(edit(&format!("a{i}"), &format!("src/f{i}.rs"), 300));
    }
    let mut h = session(msgs, 700);
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert_eq!(plan.hidden_from_id.as_deref(), Some("u0"), "the leading system message is kept");
    let tail = plan.tail_start_id.clone().unwrap();
    assert!(plan.summarized_ids.first().is_some_and(|id| id == "u0"));
    assert!(!plan.summarized_ids.contains(&tail));
    assert_eq!(plan.facts.user_messages[0], "step 0");
    assert!(plan.modified_files.contains(&"src/f0.rs".to_string()));
    assert!(plan.transcript[0].starts_with("[User]: step 0"));
    let before = h.len();
    let [request, answer] = apply(&mut h, &(&plan).into(), summary("## Goal\nship it")).unwrap();
    assert_eq!(h.len(), before + 2);
    let visible = ids(&h);
    let tail_at = visible.iter().position(|id| *id == tail).unwrap();
    assert_eq!(&visible[..3], ["sys".to_string(), request.id.clone(), answer.id.clone()]);
    assert_eq!(tail_at, 3);
    assert!(h.usage().tokens < plan.tokens_before);
    // Built from typed parts, they are what reading them back gives.
    for m in [&request, &answer] {
        assert_eq!(&parse_message(serde_json::to_value(m).unwrap()).unwrap(), m);
    }
    let part = request.compaction().unwrap();
    assert_eq!(part.files.as_ref().map(|f| &f.modified), Some(&plan.modified_files));
    assert!(part.extra["keep"].is_array() && part.extra["pins"].is_array());

    // A second compaction updates the first summary in place and carries its files over.
    for i in 6..9 {
        h.append(user(&format!("u{i}"), &format!("step {i}"))).unwrap();
        h.append(edit(&format!("a{i}"), &format!("src/g{i}.rs"), 300)).unwrap();
    }
    let second = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert_eq!(second.previous_summary.as_deref(), Some("## Goal\nship it"));
    assert!(second.modified_files.contains(&"src/f0.rs".to_string()));
    assert!(second.modified_files.contains(&"src/g6.rs".to_string()));
    assert!(second.transcript.iter().all(|b| !b.contains("ship it")), "the old summary is not re-serialized");
    let fallback =
        SummaryInput { fallback: Some("CF_SERVER: 502 Bad Gateway".into()), ..summary("## Goal\nship it, v2") };
    let [second_request, _] = apply(&mut h, &(&second).into(), fallback).unwrap();
    assert_eq!(second_request.compaction().unwrap().extra["fallback"], "CF_SERVER: 502 Bad Gateway");
    assert!(part.extra.get("fallback").is_none(), "recorded only when the summary fell back");
    let visible = ids(&h);
    assert_eq!(visible[0], "sys");
    assert!(!visible.contains(&request.id), "the first compaction is absorbed");
}

#[test]
fn partial_compaction_up_to_and_from() {
    let msgs: Vec<Message> =
        (0..4).flat_map(|i| [user(&format!("u{i}"), "x"), edit(&format!("a{i}"), "f.rs", 10)]).collect();
    let mut h = session(msgs.clone(), 100_000);
    let plan = prepare(&h, &PrepareOptions { up_to: Some("a1".into()), ..Default::default() }).unwrap().unwrap();
    assert_eq!(plan.summarized_ids, ["u0", "a0", "u1", "a1"]);
    assert_eq!(plan.tail_start_id.as_deref(), Some("u2"));
    apply(&mut h, &(&plan).into(), summary("first half")).unwrap();
    assert_eq!(&ids(&h)[2..], ["u2", "a2", "u3", "a3"]);

    let mut h = session(msgs, 100_000);
    let plan = prepare(&h, &PrepareOptions { from: Some("u2".into()), ..Default::default() }).unwrap().unwrap();
    assert_eq!(plan.summarized_ids, ["u2", "a2", "u3", "a3"]);
    assert_eq!((plan.tail_start_id.as_deref(), plan.hidden_from_id.as_deref()), (None, Some("u2")));
    apply(&mut h, &(&plan).into(), summary("second half")).unwrap();
    assert_eq!(&ids(&h)[..4], ["u0", "a0", "u1", "a1"]);
    assert_eq!(ids(&h).len(), 6);

    let err = prepare(&h, &PrepareOptions { up_to: Some("nope".into()), ..Default::default() }).unwrap_err();
    assert_eq!(err.code, crate::error::Code::InvalidArgument);
}

#[test]
fn a_turn_split_by_the_cut_is_summarized_apart() {
    let msgs = vec![
        user("u0", "old"),
        edit("a0", "a.rs", 50),
        user("u1", "big task"),
        edit("a1", "b.rs", 2_000),
        edit("a2", "c.rs", 10),
    ];
    let h = session(msgs, 200);
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert_eq!(plan.tail_start_id.as_deref(), Some("a2"));
    assert_eq!(plan.transcript.len(), 2);
    assert_eq!(plan.turn_prefix.len(), 2);
    assert!(plan.turn_prefix[0].starts_with("[User]: big task"));
}

#[test]
fn protected_turns_stay_and_nothing_to_summarize_is_none() {
    let msgs: Vec<Message> =
        (0..4).flat_map(|i| [user(&format!("u{i}"), "x"), edit(&format!("a{i}"), "f.rs", 400)]).collect();
    let mut h = session(msgs, 10);
    let plan = prepare(&h, &PrepareOptions { protect_first_turns: 1, ..Default::default() }).unwrap().unwrap();
    assert_eq!(plan.hidden_from_id.as_deref(), Some("u1"));
    apply(&mut h, &(&plan).into(), summary("s")).unwrap();
    assert_eq!(&ids(&h)[..2], ["u0", "a0"]);
    // A single turn cannot keep a tail (it would keep everything): all of it is summarized.
    let h = session(vec![user("u0", "hi")], 10_000);
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert_eq!((plan.summarized_ids, plan.tail_start_id), (vec!["u0".to_string()], None));
    let empty = session(vec![], 10);
    assert!(prepare(&empty, &PrepareOptions::default()).unwrap().is_none());
}

#[test]
fn apply_rejects_empty_summaries_and_stale_plans_without_changing_anything() {
    let msgs: Vec<Message> =
        (0..3).flat_map(|i| [user(&format!("u{i}"), "x"), edit(&format!("a{i}"), "f.rs", 400)]).collect();
    let mut h = session(msgs, 10);
    let mut plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert!(apply(&mut h, &(&plan).into(), summary("  ")).is_err());
    plan.tail_start_id = Some("gone".into());
    assert_eq!(apply(&mut h, &(&plan).into(), summary("s")).unwrap_err().code, crate::error::Code::NotFound);
    assert_eq!(h.len(), 6);
}

#[test]
fn facts_and_pins_carry_across_compactions_and_the_audit_restores_what_a_summary_forgets() {
    let mut msgs = vec![user("u0", "Build the exporter. Never touch the migrations.")];
    for i in 0..4 {
        msgs.push(edit(&format!("a{i}"), &format!("src/f{i}.rs"), 300));
    }
    let mut h = session(msgs, 500);
    let pin = h.pin_text("deploy target is 10.0.0.7", Some("ops".into())).unwrap();
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    let audit = super::audit_summary(&h, &(&plan).into(), "We built things.");
    let restored: Vec<&str> = audit.restored.iter().map(|f| f.text.as_str()).collect();
    assert!(restored.contains(&"Never touch the migrations."), "{restored:?}");
    assert!(restored.contains(&"deploy target is 10.0.0.7"));
    let section = audit.section.clone().unwrap();
    apply(
        &mut h,
        &(&plan).into(),
        SummaryInput { audit: Some(audit), ..summary(&format!("We built things.\n\n{section}")) },
    )
    .unwrap();
    // A second and a third compaction with summaries that forget everything: the facts of the
    // first are still checked, and restored each time.
    for round in 0..2 {
        for i in 0..4 {
            h.append(user(&format!("r{round}u{i}"), &format!("round {round} step {i}"))).unwrap();
            h.append(edit(&format!("r{round}a{i}"), &format!("src/r{round}_{i}.rs"), 300)).unwrap();
        }
        let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
        assert!(plan.keep.iter().any(|f| f.text == "Never touch the migrations."));
        let audit = super::audit_summary(&h, &(&plan).into(), "Nothing to report.");
        let section = audit.section.clone().unwrap();
        assert!(
            section.contains("Never touch the migrations.")
                && section.contains("- Pinned (ops): deploy target is 10.0.0.7"),
            "{section}"
        );
        apply(&mut h, &(&plan).into(), summary(&format!("Nothing to report.\n\n{section}"))).unwrap();
    }
    // The pins are recorded in each request: a session rebuilt from the context still has them.
    let context: Vec<Message> = h.visible().into_iter().map(|e| e.msg.clone()).collect();
    let again = History::from_messages(context, h.options().clone(), &|| false).unwrap();
    assert_eq!(again.pins(), [pin]);
}

#[test]
fn the_plan_never_carries_secrets() {
    let msgs = vec![
        user("u0", "Use the key AKIAIOSFODNN7EXAMPLE to deploy"),
        msg(json!({"id": "a0", "role": "assistant", "finish": "tool-calls", "parts": [
            {"type": "tool", "id": "t", "callID": "c", "tool": "bash",
             "state": {"status": "completed", "input": {"command": "cat .env"}, "output": "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\nDEBUG=1"}}
        ]})),
        user("u1", "next"),
    ];
    let h = session(msgs, 10);
    let plan = prepare(&h, &PrepareOptions { up_to: Some("a0".into()), ..Default::default() }).unwrap().unwrap();
    let text = serde_json::to_string(&plan).unwrap();
    assert!(!text.contains("AKIAIOSFODNN7EXAMPLE") && !text.contains("ghp_abc"), "{text}");
    assert!(text.contains("[REDACTED:aws-access-key]") && text.contains("[REDACTED:github-token]"));
    assert!(plan.redacted >= 3, "{}", plan.redacted);
}

#[test]
fn a_step_the_model_has_not_read_stays_verbatim_when_it_fits_beside_a_summary() {
    let mut msgs = Vec::new();
    for i in 0..4 {
        msgs.push(user(&format!("u{i}"), &format!("step {i}")));
        msgs.push(edit(&format!("a{i}"), &format!("src/f{i}.rs"), 300));
    }
    let mut h = session(msgs.clone(), 500);
    h.record_request(None);
    // The answer to that request: a tool output far over the tail's budget, not read by the model.
    h.append(edit("big", "src/big.rs", 20_000)).unwrap();
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert_eq!(plan.tail_start_id.as_deref(), Some("big"));
    assert!(!plan.summarized_ids.contains(&"big".to_string()));
    // Once a request has read it, the tail is the budget's again: the step is summarized.
    h.record_request(None);
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert!(plan.summarized_ids.contains(&"big".to_string()));
    // A step of 60k tokens, far over a quarter of the window, still fits beside a summary.
    let mut h = session(msgs.clone(), 500);
    h.record_request(None);
    h.append(edit("large", "src/large.rs", 80_000)).unwrap();
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert_eq!(plan.tail_start_id.as_deref(), Some("large"));
    // One larger than the window would be summarized unread: it is cut to fit first, then kept.
    let mut h = session(msgs, 500);
    h.record_request(None);
    h.append(edit("huge", "src/huge.rs", 300_000)).unwrap();
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert!(plan.summarized_ids.contains(&"huge".to_string()));
    assert_eq!(h.cut_unread().part_ids, ["huge-e"]);
    let plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    assert_eq!(plan.tail_start_id.as_deref(), Some("huge"));
}

/// The roles of what the model is sent, and the text of the last message.
fn sent(h: &History) -> (Vec<String>, String) {
    let out = serde_json::to_value(h.to_model_messages(&h.convert_options())).unwrap();
    let roles = out.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_string()).collect();
    let last = out.as_array().unwrap().last().unwrap()["content"].to_string();
    (roles, last)
}

#[test]
fn the_context_after_a_compaction_ends_on_a_user_turn_with_the_latest_request_in_it() {
    let msgs = vec![
        user("u0", "first"),
        edit("a0", "src/a.rs", 300),
        user("u1", "Fix the parser, keep the API."),
        edit("a1", "src/b.rs", 300),
    ];
    // No tail: the request, restated after the summary, ends the context.
    let mut h = session(msgs.clone(), 500);
    let mut plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    plan.summarized_ids = ids(&h);
    plan.tail_start_id = None;
    let preview = crate::compaction::preview(
        &h,
        &crate::compaction::PreviewPlan { summarized_ids: plan.summarized_ids.clone() },
        "## Goal\ns",
        None,
    );
    let [_, answer] = apply(&mut h, &(&plan).into(), summary("## Goal\ns")).unwrap();
    assert_eq!(answer.latest_request(), Some("Fix the parser, keep the API."));
    let (roles, last) = sent(&h);
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert!(last.contains("Fix the parser, keep the API."), "{last}");
    // The restated request is counted where the preview counted it.
    assert_eq!(h.usage().tokens, preview.tokens_after);
    // A later compaction of the same loop restates it again: the first one hid the request.
    h.append(edit("a2", "src/c.rs", 300)).unwrap();
    let everything = super::ApplyPlan { auto: true, ..Default::default() };
    let [_, answer] = apply(&mut h, &everything, summary("## Goal\ns2")).unwrap();
    assert_eq!(answer.latest_request(), Some("Fix the parser, keep the API."));

    // A tail that starts inside the request's own tool loop: restated before it.
    let mut h = session(msgs.clone(), 500);
    let mut plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    plan.summarized_ids = ["u0", "a0", "u1"].map(String::from).to_vec();
    plan.tail_start_id = Some("a1".into());
    apply(&mut h, &(&plan).into(), summary("## Goal\ns")).unwrap();
    let (roles, _) = sent(&h);
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "tool"]);

    // A tail that holds the request: nothing restated.
    let mut h = session(msgs, 500);
    let mut plan = prepare(&h, &PrepareOptions::default()).unwrap().unwrap();
    plan.summarized_ids = ["u0", "a0"].map(String::from).to_vec();
    plan.tail_start_id = Some("u1".into());
    let [_, answer] = apply(&mut h, &(&plan).into(), summary("## Goal\ns")).unwrap();
    assert_eq!(answer.latest_request(), None);
    assert_eq!(sent(&h).0, ["user", "assistant", "user", "assistant", "tool"]);
}
