//! GitHub Copilot CLI events JSONL: `{type, data, id, timestamp, parentId}`. Messages come from
//! `system.message`, `user.message` and `assistant.message` (text, reasoning, `toolRequests`);
//! results from `tool.execution_complete`; notifications the model reads become user messages.

use serde_json::{Map, Value};

use super::build::{error, model_ref, Builder, Outcome};
use super::content::{output_text, parse_args, str_field, text_of, time_of};
use super::Record;
use crate::message::Role;

pub fn import(records: &[Record], b: &mut Builder) {
    b.count_each_call();
    for r in records {
        let v = &r.value;
        let data = v.get("data").unwrap_or(&Value::Null);
        let time = time_of(v.get("timestamp"));
        match str_field(v, "type") {
            Some("system.message") => {
                b.record();
                let mut m = b.message(str_field(v, "id"), Role::System, time);
                Builder::text(&mut m, text_of(data.get("content").unwrap_or(&Value::Null)), false);
                b.push_nonempty(m);
            }
            Some("user.message") => {
                b.record();
                let mut m = b.message(str_field(v, "id"), Role::User, time);
                Builder::text(&mut m, text_of(data.get("content").unwrap_or(&Value::Null)), false);
                b.push_nonempty(m);
            }
            Some("system.notification") => {
                let mut m = b.message(str_field(v, "id"), Role::User, time);
                Builder::text(&mut m, text_of(data.get("content").unwrap_or(&Value::Null)), true);
                if !m.parts.is_empty() {
                    b.push(m, false);
                }
            }
            Some("assistant.message") => {
                b.record();
                let id = str_field(data, "messageId").or_else(|| str_field(v, "id"));
                let mut m = b.message(id, Role::Assistant, time);
                if let Some(r) = str_field(data, "reasoningText") {
                    Builder::reasoning(&mut m, r, Map::new());
                }
                Builder::text(&mut m, text_of(data.get("content").unwrap_or(&Value::Null)), false);
                if let Some(model) = str_field(data, "model") {
                    m.model = model_ref("github-copilot", model);
                }
                let mi = b.push(m, true);
                for t in data.get("toolRequests").and_then(Value::as_array).into_iter().flatten() {
                    b.tool_call(
                        mi,
                        str_field(t, "toolCallId").unwrap_or(""),
                        str_field(t, "name").unwrap_or(""),
                        parse_args(t.get("arguments")),
                    );
                }
            }
            Some("tool.execution_complete") => {
                let id = str_field(data, "toolCallId").unwrap_or("");
                let outcome = if data.get("success").and_then(Value::as_bool) == Some(false) {
                    let msg = data
                        .pointer("/error/message")
                        .map(output_text)
                        .or_else(|| data.pointer("/result/content").map(output_text))
                        .unwrap_or_else(|| "the tool failed".to_string());
                    Outcome::Err(msg)
                } else {
                    Outcome::text(data.pointer("/result/content").map(output_text).unwrap_or_default())
                };
                b.result(r.line, id, str_field(data, "toolName"), outcome);
            }
            Some("abort") => {
                if let Some(mi) = b.last_assistant() {
                    let reason = str_field(data, "reason").unwrap_or("aborted");
                    b.messages[mi].error = Some(error("MessageAbortedError", reason));
                }
            }
            Some(_) => {}
            None => b.warn(r.line, "a record without `type`; ignored"),
        }
    }
}
