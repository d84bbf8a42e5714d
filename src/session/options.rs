use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::policy::{CompactionConfig, ModelInfo};
use crate::tokens::{Counter, Tokenizer};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct SessionOptions {
    pub model: ModelInfo,
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<CompactionConfig>", optional))]
    pub compaction: CompactionConfig,
    /// Default: exact o200k/cl100k for OpenAI-family models, the calibrated estimate otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "TokenizerName", optional))]
    pub tokenizer: Option<String>,
    /// The provider's prompt cache: its lifetime and prices (the cache-aware prune policy).
    #[serde(default)]
    #[cfg_attr(test, ts(as = "Option<crate::cost::CacheOptions>", optional))]
    pub cache: crate::cost::CacheOptions,
}

impl SessionOptions {
    /// What requests cost with the provider's cache: the `cache` options over the model's prices.
    pub fn cache_model(&self) -> crate::cost::CacheModel {
        crate::cost::CacheModel::resolve(&self.cache, self.model.cost.as_ref())
    }

    pub fn counter(&self) -> Result<Counter> {
        let tokenizer = match &self.tokenizer {
            Some(name) => Tokenizer::parse(name)?,
            None => Tokenizer::for_model(
                self.model.provider_id.as_deref().unwrap_or(""),
                self.model.model_id.as_deref().unwrap_or(""),
            ),
        };
        Ok(Counter {
            tokenizer,
            image_tokens: self.compaction.image_tokens,
            output_max_chars: self.compaction.tool_output_max_chars.map(|n| n as usize),
        })
    }
}
