//! Whether a prune pays: what it saves on the requests that follow against the cache it breaks.
//!
//! Between compactions the context grows by `g` tokens a request, from `S` (right after a
//! compaction) to `T` (the threshold), then drops back: a sawtooth whose mean is `(S + T) / 2`.
//! Clearing `F` tokens at `c` makes each request until the next compaction read `F` fewer, but
//! postpones that compaction by `F / g` requests, spent near `T` instead of near `S`. Over a long
//! task the difference in tokens read is `F (S + T + F − 2c) / 2g` (positive: fewer), and the
//! postponed compactions save `F / (T − S)` of one compaction's cost `B`. Against that, a warm
//! cache makes the provider write again, instead of reading, the part of the last request from
//! the first cleared output on, as the prune leaves it: `R (write − read)`. So pruning pays early in a cycle and never
//! just below the threshold, whatever the provider; with no cache (`read = write = input`) the
//! break costs nothing and the first term decides alone.

use super::CacheModel;

/// What the decision weighs, in tokens (see the module notes for the symbols).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PruneCase {
    /// `F`: tokens the prune frees (net of the markers left in place).
    pub freed: u64,
    /// `R`: tokens of the last request from the first message the prune changes on, as the
    /// prune leaves them (0 when the prune changes nothing that was sent).
    pub rewritten: u64,
    /// The last request is still in the provider's cache (younger than its lifetime).
    pub warm: bool,
    /// `c`: tokens in the context now.
    pub context: u64,
    /// `T`: tokens at which a compaction runs.
    pub threshold: u64,
    /// `S`: expected tokens right after a compaction (summary, kept tail, system and tools).
    pub after_compaction: u64,
    /// `g`: tokens a request adds, on average.
    pub growth: u64,
    /// `O`: the summary's output budget.
    pub summary_output: u64,
    /// Tokens of the context the provider has not received yet (appended since the last request).
    pub unsent: u64,
    /// `P`: tokens the tail a compaction keeps holds by its budget (`preserveRecentTokens`).
    pub tail_budget: u64,
    /// Tokens of unread messages the tail keeps past its budget (a quarter of the usable window).
    pub unread_cap: u64,
}

/// The decision and its terms, in USD (prices per million tokens).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PruneAdvice {
    pub prune: bool,
    /// What the requests that follow save (negative: pruning makes them cost more).
    pub saving: f64,
    /// What breaking the cache costs now.
    pub cost: f64,
    /// What sending the context as it is costs now: the part the last request sent read from the
    /// cache while it is warm, the rest written to it.
    pub next_request: f64,
    /// What one compaction costs (`B`): the summary call reading the context, its output, and the
    /// compacted context written once.
    pub compaction: f64,
    /// The compaction threshold that costs least per request (see `cheapest_threshold`).
    pub cheapest_threshold: u64,
    /// A compaction due at the threshold costs less one request later (see `defer_compaction`).
    pub defer_compaction: bool,
}

const PER_TOKEN: f64 = 1e-6;

/// The shortest cycle between compactions, as a share of one that runs to the threshold.
const MIN_CYCLE: f64 = 0.6;

pub fn advise_prune(case: &PruneCase, m: &CacheModel) -> PruneAdvice {
    let f = case.freed as f64;
    let c = case.context as f64;
    let t = case.threshold as f64;
    let s = (case.after_compaction as f64).min(t);
    let g = case.growth.max(1) as f64;
    // Each following request reads the context: from the cache when there is one.
    let per_request = if m.caches() { m.read } else { m.input };
    let mut saving = per_request * f * (s + t + f - 2.0 * c) / (2.0 * g);
    // One compaction: the summary call reads the context, writes the summary, and the provider
    // writes the compacted context once.
    let compaction = s * m.write + t * per_request + case.summary_output as f64 * m.output;
    if t - s > g {
        saving += compaction * f / (t - s);
    }
    let cost = if case.warm { case.rewritten as f64 * (m.write - m.read).max(0.0) } else { 0.0 };
    let unsent = case.unsent.min(case.context) as f64;
    let next_request = if case.warm { (c - unsent) * m.read + unsent * m.write } else { c * m.write };
    PruneAdvice {
        cheapest_threshold: cheapest_threshold(case, m),
        defer_compaction: defer_compaction(case),
        prune: case.freed > 0 && saving > cost,
        saving: saving * PER_TOKEN,
        cost: cost * PER_TOKEN,
        next_request: next_request * PER_TOKEN,
        compaction: compaction * PER_TOKEN,
    }
}

/// The threshold `T` that makes the sawtooth cheapest per request: reading `(S + T) / 2` on average
/// against one compaction `B` every `(T − S) / g` requests gives `T = S + sqrt(2 g B / read)`. It is
/// kept between `S + 0.6 (threshold − S)` and the threshold itself, so a cycle is at least 0.6 of
/// one at the threshold and compactions come at most 1/0.6 ≈ 1.67× as often (under twice as often
/// in a task, whole compactions counted): each summary loses detail, and that is not priced here.
pub fn cheapest_threshold(case: &PruneCase, m: &CacheModel) -> u64 {
    let t = case.threshold as f64;
    let s = (case.after_compaction as f64).min(t);
    let per_request = if m.caches() { m.read } else { m.input };
    if per_request <= 0.0 || t <= s {
        return case.threshold;
    }
    let g = case.growth.max(1) as f64;
    // B at the candidate threshold reads `T` in the summary call: solve with B at the threshold
    // (an upper bound, so the result errs towards compacting later).
    let compaction = s * m.write + t * per_request + case.summary_output as f64 * m.output;
    let best = s + (2.0 * g * compaction / per_request).sqrt();
    best.clamp(s + MIN_CYCLE * (t - s), t) as u64
}

/// Whether a compaction due at the threshold (`c >= T`, the window not reached) costs less one
/// request later. The newest `U` tokens (`unsent`, the step that just arrived) have not been read by
/// the model, so a compaction now keeps them in the tail (up to `unread_cap`; beyond it, it
/// summarizes an output the model never saw, and the agent will run the tool again). Waiting sends
/// the context once more, then compacts with the model having read them: the tail no longer needs
/// them once the next step (`g` tokens on average) leaves them outside its budget `P`. Request by
/// request, waiting reads `c − S − U` more at the next request and `U` less at each of the about
/// `k = (T − S) / g` that follow until the next compaction (the summary request reads `U` more from
/// the cache, the writes are the same), so it pays when `U k > c − S`: right at the threshold, a
/// step larger than a request's average growth. Prices cancel out. Whether one more request fits
/// the window is the caller's to check.
pub fn defer_compaction(case: &PruneCase) -> bool {
    if case.unsent == 0 || case.context < case.threshold {
        return false;
    }
    let u = case.unsent.min(case.context);
    if u + case.growth <= case.tail_budget {
        return false; // the tail keeps it either way
    }
    if u > case.unread_cap {
        return true; // compacting now summarizes it unread
    }
    let s = case.after_compaction.min(case.threshold) as f64;
    let k = (case.threshold as f64 - s) / case.growth.max(1) as f64;
    u as f64 * k > case.context as f64 - s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::{CacheModel, CacheOptions, Prices, DEFAULT_PRICES};

    fn anthropic() -> CacheModel {
        CacheModel::resolve(&CacheOptions::default(), Some(&DEFAULT_PRICES))
    }

    fn no_cache() -> CacheModel {
        let p = Prices { input: 1.0, output: 5.0, cache_read: None, cache_write: None, cache_write_1h: None };
        CacheModel::resolve(&CacheOptions::default(), Some(&p))
    }

    fn case(context: u64, warm: bool) -> PruneCase {
        PruneCase {
            freed: 30_000,
            rewritten: 100_000,
            warm,
            context,
            threshold: 180_000,
            after_compaction: 30_000,
            growth: 2_000,
            summary_output: 8_000,
            unsent: 4_000,
            tail_budget: 15_000,
            unread_cap: 45_000,
        }
    }

    #[test]
    fn never_pays_just_below_the_threshold() {
        for m in [anthropic(), no_cache()] {
            for warm in [true, false] {
                let a = advise_prune(&case(175_000, warm), &m);
                assert!(!a.prune && a.saving < 0.0, "{a:?}");
            }
        }
    }

    #[test]
    fn pays_early_in_a_cycle_with_a_cold_cache_or_none() {
        assert!(advise_prune(&case(60_000, false), &anthropic()).prune);
        assert!(advise_prune(&case(60_000, true), &no_cache()).prune);
    }

    #[test]
    fn a_warm_cache_raises_the_bar() {
        let m = anthropic();
        let cold = advise_prune(&case(90_000, false), &m);
        let warm = advise_prune(&case(90_000, true), &m);
        assert_eq!(cold.saving, warm.saving);
        assert_eq!(cold.cost, 0.0);
        assert!((warm.cost - 100_000.0 * (1.25 - 0.1) * 1e-6).abs() < 1e-12, "{warm:?}");
        // A prune that changes only what was never sent breaks nothing.
        let unsent = advise_prune(&PruneCase { rewritten: 0, ..case(90_000, true) }, &m);
        assert_eq!(unsent.cost, 0.0);
    }

    #[test]
    fn prices_the_next_request_by_the_cache() {
        let m = anthropic();
        let warm = advise_prune(&case(90_000, true), &m);
        assert!((warm.next_request - (86_000.0 * 0.1 + 4_000.0 * 1.25) * 1e-6).abs() < 1e-12);
        let cold = advise_prune(&case(90_000, false), &m);
        assert!((cold.next_request - 90_000.0 * 1.25 * 1e-6).abs() < 1e-12);
        assert!(warm.compaction > 0.0 && warm.compaction == cold.compaction);
    }

    #[test]
    fn the_cheapest_threshold_keeps_cycles_at_least_0_6_long() {
        let m = anthropic();
        let mut c = case(90_000, true);
        // Small growth: compacting early pays, down to 0.6 of the cycle and no further.
        c.growth = 200;
        assert_eq!(advise_prune(&c, &m).cheapest_threshold, 30_000 + 90_000);
        // Large growth: compactions come fast anyway; the threshold stays where it is.
        c.growth = 50_000;
        assert_eq!(advise_prune(&c, &m).cheapest_threshold, 180_000);
        // In between: S + sqrt(2 g B / read).
        c.growth = 5_000;
        let b = 30_000.0 * 1.25 + 180_000.0 * 0.1 + 8_000.0 * 5.0;
        let want = 30_000.0 + (2.0 * 5_000.0 * b / 0.1_f64).sqrt();
        assert_eq!(advise_prune(&c, &m).cheapest_threshold, want as u64);
    }

    #[test]
    fn a_compaction_waits_for_the_model_to_read_a_large_step() {
        // T = 180k, S = 30k, g = 2k: k = 75 requests; at c = 185k waiting pays from U > 155k / 75.
        let due = PruneCase { context: 185_000, tail_budget: 15_000, unread_cap: 45_000, ..case(0, true) };
        let wait = |unsent| defer_compaction(&PruneCase { unsent, ..due });
        assert!(!wait(12_000), "the budgeted tail keeps it after one more step anyway");
        assert!(wait(14_000));
        let small = PruneCase { tail_budget: 0, ..due };
        assert!(defer_compaction(&PruneCase { unsent: 2_100, ..small }));
        assert!(!defer_compaction(&PruneCase { unsent: 2_000, ..small }), "no larger than a request's growth");
        // Past the cap the tail does not keep it: compacting now would summarize it unread.
        assert!(defer_compaction(&PruneCase { unsent: 46_000, growth: 1, ..due }));
        // Nothing unread, or not due yet: nothing to wait for.
        assert!(!wait(0));
        assert!(!defer_compaction(&PruneCase { unsent: 50_000, context: 170_000, ..due }));
        assert!(advise_prune(&PruneCase { unsent: 30_000, ..due }, &anthropic()).defer_compaction);
    }

    #[test]
    fn nothing_to_free_is_never_a_prune() {
        let a = advise_prune(&PruneCase { freed: 0, ..case(10_000, false) }, &anthropic());
        assert!(!a.prune);
    }

    #[test]
    fn resolves_prices_and_lifetimes() {
        let long = CacheOptions { ttl: Some(3_600_000.0), prices: None };
        let m = CacheModel::resolve(&long, None);
        assert_eq!((m.read, m.write), (0.1, 2.0));
        let openai =
            Prices { input: 2.5, output: 10.0, cache_read: Some(1.25), cache_write: None, cache_write_1h: None };
        let m = CacheModel::resolve(&CacheOptions::default(), Some(&openai));
        assert_eq!((m.read, m.write), (1.25, 2.5));
        assert!(m.caches() && !no_cache().caches());
    }
}
