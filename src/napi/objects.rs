//! Small results returned to JS as typed objects.

use napi_derive::napi;

use crate::compaction::PruneDecision as CoreDecision;
use crate::policy::{Rule, Selection as CoreSelection, Turn as CoreTurn};
use crate::session::{ContextUsage as CoreUsage, PruneOutcome, Sent};

#[napi(object)]
pub struct ContextUsage {
    /// Tokens in the context now.
    pub tokens: f64,
    /// Tokens the context may hold before it overflows (0: unknown window).
    pub usable: f64,
    /// tokens / usable.
    pub pressure: f64,
    #[napi(ts_type = "'ok' | 'notice' | 'prune' | 'compact'")]
    pub tier: String,
    /// Where `tokens` comes from: provider usage, local counts, or both.
    #[napi(ts_type = "'usage' | 'estimate' | 'mixed'")]
    pub source: String,
    /// The provider-reported part of `tokens`.
    pub usage_tokens: f64,
    /// The locally counted part of `tokens`.
    pub local_tokens: f64,
    /// Factor applied to local estimates, learned from provider usage (1 when counting exactly).
    pub calibration: f64,
}

impl From<CoreUsage> for ContextUsage {
    fn from(u: CoreUsage) -> Self {
        ContextUsage {
            tokens: u.tokens as f64,
            usable: u.usable as f64,
            pressure: u.pressure,
            tier: u.tier.as_str().to_string(),
            source: u.source.as_str().to_string(),
            usage_tokens: u.usage_tokens as f64,
            local_tokens: u.local_tokens as f64,
            calibration: u.calibration,
        }
    }
}

#[napi(object)]
pub struct PruneResult {
    #[napi(js_name = "prunedPartIDs")]
    pub pruned_part_ids: Vec<String>,
    /// The message holding each pruned part, in the same order.
    #[napi(js_name = "messageIDs")]
    pub message_ids: Vec<String>,
    pub tokens_freed: f64,
    /// The mark written to each pruned output's `compactedAt`.
    pub compacted_at: f64,
    /// For each pruned part, the stub a microcompact rule put in its place (`null`: cleared by
    /// age); pass it on to `SessionFile.prune` so a load shows the same.
    #[napi(ts_type = "Array<string | null>")]
    pub stubs: Vec<Option<String>>,
    /// Parts and tokens each rule cleared: `age`, `duplicate`, `reread`, `stale`.
    pub rules: PruneRules,
    /// The first context message the prune changes: the provider's cached prefix ends there.
    #[napi(js_name = "firstChangedID")]
    pub first_changed_id: Option<String>,
    /// Tokens of the context from that message on, after the prune: what the next request sends
    /// again instead of reading it from the cache.
    pub tokens_from_first_changed: f64,
    /// The context's tokens after the prune, as `usage().tokens` says them (after a dry run: will
    /// say them once it is done).
    pub tokens_after: f64,
    /// True for `prune({ dryRun: true })`: nothing was changed.
    pub dry_run: bool,
}

#[napi(object)]
#[derive(Default)]
pub struct RuleCount {
    pub parts: f64,
    pub tokens: f64,
}

#[napi(object)]
#[derive(Default)]
pub struct PruneRules {
    /// Old output cleared by age (opencode's prune).
    pub age: RuleCount,
    /// Outputs identical to a later one.
    pub duplicate: RuleCount,
    /// Reads whose later read returned the same content.
    pub reread: RuleCount,
    /// Reads of a file modified afterwards.
    pub stale: RuleCount,
    /// Outputs the model had not read yet, cut (head and tail kept) to fit the window
    /// (`Session.cutUnread`).
    pub fit: RuleCount,
}

impl From<PruneOutcome> for PruneResult {
    fn from(p: PruneOutcome) -> Self {
        PruneResult {
            pruned_part_ids: p.part_ids,
            message_ids: p.message_ids,
            tokens_freed: p.tokens_freed as f64,
            compacted_at: p.compacted_at,
            rules: {
                let mut r = PruneRules::default();
                for (rule, c) in &p.rules {
                    let slot = match rule {
                        Rule::Age => &mut r.age,
                        Rule::Duplicate => &mut r.duplicate,
                        Rule::Reread => &mut r.reread,
                        Rule::Stale => &mut r.stale,
                        Rule::Fit => &mut r.fit,
                    };
                    *slot = RuleCount { parts: c.parts as f64, tokens: c.tokens as f64 };
                }
                r
            },
            stubs: p.stubs,
            first_changed_id: p.first_changed,
            tokens_from_first_changed: p.tokens_from_first_changed as f64,
            tokens_after: p.tokens_after as f64,
            dry_run: p.dry_run,
        }
    }
}

#[napi(object)]
pub struct Selection {
    /// Messages `[0, headEnd)` of the context get summarized.
    pub head_end: u32,
    /// The first message kept verbatim (none: everything is summarized).
    #[napi(js_name = "tailStartID")]
    pub tail_start_id: Option<String>,
    pub tail_tokens: f64,
}

impl From<CoreSelection> for Selection {
    fn from(s: CoreSelection) -> Self {
        Selection { head_end: s.head_end as u32, tail_start_id: s.tail_start_id, tail_tokens: s.tail_tokens as f64 }
    }
}

#[napi(object)]
pub struct Turn {
    /// Index of the user message that starts the turn.
    pub start: u32,
    /// Index after the turn's last message.
    pub end: u32,
    /// Id of the user message that starts the turn.
    pub id: String,
}

impl From<CoreTurn> for Turn {
    fn from(t: CoreTurn) -> Self {
        Turn { start: t.start as u32, end: t.end as u32, id: t.id }
    }
}

impl From<Turn> for CoreTurn {
    fn from(t: Turn) -> Self {
        CoreTurn { start: t.start as usize, end: t.end as usize, id: t.id }
    }
}

#[napi(object)]
pub struct TailStart {
    pub start: u32,
    pub id: String,
}

/// The last request sent to the provider, as the session knows it.
#[napi(object)]
pub struct SentRequest {
    /// When it was sent (epoch ms).
    pub at: f64,
    /// How many messages of the history (in arrival order) existed then.
    pub messages: u32,
    /// Recorded with `recordRequest` (else read from the newest answer's time).
    pub recorded: bool,
    /// How many of the context's last messages arrived after it (the provider has not read them).
    pub unsent: u32,
}

impl SentRequest {
    pub fn new(s: Sent, unsent: usize) -> Self {
        SentRequest { at: s.at, messages: s.len as u32, recorded: s.recorded, unsent: unsent as u32 }
    }
}

/// The context's messages with their token counts, in the order the model reads them.
#[napi(object)]
pub struct ContextTokens {
    pub ids: Vec<String>,
    /// Tokens of each message (the session's counts: nothing is counted again).
    pub tokens: Vec<f64>,
    /// How many of the last messages arrived after the last request (the provider has not read
    /// them yet; 0 when nothing was sent).
    pub unsent: u32,
}

/// Whether a prune pays now (the cache-aware policy): the decision, its terms, and the prune.
#[napi(object)]
pub struct PruneDecision {
    pub prune: bool,
    /// USD the requests that follow would save (negative: they would cost more).
    pub saving: f64,
    /// USD breaking the provider's cache costs now (what it writes again instead of reading).
    pub cost: f64,
    /// USD the next request costs as the context stands: what the last request sent read from
    /// the cache while it is warm, the rest written to it.
    pub next_request: f64,
    /// USD one compaction costs: the summary call reading the context, its output, and the
    /// compacted context written once.
    pub compaction: f64,
    /// The compaction threshold (tokens) that costs least per request, at most twice as many
    /// compactions as at `threshold` (`AutoCompactor`'s `compactAt: 'cost'`).
    pub cheapest_threshold: f64,
    /// A compaction due at `threshold` costs less after one more request: the step that just
    /// arrived is unread and larger than a request's average growth, the kept tail would not hold
    /// it after one more step (the model reads it, then the summary can take it), and the window
    /// has room (`AutoCompactor` waits, under the `cache` policy).
    pub defer_compaction: bool,
    /// Tokens the prune frees.
    pub freed: f64,
    /// Tokens of the last request that the provider would write again.
    pub rewritten: f64,
    /// The last request is still in the provider's cache.
    pub warm: bool,
    /// Tokens in the context now.
    pub context: f64,
    /// Tokens at which a compaction runs.
    pub threshold: f64,
    /// Expected tokens right after a compaction.
    pub after_compaction: f64,
    /// Tokens a request adds, on average.
    pub growth: f64,
    /// The prune it is about (a dry run).
    pub result: PruneResult,
}

impl From<CoreDecision> for PruneDecision {
    fn from(d: CoreDecision) -> Self {
        let c = d.case;
        PruneDecision {
            prune: d.advice.prune,
            saving: d.advice.saving,
            cost: d.advice.cost,
            next_request: d.advice.next_request,
            compaction: d.advice.compaction,
            cheapest_threshold: d.advice.cheapest_threshold as f64,
            defer_compaction: d.advice.defer_compaction,
            freed: c.freed as f64,
            rewritten: c.rewritten as f64,
            warm: c.warm,
            context: c.context as f64,
            threshold: c.threshold as f64,
            after_compaction: c.after_compaction as f64,
            growth: c.growth as f64,
            result: d.prune.into(),
        }
    }
}

/// Where a prompt-cache breakpoint goes.
#[napi(object)]
pub struct CacheBreakpoint {
    /// The message of the prompt (`head`, then `toModelMessages()`) it goes on.
    pub index: u32,
    /// Why there: the end, the system prompt, the newest summary, the newest prune mark.
    #[napi(ts_type = "'end' | 'system' | 'summary' | 'prune'")]
    pub point: String,
}

impl From<(crate::convert::cache::Point, usize)> for CacheBreakpoint {
    fn from((point, index): (crate::convert::cache::Point, usize)) -> Self {
        CacheBreakpoint { index: index as u32, point: point.as_str().to_string() }
    }
}
