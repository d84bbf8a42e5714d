use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::part::{Part, ToolState};
use super::Text;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    System,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Time {
    pub created: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageError {
    pub name: String,
    #[serde(default)]
    pub message: String,
}

/// The model that wrote a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct ModelRef {
    #[serde(rename = "providerID")]
    pub provider_id: String,
    #[serde(rename = "modelID")]
    pub model_id: String,
}

/// Provider-reported usage of one assistant message (its last step).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(deserialize_with = "count")]
    pub input: u64,
    #[serde(deserialize_with = "count")]
    pub output: u64,
    #[serde(default, deserialize_with = "opt_count", skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    #[serde(default, deserialize_with = "opt_count", skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    #[serde(default, deserialize_with = "opt_count", skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    #[serde(default, deserialize_with = "opt_count", skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

impl Usage {
    /// The context size this usage stands for: `total`, else the sum of its parts (opencode).
    pub fn context_tokens(&self) -> u64 {
        match self.total {
            Some(t) if t > 0 => t,
            _ => self.input + self.output + self.cache_read.unwrap_or(0) + self.cache_write.unwrap_or(0),
        }
    }

    /// The prompt side only (what the provider read), for calibrating local counts.
    pub fn prompt_tokens(&self) -> u64 {
        self.input + self.cache_read.unwrap_or(0) + self.cache_write.unwrap_or(0)
    }
}

/// Token counts arrive as JS numbers: any finite, non-negative number is accepted and rounded.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = f64::deserialize(d)?;
    if !n.is_finite() || n < 0.0 {
        return Err(serde::de::Error::custom(format!("token count must be a finite number >= 0, got {n}")));
    }
    Ok(n.round() as u64)
}

fn opt_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    count(d).map(Some)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: String,
    pub role: Role,
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Time>,
    #[serde(rename = "parentID", default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<MessageError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRef>,
    /// Fields this model does not know (sessionID, agent, ...) are kept as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The field of a summary message holding the latest request, restated after it.
pub const LATEST_REQUEST: &str = "latestRequest";

impl Message {
    /// A summary's restated latest request (the kept tail holds no user request).
    pub fn latest_request(&self) -> Option<&str> {
        self.extra.get(LATEST_REQUEST).and_then(Value::as_str).filter(|_| self.is_summary())
    }

    /// A message with these parts and nothing else set.
    pub fn new(id: String, role: Role, parts: Vec<Part>, time: Option<Time>) -> Message {
        Message {
            id,
            role,
            parts,
            time,
            parent_id: None,
            summary: None,
            finish: None,
            error: None,
            tokens: None,
            model: None,
            extra: Map::new(),
        }
    }

    pub fn is_user(&self) -> bool {
        self.role == Role::User
    }

    pub fn is_assistant(&self) -> bool {
        self.role == Role::Assistant
    }

    /// An assistant message holding a summary, finished and without error: the only kind that hides
    /// anything. A failed or unfinished summary is ignored completely.
    pub fn is_completed_summary(&self) -> bool {
        self.is_assistant()
            && self.summary == Some(true)
            && self.finish.as_deref().is_some_and(|f| !f.is_empty())
            && self.error.is_none()
    }

    pub fn is_summary(&self) -> bool {
        self.is_assistant() && self.summary == Some(true)
    }

    /// The compaction part of a compaction request (a user message), if this is one.
    pub fn compaction(&self) -> Option<&super::CompactionPart> {
        if !self.is_user() {
            return None;
        }
        self.parts.iter().find_map(|p| match p {
            Part::Compaction(c) => Some(c),
            _ => None,
        })
    }

    /// Provider usage that can be trusted for the context size: a finished, error-free assistant
    /// answer that is not a summary (a summary's usage measures the summarizer's input).
    pub fn trusted_usage(&self) -> Option<&Usage> {
        if !self.is_assistant() || self.summary == Some(true) || self.error.is_some() {
            return None;
        }
        if self.finish.as_deref().is_none_or(|f| f.is_empty()) {
            return None;
        }
        self.tokens.as_ref().filter(|u| u.context_tokens() > 0)
    }

    /// Its texts: text and reasoning parts, tool outputs and errors.
    pub fn texts(&self) -> impl Iterator<Item = &Text> {
        self.parts.iter().filter_map(|p| match p {
            Part::Text(t) => Some(&t.text),
            Part::Reasoning(r) => Some(&r.text),
            Part::Tool(t) => match &t.state {
                ToolState::Completed { output, .. } => Some(output),
                ToolState::Error { error, .. } => Some(error),
                ToolState::Pending { .. } | ToolState::Running { .. } => None,
            },
            Part::File(_) | Part::Compaction(_) | Part::Other(_) => None,
        })
    }

    /// Bytes of the long strings it carries (its texts, file contents): what its size is made of.
    pub fn payload_len(&self) -> usize {
        let files = |p: &Part| match p {
            Part::File(f) => f.url.len(),
            Part::Tool(t) => match &t.state {
                ToolState::Completed { attachments, .. } => attachments.iter().flatten().map(|a| a.url.len()).sum(),
                _ => 0,
            },
            _ => 0,
        };
        self.texts().map(|t| t.len()).sum::<usize>() + self.parts.iter().map(files).sum::<usize>()
    }

    /// Its non-empty text parts, joined by newlines (`None` when there are none).
    pub fn text(&self) -> Option<String> {
        let text: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) if !t.text.is_empty() => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        (!text.is_empty()).then(|| text.join("\n"))
    }
}
