//! What an offline, extractive summary is built from: the requests, every user instruction
//! verbatim, the commands run, the latest errors and the calls left open.

use serde::{Deserialize, Serialize};

use crate::message::keep_head_and_tail;
use crate::message::{Message, Part, ToolState};

/// Each quoted text is kept to this many characters (head and tail).
const QUOTE_MAX_CHARS: usize = 2_000;
const MAX_COMMANDS: usize = 30;
const MAX_ERRORS: usize = 5;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    /// Every user message's text, oldest first (the first is the original request).
    pub user_messages: Vec<String>,
    /// Shell commands run, newest last.
    pub commands: Vec<String>,
    /// The latest tool and answer errors, newest last.
    pub errors: Vec<String>,
    /// Tool calls that never finished: `tool(input)`.
    pub open_tool_calls: Vec<String>,
    /// The last thing the assistant said.
    pub last_assistant_text: Option<String>,
}

fn quote(s: &str) -> String {
    keep_head_and_tail(s.trim(), QUOTE_MAX_CHARS).into_owned()
}

pub fn facts<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Facts {
    let mut f = Facts::default();
    for m in messages {
        if m.compaction().is_some() || m.is_summary() {
            continue;
        }
        if m.is_user() {
            let text: Vec<&str> = m
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) if t.synthetic != Some(true) && !t.text.trim().is_empty() => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            if !text.is_empty() {
                f.user_messages.push(quote(&text.join("\n")));
            }
            continue;
        }
        if let Some(e) = &m.error {
            f.errors.push(quote(&format!("{}: {}", e.name, e.message)));
        }
        for p in &m.parts {
            match p {
                Part::Text(t) if m.is_assistant() && !t.text.trim().is_empty() => {
                    f.last_assistant_text = Some(quote(&t.text));
                }
                Part::Tool(t) => {
                    let input = t.state.input();
                    if let Some(cmd) = input.get("command").or_else(|| input.get("cmd")).and_then(|c| c.as_str()) {
                        if !t.tool.to_ascii_lowercase().contains("editor") {
                            f.commands.push(quote(cmd));
                        }
                    }
                    match &t.state {
                        ToolState::Error { error, .. } => f.errors.push(quote(&format!("{}: {}", t.tool, error))),
                        ToolState::Pending { .. } | ToolState::Running { .. } => {
                            f.open_tool_calls.push(quote(&format!("{}({})", t.tool, input)))
                        }
                        ToolState::Completed { .. } => {}
                    }
                }
                _ => {}
            }
        }
    }
    let keep_last = |v: &mut Vec<String>, n: usize| {
        if v.len() > n {
            v.drain(..v.len() - n);
        }
    };
    keep_last(&mut f.commands, MAX_COMMANDS);
    keep_last(&mut f.errors, MAX_ERRORS);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::json;

    #[test]
    fn collects_requests_commands_errors_and_open_calls() {
        let msgs = [
            parse_message(json!({"id": "u", "role": "user", "parts": [{"type": "text", "id": "t", "text": "Fix the bug. Never touch main.rs"}]})).unwrap(),
            parse_message(json!({"id": "a", "role": "assistant", "parts": [
                {"type": "tool", "id": "x", "callID": "c", "tool": "bash", "state": {"status": "error", "input": {"command": "cargo test"}, "error": "exit 101"}},
                {"type": "tool", "id": "y", "callID": "d", "tool": "bash", "state": {"status": "running", "input": {"command": "make"}}},
                {"type": "text", "id": "z", "text": "Tests fail"}
            ]})).unwrap(),
        ];
        let f = facts(&msgs);
        assert_eq!(f.user_messages, ["Fix the bug. Never touch main.rs"]);
        assert_eq!(f.commands, ["cargo test", "make"]);
        assert_eq!(f.errors, ["bash: exit 101"]);
        assert_eq!(f.open_tool_calls, ["bash({\"command\":\"make\"})"]);
        assert_eq!(f.last_assistant_text.as_deref(), Some("Tests fail"));
    }
}
