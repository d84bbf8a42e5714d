//! Token accounting: calibrated estimates, exact BPE counts, per-part counting.

mod count;
mod entry;
mod estimate;
mod exact;
mod slices;
mod tables;

pub use count::{message_total, Counter, MessageCount, PartCount, MESSAGE_OVERHEAD};
pub use entry::Entry;
pub use estimate::{estimate_tokens, Features};
pub use exact::{count_tokens, warm_up, Encoding};
pub use slices::count_tokens_in_slices;

/// How a session counts text locally.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokenizer {
    Exact(Encoding),
    Estimate,
}

impl Tokenizer {
    pub const ALL: [Tokenizer; 3] =
        [Tokenizer::Exact(Encoding::O200k), Tokenizer::Exact(Encoding::Cl100k), Tokenizer::Estimate];

    pub fn parse(name: &str) -> crate::error::Result<Self> {
        match name {
            "estimate" => Ok(Tokenizer::Estimate),
            other => Encoding::parse(other).map(Tokenizer::Exact),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Exact(Encoding::O200k) => "o200k",
            Tokenizer::Exact(Encoding::Cl100k) => "cl100k",
            Tokenizer::Estimate => "estimate",
        }
    }

    /// The version of this tokenizer's counts and of the rules `Counter` counts parts by: bumped
    /// whenever either changes (new tables, refitted weights, what a part counts), so counts a
    /// store recorded with another version are counted again.
    pub fn version(self) -> u32 {
        match self {
            Tokenizer::Exact(_) | Tokenizer::Estimate => 1,
        }
    }

    pub fn count(self, text: &str) -> u64 {
        match self {
            Tokenizer::Exact(enc) => count_tokens(text, enc),
            Tokenizer::Estimate => estimate_tokens(text),
        }
    }

    /// OpenAI-family models are counted exactly; everything else with the calibrated estimate.
    pub fn for_model(provider_id: &str, model_id: &str) -> Self {
        let m = model_id.to_ascii_lowercase();
        let openai_provider = provider_id.to_ascii_lowercase().contains("openai");
        let openai_model = ["gpt-", "o1", "o3", "o4", "codex", "chatgpt"]
            .iter()
            .any(|p| m.starts_with(p) || m.contains(&format!("/{p}")));
        if m.contains("gpt-3.5") || m.contains("gpt-4-") || m == "gpt-4" {
            Tokenizer::Exact(Encoding::Cl100k)
        } else if openai_provider || openai_model {
            Tokenizer::Exact(Encoding::O200k)
        } else {
            Tokenizer::Estimate
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_a_tokenizer_by_model() {
        assert_eq!(Tokenizer::for_model("openai", "gpt-5"), Tokenizer::Exact(Encoding::O200k));
        assert_eq!(Tokenizer::for_model("azure", "gpt-4o-mini"), Tokenizer::Exact(Encoding::O200k));
        assert_eq!(Tokenizer::for_model("openai", "gpt-4-turbo"), Tokenizer::Exact(Encoding::Cl100k));
        assert_eq!(Tokenizer::for_model("openrouter", "openai/o3"), Tokenizer::Exact(Encoding::O200k));
        assert_eq!(Tokenizer::for_model("anthropic", "claude-sonnet-4"), Tokenizer::Estimate);
        assert!(Tokenizer::parse("p50k").is_err());
    }
}
