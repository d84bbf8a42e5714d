use proptest::prelude::*;
use serde_json::{json, Value};

use crate::convert::{reshape, to_model_messages, ConvertOptions, ModelFormat};
use crate::formats::{from_model_messages, import_transcript, Format, Imported};
use crate::message::{Message, Part, ToolState};
use crate::tokens::{Counter, Tokenizer};

fn back(msgs: &[Message], opts: &ConvertOptions) -> Value {
    serde_json::to_value(to_model_messages(msgs, opts)).unwrap()
}

fn round_trip(x: &Value) -> (Value, Imported) {
    let imported = from_model_messages(x.as_array().unwrap());
    (back(&imported.messages, &ConvertOptions::default()), imported)
}

fn po(v: &str) -> Value {
    json!({ "provider": { "key": v } })
}

/// Every message, part, data and output shape of ai v5, v6 and v7.
fn every_variant() -> Value {
    json!([
        {"role": "system", "content": "be brief", "providerOptions": po("sys")},
        {"role": "user", "content": "hi"},
        {"role": "user", "content": [
            {"type": "text", "text": "look", "providerOptions": po("text")},
            {"type": "image", "image": "iVBORw0KGgo=", "mediaType": "image/png"},
            {"type": "image", "image": "https://e/x.jpg"},
            {"type": "image", "image": {"__cf": "bytes", "base64": "AAAA", "kind": "Uint8Array"}, "mediaType": "image/jpeg"},
            {"type": "file", "data": "data:application/pdf;base64,JVBE", "mediaType": "application/pdf", "filename": "a.pdf"},
            {"type": "file", "data": {"__cf": "url", "href": "https://e/doc.pdf"}, "mediaType": "application/pdf"},
            {"type": "file", "data": {"type": "data", "data": {"__cf": "bytes", "base64": "QUJD", "kind": "Buffer"}}, "mediaType": "text/plain"},
            {"type": "file", "data": {"type": "url", "url": "https://e/y.png"}, "mediaType": "image"},
            {"type": "file", "data": {"type": "reference", "reference": {"openai": "file-1"}}, "mediaType": "application/pdf"}
        ]},
        {"role": "assistant", "content": "plain answer"},
        {"role": "assistant", "providerOptions": po("step"), "content": [
            {"type": "reasoning", "text": "think", "providerOptions": {"anthropic": {"signature": "sig"}}},
            {"type": "text", "text": "running"},
            {"type": "tool-call", "toolCallId": "c1", "toolName": "bash", "input": {"cmd": "ls"}},
            {"type": "tool-call", "toolCallId": "c2", "toolName": "read", "input": {"path": "a"}, "providerOptions": po("call")},
            {"type": "tool-call", "toolCallId": "c3", "toolName": "web_search", "input": {"q": "x"}, "providerExecuted": true},
            {"type": "tool-result", "toolCallId": "c3", "toolName": "web_search", "output": {"type": "json", "value": {"hits": 1}}, "providerExecuted": true},
            {"type": "file", "data": "AAAA", "mediaType": "image/png"},
            {"type": "custom", "kind": "openai.compaction", "providerOptions": {"openai": {"encryptedContent": "xyz"}}},
            {"type": "reasoning-file", "data": "QUJD", "mediaType": "image/png"}
        ]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "c1", "toolName": "bash", "output": {"type": "text", "value": "a b"}},
            {"type": "tool-result", "toolCallId": "c2", "toolName": "read", "output": {"type": "error-json", "value": {"code": 1}}, "providerOptions": po("result")}
        ]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "c4", "toolName": "bash", "input": {}},
            {"type": "tool-call", "toolCallId": "c5", "toolName": "bash", "input": {}},
            {"type": "tool-call", "toolCallId": "c6", "toolName": "shot", "input": {}},
            {"type": "tool-call", "toolCallId": "c7", "toolName": "shot", "input": {}},
            {"type": "tool-call", "toolCallId": "c8", "toolName": "bash", "input": {}}
        ]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "c4", "toolName": "bash", "output": {"type": "error-text", "value": "boom"}},
            {"type": "tool-result", "toolCallId": "c5", "toolName": "bash", "output": {"type": "execution-denied", "reason": "no"}},
            {"type": "tool-result", "toolCallId": "c6", "toolName": "shot", "output": {"type": "content", "value": [
                {"type": "text", "text": "shot"}, {"type": "media", "data": "BBBB", "mediaType": "image/png"}
            ]}},
            {"type": "tool-result", "toolCallId": "c7", "toolName": "shot", "output": {"type": "content", "value": [
                {"type": "text", "text": "t"},
                {"type": "image-data", "data": "CCCC", "mediaType": "image/jpeg"},
                {"type": "file-url", "url": "https://e/z"},
                {"type": "file", "data": {"type": "data", "data": "DDDD"}, "mediaType": "application/pdf"},
                {"type": "custom", "providerOptions": po("item")}
            ]}},
            {"type": "tool-result", "toolCallId": "c8", "toolName": "bash", "output": {"type": "text", "value": "ok", "providerOptions": po("out")}}
        ]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "c9", "toolName": "rm", "input": {}},
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c9"},
            {"type": "tool-call", "toolCallId": "c10", "toolName": "rm", "input": {}},
            {"type": "tool-approval-request", "approvalId": "ap2", "toolCallId": "c10"}
        ]},
        {"role": "tool", "content": [
            {"type": "tool-approval-response", "approvalId": "ap1", "approved": true},
            {"type": "tool-approval-response", "approvalId": "ap2", "approved": false, "reason": "no"}
        ]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "c10", "toolName": "rm", "output": {"type": "execution-denied", "reason": "no"}}
        ]},
        {"role": "user", "content": [{"type": "text", "text": "more"}]}
    ])
}

#[test]
fn every_variant_maps_and_comes_back_as_it_came() {
    let x = every_variant();
    let (out, imported) = round_trip(&x);
    assert_eq!(out, x);
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    assert_eq!(imported.messages.len(), 8);
    assert_eq!(imported.stats.merged, 4);

    let state = |call| imported.tool(call).state.clone();
    let completed = |call| match state(call) {
        ToolState::Completed { output, attachments, .. } => (output, attachments.map_or(0, |a| a.len())),
        s => panic!("{call}: {s:?}"),
    };
    let error = |call| match state(call) {
        ToolState::Error { error, .. } => error,
        s => panic!("{call}: {s:?}"),
    };
    assert_eq!(completed("c1"), ("a b".into(), 0));
    assert_eq!(completed("c3"), ("{\"hits\":1}".into(), 0));
    assert_eq!(completed("c6"), ("shot\n[Attached image/png: file]".into(), 1));
    assert_eq!(completed("c7").1, 2);
    assert_eq!(error("c2"), "{\"code\":1}");
    assert_eq!(error("c4"), "boom");
    assert_eq!(error("c5"), "no");
    assert!(matches!(state("c9"), ToolState::Pending { .. }));
    assert!(imported.tool("c9").extra.contains_key(super::APPROVAL_RESPONSE));

    let files: Vec<(&str, &str)> = imported.messages[2]
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::File(f) => Some((f.mime.as_str(), f.url.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        files,
        [
            ("image/png", "data:image/png;base64,iVBORw0KGgo="),
            ("image/jpeg", "https://e/x.jpg"),
            ("image/jpeg", "data:image/jpeg;base64,AAAA"),
            ("application/pdf", "data:application/pdf;base64,JVBE"),
            ("application/pdf", "https://e/doc.pdf"),
            ("text/plain", "data:text/plain;base64,QUJD"),
            ("image/png", "https://e/y.png"),
        ]
    );
    // A provider reference has no data to read: kept as it came, in the layout (a part of type
    // `file` would read back as a file part).
    let slots = imported.messages[2].extra[super::LAYOUT][0]["content"].as_array().unwrap();
    assert_eq!(slots.last().unwrap()["raw"]["data"]["type"], "reference");
    // The other shapes read the typed form.
    for f in [ModelFormat::Anthropic, ModelFormat::OpenAi] {
        let shaped =
            serde_json::to_string(&reshape(to_model_messages(&imported.messages, &Default::default()), f)).unwrap();
        assert!(shaped.contains("\"c1\"") && shaped.contains("running"), "{shaped}");
    }
}

#[test]
fn pruned_cut_and_stripped_outputs_read_as_text_and_open_calls_get_a_result() {
    let x = every_variant();
    let mut msgs = from_model_messages(x.as_array().unwrap()).messages;
    for m in &mut msgs {
        for p in &mut m.parts {
            if let Part::Tool(t) = p {
                if let ToolState::Completed { compacted_at, .. } = &mut t.state {
                    if t.call_id == "c8" {
                        *compacted_at = Some(1.0);
                    }
                }
            }
        }
    }
    let out = back(&msgs, &ConvertOptions { strip_media: true, tool_output_max_chars: Some(2) });
    let results: Vec<&Value> = out
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|r| r["type"] == "tool-result")
        .collect();
    let output = |call: &str| &results.iter().find(|r| r["toolCallId"] == call).unwrap()["output"];
    assert_eq!(output("c1"), &json!({"type": "text", "value": "a\n[... omitted 1 chars ...]\nb"}));
    assert_eq!(
        output("c8"),
        &json!({"type": "text", "value": "[Old tool result content cleared]", "providerOptions": po("out")})
    );
    assert_eq!(output("c6")["type"], "text");
    assert_eq!(output("c4"), &json!({"type": "error-text", "value": "boom"}));
    assert_eq!(out[2]["content"][1], json!({"type": "text", "text": "[Attached image/png: file]"}));

    // A call without result or approval gets the interrupted result right after it.
    let open = json!([{"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": "a", "toolName": "bash", "input": {}},
        {"type": "text", "text": "and"}
    ]}, {"role": "user", "content": "next"}]);
    let (out, _) = round_trip(&open);
    assert_eq!(out[0], open[0]);
    assert_eq!(
        out[1],
        json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "a", "toolName": "bash",
            "output": {"type": "error-text", "value": "[Tool execution was interrupted]"}}]})
    );
    assert_eq!(out[2], open[1]);
}

#[test]
fn detects_arrays_and_message_objects_before_openai_chat() {
    let x = every_variant();
    let imported = import_transcript(&x.to_string(), None).unwrap();
    assert_eq!(imported.format, Format::AiSdk);
    assert_eq!(back(&imported.messages, &ConvertOptions::default()), x);
    let wrapped = json!({ "messages": x });
    assert_eq!(import_transcript(&wrapped.to_string(), None).unwrap().format, Format::AiSdk);
    let chat =
        json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}]);
    assert_eq!(import_transcript(&chat.to_string(), None).unwrap().format, Format::OpenAiChat);
    assert_eq!(Format::parse("ai-sdk").unwrap(), Format::AiSdk);
}

#[test]
fn unknown_parts_are_kept_in_place_warned_once_and_counted() {
    let x = json!([
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "mystery", "blob": "z".repeat(400)}]},
        {"role": "assistant", "content": [{"type": "mystery"}, {"type": "novel", "x": 1}, {"type": "text", "text": "b"}]}
    ]);
    let (out, imported) = round_trip(&x);
    assert_eq!(out, x);
    let warned: Vec<&str> = imported.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert!(warned[0].contains("mystery") && warned[1].contains("novel"));
    let counter = Counter { tokenizer: Tokenizer::Estimate, image_tokens: 1000, output_max_chars: None };
    let other = &imported.messages[0].parts[1];
    assert!(matches!(other, Part::Other(_)));
    assert!(counter.part(other).total > 50);
}

#[test]
fn every_variant_keeps_the_tool_pair_rule_as_sent_and_typed() {
    let x = every_variant();
    let imported = from_model_messages(x.as_array().unwrap());
    let all: Vec<&Message> = imported.messages.iter().collect();
    crate::invariants::check_all(&all, "every variant");
}

fn warned(imported: &Imported) -> Vec<&str> {
    imported.warnings.iter().map(|w| w.message.as_str()).collect()
}

const NOT_SENT: &str = "a tool message that answers no call of the assistant message before it: kept, not sent";

#[test]
fn a_tool_message_that_answers_no_call_is_kept_reported_and_not_sent() {
    // The fuzz finding: an answer without content, then two tool messages of unknown items.
    let x = json!([
        {"role": "assistant"},
        {"role": "tool", "content": [{"": ""}], "": ""},
        {"role": "tool", "content": [{"t": ""}]}
    ]);
    let (out, imported) = round_trip(&x);
    assert_eq!(out, json!([{"role": "assistant"}]));
    assert_eq!(
        warned(&imported),
        [
            "message content is neither a string nor an array; kept as it is",
            "an AI SDK part without a type: kept as it came",
            NOT_SENT,
            NOT_SENT
        ]
    );
    // Kept in place in the message: a contextfold export gives them back.
    let layout = imported.messages[0].extra[super::LAYOUT].as_array().unwrap();
    assert_eq!(layout[1]["content"], json!([{"raw": {"": ""}}]));
    assert_eq!(layout[2]["content"], json!([{"raw": {"t": ""}}]));
    let all: Vec<&Message> = imported.messages.iter().collect();
    crate::invariants::check_all(&all, "fuzz finding");

    // In a run of tool messages (an approval response, then the result), the one that answers
    // nothing is left out and the others go as they came; an unknown item among answers stays.
    let call = |id: &str| json!({"type": "tool-call", "toolCallId": id, "toolName": "rm", "input": {}});
    let result = |id: &str| json!({"type": "tool-result", "toolCallId": id, "toolName": "rm", "output": {"type": "text", "value": "ok"}});
    let x = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [call("c1"), {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"}, call("c2")]},
        {"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "a1", "approved": true}]},
        {"role": "tool", "content": [result("c1"), {"type": "mystery"}]},
        {"role": "tool", "content": [{"type": "mystery", "n": 2}], "providerOptions": po("x")},
        {"role": "tool", "content": [result("c2")]},
        {"role": "user", "content": "next"}
    ]);
    let (out, imported) = round_trip(&x);
    let mut expected = x.as_array().unwrap().clone();
    expected.remove(4);
    assert_eq!(out, Value::Array(expected));
    assert_eq!(warned(&imported), ["unknown AI SDK part type \"mystery\": kept as it came", NOT_SENT]);
    let all: Vec<&Message> = imported.messages.iter().collect();
    crate::invariants::check_all(&all, "a run of tool messages");

    // A tool message whose result answers a call of an earlier message: the result goes after its
    // call, and nothing is left to send or to report.
    let x = json!([
        {"role": "assistant", "content": [call("c1")]},
        {"role": "user", "content": "wait"},
        {"role": "assistant", "content": "ok"},
        {"role": "tool", "content": [result("c1")]}
    ]);
    let (out, imported) = round_trip(&x);
    assert_eq!(out, json!([x[0], {"role": "tool", "content": [result("c1")]}, x[1], x[2]]));
    assert_eq!(warned(&imported), Vec::<&str>::new());

    // An approval response to no request is kept, not sent; the message's answers are.
    let x = json!([
        {"role": "assistant", "content": [call("c1")]},
        {"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "nope", "approved": true}, result("c1")]}
    ]);
    let (out, imported) = round_trip(&x);
    assert_eq!(out, json!([x[0], {"role": "tool", "content": [result("c1")]}]));
    assert_eq!(
        warned(&imported),
        ["a tool-approval-response that answers no approval request before it: kept, not sent"]
    );
}

#[test]
fn a_second_result_for_a_call_of_its_own_is_ignored_not_pointed_at_another_part() {
    // A fuzz finding: the second result (no id) was slotted onto the text part of the message it
    // followed, which then sent an empty tool message.
    let result = |v: &str| json!({"type": "tool-result", "toolName": "t", "output": {"type": "text", "value": v}});
    let x = json!([
        {"role": "assistant", "content": "x"},
        {"role": "tool", "content": [result("a")]},
        {"role": "assistant", "content": [{"type": "text", "text": "y"}]},
        {"role": "tool", "content": [result("b")]}
    ]);
    let imported = from_model_messages(x.as_array().unwrap());
    assert_eq!(
        warned(&imported),
        [
            "result for tool call \"\", which has no call: kept with a call of its own",
            "a second result for tool call \"\" was ignored"
        ]
    );
    assert_eq!(imported.messages[2].extra[super::LAYOUT][1]["content"], json!([null]));
    let all: Vec<&Message> = imported.messages.iter().collect();
    crate::invariants::check_all(&all, "a second result");
}

#[test]
fn items_that_are_no_parts_are_sent_in_place_and_messages_read_back_from_json() {
    let x = json!([
        {"role": "user", "content": ["loose", {"type": "text", "text": "a"}]},
        {"role": "assistant", "content": [{"t": ""}, {"type": "novel"}, {"type": "text", "text": "b"}, 7]}
    ]);
    let (out, imported) = round_trip(&x);
    assert_eq!(out, x);
    assert_eq!(
        warned(&imported),
        ["an AI SDK part without a type: kept as it came", "unknown AI SDK part type \"novel\": kept as it came"]
    );
    // What JS and a session file read back: a part of an unknown kind needs no id.
    for m in &imported.messages {
        assert_eq!(&crate::message::parse_message(serde_json::to_value(m).unwrap()).unwrap(), m);
    }
    assert!(matches!(imported.messages[1].parts[..], [Part::Other(_), Part::Text(_)]));
}

/// A random AI SDK message list with every variant and valid tool pairing.
mod gen {
    use super::*;

    fn word() -> impl Strategy<Value = String> {
        "[a-z ]{0,8}"
    }

    fn options() -> impl Strategy<Value = Option<Value>> {
        prop::option::of(word().prop_map(|w| po(&w)))
    }

    fn with_options(mut v: Value, o: Option<Value>) -> Value {
        if let Some(o) = o {
            v["providerOptions"] = o;
        }
        v
    }

    fn data() -> impl Strategy<Value = Value> {
        let b64 = "[A-Za-z0-9+/]{4,12}";
        prop_oneof![
            b64.prop_map(Value::from),
            "[a-z]{1,6}".prop_map(|p| json!(format!("https://e/{p}.png"))),
            b64.prop_map(|d| json!(format!("data:image/png;base64,{d}"))),
            (b64, prop::sample::select(vec!["Uint8Array", "ArrayBuffer", "Buffer"]))
                .prop_map(|(d, k)| json!({"__cf": "bytes", "base64": d, "kind": k})),
            "[a-z]{1,6}".prop_map(|p| json!({"__cf": "url", "href": format!("https://e/{p}")})),
            b64.prop_map(|d| json!({"type": "data", "data": d})),
            b64.prop_map(|d| json!({"type": "data", "data": {"__cf": "bytes", "base64": d, "kind": "Uint8Array"}})),
            "[a-z]{1,6}".prop_map(|p| json!({"type": "url", "url": format!("https://e/{p}")})),
        ]
    }

    fn media_type() -> impl Strategy<Value = Option<&'static str>> {
        prop::option::of(prop::sample::select(vec!["image/png", "application/pdf", "text/plain", "image"]))
    }

    fn file(kind: &'static str) -> impl Strategy<Value = Value> {
        (data(), media_type(), prop::option::of("[a-z]{1,5}"), options()).prop_map(move |(d, mt, name, o)| {
            let key = if kind == "image" { "image" } else { "data" };
            let mut v = json!({"type": kind, key: d});
            if let Some(mt) = mt {
                v["mediaType"] = json!(mt);
            }
            if let Some(n) = name.filter(|_| kind == "file") {
                v["filename"] = json!(n);
            }
            with_options(v, o)
        })
    }

    fn text(kind: &'static str) -> impl Strategy<Value = Value> {
        (word(), options()).prop_map(move |(t, o)| with_options(json!({"type": kind, "text": t}), o))
    }

    fn user_part() -> impl Strategy<Value = Value> {
        prop_oneof![
            3 => text("text"),
            1 => file("image"),
            1 => file("file"),
            1 => word().prop_map(|w| json!({"type": "mystery", "w": w})),
        ]
    }

    fn output() -> impl Strategy<Value = Value> {
        let item = prop_oneof![
            word().prop_map(|t| json!({"type": "text", "text": t})),
            "[A-Z]{4}".prop_map(|d| json!({"type": "media", "data": d, "mediaType": "image/png"})),
            "[A-Z]{4}".prop_map(|d| json!({"type": "image-data", "data": d, "mediaType": "image/jpeg"})),
            "[a-z]{1,4}".prop_map(|u| json!({"type": "file-url", "url": format!("https://e/{u}")})),
            data().prop_map(|d| json!({"type": "file", "data": d, "mediaType": "application/pdf"})),
            options().prop_map(|o| with_options(json!({"type": "custom"}), o)),
        ];
        let out = prop_oneof![
            word().prop_map(|v| json!({"type": "text", "value": v})),
            word().prop_map(|v| json!({"type": "json", "value": {"v": v, "n": [1, 2]}})),
            word().prop_map(|v| json!({"type": "error-text", "value": v})),
            word().prop_map(|v| json!({"type": "error-json", "value": v})),
            prop::option::of(word()).prop_map(|r| match r {
                Some(r) => json!({"type": "execution-denied", "reason": r}),
                None => json!({"type": "execution-denied"}),
            }),
            prop::collection::vec(item, 0..4).prop_map(|v| json!({"type": "content", "value": v})),
        ];
        (out, options()).prop_map(|(o, p)| with_options(o, p))
    }

    /// What an assistant step holds; calls get their ids when the list is built.
    #[derive(Clone, Debug)]
    pub enum Item {
        Part(Value),
        /// A client call: its output, or an approval (`Some(approved)`) and whether it ran.
        Call {
            input: Value,
            output: Value,
            approval: Option<bool>,
            ran: bool,
            options: Option<Value>,
        },
        ProviderCall {
            output: Value,
        },
    }

    fn item() -> impl Strategy<Value = Item> {
        prop_oneof![
            2 => text("text").prop_map(Item::Part),
            1 => text("reasoning").prop_map(Item::Part),
            1 => file("file").prop_map(Item::Part),
            1 => file("reasoning-file").prop_map(Item::Part),
            1 => options().prop_map(|o| Item::Part(with_options(json!({"type": "custom", "kind": "openai.compaction"}), o))),
            3 => (word(), output(), prop::option::of(any::<bool>()), any::<bool>(), options()).prop_map(
                |(w, output, approval, ran, options)| Item::Call { input: json!({"w": w}), output, approval, ran, options }
            ),
            1 => output().prop_map(|output| Item::ProviderCall { output }),
        ]
    }

    #[derive(Clone, Debug)]
    pub enum Turn {
        System(String, Option<Value>),
        UserText(String),
        User(Vec<Value>, Option<Value>),
        AssistantText(String),
        Step(Vec<Item>, Option<Value>),
    }

    pub fn turn() -> impl Strategy<Value = Turn> {
        prop_oneof![
            1 => (word(), options()).prop_map(|(t, o)| Turn::System(t, o)),
            1 => word().prop_map(Turn::UserText),
            2 => (prop::collection::vec(user_part(), 0..4), options()).prop_map(|(p, o)| Turn::User(p, o)),
            1 => word().prop_map(Turn::AssistantText),
            4 => (prop::collection::vec(item(), 1..5), options()).prop_map(|(i, o)| Turn::Step(i, o)),
        ]
    }

    pub fn build(turns: &[Turn]) -> Vec<Value> {
        let mut out = Vec::new();
        let mut n = 0;
        for t in turns {
            match t {
                Turn::System(s, o) => out.push(with_options(json!({"role": "system", "content": s}), o.clone())),
                Turn::UserText(s) => out.push(json!({"role": "user", "content": s})),
                Turn::User(parts, o) => out.push(with_options(json!({"role": "user", "content": parts}), o.clone())),
                Turn::AssistantText(s) => out.push(json!({"role": "assistant", "content": s})),
                Turn::Step(items, o) => {
                    let (mut content, mut results, mut responses) = (Vec::new(), Vec::new(), Vec::new());
                    for it in items {
                        n += 1;
                        let id = format!("call{n}");
                        match it {
                            Item::Part(p) => content.push(p.clone()),
                            Item::ProviderCall { output } => {
                                let call = json!({"type": "tool-call", "toolCallId": id, "toolName": "search", "input": {}, "providerExecuted": true});
                                content.push(call);
                                content.push(json!({"type": "tool-result", "toolCallId": id, "toolName": "search", "output": output, "providerExecuted": true}));
                            }
                            Item::Call { input, output, approval, ran, options } => {
                                let call =
                                    json!({"type": "tool-call", "toolCallId": id, "toolName": "bash", "input": input});
                                content.push(with_options(call, options.clone()));
                                if let Some(approved) = approval {
                                    let ap = format!("ap{n}");
                                    content.push(
                                        json!({"type": "tool-approval-request", "approvalId": ap, "toolCallId": id}),
                                    );
                                    responses.push(json!({"type": "tool-approval-response", "approvalId": ap, "approved": approved}));
                                    if !ran {
                                        continue;
                                    }
                                }
                                let result = json!({"type": "tool-result", "toolCallId": id, "toolName": "bash", "output": output});
                                results.push(with_options(result, options.clone()));
                            }
                        }
                    }
                    out.push(with_options(json!({"role": "assistant", "content": content}), o.clone()));
                    for content in [responses, results] {
                        if !content.is_empty() {
                            out.push(json!({"role": "tool", "content": content}));
                        }
                    }
                }
            }
        }
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn model_messages_come_back_as_they_came(turns in prop::collection::vec(gen::turn(), 0..8)) {
        let x = Value::Array(gen::build(&turns));
        let (out, _) = round_trip(&x);
        prop_assert_eq!(out, x);
    }
}
