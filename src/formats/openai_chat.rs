//! OpenAI-style chat messages, shared by several formats: native `tool_calls` with `role: tool`
//! results (OpenAI chat, Kimi CLI, mini-swe-agent, SWE-agent function calling), and text actions
//! written in the assistant's text (a fenced command, `<function=...>` XML, SWE-agent's `action`)
//! whose observation is the next user message. A text action becomes a tool call (the assistant's
//! text is kept as written) and its observation the call's result.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::build::{chat_response, Builder, Outcome};
use super::content::{block_text, data_url_mime, image_mime, parse_args, str_field, text_of, time_of, TEXT_BLOCKS};
use super::Record;
use crate::message::{Message, Role, Usage};

/// How actions are written when a message has no native `tool_calls`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TextActions {
    None,
    /// Exactly one fenced ```` ```mswea_bash_command ```` (or ```` ```bash ````) block.
    Fenced,
    /// `<function=NAME><parameter=KEY>VALUE</parameter></function>`.
    Xml,
    /// SWE-agent: the message's own `action` field.
    Field,
}

pub struct Chat {
    pub actions: TextActions,
    /// A call made in text, waiting for the next user message.
    waiting: Option<String>,
    /// Content types of no kind chat messages have, already reported.
    unknown: HashSet<String>,
    /// Kimi CLI's context size (`_usage`) recorded since the last message: the next answer's input.
    usage_before: Option<u64>,
    /// The answer just read, and the context size before it.
    answer: Option<(usize, Option<u64>)>,
}

impl Chat {
    pub fn new(actions: TextActions) -> Chat {
        Chat { actions, waiting: None, unknown: HashSet::new(), usage_before: None, answer: None }
    }

    /// Kimi CLI's records that are not messages: `_system_prompt` (the system message),
    /// `_usage` (the context size after each step: the answer before it reports its usage with
    /// it), `_checkpoint`.
    fn kimi_record(&mut self, line: usize, role: &str, v: &Value, b: &mut Builder) {
        match role {
            "_system_prompt" => {
                b.record();
                let mut m = b.message(None, Role::System, None);
                Builder::text(&mut m, text_of(v.get("content").unwrap_or(&Value::Null)), false);
                b.push_nonempty(m);
            }
            "_usage" => {
                let Some(n) = v.get("token_count").and_then(Value::as_u64) else {
                    b.warn(line, "a `_usage` record without a token count; ignored");
                    return;
                };
                match self.answer.take() {
                    Some((mi, before)) => {
                        let input = before.filter(|&i| i <= n).unwrap_or(n);
                        b.messages[mi].tokens =
                            Some(Usage { input, output: n - input, total: Some(n), ..Usage::default() });
                    }
                    None => self.usage_before = Some(n),
                }
            }
            other => b.omit(other),
        }
    }

    /// Reads one message, or one of Kimi CLI's other records.
    pub fn message(&mut self, line: usize, v: &Value, b: &mut Builder) {
        let Some(role) = str_field(v, "role") else {
            b.warn(line, "a message without `role`; ignored");
            return;
        };
        if role.starts_with('_') {
            self.kimi_record(line, role, v, b);
            return;
        }
        let before = self.usage_before.take();
        self.answer = None;
        b.record();
        let time = time_of(v.get("timestamp")).or_else(|| time_of(v.pointer("/extra/timestamp")));
        let waiting = self.waiting.take();
        let content = v.get("content").unwrap_or(&Value::Null);
        match role {
            "system" | "developer" => {
                let mut m = b.message(str_field(v, "id"), Role::System, time);
                self.content(line, &mut m, content, b);
                b.push_nonempty(m);
            }
            "user" => {
                let demo = v.get("is_demo").and_then(Value::as_bool) == Some(true);
                match waiting {
                    Some(call) if !demo => {
                        b.merged();
                        let outcome = self.result(line, content, b);
                        b.result(line, &call, None, outcome);
                    }
                    _ => {
                        let mut m = b.message(None, Role::User, time);
                        self.content(line, &mut m, content, b);
                        b.push_nonempty(m);
                    }
                }
            }
            "assistant" => {
                let mi = self.assistant(line, v, time, b);
                self.answer = Some((mi, before));
            }
            "tool" | "function" => {
                b.merged();
                let ids: Vec<&str> = match v.get("tool_call_ids").and_then(Value::as_array) {
                    Some(ids) => ids.iter().filter_map(Value::as_str).collect(),
                    None => str_field(v, "tool_call_id").or_else(|| str_field(v, "name")).into_iter().collect(),
                };
                if ids.is_empty() {
                    b.warn(line, "a tool message without tool_call_id; ignored");
                }
                for id in ids {
                    let outcome = self.result(line, content, b);
                    b.result(line, id, str_field(v, "name"), outcome);
                }
            }
            "exit" => b.skip("exit"),
            other => {
                b.skip(other);
                b.warn(line, format!("message with unknown role {other:?}; ignored"));
            }
        }
    }

    /// Reads an assistant message; returns its index.
    fn assistant(&mut self, line: usize, v: &Value, time: Option<f64>, b: &mut Builder) -> usize {
        let mut m = b.message(None, Role::Assistant, time);
        for key in ["reasoning_content", "reasoning"] {
            if let Some(r) = str_field(v, key) {
                Builder::reasoning(&mut m, r, Map::new());
            }
        }
        let content = v.get("content").unwrap_or(&Value::Null);
        self.content(line, &mut m, content, b);
        if let Some(resp) = v.pointer("/extra/response").filter(|r| r.is_object()) {
            chat_response(&mut m, resp);
        }
        let mi = b.push(m, true);
        let mut native = false;
        for call in v.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            native = true;
            let f = call.get("function").unwrap_or(&Value::Null);
            let id = str_field(call, "id").unwrap_or("");
            b.tool_call(mi, id, str_field(f, "name").unwrap_or(""), parse_args(f.get("arguments")));
        }
        if let Some(f) = v.get("function_call").filter(|f| f.is_object()) {
            native = true;
            let name = str_field(f, "name").unwrap_or("");
            b.tool_call(mi, name, name, parse_args(f.get("arguments")));
        }
        if native {
            return mi;
        }
        let text = text_of(content);
        let action = match self.actions {
            TextActions::None => None,
            TextActions::Fenced => fenced(&text).map(|c| ("bash".to_string(), command(c))),
            TextActions::Xml => xml(&text, b, line),
            TextActions::Field => str_field(v, "action")
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(|a| ("bash".to_string(), command(a))),
        };
        if let Some((tool, input)) = action {
            let id = format!("{}-action", b.messages[mi].id);
            b.tool_call(mi, &id, &tool, input);
            self.waiting = Some(id);
        }
        mi
    }
}

impl Chat {
    /// A message's content: text, images (as files) and Kimi's `think` items; items of other kinds
    /// are kept as they came (not sent), reported once per kind.
    fn content(&mut self, line: usize, m: &mut Message, content: &Value, b: &mut Builder) {
        let Value::Array(items) = content else {
            if content.is_object() && !is_known(content) {
                self.report(line, content, "kept as it came", b);
                Builder::other(m, content);
            } else {
                Builder::text(m, text_of(content), false);
            }
            return;
        };
        for it in items {
            if let Some(url) = image_url(it) {
                let mime = data_url_mime(&url).map(str::to_string).unwrap_or_else(|| image_mime(&url));
                Builder::file(m, &mime, url, None);
            } else if str_field(it, "type") == Some("think") {
                Builder::reasoning(m, str_field(it, "think").unwrap_or(""), Map::new());
            } else if is_known(it) {
                Builder::text(m, block_text(it).unwrap_or(""), false);
            } else {
                self.report(line, it, "kept as it came", b);
                Builder::other(m, it);
            }
        }
    }

    /// A tool result or observation: text, images as attachments; an item of another kind reads
    /// as its JSON (a result is text to the model).
    fn result(&mut self, line: usize, content: &Value, b: &mut Builder) -> Outcome {
        let items = match content {
            Value::Array(items) => items.as_slice(),
            other => std::slice::from_ref(other),
        };
        let mut texts = Vec::new();
        let mut attachments = Vec::new();
        for it in items {
            if let Some(url) = image_url(it) {
                attachments.push((image_mime(&url), url));
            } else if is_known(it) {
                texts.extend(block_text(it).map(str::to_string));
            } else if !it.is_null() {
                self.report(line, it, "read as its JSON", b);
                texts.push(it.to_string());
            }
        }
        Outcome::Ok { output: texts.join("\n"), attachments }
    }

    fn report(&mut self, line: usize, it: &Value, what: &str, b: &mut Builder) {
        let ty = str_field(it, "type").unwrap_or("");
        if self.unknown.insert(ty.to_string()) {
            let kind = if ty.is_empty() { "content without a type".into() } else { format!("content of type {ty:?}") };
            b.warn(line, format!("{kind}, which chat messages do not have: {what}"));
        }
    }
}

/// A string, or a text-like block (one without `type` when it has a `text`).
fn is_known(it: &Value) -> bool {
    match it {
        Value::String(_) => true,
        Value::Object(o) => match o.get("type") {
            Some(ty) => ty.as_str().is_some_and(|ty| TEXT_BLOCKS.contains(&ty)),
            None => o.get("text").is_some_and(Value::is_string),
        },
        _ => false,
    }
}

fn command(c: &str) -> Value {
    let mut o = Map::new();
    o.insert("command".into(), Value::String(c.to_string()));
    Value::Object(o)
}

/// The command of the only fenced `mswea_bash_command` / `bash` block, if there is exactly one.
fn fenced(text: &str) -> Option<&str> {
    let mut found = None;
    let mut count = 0;
    for tag in ["```mswea_bash_command", "```bash"] {
        let mut rest = text;
        while let Some(i) = rest.find(tag) {
            let after = &rest[i + tag.len()..];
            let Some(body) = after.strip_prefix('\n').or_else(|| after.strip_prefix("\r\n")) else {
                rest = after;
                continue;
            };
            let end = body.find("```").unwrap_or(body.len());
            count += 1;
            found.get_or_insert(body[..end].trim_end());
            rest = &body[end.min(body.len())..];
            rest = rest.strip_prefix("```").unwrap_or(rest);
        }
        if count > 0 {
            break;
        }
    }
    (count == 1).then_some(found?)
}

/// `<function=NAME><parameter=K>V</parameter>...</function>` (the first one).
fn xml(text: &str, b: &mut Builder, line: usize) -> Option<(String, Value)> {
    let start = text.find("<function=")?;
    let rest = &text[start + "<function=".len()..];
    let name_end = rest.find('>')?;
    let name = rest[..name_end].trim().to_string();
    let body = &rest[name_end + 1..];
    let end = body.find("</function>").unwrap_or(body.len());
    if body[end..].contains("<function=") {
        b.warn(line, "several <function=...> calls in one message; only the first is read");
    }
    let mut params = Map::new();
    let mut p = &body[..end];
    while let Some(i) = p.find("<parameter=") {
        let after = &p[i + "<parameter=".len()..];
        let Some(k_end) = after.find('>') else { break };
        let key = after[..k_end].trim().to_string();
        let val_start = &after[k_end + 1..];
        let v_end = val_start.find("</parameter>").unwrap_or(val_start.len());
        let mut value = &val_start[..v_end];
        value = value.strip_prefix('\n').unwrap_or(value);
        value = value.strip_suffix('\n').unwrap_or(value);
        params.insert(key, Value::String(value.to_string()));
        p = &val_start[v_end..];
    }
    Some((name, Value::Object(params)))
}

fn image_url(it: &Value) -> Option<String> {
    match str_field(it, "type") {
        Some("image_url") => {
            it.pointer("/image_url/url").or_else(|| it.get("image_url")).and_then(Value::as_str).map(str::to_string)
        }
        Some("input_image") => str_field(it, "image_url").map(str::to_string),
        _ => None,
    }
}

/// OpenAI chat files: one message per line (Kimi CLI), `{messages}` per line (one conversation
/// each, imported one after the other), or one document.
pub fn import(records: &[Record], b: &mut Builder) {
    let xml = records.iter().any(|r| uses_xml(&r.value));
    let actions = if xml { TextActions::Xml } else { TextActions::None };
    b.count_each_call();
    let mut chat = Chat::new(actions);
    let mut conversations = 0;
    for r in records {
        match &r.value {
            Value::Array(items) => {
                for it in items {
                    chat.message(r.line, it, b);
                }
            }
            v if v.get("messages").is_some_and(Value::is_array) => {
                conversations += 1;
                if conversations > 1 {
                    b.warn(
                        r.line,
                        format!(
                            "another conversation starts here{}; it is imported after the previous one",
                            str_field(v, "instance_id").map(|i| format!(" ({i})")).unwrap_or_default()
                        ),
                    );
                }
                chat.waiting = None;
                // Fine-tuning records carry the tool definitions the model was given.
                if let Some(tools) = v.get("tools").filter(|t| t.as_array().is_some_and(|a| !a.is_empty())) {
                    b.overhead.tools = Some(tools.clone());
                }
                for it in v["messages"].as_array().into_iter().flatten() {
                    chat.message(r.line, it, b);
                }
            }
            v if v.get("role").is_some() => chat.message(r.line, v, b),
            _ => b.warn(r.line, "not a chat message; ignored"),
        }
    }
}

/// Whether a record holds assistant text with `<function=...>` calls.
fn uses_xml(v: &Value) -> bool {
    let check = |m: &Value| {
        str_field(m, "role") == Some("assistant")
            && m.get("tool_calls").is_none()
            && text_of(m.get("content").unwrap_or(&Value::Null)).contains("<function=")
    };
    match v {
        Value::Array(items) => items.iter().any(check),
        v => match v.get("messages").and_then(Value::as_array) {
            Some(items) => items.iter().any(check),
            None => check(v),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_actions() {
        assert_eq!(fenced("think\n\n```mswea_bash_command\nls -la\n```\n"), Some("ls -la"));
        assert_eq!(fenced("```bash\na\n```\n```bash\nb\n```"), None);
        assert_eq!(fenced("no block"), None);
        let mut b = Builder::new(super::super::Format::OpenAiChat, Vec::new());
        let (name, input) = xml(
            "Let me look.\n\n<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/a.py</parameter>\n</function>",
            &mut b,
            1,
        )
        .unwrap();
        assert_eq!(name, "str_replace_editor");
        assert_eq!(input, serde_json::json!({"command": "view", "path": "/a.py"}));
    }
}
