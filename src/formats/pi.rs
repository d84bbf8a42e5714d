//! pi coding-agent session JSONL. v1: a header then a linear list of entries; v2/v3: entries with
//! `id`/`parentId` forming a tree whose leaf is the last entry. A `compaction` entry becomes our
//! compaction whose kept tail starts at the first kept entry, so the context reads as pi's does:
//! summary, kept entries, everything after.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::build::{count, error, model_ref, Builder, Outcome};
use super::content::{data_url, str_field, text_of, time_of};
use super::Record;
use crate::message::{Message, Role, Usage};

pub fn import(records: &[Record], b: &mut Builder) {
    let header = records.first().filter(|r| str_field(&r.value, "type") == Some("session"));
    if header.is_none() {
        b.warn(records.first().map_or(0, |r| r.line), "no session header on the first line");
    }
    let version = header.and_then(|h| h.value.get("version")).and_then(Value::as_u64).unwrap_or(1);
    let provider = header.and_then(|h| str_field(&h.value, "provider"));
    let start = usize::from(header.is_some());
    // The entries in file order; v1 compaction indices count the header as entry 0.
    let entries: Vec<(usize, &Record)> = records.iter().enumerate().skip(start).collect();
    for (_, r) in &entries {
        if is_message(&r.value) {
            b.record();
        }
        if let Some(blocks) = r.value.pointer("/message/content").and_then(Value::as_array) {
            for blk in blocks {
                if str_field(blk, "type") == Some("toolCall") {
                    if let Some(id) = str_field(blk, "id") {
                        b.note_call(id);
                    }
                }
            }
        }
    }
    let path = if version >= 2 || entries.iter().any(|(_, r)| r.value.get("parentId").is_some()) {
        tree_path(&entries, b)
    } else {
        entries.clone()
    };
    let on_path = path.iter().filter(|(_, r)| is_message(&r.value)).count();
    let total = entries.iter().filter(|(_, r)| is_message(&r.value)).count();
    b.off_branch(total - on_path);

    // For each entry on the path: the index of the first message produced at or after it.
    let mut first_message_at: HashMap<usize, usize> = HashMap::new();
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    let mut model = provider.map(|p| p.to_string());
    for &(index, r) in &path {
        first_message_at.insert(index, b.messages.len());
        if let Some(id) = str_field(&r.value, "id") {
            by_id.insert(id, index);
        }
        let v = &r.value;
        match str_field(v, "type") {
            Some("message") => message(r, b, model.as_deref()),
            Some("model_change") => model = str_field(v, "provider").map(str::to_string),
            Some("custom_message") => {
                let mut m = b.message(str_field(v, "id"), Role::User, time_of(v.get("timestamp")));
                content(&mut m, v.get("content"));
                b.push(m, false);
            }
            Some("branch_summary") => {
                let summary = str_field(v, "summary").unwrap_or("");
                if !summary.is_empty() {
                    let mut m = b.message(str_field(v, "id"), Role::User, time_of(v.get("timestamp")));
                    Builder::text(
                        &mut m,
                        format!("The following is a summary of a branch that this conversation came back from:\n\n<summary>\n{summary}\n</summary>"),
                        true,
                    );
                    b.push(m, false);
                }
            }
            Some("compaction") => {
                let kept_index =
                    match (str_field(v, "firstKeptEntryId"), v.get("firstKeptEntryIndex").and_then(Value::as_u64)) {
                        (Some(id), _) => by_id.get(id).copied(),
                        (None, Some(i)) => Some(i as usize),
                        _ => None,
                    };
                let tail = kept_index
                    .and_then(|i| first_message_at.get(&i).copied())
                    .filter(|&mi| mi < b.messages.len())
                    .map(|mi| b.messages[mi].id.clone());
                if kept_index.is_some() && tail.is_none() && kept_index != Some(index) {
                    b.warn(r.line, "the compaction's first kept entry is not on the active branch; no tail is kept");
                }
                let mut extra = Map::new();
                for key in ["tokensBefore", "details"] {
                    if let Some(x) = v.get(key).filter(|x| !x.is_null()) {
                        extra.insert(key.into(), x.clone());
                    }
                }
                let auto = v.get("fromHook").and_then(Value::as_bool) != Some(true);
                b.compaction(
                    auto,
                    str_field(v, "summary").unwrap_or("").to_string(),
                    tail,
                    None,
                    time_of(v.get("timestamp")),
                    None,
                    false,
                    extra,
                );
            }
            other => b.omit(other.unwrap_or("")),
        }
    }
}

fn is_message(v: &Value) -> bool {
    str_field(v, "type") == Some("message")
        && matches!(
            v.pointer("/message/role").and_then(Value::as_str),
            Some("user" | "assistant" | "toolResult" | "bashExecution" | "custom" | "hookMessage")
        )
}

/// v2/v3: the chain from the last entry (with an id) up to the root, in order.
fn tree_path<'a>(entries: &[(usize, &'a Record)], b: &mut Builder) -> Vec<(usize, &'a Record)> {
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (k, (_, r)) in entries.iter().enumerate() {
        if let Some(id) = str_field(&r.value, "id") {
            by_id.insert(id, k);
        }
    }
    let Some(leaf) = entries.iter().rposition(|(_, r)| str_field(&r.value, "id").is_some()) else {
        return entries.to_vec();
    };
    let mut seen = vec![false; entries.len()];
    let mut path = Vec::new();
    let mut cur = Some(leaf);
    while let Some(k) = cur {
        if seen[k] {
            b.warn(entries[k].1.line, "the parentId chain loops back here; stopped following it");
            break;
        }
        seen[k] = true;
        path.push(entries[k]);
        cur = match str_field(&entries[k].1.value, "parentId") {
            None => None,
            Some(p) => {
                let next = by_id.get(p).copied();
                if next.is_none() {
                    b.warn(entries[k].1.line, format!("parent {p:?} is not in the file"));
                }
                next
            }
        };
    }
    path.reverse();
    path
}

/// User-side content: a string or `[text | image{data, mimeType}]`.
fn content(m: &mut Message, c: Option<&Value>) {
    match c {
        Some(Value::String(s)) => Builder::text(m, s.clone(), false),
        Some(Value::Array(items)) => {
            for it in items {
                match str_field(it, "type") {
                    Some("image") => {
                        let mime = str_field(it, "mimeType").unwrap_or("image/png");
                        let url = str_field(it, "data")
                            .filter(|d| !d.is_empty())
                            .map(|d| data_url(mime, d))
                            .unwrap_or_default();
                        Builder::file(m, mime, url, None);
                    }
                    _ => Builder::text(m, super::content::block_text(it).unwrap_or(""), false),
                }
            }
        }
        _ => {}
    }
}

fn message(r: &Record, b: &mut Builder, provider: Option<&str>) {
    let v = &r.value;
    let msg = v.get("message").unwrap_or(&Value::Null);
    let time = time_of(msg.get("timestamp")).or_else(|| time_of(v.get("timestamp")));
    let id = str_field(v, "id");
    match str_field(msg, "role") {
        Some("user") | Some("custom") | Some("hookMessage") => {
            let mut m = b.message(id, Role::User, time);
            content(&mut m, msg.get("content"));
            b.push(m, true);
        }
        Some("bashExecution") => {
            let mut m = b.message(id, Role::User, time);
            let mut text = format!(
                "Ran `{}`\n```\n{}\n```",
                str_field(msg, "command").unwrap_or(""),
                str_field(msg, "output").unwrap_or("").trim_end()
            );
            if msg.get("cancelled").and_then(Value::as_bool) == Some(true) {
                text.push_str("\n\n(command cancelled)");
            } else if let Some(code) = msg.get("exitCode").and_then(Value::as_i64) {
                if code != 0 {
                    text.push_str(&format!("\n\nCommand exited with code {code}"));
                }
            }
            if msg.get("truncated").and_then(Value::as_bool) == Some(true) {
                text.push_str("\n\n[Output truncated]");
            }
            Builder::text(&mut m, text, false);
            b.push(m, true);
        }
        Some("assistant") => {
            let m = b.message(id, Role::Assistant, time);
            let mi = b.push(m, true);
            for blk in msg.get("content").and_then(Value::as_array).into_iter().flatten() {
                match str_field(blk, "type") {
                    Some("text") => Builder::text(&mut b.messages[mi], str_field(blk, "text").unwrap_or(""), false),
                    Some("thinking") => {
                        let mut extra = Map::new();
                        if let Some(sig) = blk.get("thinkingSignature").filter(|s| !s.is_null()) {
                            extra.insert("signature".into(), sig.clone());
                        }
                        Builder::reasoning(&mut b.messages[mi], str_field(blk, "thinking").unwrap_or(""), extra);
                    }
                    Some("toolCall") => {
                        let input = blk.get("arguments").cloned().unwrap_or(Value::Object(Map::new()));
                        b.tool_call(
                            mi,
                            str_field(blk, "id").unwrap_or(""),
                            str_field(blk, "name").unwrap_or(""),
                            input,
                        );
                    }
                    Some("image") => {
                        let mime = str_field(blk, "mimeType").unwrap_or("image/png");
                        let url = data_url(mime, str_field(blk, "data").unwrap_or(""));
                        Builder::file(&mut b.messages[mi], mime, url, None);
                    }
                    _ => {}
                }
            }
            let m = &mut b.messages[mi];
            if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
                let (cr, cw, total) = (count(u, "cacheRead"), count(u, "cacheWrite"), count(u, "totalTokens"));
                m.tokens = Some(Usage {
                    input: count(u, "input"),
                    output: count(u, "output"),
                    reasoning: None,
                    cache_read: (cr > 0).then_some(cr),
                    cache_write: (cw > 0).then_some(cw),
                    total: (total > 0).then_some(total),
                });
            }
            let provider = str_field(msg, "provider").or(provider).unwrap_or("");
            if let Some(model) = str_field(msg, "model") {
                m.model = model_ref(provider, model);
            }
            match str_field(msg, "stopReason") {
                Some("stop") => m.finish = Some("stop".into()),
                Some("toolUse") => m.finish = Some("tool-calls".into()),
                Some("length") => m.finish = Some("length".into()),
                Some("aborted") => {
                    m.error = Some(error("MessageAbortedError", str_field(msg, "errorMessage").unwrap_or("aborted")))
                }
                Some("error") => m.error = Some(error("APIError", str_field(msg, "errorMessage").unwrap_or("error"))),
                Some(other) => m.finish = Some(other.to_string()),
                None => {}
            }
        }
        Some("toolResult") => {
            let mut texts = Vec::new();
            let mut attachments = Vec::new();
            match msg.get("content") {
                Some(Value::String(s)) => texts.push(s.clone()),
                Some(Value::Array(items)) => {
                    for it in items {
                        if str_field(it, "type") == Some("image") {
                            let mime = str_field(it, "mimeType").unwrap_or("image/png");
                            match str_field(it, "data").filter(|d| !d.is_empty()) {
                                Some(d) => attachments.push((mime.to_string(), data_url(mime, d))),
                                None => texts.push(super::content::stripped_image(mime)),
                            }
                        } else if let Some(t) = super::content::block_text(it) {
                            texts.push(t.to_string());
                        }
                    }
                }
                _ => {}
            }
            let output = texts.join("\n");
            let outcome = if msg.get("isError").and_then(Value::as_bool) == Some(true) {
                Outcome::Err(output)
            } else {
                Outcome::Ok { output, attachments }
            };
            b.merged();
            b.result(r.line, str_field(msg, "toolCallId").unwrap_or(""), str_field(msg, "toolName"), outcome);
        }
        _ => {
            if !text_of(msg.get("content").unwrap_or(&Value::Null)).is_empty() {
                b.warn(r.line, format!("unknown message role {:?}; ignored", str_field(msg, "role")));
            }
        }
    }
}
