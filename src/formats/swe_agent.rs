//! SWE-agent `.traj` (`history[]` is the conversation) and mini-swe-agent `.traj.json` (v2:
//! `{messages}`; v1: a bare list of messages). Both are OpenAI-style chat; text actions (SWE-agent's
//! `action` field, mini-swe-agent's fenced command) become tool calls answered by the next user
//! message.

use serde_json::Value;

use super::build::Builder;
use super::content::text_of;
use super::openai_chat::{Chat, TextActions};
use super::Record;

pub fn import_swe_agent(records: &[Record], b: &mut Builder) {
    b.count_each_call();
    for (k, r) in records.iter().enumerate() {
        if k > 0 {
            b.warn(r.line, "a second JSON document after the trajectory; ignored");
            continue;
        }
        let Some(history) = r.value.get("history").and_then(Value::as_array) else {
            b.warn(r.line, "no `history` list in the trajectory");
            continue;
        };
        omit_other_keys(&r.value, "history", b);
        let mut chat = Chat::new(TextActions::Field);
        for m in history {
            chat.message(r.line, m, b);
        }
    }
}

pub fn import_mini(records: &[Record], b: &mut Builder) {
    b.count_each_call();
    for (k, r) in records.iter().enumerate() {
        if k > 0 {
            b.warn(r.line, "a second JSON document after the trajectory; ignored");
            continue;
        }
        let messages = match &r.value {
            Value::Array(items) => items,
            v => match v.get("messages").and_then(Value::as_array) {
                Some(items) => items,
                None => {
                    b.warn(r.line, "no `messages` list in the trajectory");
                    continue;
                }
            },
        };
        omit_other_keys(&r.value, "messages", b);
        let fenced = messages.iter().any(|m| {
            m.get("role").and_then(Value::as_str) == Some("assistant")
                && m.get("tool_calls").is_none()
                && text_of(m.get("content").unwrap_or(&Value::Null)).contains("```")
        });
        let mut chat = Chat::new(if fenced { TextActions::Fenced } else { TextActions::None });
        for m in messages {
            chat.message(r.line, m, b);
        }
    }
}

/// The trajectory's other top-level fields (`info`, `trajectory`, `replay_config`, `environment`...):
/// run metadata and a per-step copy of the conversation, reported in `stats.omitted` by name.
fn omit_other_keys(doc: &Value, conversation: &str, b: &mut Builder) {
    if let Some(obj) = doc.as_object() {
        obj.keys().filter(|k| k.as_str() != conversation).for_each(|k| b.omit(k));
    }
}
