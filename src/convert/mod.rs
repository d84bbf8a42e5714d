//! What the model sees: conversion to AI SDK `ModelMessage`s (and from them to the Anthropic
//! Messages and OpenAI chat completions shapes), truncation, media stripping.

mod ai_sdk;
mod anthropic;
mod args;
pub mod cache;
mod model_messages;
mod openai;

use serde::Serialize;

pub use ai_sdk::{Json, BINARY_TAG};
pub use anthropic::{to_anthropic, to_anthropic_cached, AnthropicBlock, AnthropicMessage, AnthropicRequest};
pub use args::{CacheBreakpoints, ConvertArgs};
pub use model_messages::{
    to_model_messages, with_ends, with_ends_from, AssistantContent, CallIds, ContentItem, ConvertOptions, ModelMessage,
    Restored, ToolOutput, ToolResult, UserContent,
};
pub use openai::{to_openai, OpenAiMessage};

use crate::error::{CfError, Result};

/// The message shape `toModelMessages` returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModelFormat {
    /// AI SDK `ModelMessage[]`.
    #[default]
    AiSdk,
    /// Anthropic Messages API `{ system?, messages }`.
    Anthropic,
    /// OpenAI chat completions `messages`.
    OpenAi,
}

impl ModelFormat {
    pub const ALL: [ModelFormat; 3] = [ModelFormat::AiSdk, ModelFormat::Anthropic, ModelFormat::OpenAi];

    pub fn name(self) -> &'static str {
        match self {
            ModelFormat::AiSdk => "ai-sdk",
            ModelFormat::Anthropic => "anthropic",
            ModelFormat::OpenAi => "openai",
        }
    }

    pub fn parse(name: &str) -> Result<ModelFormat> {
        match name {
            "ai-sdk" => Ok(ModelFormat::AiSdk),
            "anthropic" => Ok(ModelFormat::Anthropic),
            "openai" => Ok(ModelFormat::OpenAi),
            other => Err(CfError::invalid_argument(format!(
                "options.format: unknown format {other:?} (expected 'ai-sdk', 'anthropic' or 'openai')"
            ))),
        }
    }
}

/// Converted messages in one of the supported shapes.
#[derive(Debug, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Converted<'a> {
    AiSdk(Vec<ModelMessage<'a>>),
    Anthropic(AnthropicRequest<'a>),
    OpenAi(Vec<OpenAiMessage<'a>>),
}

/// Reshapes AI SDK messages (which already keep every call next to its result) for `format`.
pub fn reshape<'a>(messages: Vec<ModelMessage<'a>>, format: ModelFormat) -> Converted<'a> {
    match format {
        ModelFormat::AiSdk => Converted::AiSdk(messages),
        ModelFormat::Anthropic => Converted::Anthropic(to_anthropic(messages)),
        ModelFormat::OpenAi => Converted::OpenAi(to_openai(messages)),
    }
}

/// `shown` (the messages the model sees) converted for `format`; for Anthropic with `cache`, with
/// cache breakpoints.
pub fn convert<'a>(
    shown: &[&'a crate::message::Message],
    opts: &ConvertOptions,
    format: ModelFormat,
    cache: Option<&cache::CacheControl>,
) -> Converted<'a> {
    match (format, cache) {
        (ModelFormat::Anthropic, Some(control)) => Converted::Anthropic(to_anthropic_cached(shown, opts, control)),
        _ => reshape(to_model_messages(shown.iter().copied(), opts), format),
    }
}

/// Pieces both provider shapes need.
mod shared {
    use std::borrow::Cow;

    use serde_json::{Map, Value};

    /// `(mediaType, base64)` of a base64 `data:` URL.
    pub fn base64_parts(url: &str) -> Option<(&str, &str)> {
        url.strip_prefix("data:")?.split_once(";base64,")
    }

    /// Providers want tool input as an object: anything else is wrapped as `{ input: value }`.
    pub fn object_input<'a>(input: Cow<'a, Value>) -> Cow<'a, Value> {
        if input.is_object() {
            input
        } else {
            let mut o = Map::new();
            o.insert("input".into(), input.into_owned());
            Cow::Owned(Value::Object(o))
        }
    }
}
