//! Importers: transcripts written by other agents, turned into canonical messages.
//!
//! Every importer reads a stream of JSON values (one or many per line, pretty-printed or not),
//! follows the source's own threading to the active branch, pairs tool calls with their results
//! into one `tool` part, maps the agent's own compaction records onto ours (a compaction request
//! followed by a completed summary), and reports what it could not read as warnings with line
//! numbers instead of failing.

pub(crate) mod ai_sdk;
pub(crate) mod ai_sdk_ui;
mod build;
mod claude_code;
mod codex;
mod content;
mod copilot;
mod detect;
mod gemini;
mod openai_chat;
mod opencode;
mod openhands;
mod pi;
mod source;
mod stream;
mod swe_agent;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::error::{CfError, Code, Result};
use crate::message::Message;

pub use source::{import_source, Source};
pub use stream::{decode, Record};

/// The transcript formats `import_transcript` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    ClaudeCode,
    Codex,
    Pi,
    Opencode,
    SweAgent,
    MiniSweAgent,
    OpenHands,
    OpenAiChat,
    KimiCli,
    CopilotCli,
    GeminiCli,
    AiSdk,
    AiSdkUi,
}

impl Format {
    pub const ALL: [Format; 13] = [
        Format::ClaudeCode,
        Format::Codex,
        Format::Pi,
        Format::Opencode,
        Format::SweAgent,
        Format::MiniSweAgent,
        Format::OpenHands,
        Format::OpenAiChat,
        Format::KimiCli,
        Format::CopilotCli,
        Format::GeminiCli,
        Format::AiSdk,
        Format::AiSdkUi,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Pi => "pi",
            Format::Opencode => "opencode",
            Format::SweAgent => "swe-agent",
            Format::MiniSweAgent => "mini-swe-agent",
            Format::OpenHands => "openhands",
            Format::OpenAiChat => "openai-chat",
            Format::KimiCli => "kimi-cli",
            Format::CopilotCli => "copilot-cli",
            Format::GeminiCli => "gemini-cli",
            Format::AiSdk => "ai-sdk",
            Format::AiSdkUi => "ai-sdk-ui",
        }
    }

    pub fn parse(name: &str) -> Result<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == name).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
            CfError::invalid_argument(format!(
                "format: unknown transcript format {name:?} (expected one of {})",
                names.join(", ")
            ))
        })
    }
}

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Options of `importTranscript`.
#[derive(Clone, Debug, Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct ImportOptions {
    /// Skip detection and read the input as this format.
    #[cfg_attr(test, ts(type = "TranscriptFormat", optional))]
    pub format: Option<String>,
}

/// Something the importer could not use, and where (1-based line of the record; 0: the whole input).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields, rename = "ImportWarning"))]
pub struct Warning {
    pub line: usize,
    pub message: String,
}

/// How the source's records became messages. Always
/// `messages = records − skipped − offBranch − merged + added`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct ImportStats {
    /// Conversation records in the source, every branch included (what the format calls a message:
    /// a Claude Code user/assistant line, a Codex `response_item` message, a pi message entry, an
    /// OpenHands event, ...).
    pub records: usize,
    /// Distinct tool-call ids in the source (text actions count as calls), every branch included.
    pub tool_calls: usize,
    /// Compactions recognised and mapped onto a request and a completed summary.
    pub compactions: usize,
    /// Records that carry nothing for the model (UI notices, state changes, exit markers).
    pub skipped: usize,
    /// Records on branches other than the active one (rewinds, subagent sidechains).
    pub off_branch: usize,
    /// Records folded into an earlier message: tool results, split responses, later steps.
    pub merged: usize,
    /// Messages made without a record of their own: compaction requests, kept copies after a
    /// Codex compaction, answers for results whose call is missing, notifications.
    pub added: usize,
    /// What the import left out, by the source's record type (`file-history-snapshot`,
    /// `hook.start`, `StateChange`, `exit` ...): the skipped records and the lines outside the
    /// conversation (metadata, UI events, hooks), each counted once.
    pub omitted: std::collections::BTreeMap<String, usize>,
    /// Token usage the source reports for the whole session (Copilot CLI's shutdown totals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::message::Usage>,
}

/// The result of an import.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields, rename = "ImportResult"))]
pub struct Imported {
    #[cfg_attr(test, ts(type = "TranscriptFormat"))]
    pub format: Format,
    #[cfg_attr(test, ts(type = "Message[]"))]
    pub messages: Vec<Message>,
    pub warnings: Vec<Warning>,
    pub stats: ImportStats,
    /// What the source records the model was given besides the messages (a system prompt or tool
    /// definitions kept outside them): what `setOverhead` takes, to count what the model is sent.
    #[serde(skip_serializing_if = "Overhead::is_empty")]
    #[cfg_attr(test, ts(type = "Overhead", optional))]
    pub overhead: Overhead,
}

/// A system prompt and tool definitions a transcript records outside its messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Overhead {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<serde_json::Value>,
}

impl Overhead {
    pub fn is_empty(&self) -> bool {
        self.system.is_empty() && self.tools.is_none()
    }
}

#[cfg(test)]
impl Imported {
    /// The tool part of call `call` (tests read imported calls by id).
    pub fn tool(&self, call: &str) -> &crate::message::ToolPart {
        self.messages
            .iter()
            .flat_map(|m| &m.parts)
            .find_map(|p| match p {
                crate::message::Part::Tool(t) if t.call_id == call => Some(t),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no call {call}"))
    }
}

/// Imports a transcript given as text. `format: None` detects it, and never settles on a format
/// that reads no message from a transcript holding something (`CF_UNKNOWN_FORMAT` when no format
/// reads one); an empty conversation imports as no message.
pub fn import_transcript(text: &str, format: Option<Format>) -> Result<Imported> {
    import_transcript_with(text, format, &|| false)
}

/// AI SDK `ModelMessage`s (already parsed) as canonical messages; `to_model_messages` gives them
/// back as they came.
pub fn from_model_messages(values: &[serde_json::Value]) -> Imported {
    let mut b = build::Builder::new(Format::AiSdk, Vec::new());
    ai_sdk::import_values(values, &mut b);
    b.finish()
}

/// ModelMessages appended to a session whose last message is `previous`, the first of them at
/// index `base` of the app's array (new ids are `ai-sdk-<index + 1>`, past any the session has). When `previous` is an assistant message that came from ModelMessages, the
/// result starts with it, completed by the tool results that arrived (compare to see whether it
/// changed); the new messages follow, with ids no earlier append gave.
pub fn continue_model_messages(previous: Option<&Message>, values: &[serde_json::Value], base: usize) -> Imported {
    let mut b = build::Builder::new(Format::AiSdk, Vec::new());
    b.ids_after(base);
    // New answers reply to the user message the session's last message is or answers.
    b.answer_to(previous.and_then(|m| {
        if m.role == crate::message::Role::User {
            Some(m.id.clone())
        } else {
            m.parent_id.clone()
        }
    }));
    ai_sdk::continue_values(previous.cloned(), values, base, &mut b);
    b.finish()
}

/// `import_transcript`, polling `aborted` between records.
pub fn import_transcript_with(text: &str, format: Option<Format>, aborted: &dyn Fn() -> bool) -> Result<Imported> {
    let mut warnings = Vec::new();
    let records = stream::decode_with(text, &mut warnings, aborted)?;
    if records.is_empty() {
        return Err(CfError::new(
            Code::UnknownFormat,
            if warnings.is_empty() {
                "the transcript is empty".to_string()
            } else {
                format!(
                    "the transcript holds no readable JSON value ({} malformed region(s), first at line {})",
                    warnings.len(),
                    warnings[0].line
                )
            },
        ));
    }
    let Some(guess) = format.or_else(|| detect::detect(&records)) else {
        return Err(CfError::new(
            Code::UnknownFormat,
            "could not recognise the transcript format; pass `format` explicitly",
        ));
    };
    let imported = import_as(guess, &records, warnings.clone(), aborted)?;
    // An empty conversation reads as nothing; a transcript with records, or with values the
    // format could not use, does not.
    let understood = imported.stats.records == 0 && imported.warnings.len() == warnings.len();
    if format.is_some() || !imported.messages.is_empty() || understood {
        return Ok(imported);
    }
    // Detection never settles on a format that reads no message from such a transcript: the
    // format that reads the most messages is taken instead, and said so.
    let mut best: Option<Imported> = None;
    for f in Format::ALL.into_iter().filter(|&f| f != guess) {
        let Ok(other) = import_as(f, &records, warnings.clone(), aborted) else {
            if aborted() {
                return Err(CfError::aborted());
            }
            continue;
        };
        if other.messages.len() > best.as_ref().map_or(0, |b| b.messages.len()) {
            best = Some(other);
        }
    }
    match best {
        Some(mut other) => {
            let message = format!(
                "read as {}: it looked like {}, which reads no message from it",
                other.format.as_str(),
                guess.as_str()
            );
            other.warnings.insert(0, Warning { line: 0, message });
            Ok(other)
        }
        None => {
            let first = imported.warnings.first().map(|w| format!("; first warning, line {}: {}", w.line, w.message));
            Err(CfError::new(
                Code::UnknownFormat,
                format!(
                    "read as {}, it gives no message ({} records{}), nor does any other format",
                    guess.as_str(),
                    imported.stats.records,
                    first.unwrap_or_default()
                ),
            ))
        }
    }
}

/// Reads decoded records as `format`.
fn import_as(
    format: Format,
    records: &[Record],
    warnings: Vec<Warning>,
    aborted: &dyn Fn() -> bool,
) -> Result<Imported> {
    let mut b = build::Builder::new(format, warnings);
    match format {
        Format::ClaudeCode => claude_code::import(records, &mut b, aborted)?,
        Format::Codex => codex::import(records, &mut b),
        Format::Pi => pi::import(records, &mut b),
        Format::Opencode => opencode::import(records, &mut b),
        Format::SweAgent => swe_agent::import_swe_agent(records, &mut b),
        Format::MiniSweAgent => swe_agent::import_mini(records, &mut b),
        Format::OpenHands => openhands::import(records, &mut b),
        Format::OpenAiChat | Format::KimiCli => openai_chat::import(records, &mut b),
        Format::CopilotCli => copilot::import(records, &mut b),
        Format::GeminiCli => gemini::import(records, &mut b),
        Format::AiSdk => ai_sdk::import(records, &mut b),
        Format::AiSdkUi => ai_sdk_ui::import(records, &mut b),
    }
    if aborted() {
        return Err(CfError::aborted());
    }
    Ok(b.finish())
}
