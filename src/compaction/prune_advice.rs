//! Whether a prune pays now, read from a history: the terms of `cost::advise_prune`.

use super::summary_budget;
use crate::cost::{advise_prune, PruneAdvice, PruneCase};
use crate::session::{History, PruneOutcome};

/// The decision, the terms it weighed, and the prune it is about (a dry run).
#[derive(Clone, Debug, PartialEq)]
pub struct PruneDecision {
    pub advice: PruneAdvice,
    pub case: PruneCase,
    pub prune: PruneOutcome,
}

/// `now`: the time to judge the cache's age by (default: the newest message's own time).
/// `threshold`: the tokens at which a compaction runs (default: the usable window).
pub fn decide_prune(h: &mut History, now: Option<f64>, threshold: Option<u64>) -> PruneDecision {
    let prune = h.prune_dry_run();
    let model = h.options().cache_model();
    let usage = h.usage();
    let threshold = threshold.unwrap_or(usage.usable);
    let sent = h.last_sent();
    let now = now.or_else(|| h.message_time());
    let warm = match (sent, now) {
        (Some(s), Some(now)) => now - s.at <= model.ttl_ms,
        // Nothing sent yet: no cache to break.
        (None, _) => false,
        (Some(_), None) => true,
    };
    // The part of the last request from the first change on: messages appended since are new to
    // the provider either way.
    let unsent = sent.map_or(0, |s| {
        let e = h.entries();
        e[s.len.min(e.len())..].iter().map(|e| e.tokens).sum::<u64>()
    });
    let rewritten =
        if prune.first_changed.is_some() { prune.tokens_from_first_changed.saturating_sub(unsent) } else { 0 };
    let tail = h.select().tail_tokens;
    let summary = summary_budget(usage.tokens.saturating_sub(tail), h.options().model.limit.context);
    let case = PruneCase {
        freed: prune.tokens_freed,
        rewritten,
        warm,
        context: usage.tokens,
        threshold,
        after_compaction: h.overhead() + tail + summary,
        growth: h.growth_per_request(),
        summary_output: summary,
        unsent,
    };
    PruneDecision { advice: advise_prune(&case, &model), case, prune }
}
