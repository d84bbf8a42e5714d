//! AI SDK messages to the Anthropic Messages API shape: `{ system?, messages }` where tool calls
//! are `tool_use` blocks and their results `tool_result` blocks at the start of the next user
//! message, consecutive same-role messages are merged, the first message is a user message, and
//! images are base64 `source` blocks. Reasoning is left out (a thinking block needs the provider's
//! signature); system messages after the first non-system message become user text.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use super::model_messages::{AssistantContent, ContentItem, ModelMessage, ToolOutput, UserContent};
use super::shared::{base64_parts, object_input};
use crate::message::markers;

#[derive(Debug, Serialize, PartialEq)]
pub struct AnthropicRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<AnthropicMessage<'a>>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct AnthropicMessage<'a> {
    pub role: &'static str,
    pub content: Vec<AnthropicBlock<'a>>,
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Source<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnthropicBlock<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Image {
        source: Source<'a>,
    },
    Document {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
    },
    ToolUse {
        id: String,
        name: &'a str,
        input: Cow<'a, Value>,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<AnthropicBlock<'a>>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

/// Tool-use ids may only hold letters, digits, `_` and `-`: others become `_`, keeping ids unique.
#[derive(Default)]
struct Ids {
    map: HashMap<String, String>,
    used: HashSet<String>,
}

impl Ids {
    fn get(&mut self, id: &str) -> String {
        if let Some(s) = self.map.get(id) {
            return s.clone();
        }
        let mut base: String =
            id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
        if base.is_empty() {
            base = "call".into();
        }
        let mut candidate = base.clone();
        let mut n = 1;
        while !self.used.insert(candidate.clone()) {
            candidate = format!("{base}_{n}");
            n += 1;
        }
        self.map.insert(id.to_string(), candidate.clone());
        candidate
    }
}

fn text(t: Cow<'_, str>) -> Option<AnthropicBlock<'_>> {
    (!t.trim().is_empty()).then_some(AnthropicBlock::Text { text: t })
}

fn media<'a>(url: &'a str, mime: &'a str, filename: Option<&'a str>) -> AnthropicBlock<'a> {
    let source = match base64_parts(url) {
        Some((_, data)) => Source::Base64 { media_type: mime, data },
        None => Source::Url { url },
    };
    if mime.starts_with("image/") {
        AnthropicBlock::Image { source }
    } else if mime == "application/pdf" {
        AnthropicBlock::Document { source, title: filename }
    } else {
        AnthropicBlock::Text { text: Cow::Owned(markers::attached(mime, filename.unwrap_or("file"))) }
    }
}

pub fn to_anthropic(messages: Vec<ModelMessage<'_>>) -> AnthropicRequest<'_> {
    let mut system: Vec<String> = Vec::new();
    let mut turns: Vec<AnthropicMessage> = Vec::new();
    let mut ids = Ids::default();
    for m in messages.into_iter().flat_map(ModelMessage::into_typed) {
        let (role, blocks): (&'static str, Vec<AnthropicBlock>) = match m {
            ModelMessage::System { content } => {
                if turns.is_empty() {
                    system.push(content);
                    continue;
                }
                ("user", text(Cow::Owned(content)).into_iter().collect())
            }
            ModelMessage::User { content } => (
                "user",
                content
                    .into_iter()
                    .filter_map(|c| match c {
                        UserContent::Text { text: t } => text(t),
                        UserContent::Image { image, media_type } => Some(media(image, media_type, None)),
                        UserContent::File { data, media_type, filename } => Some(media(data, media_type, filename)),
                    })
                    .collect(),
            ),
            ModelMessage::Assistant { content } => (
                "assistant",
                content
                    .into_iter()
                    .filter_map(|c| match c {
                        AssistantContent::Text { text: t } => text(Cow::Borrowed(t)),
                        AssistantContent::Reasoning { .. } => None,
                        AssistantContent::ToolCall { tool_call_id, tool_name, input } => {
                            Some(AnthropicBlock::ToolUse {
                                id: ids.get(&tool_call_id),
                                name: tool_name,
                                input: object_input(input),
                            })
                        }
                    })
                    .collect(),
            ),
            // `into_typed` leaves none.
            ModelMessage::Restored(_) => continue,
            ModelMessage::Tool { content } => (
                "user",
                content
                    .into_iter()
                    .map(|r| {
                        let (is_error, content) = match r.output {
                            ToolOutput::Text { value } => (false, text(value).into_iter().collect()),
                            ToolOutput::ErrorText { value } => (true, text(value).into_iter().collect()),
                            ToolOutput::Content { value } => (
                                false,
                                value
                                    .into_iter()
                                    .filter_map(|item| match item {
                                        ContentItem::Text { text: t } => text(t),
                                        ContentItem::Media { data, media_type } => {
                                            Some(if media_type.starts_with("image/") {
                                                AnthropicBlock::Image { source: Source::Base64 { media_type, data } }
                                            } else {
                                                AnthropicBlock::Text {
                                                    text: Cow::Owned(markers::attached(media_type, "file")),
                                                }
                                            })
                                        }
                                    })
                                    .collect(),
                            ),
                        };
                        AnthropicBlock::ToolResult { tool_use_id: ids.get(&r.tool_call_id), content, is_error }
                    })
                    .collect(),
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => turns.push(AnthropicMessage { role, content: blocks }),
        }
    }
    if turns.first().is_some_and(|t| t.role != "user") {
        turns.insert(
            0,
            AnthropicMessage {
                role: "user",
                content: vec![AnthropicBlock::Text { text: Cow::Borrowed(markers::CONVERSATION_START) }],
            },
        );
    }
    AnthropicRequest { system: (!system.is_empty()).then(|| system.join("\n\n")), messages: turns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{to_model_messages, ConvertOptions};
    use crate::message::parse_message;
    use serde_json::json;

    fn convert(msgs: Value) -> Value {
        let msgs: Vec<_> = msgs.as_array().unwrap().iter().map(|m| parse_message(m.clone()).unwrap()).collect();
        serde_json::to_value(to_anthropic(to_model_messages(&msgs, &ConvertOptions::default()))).unwrap()
    }

    #[test]
    fn follows_the_messages_api_rules() {
        let tool = |id: &str, call: &str, state: Value| json!({"type": "tool", "id": id, "callID": call, "tool": "bash", "state": state});
        let out = convert(json!([
            {"id": "s", "role": "system", "parts": [{"type": "text", "id": "a", "text": "be brief"}]},
            {"id": "a0", "role": "assistant", "parts": [{"type": "text", "id": "b", "text": "hello"}]},
            {"id": "a1", "role": "assistant", "parts": [
                {"type": "reasoning", "id": "c", "text": "hmm"},
                tool("d", "Read:0", json!({"status": "completed", "input": "raw", "output": "x",
                    "attachments": [{"id": "q", "mime": "image/png", "url": "data:image/png;base64,QQ"}]})),
                tool("e", "c2", json!({"status": "pending", "input": {}}))
            ]},
            {"id": "u", "role": "user", "parts": [
                {"type": "text", "id": "f", "text": "look"},
                {"type": "file", "id": "g", "mime": "image/jpeg", "url": "data:image/jpeg;base64,RR"},
                {"type": "file", "id": "h", "mime": "application/pdf", "url": "https://x/y.pdf", "filename": "y.pdf"}
            ]},
            {"id": "s2", "role": "system", "parts": [{"type": "text", "id": "i", "text": "late system"}]}
        ]));
        assert_eq!(
            out,
            json!({"system": "be brief", "messages": [
                {"role": "user", "content": [{"type": "text", "text": "[Conversation continues]"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "hello"},
                    {"type": "tool_use", "id": "Read_0", "name": "bash", "input": {"input": "raw"}},
                    {"type": "tool_use", "id": "c2", "name": "bash", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "Read_0", "content": [
                        {"type": "text", "text": "x"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QQ"}}
                    ]},
                    {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "[Tool execution was interrupted]"}], "is_error": true},
                    {"type": "text", "text": "look"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "RR"}},
                    {"type": "document", "source": {"type": "url", "url": "https://x/y.pdf"}, "title": "y.pdf"},
                    {"type": "text", "text": "late system"}
                ]}
            ]})
        );
    }
}
