//! How full the context is: provider usage where it can be trusted, local counts for the rest.

use crate::policy::Tier;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Provider usage of the newest answer, nothing after it.
    Usage,
    /// Local counts only (no trusted usage since the last summary).
    Estimate,
    /// Provider usage plus local counts of the messages after it.
    Mixed,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Usage => "usage",
            Source::Estimate => "estimate",
            Source::Mixed => "mixed",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ContextUsage {
    pub tokens: u64,
    pub usable: u64,
    pub pressure: f64,
    pub tier: Tier,
    pub source: Source,
    /// The provider-reported part of `tokens`.
    pub usage_tokens: u64,
    /// The locally counted part of `tokens` (after calibration).
    pub local_tokens: u64,
    /// Ratio applied to local estimates, learned from provider usage (1 with exact tokenizers).
    pub calibration: f64,
}

/// Learns how far local estimates are from the provider's tokenizer. Two usage reports give the
/// provider's growth between them; dividing by the local growth cancels the fixed system-prompt and
/// tool-definition overhead that a single report would fold in.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    pub factor: f64,
    samples: u32,
    /// (position, provider prompt tokens, local tokens before it) of the last report.
    last: Option<(usize, u64, u64)>,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration { factor: 1.0, samples: 0, last: None }
    }
}

/// Local growth below this is too small to learn from.
const MIN_GROWTH: u64 = 1_000;

impl Calibration {
    pub fn observe(&mut self, position: usize, prompt_tokens: u64, local_before: u64) {
        if let Some((p, prompt, local)) = self.last {
            if position > p && local_before >= local + MIN_GROWTH && prompt_tokens > prompt {
                let sample = ((prompt_tokens - prompt) as f64 / (local_before - local) as f64).clamp(0.5, 3.0);
                self.factor = if self.samples == 0 { sample } else { (self.factor + sample) / 2.0 };
                self.samples += 1;
            }
        }
        self.last = Some((position, prompt_tokens, local_before));
    }

    /// After a compaction or a prune, the next report starts a new baseline.
    pub fn rebase(&mut self) {
        self.last = None;
    }

    pub fn apply(&self, tokens: u64) -> u64 {
        (tokens as f64 * self.factor).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_the_slope_not_the_overhead() {
        let mut c = Calibration::default();
        // 10k of system prompt, provider counts 1.2 tokens per local token.
        c.observe(3, 10_000 + 12_000, 10_000);
        assert_eq!(c.factor, 1.0);
        c.observe(9, 10_000 + 24_000, 20_000);
        assert!((c.factor - 1.2).abs() < 1e-9);
        c.rebase();
        c.observe(12, 5_000, 4_000);
        assert!((c.factor - 1.2).abs() < 1e-9);
        assert_eq!(c.apply(1000), 1200);
    }
}
