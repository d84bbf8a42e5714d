use serde_json::{json, Value};

use super::{DENIED, EXTRA, OTHER_ID, SOURCES, STEP_START};
use crate::convert::{to_model_messages, ConvertOptions};
use crate::formats::{import_transcript, Format, Imported};
use crate::invariants::check_all;
use crate::message::{Message, Part, Role, ToolState};

fn import(v: &Value) -> Imported {
    import_transcript(&v.to_string(), None).unwrap()
}

fn model_messages(msgs: &[Message]) -> Value {
    serde_json::to_value(to_model_messages(msgs, &ConvertOptions::default())).unwrap()
}

fn balanced(imp: &Imported) {
    let s = &imp.stats;
    assert_eq!(imp.messages.len(), s.records - s.skipped - s.off_branch - s.merged + s.added, "{s:?}");
}

fn call(name: &str, id: &str, state: &str, more: Value) -> Value {
    let mut p = json!({"type": format!("tool-{name}"), "toolCallId": id, "state": state, "input": {"q": id}});
    for (k, v) in more.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

/// Every part type and tool state of ai v5, v6 and v7.
fn every_variant() -> Value {
    json!([
        {"id": "s1", "role": "system", "parts": [{"type": "text", "text": "be brief"}]},
        {"id": "u1", "role": "user", "metadata": {"createdAt": 1_700_000_000_000_u64}, "parts": [
            {"type": "text", "text": "look"},
            {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBORw0KGgo=", "filename": "a.png"},
            {"type": "data-ticket", "id": "t1", "data": {"n": 7}}
        ]},
        {"id": "a1", "role": "assistant", "metadata": {"model": "m"}, "parts": [
            {"type": "step-start"},
            {"type": "reasoning", "text": "think", "state": "done", "providerMetadata": {"anthropic": {"signature": "sig"}}},
            {"type": "text", "text": "running", "state": "done", "providerMetadata": {"p": {"k": 1}}},
            call("search", "c1", "output-available", json!({"output": "found", "providerExecuted": true})),
            call("read", "c2", "output-available", json!({"output": {"lines": 3}})),
            call("bash", "c3", "output-error", json!({"errorText": "boom"})),
            {"type": "dynamic-tool", "toolName": "mcp_fetch", "toolCallId": "c4", "state": "output-available", "input": {}, "output": [1, 2]},
            {"type": "source-url", "sourceId": "s", "url": "https://e/x", "title": "X"},
            {"type": "source-document", "sourceId": "d", "mediaType": "application/pdf", "title": "D"},
            {"type": "step-start"},
            {"type": "text", "text": "next"},
            call("bash", "c5", "output-denied", json!({"approval": {"id": "ap5", "approved": false, "reason": "not now"}})),
            call("bash", "c6", "output-denied", json!({"approval": {"id": "ap6", "approved": false}})),
            call("bash", "c7", "approval-responded", json!({"approval": {"id": "ap7", "approved": false, "reason": "no"}})),
            call("bash", "c8", "approval-responded", json!({"approval": {"id": "ap8", "approved": true}})),
            call("stream", "c9", "output-available", json!({"output": "partial", "preliminary": true})),
            {"type": "step-start"},
            {"type": "file", "mediaType": "image/jpeg", "url": "https://e/y.jpg"},
            {"type": "reasoning-file", "mediaType": "image/png", "url": "https://e/r.png"},
            {"type": "custom", "kind": "openai.compaction", "providerMetadata": {"openai": {"x": 1}}},
            call("bash", "c10", "approval-requested", json!({"approval": {"id": "ap10"}})),
            call("bash", "c11", "input-available", json!({})),
            {"type": "tool-bash", "toolCallId": "c12", "state": "input-streaming", "rawInput": "{\"cmd\": \"l"}
        ]}
    ])
}

#[test]
fn every_part_type_and_tool_state() {
    let imp = import(&every_variant());
    assert_eq!(imp.format, Format::AiSdkUi);
    assert_eq!(imp.warnings, vec![], "known types warn about nothing");
    let ids: Vec<&str> = imp.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["s1", "u1", "a1"]);
    let [s, u, a] = &imp.messages[..] else { panic!() };
    assert_eq!(s.role, Role::System);
    assert_eq!(s.text().as_deref(), Some("be brief"));

    // User: text, file, the data part kept with its own id moved aside.
    assert_eq!(u.time.as_ref().unwrap().created, 1_700_000_000_000.0);
    assert_eq!(u.extra[EXTRA], json!({"metadata": {"createdAt": 1_700_000_000_000_u64}}));
    let Part::File(f) = &u.parts[1] else { panic!("{:?}", u.parts[1]) };
    assert_eq!((f.mime.as_str(), f.filename.as_deref()), ("image/png", Some("a.png")));
    assert!(f.url.starts_with("data:image/png;base64,"));
    let Part::Other(d) = &u.parts[2] else { panic!() };
    assert_eq!(d["type"], "data-ticket");
    assert_eq!(d["data"], json!({"n": 7}));
    assert_eq!(d[OTHER_ID], "t1");
    assert_eq!(d["id"], "u1.2");

    // Assistant: one message, every step in order; step-start and sources are not parts.
    assert_eq!(a.parent_id.as_deref(), Some("u1"));
    assert_eq!(a.parts.len(), 18);
    let Part::Reasoning(r) = &a.parts[0] else { panic!() };
    assert_eq!(r.text, "think");
    assert_eq!(r.extra[EXTRA], json!({"state": "done", "providerMetadata": {"anthropic": {"signature": "sig"}}}));
    assert!(!r.extra.contains_key(STEP_START), "the first step needs no mark");
    let Part::Text(t) = &a.parts[1] else { panic!() };
    assert_eq!(t.extra[EXTRA], json!({"state": "done", "providerMetadata": {"p": {"k": 1}}}));
    assert_eq!(a.extra[SOURCES].as_array().unwrap().len(), 2);
    assert_eq!(a.extra[SOURCES][0]["type"], "source-url");

    let completed = |c: &str| match &imp.tool(c).state {
        ToolState::Completed { output, extra, .. } => (output.clone(), extra.clone()),
        s => panic!("{c}: {s:?}"),
    };
    let error = |c: &str| match &imp.tool(c).state {
        ToolState::Error { error, .. } => error.clone(),
        s => panic!("{c}: {s:?}"),
    };
    assert_eq!(completed("c1").0, "found", "a string output as it is");
    assert_eq!(imp.tool("c1").tool, "search");
    assert_eq!(imp.tool("c1").extra[EXTRA], json!({"state": "output-available", "providerExecuted": true}));
    assert_eq!(completed("c2").0, r#"{"lines":3}"#, "other outputs as JSON");
    assert_eq!(imp.tool("c2").state.input(), &json!({"q": "c2"}));
    assert_eq!(error("c3"), "boom");
    assert_eq!(imp.tool("c4").tool, "mcp_fetch");
    assert_eq!(completed("c4").0, "[1,2]");
    assert_eq!(imp.tool("c4").extra[EXTRA], json!({"type": "dynamic-tool", "state": "output-available"}));
    assert_eq!(error("c5"), format!("{DENIED}: not now"));
    assert_eq!(imp.tool("c5").extra["approval"], json!({"id": "ap5", "approved": false, "reason": "not now"}));
    assert_eq!(error("c6"), DENIED);
    assert_eq!(error("c7"), format!("{DENIED}: no"));
    assert!(matches!(imp.tool("c8").state, ToolState::Running { .. }));
    assert_eq!(imp.tool("c8").extra["approval"], json!({"id": "ap8", "approved": true}));
    let (out, extra) = completed("c9");
    assert_eq!((out.as_str(), extra.get("preliminary")), ("partial", Some(&json!(true))));
    assert!(matches!(imp.tool("c10").state, ToolState::Pending { .. }));
    assert_eq!(imp.tool("c10").extra["approval"], json!({"id": "ap10"}));
    assert!(matches!(imp.tool("c11").state, ToolState::Running { .. }));
    let streaming = imp.tool("c12");
    assert!(matches!(streaming.state, ToolState::Pending { .. }));
    assert_eq!(streaming.state.input(), &json!("{\"cmd\": \"l"), "an unparsable raw input is kept as text");

    // Steps: the first part after each later step-start is marked.
    let marked: Vec<usize> =
        (0..a.parts.len()).filter(|&k| crate::message::ai_sdk_layout::starts_step(&a.parts[k])).collect();
    assert_eq!(marked, [6, 12]);
    let Part::Text(next) = &a.parts[6] else { panic!() };
    assert_eq!(next.text, "next");
    let Part::File(f) = &a.parts[12] else { panic!() };
    assert_eq!(f.mime, "image/jpeg");
    let Part::File(rf) = &a.parts[13] else { panic!() };
    assert_eq!(rf.extra[EXTRA], json!({"type": "reasoning-file"}));
    let Part::Other(custom) = &a.parts[14] else { panic!() };
    assert_eq!(custom["kind"], "openai.compaction");

    assert_eq!(imp.stats.records, 3);
    assert_eq!(imp.stats.tool_calls, 12);
    assert_eq!(imp.stats.omitted.get("step-start"), Some(&3));
    assert_eq!(imp.stats.omitted.get("source-url"), Some(&1));
    assert_eq!(imp.stats.omitted.get("source-document"), Some(&1));
    balanced(&imp);
    let msgs: Vec<&Message> = imp.messages.iter().collect();
    check_all(&msgs, "every_variant");
}

/// Steps stay in one message; converted, each step's calls are answered before the next step, as
/// `convertToModelMessages` sends them.
#[test]
fn steps_convert_as_the_sdk_sends_them() {
    let imp = import(&json!([
        {"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        {"id": "a", "role": "assistant", "parts": [
            {"type": "step-start"},
            call("ls", "c1", "output-available", json!({"output": "a b"})),
            {"type": "step-start"},
            call("cat", "c2", "output-available", json!({"output": "x"})),
            {"type": "step-start"},
            {"type": "text", "text": "done"}
        ]}
    ]));
    assert_eq!(imp.messages.len(), 2);
    let out = model_messages(&imp.messages);
    let shape: Vec<String> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let kinds: Vec<&str> =
                m["content"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
            format!("{}:{}", m["role"].as_str().unwrap(), kinds.join(","))
        })
        .collect();
    assert_eq!(
        shape,
        [
            "user:text",
            "assistant:tool-call",
            "tool:tool-result",
            "assistant:tool-call",
            "tool:tool-result",
            "assistant:text"
        ]
    );
    assert_eq!(out[2]["content"][0]["toolCallId"], "c1");
    assert_eq!(out[2]["content"][0]["output"], json!({"type": "text", "value": "a b"}));

    // The same session as ModelMessages imports with the same calls, each with its result.
    let again = import_transcript(&out.to_string(), None).unwrap();
    assert_eq!(again.format, Format::AiSdk);
    assert_eq!(again.stats.tool_calls, imp.stats.tool_calls);
    for c in ["c1", "c2"] {
        assert!(matches!(again.tool(c).state, ToolState::Completed { .. }));
    }
}

#[test]
fn detection_prefers_ai_sdk_shapes_over_openai_chat() {
    let ui = every_variant();
    assert_eq!(import(&ui).format, Format::AiSdkUi);
    assert_eq!(import(&json!({"id": "chat-1", "messages": ui})).format, Format::AiSdkUi);
    // Text only, no tools: parts instead of content is enough.
    let plain = json!([{"id": "1", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
                       {"id": "2", "role": "assistant", "parts": [{"type": "text", "text": "hello"}]}]);
    assert_eq!(import(&plain).format, Format::AiSdkUi);
    // One message per line.
    let lines: Vec<String> = ui.as_array().unwrap().iter().map(Value::to_string).collect();
    let jsonl = import_transcript(&lines.join("\n"), None).unwrap();
    assert_eq!(jsonl.format, Format::AiSdkUi);
    assert_eq!(jsonl.messages, import(&ui).messages);

    // ModelMessages one per line: ai-sdk as soon as a line shows an AI SDK part.
    let model = [
        json!({"role": "user", "content": "hi"}),
        json!({"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}}]}),
        json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": {"type": "text", "value": "ok"}}]}),
    ];
    let lines: Vec<String> = model.iter().map(Value::to_string).collect();
    let imp = import_transcript(&lines.join("\n"), None).unwrap();
    assert_eq!(imp.format, Format::AiSdk);
    assert_eq!(imp.messages.len(), 2);
    assert!(matches!(imp.tool("c").state, ToolState::Completed { .. }));

    // Not UIMessages: OpenAI chat, and Google's untyped parts.
    let chat = json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
    assert_eq!(import(&chat).format, Format::OpenAiChat);
    let google = json!({"messages": [{"role": "user", "parts": [{"text": "hi"}]}]});
    assert_ne!(import_transcript(&google.to_string(), None).map(|i| i.format).ok(), Some(Format::AiSdkUi));

    assert_eq!(Format::parse("ai-sdk-ui").unwrap(), Format::AiSdkUi);
    assert_eq!(Format::AiSdkUi.as_str(), "ai-sdk-ui");
}

#[test]
fn unknown_parts_states_and_roles_are_kept_and_reported_once() {
    let imp = import(&json!([
        {"id": "u", "role": "user", "parts": [
            {"type": "text", "text": "hi"},
            {"type": "tool-bash", "toolCallId": "x", "state": "output-available", "input": {}, "output": "?"}
        ]},
        {"id": "a", "role": "assistant", "extraField": 1, "parts": [
            {"type": "hologram", "payload": 1},
            {"type": "hologram", "payload": 2},
            {"hologram": 3},
            "loose",
            {"type": "file", "mediaType": "image/png"},
            call("bash", "c1", "output-paused", json!({"output": "half"})),
            call("bash", "c2", "output-paused", json!({"errorText": "bad"})),
            call("bash", "c3", "", json!({}))
        ]},
        {"id": "n", "role": "narrator", "parts": []},
        {"id": "e", "role": "assistant", "parts": [{"type": "step-start"}]},
        "not a message"
    ]));
    let warnings: Vec<&str> = imp.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        warnings,
        [
            "a tool part (\"tool-bash\") in a user message: kept as it came",
            "unknown AI SDK UI part type \"hologram\": kept as it came",
            "a part without a type: kept as it came",
            "a \"file\" part without a `url`: kept as it came",
            "unknown AI SDK UI tool state \"output-paused\": read from the fields present",
            "unknown AI SDK UI tool state \"\": read from the fields present",
            "message with unknown role \"narrator\"; ignored",
            "a message that is not an object; ignored",
        ]
    );
    let a = &imp.messages[1];
    assert_eq!(a.extra[EXTRA], json!({"extraField": 1}));
    let Part::Other(h) = &a.parts[1] else { panic!() };
    assert_eq!((h["type"].as_str(), h["payload"].as_i64()), (Some("hologram"), Some(2)));
    assert!(matches!(imp.tool("c1").state, ToolState::Completed { .. }));
    assert!(matches!(&imp.tool("c2").state, ToolState::Error { error, .. } if error == "bad"));
    assert!(matches!(imp.tool("c3").state, ToolState::Pending { .. }));
    // The user message's tool part is not a call.
    assert!(matches!(&imp.messages[0].parts[1], Part::Other(_)));
    assert_eq!(imp.messages.len(), 2, "the narrator and the empty answer are left out");
    // What is kept reads back from its JSON (what JS and a session file get).
    for m in &imp.messages {
        assert_eq!(&crate::message::parse_message(serde_json::to_value(m).unwrap()).unwrap(), m);
    }
    assert_eq!(imp.stats.skipped, 2);
    assert_eq!(imp.stats.omitted.get("narrator"), Some(&1));
    assert_eq!(imp.stats.omitted.get("assistant (empty)"), Some(&1));
    balanced(&imp);
}

#[test]
fn message_ids_are_the_ui_ids_duplicates_numbered() {
    let imp = import(&json!([
        {"id": "m", "role": "user", "parts": [{"type": "text", "text": "a"}]},
        {"id": "m", "role": "assistant", "parts": [{"type": "text", "text": "b"}]},
        {"role": "user", "parts": [{"type": "text", "text": "c"}]}
    ]));
    let ids: Vec<&str> = imp.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["m", "m-2", "ai-sdk-ui-1"]);
    assert_eq!(imp.messages[1].parent_id.as_deref(), Some("m"));
}

#[test]
fn a_steering_message_splits_the_answer() {
    let imp = import(&json!([
        {"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        {"id": "a", "role": "assistant", "parts": [
            {"type": "step-start"},
            call("ls", "c1", "output-available", json!({"output": "x"})),
            {"type": "steering-message", "id": "st", "parts": [{"type": "text", "text": "only src/"}]},
            {"type": "step-start"},
            {"type": "text", "text": "ok, src/ only"}
        ]}
    ]));
    let shape: Vec<(&str, Role)> = imp.messages.iter().map(|m| (m.id.as_str(), m.role)).collect();
    assert_eq!(shape, [("u", Role::User), ("a", Role::Assistant), ("st", Role::User), ("a-2", Role::Assistant)]);
    assert_eq!(imp.messages[2].text().as_deref(), Some("only src/"));
    assert_eq!(imp.messages[3].parent_id.as_deref(), Some("st"));
    assert_eq!(imp.stats.added, 2);
    balanced(&imp);
}

#[test]
fn forced_on_other_formats_it_reads_nothing_and_says_so() {
    let imp = import_transcript(r#"{"type":"session","version":3,"id":"x"}"#, Some(Format::AiSdkUi)).unwrap();
    assert!(imp.messages.is_empty());
    assert_eq!(imp.warnings.len(), 1);
}
