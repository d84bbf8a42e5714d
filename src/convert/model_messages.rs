//! Canonical messages to AI SDK `ModelMessage`s. The output always satisfies the tool-pair rule:
//! every tool call has exactly one result in the tool message right after it, and no result lacks
//! its call; call ids are unique even when the input reuses one. Messages imported from AI SDK
//! `ModelMessage`s come back as they were (`Restored`), with their typed form for other shapes.

use rustc_hash::FxHashMap;
use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::ai_sdk::{restore, Json};
use crate::message::ai_sdk_layout::{starts_step, LAYOUT};
use crate::message::{is_media, FilePart, Message, Part, Role, ToolPart, ToolState};
use crate::message::{keep_head_and_tail, markers};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConvertOptions {
    /// Replace images and PDFs with `[Attached <mime>: <filename>]`.
    pub strip_media: bool,
    /// Cut tool outputs longer than this, keeping head and tail.
    pub tool_output_max_chars: Option<usize>,
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ModelMessage<'a> {
    System {
        content: String,
    },
    User {
        content: Vec<UserContent<'a>>,
    },
    Assistant {
        content: Vec<AssistantContent<'a>>,
    },
    Tool {
        content: Vec<ToolResult<'a>>,
    },
    #[serde(untagged)]
    Restored(Restored<'a>),
}

/// A message imported from AI SDK `ModelMessage`s as it came. One canonical message may give
/// several; the first carries the typed form of them all, which the other shapes read.
#[derive(Debug, PartialEq)]
pub struct Restored<'a> {
    pub value: Json<'a>,
    pub typed: Vec<ModelMessage<'a>>,
}

impl Serialize for Restored<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl<'a> ModelMessage<'a> {
    /// The typed messages this stands for.
    pub fn into_typed(self) -> Vec<ModelMessage<'a>> {
        match self {
            ModelMessage::Restored(r) => r.typed,
            m => vec![m],
        }
    }
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum UserContent<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Image {
        image: &'a str,
        #[serde(rename = "mediaType")]
        media_type: &'a str,
    },
    File {
        data: &'a str,
        #[serde(rename = "mediaType")]
        media_type: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<&'a str>,
    },
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum AssistantContent<'a> {
    Text {
        text: &'a str,
    },
    Reasoning {
        text: &'a str,
    },
    ToolCall {
        #[serde(rename = "toolCallId")]
        tool_call_id: Cow<'a, str>,
        #[serde(rename = "toolName")]
        tool_name: &'a str,
        input: Cow<'a, Value>,
    },
}

#[derive(Debug, Serialize, PartialEq)]
pub struct ToolResult<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    #[serde(rename = "toolCallId")]
    pub tool_call_id: Cow<'a, str>,
    #[serde(rename = "toolName")]
    pub tool_name: &'a str,
    pub output: ToolOutput<'a>,
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ToolOutput<'a> {
    Text { value: Cow<'a, str> },
    ErrorText { value: Cow<'a, str> },
    Content { value: Vec<ContentItem<'a>> },
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ContentItem<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Media {
        data: &'a str,
        #[serde(rename = "mediaType")]
        media_type: &'a str,
    },
}

/// Makes tool-call ids unique across the output: a reused id gets a `_<n>` suffix. The ids are
/// returned borrowed from the parts (only a reused one makes a new string) and kept owned, with
/// what each message changed, so that a conversion can continue from any message an earlier one
/// reached (`with_ends_from`, after `rewind`).
#[derive(Clone, Debug, Default)]
pub struct CallIds {
    taken: FxHashMap<Box<str>, u32>,
    /// Each change to `taken`: the key and what it held before.
    undo: Vec<(Box<str>, Option<u32>)>,
    /// Where each message's changes start in `undo`.
    marks: Vec<usize>,
}

impl CallIds {
    /// The call id of each tool part of `m`, by part index.
    fn of<'a>(&mut self, m: &'a Message) -> Vec<Option<Cow<'a, str>>> {
        self.marks.push(self.undo.len());
        m.parts.iter().map(|p| if let Part::Tool(t) = p { Some(self.unique(t)) } else { None }).collect()
    }

    /// A message that takes no ids (one not sent) still counts as taken, so `rewind` counts as the input does.
    fn skip(&mut self) {
        self.marks.push(self.undo.len());
    }

    /// Back to the state after the first `messages` messages it took.
    pub fn rewind(&mut self, messages: usize) {
        let Some(&mark) = self.marks.get(messages) else { return };
        for (key, before) in self.undo.drain(mark..).rev() {
            match before {
                Some(n) => self.taken.insert(key, n),
                None => self.taken.remove(&key),
            };
        }
        self.marks.truncate(messages);
    }

    fn set(&mut self, key: &str, n: u32) {
        let before = self.taken.insert(key.into(), n);
        self.undo.push((key.into(), before));
    }

    fn unique<'a>(&mut self, part: &'a ToolPart) -> Cow<'a, str> {
        let base: &'a str = if part.call_id.is_empty() { &part.id } else { &part.call_id };
        let mut n = match self.taken.get(base) {
            None => {
                self.set(base, 0);
                return Cow::Borrowed(base);
            }
            Some(&n) => n + 1,
        };
        self.set(base, n);
        loop {
            let candidate = format!("{base}_{n}");
            if !self.taken.contains_key(candidate.as_str()) {
                self.set(&candidate, 0);
                return Cow::Owned(candidate);
            }
            n += 1;
        }
    }
}

pub fn to_model_messages<'a, I>(messages: I, opts: &ConvertOptions) -> Vec<ModelMessage<'a>>
where
    I: IntoIterator<Item = &'a Message>,
{
    with_ends(messages, opts).0
}

/// The model messages, and where those of each input message end (`ends[i]`: how many the
/// messages up to and including `i` give).
pub fn with_ends<'a, I>(messages: I, opts: &ConvertOptions) -> (Vec<ModelMessage<'a>>, Vec<usize>)
where
    I: IntoIterator<Item = &'a Message>,
{
    with_ends_from(messages, opts, &mut CallIds::default())
}

/// `with_ends` of messages that follow those `ids` was taken over (`ids` is left as it is after them).
pub fn with_ends_from<'a, I>(
    messages: I,
    opts: &ConvertOptions,
    ids: &mut CallIds,
) -> (Vec<ModelMessage<'a>>, Vec<usize>)
where
    I: IntoIterator<Item = &'a Message>,
{
    let mut out = Vec::new();
    let mut ends = Vec::new();
    for m in messages {
        if m.role == Role::Assistant && !sendable(m) {
            ids.skip();
            ends.push(out.len());
            continue;
        }
        let call_ids = ids.of(m);
        let start = out.len();
        match m.role {
            Role::System => system(m, &mut out),
            Role::User => user(m, opts, &mut out),
            Role::Assistant => {
                assistant(m, opts, &call_ids, &mut out);
                // The latest request a summary restates follows it.
                if let Some(text) = m.latest_request() {
                    out.push(ModelMessage::User { content: vec![UserContent::Text { text: Cow::Borrowed(text) }] });
                }
            }
        }
        if let Some(layout) = m.extra.get(LAYOUT).and_then(Value::as_array) {
            let typed = out.split_off(start);
            let mut restored = restore(m, layout, &call_ids, opts).into_iter();
            if let Some(value) = restored.next() {
                out.push(ModelMessage::Restored(Restored { value, typed }));
            }
            out.extend(restored.map(|value| ModelMessage::Restored(Restored { value, typed: Vec::new() })));
        }
        ends.push(out.len());
    }
    (out, ends)
}

fn system(m: &Message, out: &mut Vec<ModelMessage<'_>>) {
    if let Some(content) = m.text() {
        out.push(ModelMessage::System { content });
    }
}

fn file<'a>(f: &'a FilePart, opts: &ConvertOptions) -> UserContent<'a> {
    if f.is_cleared() {
        UserContent::Text { text: Cow::Owned(markers::cleared(&f.mime, f.display_name())) }
    } else if opts.strip_media && is_media(&f.mime) {
        UserContent::Text { text: Cow::Owned(markers::attached(&f.mime, f.display_name())) }
    } else if f.mime.starts_with("image/") {
        UserContent::Image { image: &f.url, media_type: &f.mime }
    } else {
        UserContent::File { data: &f.url, media_type: &f.mime, filename: f.filename.as_deref() }
    }
}

fn user<'a>(m: &'a Message, opts: &ConvertOptions, out: &mut Vec<ModelMessage<'a>>) {
    let content: Vec<UserContent<'a>> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) if !t.text.is_empty() => Some(UserContent::Text { text: Cow::Borrowed(&t.text) }),
            Part::File(f) => Some(file(f, opts)),
            Part::Compaction(_) => Some(UserContent::Text { text: Cow::Borrowed(markers::COMPACTION_REQUEST) }),
            _ => None,
        })
        .collect();
    if !content.is_empty() {
        out.push(ModelMessage::User { content });
    }
}

/// An errored answer is left out (an overflowed request, a failed summary), except an aborted one
/// that got as far as producing something.
fn sendable(m: &Message) -> bool {
    match &m.error {
        None => true,
        Some(e) => {
            e.name == "MessageAbortedError" && m.parts.iter().any(|p| matches!(p, Part::Text(_) | Part::Tool(_)))
        }
    }
}

/// `call_ids[k]`: the call id of tool part `k`.
fn assistant<'a>(
    m: &'a Message,
    opts: &ConvertOptions,
    call_ids: &[Option<Cow<'a, str>>],
    out: &mut Vec<ModelMessage<'a>>,
) {
    let mut calls: Vec<AssistantContent<'a>> = Vec::new();
    let mut results: Vec<ToolResult<'a>> = Vec::new();
    let flush =
        |calls: &mut Vec<AssistantContent<'a>>, results: &mut Vec<ToolResult<'a>>, out: &mut Vec<ModelMessage<'a>>| {
            if !calls.is_empty() {
                out.push(ModelMessage::Assistant { content: std::mem::take(calls) });
            }
            if !results.is_empty() {
                out.push(ModelMessage::Tool { content: std::mem::take(results) });
            }
        };
    for (k, p) in m.parts.iter().enumerate() {
        // A new step (an AI SDK UI `step-start` stood here): the calls of the step before and
        // their results come first.
        if starts_step(p) && !results.is_empty() {
            flush(&mut calls, &mut results, out);
        }
        let content = match p {
            Part::Text(t) if !t.text.is_empty() => AssistantContent::Text { text: &t.text },
            Part::Reasoning(r) if !r.text.is_empty() => AssistantContent::Reasoning { text: &r.text },
            Part::Tool(t) => {
                let id = call_ids[k].clone().unwrap_or_default();
                let input = match t.state.input() {
                    Value::Null => Cow::Owned(Value::Object(Default::default())),
                    v => Cow::Borrowed(v),
                };
                calls.push(AssistantContent::ToolCall { tool_call_id: id.clone(), tool_name: &t.tool, input });
                results.push(ToolResult {
                    kind: "tool-result",
                    tool_call_id: id,
                    tool_name: &t.tool,
                    output: tool_output(t, opts),
                });
                continue;
            }
            _ => continue,
        };
        // Text after tool calls belongs to the next step: the results must come first.
        if !results.is_empty() {
            flush(&mut calls, &mut results, out);
        }
        calls.push(content);
    }
    flush(&mut calls, &mut results, out);
}

fn tool_output<'a>(t: &'a ToolPart, opts: &ConvertOptions) -> ToolOutput<'a> {
    match &t.state {
        ToolState::Pending { .. } | ToolState::Running { .. } => {
            ToolOutput::ErrorText { value: Cow::Borrowed(markers::INTERRUPTED) }
        }
        ToolState::Error { error, .. } => {
            ToolOutput::ErrorText { value: Cow::Borrowed(t.state.cleared_text().unwrap_or(error)) }
        }
        ToolState::Completed { compacted_at: Some(_), .. } => {
            ToolOutput::Text { value: Cow::Borrowed(t.state.cleared_text().unwrap_or(markers::PRUNED)) }
        }
        ToolState::Completed { output, attachments, .. } => {
            let mut text = match opts.tool_output_max_chars {
                Some(max) => keep_head_and_tail(output, max),
                None => Cow::Borrowed(output.as_str()),
            };
            let mut media = Vec::new();
            for a in attachments.iter().flatten() {
                match a.url.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,")) {
                    Some((_, data)) if !opts.strip_media || !is_media(&a.mime) => {
                        media.push(ContentItem::Media { data, media_type: &a.mime });
                    }
                    _ => text.to_mut().push_str(&format!("\n{}", markers::attached(&a.mime, a.display_name()))),
                }
            }
            if media.is_empty() {
                ToolOutput::Text { value: text }
            } else {
                media.insert(0, ContentItem::Text { text });
                ToolOutput::Content { value: media }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::json;

    fn convert(msgs: Value, opts: &ConvertOptions) -> Value {
        let msgs: Vec<Message> = msgs.as_array().unwrap().iter().map(|m| parse_message(m.clone()).unwrap()).collect();
        serde_json::to_value(to_model_messages(&msgs, opts)).unwrap()
    }

    fn tool(id: &str, call: &str, state: Value) -> Value {
        json!({"type": "tool", "id": id, "callID": call, "tool": "bash", "state": state})
    }

    #[test]
    fn converts_every_part_kind() {
        let out = convert(
            json!([
                {"id": "s", "role": "system", "parts": [{"type": "text", "id": "a", "text": "be brief"}]},
                {"id": "u", "role": "user", "parts": [
                    {"type": "text", "id": "b", "text": "look"},
                    {"type": "file", "id": "c", "mime": "image/png", "url": "data:image/png;base64,AAAA", "filename": "x.png"},
                    {"type": "file", "id": "d", "mime": "application/pdf", "url": "https://e/x.pdf"}
                ]},
                {"id": "a1", "role": "assistant", "finish": "tool-calls", "parts": [
                    {"type": "reasoning", "id": "e", "text": "hmm"},
                    {"type": "text", "id": "f", "text": "running"},
                    tool("g", "c1", json!({"status": "completed", "input": {"cmd": "ls"}, "output": "0123456789"})),
                    tool("h", "c2", json!({"status": "error", "input": {}, "error": "boom"})),
                    tool("i", "c3", json!({"status": "running", "input": {}})),
                    {"type": "text", "id": "j", "text": "done"}
                ]}
            ]),
            &ConvertOptions { strip_media: false, tool_output_max_chars: Some(4) },
        );
        assert_eq!(
            out,
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image", "image": "data:image/png;base64,AAAA", "mediaType": "image/png"},
                    {"type": "file", "data": "https://e/x.pdf", "mediaType": "application/pdf"}
                ]},
                {"role": "assistant", "content": [
                    {"type": "reasoning", "text": "hmm"},
                    {"type": "text", "text": "running"},
                    {"type": "tool-call", "toolCallId": "c1", "toolName": "bash", "input": {"cmd": "ls"}},
                    {"type": "tool-call", "toolCallId": "c2", "toolName": "bash", "input": {}},
                    {"type": "tool-call", "toolCallId": "c3", "toolName": "bash", "input": {}}
                ]},
                {"role": "tool", "content": [
                    {"type": "tool-result", "toolCallId": "c1", "toolName": "bash", "output": {"type": "text", "value": "01\n[... omitted 6 chars ...]\n89"}},
                    {"type": "tool-result", "toolCallId": "c2", "toolName": "bash", "output": {"type": "error-text", "value": "boom"}},
                    {"type": "tool-result", "toolCallId": "c3", "toolName": "bash", "output": {"type": "error-text", "value": "[Tool execution was interrupted]"}}
                ]},
                {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
            ])
        );
    }

    #[test]
    fn strips_media_clears_pruned_output_and_drops_errored_answers() {
        let out = convert(
            json!([
                {"id": "u", "role": "user", "parts": [
                    {"type": "file", "id": "c", "mime": "image/png", "url": "data:image/png;base64,AAAA", "filename": "x.png"},
                    {"type": "compaction", "id": "k", "auto": true}
                ]},
                {"id": "a0", "role": "assistant", "error": {"name": "APIError", "message": "x"}, "parts": [{"type": "text", "id": "z", "text": "partial"}]},
                {"id": "a1", "role": "assistant", "parts": [
                    tool("g", "c1", json!({"status": "completed", "input": {}, "output": "big", "compactedAt": 1})),
                    tool("h", "c1", json!({"status": "completed", "input": {}, "output": "shot",
                        "attachments": [{"id": "q", "mime": "image/jpeg", "url": "data:image/jpeg;base64,BBBB"}]}))
                ]}
            ]),
            &ConvertOptions { strip_media: true, tool_output_max_chars: None },
        );
        assert_eq!(
            out[0],
            json!({"role": "user", "content": [
                {"type": "text", "text": "[Attached image/png: x.png]"},
                {"type": "text", "text": "What did we do so far?"}
            ]})
        );
        assert_eq!(out.as_array().unwrap().len(), 3);
        assert_eq!(
            out[2]["content"][0]["output"],
            json!({"type": "text", "value": "[Old tool result content cleared]"})
        );
        assert_eq!(out[2]["content"][1]["toolCallId"], json!("c1_1"));
        assert_eq!(out[2]["content"][1]["output"]["value"], json!("shot\n[Attached image/jpeg: file]"));
    }

    #[test]
    fn keeps_media_attachments_as_content_when_not_stripped() {
        let out = convert(
            json!([{"id": "a1", "role": "assistant", "parts": [
                tool("h", "c1", json!({"status": "completed", "input": {}, "output": "shot",
                    "attachments": [{"id": "q", "mime": "image/jpeg", "url": "data:image/jpeg;base64,BBBB"}]}))
            ]}]),
            &ConvertOptions::default(),
        );
        assert_eq!(
            out[1]["content"][0]["output"],
            json!({"type": "content", "value": [
                {"type": "text", "text": "shot"}, {"type": "media", "data": "BBBB", "mediaType": "image/jpeg"}
            ]})
        );
    }
}
