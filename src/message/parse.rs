//! Validation of messages arriving from outside: every error names the message and the field path.

use serde_json::Value;

use super::part::{CompactionPart, FilePart, Part, ReasoningPart, TextPart, ToolPart, KINDS};
use super::Message;
use crate::error::{CfError, Result};

/// Parses and validates one message. Errors are `CF_INVALID_MESSAGE` and read
/// `message "<id>": <path>: <problem>`.
pub fn parse_message(value: Value) -> Result<Message> {
    let label = match value.get("id") {
        Some(Value::String(id)) if !id.is_empty() => format!("message {id:?}"),
        _ => "message (without id)".to_string(),
    };
    if !value.is_object() {
        return Err(CfError::invalid_message(format!("{label}: expected an object, got {}", kind(&value))));
    }
    let message: Message = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        let text = if path == "." {
            format!("{label}: {inner}")
        } else if inner.starts_with('.') || inner.starts_with(':') {
            format!("{label}: {path}{inner}")
        } else {
            format!("{label}: {path}: {inner}")
        };
        CfError::invalid_message(text)
    })?;
    check_message(&message, &label)?;
    Ok(message)
}

/// The checks serde cannot express (non-empty ids, file parts with a url), for a message already
/// deserialized. `label` names the message in the error text.
pub fn check_message(message: &Message, label: &str) -> Result<()> {
    if message.id.is_empty() {
        return Err(CfError::invalid_message(format!("{label}: id: must not be empty")));
    }
    for (i, part) in message.parts.iter().enumerate() {
        // A part of a kind this model does not know is kept as it came, id or not.
        if part.id().is_empty() && !matches!(part, Part::Other(_)) {
            return Err(CfError::invalid_message(format!("{label}: parts[{i}].id: must be a non-empty string")));
        }
        if let Part::File(f) = part {
            if f.url.is_empty() {
                return Err(CfError::invalid_message(format!("{label}: parts[{i}].url: must not be empty")));
            }
        }
    }
    Ok(())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses one part. The error text starts with the path inside the part (`.state: ...`) or with
/// `: ` when the problem is the part itself, so the caller can prefix `parts[i]`.
pub(super) fn parse_part(value: Value) -> std::result::Result<Part, String> {
    let Value::Object(mut map) = value else {
        return Err(format!(": expected an object, got {}", kind(&value)));
    };
    let ty = match map.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => return Err(format!(".type: expected a string, got {}", kind(other))),
        None => return Err(".type: missing field `type`".to_string()),
    };
    fn typed<T: serde::de::DeserializeOwned>(map: serde_json::Map<String, Value>) -> std::result::Result<T, String> {
        serde_path_to_error::deserialize(Value::Object(map)).map_err(|e| {
            let path = e.path().to_string();
            if path == "." {
                format!(": {}", e.inner())
            } else {
                format!(".{path}: {}", e.inner())
            }
        })
    }
    let known = KINDS.contains(&ty.as_str());
    if known {
        map.remove("type");
    }
    Ok(match ty.as_str() {
        "text" => Part::Text(typed::<TextPart>(map)?),
        "reasoning" => Part::Reasoning(typed::<ReasoningPart>(map)?),
        "tool" => Part::Tool(typed::<ToolPart>(map)?),
        "file" => Part::File(typed::<FilePart>(map)?),
        "compaction" => Part::Compaction(typed::<CompactionPart>(map)?),
        // Kept as it came, id or not (as `check_message` reads it): AI SDK parts of unknown kinds
        // have none.
        _ => {
            if map.get("id").is_some_and(|id| !id.is_string()) {
                return Err(".id: expected a string".to_string());
            }
            Part::Other(Value::Object(map))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        let e = parse_message(v).unwrap_err();
        assert_eq!(e.code, crate::error::Code::InvalidMessage);
        e.message
    }

    #[test]
    fn parses_a_full_message_and_keeps_unknown_fields() {
        let v = json!({
            "id": "m1", "role": "assistant", "sessionID": "s1", "finish": "stop",
            "tokens": {"input": 10, "output": 2, "cacheRead": 5},
            "parts": [
                {"type": "text", "id": "p1", "text": "hi", "metadata": {"x": 1}},
                {"type": "tool", "id": "p2", "callID": "c1", "tool": "read",
                 "state": {"status": "completed", "input": {"path": "a"}, "output": "x", "time": {"start": 1}}},
                {"type": "step-finish", "id": "p3", "reason": "stop"}
            ]
        });
        let m = parse_message(v.clone()).unwrap();
        assert_eq!(m.extra.get("sessionID"), Some(&json!("s1")));
        assert!(matches!(m.parts[2], Part::Other(_)));
        assert_eq!(serde_json::to_value(&m).unwrap(), v);
    }

    #[test]
    fn errors_name_the_message_and_the_path() {
        assert_eq!(err(json!({"role": "user", "parts": []})), "message (without id): missing field `id`");
        let e = err(json!({"id": "m1", "role": "user", "parts": [
            {"type": "text", "id": "a", "text": "x"},
            {"type": "tool", "id": "b", "callID": "c", "tool": "t", "state": {"status": "completed", "input": {}}}
        ]}));
        assert!(e.starts_with("message \"m1\": parts[1].state"), "{e}");
        assert!(e.contains("output"), "{e}");
        let e = err(json!({"id": "m1", "role": "user", "parts": [{"type": "file", "id": "f", "mime": "image/png"}]}));
        assert_eq!(e, "message \"m1\": parts[0]: missing field `url`");
        let e = err(json!({"id": "m1", "role": "user", "parts": [{"type": "text", "text": "x"}]}));
        assert_eq!(e, "message \"m1\": parts[0]: missing field `id`");
        let e = err(json!({"id": "m1", "role": "robot", "parts": []}));
        assert!(e.starts_with("message \"m1\": role: unknown variant `robot`"), "{e}");
        let e = err(json!({"id": "m1", "role": "assistant", "parts": [], "tokens": {"input": -1, "output": 0}}));
        assert!(e.starts_with("message \"m1\": tokens.input: token count must be"), "{e}");
        let e = err(json!({"id": "", "role": "user", "parts": []}));
        assert_eq!(e, "message (without id): id: must not be empty");
        assert!(err(json!(3)).contains("expected an object"));
        let e = err(json!({"id": "m", "role": "user", "parts": [{"type": "x", "id": 1}]}));
        assert_eq!(e, "message \"m\": parts[0].id: expected a string");
        let e = err(json!({"id": "m", "role": "user", "parts": [{"id": "p", "text": "x"}]}));
        assert_eq!(e, "message \"m\": parts[0].type: missing field `type`");
        // A part of a kind this model does not know needs no id.
        let unknown = json!({"id": "m", "role": "user", "parts": [{"type": "x"}]});
        assert_eq!(serde_json::to_value(parse_message(unknown.clone()).unwrap()).unwrap(), unknown);
    }

    /// A part as JSON text, `type` first (as parts are written), with optional fields and fields
    /// of its own.
    fn part_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let text = "(?s).{0,40}";
        let extra =
            prop::option::of(("[a-z]{1,6}", prop_oneof![Just(json!(1.5)), Just(json!(null)), Just(json!([1, "x"]))]));
        (
            0usize..7,
            text,
            text,
            extra,
            prop::option::of(any::<f64>().prop_filter("finite", |f| f.is_finite())),
            any::<bool>(),
        )
            .prop_map(|(kind, a, b, extra, at, flag)| {
                let mut fields = serde_json::Map::new();
                let kinds = ["text", "reasoning", "tool", "file", "compaction", "step-start", "text"];
                fields.insert("type".into(), json!(kinds[kind]));
                fields.insert("id".into(), json!(format!("p{a}")));
                match kind {
                    0 | 1 => {
                        fields.insert("text".into(), json!(b));
                        if flag {
                            fields.insert("synthetic".into(), json!(true));
                        }
                    }
                    2 => {
                        fields.insert("callID".into(), json!("c"));
                        fields.insert("tool".into(), json!("bash"));
                        let mut state =
                            json!({"status": if flag { "completed" } else { "error" }, "input": {"cmd": a}});
                        if flag {
                            state["output"] = json!(b);
                            if let Some(t) = at {
                                state["compactedAt"] = json!(t);
                            }
                        } else {
                            state["error"] = json!(b);
                        }
                        fields.insert("state".into(), state);
                    }
                    3 => {
                        fields.insert("mime".into(), json!("text/plain"));
                        fields.insert("url".into(), json!(b));
                    }
                    4 => {
                        fields.insert("auto".into(), json!(flag));
                        fields.insert("tailStartID".into(), json!(b));
                    }
                    // Missing fields: the error must be the one a `Value` gives.
                    6 if flag => {}
                    _ => {
                        fields.insert("text".into(), json!(b));
                    }
                }
                if let Some((k, v)) = extra {
                    fields.insert(k, v);
                }
                // `type` first: the order parts are written in.
                let mut out = String::from("{");
                for (i, (k, v)) in fields.iter().filter(|(k, _)| *k != "type").enumerate() {
                    if i == 0 {
                        out.push_str(&format!("\"type\":{},", fields["type"]));
                    } else {
                        out.push(',');
                    }
                    out.push_str(&format!("{}:{v}", json!(k)));
                }
                out.push('}');
                out
            })
    }

    proptest::proptest! {
        #[test]
        fn parts_read_straight_are_the_parts_read_through_a_value(text in part_text()) {
            let straight = serde_json::from_str::<Part>(&text).map_err(|e| e.to_string());
            let through = parse_part(serde_json::from_str(&text).unwrap());
            proptest::prop_assert_eq!(straight.is_ok(), through.is_ok(), "{}: {:?} / {:?}", text, straight, through);
            if let (Ok(a), Ok(b)) = (straight, through) {
                proptest::prop_assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn a_second_type_is_refused_and_a_non_object_named() {
        let e = serde_json::from_str::<Part>(r#"{"type":"text","id":"a","text":"x","type":"text"}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate field `type`"), "{e}");
        let e = serde_json::from_str::<Part>(r#""text""#).unwrap_err();
        assert!(e.to_string().starts_with(": expected an object, got a string"), "{e}");
    }
}
