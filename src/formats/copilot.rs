//! GitHub Copilot CLI events JSONL: `{type, data, id, timestamp, parentId}`. Messages come from
//! `system.message`, `user.message` (its `transformedContent`: what the model received; the
//! user's own `content` is kept as `userContent`) and `assistant.message` (text, reasoning,
//! `toolRequests`, `outputTokens`); results from `tool.execution_complete`; notifications the
//! model reads become user messages. `assistant.usage` gives the previous answer its usage, else
//! the context size recorded after it (`currentTokens` of `session.usage_info` or
//! `session.shutdown`) does; `session.shutdown`'s per-model totals become `stats.usage`.

use serde_json::{Map, Value};

use super::build::{error, model_ref, Builder, Outcome};
use super::content::{output_text, parse_args, str_field, text_of, time_of};
use super::Record;
use crate::message::{Role, Usage};

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
                let own = text_of(data.get("content").unwrap_or(&Value::Null));
                match data.get("transformedContent").map(text_of).filter(|t| !t.trim().is_empty()) {
                    Some(seen) => {
                        if seen != own {
                            m.extra.insert("userContent".into(), Value::String(own));
                        }
                        Builder::text(&mut m, seen, false);
                    }
                    None => Builder::text(&mut m, own, false),
                }
                b.push_nonempty(m);
            }
            Some("assistant.usage") => {
                let n = |k: &str| data.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
                match b.last_assistant() {
                    Some(mi) if n("inputTokens") + n("outputTokens") > 0 => {
                        b.messages[mi].tokens = Some(Usage {
                            input: n("inputTokens"),
                            output: n("outputTokens"),
                            cache_read: Some(n("cacheReadTokens")).filter(|&c| c > 0),
                            cache_write: Some(n("cacheWriteTokens")).filter(|&c| c > 0),
                            ..Usage::default()
                        });
                    }
                    _ => b.omit("assistant.usage"),
                }
            }
            Some("session.shutdown") => {
                let mut total = Usage::default();
                for m in data.get("modelMetrics").and_then(Value::as_object).into_iter().flat_map(|o| o.values()) {
                    let u = m.get("usage").unwrap_or(m);
                    let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0) as u64;
                    total.input += n("inputTokens");
                    total.output += n("outputTokens");
                    total.cache_read = Some(total.cache_read.unwrap_or(0) + n("cacheReadTokens"));
                    total.cache_write = Some(total.cache_write.unwrap_or(0) + n("cacheWriteTokens"));
                }
                if total.input + total.output > 0 {
                    b.stats.usage = Some(total);
                }
                context_size(data, b);
                b.omit("session.shutdown");
            }
            Some("session.usage_info") => {
                if !context_size(data, b) {
                    b.omit("session.usage_info");
                }
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
                // Output tokens alone are no context size: kept as reported, until `assistant.usage`.
                if let Some(out) = data.get("outputTokens").filter(|o| o.is_number()) {
                    m.extra.insert("outputTokens".into(), out.clone());
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
            Some(other) => b.omit(other),
            None => b.warn(r.line, "a record without `type`; ignored"),
        }
    }
}

/// The context size Copilot CLI recorded (`currentTokens` of `session.usage_info` and
/// `session.shutdown`: system, tools and conversation), as the usage of the answer it follows
/// when that answer has none of its own (`assistant.usage`, which is not always written); says
/// whether it was taken.
fn context_size(data: &Value, b: &mut Builder) -> bool {
    let Some(n) = data.get("currentTokens").and_then(Value::as_f64).filter(|n| n.is_finite() && *n > 0.0) else {
        return false;
    };
    match b.last_assistant() {
        Some(mi) if b.messages[mi].tokens.is_none() => {
            let n = n as u64;
            b.messages[mi].tokens = Some(Usage { input: n, output: 0, total: Some(n), ..Usage::default() });
            true
        }
        _ => false,
    }
}
