//! Format detection from the first records.

use serde_json::Value;

use super::{Format, Record};

/// How many records detection looks at.
const SCAN: usize = 200;

pub fn detect(records: &[Record]) -> Option<Format> {
    if records.len() == 1 {
        if let Some(f) = document(&records[0].value) {
            return Some(f);
        }
    }
    let mut weak = None;
    for r in records.iter().take(SCAN) {
        match line(&r.value) {
            Some((f, true)) => return Some(f),
            Some((f, false)) => {
                weak.get_or_insert(f);
            }
            None => {}
        }
    }
    weak
}

fn has(v: &Value, key: &str) -> bool {
    v.get(key).is_some_and(|x| !x.is_null())
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A file that is one JSON document.
fn document(v: &Value) -> Option<Format> {
    match v {
        Value::Array(items) => {
            let first = items.iter().find(|i| i.is_object())?;
            if has(first, "source") && (has(first, "action") || has(first, "observation")) {
                return Some(Format::OpenHands);
            }
            if has(first, "kind") && has(first, "source") {
                return Some(Format::OpenHands);
            }
            if items.iter().all(is_gemini_content) {
                return Some(Format::GeminiCli);
            }
            if has(first, "role") && items.iter().any(is_ui_message) {
                return Some(Format::AiSdkUi);
            }
            if has(first, "role") && items.iter().any(is_ai_sdk) {
                return Some(Format::AiSdk);
            }
            if has(first, "role") {
                return Some(if chat_is_mini_swe(items) { Format::MiniSweAgent } else { Format::OpenAiChat });
            }
            None
        }
        Value::Object(_) => {
            if has(v, "history") && has(v, "trajectory") {
                return Some(Format::SweAgent);
            }
            if v.get("history").and_then(Value::as_array).is_some_and(|h| h.iter().all(is_gemini_content)) {
                return Some(Format::GeminiCli);
            }
            let messages = v.get("messages").and_then(Value::as_array);
            if s(v, "trajectory_format").starts_with("mini-swe-agent")
                || (messages.is_some() && v.pointer("/info/mini_version").is_some())
            {
                return Some(Format::MiniSweAgent);
            }
            if let Some(msgs) = messages {
                let first = msgs.first();
                if first.is_some_and(|m| has(m, "info") && has(m, "parts")) {
                    return Some(Format::Opencode);
                }
                if first.is_some_and(|m| has(m, "role")) && msgs.iter().any(is_ui_message) {
                    return Some(Format::AiSdkUi);
                }
                if has(v, "sessionId") || first.is_some_and(|m| has(m, "type") && !has(m, "role")) {
                    return Some(Format::GeminiCli);
                }
                if first.is_some_and(|m| has(m, "role")) && msgs.iter().any(is_ai_sdk) {
                    return Some(Format::AiSdk);
                }
                if msgs.is_empty() || first.is_some_and(|m| has(m, "role")) {
                    return Some(Format::OpenAiChat);
                }
            }
            if has(v, "info") && messages.is_some() {
                return Some(Format::Opencode);
            }
            None
        }
        _ => None,
    }
}

/// A message only the AI SDK writes: `providerOptions`, or a content part typed as AI SDK parts
/// are (`tool-call`, `tool-result`, `reasoning`, approvals, `image` / `file` with `mediaType`).
/// Plain text parts are shared with OpenAI chat and decide nothing.
fn is_ai_sdk(m: &Value) -> bool {
    let part = |p: &Value| {
        has(p, "providerOptions")
            || match s(p, "type") {
                "tool-call" | "tool-result" | "reasoning" | "reasoning-file" | "custom" => true,
                "tool-approval-request" | "tool-approval-response" => true,
                "image" => has(p, "image"),
                "file" => has(p, "mediaType"),
                _ => false,
            }
    };
    has(m, "providerOptions") || m.get("content").and_then(Value::as_array).is_some_and(|c| c.iter().any(part))
}

/// Google's `Content` (a Gemini CLI saved chat): `role` `user` / `model` and `parts` without a
/// `type` (`text`, `functionCall`, `functionResponse`, `inlineData`...), no `content`.
fn is_gemini_content(m: &Value) -> bool {
    matches!(s(m, "role"), "user" | "model" | "function")
        && !has(m, "content")
        && m.get("parts")
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.iter().all(|p| p.is_object() && !has(p, "type")))
}

/// A UIMessage: `role` and an array of typed `parts` (`text`, `tool-<name>`, `step-start`...)
/// instead of `content`. Google's `{ role, parts: [{ text }] }` has untyped parts and is not one.
fn is_ui_message(m: &Value) -> bool {
    matches!(s(m, "role"), "system" | "user" | "assistant")
        && !has(m, "content")
        && m.get("parts").and_then(Value::as_array).is_some_and(|parts| {
            parts.iter().all(|p| p.get("type").is_some_and(Value::is_string)) && (!parts.is_empty() || has(m, "id"))
        })
}

fn chat_is_mini_swe(items: &[Value]) -> bool {
    items.iter().any(|m| s(m, "role") == "exit" || s(m, "content").contains("```mswea_bash_command"))
}

/// One record of a line-oriented format: `(format, decisive)`.
fn line(v: &Value) -> Option<(Format, bool)> {
    if !v.is_object() {
        return None;
    }
    let ty = s(v, "type");
    // Gemini CLI's JSONL session: its metadata line, rewinds and metadata updates.
    if (has(v, "sessionId") && has(v, "projectHash") && !has(v, "type")) || has(v, "$rewindTo") || has(v, "$set") {
        return Some((Format::GeminiCli, true));
    }
    if s(v, "_type") == "hive-mind-meta" {
        return Some((Format::ClaudeCode, true));
    }
    match ty {
        "session" if has(v, "cwd") || has(v, "version") || has(v, "id") => return Some((Format::Pi, true)),
        "message" if v.get("message").is_some_and(|m| has(m, "role")) => return Some((Format::Pi, true)),
        "user" | "assistant" if has(v, "message") || has(v, "uuid") => return Some((Format::ClaudeCode, true)),
        "summary" if has(v, "leafUuid") => return Some((Format::ClaudeCode, true)),
        "file-history-snapshot" | "queue-operation" => return Some((Format::ClaudeCode, true)),
        "progress" | "system" if has(v, "uuid") || has(v, "sessionId") => return Some((Format::ClaudeCode, true)),
        "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted" if has(v, "payload") => {
            return Some((Format::Codex, true))
        }
        _ => {}
    }
    if ty.contains('.') && v.get("data").is_some_and(Value::is_object) {
        let known = ["session.", "user.", "assistant.", "tool.", "system.", "hook."];
        if known.iter().any(|p| ty.starts_with(p)) {
            return Some((Format::CopilotCli, true));
        }
    }
    if is_ui_message(v) {
        return Some((Format::AiSdkUi, true));
    }
    let role = s(v, "role");
    if role == "_checkpoint" || role == "_usage" || role == "_system_prompt" {
        return Some((Format::KimiCli, true));
    }
    if !role.is_empty() && is_ai_sdk(v) {
        return Some((Format::AiSdk, true));
    }
    if !role.is_empty() {
        return Some((Format::OpenAiChat, false));
    }
    if v.get("messages").is_some_and(Value::is_array) {
        return Some((Format::OpenAiChat, false));
    }
    None
}
