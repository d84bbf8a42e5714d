use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextPart {
    pub id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synthetic: Option<bool>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReasoningPart {
    pub id: String,
    pub text: String,
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
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
        output: String,
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
        error: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

impl ToolState {
    /// What a pruned output reads as: the stub a microcompact rule left (`compactedAs`), else the
    /// cleared marker; `None` for an output that is not pruned.
    pub fn cleared_text(&self) -> Option<&str> {
        match self {
            ToolState::Completed { compacted_at: Some(_), extra, .. } => {
                Some(extra.get("compactedAs").and_then(Value::as_str).unwrap_or(super::markers::PRUNED))
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
        matches!(self.state, ToolState::Completed { compacted_at: Some(_), .. })
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
        super::parse::parse_part(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}
