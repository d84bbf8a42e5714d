//! AI SDK messages to OpenAI chat completions messages: assistant `tool_calls` (arguments as a
//! JSON string) each answered by a `role: "tool"` message with its `tool_call_id` right after the
//! assistant message, system messages in place, user content as a string or parts. Images in tool
//! results (a tool message holds text only) follow the tool messages in a user message. Reasoning
//! is left out; consecutive user messages, and an assistant message without calls followed by
//! another assistant message, are merged.

use std::borrow::Cow;

use serde::Serialize;

use super::model_messages::{AssistantContent, ContentItem, ModelMessage, ToolOutput, UserContent};
use super::shared::object_input;
use crate::message::markers;

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum OpenAiMessage<'a> {
    System {
        content: String,
    },
    User {
        content: UserMessageContent<'a>,
    },
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall<'a>>,
    },
    Tool {
        tool_call_id: Cow<'a, str>,
        content: String,
    },
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(untagged)]
pub enum UserMessageContent<'a> {
    Text(String),
    Parts(Vec<UserPart<'a>>),
}

#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl<'a> },
    File { file: FileData<'a> },
}

#[derive(Debug, Serialize, PartialEq)]
pub struct ImageUrl<'a> {
    pub url: Cow<'a, str>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct FileData<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<&'a str>,
    pub file_data: &'a str,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct ToolCall<'a> {
    pub id: Cow<'a, str>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionCall<'a>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct FunctionCall<'a> {
    pub name: &'a str,
    pub arguments: String,
}

fn user_message(mut parts: Vec<UserPart<'_>>) -> Option<OpenAiMessage<'_>> {
    if parts.is_empty() {
        return None;
    }
    let content = if parts.len() == 1 && matches!(parts[0], UserPart::Text { .. }) {
        match parts.pop() {
            Some(UserPart::Text { text }) => UserMessageContent::Text(text.into_owned()),
            _ => unreachable!("checked above"),
        }
    } else {
        UserMessageContent::Parts(parts)
    };
    Some(OpenAiMessage::User { content })
}

fn user_part<'a>(c: UserContent<'a>) -> UserPart<'a> {
    match c {
        UserContent::Text { text } => UserPart::Text { text },
        UserContent::Image { image, .. } => UserPart::ImageUrl { image_url: ImageUrl { url: Cow::Borrowed(image) } },
        UserContent::File { data, media_type, filename } => {
            if data.starts_with("data:") {
                UserPart::File { file: FileData { filename, file_data: data } }
            } else {
                UserPart::Text { text: Cow::Owned(markers::attached(media_type, filename.unwrap_or(data))) }
            }
        }
    }
}

pub fn to_openai(messages: Vec<ModelMessage<'_>>) -> Vec<OpenAiMessage<'_>> {
    let mut out: Vec<OpenAiMessage> = Vec::new();
    for m in messages.into_iter().flat_map(ModelMessage::into_typed) {
        let next = match m {
            ModelMessage::System { content } => vec![OpenAiMessage::System { content }],
            ModelMessage::User { content } => {
                user_message(content.into_iter().map(user_part).collect()).into_iter().collect()
            }
            ModelMessage::Assistant { content } => {
                let mut texts: Vec<&str> = Vec::new();
                let mut tool_calls = Vec::new();
                for c in content {
                    match c {
                        AssistantContent::Text { text } => texts.push(text),
                        AssistantContent::Reasoning { .. } => {}
                        AssistantContent::ToolCall { tool_call_id, tool_name, input } => tool_calls.push(ToolCall {
                            id: tool_call_id,
                            kind: "function",
                            function: FunctionCall { name: tool_name, arguments: object_input(input).to_string() },
                        }),
                    }
                }
                if texts.is_empty() && tool_calls.is_empty() {
                    continue;
                }
                let content = (!texts.is_empty()).then(|| texts.join("\n\n"));
                vec![OpenAiMessage::Assistant { content, tool_calls }]
            }
            // `into_typed` leaves none.
            ModelMessage::Restored(_) => continue,
            ModelMessage::Tool { content } => {
                let mut msgs = Vec::new();
                let mut media: Vec<UserPart> = Vec::new();
                for r in content {
                    let text = match r.output {
                        ToolOutput::Text { value } | ToolOutput::ErrorText { value } => value.into_owned(),
                        ToolOutput::Content { value } => {
                            let mut texts = Vec::new();
                            for item in value {
                                match item {
                                    ContentItem::Text { text } => texts.push(text.into_owned()),
                                    ContentItem::Media { data, media_type } => {
                                        texts.push(markers::attached(media_type, "file"));
                                        if media_type.starts_with("image/") {
                                            media.push(UserPart::ImageUrl {
                                                image_url: ImageUrl {
                                                    url: Cow::Owned(format!("data:{media_type};base64,{data}")),
                                                },
                                            });
                                        }
                                    }
                                }
                            }
                            texts.join("\n")
                        }
                    };
                    msgs.push(OpenAiMessage::Tool { tool_call_id: r.tool_call_id, content: text });
                }
                if !media.is_empty() {
                    media.insert(0, UserPart::Text { text: Cow::Borrowed("Images returned by the tool calls above:") });
                    msgs.extend(user_message(media));
                }
                msgs
            }
        };
        for msg in next {
            push(&mut out, msg);
        }
    }
    out
}

/// Appends `msg`, merging it into the last message where the roles allow.
fn push<'a>(out: &mut Vec<OpenAiMessage<'a>>, msg: OpenAiMessage<'a>) {
    match (out.last_mut(), msg) {
        (Some(OpenAiMessage::User { content: prev }), OpenAiMessage::User { content: next }) => {
            let mut parts = into_parts(std::mem::replace(prev, UserMessageContent::Parts(Vec::new())));
            parts.extend(into_parts(next));
            *prev = UserMessageContent::Parts(parts);
        }
        (
            Some(OpenAiMessage::Assistant { content: prev, tool_calls: prev_calls }),
            OpenAiMessage::Assistant { content, tool_calls },
        ) if prev_calls.is_empty() => {
            *prev = match (prev.take(), content) {
                (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
                (a, b) => a.or(b),
            };
            *prev_calls = tool_calls;
        }
        (_, msg) => out.push(msg),
    }
}

fn into_parts(c: UserMessageContent<'_>) -> Vec<UserPart<'_>> {
    match c {
        UserMessageContent::Text(t) => vec![UserPart::Text { text: Cow::Owned(t) }],
        UserMessageContent::Parts(p) => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{to_model_messages, ConvertOptions};
    use crate::message::parse_message;
    use serde_json::{json, Value};

    #[test]
    fn follows_the_chat_completions_rules() {
        let tool = |id: &str, call: &str, state: Value| json!({"type": "tool", "id": id, "callID": call, "tool": "bash", "state": state});
        let msgs: Vec<_> = json!([
            {"id": "s", "role": "system", "parts": [{"type": "text", "id": "a", "text": "be brief"}]},
            {"id": "u", "role": "user", "parts": [{"type": "text", "id": "b", "text": "hi"}]},
            {"id": "u2", "role": "user", "parts": [{"type": "file", "id": "c", "mime": "image/png", "url": "data:image/png;base64,QQ"}]},
            {"id": "a0", "role": "assistant", "parts": [{"type": "reasoning", "id": "r", "text": "hmm"}, {"type": "text", "id": "d", "text": "let me see"}]},
            {"id": "a1", "role": "assistant", "parts": [
                tool("e", "c1", json!({"status": "completed", "input": {"cmd": "ls"}, "output": "x",
                    "attachments": [{"id": "q", "mime": "image/png", "url": "data:image/png;base64,ZZ"}]})),
                tool("f", "c1", json!({"status": "error", "input": {}, "error": "boom"})),
                {"type": "text", "id": "g", "text": "done"}
            ]}
        ])
        .as_array()
        .unwrap()
        .iter()
        .map(|m| parse_message(m.clone()).unwrap())
        .collect();
        let out = serde_json::to_value(to_openai(to_model_messages(&msgs, &ConvertOptions::default()))).unwrap();
        assert_eq!(
            out,
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,QQ"}}
                ]},
                {"role": "assistant", "content": "let me see", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}},
                    {"id": "c1_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "x\n[Attached image/png: file]"},
                {"role": "tool", "tool_call_id": "c1_1", "content": "boom"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images returned by the tool calls above:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,ZZ"}}
                ]},
                {"role": "assistant", "content": "done"}
            ])
        );
    }
}
