use serde::{Deserialize, Serialize};

use crate::error::{CfError, Result};

/// The model's token limits.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct ModelLimit {
    #[serde(deserialize_with = "crate::policy::options::limit")]
    pub context: u64,
    #[serde(default, deserialize_with = "crate::policy::options::opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    #[serde(default, deserialize_with = "crate::policy::options::opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
}

/// The model a session runs on: its window, and its prices for the cache-aware prune policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct ModelInfo {
    #[serde(rename = "providerID", default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    #[serde(rename = "modelID", default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    pub limit: ModelLimit,
    /// Prices in USD per million tokens (the model catalog's), for the cache-aware prune policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::Prices>,
}

/// Compaction settings; every field has opencode's default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionConfig {
    /// Overflow triggers compaction (default true; false: `isOverflow` is always false).
    pub auto: bool,
    /// When the auto-compactor prunes old tool output (default `'cache'`; `true` is `'tier'`,
    /// `false` is `'never'`).
    #[cfg_attr(test, ts(type = "PrunePolicy | boolean"))]
    pub prune: PrunePolicy,
    /// Headroom kept free below the window (default min(20000, max output)).
    #[serde(deserialize_with = "opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved: Option<u64>,
    /// Token budget of the verbatim tail (default clamp(usable × 0.25, 2000, 15000)).
    #[serde(deserialize_with = "opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preserve_recent_tokens: Option<u64>,
    /// At most this many recent turns are kept verbatim; 0 or less keeps none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail_turns: Option<i64>,
    /// Newest tool output, in tokens, that prune never clears (default 40000 in a window of 200k
    /// or more, scaled down with a smaller one: see `prune_limits`).
    #[serde(deserialize_with = "opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prune_protect: Option<u64>,
    /// Prune skips the last two user turns, but no more than this many answers (steps) of them, so
    /// a long tool loop on one request prunes too (default 10, scaled down like `prune_protect`,
    /// at least 2).
    #[serde(deserialize_with = "opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prune_protect_steps: Option<u64>,
    /// Prune only if it frees more than this, net of the markers left in place (default 20000,
    /// scaled down like `prune_protect`).
    #[serde(deserialize_with = "opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prune_minimum: Option<u64>,
    /// Tools whose output is never pruned (default `['skill']`).
    pub protected_tools: Vec<String>,
    /// Cut tool outputs longer than this in model messages, keeping head and tail (default off).
    #[serde(deserialize_with = "opt_limit")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_output_max_chars: Option<u64>,
    /// Fixed token cost of an image or PDF (default 1200).
    #[serde(deserialize_with = "limit")]
    pub image_tokens: u64,
    /// Replace credentials and high-entropy strings by `[REDACTED:<kind>]` in what a summarizer
    /// reads: the transcript, the previous summary, the facts (default true).
    pub redact_secrets: bool,
    /// Prune: an output identical to a later one becomes a stub pointing at it (default false).
    pub prune_duplicates: bool,
    /// Prune: an older read of a file whose later read returned the same content becomes a stub
    /// (default false).
    pub prune_rereads: bool,
    /// Prune: an older read of a file modified afterwards is marked stale, its content cleared
    /// (default false).
    pub prune_stale_reads: bool,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            auto: true,
            prune: PrunePolicy::Cache,
            reserved: None,
            preserve_recent_tokens: None,
            tail_turns: None,
            prune_protect: None,
            prune_protect_steps: None,
            prune_minimum: None,
            protected_tools: vec!["skill".to_string()],
            tool_output_max_chars: None,
            image_tokens: 1_200,
            redact_secrets: true,
            prune_duplicates: false,
            prune_rereads: false,
            prune_stale_reads: false,
        }
    }
}

/// The age prune's thresholds in effect (see `CompactionConfig::prune_limits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PruneLimits {
    pub protect: u64,
    pub protect_steps: u64,
    pub minimum: u64,
}

impl CompactionConfig {
    /// The prune thresholds for a window of `context` tokens. opencode's numbers (40,000 tokens
    /// protected, 20,000 the least worth clearing, 10 steps) are for windows of 200k: a smaller
    /// window scales them down with it, or a 32k window would never prune. Explicit numbers stay.
    pub fn prune_limits(&self, context: u64) -> PruneLimits {
        let share = if context == 0 { 1.0 } else { (context as f64 / 200_000.0).min(1.0) };
        let scaled = |n: u64| (n as f64 * share) as u64;
        PruneLimits {
            protect: self.prune_protect.unwrap_or_else(|| scaled(40_000)),
            protect_steps: self.prune_protect_steps.unwrap_or_else(|| ((10.0 * share).ceil() as u64).max(2)),
            minimum: self.prune_minimum.unwrap_or_else(|| scaled(20_000)),
        }
    }
}

/// When the auto-compactor prunes old tool output: `'cache'` (default) where what it saves over
/// the requests expected to follow outweighs the provider cache it breaks (`Session.decidePrune`);
/// `'opencode'` after every step; `'tier'` (or `true`) at the `prune` pressure tier; `'never'` (or
/// `false`) never.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PrunePolicy {
    /// Where the tokens it saves over the requests expected to follow outweigh the cache it breaks.
    #[default]
    Cache,
    /// After every step (opencode's rule).
    Opencode,
    /// At the `prune` pressure tier and above (the rule before the cache-aware one).
    Tier,
    /// Never: compaction only.
    Never,
}

impl<'de> Deserialize<'de> for PrunePolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Name(String),
        }
        Ok(match Raw::deserialize(d)? {
            Raw::Flag(true) => PrunePolicy::Tier,
            Raw::Flag(false) => PrunePolicy::Never,
            Raw::Name(n) => match n.as_str() {
                "cache" => PrunePolicy::Cache,
                "opencode" => PrunePolicy::Opencode,
                "tier" => PrunePolicy::Tier,
                "never" => PrunePolicy::Never,
                other => {
                    return Err(serde::de::Error::custom(format!(
                        "must be 'cache', 'opencode', 'tier', 'never' or a boolean, got {other:?}"
                    )))
                }
            },
        })
    }
}

pub(crate) fn limit<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    let n = f64::deserialize(d)?;
    if !n.is_finite() || n < 0.0 {
        return Err(serde::de::Error::custom(format!("must be a finite number >= 0, got {n}")));
    }
    Ok(n as u64)
}

pub(crate) fn opt_limit<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<u64>, D::Error> {
    Option::<f64>::deserialize(d)?
        .map(|n| {
            if !n.is_finite() || n < 0.0 {
                Err(serde::de::Error::custom(format!("must be a finite number >= 0, got {n}")))
            } else {
                Ok(n as u64)
            }
        })
        .transpose()
}

/// Deserializes an options object, naming the field that is wrong (`CF_INVALID_ARGUMENT`).
pub fn parse_options<T: serde::de::DeserializeOwned>(what: &str, value: serde_json::Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            CfError::invalid_argument(format!("{what}: {}", e.inner()))
        } else {
            CfError::invalid_argument(format!("{what}.{path}: {}", e.inner()))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prune_limits_scale_with_a_window_under_200k_unless_given() {
        let c = CompactionConfig::default();
        assert_eq!(c.prune_limits(1_000_000), PruneLimits { protect: 40_000, protect_steps: 10, minimum: 20_000 });
        assert_eq!(c.prune_limits(32_000), PruneLimits { protect: 6_400, protect_steps: 2, minimum: 3_200 });
        assert_eq!(c.prune_limits(128_000), PruneLimits { protect: 25_600, protect_steps: 7, minimum: 12_800 });
        let given: CompactionConfig =
            parse_options("compaction", json!({"pruneProtect": 20_000, "pruneMinimum": 0, "pruneProtectSteps": 4}))
                .unwrap();
        assert_eq!(given.prune_limits(32_000), PruneLimits { protect: 20_000, protect_steps: 4, minimum: 0 });
    }

    #[test]
    fn fills_defaults_and_names_bad_fields() {
        let c: CompactionConfig = parse_options("compaction", json!({"tailTurns": 2})).unwrap();
        assert_eq!(c.prune_limits(200_000), PruneLimits { protect: 40_000, protect_steps: 10, minimum: 20_000 });
        assert_eq!(c.tail_turns, Some(2));
        let e = parse_options::<CompactionConfig>("compaction", json!({"reserved": -5})).unwrap_err();
        assert_eq!(e.code, crate::error::Code::InvalidArgument);
        assert!(e.message.starts_with("compaction.reserved: must be a finite number"), "{}", e.message);
        let e = parse_options::<ModelInfo>("model", json!({"limit": {}})).unwrap_err();
        assert_eq!(e.message, "model.limit: missing field `context`");
    }
}
