//! How long a summary may be: scaled to what it replaces (Hermes), within bounds set by the window.

use crate::policy::{summary_ceiling, SUMMARY_FLOOR as FLOOR};

/// 20% of what is summarized under 10k tokens, 15% under 30k, 10% under 100k, 5% above; at least
/// 2,000 and at most min(5% of the window, 10,000) (never below the floor).
pub fn summary_budget(summarized: u64, context_window: u64) -> u64 {
    let share = match summarized {
        0..10_000 => 0.20,
        10_000..30_000 => 0.15,
        30_000..100_000 => 0.10,
        _ => 0.05,
    };
    ((summarized as f64 * share) as u64).clamp(FLOOR, summary_ceiling(context_window))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_with_what_is_summarized() {
        assert_eq!(summary_budget(5_000, 200_000), 2_000);
        assert_eq!(summary_budget(20_000, 200_000), 3_000);
        assert_eq!(summary_budget(60_000, 200_000), 6_000);
        assert_eq!(summary_budget(150_000, 200_000), 7_500);
        assert_eq!(summary_budget(500_000, 1_000_000), 10_000);
        assert_eq!(summary_budget(150_000, 100_000), 5_000);
        assert_eq!(summary_budget(150_000, 8_000), 2_000);
    }
}
