//! Messages imported from AI SDK `ModelMessage`s, given back as they came (see `formats::ai_sdk`
//! for what is kept where). A pruned or cut tool output reads as text, stripped media as its
//! marker; a call left without a result still gets one right after it, unless it waits for
//! approval. A tool message that answers none of its message's calls is not sent.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::model_messages::ConvertOptions;
use crate::message::ai_sdk_layout::{
    is_sent, read_output, APPROVAL_REQUEST, APPROVAL_RESPONSE, HOLE, OUTPUT, PART, RESULT,
};
use crate::message::{is_media, keep_head_and_tail, markers, Message, Part, ToolPart, ToolState};

/// JSON built mostly from borrowed pieces of the messages, so restoring copies no payload.
#[derive(Debug, PartialEq)]
pub enum Json<'a> {
    Ref(&'a Value),
    Text(Cow<'a, str>),
    Obj(Vec<(&'a str, Json<'a>)>),
    Arr(Vec<Json<'a>>),
    /// A binary or URL tag (`{__cf: 'bytes' | 'url', ...}`): JSON as it is; the N-API writer makes
    /// it the `Uint8Array`, `Buffer`, `ArrayBuffer` or `URL` it stood for.
    Tag(Box<Json<'a>>),
}

/// The newtype name a [`Json::Tag`] serializes under, for serializers that build binary values.
pub const BINARY_TAG: &str = "$contextfold::binary";

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Json::Ref(v) => v.serialize(s),
            Json::Text(t) => s.serialize_str(t),
            Json::Arr(items) => s.collect_seq(items),
            Json::Tag(tag) => s.serialize_newtype_struct(BINARY_TAG, tag),
            Json::Obj(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// The data value `shape` (as the importer's `formats::ai_sdk::split_data` left it) held, with
/// `url` (a data URL for base64 holes) put back in its hole.
fn fill_data<'a>(shape: &'a Value, url: &'a str) -> Option<Json<'a>> {
    let o = shape.as_object()?;
    if let Some(kind) = o.get(HOLE) {
        let base64 = kind == "base64";
        let data = match url.strip_prefix("data:").and_then(|r| r.split_once(";base64,")) {
            Some((_, d)) if base64 => d,
            _ => url,
        };
        return Some(Json::Text(data.into()));
    }
    let filled = Json::Obj(o.iter().map(|(k, v)| (k.as_str(), fill_data(v, url).unwrap_or(Json::Ref(v)))).collect());
    Some(if o.contains_key("__cf") { Json::Tag(Box::new(filled)) } else { filled })
}

fn text<'a>(t: impl Into<Cow<'a, str>>) -> Json<'a> {
    Json::Text(t.into())
}

/// `residual` (else `fallback`) with `overrides` set.
fn object<'a>(
    residual: Option<&'a Value>,
    fallback: &[(&'a str, &'a str)],
    overrides: Vec<(&'a str, Json<'a>)>,
) -> Json<'a> {
    let mut entries: Vec<(&'a str, Json<'a>)> = match residual.and_then(Value::as_object) {
        Some(o) => o
            .iter()
            .filter(|(k, _)| !overrides.iter().any(|(key, _)| key == k))
            .map(|(k, v)| (k.as_str(), Json::Ref(v)))
            .collect(),
        None => fallback.iter().map(|&(k, v)| (k, text(v))).collect(),
    };
    entries.extend(overrides);
    Json::Obj(entries)
}

/// One output message: the source message without its content (`None`: a tool message added for
/// calls left without a result), and its content.
struct Out<'a> {
    message: Option<&'a Map<String, Value>>,
    content: Option<Json<'a>>,
}

struct Restorer<'a, 'o> {
    m: &'a Message,
    ids: &'o [Option<Cow<'a, str>>],
    opts: &'o ConvertOptions,
    /// The output message holding each call, by part index.
    call_at: HashMap<usize, usize>,
    answered: HashSet<usize>,
}

/// `m` as the ModelMessages it was imported from; `ids[k]` is the call id of tool part `k`.
pub fn restore<'a>(
    m: &'a Message,
    layout: &'a [Value],
    ids: &[Option<Cow<'a, str>>],
    opts: &ConvertOptions,
) -> Vec<Json<'a>> {
    let mut r = Restorer { m, ids, opts, call_at: HashMap::new(), answered: HashSet::new() };
    let mut out: Vec<Out<'a>> = Vec::new();
    for entry in layout.iter().filter(|e| is_sent(e)) {
        let Some(message) = entry.get("message").and_then(Value::as_object) else { continue };
        let content = match entry.get("content") {
            Some(Value::Array(slots)) => Some(Json::Arr(slots.iter().filter_map(|s| r.slot(s, out.len())).collect())),
            Some(Value::Number(k)) => match m.parts.get(k.as_u64().unwrap_or(u64::MAX) as usize) {
                Some(Part::Text(t)) => Some(text(t.text.as_str())),
                _ => Some(text("")),
            },
            _ => None,
        };
        out.push(Out { message: Some(message), content });
    }
    r.answer_the_rest(&mut out);
    out.into_iter()
        .map(|o| {
            let mut entries: Vec<(&'a str, Json<'a>)> = match o.message {
                Some(message) => message.iter().map(|(k, v)| (k.as_str(), Json::Ref(v))).collect(),
                None => vec![("role", text("tool"))],
            };
            entries.extend(o.content.map(|c| ("content", c)));
            Json::Obj(entries)
        })
        .collect()
}

impl<'a> Restorer<'a, '_> {
    fn id(&self, k: usize) -> Json<'a> {
        text(self.ids.get(k).cloned().flatten().unwrap_or_default())
    }

    fn slot(&mut self, slot: &'a Value, at: usize) -> Option<Json<'a>> {
        match slot {
            Value::Number(k) => {
                let k = k.as_u64()? as usize;
                let p = self.m.parts.get(k)?;
                if matches!(p, Part::Tool(_)) {
                    self.call_at.insert(k, at);
                }
                self.part(k, p)
            }
            Value::Object(o) => {
                if let Some(raw) = o.get("raw") {
                    return Some(Json::Ref(raw));
                }
                let (kind, k) = o.iter().next()?;
                let k = k.as_u64()? as usize;
                let Some(Part::Tool(t)) = self.m.parts.get(k) else { return None };
                match kind.as_str() {
                    "result" => {
                        self.answered.insert(k);
                        Some(self.result(k, t))
                    }
                    "approvalRequest" => {
                        Some(object(t.extra.get(APPROVAL_REQUEST), &[], vec![("toolCallId", self.id(k))]))
                    }
                    "approvalResponse" => t.extra.get(APPROVAL_RESPONSE).map(Json::Ref),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn part(&self, k: usize, p: &'a Part) -> Option<Json<'a>> {
        Some(match p {
            Part::Text(t) => object(t.extra.get(PART), &[("type", "text")], vec![("text", text(t.text.as_str()))]),
            Part::Reasoning(r) => {
                object(r.extra.get(PART), &[("type", "reasoning")], vec![("text", text(r.text.as_str()))])
            }
            Part::File(f) if f.is_cleared() => {
                Json::Obj(vec![("type", text("text")), ("text", text(markers::cleared(&f.mime, f.display_name())))])
            }
            Part::File(f) if self.opts.strip_media && is_media(&f.mime) => {
                Json::Obj(vec![("type", text("text")), ("text", text(markers::attached(&f.mime, f.display_name())))])
            }
            Part::File(f) => {
                let residual = f.extra.get(PART);
                let key =
                    if residual.and_then(|r| r.get("type")).is_some_and(|t| t == "image") { "image" } else { "data" };
                let data = residual.and_then(|r| r.get(key)).and_then(|h| fill_data(h, &f.url));
                let fallback = [("type", "file"), ("mediaType", f.mime.as_str())];
                object(residual, &fallback, vec![(key, data.unwrap_or_else(|| text(f.url.as_str())))])
            }
            Part::Tool(t) => object(
                t.extra.get(PART),
                &[("type", "tool-call"), ("toolName", t.tool.as_str())],
                vec![("toolCallId", self.id(k)), ("input", Json::Ref(t.state.input()))],
            ),
            Part::Other(v) => Json::Ref(v),
            Part::Compaction(_) => return None,
        })
    }

    fn result(&self, k: usize, t: &'a ToolPart) -> Json<'a> {
        object(
            state_extra(&t.state).and_then(|e| e.get(RESULT)),
            &[("type", "tool-result"), ("toolName", t.tool.as_str())],
            vec![("toolCallId", self.id(k)), ("output", self.output(t))],
        )
    }

    /// The original output while the canonical state still reads as it; else text.
    fn output(&self, t: &'a ToolPart) -> Json<'a> {
        let original = state_extra(&t.state).and_then(|e| e.get(OUTPUT));
        let reads = |expected: Result<&str, &str>| {
            original.filter(|o| read_output(o).as_ref().map(String::as_str).map_err(String::as_str) == expected)
        };
        let plain = |kind: &'a str, value: Cow<'a, str>| {
            let options = original.and_then(|o| o.get("providerOptions")).map(|p| ("providerOptions", Json::Ref(p)));
            Json::Obj([("type", text(kind)), ("value", Json::Text(value))].into_iter().chain(options).collect())
        };
        match &t.state {
            ToolState::Pending { .. } | ToolState::Running { .. } => {
                Json::Obj(vec![("type", text("error-text")), ("value", text(markers::INTERRUPTED))])
            }
            ToolState::Completed { compacted_at: Some(_), .. } => {
                plain("text", Cow::Borrowed(t.state.cleared_text().unwrap_or(markers::PRUNED)))
            }
            ToolState::Completed { output, attachments, .. } => {
                let cut = match self.opts.tool_output_max_chars {
                    Some(max) => keep_head_and_tail(output, max),
                    None => Cow::Borrowed(output.as_str()),
                };
                let stripped = self.opts.strip_media && attachments.iter().flatten().any(|a| is_media(&a.mime));
                match reads(Ok(output)) {
                    Some(o) if matches!(cut, Cow::Borrowed(_)) && !stripped => Json::Ref(o),
                    _ => plain("text", cut),
                }
            }
            ToolState::Error { .. } if t.is_pruned() => {
                plain("error-text", Cow::Borrowed(t.state.cleared_text().unwrap_or(markers::PRUNED)))
            }
            ToolState::Error { error, .. } => match reads(Err(error)) {
                Some(o) => Json::Ref(o),
                None => plain("error-text", Cow::Borrowed(error)),
            },
        }
    }

    /// Gives every rendered call without a result one in the tool message right after it (a new
    /// one if the next message is not a tool message); a call waiting for approval is left as is.
    fn answer_the_rest(&self, out: &mut Vec<Out<'a>>) {
        let mut missing: Vec<(usize, usize)> = self
            .call_at
            .iter()
            .filter(|(k, _)| !self.answered.contains(k))
            .filter(|(k, _)| match &self.m.parts[**k] {
                Part::Tool(t) => !awaits_approval(t),
                _ => false,
            })
            .map(|(&k, &at)| (at, k))
            .collect();
        missing.sort_unstable();
        // Output positions move as tool messages are added: `added` holds the calls' positions
        // that got one.
        let mut added: Vec<usize> = Vec::new();
        for (at, k) in missing {
            let Part::Tool(t) = &self.m.parts[k] else { continue };
            let next = at + added.iter().filter(|&&a| a < at).count() + 1;
            let fits = out.get(next).is_some_and(|o| {
                matches!(o.content, Some(Json::Arr(_)))
                    && o.message.is_none_or(|m| m.get("role").is_some_and(|r| r == "tool"))
            });
            if !fits {
                out.insert(next, Out { message: None, content: Some(Json::Arr(Vec::new())) });
                added.push(at);
            }
            if let Some(Out { content: Some(Json::Arr(items)), .. }) = out.get_mut(next) {
                items.push(self.result(k, t));
            }
        }
    }
}

fn awaits_approval(t: &ToolPart) -> bool {
    t.extra.contains_key(APPROVAL_REQUEST) && matches!(t.state, ToolState::Pending { .. } | ToolState::Running { .. })
}

fn state_extra(s: &ToolState) -> Option<&Map<String, Value>> {
    match s {
        ToolState::Completed { extra, .. } | ToolState::Error { extra, .. } => Some(extra),
        ToolState::Pending { .. } | ToolState::Running { .. } => None,
    }
}
