//! Gemini CLI. Three shapes:
//! - the session record `{sessionId, messages[]}` (`chats/session-*.json`): `user` and `gemini`
//!   messages carry the conversation, each tool call stored with its result; `info` / `error`
//!   notices are UI only;
//! - the same record written as JSONL (`chats/session-*.jsonl`): a metadata line, then message
//!   records (a record repeating an id replaces that message), `{$rewindTo: id}` (drops that
//!   message and what follows) and `{$set: {...}}` (metadata; `messages` replaces them all);
//! - a saved chat (`/chat save`, `checkpoint-<tag>.json`): the API's `Content[]`
//!   (`[{role: 'user' | 'model', parts}]`), bare or as `{history}`. Parts marked `thought` are
//!   reasoning, `functionCall` / `functionResponse` pair into tool parts (by id, else by name in
//!   order), and a user turn holding `<state_snapshot>` is the summary Gemini CLI's compression
//!   put in place of what it replaced.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::build::{count, model_ref, Builder, Outcome};
use super::content::{data_url, output_text, parse_args, str_field, text_of, time_of};
use super::Record;
use crate::message::{Part, Role, Usage};

/// What marks Gemini CLI's compression summary.
const SNAPSHOT: &str = "<state_snapshot>";

pub fn import(records: &[Record], b: &mut Builder) {
    b.count_each_call();
    let first = &records[0].value;
    if first.get("messages").is_some_and(Value::is_array) {
        for r in &records[1..] {
            b.warn(r.line, "a second JSON document after the session; ignored");
        }
        let msgs: Vec<(usize, &Value)> =
            first["messages"].as_array().into_iter().flatten().map(|m| (records[0].line, m)).collect();
        session(&msgs, b);
    } else if let Some(history) = contents_of(first) {
        for r in &records[1..] {
            b.warn(r.line, "a second JSON document after the saved chat; ignored");
        }
        contents(history, b);
    } else {
        let msgs = replay(records, b);
        session(&msgs, b);
    }
}

/// The `Content[]` of a saved chat: the document itself, or its `history`.
fn contents_of(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Array(items) => Some(items),
        _ => v.get("history").and_then(Value::as_array).map(Vec::as_slice),
    }
}

/// The messages a JSONL session holds at its end, each with the line that last wrote it.
fn replay<'a>(records: &'a [Record], b: &mut Builder) -> Vec<(usize, &'a Value)> {
    let mut msgs: Vec<(usize, &Value)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for r in records {
        let v = &r.value;
        if let Some(to) = str_field(v, "$rewindTo") {
            let keep = at.get(to).copied().unwrap_or_else(|| {
                b.warn(r.line, format!("rewinds to message {to:?}, which is not in the file: every message before is dropped, as Gemini CLI does"));
                0
            });
            b.omit("$rewindTo");
            msgs.truncate(keep);
            at.retain(|_, &mut i| i < keep);
        } else if let Some(set) = v.get("$set").filter(|s| s.is_object()) {
            if let Some(all) = set.get("messages").and_then(Value::as_array) {
                msgs = all.iter().map(|m| (r.line, m)).collect();
                at = msgs.iter().enumerate().filter_map(|(i, (_, m))| str_field(m, "id").map(|id| (id, i))).collect();
            }
            b.omit("$set");
        } else if let Some(id) = str_field(v, "id") {
            match at.get(id) {
                Some(&i) => msgs[i] = (r.line, v),
                None => {
                    at.insert(id, msgs.len());
                    msgs.push((r.line, v));
                }
            }
        } else if v.get("sessionId").is_some() {
            b.omit("session metadata");
        } else {
            b.warn(r.line, "not a Gemini CLI session record; ignored");
        }
    }
    msgs
}

/// The messages of a session record.
fn session(msgs: &[(usize, &Value)], b: &mut Builder) {
    for &(line, v) in msgs {
        b.record();
        let time = time_of(v.get("timestamp"));
        let content = text_of(v.get("content").unwrap_or(&Value::Null));
        match str_field(v, "type") {
            Some("user") if content.contains(SNAPSHOT) => snapshot(content, time, str_field(v, "id"), b),
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
                        "error" | "cancelled" => Outcome::Err(if text.is_empty() { status.to_string() } else { text }),
                        _ => Outcome::text(text),
                    };
                    b.result(line, id, Some(name), outcome);
                }
            }
            other => b.skip(other.unwrap_or("message")),
        }
    }
}

/// Gemini CLI's compression summary: a compaction whose request and summary are put first.
/// What comes before it in the file is what Gemini CLI kept (its environment context), so the
/// compaction hides nothing.
fn snapshot(text: String, time: Option<f64>, id: Option<&str>, b: &mut Builder) {
    let tail = b.messages.first().map(|m| m.id.clone());
    b.compaction(true, text, tail, None, time, id, true, Map::new());
}

/// A tool call waiting for its `functionResponse`.
struct Open {
    id: String,
    name: String,
}

/// A saved chat's `Content[]`.
fn contents(items: &[Value], b: &mut Builder) {
    let mut open: Vec<Open> = Vec::new();
    for (k, c) in items.iter().enumerate() {
        b.record();
        let parts: &[Value] = c.get("parts").and_then(Value::as_array).map_or(&[], Vec::as_slice);
        match str_field(c, "role") {
            Some("model") => model_turn(k, parts, &mut open, b),
            Some("user") | Some("function") => user_turn(k, parts, &mut open, b),
            other => {
                b.skip(other.unwrap_or("(no role)"));
                b.warn(0, format!("entry {k}: a turn with role {other:?}; ignored"));
            }
        }
    }
}

/// Keeps a part's `thoughtSignature` (Gemini needs it back with the part) on the part just added.
fn keep_signature(m: &mut crate::message::Message, part: &Value) {
    let Some(sig) = part.get("thoughtSignature").filter(|s| !s.is_null()) else { return };
    let extra = match m.parts.last_mut() {
        Some(Part::Text(t)) => &mut t.extra,
        Some(Part::Reasoning(r)) => &mut r.extra,
        Some(Part::Tool(t)) => &mut t.extra,
        Some(Part::File(f)) => &mut f.extra,
        _ => return,
    };
    extra.insert("thoughtSignature".into(), sig.clone());
}

/// An inline or referenced file part, as our file part.
fn file(m: &mut crate::message::Message, part: &Value) -> bool {
    if let Some(d) = part.get("inlineData") {
        let mime = str_field(d, "mimeType").unwrap_or("application/octet-stream");
        Builder::file(
            m,
            mime,
            data_url(mime, str_field(d, "data").unwrap_or("")),
            str_field(d, "displayName").map(str::to_string),
        );
        true
    } else if let Some(d) = part.get("fileData") {
        let mime = str_field(d, "mimeType").unwrap_or("application/octet-stream");
        Builder::file(
            m,
            mime,
            str_field(d, "fileUri").unwrap_or("").to_string(),
            str_field(d, "displayName").map(str::to_string),
        );
        true
    } else {
        false
    }
}

fn model_turn(k: usize, parts: &[Value], open: &mut Vec<Open>, b: &mut Builder) {
    let m = b.message(None, Role::Assistant, None);
    let mi = b.push(m, true);
    for (j, part) in parts.iter().enumerate() {
        if let Some(call) = part.get("functionCall") {
            let name = str_field(call, "name").unwrap_or("");
            let id = match str_field(call, "id").filter(|id| !id.is_empty()) {
                Some(id) => id.to_string(),
                None => format!("{}.call{j}", b.messages[mi].id),
            };
            b.tool_call(mi, &id, name, call.get("args").cloned().unwrap_or(Value::Object(Map::new())));
            open.push(Open { id, name: name.to_string() });
        } else if let Some(text) = str_field(part, "text") {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                Builder::reasoning(&mut b.messages[mi], text, Map::new());
            } else {
                Builder::text(&mut b.messages[mi], text, false);
            }
        } else if !file(&mut b.messages[mi], part) {
            let warning = other(k, part, &mut b.messages[mi]);
            b.warn(0, warning);
        }
        keep_signature(&mut b.messages[mi], part);
    }
    if b.messages[mi].parts.is_empty() {
        b.messages.pop();
        b.skip("model (empty)");
    }
}

/// A part of a kind this importer does not read (`executableCode`, `codeExecutionResult`...):
/// kept as it came, typed by its key; returns the warning that reports it.
fn other(k: usize, part: &Value, m: &mut crate::message::Message) -> String {
    let kind =
        part.as_object().and_then(|o| o.keys().find(|key| *key != "thoughtSignature")).cloned().unwrap_or_default();
    let mut o = part.as_object().cloned().unwrap_or_default();
    o.insert("type".into(), Value::String(format!("gemini-{kind}")));
    Builder::other(m, &Value::Object(o));
    format!("entry {k}: a `{kind}` part is kept as it came")
}

/// A function response's outcome: `response.output`, `response.error`, else the response as JSON.
fn outcome(resp: &Value, attachments: Vec<(String, String)>) -> Outcome {
    if let Some(e) = resp.get("error").filter(|e| !e.is_null()) {
        return Outcome::Err(output_text(e));
    }
    let output = match resp.get("output") {
        Some(o) => output_text(o),
        None => output_text(resp),
    };
    Outcome::Ok { output, attachments }
}

fn user_turn(k: usize, parts: &[Value], open: &mut Vec<Open>, b: &mut Builder) {
    let text: Vec<&str> = parts.iter().filter_map(|p| str_field(p, "text")).collect();
    if text.iter().any(|t| t.contains(SNAPSHOT)) {
        snapshot(text.join("\n"), None, None, b);
        if text.len() < parts.len() {
            b.warn(0, format!("entry {k}: the compression summary's other parts are left out"));
        }
        return;
    }
    let mut m = b.message(None, Role::User, None);
    // Each response with the files that follow it (Gemini CLI sends a tool's binary output so).
    let mut responses: Vec<(&Value, Vec<(String, String)>)> = Vec::new();
    for part in parts {
        if let Some(r) = part.get("functionResponse") {
            responses.push((r, Vec::new()));
        } else if let (Some((_, files)), Some(d)) = (responses.last_mut(), part.get("inlineData")) {
            let mime = str_field(d, "mimeType").unwrap_or("application/octet-stream");
            files.push((mime.to_string(), data_url(mime, str_field(d, "data").unwrap_or(""))));
        } else if let Some(t) = str_field(part, "text") {
            Builder::text(&mut m, t, false);
        } else if !file(&mut m, part) {
            let warning = other(k, part, &mut m);
            b.warn(0, warning);
        }
    }
    let answered = !responses.is_empty();
    for (r, files) in responses {
        let name = str_field(r, "name").unwrap_or("");
        let by_id = str_field(r, "id").filter(|id| !id.is_empty()).and_then(|id| open.iter().position(|o| o.id == id));
        let at = by_id.or_else(|| open.iter().position(|o| o.name == name));
        let id = match at {
            Some(i) => open.remove(i).id,
            None => str_field(r, "id").filter(|id| !id.is_empty()).unwrap_or(name).to_string(),
        };
        b.result(0, &id, Some(name), outcome(r.get("response").unwrap_or(&Value::Null), files));
    }
    if !m.parts.is_empty() {
        b.push(m, true);
    } else if answered {
        b.merged();
    } else {
        b.skip("user (empty)");
    }
}
