//! Where the context's tokens go, by kind, from the counts cached per part (for a context view
//! such as `contextfold inspect`).

use serde::Serialize;

use super::fenwick::Summable;
use super::History;
use crate::message::{Part, Role};
use crate::summary_input::call_files;
use crate::tokens::MESSAGE_OVERHEAD;
use crate::tokens::{Counter, Entry};

/// Tokens of the context by kind; they add up to the local count of the context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Breakdown {
    pub system: u64,
    pub user: u64,
    pub assistant: u64,
    pub reasoning: u64,
    pub tool_calls: u64,
    pub tool_output: u64,
    pub media: u64,
    /// Summaries and the requests they answer.
    pub summaries: u64,
    /// Per-message framing.
    pub overhead: u64,
}

/// One tool result and its size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolOutputSize {
    #[serde(rename = "messageID")]
    pub message_id: String,
    #[serde(rename = "partID")]
    pub part_id: String,
    pub tool: String,
    pub tokens: u64,
    pub pruned: bool,
    /// The file the call read or wrote, when it names one (a read, an edit, a `cat`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub path: Option<String>,
}

impl Breakdown {
    /// One message's tokens by kind; `counter` made its part counts.
    pub(super) fn of(e: &Entry, counter: &Counter) -> Breakdown {
        let mut b = Breakdown { overhead: MESSAGE_OVERHEAD, ..Default::default() };
        let summary = e.msg.is_summary() || e.msg.compaction().is_some();
        for (p, c) in e.msg.parts.iter().zip(&e.parts) {
            // Images and PDFs count as media wherever they are: a file, a tool output's attachments.
            let media = if summary { 0 } else { counter.media(p).min(c.total - c.call) };
            b.media += media;
            let slot = match p {
                _ if summary => &mut b.summaries,
                Part::Tool(_) => {
                    b.tool_calls += c.call;
                    &mut b.tool_output
                }
                Part::Reasoning(_) => &mut b.reasoning,
                _ => match e.msg.role {
                    Role::System => &mut b.system,
                    Role::User => &mut b.user,
                    Role::Assistant => &mut b.assistant,
                },
            };
            *slot += c.total - c.call - media;
        }
        b
    }

    fn zip(self, o: Breakdown, f: impl Fn(u64, u64) -> u64) -> Breakdown {
        Breakdown {
            system: f(self.system, o.system),
            user: f(self.user, o.user),
            assistant: f(self.assistant, o.assistant),
            reasoning: f(self.reasoning, o.reasoning),
            tool_calls: f(self.tool_calls, o.tool_calls),
            tool_output: f(self.tool_output, o.tool_output),
            media: f(self.media, o.media),
            summaries: f(self.summaries, o.summaries),
            overhead: f(self.overhead, o.overhead),
        }
    }
}

impl Summable for Breakdown {
    fn plus(self, other: Self) -> Self {
        self.zip(other, u64::wrapping_add)
    }
    fn minus(self, other: Self) -> Self {
        self.zip(other, u64::wrapping_sub)
    }
}

impl History {
    /// Tokens of the context by kind; they add up to the local count of the context.
    /// From the prefix sums by kind: O(log n) per run of the view, whatever the context's length.
    pub fn breakdown(&self) -> Breakdown {
        self.view().segments.iter().fold(Breakdown::default(), |b, &(a, z)| b.plus(self.kinds_range(a, z)))
    }

    /// The `limit` largest tool results in the context, largest first.
    pub fn largest_tool_outputs(&self, limit: usize) -> Vec<ToolOutputSize> {
        let visible = self.visible();
        let mut all: Vec<(&str, &crate::message::ToolPart, u64)> = visible
            .iter()
            .flat_map(|e| {
                e.msg.parts.iter().zip(&e.parts).filter_map(move |(p, c)| match p {
                    Part::Tool(t) => Some((e.msg.id.as_str(), t, c.total - c.call)),
                    _ => None,
                })
            })
            .collect();
        all.sort_by_key(|o| std::cmp::Reverse(o.2));
        all.truncate(limit);
        all.into_iter()
            .map(|(id, t, tokens)| {
                let (read, modified) = call_files(&t.tool, &t.state);
                ToolOutputSize {
                    message_id: id.to_string(),
                    part_id: t.id.clone(),
                    tool: t.tool.clone(),
                    tokens,
                    pruned: t.is_pruned(),
                    path: modified.into_iter().chain(read).next(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::message::parse_message;
    use crate::session::{History, SessionOptions};

    #[test]
    fn the_kinds_add_up_to_the_context() {
        let msgs = [
            json!({"id": "s", "role": "system", "parts": [{"type": "text", "id": "a", "text": "be brief"}]}),
            json!({"id": "u", "role": "user", "parts": [{"type": "text", "id": "b", "text": "look at this"},
                {"type": "file", "id": "c", "mime": "image/png", "url": "data:image/png;base64,AA"}]}),
            json!({"id": "x", "role": "assistant", "finish": "stop", "parts": [{"type": "reasoning", "id": "d", "text": "hmm"},
                {"type": "tool", "id": "e", "callID": "c1", "tool": "bash", "state": {"status": "completed", "input": {"cmd": "ls -la"}, "output": "a\\nb\\nc"}},
                {"type": "text", "id": "f", "text": "done"}]}),
        ];
        let msgs = msgs.into_iter().map(|m| parse_message(m).unwrap()).collect();
        let opts = SessionOptions { tokenizer: Some("o200k".into()), ..Default::default() };
        let h = History::from_messages(msgs, opts, &|| false).unwrap();
        let b = h.breakdown();
        let sum = b.system
            + b.user
            + b.assistant
            + b.reasoning
            + b.tool_calls
            + b.tool_output
            + b.media
            + b.summaries
            + b.overhead;
        assert_eq!(sum, h.usage().tokens);
        assert_eq!(b.media, 1200);
        assert!(b.tool_calls > 0 && b.tool_output > 0 && b.reasoning > 0 && b.system > 0);
        let top = h.largest_tool_outputs(5);
        assert_eq!((top.len(), top[0].tool.as_str(), top[0].path.as_deref()), (1, "bash", None));
    }

    #[test]
    fn a_tool_output_names_the_file_its_call_read_or_wrote() {
        let tool = |id: &str, tool: &str, input: serde_json::Value, size: usize| json!({"type": "tool", "id": id, "callID": id, "tool": tool, "state": {"status": "completed", "input": input, "output": "x ".repeat(size)}});
        let m = json!({"id": "a", "role": "assistant", "finish": "stop", "parts": [
            tool("r", "read", json!({"file_path": "src/lib.rs"}), 300),
            tool("e", "edit", json!({"path": "src/main.rs", "old": "a", "new": "b"}), 200),
            tool("c", "bash", json!({"command": "cat README.md | head"}), 100),
            tool("g", "grep", json!({"pattern": "fn main"}), 50)]});
        let h = History::from_messages(vec![parse_message(m).unwrap()], SessionOptions::default(), &|| false).unwrap();
        let top = h.largest_tool_outputs(4);
        let paths: Vec<Option<&str>> = top.iter().map(|t| t.path.as_deref()).collect();
        assert_eq!(paths, [Some("src/lib.rs"), Some("src/main.rs"), Some("README.md"), None]);
    }
}
