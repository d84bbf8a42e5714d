//! Where a message imported from AI SDK `ModelMessage`s or `UIMessage`s keeps what the canonical
//! model has no field for: the `extra` keys the importers (`formats::ai_sdk`, `formats::ai_sdk_ui`)
//! write and the converters (`convert`) read to give the messages back as they came. What each key
//! holds is described in `formats::ai_sdk`.

use serde_json::Value;

use super::{markers, Part};

/// Message `extra`: the layout of the source messages folded into this one. Such a message is sent
/// with its parts of unknown kinds.
pub const LAYOUT: &str = "aiSdk";
/// Part `extra`: the source part without its mapped field.
pub const PART: &str = "aiSdk";
/// Tool state `extra`: the `tool-result` part without `output`.
pub const RESULT: &str = "aiSdkResult";
/// Tool state `extra`: the output when it is not a plain `{ type: 'text', value }`.
pub const OUTPUT: &str = "aiSdkOutput";
/// Tool part `extra`: the `tool-approval-request` item as it came.
pub const APPROVAL_REQUEST: &str = "aiSdkApprovalRequest";
/// Tool part `extra`: the `tool-approval-response` item as it came.
pub const APPROVAL_RESPONSE: &str = "aiSdkApprovalResponse";
/// Stands where file data was taken out: `{ "$hole": "base64" | "url" }`.
pub const HOLE: &str = "$hole";
/// Part `extra` (from UIMessages): marks the first part of a step after the first.
pub const STEP_START: &str = "stepStart";

/// Whether a layout entry (`{ message, content }`) is sent. Every one is but a tool message that
/// answers no call of its message (no `result` or `approvalResponse` slot: items of unknown kinds
/// alone, results sent after their calls in other messages, approval responses that match no
/// request): a provider rejects a tool message that answers nothing, so it stays in the layout
/// and out of the request.
pub fn is_sent(entry: &Value) -> bool {
    let tool = entry.pointer("/message/role").and_then(Value::as_str) == Some("tool");
    !tool || entry.get("content").and_then(Value::as_array).is_some_and(|slots| slots.iter().any(answers))
}

/// Whether a slot of a tool message's layout answers a call of its message.
pub fn answers(slot: &Value) -> bool {
    slot.get("result").is_some() || slot.get("approvalResponse").is_some()
}

/// Whether `p` opens a step after the first (a `step-start` stood before it).
pub fn starts_step(p: &Part) -> bool {
    let extra = match p {
        Part::Text(t) => &t.extra,
        Part::Reasoning(r) => &r.extra,
        Part::File(f) => &f.extra,
        Part::Tool(t) => &t.extra,
        Part::Compaction(c) => &c.extra,
        Part::Other(v) => return v.get(STEP_START) == Some(&Value::Bool(true)),
    };
    extra.get(STEP_START) == Some(&Value::Bool(true))
}

/// What a tool output reads as: `Ok(output)` or `Err(error)`. A `content` output is its text items
/// joined, a marker for each file or image, and the JSON of anything else.
pub fn read_output(output: &Value) -> Result<String, String> {
    let value = output.get("value").unwrap_or(&Value::Null);
    let string = || value.as_str().map_or_else(|| value.to_string(), str::to_string);
    match str_field(output, "type").unwrap_or("") {
        "text" => Ok(string()),
        "json" => Ok(value.to_string()),
        "error-text" => Err(string()),
        "error-json" => Err(value.to_string()),
        "execution-denied" => Err(str_field(output, "reason").unwrap_or("Tool execution denied").to_string()),
        "content" => Ok(content_items(output).map(item_text).collect::<Vec<_>>().join("\n")),
        _ => Ok(output.to_string()),
    }
}

/// The items of a `content` tool output (none for other outputs).
pub fn content_items(output: &Value) -> impl Iterator<Item = &Value> {
    let items = (str_field(output, "type") == Some("content")).then(|| output.get("value")).flatten();
    items.and_then(Value::as_array).into_iter().flatten()
}

fn item_text(it: &Value) -> String {
    let mime = str_field(it, "mediaType").unwrap_or("application/octet-stream");
    let name = str_field(it, "filename").or_else(|| str_field(it, "url")).unwrap_or("file");
    match str_field(it, "type").unwrap_or("") {
        "text" => str_field(it, "text").unwrap_or("").to_string(),
        "media" | "image-data" | "file-data" | "file" | "image-url" | "file-url" => markers::attached(mime, name),
        _ => it.to_string(),
    }
}

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}
