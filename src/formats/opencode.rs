//! opencode export JSON (`opencode export <id>`): `{info, messages: [{info, parts}]}`. Our model is
//! opencode's, so messages map field for field: a tool part already holds the call and its result,
//! compaction parts and `summary: true` assistants are already our compaction. Parts we cannot
//! read are dropped with a warning; unknown part types are kept as they are.

use serde_json::{Map, Value};

use super::build::{count, Builder};
use super::content::str_field;
use super::Record;
use crate::message::{MessageError, ModelRef, Part, Role, Time, Usage};

pub fn import(records: &[Record], b: &mut Builder) {
    for (k, r) in records.iter().enumerate() {
        if k > 0 {
            b.warn(r.line, "a second JSON document after the export; ignored");
            continue;
        }
        for (i, entry) in r.value.get("messages").and_then(Value::as_array).into_iter().flatten().enumerate() {
            b.record();
            let info = entry.get("info").unwrap_or(entry);
            let role = match str_field(info, "role") {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some("system") => Role::System,
                other => {
                    b.skip(other.unwrap_or("message"));
                    b.warn(r.line, format!("messages[{i}]: unknown role {other:?}; ignored"));
                    continue;
                }
            };
            let mut m = b.message(str_field(info, "id"), role, None);
            if let Some(t) = info.get("time") {
                if let Some(created) = t.get("created").and_then(Value::as_f64) {
                    m.time = Some(Time { created, completed: t.get("completed").and_then(Value::as_f64) });
                }
            }
            m.parent_id = str_field(info, "parentID").map(str::to_string);
            m.summary = info.get("summary").and_then(Value::as_bool).filter(|&s| s);
            m.finish = str_field(info, "finish").map(str::to_string);
            if let Some(e) = info.get("error").filter(|e| e.is_object()) {
                let message = e
                    .pointer("/data/message")
                    .or_else(|| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                m.error = Some(MessageError { name: str_field(e, "name").unwrap_or("Error").to_string(), message });
            }
            if let Some(t) = info.get("tokens").filter(|t| t.is_object()) {
                let opt = |n: u64| (n > 0).then_some(n);
                let cache = t.get("cache").unwrap_or(&Value::Null);
                m.tokens = Some(Usage {
                    input: count(t, "input"),
                    output: count(t, "output"),
                    reasoning: opt(count(t, "reasoning")),
                    cache_read: opt(count(cache, "read")),
                    cache_write: opt(count(cache, "write")),
                    total: opt(count(t, "total")),
                });
            }
            let model = match (str_field(info, "providerID"), str_field(info, "modelID")) {
                (Some(p), Some(id)) => Some((p, id)),
                _ => info.get("model").and_then(|mm| Some((str_field(mm, "providerID")?, str_field(mm, "modelID")?))),
            };
            m.model = model.map(|(p, id)| ModelRef { provider_id: p.to_string(), model_id: id.to_string() });
            let known = [
                "id",
                "role",
                "time",
                "parentID",
                "summary",
                "finish",
                "error",
                "tokens",
                "providerID",
                "modelID",
                "model",
            ];
            if let Some(o) = info.as_object() {
                for (key, val) in o {
                    if !known.contains(&key.as_str()) {
                        m.extra.insert(key.clone(), val.clone());
                    }
                }
            }
            for (j, p) in entry.get("parts").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let mut p = p.clone();
                prepare_part(&mut p);
                if let Some(call) = p.get("callID").and_then(Value::as_str) {
                    b.note_call(call);
                }
                match serde_json::from_value::<Part>(p) {
                    Ok(part) => m.parts.push(part),
                    Err(e) => b.warn(r.line, format!("messages[{i}].parts[{j}]: {e}; part dropped")),
                }
            }
            b.push(m, true);
        }
    }
}

/// opencode's prune mark is `state.time.compacted`; ours is `state.compactedAt`. Parts without an
/// id get one from their message and position.
fn prepare_part(p: &mut Value) {
    if let Some(state) = p.get_mut("state").and_then(Value::as_object_mut) {
        if !state.contains_key("compactedAt") {
            if let Some(c) = state.get("time").and_then(|t| t.get("compacted")).cloned() {
                state.insert("compactedAt".into(), c);
            }
        }
        if state.get("status").and_then(Value::as_str) == Some("completed")
            && !state.get("output").is_some_and(Value::is_string)
        {
            let out = state.get("output").map(super::content::output_text).unwrap_or_default();
            state.insert("output".into(), Value::String(out));
        }
    }
    if let Some(o) = p.as_object_mut() {
        if !o.get("id").is_some_and(Value::is_string) {
            o.insert("id".into(), Value::String(format!("part-{}", Map::len(o))));
        }
    }
}
