//! Gemini CLI session JSON: `{sessionId, messages[]}` where `user` and `gemini` messages carry the
//! conversation and each tool call is stored with its result. `info`/`error` notices are UI only.

use serde_json::{Map, Value};

use super::build::{count, model_ref, Builder, Outcome};
use super::content::{output_text, parse_args, str_field, text_of, time_of};
use super::Record;
use crate::message::{Role, Usage};

pub fn import(records: &[Record], b: &mut Builder) {
    b.count_each_call();
    for (k, r) in records.iter().enumerate() {
        if k > 0 {
            b.warn(r.line, "a second JSON document after the session; ignored");
            continue;
        }
        for v in r.value.get("messages").and_then(Value::as_array).into_iter().flatten() {
            b.record();
            let time = time_of(v.get("timestamp"));
            let content = text_of(v.get("content").unwrap_or(&Value::Null));
            match str_field(v, "type") {
                Some("user") => {
                    let mut m = b.message(str_field(v, "id"), Role::User, time);
                    Builder::text(&mut m, content, false);
                    b.push_nonempty(m);
                }
                Some("gemini") | Some("model") => {
                    let mut m = b.message(str_field(v, "id"), Role::Assistant, time);
                    for t in v.get("thoughts").and_then(Value::as_array).into_iter().flatten() {
                        let text = match (str_field(t, "subject"), str_field(t, "description")) {
                            (Some(s), Some(d)) => format!("**{s}**\n{d}"),
                            (s, d) => s.or(d).unwrap_or("").to_string(),
                        };
                        Builder::reasoning(&mut m, text, Map::new());
                    }
                    Builder::text(&mut m, content, false);
                    if let Some(model) = str_field(v, "model") {
                        m.model = model_ref("google", model);
                    }
                    if let Some(t) = v.get("tokens").filter(|t| t.is_object()) {
                        let cached = count(t, "cached");
                        let thoughts = count(t, "thoughts");
                        let total = count(t, "total");
                        m.tokens = Some(Usage {
                            input: count(t, "input").saturating_sub(cached),
                            output: count(t, "output"),
                            reasoning: (thoughts > 0).then_some(thoughts),
                            cache_read: (cached > 0).then_some(cached),
                            cache_write: None,
                            total: (total > 0).then_some(total),
                        });
                    }
                    let mi = b.push(m, true);
                    for call in v.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                        let id = str_field(call, "id").unwrap_or("");
                        let name = str_field(call, "name").unwrap_or("");
                        b.tool_call(mi, id, name, parse_args(call.get("args")));
                        let responses: Vec<String> = call
                            .get("result")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|res| res.pointer("/functionResponse/response"))
                            .map(|resp| match resp.get("output").or_else(|| resp.get("error")) {
                                Some(o) => output_text(o),
                                None => output_text(resp),
                            })
                            .collect();
                        let status = str_field(call, "status").unwrap_or("success");
                        if responses.is_empty() && status != "error" && status != "cancelled" {
                            continue;
                        }
                        let text = responses.join("\n");
                        let outcome = match status {
                            "error" | "cancelled" => {
                                Outcome::Err(if text.is_empty() { status.to_string() } else { text })
                            }
                            _ => Outcome::text(text),
                        };
                        b.result(r.line, id, Some(name), outcome);
                    }
                }
                other => b.skip(other.unwrap_or("message")),
            }
        }
    }
}
