//! OpenHands event streams. V0: a list of `{id, source, action|observation, args|extras, cause,
//! tool_call_metadata}`; V1 (agent SDK): a list of `{id, source, kind}` events. Actions of one
//! model response form one assistant message; observations answer their call. A condensation
//! (V0 `condensation` action, V1 `Condensation` event) becomes our compaction hiding the forgotten
//! events, with the summary where OpenHands puts it.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::build::{chat_response, Builder, Outcome};
use super::content::{image_mime, output_text, parse_args, str_field, text_of, time_of};
use super::Record;
use crate::message::{Message, Role};

/// What a condensation without summary text reads as.
pub const NO_SUMMARY: &str = "[OpenHands forgot earlier events here without recording a summary.]";

#[derive(Default)]
struct State {
    /// Event id → index of the message it produced or went into.
    at: HashMap<String, usize>,
    /// Model response id of the last assistant message.
    response: Option<(usize, String)>,
}

pub fn import(records: &[Record], b: &mut Builder) {
    b.count_each_call();
    let mut st = State::default();
    for r in records {
        let events: Vec<&Value> = match &r.value {
            Value::Array(items) => items.iter().collect(),
            v if v.get("events").is_some_and(Value::is_array) => v["events"].as_array().into_iter().flatten().collect(),
            v => vec![v],
        };
        for e in events {
            b.record();
            let id = e.get("id").map(|i| match i {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let before = b.messages.len();
            if e.get("kind").is_some() {
                v1(r.line, e, b, &mut st);
            } else {
                v0(r.line, e, b, &mut st);
            }
            if let Some(id) = id {
                let at = if b.messages.len() > before { before } else { b.messages.len().saturating_sub(1) };
                st.at.insert(id, at);
            }
        }
    }
}

/// The event's id as a message id (OpenHands ids are numbers in V0, strings in V1).
fn event_id(e: &Value) -> Option<String> {
    match e.get("id")? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The assistant message of model response `response`: the current one (its reasoning added when
/// this event brings new), or a new one with `source`'s reasoning and `text`.
fn assistant_for(
    b: &mut Builder,
    st: &mut State,
    response: Option<&str>,
    (source, text): (&Value, &str),
    time: Option<f64>,
    id: Option<&str>,
) -> (usize, bool) {
    if let (Some(resp), Some((mi, prev))) = (response, &st.response) {
        if resp == prev && b.last_assistant() == Some(*mi) {
            let mi = *mi;
            reasoning(&mut b.messages[mi], source);
            return (mi, false);
        }
    }
    let mut m = b.message(id, Role::Assistant, time);
    reasoning(&mut m, source);
    Builder::text(&mut m, text, false);
    let mi = b.push(m, true);
    st.response = response.map(|r| (mi, r.to_string()));
    (mi, true)
}

/// The reasoning an event or LLM message carries (`thinking_blocks` with their signatures,
/// `reasoning_content`, an OpenAI Responses `responses_reasoning_item`), each text once per
/// message. Redacted thinking is kept as it came.
fn reasoning(m: &mut Message, source: &Value) {
    let known = |m: &Message, text: &str| {
        m.parts.iter().any(|p| matches!(p, crate::message::Part::Reasoning(r) if r.text.as_str() == text))
    };
    for blk in source.get("thinking_blocks").and_then(Value::as_array).into_iter().flatten() {
        match (str_field(blk, "type"), str_field(blk, "thinking")) {
            (Some("thinking"), Some(text)) if !known(m, text) => {
                let mut extra = Map::new();
                if let Some(sig) = blk.get("signature").filter(|s| !s.is_null()) {
                    extra.insert("signature".into(), sig.clone());
                }
                Builder::reasoning(m, text, extra);
            }
            (Some("thinking"), _) => {}
            _ => {
                let kept = m.parts.iter().any(|p| {
                    matches!(p, crate::message::Part::Other(v) if v.get("type") == blk.get("type") && v.get("data") == blk.get("data"))
                });
                if blk.is_object() && !kept {
                    Builder::other(m, blk);
                }
            }
        }
    }
    if let Some(text) = str_field(source, "reasoning_content").filter(|t| !t.trim().is_empty()) {
        if !known(m, text) {
            Builder::reasoning(m, text, Map::new());
        }
    }
    if let Some(item) = source.get("responses_reasoning_item").filter(|i| i.is_object()) {
        let lines = |key: &str| -> Vec<String> {
            item.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(text_of)
                .filter(|t| !t.is_empty())
                .collect()
        };
        let mut texts = lines("summary");
        texts.extend(lines("content"));
        let text = texts.join("\n\n");
        if !text.is_empty() && !known(m, &text) {
            let mut extra = Map::new();
            for key in ["id", "encrypted_content"] {
                if let Some(v) = item.get(key).filter(|v| !v.is_null()) {
                    extra.insert(key.into(), v.clone());
                }
            }
            Builder::reasoning(m, text, extra);
        }
    }
}

fn v0(line: usize, e: &Value, b: &mut Builder, st: &mut State) {
    let time = time_of(e.get("timestamp"));
    let args = e.get("args").unwrap_or(&Value::Null);
    let source = str_field(e, "source").unwrap_or("");
    if let Some(action) = str_field(e, "action") {
        let tcm = e.get("tool_call_metadata").filter(|t| t.is_object());
        match (action, tcm) {
            ("message", None) => {
                let text = str_field(args, "content").or_else(|| str_field(e, "message")).unwrap_or("");
                let role = if source == "user" { Role::User } else { Role::Assistant };
                let mut m = b.message(event_id(e).as_deref(), role, time);
                Builder::text(&mut m, text, false);
                for url in args.get("image_urls").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(u) = url.as_str() {
                        Builder::file(&mut m, &image_mime(u), u.to_string(), None);
                    }
                }
                st.response = None;
                b.push_nonempty(m);
            }
            ("system", None) => {
                let mut m = b.message(event_id(e).as_deref(), Role::System, time);
                Builder::text(&mut m, str_field(args, "content").unwrap_or(""), false);
                b.push_nonempty(m);
            }
            ("condensation", _) => condensation(line, args, time, b, st),
            (_, Some(tcm)) => {
                let call_id = str_field(tcm, "tool_call_id").unwrap_or("");
                let resp = tcm.get("model_response").unwrap_or(&Value::Null);
                let msg = resp.pointer("/choices/0/message").unwrap_or(&Value::Null);
                let text = msg
                    .get("content")
                    .map(text_of)
                    .filter(|t| !t.is_empty())
                    .or_else(|| str_field(args, "thought").map(str::to_string))
                    .unwrap_or_default();
                let (mi, fresh) =
                    assistant_for(b, st, str_field(resp, "id"), (msg, &text), time, event_id(e).as_deref());
                if fresh {
                    chat_response(&mut b.messages[mi], resp);
                } else {
                    b.merged();
                }
                let input = msg
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .and_then(|calls| calls.iter().find(|c| str_field(c, "id") == Some(call_id)))
                    .map(|c| parse_args(c.pointer("/function/arguments")))
                    .unwrap_or_else(|| {
                        let mut a = args.as_object().cloned().unwrap_or_default();
                        a.remove("thought");
                        Value::Object(a)
                    });
                let name = str_field(tcm, "function_name").unwrap_or(action);
                b.tool_call(mi, call_id, name, input);
            }
            _ => b.skip(action),
        }
        return;
    }
    if let Some(obs) = str_field(e, "observation") {
        match e.get("tool_call_metadata").filter(|t| t.is_object()) {
            Some(tcm) => {
                b.merged();
                let call_id = str_field(tcm, "tool_call_id").unwrap_or("");
                let content = e.get("content").map(output_text).unwrap_or_default();
                let outcome = if obs == "error" { Outcome::Err(content) } else { Outcome::text(content) };
                b.result(line, call_id, str_field(tcm, "function_name"), outcome);
            }
            None => b.skip(obs),
        }
        return;
    }
    b.skip("event");
}

fn v1(line: usize, e: &Value, b: &mut Builder, st: &mut State) {
    let time = time_of(e.get("timestamp"));
    match str_field(e, "kind") {
        Some("SystemPromptEvent") => {
            let mut m = b.message(event_id(e).as_deref(), Role::System, time);
            let text = e
                .get("system_prompt")
                .map(|p| match p {
                    Value::Object(_) => str_field(p, "text").unwrap_or("").to_string(),
                    other => text_of(other),
                })
                .unwrap_or_default();
            Builder::text(&mut m, text, false);
            b.push_nonempty(m);
            if let Some(tools) = e.get("tools").filter(|t| t.as_array().is_some_and(|a| !a.is_empty())) {
                b.overhead.tools = Some(tools.clone());
            }
        }
        Some("MessageEvent") => {
            let msg = e.get("llm_message").unwrap_or(&Value::Null);
            let role = match str_field(msg, "role") {
                Some("assistant") => Role::Assistant,
                Some("system") => Role::System,
                _ => Role::User,
            };
            let mut m = b.message(event_id(e).as_deref(), role, time);
            if role == Role::Assistant {
                reasoning(&mut m, msg);
            }
            content(&mut m, msg.get("content"));
            // Context the agent added to the message the model read (microagent knowledge, ...).
            for extra in e.get("extended_content").and_then(Value::as_array).into_iter().flatten() {
                if let Some(t) = super::content::block_text(extra).filter(|t| !t.trim().is_empty()) {
                    Builder::text(&mut m, t, true);
                }
            }
            st.response = None;
            b.push_nonempty(m);
        }
        Some("ActionEvent") => {
            let thought = e.get("thought").map(text_of).unwrap_or_default();
            let id = event_id(e);
            let (mi, fresh) = assistant_for(b, st, str_field(e, "llm_response_id"), (e, &thought), time, id.as_deref());
            if !fresh {
                b.merged();
            }
            let call = e.get("tool_call").unwrap_or(&Value::Null);
            let call_id = str_field(e, "tool_call_id").or_else(|| str_field(call, "id")).unwrap_or("");
            let name = str_field(e, "tool_name").or_else(|| str_field(call, "name")).unwrap_or("");
            b.tool_call(mi, call_id, name, parse_args(call.get("arguments")));
        }
        Some("ObservationEvent") => {
            b.merged();
            let obs = e.get("observation").unwrap_or(&Value::Null);
            let text = observation_text(obs);
            let outcome = if obs.get("is_error").and_then(Value::as_bool) == Some(true) {
                Outcome::Err(text)
            } else {
                Outcome::text(text)
            };
            b.result(line, str_field(e, "tool_call_id").unwrap_or(""), str_field(e, "tool_name"), outcome);
        }
        Some("AgentErrorEvent") | Some("UserRejectObservation") => {
            b.merged();
            let text =
                str_field(e, "error").or_else(|| str_field(e, "rejection_reason")).unwrap_or("error").to_string();
            b.result(line, str_field(e, "tool_call_id").unwrap_or(""), str_field(e, "tool_name"), Outcome::Err(text));
        }
        Some("Condensation") => condensation(line, e, time, b, st),
        other => b.skip(other.unwrap_or("event")),
    }
}

/// What the model read of a V1 observation: for a terminal command, the output between the
/// shell's prefix and suffix, then the working directory, the interpreter and the exit-code line;
/// an error starts with the SDK's error header.
fn observation_text(obs: &Value) -> String {
    let mut text = obs.get("content").map(text_of).unwrap_or_default();
    if matches!(str_field(obs, "kind"), Some("TerminalObservation" | "ExecuteBashObservation")) {
        let meta = obs.get("metadata").unwrap_or(&Value::Null);
        let field = |k: &str| str_field(meta, k).filter(|s| !s.is_empty());
        text = format!("{}{text}{}", field("prefix").unwrap_or(""), field("suffix").unwrap_or(""));
        if let Some(dir) = field("working_dir") {
            text.push_str(&format!("\n[Current working directory: {dir}]"));
        }
        if let Some(py) = field("py_interpreter_path") {
            text.push_str(&format!("\n[Python interpreter: {py}]"));
        }
        let code = meta.get("exit_code").or_else(|| obs.get("exit_code")).and_then(Value::as_i64).unwrap_or(-1);
        if code != -1 {
            text.push_str(&format!("\n[Command finished with exit code {code}]"));
        }
    }
    if obs.get("is_error").and_then(Value::as_bool) == Some(true) {
        text = format!("[An error occurred during execution.]\n{text}");
    }
    text
}

fn content(m: &mut Message, c: Option<&Value>) {
    match c {
        Some(Value::Array(items)) => {
            for it in items {
                let urls: Vec<&str> = it
                    .get("image_urls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                if urls.is_empty() {
                    Builder::text(m, super::content::block_text(it).unwrap_or(""), false);
                }
                for u in urls {
                    Builder::file(m, &image_mime(u), u.to_string(), None);
                }
            }
        }
        Some(other) => Builder::text(m, text_of(other), false),
        None => {}
    }
}

/// Hides the messages of the forgotten events: `[hiddenFrom, tailStart)` are the first forgotten
/// message and the first message after the last forgotten one.
fn condensation(line: usize, args: &Value, time: Option<f64>, b: &mut Builder, st: &mut State) {
    let mut forgotten: Vec<usize> = args
        .get("forgotten_event_ids")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|id| {
            let key = match id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            st.at.get(&key).copied()
        })
        .collect();
    if forgotten.is_empty() {
        let num = |v: &Value| v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok()));
        if let (Some(s), Some(e)) =
            (args.get("forgotten_events_start_id").and_then(num), args.get("forgotten_events_end_id").and_then(num))
        {
            forgotten = (s..=e).filter_map(|id| st.at.get(&id.to_string()).copied()).collect();
        }
    }
    forgotten.sort_unstable();
    forgotten.dedup();
    let (Some(&first), Some(&last)) = (forgotten.first(), forgotten.last()) else {
        b.skip("Condensation");
        b.warn(line, "a condensation whose forgotten events are unknown; ignored");
        return;
    };
    if last - first + 1 != forgotten.len() {
        b.warn(line, "the forgotten events are not contiguous; the whole range between them is hidden");
    }
    let hidden_from = b.messages.get(first).map(|m| m.id.clone());
    let tail = b.messages.get(last + 1).map(|m| m.id.clone());
    let summary = str_field(args, "summary").filter(|s| !s.trim().is_empty()).unwrap_or(NO_SUMMARY).to_string();
    // The condensation event itself stands for the summary.
    b.compaction(true, summary, tail, hidden_from, time, None, true, Map::new());
    st.response = None;
}
