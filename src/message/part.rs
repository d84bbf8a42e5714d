use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Text;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextPart {
    pub id: String,
    pub text: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReasoningPart {
    pub id: String,
    pub text: Text,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FilePart {
    pub id: String,
    pub mime: String,
    /// Often a `data:` URL.
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl FilePart {
    pub fn display_name(&self) -> &str {
        self.filename.as_deref().unwrap_or("file")
    }

    /// Whether the agent that wrote the transcript cleared this file from the context (its
    /// `compactedAt` mark, epoch ms): it is kept, and reads as its cleared marker.
    pub fn is_cleared(&self) -> bool {
        self.extra.get("compactedAt").is_some_and(Value::is_number)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompactionPart {
    pub id: String,
    pub auto: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow: Option<bool>,
    /// The hidden range starts here (default: the start of the session).
    #[serde(rename = "hiddenFromID", default, skip_serializing_if = "Option::is_none")]
    pub hidden_from_id: Option<String>,
    /// The hidden range ends before this message (default: the compaction request itself).
    #[serde(rename = "tailStartID", default, skip_serializing_if = "Option::is_none")]
    pub tail_start_id: Option<String>,
    /// The files read and modified up to this compaction (cumulative), which the next one carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<CompactionFiles>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The files a compaction request records, cumulative: the next compaction carries them over.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct CompactionFiles {
    /// Files only read.
    #[serde(default)]
    pub read: Vec<String>,
    #[serde(default)]
    pub modified: Vec<String>,
}

/// A tool call's state, tagged by `status`. Read by `tool_state` (straight into its fields, not
/// buffered as serde's tagged enums are).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ToolState {
    Pending {
        #[serde(default)]
        input: Value,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    Running {
        #[serde(default)]
        input: Value,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    Completed {
        #[serde(default)]
        input: Value,
        output: Text,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The prune mark (epoch ms): the output is kept but reads as cleared.
        #[serde(rename = "compactedAt", default, skip_serializing_if = "Option::is_none")]
        compacted_at: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attachments: Option<Vec<FilePart>>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    Error {
        #[serde(default)]
        input: Value,
        error: Text,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

impl ToolState {
    /// What a pruned output reads as: the stub a microcompact rule left (`compactedAs`), else the
    /// cleared marker; `None` for an output that is not pruned. An error result carries the mark
    /// in `compactedAt` too when the agent that wrote the transcript cleared it.
    pub fn cleared_text(&self) -> Option<&str> {
        match self {
            ToolState::Completed { compacted_at: Some(_), extra, .. } => {
                Some(extra.get("compactedAs").and_then(Value::as_str).unwrap_or(super::markers::PRUNED))
            }
            ToolState::Error { extra, .. } if extra.get("compactedAt").is_some_and(Value::is_number) => {
                Some(super::markers::PRUNED)
            }
            _ => None,
        }
    }

    pub fn input(&self) -> &Value {
        match self {
            ToolState::Pending { input, .. }
            | ToolState::Running { input, .. }
            | ToolState::Completed { input, .. }
            | ToolState::Error { input, .. } => input,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolPart {
    pub id: String,
    #[serde(rename = "callID")]
    pub call_id: String,
    pub tool: String,
    pub state: ToolState,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ToolPart {
    pub fn is_pruned(&self) -> bool {
        self.state.cleared_text().is_some()
    }
}

/// The `type`s of the parts this model knows; a part of any other type is kept as it came.
pub const KINDS: [&str; 5] = ["text", "reasoning", "tool", "file", "compaction"];

/// The `type` of a part that holds, as its `value`, a transcript item that cannot be a part as it
/// came (not an object with a `type`, or one whose `type` names a kind of this model).
pub const RAW: &str = "raw";

/// Whether a transcript item can be a part of unknown kind as it came: an object whose `type`
/// names no kind of this model (anything else would read back as another part, or as none).
pub fn is_other(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str).is_some_and(|t| !KINDS.contains(&t))
}

/// The fields of a part of unknown kind keeping `item`: the item as it came when it can be one
/// ([`is_other`]), else `{ type: "raw", value: <item> }`.
pub fn other_fields(item: &Value) -> Map<String, Value> {
    match item {
        Value::Object(o) if is_other(item) => o.clone(),
        _ => Map::from_iter([("type".to_string(), Value::from(RAW)), ("value".to_string(), item.clone())]),
    }
}

/// A part. Types this model does not know are kept verbatim (agents add their own) and ignored by
/// conversion and counting.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(TextPart),
    Reasoning(ReasoningPart),
    Tool(ToolPart),
    File(FilePart),
    Compaction(CompactionPart),
    Other(Value),
}

impl Part {
    /// The fields of a known kind of part kept as they came.
    fn extra(&self) -> Option<&Map<String, Value>> {
        match self {
            Part::Text(p) => Some(&p.extra),
            Part::Reasoning(p) => Some(&p.extra),
            Part::Tool(p) => Some(&p.extra),
            Part::File(p) => Some(&p.extra),
            Part::Compaction(p) => Some(&p.extra),
            Part::Other(_) => None,
        }
    }

    /// When the part was cleared from the context (epoch ms): a pruned tool output, or a result
    /// or file the agent that wrote the transcript cleared.
    pub fn cleared_at(&self) -> Option<f64> {
        match self {
            Part::Tool(t) => match &t.state {
                ToolState::Completed { compacted_at, .. } => *compacted_at,
                ToolState::Error { extra, .. } => extra.get("compactedAt").and_then(Value::as_f64),
                _ => None,
            },
            Part::File(f) => f.extra.get("compactedAt").and_then(Value::as_f64),
            _ => None,
        }
    }

    pub fn id(&self) -> &str {
        match self {
            Part::Text(p) => &p.id,
            Part::Reasoning(p) => &p.id,
            Part::Tool(p) => &p.id,
            Part::File(p) => &p.id,
            Part::Compaction(p) => &p.id,
            Part::Other(v) => v.get("id").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Tagged<'a> {
    Text(&'a TextPart),
    Reasoning(&'a ReasoningPart),
    Tool(&'a ToolPart),
    File(&'a FilePart),
    Compaction(&'a CompactionPart),
}

impl Serialize for Part {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Part::Text(p) => Tagged::Text(p).serialize(s),
            Part::Reasoning(p) => Tagged::Reasoning(p).serialize(s),
            Part::Tool(p) => Tagged::Tool(p).serialize(s),
            Part::File(p) => Tagged::File(p).serialize(s),
            Part::Compaction(p) => Tagged::Compaction(p).serialize(s),
            Part::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PartVisitor)
    }
}

/// Reads a part. A part whose first key is `type`, of a known kind (every part a store line
/// holds), is read straight into its fields; any other goes through a `Value` (`parse_part`),
/// which gives the same part, and says what is wrong with a bad one.
struct PartVisitor;

impl PartVisitor {
    fn not_an_object<E: serde::de::Error>(kind: &str) -> Result<Part, E> {
        Err(E::custom(format!(": expected an object, got {kind}")))
    }
}

impl<'de> serde::de::Visitor<'de> for PartVisitor {
    type Value = Part;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a message part")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Part, A::Error> {
        use serde::de::value::MapAccessDeserializer;
        use serde::de::Error;
        let first: Option<String> = map.next_key()?;
        let mut whole = Map::new();
        if let Some(key) = first {
            let value: Value = map.next_value()?;
            if key == "type" {
                let direct = |ty: &str, map: A| -> Result<Part, A::Error> {
                    let rest = MapAccessDeserializer::new(map);
                    let part = match ty {
                        "text" => Part::Text(TextPart::deserialize(rest)?),
                        "reasoning" => Part::Reasoning(ReasoningPart::deserialize(rest)?),
                        "tool" => Part::Tool(ToolPart::deserialize(rest)?),
                        "file" => Part::File(FilePart::deserialize(rest)?),
                        _ => Part::Compaction(CompactionPart::deserialize(rest)?),
                    };
                    // A second `type` would land among the fields kept as they came.
                    if part.extra().is_some_and(|e| e.contains_key("type")) {
                        return Err(A::Error::custom("duplicate field `type`"));
                    }
                    Ok(part)
                };
                if let Some(ty) = value.as_str().filter(|t| KINDS.contains(t)) {
                    return direct(ty, map);
                }
            }
            whole.insert(key, value);
        }
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            whole.insert(key, value);
        }
        super::parse::parse_part(Value::Object(whole)).map_err(A::Error::custom)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<Part, A::Error> {
        Self::not_an_object("an array")
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Part, E> {
        Self::not_an_object("a string")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Part, E> {
        Self::not_an_object("a boolean")
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Part, E> {
        Self::not_an_object("a number")
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Part, E> {
        Self::not_an_object("a number")
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Part, E> {
        Self::not_an_object("a number")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Part, E> {
        Self::not_an_object("null")
    }
}
