//! AI SDK messages to the Anthropic Messages API shape: `{ system?, messages }` where tool calls
//! are `tool_use` blocks and their results `tool_result` blocks at the start of the next user
//! message, consecutive same-role messages are merged, the first message is a user message, and
//! images are base64 `source` blocks. Reasoning is left out (a thinking block needs the provider's
//! signature); system messages after the first non-system message become user text.
//!
//! With cache breakpoints (see `cache`), `cache_control` goes on the last block of the chosen
//! messages, and the system prompt becomes text blocks (one per system message) when one of them
//! carries it.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::cache::{self, CacheControl};
use super::model_messages::{
    with_ends, AssistantContent, ContentItem, ConvertOptions, ModelMessage, ToolOutput, UserContent,
};
use super::shared::{base64_parts, object_input};
use crate::message::{markers, Message};

#[derive(Debug, Serialize, PartialEq)]
pub struct AnthropicRequest<'a> {
    #[serde(skip_serializing_if = "System::is_empty")]
    pub system: System,
    pub messages: Vec<AnthropicMessage<'a>>,
}

/// The system prompt: one string, or text blocks when one carries a `cache_control`.
#[derive(Debug, Default, PartialEq)]
pub struct System(pub Vec<Marked<String>>);

impl System {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for System {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct TextBlock<'b> {
            #[serde(rename = "type")]
            kind: &'static str,
            text: &'b str,
            #[serde(skip_serializing_if = "Option::is_none")]
            cache_control: &'b Option<Value>,
        }
        if self.0.iter().all(|b| b.cache_control.is_none()) {
            return s.serialize_str(&self.0.iter().map(|b| b.block.as_str()).collect::<Vec<_>>().join("\n\n"));
        }
        s.collect_seq(self.0.iter().map(|b| TextBlock {
            kind: "text",
            text: &b.block,
            cache_control: &b.cache_control,
        }))
    }
}

/// A block, with the `cache_control` it carries.
#[derive(Debug, Serialize, PartialEq)]
pub struct Marked<B> {
    #[serde(flatten)]
    pub block: B,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<Value>,
}

impl<B> From<B> for Marked<B> {
    fn from(block: B) -> Self {
        Marked { block, cache_control: None }
    }
}

#[derive(Debug, Serialize, PartialEq)]
pub struct AnthropicMessage<'a> {
    pub role: &'static str,
    pub content: Vec<Marked<AnthropicBlock<'a>>>,
}

/// Where a block is: in the system prompt, or in a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    System(usize),
    Message(usize, usize),
}

impl AnthropicRequest<'_> {
    fn mark(&mut self, at: At, control: Value) {
        let slot = match at {
            At::System(b) => self.system.0.get_mut(b).map(|b| &mut b.cache_control),
            At::Message(m, b) => {
                self.messages.get_mut(m).and_then(|m| m.content.get_mut(b)).map(|b| &mut b.cache_control)
            }
        };
        if let Some(slot) = slot {
            *slot = Some(control);
        }
    }
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
    build(messages).0
}

/// `shown` in the Anthropic shape with cache breakpoints: the app's own (from the AI SDK
/// `providerOptions` the messages came with) kept, ours (`control`) added at the stable points.
pub fn to_anthropic_cached<'a>(
    shown: &[&'a Message],
    opts: &ConvertOptions,
    control: &CacheControl,
) -> AnthropicRequest<'a> {
    let (out, ends) = with_ends(shown.iter().copied(), opts);
    let (mut req, after) = build(out);
    // The last block of shown message `i` (of the messages before it when it gives none).
    let block = |i: usize| ends[i].checked_sub(1).and_then(|j| after[j]);
    let mut app: Vec<(At, Value)> = Vec::new();
    for (i, m) in shown.iter().enumerate() {
        if let (Some(&v), Some(at)) = (cache::in_message(m).first(), block(i)) {
            if !app.iter().any(|(a, _)| *a == at) {
                app.push((at, v.clone()));
            }
        }
    }
    let taken: Vec<At> = app.iter().map(|(a, _)| *a).collect();
    let ours = cache::choose(cache::candidates(shown).map(|(p, i)| (p, i.and_then(block))), &taken, taken.len());
    for (at, v) in app {
        req.mark(at, v);
    }
    for (_, at) in ours {
        req.mark(at, control.to_value());
    }
    req
}

/// The request, and where the last block given by each of `messages` (or before it) lies.
fn build(messages: Vec<ModelMessage<'_>>) -> (AnthropicRequest<'_>, Vec<Option<At>>) {
    let mut system: Vec<Marked<String>> = Vec::new();
    let mut turns: Vec<AnthropicMessage> = Vec::new();
    let mut ids = Ids::default();
    let mut after: Vec<Option<At>> = Vec::with_capacity(messages.len());
    let mut last: Option<At> = None;
    for m in messages {
        for m in m.into_typed() {
            if let Some(at) = push(m, &mut system, &mut turns, &mut ids) {
                last = Some(at);
            }
        }
        after.push(last);
    }
    if turns.first().is_some_and(|t| t.role != "user") {
        turns.insert(
            0,
            AnthropicMessage {
                role: "user",
                content: vec![AnthropicBlock::Text { text: Cow::Borrowed(markers::CONVERSATION_START) }.into()],
            },
        );
        for at in after.iter_mut().flatten() {
            if let At::Message(m, _) = at {
                *m += 1;
            }
        }
    }
    (AnthropicRequest { system: System(system), messages: turns }, after)
}

/// Adds one typed message; where its last block went, if it gave one.
fn push<'a>(
    m: ModelMessage<'a>,
    system: &mut Vec<Marked<String>>,
    turns: &mut Vec<AnthropicMessage<'a>>,
    ids: &mut Ids,
) -> Option<At> {
    let (role, blocks): (&'static str, Vec<AnthropicBlock>) = match m {
        ModelMessage::System { content } => {
            if turns.is_empty() {
                system.push(content.into());
                return Some(At::System(system.len() - 1));
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
                    AssistantContent::ToolCall { tool_call_id, tool_name, input } => Some(AnthropicBlock::ToolUse {
                        id: ids.get(&tool_call_id),
                        name: tool_name,
                        input: object_input(input),
                    }),
                })
                .collect(),
        ),
        // `into_typed` leaves none.
        ModelMessage::Restored(_) => return None,
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
        return None;
    }
    let blocks = blocks.into_iter().map(Marked::from);
    match turns.last_mut() {
        Some(last) if last.role == role => last.content.extend(blocks),
        _ => turns.push(AnthropicMessage { role, content: blocks.collect() }),
    }
    let n = turns.len() - 1;
    Some(At::Message(n, turns[n].content.len() - 1))
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

    fn parse(msgs: Value) -> Vec<Message> {
        msgs.as_array().unwrap().iter().map(|m| parse_message(m.clone()).unwrap()).collect()
    }

    fn cached(msgs: &[Message], control: &CacheControl) -> Value {
        let shown: Vec<&Message> = msgs.iter().collect();
        serde_json::to_value(to_anthropic_cached(&shown, &ConvertOptions::default(), control)).unwrap()
    }

    /// Paths of the blocks carrying `cache_control`, with its value.
    fn marks(out: &Value) -> Vec<(String, Value)> {
        let mut found = Vec::new();
        if let Some(system) = out["system"].as_array() {
            for (b, block) in system.iter().enumerate() {
                if let Some(c) = block.get("cache_control") {
                    found.push((format!("system/{b}"), c.clone()));
                }
            }
        }
        for (m, msg) in out["messages"].as_array().unwrap().iter().enumerate() {
            for (b, block) in msg["content"].as_array().unwrap().iter().enumerate() {
                if let Some(c) = block.get("cache_control") {
                    found.push((format!("{m}/{b}"), c.clone()));
                }
            }
        }
        found
    }

    fn history() -> Vec<Message> {
        let text = |id: &str, role: &str, t: &str| json!({"id": id, "role": role, "parts": [{"type": "text", "id": format!("{id}t"), "text": t}]});
        let tool = |id: &str, pruned: bool| {
            let mut state = json!({"status": "completed", "input": {"path": "a.rs"}, "output": "fn main() {}"});
            if pruned {
                state["compactedAt"] = json!(5);
            }
            json!({"type": "tool", "id": format!("{id}p"), "callID": format!("{id}c"), "tool": "read", "state": state})
        };
        let mut summary = text("sum", "assistant", "## Goal\nfix the bug");
        summary["summary"] = json!(true);
        parse(json!([
            text("s", "system", "be brief"),
            {"id": "c", "role": "user", "parts": [{"type": "compaction", "id": "cp", "auto": true}]},
            summary,
            text("u1", "user", "go on"),
            {"id": "a1", "role": "assistant", "parts": [tool("a1", true)]},
            {"id": "a2", "role": "assistant", "parts": [tool("a2", false), {"type": "text", "id": "a2t", "text": "read it"}]},
            text("u2", "user", "now the tests"),
            {"id": "a3", "role": "assistant", "parts": [tool("a3", true)]},
            text("a4", "assistant", "done"),
            text("u3", "user", "thanks")
        ]))
    }

    #[test]
    fn marks_the_system_prompt_the_summary_the_newest_prune_mark_and_the_end() {
        let out = cached(&history(), &CacheControl::default());
        let eph = json!({"type": "ephemeral"});
        // Turns: 0 the request, 1 the summary, 2 "go on", 3-4 a1's call and result, 5-7 a2's call,
        // result and text, 8 "now the tests", 9-10 a3's call and (pruned) result, 11 "done", 12 "thanks".
        assert_eq!(out["system"], json!([{"type": "text", "text": "be brief", "cache_control": eph}]));
        assert_eq!(
            marks(&out),
            vec![
                ("system/0".into(), eph.clone()),
                ("1/0".into(), eph.clone()),
                ("10/0".into(), eph.clone()),
                ("12/0".into(), eph.clone())
            ]
        );
        assert_eq!(out["messages"][10]["content"][0]["type"], "tool_result");
        assert_eq!(out["messages"][12]["content"][0]["text"], "thanks");
        // A 1-hour cache when asked.
        let hour = cached(&history(), &CacheControl { ttl: Some("1h".into()) });
        assert!(marks(&hour).iter().all(|(_, c)| *c == json!({"type": "ephemeral", "ttl": "1h"})));
    }

    #[test]
    fn none_when_turned_off() {
        let msgs = history();
        let shown: Vec<&Message> = msgs.iter().collect();
        let out = serde_json::to_value(crate::convert::convert(
            &shown,
            &ConvertOptions::default(),
            crate::convert::ModelFormat::Anthropic,
            None,
        ))
        .unwrap();
        assert_eq!(out["system"], json!("be brief"));
        assert!(marks(&out).is_empty());
    }

    #[test]
    fn earlier_breakpoints_stay_on_the_same_blocks_across_an_append() {
        let all = history();
        let before = marks(&cached(&all[..9], &CacheControl::default()));
        let after = marks(&cached(&all, &CacheControl::default()));
        // Everything but the end stays where it was; the end moves to the new last block.
        assert_eq!(before[..3], after[..3]);
        assert_ne!(before[3], after[3]);
        assert_eq!(after.len(), 4);
    }

    #[test]
    fn keeps_the_apps_breakpoints_and_stays_within_four() {
        let cc = |ttl: &str| json!({"anthropic": {"cacheControl": {"type": "ephemeral", "ttl": ttl}}});
        let values = [
            json!({"role": "system", "content": "be brief", "providerOptions": cc("1h")}),
            json!({"role": "user", "content": [{"type": "text", "text": "fix it", "providerOptions": cc("1h")}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "reading"},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "read", "input": {}}]}),
            json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "read",
                "output": {"type": "text", "value": "x"}, "providerOptions": {"anthropic": {"cache_control": {"type": "ephemeral"}}}}]}),
            json!({"role": "assistant", "content": "looks fine"}),
            json!({"role": "user", "content": "next"}),
        ];
        let msgs = crate::formats::continue_model_messages(None, &values, 0).messages;
        let out = cached(&msgs, &CacheControl::default());
        let hour = json!({"type": "ephemeral", "ttl": "1h"});
        let eph = json!({"type": "ephemeral"});
        // The app's three (the system prompt, the user text, the tool result) as they were, and ours
        // at the end: four in all.
        assert_eq!(
            marks(&out),
            vec![
                ("system/0".into(), hour.clone()),
                ("0/0".into(), hour),
                ("2/0".into(), eph.clone()),
                ("4/0".into(), eph)
            ]
        );
        // Four set by the app: none of ours.
        let mut four = values.to_vec();
        four[4] = json!({"role": "assistant", "content": "looks fine", "providerOptions": cc("5m")});
        let msgs = crate::formats::continue_model_messages(None, &four, 0).messages;
        let m = marks(&cached(&msgs, &CacheControl::default()));
        assert_eq!(m.len(), 4);
        assert_eq!(m[3], ("3/0".to_string(), json!({"type": "ephemeral", "ttl": "5m"})));
    }
}
