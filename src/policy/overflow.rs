//! Usable window, overflow and pressure tiers.

use serde::Deserialize;

use super::{CompactionConfig, ModelInfo};
use crate::message::Usage;

/// Output cap assumed for any model (opencode's `OUTPUT_TOKEN_MAX`).
pub const OUTPUT_TOKEN_MAX: u64 = 32_000;

/// `min(limit.output, 32000)`, or 32000 when the model states no output limit.
pub fn max_output_tokens(model: &ModelInfo) -> u64 {
    match model.limit.output {
        Some(o) if o > 0 => o.min(OUTPUT_TOKEN_MAX),
        _ => OUTPUT_TOKEN_MAX,
    }
}

/// Tokens the context may hold before it overflows; 0 when the window is unknown.
///
/// Unlike opencode (issue #38835), an explicit `reserved` applies to models without an input limit
/// too: the window then keeps the larger of the output cap and `reserved` free.
pub fn usable(model: &ModelInfo, cfg: &CompactionConfig) -> u64 {
    if model.limit.context == 0 {
        return 0;
    }
    let max_out = max_output_tokens(model);
    match model.limit.input.filter(|i| *i > 0) {
        Some(input) => input.saturating_sub(cfg.reserved.unwrap_or(20_000.min(max_out))),
        None => model.limit.context.saturating_sub(max_out.max(cfg.reserved.unwrap_or(0))),
    }
}

/// The arguments of `usable`: a model and its compaction settings.
#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct UsableArgs {
    pub model: ModelInfo,
    #[serde(default, alias = "compaction")]
    #[cfg_attr(test, ts(as = "Option<CompactionConfig>", optional))]
    pub cfg: CompactionConfig,
}

impl UsableArgs {
    pub fn usable(&self) -> u64 {
        usable(&self.model, &self.cfg)
    }
}

/// A context size: a token count, or a provider's usage report (its `total`, else its parts).
#[derive(Deserialize)]
#[serde(untagged)]
pub enum ContextSize {
    Count(#[serde(deserialize_with = "super::options::limit")] u64),
    Usage(Usage),
}

/// The arguments of `isOverflow`: a context size against a model and its compaction settings.
#[derive(Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct OverflowArgs {
    #[cfg_attr(test, ts(type = "number | Usage"))]
    pub tokens: ContextSize,
    pub model: ModelInfo,
    #[serde(default, alias = "compaction")]
    #[cfg_attr(test, ts(as = "Option<CompactionConfig>", optional))]
    pub cfg: CompactionConfig,
}

impl OverflowArgs {
    pub fn is_overflow(&self) -> bool {
        let tokens = match &self.tokens {
            ContextSize::Count(n) => *n,
            ContextSize::Usage(u) => u.context_tokens(),
        };
        is_overflow(tokens, &self.model, &self.cfg)
    }
}

pub fn is_overflow(tokens: u64, model: &ModelInfo, cfg: &CompactionConfig) -> bool {
    if !cfg.auto || model.limit.context == 0 {
        return false;
    }
    tokens >= usable(model, cfg)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    Ok,
    /// ≥ 75% of usable: worth telling the user.
    Notice,
    /// ≥ 85%: run the cheap passes (prune), no LLM.
    Prune,
    /// ≥ 100%: compact.
    Compact,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Ok => "ok",
            Tier::Notice => "notice",
            Tier::Prune => "prune",
            Tier::Compact => "compact",
        }
    }
}

pub fn pressure_tier(pressure: f64) -> Tier {
    if pressure >= 1.0 {
        Tier::Compact
    } else if pressure >= 0.85 {
        Tier::Prune
    } else if pressure >= 0.75 {
        Tier::Notice
    } else {
        Tier::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::ModelLimit;

    fn model(context: u64, input: Option<u64>, output: Option<u64>) -> ModelInfo {
        ModelInfo { limit: ModelLimit { context, input, output }, ..Default::default() }
    }

    #[test]
    fn usable_follows_opencode() {
        let cfg = CompactionConfig::default();
        assert_eq!(usable(&model(200_000, None, Some(64_000)), &cfg), 168_000);
        assert_eq!(usable(&model(200_000, None, Some(8_000)), &cfg), 192_000);
        assert_eq!(usable(&model(200_000, None, None), &cfg), 168_000);
        assert_eq!(usable(&model(400_000, Some(272_000), Some(128_000)), &cfg), 252_000);
        assert_eq!(usable(&model(400_000, Some(272_000), Some(8_000)), &cfg), 264_000);
        assert_eq!(usable(&model(0, Some(1000), None), &cfg), 0);
        assert_eq!(usable(&model(10_000, None, None), &cfg), 0, "floored at 0");
        let reserved = CompactionConfig { reserved: Some(50_000), ..cfg.clone() };
        assert_eq!(usable(&model(200_000, None, Some(8_000)), &reserved), 150_000);
        assert_eq!(usable(&model(400_000, Some(272_000), None), &reserved), 222_000);
    }

    #[test]
    fn reads_a_count_or_a_usage_report() {
        let args = |v| crate::policy::parse_options::<OverflowArgs>("args", v).unwrap();
        let m = serde_json::json!({"limit": {"context": 200_000, "output": 64_000}});
        assert!(args(serde_json::json!({"tokens": 168_000, "model": m})).is_overflow());
        assert!(!args(serde_json::json!({"tokens": {"input": 100_000, "output": 67_999}, "model": m})).is_overflow());
        assert!(
            args(serde_json::json!({"tokens": {"input": 1, "output": 1, "total": 168_000}, "model": m})).is_overflow()
        );
        assert!(!args(serde_json::json!({"tokens": 168_000, "model": m, "cfg": {"auto": false}})).is_overflow());
        let usable = crate::policy::parse_options::<UsableArgs>(
            "args",
            serde_json::json!({"model": m, "compaction": {"reserved": 50_000}}),
        );
        assert_eq!(usable.unwrap().usable(), 150_000);
    }

    #[test]
    fn overflow_and_tiers() {
        let cfg = CompactionConfig::default();
        let m = model(200_000, None, Some(64_000));
        assert!(!is_overflow(167_999, &m, &cfg));
        assert!(is_overflow(168_000, &m, &cfg));
        assert!(!is_overflow(10_000_000, &model(0, None, None), &cfg));
        assert!(!is_overflow(10_000_000, &m, &CompactionConfig { auto: false, ..cfg }));
        assert_eq!(pressure_tier(0.5), Tier::Ok);
        assert_eq!(pressure_tier(0.75), Tier::Notice);
        assert_eq!(pressure_tier(0.9), Tier::Prune);
        assert_eq!(pressure_tier(1.0), Tier::Compact);
    }
}
