//! `toModelMessages` options as JS passes them, and what they resolve to.

use serde::Deserialize;

use super::cache::CacheControl;
use super::{ConvertOptions, ModelFormat};
use crate::error::{CfError, Result};

/// Options of `toModelMessages`; unset fields fall back to the session's settings.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields, rename = "ConvertFields"))]
#[serde(rename_all = "camelCase", default)]
pub struct ConvertArgs {
    /// Replace images and PDFs with `[Attached <mime>: <filename>]`.
    pub strip_media: Option<bool>,
    /// `'ai-sdk'` (default): `ModelMessage[]`; `'anthropic'`: `AnthropicRequest`; `'openai'`:
    /// `OpenAIChatMessage[]`.
    #[cfg_attr(test, ts(type = "ModelFormat", optional))]
    pub format: Option<String>,
    /// Cut tool outputs longer than this, keeping head and tail with an "omitted N chars" marker.
    #[serde(deserialize_with = "crate::policy::opt_limit")]
    pub tool_output_max_chars: Option<u64>,
    /// `format: 'anthropic'`: `cache_control` breakpoints after the system prompt, the newest
    /// summary, the newest prune mark and at the end, at most 4 with those the messages' AI SDK
    /// `providerOptions` set (always kept). Default `true` (`{ type: 'ephemeral' }`); `{ ttl: '1h' }`
    /// for the 1-hour cache; `false` for none.
    #[cfg_attr(test, ts(type = "boolean | { ttl?: '5m' | '1h' }", optional))]
    pub cache_breakpoints: Option<CacheBreakpoints>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum CacheBreakpoints {
    On(bool),
    With(CacheControl),
}

impl ConvertArgs {
    pub fn model_format(&self) -> Result<ModelFormat> {
        self.format.as_deref().map_or(Ok(Default::default()), ModelFormat::parse)
    }

    /// The `cache_control` breakpoints carry (on unless turned off).
    pub fn cache_control(&self) -> Result<Option<CacheControl>> {
        match &self.cache_breakpoints {
            None | Some(CacheBreakpoints::On(true)) => Ok(Some(Default::default())),
            Some(CacheBreakpoints::On(false)) => Ok(None),
            Some(CacheBreakpoints::With(c)) => match c.ttl.as_deref() {
                None | Some("5m" | "1h") => Ok(Some(c.clone())),
                Some(other) => Err(CfError::invalid_argument(format!(
                    "options.cacheBreakpoints.ttl: {other:?} (expected '5m' or '1h')"
                ))),
            },
        }
    }

    /// These options over the session's.
    pub fn over(self, base: ConvertOptions) -> ConvertOptions {
        ConvertOptions {
            strip_media: self.strip_media.unwrap_or(base.strip_media),
            tool_output_max_chars: self.tool_output_max_chars.map(|n| n as usize).or(base.tool_output_max_chars),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::policy::parse_options;

    fn args(v: serde_json::Value) -> ConvertArgs {
        parse_options("options", v).unwrap()
    }

    #[test]
    fn resolves_format_breakpoints_and_session_defaults() {
        assert_eq!(args(json!({})).model_format().unwrap(), ModelFormat::AiSdk);
        assert_eq!(args(json!({"format": "openai"})).model_format().unwrap(), ModelFormat::OpenAi);
        assert!(args(json!({"format": "gemini"})).model_format().is_err());
        assert_eq!(args(json!({})).cache_control().unwrap(), Some(CacheControl::default()));
        assert_eq!(args(json!({"cacheBreakpoints": false})).cache_control().unwrap(), None);
        let hour = args(json!({"cacheBreakpoints": {"ttl": "1h"}})).cache_control().unwrap().unwrap();
        assert_eq!(hour.ttl.as_deref(), Some("1h"));
        assert!(args(json!({"cacheBreakpoints": {"ttl": "1d"}})).cache_control().is_err());
        let base = ConvertOptions { strip_media: true, tool_output_max_chars: Some(100) };
        let over = args(json!({"toolOutputMaxChars": 50})).over(base.clone());
        assert_eq!(over, ConvertOptions { strip_media: true, tool_output_max_chars: Some(50) });
        assert_eq!(args(json!({})).over(base.clone()), base);
    }
}
