//! Codex CLI rollout JSONL: `{timestamp, type, payload}` records. The model-visible history is in
//! `response_item`s; `event_msg`s mirror it for the UI (only `token_count` and `turn_aborted` are
//! read). Items between two user messages are grouped into one assistant message per model
//! response: a new one starts when the model speaks again after tool output. A `compacted` record
//! becomes our compaction, and its `replacement_history` (what Codex kept) follows the summary.

use serde_json::{Map, Value};

use super::build::{count, error, model_ref, usage_openai, Builder, Outcome};
use super::content::{data_url_mime, output_text, parse_args, str_field, stripped_image, text_of, time_of};
use super::Record;
use crate::message::{Message, Role};

/// What a `compacted` record without summary text reads as.
pub const NO_SUMMARY: &str =
    "[Codex compacted the conversation here without recording a summary; the messages it kept follow.]";

struct State {
    /// The assistant message of the current model response.
    current: Option<usize>,
    /// A tool output arrived since the current response started.
    after_output: bool,
    provider: String,
    model: String,
}

pub fn import(records: &[Record], b: &mut Builder) {
    let mut st = State { current: None, after_output: false, provider: "openai".into(), model: String::new() };
    for r in records {
        let v = &r.value;
        let payload = v.get("payload").unwrap_or(&Value::Null);
        let time = time_of(v.get("timestamp"));
        match str_field(v, "type") {
            Some("session_meta") => {
                if let Some(p) = str_field(payload, "model_provider") {
                    st.provider = p.to_string();
                }
                // The system prompt Codex sends, kept beside the conversation.
                let instructions = payload.get("base_instructions").map(|i| str_field(i, "text").or(i.as_str()));
                if let Some(text) = instructions.flatten().filter(|t| !t.trim().is_empty()) {
                    b.overhead.system = vec![text.to_string()];
                }
            }
            Some("turn_context") => {
                if let Some(m) = str_field(payload, "model") {
                    st.model = m.to_string();
                }
            }
            Some("response_item") => item(r.line, payload, time, b, &mut st, true),
            Some("compacted") => {
                let text = str_field(payload, "message").unwrap_or("");
                let summary = if text.trim().is_empty() { NO_SUMMARY.to_string() } else { text.to_string() };
                b.compaction(true, summary, None, None, time, None, false, Map::new());
                st.current = None;
                for kept in payload.get("replacement_history").and_then(Value::as_array).into_iter().flatten() {
                    item(r.line, kept, time, b, &mut st, false);
                }
                st.current = None;
            }
            Some("event_msg") => match str_field(payload, "type") {
                Some("token_count") => {
                    if let (Some(mi), Some(u)) = (st.current, payload.pointer("/info/last_token_usage")) {
                        let reasoning = count(u, "reasoning_output_tokens");
                        b.messages[mi].tokens = Some(usage_openai(
                            count(u, "input_tokens"),
                            count(u, "cached_input_tokens"),
                            count(u, "output_tokens"),
                            (reasoning > 0).then_some(reasoning),
                            Some(count(u, "total_tokens")).filter(|&t| t > 0),
                        ));
                    }
                }
                Some("turn_aborted") => {
                    if let Some(mi) = st.current {
                        let reason = str_field(payload, "reason").unwrap_or("aborted");
                        b.messages[mi].error = Some(error("MessageAbortedError", reason));
                    }
                    st.current = None;
                }
                other => b.omit(&format!("event_msg:{}", other.unwrap_or(""))),
            },
            Some(other) => b.omit(other),
            None => b.warn(r.line, "a record without `type`; ignored"),
        }
    }
}

/// The assistant message the next item of the model's response goes to.
fn assistant(b: &mut Builder, st: &mut State, time: Option<f64>, text_record: bool) -> usize {
    match st.current {
        Some(mi) if !st.after_output => {
            if text_record {
                b.merged();
            }
            mi
        }
        _ => {
            let mut m = b.message(None, Role::Assistant, time);
            m.model = model_ref(&st.provider, &st.model);
            let mi = b.push(m, text_record);
            st.current = Some(mi);
            st.after_output = false;
            mi
        }
    }
}

fn user_content(m: &mut Message, content: Option<&Value>) {
    match content {
        Some(Value::Array(items)) => {
            for it in items {
                match str_field(it, "type") {
                    Some("input_image") => {
                        let url = str_field(it, "image_url").unwrap_or("");
                        let mime = data_url_mime(url).unwrap_or("image/png").to_string();
                        Builder::file(m, &mime, url.to_string(), None);
                    }
                    _ => Builder::text(m, super::content::block_text(it).unwrap_or(""), false),
                }
            }
        }
        Some(other) => Builder::text(m, text_of(other), false),
        None => {}
    }
}

/// One `response_item` payload (or an item of a replacement history, `counted: false`).
fn item(line: usize, p: &Value, time: Option<f64>, b: &mut Builder, st: &mut State, counted: bool) {
    let call_id = str_field(p, "call_id").or_else(|| str_field(p, "id")).unwrap_or("");
    match str_field(p, "type") {
        Some("message") => {
            if counted {
                b.record();
            }
            match str_field(p, "role") {
                Some("assistant") => {
                    let mi = assistant(b, st, time, counted);
                    let text = text_of(p.get("content").unwrap_or(&Value::Null));
                    Builder::text(&mut b.messages[mi], text, false);
                }
                Some(role @ ("user" | "developer" | "system")) => {
                    st.current = None;
                    let role = if role == "user" { Role::User } else { Role::System };
                    let mut m = b.message(None, role, time);
                    user_content(&mut m, p.get("content"));
                    if m.parts.is_empty() {
                        if counted {
                            b.skip("message (empty)");
                        }
                    } else {
                        b.push(m, counted);
                    }
                }
                other => {
                    if counted {
                        b.skip(other.unwrap_or("message"));
                    }
                    b.warn(line, format!("message with unknown role {other:?}; ignored"));
                }
            }
        }
        Some("reasoning") => {
            let mut text = p
                .get("summary")
                .and_then(Value::as_array)
                .map(|s| s.iter().filter_map(super::content::block_text).collect::<Vec<_>>().join("\n\n"))
                .unwrap_or_default();
            if text.is_empty() {
                text = text_of(p.get("content").unwrap_or(&Value::Null));
            }
            if !text.is_empty() {
                let mi = assistant(b, st, time, false);
                Builder::reasoning(&mut b.messages[mi], text, Map::new());
            }
        }
        Some("function_call") => {
            let mi = assistant(b, st, time, false);
            let input = parse_args(p.get("arguments"));
            let name = str_field(p, "name").unwrap_or("");
            b.tool_call(mi, call_id, name, input);
        }
        Some("custom_tool_call") => {
            let mi = assistant(b, st, time, false);
            let input = p.get("input").cloned().unwrap_or(Value::Null);
            b.tool_call(mi, call_id, str_field(p, "name").unwrap_or(""), input);
        }
        Some(ty @ ("tool_search_call" | "local_shell_call" | "web_search_call")) => {
            let mi = assistant(b, st, time, false);
            let name = ty.trim_end_matches("_call");
            let input = p.get("arguments").or_else(|| p.get("action")).cloned().unwrap_or(Value::Object(Map::new()));
            let id = if call_id.is_empty() {
                format!("{}-{}", b.messages[mi].id, b.messages[mi].parts.len())
            } else {
                call_id.to_string()
            };
            b.tool_call(mi, &id, name, input);
            if ty == "web_search_call" {
                // Runs on the provider's side: no output record follows.
                let status = str_field(p, "status").unwrap_or("completed");
                b.result(line, &id, Some(name), Outcome::text(status));
            }
        }
        Some("function_call_output" | "custom_tool_call_output" | "local_shell_call_output" | "tool_search_output") => {
            st.after_output = true;
            // A tool search answers with the tool definitions it found: their JSON is the output.
            let outcome = match (p.get("output"), p.get("tools")) {
                (None, Some(tools)) => Outcome::text(output_text(tools)),
                (out, _) => output(line, out.unwrap_or(&Value::Null), b),
            };
            b.result(line, call_id, None, outcome);
        }
        Some(_) | None => {}
    }
}

/// A tool's output: text, content items, or `{content, success}`.
fn output(line: usize, out: &Value, b: &mut Builder) -> Outcome {
    match out {
        Value::Array(items) => {
            let (output, attachments) = output_items(line, items, b);
            Outcome::Ok { output, attachments }
        }
        Value::Object(o) if o.contains_key("content") => {
            let (output, attachments) = match &o["content"] {
                Value::Array(items) => output_items(line, items, b),
                other => (output_text(other), Vec::new()),
            };
            if o.get("success").and_then(Value::as_bool) == Some(false) {
                Outcome::Err(output)
            } else {
                Outcome::Ok { output, attachments }
            }
        }
        other => Outcome::text(output_text(other)),
    }
}

/// A tool output given as content items (`view_image`, MCP results): text items are the output,
/// images its attachments. An item of another kind stays in the output as its JSON, reported.
fn output_items(line: usize, items: &[Value], b: &mut Builder) -> (String, Vec<(String, String)>) {
    let mut texts = Vec::new();
    let mut attachments = Vec::new();
    for it in items {
        match str_field(it, "type") {
            Some("input_image") => {
                let url = str_field(it, "image_url").unwrap_or("");
                let mime = data_url_mime(url).unwrap_or("image/png").to_string();
                if url.is_empty() {
                    texts.push(stripped_image(&mime));
                } else {
                    attachments.push((mime, url.to_string()));
                }
            }
            _ => match super::content::block_text(it) {
                Some(t) => texts.push(t.to_string()),
                None => {
                    b.warn(
                        line,
                        format!(
                            "a tool output item of type {:?} is kept as JSON text",
                            str_field(it, "type").unwrap_or("")
                        ),
                    );
                    texts.push(it.to_string());
                }
            },
        }
    }
    (texts.join("\n"), attachments)
}
