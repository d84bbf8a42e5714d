//! AI SDK `ModelMessage[]` (ai v5 to v7), as a JSON array, `{ messages: [...] }` or one message per
//! line. Each system, user and assistant message becomes one canonical message; a tool message
//! completes the calls it answers and is folded into the assistant message before it. What the canonical model has no field for is kept in `extra` so
//! `to_model_messages` gives back exactly what came in:
//!
//! - message `aiSdk` ([`LAYOUT`]): one entry per source message folded into it,
//!   `{ message: <the message without content>, content: <slots> }`; `content` is a part index
//!   where the source content was a string, `null` where it was neither string nor array (the
//!   message then keeps its content). A slot is a part index (the part; for a tool part its call),
//!   `{ result: i }`, `{ approvalRequest: i }`, `{ approvalResponse: i }`, `{ raw: <item> }` (an
//!   item sent as it came that cannot be a part as it came: not an object with a `type`, or one
//!   whose `type` is a kind of the canonical model, such as a `file` without data), or
//!   `{ unsent: <item> }` (kept, not sent: an approval response that answers no request of the
//!   message). A tool message's entry with no `result` or `approvalResponse` slot is not sent
//!   ([`is_sent`]).
//! - part `aiSdk` ([`PART`]): the source part without its mapped field (`text`, `input`, or the
//!   binary of `image` / `data`, which is replaced by a [`HOLE`] object saying how to refill it).
//! - tool part `aiSdkApprovalRequest` / `aiSdkApprovalResponse`: those items as they came.
//! - tool state `aiSdkResult`: the `tool-result` part without `output`; `aiSdkOutput`: the output
//!   when it is not a plain `{ type: 'text', value }`.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::build::{Builder, Outcome};
use super::content::{data_url, data_url_mime, image_mime, str_field};
use super::Record;
use crate::message::ai_sdk_layout::{
    answers, content_items, read_output, APPROVAL_REQUEST, APPROVAL_RESPONSE, HOLE, LAYOUT, OUTPUT, PART, RESULT,
};
use crate::message::{is_media, is_other, FilePart, Part, ReasoningPart, Role, TextPart, ToolState};

/// Reads a JSON array of ModelMessages, `{ messages: [...] }`, or one message, per record.
pub fn import(records: &[Record], b: &mut Builder) {
    let mut r = Reader::default();
    for rec in records {
        let items = match &rec.value {
            Value::Array(items) => items,
            v => match v.get("messages").and_then(Value::as_array) {
                Some(items) => items,
                // One message per line.
                None if v.get("role").is_some() => std::slice::from_ref(&rec.value),
                None => {
                    b.warn(rec.line, "not a list of AI SDK messages; ignored");
                    continue;
                }
            },
        };
        r.messages(rec.line, items, b);
    }
}

/// Reads ModelMessages given as values (warnings then point at line 0: the whole input).
pub fn import_values(values: &[Value], b: &mut Builder) {
    Reader::default().messages(0, values, b);
}

/// Reads ModelMessages that follow `previous` (a session's last message, taken up with
/// [`Builder::resume`]): a tool message among them completes its calls and joins its layout.
pub fn continue_values(previous: Option<crate::message::Message>, values: &[Value], base: usize, b: &mut Builder) {
    let mut r = Reader::default();
    if let Some(m) = previous.filter(|m| m.role == Role::Assistant && m.extra.contains_key(LAYOUT)) {
        let mi = b.resume(m);
        r.last = Some(mi);
        for (pi, p) in b.messages[mi].parts.iter().enumerate() {
            if let Part::Tool(t) = p {
                r.calls.insert(t.call_id.clone(), (mi, pi));
                if let Some(approval) = t.extra.get(APPROVAL_REQUEST).and_then(|a| str_field(a, "approvalId")) {
                    r.approvals.insert(approval.to_string(), t.call_id.clone());
                }
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        // A message's id numbers the ModelMessage it starts at (1-based): a session reloaded from
        // a store finds from its newest id how many of an app's ModelMessages it holds.
        b.ids_after(base + i);
        r.message(0, v, b);
    }
}

#[derive(Default)]
struct Reader {
    /// Where each call went: (message, part).
    calls: HashMap<String, (usize, usize)>,
    /// Approval id -> call id.
    approvals: HashMap<String, String>,
    /// The assistant message tool messages are folded into.
    last: Option<usize>,
    /// Unknown part types already warned about.
    unknown: HashSet<String>,
}

impl Reader {
    fn messages(&mut self, line: usize, items: &[Value], b: &mut Builder) {
        for m in items {
            self.message(line, m, b);
        }
    }

    fn message(&mut self, line: usize, v: &Value, b: &mut Builder) {
        let Some(role) = str_field(v, "role") else {
            b.warn(line, "a message without `role`; ignored");
            return;
        };
        b.record();
        match role {
            "system" => self.plain(line, v, Role::System, b),
            "user" => self.plain(line, v, Role::User, b),
            "assistant" => self.assistant(line, v, b),
            "tool" => self.tool(line, v, b),
            other => {
                b.skip(other);
                b.warn(line, format!("message with unknown role {other:?}; ignored"));
            }
        }
    }

    fn plain(&mut self, line: usize, v: &Value, role: Role, b: &mut Builder) {
        let m = b.message(None, role, None);
        let mi = b.push(m, true);
        let slots = self.content(line, mi, v, b, Reader::user_item);
        layout(b, mi, v, slots);
    }

    fn assistant(&mut self, line: usize, v: &Value, b: &mut Builder) {
        let m = b.message(None, Role::Assistant, None);
        let mi = b.push(m, true);
        self.last = Some(mi);
        let slots = self.content(line, mi, v, b, Reader::assistant_item);
        layout(b, mi, v, slots);
    }

    /// The slots of a message's content: a part index for a string, `null` for anything else
    /// that is not an array.
    fn content(
        &mut self,
        line: usize,
        mi: usize,
        v: &Value,
        b: &mut Builder,
        item: fn(&mut Reader, usize, usize, &Value, &mut Builder) -> Value,
    ) -> Value {
        match v.get("content") {
            Some(Value::String(s)) => {
                let m = &mut b.messages[mi];
                let id = part_id(m.parts.len(), &m.id);
                m.parts.push(Part::Text(TextPart { id, text: s.as_str().into(), synthetic: None, extra: Map::new() }));
                json!(m.parts.len() - 1)
            }
            Some(Value::Array(items)) => Value::Array(items.iter().map(|it| item(self, line, mi, it, b)).collect()),
            _ => {
                b.warn(line, "message content is neither a string nor an array; kept as it is");
                Value::Null
            }
        }
    }

    fn user_item(&mut self, line: usize, mi: usize, it: &Value, b: &mut Builder) -> Value {
        match str_field(it, "type").unwrap_or("") {
            "text" => text(b, mi, it, false),
            "image" => file(b, mi, it, "image"),
            "file" => file(b, mi, it, "data"),
            ty => self.other(line, mi, it, ty, b),
        }
    }

    fn assistant_item(&mut self, line: usize, mi: usize, it: &Value, b: &mut Builder) -> Value {
        match str_field(it, "type").unwrap_or("") {
            "text" => text(b, mi, it, false),
            "reasoning" => text(b, mi, it, true),
            "file" | "reasoning-file" => file(b, mi, it, "data"),
            "tool-call" => self.call(mi, it, b),
            "tool-result" => self.result(line, mi, it, b),
            "tool-approval-request" => self.approval_request(mi, it, b),
            // A call or result under a type of its own must still pair up.
            _ if is_call(it) => self.call(mi, it, b),
            _ if is_result(it) => self.result(line, mi, it, b),
            ty => self.other(line, mi, it, ty, b),
        }
    }

    fn tool(&mut self, line: usize, v: &Value, b: &mut Builder) {
        b.merged();
        let Some(items) = v.get("content").and_then(Value::as_array) else {
            b.warn(line, "a tool message without a content array; ignored");
            return;
        };
        // Results answer calls of earlier messages; outside any, nothing holds the layout.
        let mi = self.last.unwrap_or(usize::MAX);
        let mut slots = Vec::new();
        for it in items {
            let slot = match str_field(it, "type").unwrap_or("") {
                "tool-result" => self.result(line, mi, it, b),
                "tool-approval-response" => {
                    let call = str_field(it, "approvalId").and_then(|a| self.approvals.get(a)).cloned();
                    let slot =
                        call.and_then(|call| self.attach(mi, &call, it, APPROVAL_RESPONSE, "approvalResponse", b));
                    slot.unwrap_or_else(|| json!({ "unsent": it }))
                }
                _ if is_result(it) => self.result(line, mi, it, b),
                ty => {
                    self.warn_unknown(line, ty, b);
                    raw(it)
                }
            };
            slots.push(slot);
        }
        let kept = |s: &Value| s.get("raw").is_some() || s.get("unsent").is_some();
        if mi == usize::MAX {
            if slots.iter().any(kept) {
                b.warn(line, "tool message items without a call before them were dropped");
            }
            return;
        }
        // What a tool message holds beyond its answers is sent with them; without one, it is not
        // sent at all (its results, if any, go with their calls).
        if !slots.iter().any(answers) {
            if slots.iter().any(kept) || !without(v, &["role", "content"]).is_empty() {
                b.warn(line, "a tool message that answers no call of the assistant message before it: kept, not sent");
            }
        } else if slots.iter().any(|s| s.get("unsent").is_some()) {
            b.warn(line, "a tool-approval-response that answers no approval request before it: kept, not sent");
        }
        layout(b, mi, v, Value::Array(slots));
    }

    fn call(&mut self, mi: usize, it: &Value, b: &mut Builder) -> Value {
        let id = str_field(it, "toolCallId").unwrap_or("");
        let pi = b.messages[mi].parts.len();
        b.tool_call(mi, id, str_field(it, "toolName").unwrap_or(""), it.get("input").cloned().unwrap_or(Value::Null));
        if let Part::Tool(t) = &mut b.messages[mi].parts[pi] {
            t.extra.insert(PART.into(), Value::Object(without(it, &["input"])));
        }
        self.calls.insert(id.to_string(), (mi, pi));
        json!(pi)
    }

    /// Completes a call with a `tool-result`. A result whose call lives in another message gets
    /// no slot here (`null`): that message renders it after its call.
    fn result(&mut self, line: usize, mi: usize, it: &Value, b: &mut Builder) -> Value {
        let id = str_field(it, "toolCallId").unwrap_or("");
        let output = it.get("output").unwrap_or(&Value::Null);
        if let Some(&(ci, pi)) = self.calls.get(id) {
            if let Part::Tool(t) = &b.messages[ci].parts[pi] {
                if !matches!(t.state, ToolState::Pending { .. } | ToolState::Running { .. }) {
                    b.warn(line, format!("a second result for tool call {id:?} was ignored"));
                    return Value::Null;
                }
            }
        }
        b.result(line, id, str_field(it, "toolName"), outcome(output));
        let (ci, pi) = match self.calls.get(id) {
            Some(&slot) => slot,
            // The builder gave the result a call of its own in a new last message; a later result
            // with the same id finds it answered.
            None => {
                let slot = (b.messages.len() - 1, b.messages[b.messages.len() - 1].parts.len() - 1);
                self.calls.insert(id.to_string(), slot);
                slot
            }
        };
        if let Part::Tool(t) = &mut b.messages[ci].parts[pi] {
            if let ToolState::Completed { extra, .. } | ToolState::Error { extra, .. } = &mut t.state {
                extra.insert(RESULT.into(), Value::Object(without(it, &["output"])));
                if !is_plain_text(output) {
                    extra.insert(OUTPUT.into(), output.clone());
                }
            }
        }
        if ci == mi {
            json!({ "result": pi })
        } else {
            Value::Null
        }
    }

    /// An approval request, kept on its call; its id leads the response there.
    fn approval_request(&mut self, mi: usize, it: &Value, b: &mut Builder) -> Value {
        let call = str_field(it, "toolCallId").unwrap_or("").to_string();
        if let Some(approval) = str_field(it, "approvalId") {
            self.approvals.insert(approval.to_string(), call.clone());
        }
        self.attach(mi, &call, it, APPROVAL_REQUEST, "approvalRequest", b).unwrap_or_else(|| raw(it))
    }

    /// Keeps `it` on call `call` under `store` when the call is in message `mi`.
    fn attach(&mut self, mi: usize, call: &str, it: &Value, store: &str, slot: &str, b: &mut Builder) -> Option<Value> {
        let &(ci, pi) = self.calls.get(call).filter(|&&(ci, _)| ci == mi)?;
        if let Part::Tool(t) = &mut b.messages[ci].parts[pi] {
            t.extra.insert(store.into(), it.clone());
        }
        Some(json!({ slot: pi }))
    }

    /// A part kept as it came (counted by its size); unknown types are reported once each. An item
    /// that cannot be a part as it came ([`is_other`]) is sent as it came from the layout.
    fn other(&mut self, line: usize, mi: usize, it: &Value, ty: &str, b: &mut Builder) -> Value {
        if !matches!(ty, "custom" | "file" | "image" | "reasoning-file") {
            self.warn_unknown(line, ty, b);
        }
        if !is_other(it) {
            return raw(it);
        }
        let m = &mut b.messages[mi];
        m.parts.push(Part::Other(it.clone()));
        json!(m.parts.len() - 1)
    }

    fn warn_unknown(&mut self, line: usize, ty: &str, b: &mut Builder) {
        if self.unknown.insert(ty.to_string()) {
            let what = if ty.is_empty() {
                "an AI SDK part without a type".into()
            } else {
                format!("unknown AI SDK part type {ty:?}")
            };
            b.warn(line, format!("{what}: kept as it came"));
        }
    }
}

fn part_id(n: usize, message: &str) -> String {
    format!("{message}.{n}")
}

fn raw(it: &Value) -> Value {
    json!({ "raw": it })
}

fn is_call(it: &Value) -> bool {
    str_field(it, "toolCallId").is_some() && it.get("input").is_some() && it.get("output").is_none()
}

fn is_result(it: &Value) -> bool {
    str_field(it, "toolCallId").is_some() && it.get("output").is_some()
}

fn is_plain_text(output: &Value) -> bool {
    output.as_object().is_some_and(|o| {
        o.len() == 2
            && o.get("type").and_then(Value::as_str) == Some("text")
            && o.get("value").is_some_and(Value::is_string)
    })
}

/// Appends a layout entry for source message `v` to message `mi`.
fn layout(b: &mut Builder, mi: usize, v: &Value, content: Value) {
    let message = if content.is_null() { v.as_object().cloned().unwrap_or_default() } else { without(v, &["content"]) };
    let entry = json!({ "message": message, "content": content });
    let extra = &mut b.messages[mi].extra;
    match extra.get_mut(LAYOUT) {
        Some(Value::Array(entries)) => entries.push(entry),
        _ => {
            extra.insert(LAYOUT.into(), Value::Array(vec![entry]));
        }
    }
}

/// The object `it` without `keys`.
pub fn without(it: &Value, keys: &[&str]) -> Map<String, Value> {
    let mut o = it.as_object().cloned().unwrap_or_default();
    for k in keys {
        o.remove(*k);
    }
    o
}

/// A text or reasoning part.
fn text(b: &mut Builder, mi: usize, it: &Value, reasoning: bool) -> Value {
    let m = &mut b.messages[mi];
    let id = part_id(m.parts.len(), &m.id);
    let text = str_field(it, "text").unwrap_or("").to_string();
    let extra = Map::from_iter([(PART.to_string(), Value::Object(without(it, &["text"])))]);
    m.parts.push(if reasoning {
        Part::Reasoning(ReasoningPart { id, text: text.into(), extra })
    } else {
        Part::Text(TextPart { id, text: text.into(), synthetic: None, extra })
    });
    json!(m.parts.len() - 1)
}

/// An image or file part whose data (under `key`) is bytes, base64 or a URL; other data (a
/// provider reference, inline text) is kept as it came.
fn file(b: &mut Builder, mi: usize, it: &Value, key: &str) -> Value {
    let m = &mut b.messages[mi];
    let id = part_id(m.parts.len(), &m.id);
    let Some((data, base64, hole)) = it.get(key).and_then(split_data) else {
        if !is_other(it) {
            return raw(it);
        }
        m.parts.push(Part::Other(it.clone()));
        return json!(m.parts.len() - 1);
    };
    let mime = media_type(str_field(it, "mediaType"), data, base64, key == "image");
    let url = if base64 { data_url(&mime, data) } else { data.to_string() };
    let mut residual = without(it, &[key]);
    residual.insert(key.into(), hole);
    let filename = str_field(it, "filename").map(str::to_string);
    let extra = Map::from_iter([(PART.to_string(), Value::Object(residual))]);
    m.parts.push(Part::File(FilePart { id, mime, url, filename, extra }));
    json!(m.parts.len() - 1)
}

/// The canonical media type: `mediaType` when it is a full type, else read from the data.
fn media_type(given: Option<&str>, data: &str, base64: bool, image: bool) -> String {
    match given {
        Some(t) if t.contains('/') => t.to_string(),
        _ if !base64 && data_url_mime(data).is_some() => image_mime(data),
        _ if image || given == Some("image") => {
            if base64 {
                "image/*".into()
            } else {
                image_mime(data)
            }
        }
        Some(t) if !t.is_empty() => format!("{t}/*"),
        _ => "application/octet-stream".into(),
    }
}

/// The binary or URL string inside a data value, whether it is base64, and the value with a
/// [`HOLE`] in its place. Reads strings, the TS layer's `{__cf: 'bytes' | 'url'}` tags and v7
/// `{type: 'data' | 'url'}` wrappers.
pub fn split_data(v: &Value) -> Option<(&str, bool, Value)> {
    let hole = |base64: bool| json!({ HOLE: if base64 { "base64" } else { "url" } });
    match v {
        Value::String(s) => {
            let base64 = !is_url(s);
            Some((s, base64, hole(base64)))
        }
        Value::Object(o) => {
            let (key, base64) = match (str_field(v, "__cf"), str_field(v, "type")) {
                (Some("bytes"), _) => ("base64", Some(true)),
                (Some("url"), _) => ("href", Some(false)),
                (None, Some("data")) => ("data", None),
                (None, Some("url")) => ("url", None),
                _ => return None,
            };
            let (data, b64, inner) = match (o.get(key)?, base64) {
                (Value::String(s), Some(b64)) => (s.as_str(), b64, hole(b64)),
                (inner, None) => split_data(inner)?,
                _ => return None,
            };
            let mut shape = o.clone();
            shape.insert(key.into(), inner);
            Some((data, b64, Value::Object(shape)))
        }
        _ => None,
    }
}

/// Whether a data string is a URL (it has a scheme; base64 never holds `:`).
fn is_url(s: &str) -> bool {
    s.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// What a tool output becomes in the canonical model.
pub fn outcome(output: &Value) -> Outcome {
    match read_output(output) {
        Ok(output_text) => Outcome::Ok { output: output_text, attachments: attachments(output) },
        Err(error) => Outcome::Err(error),
    }
}

/// Base64 images and PDFs of a `content` output, as `(mime, data URL)`: they count at their fixed
/// cost.
fn attachments(output: &Value) -> Vec<(String, String)> {
    content_items(output)
        .filter_map(|it| {
            let mime = str_field(it, "mediaType").filter(|m| is_media(m))?;
            match it.get("data").and_then(split_data)? {
                (data, true, _) => Some((mime.to_string(), data_url(mime, data))),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
