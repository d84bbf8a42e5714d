//! Claude Code session JSONL (`~/.claude/projects/<slug>/<session>.jsonl`, Entire checkpoints, the
//! hive-mind extracted variant).
//!
//! The lines form a tree (`uuid` / `parentUuid`): the active branch is the chain from the newest
//! message back to the root, jumping over compactions through `logicalParentUuid`. Parallel tool
//! results and the later lines of a split response hang off the chain as siblings and are taken
//! along. Lines sharing `message.id` are one API response and become one message. A
//! `compact_boundary` followed by its `isCompactSummary` line becomes our compaction (everything
//! before it hidden, as Claude Code does).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::build::{count, error, model_ref, Builder, Outcome};
use super::content::{data_url, str_field, stripped_image, time_of};
use super::Record;
use crate::error::{CfError, Result};
use crate::message::{Message, Role, Usage};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Assistant,
    Boundary,
    /// `microcompact_boundary`: Claude Code cleared the results of the tool calls it names.
    Microcompact,
    /// Context Claude Code attached for the model (skill listings, hook output, reminders).
    Attachment,
    Other,
}

struct Entry<'a> {
    line: usize,
    v: &'a Value,
    kind: Kind,
    uuid: Option<&'a str>,
    parent: Option<&'a str>,
    logical: Option<&'a str>,
    sidechain: bool,
    msg_id: Option<&'a str>,
}

impl<'a> Entry<'a> {
    fn is_message(&self) -> bool {
        matches!(self.kind, Kind::User | Kind::Assistant)
    }

    /// A conversation record: a message, or an attachment the model read.
    fn is_record(&self) -> bool {
        self.is_message() || self.kind == Kind::Attachment
    }

    fn content(&self) -> Option<&'a Value> {
        self.v.pointer("/message/content")
    }

    /// A user line that only carries tool results.
    fn only_results(&self) -> bool {
        self.kind == Kind::User
            && self
                .content()
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty() && c.iter().all(|b| str_field(b, "type") == Some("tool_result")))
    }
}

pub fn import(records: &[Record], b: &mut Builder, aborted: &dyn Fn() -> bool) -> Result<()> {
    let mut entries = Vec::new();
    for r in records {
        let v = &r.value;
        if !v.is_object() {
            b.warn(r.line, "expected a JSON object; line ignored");
            continue;
        }
        let kind = match str_field(v, "type") {
            Some("user") => Kind::User,
            Some("assistant") => Kind::Assistant,
            Some("system") if str_field(v, "subtype") == Some("compact_boundary") => Kind::Boundary,
            Some("system") if str_field(v, "subtype") == Some("microcompact_boundary") => Kind::Microcompact,
            Some("attachment") => Kind::Attachment,
            other => {
                match str_field(v, "subtype") {
                    Some(sub) => b.omit(&format!("{}:{sub}", other.unwrap_or(""))),
                    None => b.omit(other.unwrap_or("")),
                }
                Kind::Other
            }
        };
        if kind == Kind::Attachment {
            b.record();
        }
        if matches!(kind, Kind::User | Kind::Assistant) {
            b.record();
            if let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) {
                for blk in blocks {
                    if str_field(blk, "type") == Some("tool_use") {
                        if let Some(id) = str_field(blk, "id") {
                            b.note_call(id);
                        }
                    }
                }
            }
            if !v.get("message").is_some_and(Value::is_object) {
                b.warn(r.line, "a user/assistant line without `message`");
            }
        }
        entries.push(Entry {
            line: r.line,
            v,
            kind,
            uuid: str_field(v, "uuid"),
            parent: str_field(v, "parentUuid"),
            logical: str_field(v, "logicalParentUuid"),
            sidechain: v.get("isSidechain").and_then(Value::as_bool) == Some(true),
            msg_id: v.pointer("/message/id").and_then(Value::as_str),
        });
    }
    if aborted() {
        return Err(CfError::aborted());
    }
    let selected = active_branch(&entries, b);
    let total = entries.iter().filter(|e| e.is_record()).count();
    let kept = entries.iter().zip(&selected).filter(|(e, &s)| s && e.is_record()).count();
    b.off_branch(total - kept);

    let mut boundary: Option<(bool, Option<f64>, Map<String, Value>)> = None;
    // The source `message.id` of the last assistant message, for merging split responses.
    let mut last_source: Option<(usize, &str)> = None;
    for (e, _) in entries.iter().zip(&selected).filter(|(_, &s)| s) {
        let time = time_of(e.v.get("timestamp"));
        match e.kind {
            Kind::Boundary => {
                if boundary.is_some() {
                    b.warn(e.line, "a compact_boundary without its summary line was ignored");
                }
                let meta = e.v.get("compactMetadata");
                let auto = meta.and_then(|m| str_field(m, "trigger")) != Some("manual");
                let mut extra = Map::new();
                if let Some(pre) = meta.and_then(|m| m.get("preTokens")) {
                    extra.insert("tokensBefore".into(), pre.clone());
                }
                boundary = Some((auto, time, extra));
            }
            Kind::User => {
                let summary_line = e.v.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
                    || (boundary.is_some()
                        && super::content::text_of(e.content().unwrap_or(&Value::Null))
                            .starts_with("This session is being continued"));
                if summary_line {
                    let (auto, _, extra) = boundary.take().unwrap_or((true, time, Map::new()));
                    let text = super::content::text_of(e.content().unwrap_or(&Value::Null));
                    b.compaction(auto, text, None, None, time, e.uuid, true, extra);
                    last_source = None;
                    continue;
                }
                if boundary.take().is_some() {
                    b.warn(e.line, "a compact_boundary without its summary line was ignored");
                }
                user(e, time, b);
            }
            Kind::Assistant => {
                if boundary.take().is_some() {
                    b.warn(e.line, "a compact_boundary without its summary line was ignored");
                }
                let mi = match (e.msg_id, last_source, b.last_assistant()) {
                    (Some(id), Some((mi, prev)), Some(last)) if id == prev && mi == last => {
                        b.merged();
                        mi
                    }
                    _ => {
                        let m = b.message(e.uuid, Role::Assistant, time);
                        b.push(m, true)
                    }
                };
                if let Some(id) = e.msg_id {
                    last_source = Some((mi, id));
                }
                assistant(e, mi, b);
            }
            Kind::Microcompact => {
                microcompact(e, time.unwrap_or(0.0), b);
                b.omit("system:microcompact_boundary");
            }
            Kind::Attachment => attachment(e, time, b),
            Kind::Other => {}
        }
    }
    if boundary.is_some() {
        b.warn(0, "the last compact_boundary has no summary line; it was ignored");
    }
    Ok(())
}

/// What Claude Code counts an image as when it clears one (`tokensSaved` per image).
const CLEARED_IMAGE_TOKENS: u64 = 2_000;

/// A `microcompact_boundary`: what Claude Code cleared reads as cleared for the model from here
/// on. It names the tool results it cleared; a boundary naming none cleared images, which it
/// counts at 2,000 tokens each in `tokensSaved`. What cannot be matched is reported.
fn microcompact(e: &Entry, at: f64, b: &mut Builder) {
    let meta = e.v.get("microcompactMetadata").unwrap_or(&Value::Null);
    let list = |key: &str| -> Vec<&str> {
        meta.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect()
    };
    let ids = list("compactedToolIds");
    if !ids.is_empty() {
        let found = b.clear_results(&ids, at);
        if found < ids.len() {
            b.warn(e.line, format!("microcompact_boundary names {} tool results; {found} found", ids.len()));
        }
    } else {
        let saved = meta.get("tokensSaved").and_then(Value::as_u64).unwrap_or(0);
        if saved % CLEARED_IMAGE_TOKENS != 0 {
            b.warn(
                e.line,
                format!(
                    "microcompact_boundary names no tool result and saved {saved} tokens, not a whole number of images; nothing cleared"
                ),
            );
        } else if saved > 0 {
            let images = (saved / CLEARED_IMAGE_TOKENS) as usize;
            let (cleared, held) = b.clear_media(images, at);
            if held != images {
                b.warn(
                    e.line,
                    format!(
                        "microcompact_boundary cleared {images} images (tokensSaved {saved}); the context holds {held}: the oldest {cleared} cleared"
                    ),
                );
            }
        }
    }
    let attachments = list("clearedAttachmentUUIDs");
    if !attachments.is_empty() {
        b.warn(
            e.line,
            format!("microcompact_boundary clears {} attachments; they stay in the context", attachments.len()),
        );
    }
}

/// Marks the entries of the active branch.
fn active_branch(entries: &[Entry], b: &mut Builder) -> Vec<bool> {
    let mut selected = vec![false; entries.len()];
    let threaded = entries.iter().any(|e| e.is_message() && e.uuid.is_some());
    if !threaded {
        selected.iter_mut().for_each(|s| *s = true);
        return selected;
    }
    let mut by_uuid: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if let Some(u) = e.uuid {
            by_uuid.entry(u).or_insert(i);
        }
        if let Some(p) = e.parent {
            children.entry(p).or_default().push(i);
        }
    }
    let main_exists = entries.iter().any(|e| e.is_message() && !e.sidechain);
    let Some(leaf) = entries.iter().rposition(|e| e.is_message() && e.uuid.is_some() && (!main_exists || !e.sidechain))
    else {
        return selected;
    };
    let side = entries[leaf].sidechain;
    let mut cur = Some(leaf);
    while let Some(i) = cur {
        if selected[i] {
            b.warn(entries[i].line, "the parentUuid chain loops back here; stopped following it");
            break;
        }
        selected[i] = true;
        let e = &entries[i];
        let next = e.parent.or(e.logical);
        cur = match next {
            None => None,
            Some(u) => match by_uuid.get(u) {
                Some(&j) => Some(j),
                None => {
                    // The parent was never written (or was trimmed): continue from the newest
                    // message before this line on the same side.
                    let fallback =
                        entries[..i].iter().rposition(|p| p.is_message() && p.uuid.is_some() && p.sidechain == side);
                    if fallback.is_some() {
                        b.warn(
                            e.line,
                            format!(
                                "parent {u:?} is not in the file; continuing from the newest message before this line"
                            ),
                        );
                    }
                    fallback
                }
            },
        };
    }
    // Siblings that belong to the branch: results of parallel tool calls, later lines of a split
    // response.
    let mut added: Vec<usize> = (0..entries.len()).filter(|&i| selected[i]).collect();
    let mut warned = vec![false; entries.len()];
    while !added.is_empty() {
        take_along(entries, &children, &mut selected, added);
        added = same_response_elsewhere(entries, side, &mut selected, &mut warned, b);
    }
    selected
}

/// Selects the results and the later lines of a split response that hang off the lines in `from`,
/// and theirs in turn.
fn take_along(entries: &[Entry], children: &HashMap<&str, Vec<usize>>, selected: &mut [bool], from: Vec<usize>) {
    let mut stack = from;
    while let Some(i) = stack.pop() {
        let Some(u) = entries[i].uuid else { continue };
        for &c in children.get(u).map(Vec::as_slice).unwrap_or(&[]) {
            if selected[c] {
                continue;
            }
            let ce = &entries[c];
            let same_response = ce.kind == Kind::Assistant && ce.msg_id.is_some() && ce.msg_id == entries[i].msg_id;
            if ce.only_results() || same_response {
                selected[c] = true;
                stack.push(c);
            }
        }
    }
}

/// Lines the parentUuid chain misses although they belong to the branch: the later lines of a
/// response on it (Claude Code writes the result of a parallel call, or a progress line, before
/// the response's next `tool_use` and chains that line through it), and results of its calls
/// wherever they hang. A line of a response on the branch that only repeats what the branch
/// holds is a copy on another branch and stays out. Both are reported. Returns the lines added.
fn same_response_elsewhere(
    entries: &[Entry],
    side: bool,
    selected: &mut [bool],
    warned: &mut [bool],
    b: &mut Builder,
) -> Vec<usize> {
    let mut blocks: HashMap<&str, Vec<&Value>> = HashMap::new();
    let mut calls: HashSet<&str> = HashSet::new();
    let mut answered: HashSet<&str> = HashSet::new();
    for (e, _) in entries.iter().zip(selected.iter()).filter(|(e, &s)| s && e.sidechain == side) {
        match (e.kind, e.msg_id) {
            (Kind::Assistant, Some(id)) => {
                let own = blocks.entry(id).or_default();
                own.extend(content_blocks(e));
                calls.extend(block_ids(e, "tool_use", "id"));
            }
            (Kind::User, _) => answered.extend(block_ids(e, "tool_result", "tool_use_id")),
            _ => {}
        }
    }
    let mut added = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if selected[i] || warned[i] || e.sidechain != side {
            continue;
        }
        if e.kind == Kind::Assistant {
            let Some((id, own)) = e.msg_id.and_then(|id| blocks.get(id).map(|own| (id, own))) else { continue };
            warned[i] = true;
            if content_blocks(e).iter().all(|blk| own.contains(blk)) {
                b.warn(e.line, format!("repeats lines of response {id:?} from another branch; left out"));
            } else {
                b.warn(
                    e.line,
                    format!("off the parentUuid chain, but part of response {id:?} on the branch; kept with it"),
                );
                added.push(i);
            }
        } else if e.only_results() {
            let ids = block_ids(e, "tool_result", "tool_use_id");
            if ids.iter().all(|id| calls.contains(id) && !answered.contains(id)) {
                added.push(i);
            }
        }
    }
    for &i in &added {
        selected[i] = true;
    }
    added
}

/// The content blocks of a line (a string content counts as one block).
fn content_blocks<'a>(e: &Entry<'a>) -> Vec<&'a Value> {
    match e.content() {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(v) => vec![v],
        None => Vec::new(),
    }
}

/// The `key` of the blocks of type `ty` in a line.
fn block_ids<'a>(e: &Entry<'a>, ty: &str, key: &str) -> Vec<&'a str> {
    content_blocks(e)
        .into_iter()
        .filter(|blk| str_field(blk, "type") == Some(ty))
        .filter_map(|blk| str_field(blk, key))
        .collect()
}

/// An attachment line: the text Claude Code gave the model (as a system reminder in a user
/// message), or a skipped record when it carries none.
fn attachment(e: &Entry, time: Option<f64>, b: &mut Builder) {
    let a = e.v.get("attachment").unwrap_or(&Value::Null);
    let kind = str_field(a, "type").unwrap_or("attachment");
    let text = match a.get("content") {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| {
                i.as_str().map(str::to_string).or_else(|| super::content::block_text(i).map(str::to_string))
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    if text.trim().is_empty() {
        b.skip(&format!("attachment:{kind}"));
        return;
    }
    let mut m = b.message(e.uuid, Role::User, time);
    Builder::text(&mut m, format!("<system-reminder>\n{text}\n</system-reminder>"), true);
    m.extra.insert("attachment".into(), Value::String(kind.to_string()));
    b.push(m, true);
}

fn image(block: &Value) -> (String, String) {
    let source = block.get("source").unwrap_or(&Value::Null);
    let mime =
        str_field(source, "media_type").or_else(|| str_field(source, "mediaType")).unwrap_or("image/png").to_string();
    let url = match (str_field(source, "type"), str_field(source, "data")) {
        (_, Some(data)) if !data.is_empty() => data_url(&mime, data),
        (Some("url"), _) => str_field(source, "url").unwrap_or("").to_string(),
        _ => String::new(),
    };
    (mime, url)
}

fn tool_result(block: &Value) -> Outcome {
    let mut texts: Vec<String> = Vec::new();
    let mut attachments = Vec::new();
    match block.get("content") {
        Some(Value::String(s)) => texts.push(s.clone()),
        Some(Value::Array(items)) => {
            for it in items {
                match str_field(it, "type") {
                    Some("image") => {
                        let (mime, url) = image(it);
                        if url.is_empty() {
                            texts.push(stripped_image(&mime));
                        } else {
                            attachments.push((mime, url));
                        }
                    }
                    _ => {
                        if let Some(t) = super::content::block_text(it) {
                            texts.push(t.to_string());
                        }
                    }
                }
            }
        }
        _ => {}
    }
    let output = texts.join("\n");
    if block.get("is_error").and_then(Value::as_bool) == Some(true) {
        Outcome::Err(output)
    } else {
        Outcome::Ok { output, attachments }
    }
}

fn user(e: &Entry, time: Option<f64>, b: &mut Builder) {
    let meta = e.v.get("isMeta").and_then(Value::as_bool) == Some(true);
    let mut m = b.message(e.uuid, Role::User, time);
    let mut results = 0;
    match e.content() {
        Some(Value::String(s)) => Builder::text(&mut m, s.clone(), meta),
        Some(Value::Array(blocks)) => {
            for blk in blocks {
                match str_field(blk, "type") {
                    Some("tool_result") => {
                        results += 1;
                        let id = str_field(blk, "tool_use_id").unwrap_or("");
                        b.result(e.line, id, None, tool_result(blk));
                    }
                    Some("text") => Builder::text(&mut m, str_field(blk, "text").unwrap_or(""), meta),
                    Some("image") | Some("document") => {
                        let (mime, url) = image(blk);
                        let mime = if str_field(blk, "type") == Some("document") && mime == "image/png" {
                            "application/pdf".to_string()
                        } else {
                            mime
                        };
                        Builder::file(&mut m, &mime, url, None);
                    }
                    _ => {
                        if blk.is_object() {
                            Builder::other(&mut m, blk);
                        }
                    }
                }
            }
        }
        _ => {}
    }
    if m.parts.is_empty() {
        if results > 0 {
            b.merged();
        } else {
            b.skip("user (tool results only, none matched)");
        }
        return;
    }
    b.push(m, true);
}

fn finish_reason(stop: &str) -> String {
    match stop {
        "end_turn" | "stop_sequence" => "stop",
        "tool_use" => "tool-calls",
        "max_tokens" => "length",
        other => other,
    }
    .to_string()
}

fn assistant(e: &Entry, mi: usize, b: &mut Builder) {
    let msg = e.v.get("message").unwrap_or(&Value::Null);
    let blocks: Vec<&Value> = match msg.get("content") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(s @ Value::String(_)) => vec![s],
        _ => Vec::new(),
    };
    for blk in blocks {
        if let Value::String(s) = blk {
            Builder::text(&mut b.messages[mi], s.clone(), false);
            continue;
        }
        match str_field(blk, "type") {
            Some("text") => Builder::text(&mut b.messages[mi], str_field(blk, "text").unwrap_or(""), false),
            Some("thinking") => {
                let mut extra = Map::new();
                if let Some(sig) = blk.get("signature").filter(|s| !s.is_null()) {
                    extra.insert("signature".into(), sig.clone());
                }
                Builder::reasoning(&mut b.messages[mi], str_field(blk, "thinking").unwrap_or(""), extra);
            }
            Some("redacted_thinking") => {}
            Some("tool_use") => {
                let id = str_field(blk, "id").unwrap_or("");
                if b.has_call(mi, id) {
                    b.warn(e.line, format!("tool call {id:?} repeats one of the same response; kept once"));
                    continue;
                }
                let name = str_field(blk, "name").unwrap_or("");
                let input = blk.get("input").cloned().unwrap_or(Value::Object(Map::new()));
                b.tool_call(mi, id, name, input);
            }
            _ => {
                if blk.is_object() {
                    Builder::other(&mut b.messages[mi], blk);
                }
            }
        }
    }
    let m: &mut Message = &mut b.messages[mi];
    if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
        let cache_read = count(u, "cache_read_input_tokens");
        let cache_write = count(u, "cache_creation_input_tokens");
        m.tokens = Some(Usage {
            input: count(u, "input_tokens"),
            output: count(u, "output_tokens"),
            reasoning: None,
            cache_read: (cache_read > 0).then_some(cache_read),
            cache_write: (cache_write > 0).then_some(cache_write),
            total: None,
        });
    }
    if let Some(model) = str_field(msg, "model").filter(|m| *m != "<synthetic>") {
        m.model = model_ref("anthropic", model);
    }
    if let Some(stop) = str_field(msg, "stop_reason") {
        m.finish = Some(finish_reason(stop));
    }
    if e.v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
        let text = super::content::text_of(msg.get("content").unwrap_or(&Value::Null));
        m.error = Some(error("APIError", text));
    }
}
