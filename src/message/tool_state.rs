//! Reading a tool state. serde's derive for a tagged enum buffers the whole object (a tool's
//! output included) before it picks the variant, and the text is then copied twice more; a
//! state written with `status` first (every one this crate writes) is read straight into the
//! variant's fields instead, and any other goes through a `Value`, which reads the same.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Error, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{FilePart, Text, ToolState};

const STATUSES: &[&str] = &["pending", "running", "completed", "error"];

impl<'de> Deserialize<'de> for ToolState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ToolState, D::Error> {
        d.deserialize_map(StateVisitor)
    }
}

struct StateVisitor;

impl<'de> Visitor<'de> for StateVisitor {
    type Value = ToolState;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tool state")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolState, A::Error> {
        let first: Option<String> = map.next_key()?;
        if first.as_deref() == Some("status") {
            let status: String = map.next_value()?;
            return variant(&status, MapAccessDeserializer::new(map));
        }
        let mut whole = Map::new();
        if let Some(key) = first {
            whole.insert(key, map.next_value()?);
        }
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            whole.insert(key, value);
        }
        let status = match whole.remove("status") {
            Some(Value::String(s)) => s,
            Some(other) => return Err(A::Error::custom(format!("status: expected a string, got {other}"))),
            None => return Err(A::Error::missing_field("status")),
        };
        variant(&status, Value::Object(whole)).map_err(A::Error::custom)
    }
}

/// The fields of a state whose status is read: `d` holds the rest of its object.
fn variant<'de, D: Deserializer<'de>>(status: &str, d: D) -> Result<ToolState, D::Error> {
    let state = match status {
        "pending" => {
            let Open { input, extra } = Open::deserialize(d)?;
            ToolState::Pending { input, extra }
        }
        "running" => {
            let Open { input, extra } = Open::deserialize(d)?;
            ToolState::Running { input, extra }
        }
        "completed" => {
            let Completed { input, output, title, compacted_at, attachments, extra } = Completed::deserialize(d)?;
            ToolState::Completed { input, output, title, compacted_at, attachments, extra }
        }
        "error" => {
            let Failed { input, error, extra } = Failed::deserialize(d)?;
            ToolState::Error { input, error, extra }
        }
        other => return Err(D::Error::unknown_variant(other, STATUSES)),
    };
    // A second `status` would land among the fields kept as they came.
    match &state {
        ToolState::Pending { extra, .. }
        | ToolState::Running { extra, .. }
        | ToolState::Completed { extra, .. }
        | ToolState::Error { extra, .. }
            if extra.contains_key("status") =>
        {
            Err(D::Error::duplicate_field("status"))
        }
        _ => Ok(state),
    }
}

/// `pending` and `running`.
#[derive(Deserialize)]
struct Open {
    #[serde(default)]
    input: Value,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct Completed {
    #[serde(default)]
    input: Value,
    output: Text,
    #[serde(default)]
    title: Option<String>,
    #[serde(rename = "compactedAt", default)]
    compacted_at: Option<f64>,
    #[serde(default)]
    attachments: Option<Vec<FilePart>>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct Failed {
    #[serde(default)]
    input: Value,
    error: Text,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(v: Value) -> Result<ToolState, String> {
        // Through text, as a store line is read, so the direct path is the one taken.
        serde_json::from_str(&v.to_string()).map_err(|e| e.to_string())
    }

    fn states() -> Vec<ToolState> {
        let extra = |k: &str| Map::from_iter([(k.to_string(), json!({"n": 1}))]);
        vec![
            ToolState::Pending { input: Value::Null, extra: Map::new() },
            ToolState::Running { input: json!({"cmd": "ls"}), extra: extra("time") },
            ToolState::Completed {
                input: json!({"path": "a\nb"}),
                output: Text::from("line 1\nline \"2\" é"),
                title: Some("t".into()),
                compacted_at: Some(1.5),
                attachments: None,
                extra: extra("metadata"),
            },
            ToolState::Error { input: json!([1]), error: Text::from("boom"), extra: Map::new() },
        ]
    }

    #[test]
    fn reads_what_it_writes_with_the_status_anywhere() {
        for state in states() {
            let v = serde_json::to_value(&state).unwrap();
            assert_eq!(read(v.clone()).unwrap(), state);
            assert!(serde_json::to_string(&state).unwrap().starts_with("{\"status\":"));
            // The status last: read through a `Value`, to the same state.
            let mut fields = v.as_object().unwrap().clone();
            let status = fields.remove("status").unwrap();
            let mut last = fields;
            last.insert("zzz".into(), json!(0));
            last.insert("status".into(), status);
            let mut want = state.clone();
            match &mut want {
                ToolState::Pending { extra, .. }
                | ToolState::Running { extra, .. }
                | ToolState::Completed { extra, .. }
                | ToolState::Error { extra, .. } => extra.insert("zzz".into(), json!(0)),
            };
            assert_eq!(read(Value::Object(last)).unwrap(), want);
        }
    }

    #[test]
    fn fields_another_status_has_are_kept_as_they_came() {
        let got = read(json!({"status": "pending", "output": {"not": "text"}})).unwrap();
        let extra = Map::from_iter([("output".to_string(), json!({"not": "text"}))]);
        assert_eq!(got, ToolState::Pending { input: Value::Null, extra });
    }

    #[test]
    fn says_what_is_wrong_with_a_bad_state() {
        let cases = [
            (json!({"status": "done"}), "unknown variant `done`, expected one of"),
            (json!({"input": {}}), "missing field `status`"),
            (json!({"input": {}, "status": 3}), "status: expected a string, got 3"),
            (json!({"status": 3}), "invalid type: integer `3`, expected a string"),
            (json!({"status": "completed", "input": {}}), "missing field `output`"),
            (json!({"status": "error", "error": 1}), "invalid type: integer `1`"),
            (json!([1]), "invalid type: sequence, expected a tool state"),
        ];
        for (v, want) in cases {
            let e = read(v.clone()).unwrap_err();
            assert!(e.starts_with(want), "{v}: {e}");
        }
        let twice = r#"{"status":"running","input":{},"status":"running"}"#;
        let e = serde_json::from_str::<ToolState>(twice).unwrap_err().to_string();
        assert!(e.starts_with("duplicate field `status`"), "{e}");
    }
}
