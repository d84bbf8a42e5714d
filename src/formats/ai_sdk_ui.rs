//! AI SDK `UIMessage[]` (ai v5 to v7): what `useChat` holds and apps store, as a JSON array, as
//! `{ messages: [...] }`, or one message per line. Each UIMessage becomes one canonical message
//! with the UIMessage's `id`; a tool part already holds its call and its result, so it becomes one
//! `tool` part in its message as it stands.
//!
//! Steps: an assistant UIMessage holds every step of one answer, each opened by a `step-start`
//! part. They stay in the one message, in order (a tool part pairs nothing across steps, and the
//! message keeps the UIMessage's id); the first part of each later step carries
//! [`STEP_START`]` : true`, so that `toModelMessages` sends the steps as the SDK does: each step's
//! calls, then their results, before the next step.
//!
//! What the canonical model has no field for is kept, so nothing is lost:
//! - message [`EXTRA`]: the UIMessage without `id`, `role` and `parts` (`metadata`, ...);
//!   [`SOURCES`]: its `source-url` / `source-document` parts (never sent to the model).
//! - part [`EXTRA`]: the source part without its mapped fields (`state`, `providerMetadata`,
//!   `citations`, a tool part's `state`, `providerExecuted`, `callProviderMetadata`, `title`...);
//!   a tool part's `approval` is kept as `approval`.
//! - `data-*`, `custom` and unknown parts are kept as they came (`Part::Other`, counted by their
//!   size; a part's own `id` moves to [`OTHER_ID`]); unknown types are reported once each.
//! - `steering-message` parts (v7: the user steering an answer) become user messages between the
//!   answer's halves.
//!
//! `stats.omitted` counts the `step-start` and source parts, and top-level fields of a
//! `{ messages }` document other than `messages`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::ai_sdk::without;
use super::build::Builder;
use super::content::{image_mime, parse_args, str_field, time_of};
use super::Record;
use crate::message::ai_sdk_layout::STEP_START;
use crate::message::{other_fields, FilePart, Message, Part, ReasoningPart, Role, TextPart, ToolPart, ToolState};

/// What a message or part kept of its source beyond the mapped fields.
pub const EXTRA: &str = "aiSdkUi";
/// A message's `source-url` / `source-document` parts, as they came.
pub const SOURCES: &str = "aiSdkUiSources";
/// The `id` a kept part (`data-*`) had in the source; `id` is the canonical part id.
pub const OTHER_ID: &str = "aiSdkUiId";
/// The error of a call the user did not approve.
pub const DENIED: &str = "Tool execution denied";

/// Reads UIMessages per record: an array, `{ messages: [...] }`, or one message.
pub fn import(records: &[Record], b: &mut Builder) {
    let mut r = Reader::default();
    for rec in records {
        match &rec.value {
            Value::Array(items) => r.messages(rec.line, items, b),
            v if v.get("messages").is_some_and(Value::is_array) => {
                for key in v.as_object().into_iter().flat_map(|o| o.keys()).filter(|k| *k != "messages") {
                    b.omit(key);
                }
                r.messages(rec.line, v["messages"].as_array().map_or(&[], Vec::as_slice), b);
            }
            v if v.get("role").is_some() && v.get("parts").is_some() => r.message(rec.line, v, b),
            _ => b.warn(rec.line, "not a list of AI SDK UI messages; ignored"),
        }
    }
}

#[derive(Default)]
struct Reader {
    /// Unknown part types and tool states already warned about.
    unknown: HashSet<String>,
}

/// The messages one UIMessage gives: the first stands for the record; steering messages and the
/// rest of the answer after each are added.
struct Chunks {
    done: Vec<(Message, bool)>,
    current: Message,
    /// The next part opens a new step.
    step: bool,
}

impl Reader {
    fn messages(&mut self, line: usize, items: &[Value], b: &mut Builder) {
        for m in items {
            self.message(line, m, b);
        }
    }

    fn message(&mut self, line: usize, v: &Value, b: &mut Builder) {
        if !v.is_object() {
            b.warn(line, "a message that is not an object; ignored");
            return;
        }
        let role = match str_field(v, "role") {
            Some("system") => Role::System,
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => {
                b.record();
                b.skip(other.unwrap_or("(no role)"));
                b.warn(
                    line,
                    match other {
                        Some(role) => format!("message with unknown role {role:?}; ignored"),
                        None => "a message without `role`; ignored".into(),
                    },
                );
                return;
            }
        };
        b.record();
        let id = str_field(v, "id");
        let time = time_of(v.get("createdAt")).or_else(|| time_of(v.pointer("/metadata/createdAt")));
        let mut first = b.message(id, role, time);
        let residual = without(v, &["id", "role", "parts"]);
        if !residual.is_empty() {
            first.extra.insert(EXTRA.into(), Value::Object(residual));
        }
        let parts = match v.get("parts") {
            Some(Value::Array(parts)) => parts.as_slice(),
            _ => {
                b.warn(line, "a message without a `parts` array; kept without parts");
                &[]
            }
        };
        let mut c = Chunks { done: Vec::new(), current: first, step: false };
        let mut sources = Vec::new();
        for p in parts {
            let ty = str_field(p, "type").unwrap_or("");
            match ty {
                "step-start" => {
                    b.omit(ty);
                    c.step = !c.current.parts.is_empty();
                    continue;
                }
                "source-url" | "source-document" => {
                    b.omit(ty);
                    sources.push(p.clone());
                    continue;
                }
                "steering-message" if role == Role::Assistant => {
                    self.steering(line, p, id, &mut c, b);
                    continue;
                }
                _ => {}
            }
            let mut part = self.part(line, &c.current, p, b);
            if std::mem::take(&mut c.step) {
                mark_step(&mut part);
            }
            c.current.parts.push(part);
        }
        if !sources.is_empty() {
            let m = c.done.first_mut().map_or(&mut c.current, |(m, _)| m);
            m.extra.insert(SOURCES.into(), Value::Array(sources));
        }
        c.done.push((c.current, c.done.is_empty()));
        for (m, from_record) in c.done {
            if from_record {
                b.push_nonempty(m);
            } else if !m.parts.is_empty() {
                b.push(m, false);
            }
        }
    }

    /// A `steering-message` part: the answer so far, then the user's message, then the rest.
    fn steering(&mut self, line: usize, p: &Value, id: Option<&str>, c: &mut Chunks, b: &mut Builder) {
        let mut user = b.message(str_field(p, "id"), Role::User, None);
        let residual = without(p, &["id", "type", "parts"]);
        if !residual.is_empty() {
            user.extra.insert(EXTRA.into(), Value::Object(residual));
        }
        for q in p.get("parts").and_then(Value::as_array).into_iter().flatten() {
            let part = self.part(line, &user, q, b);
            user.parts.push(part);
        }
        let rest = b.message(id, Role::Assistant, None);
        let answer = std::mem::replace(&mut c.current, rest);
        let first = c.done.is_empty();
        c.done.push((answer, first));
        c.done.push((user, false));
        c.step = false;
    }

    /// One part of message `m` (not yet added to it).
    fn part(&mut self, line: usize, m: &Message, p: &Value, b: &mut Builder) -> Part {
        let id = format!("{}.{}", m.id, m.parts.len());
        let ty = str_field(p, "type").unwrap_or("");
        match ty {
            "text" => Part::Text(TextPart {
                id,
                text: str_field(p, "text").unwrap_or("").into(),
                synthetic: None,
                extra: kept(p, &["type", "text"]),
            }),
            "reasoning" => Part::Reasoning(ReasoningPart {
                id,
                text: str_field(p, "text").unwrap_or("").into(),
                extra: kept(p, &["type", "text"]),
            }),
            "file" | "reasoning-file" if p.get("url").is_some_and(|u| u.as_str().is_some_and(|u| !u.is_empty())) => {
                let url = str_field(p, "url").unwrap_or("").to_string();
                let mime = match str_field(p, "mediaType") {
                    Some(t) if t.contains('/') => t.to_string(),
                    _ => image_mime(&url),
                };
                // A reasoning file keeps its type; a plain file's is implied.
                let mapped: &[&str] = if ty == "file" {
                    &["type", "mediaType", "url", "filename"]
                } else {
                    &["mediaType", "url", "filename"]
                };
                Part::File(FilePart {
                    id,
                    mime,
                    url,
                    filename: str_field(p, "filename").map(str::to_string),
                    extra: kept(p, mapped),
                })
            }
            "dynamic-tool" if m.role == Role::Assistant => {
                self.tool(line, id, str_field(p, "toolName").unwrap_or(""), p, b)
            }
            _ if m.role == Role::Assistant && ty.starts_with("tool-") => self.tool(line, id, &ty[5..], p, b),
            _ => {
                let known = ty.starts_with("data-") || ty == "custom";
                if !known && self.unknown.insert(ty.to_string()) {
                    let what = if ty.starts_with("tool-") || ty == "dynamic-tool" {
                        format!("a tool part ({ty:?}) in a {} message", role_name(m.role))
                    } else if ty == "file" || ty == "reasoning-file" {
                        format!("a {ty:?} part without a `url`")
                    } else if ty.is_empty() {
                        "a part without a type".into()
                    } else {
                        format!("unknown AI SDK UI part type {ty:?}")
                    };
                    b.warn(line, format!("{what}: kept as it came"));
                }
                other(id, p)
            }
        }
    }

    /// A `tool-<name>` or `dynamic-tool` part: the call, and its result when it has one.
    fn tool(&mut self, line: usize, id: String, name: &str, p: &Value, b: &mut Builder) -> Part {
        let call_id = str_field(p, "toolCallId").filter(|c| !c.is_empty()).unwrap_or(&id).to_string();
        b.note_call(&call_id);
        let input = match p.get("input") {
            Some(v) if !v.is_null() => v.clone(),
            _ => parse_args(p.get("rawInput")),
        };
        let state = str_field(p, "state").unwrap_or("");
        let denied = || {
            let reason = p.pointer("/approval/reason").and_then(Value::as_str).filter(|r| !r.is_empty());
            reason.map_or_else(|| DENIED.to_string(), |r| format!("{DENIED}: {r}"))
        };
        let approved = p.pointer("/approval/approved").and_then(Value::as_bool);
        let state = match state {
            "input-streaming" | "approval-requested" => ToolState::Pending { input, extra: Map::new() },
            "input-available" => ToolState::Running { input, extra: Map::new() },
            "approval-responded" if approved == Some(false) => {
                ToolState::Error { input, error: denied().into(), extra: Map::new() }
            }
            "approval-responded" => ToolState::Running { input, extra: Map::new() },
            "output-available" => completed(input, p),
            "output-error" => {
                ToolState::Error { input, error: str_field(p, "errorText").unwrap_or("").into(), extra: Map::new() }
            }
            "output-denied" => ToolState::Error { input, error: denied().into(), extra: Map::new() },
            other => {
                if self.unknown.insert(format!("state {other}")) {
                    b.warn(line, format!("unknown AI SDK UI tool state {other:?}: read from the fields present"));
                }
                if p.get("output").is_some() {
                    completed(input, p)
                } else if let Some(error) = str_field(p, "errorText") {
                    ToolState::Error { input, error: error.into(), extra: Map::new() }
                } else {
                    ToolState::Pending { input, extra: Map::new() }
                }
            }
        };
        let dynamic = str_field(p, "type") == Some("dynamic-tool");
        let mapped: &[&str] = if dynamic {
            &["toolCallId", "toolName", "input", "output", "errorText", "approval"]
        } else {
            &["type", "toolCallId", "input", "output", "errorText", "approval"]
        };
        let mut extra = kept(p, mapped);
        if let Some(approval) = p.get("approval") {
            extra.insert("approval".into(), approval.clone());
        }
        Part::Tool(ToolPart {
            id,
            call_id,
            tool: if name.is_empty() { "unknown" } else { name }.to_string(),
            state,
            extra,
        })
    }
}

/// A completed call: the output as text (a string as it is, anything else as JSON). A preliminary
/// output (one a streaming tool sent before its last) is what the model would be sent: it is kept,
/// with `preliminary: true`.
fn completed(input: Value, p: &Value) -> ToolState {
    let output = match p.get("output") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    let mut extra = Map::new();
    if p.get("preliminary") == Some(&Value::Bool(true)) {
        extra.insert("preliminary".into(), Value::Bool(true));
    }
    ToolState::Completed { input, output: output.into(), title: None, compacted_at: None, attachments: None, extra }
}

/// `{ aiSdkUi: <p without mapped> }`, or nothing when nothing is left.
fn kept(p: &Value, mapped: &[&str]) -> Map<String, Value> {
    let rest = without(p, mapped);
    let mut extra = Map::new();
    if !rest.is_empty() {
        extra.insert(EXTRA.into(), Value::Object(rest));
    }
    extra
}

/// A part kept as it came ([`other_fields`]), with the canonical id (its own moves to [`OTHER_ID`]).
fn other(id: String, p: &Value) -> Part {
    let mut o = other_fields(p);
    if let Some(own) = o.remove("id") {
        o.insert(OTHER_ID.into(), own);
    }
    o.insert("id".into(), Value::String(id));
    Part::Other(Value::Object(o))
}

fn mark_step(p: &mut Part) {
    let extra = match p {
        Part::Text(t) => &mut t.extra,
        Part::Reasoning(r) => &mut r.extra,
        Part::File(f) => &mut f.extra,
        Part::Tool(t) => &mut t.extra,
        Part::Compaction(c) => &mut c.extra,
        Part::Other(Value::Object(o)) => o,
        Part::Other(_) => return,
    };
    extra.insert(STEP_START.into(), Value::Bool(true));
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

#[cfg(test)]
mod tests;
