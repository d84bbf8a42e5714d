//! Whether a prune pays now, read from a history: the terms of `cost::advise_prune`.

use serde::Deserialize;

use super::summary_budget;
use crate::cost::{advise_prune, cheapest_threshold, PruneAdvice, PruneCase};
use crate::policy;
use crate::session::{History, PruneOutcome};

/// Where the decision assumes the next compaction runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Threshold {
    /// At the usable window (compaction on overflow).
    #[default]
    #[serde(skip)]
    Window,
    /// At this many tokens (a `compactAt` share of the window).
    Tokens(#[serde(deserialize_with = "crate::policy::limit")] u64),
    /// At the cheapest threshold (`compactAt: 'cost'`), derived from the window.
    Cost(CostKeyword),
}

/// The string `"cost"`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostKeyword {
    Cost,
}

/// The decision, the terms it weighed, and the prune it is about (a dry run).
#[derive(Clone, Debug, PartialEq)]
pub struct PruneDecision {
    pub advice: PruneAdvice,
    pub case: PruneCase,
    pub prune: PruneOutcome,
}

/// `now`: the time to judge the cache's age by (default: the newest message's own time).
/// `threshold`: where the next compaction runs. `cheapest_threshold` in the advice is always
/// derived from the window.
pub fn decide_prune(h: &History, now: Option<f64>, threshold: Threshold) -> PruneDecision {
    let prune = h.prune_dry_run();
    let model = h.options().cache_model();
    let usage = h.usage();
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
    let (model_info, cfg) = (&h.options().model, &h.options().compaction);
    let tail = h.compaction_selection().tail_tokens;
    let summary = summary_budget(usage.tokens.saturating_sub(tail), model_info.limit.context);
    let mut case = PruneCase {
        freed: prune.tokens_freed,
        rewritten,
        warm,
        context: usage.tokens,
        threshold: usage.usable,
        after_compaction: h.overhead() + tail + summary,
        growth: h.growth_per_request(),
        summary_output: summary,
        unsent,
        tail_budget: policy::preserve_recent_budget(model_info, cfg),
        unread_cap: policy::unread_cap(model_info, cfg, h.overhead()),
    };
    let cheapest = cheapest_threshold(&case, &model);
    case.threshold = match threshold {
        Threshold::Window => usage.usable,
        Threshold::Tokens(t) => t,
        Threshold::Cost(_) => cheapest,
    };
    let mut advice = PruneAdvice { cheapest_threshold: cheapest, ..advise_prune(&case, &model) };
    // Waiting for one more request needs room for it in the window.
    advice.defer_compaction &= !h.is_overflow();
    PruneDecision { advice, case, prune }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::parse_message;
    use crate::policy::{ModelInfo, ModelLimit};
    use crate::session::SessionOptions;

    fn history() -> History {
        let mut msgs = Vec::new();
        for k in 0..40 {
            msgs.push(json!({"id": format!("u{k}"), "role": "user", "time": {"created": k * 1000},
                "parts": [{"type": "text", "id": format!("u{k}-t"), "text": "go on"}]}));
            msgs.push(json!({"id": format!("a{k}"), "role": "assistant", "finish": "tool-calls",
                "time": {"created": k * 1000 + 500}, "parts": [{"type": "tool", "id": format!("a{k}-p"),
                "callID": format!("c{k}"), "tool": "read", "state": {"status": "completed",
                "input": {"path": format!("f{k}")}, "output": "word ".repeat(2_000)}}]}));
        }
        let opts = SessionOptions {
            model: ModelInfo {
                limit: ModelLimit { context: 200_000, input: None, output: Some(8_000) },
                ..Default::default()
            },
            tokenizer: Some("estimate".into()),
            ..Default::default()
        };
        History::from_messages(msgs.into_iter().map(|m| parse_message(m).unwrap()).collect(), opts, &|| false).unwrap()
    }

    #[test]
    fn the_threshold_is_where_the_next_compaction_runs() {
        let h = history();
        let window = decide_prune(&h, None, Threshold::Window);
        let at = decide_prune(&h, None, Threshold::Tokens(150_000));
        let cost = decide_prune(&h, None, Threshold::Cost(CostKeyword::Cost));
        assert_eq!(window.case.threshold, h.usage().usable);
        assert_eq!(at.case.threshold, 150_000);
        // The cheapest threshold is derived from the window whatever the decision assumes.
        assert_eq!(cost.case.threshold, window.advice.cheapest_threshold);
        assert_eq!(cost.advice.cheapest_threshold, window.advice.cheapest_threshold);
        assert!(cost.case.threshold < window.case.threshold);
        // A nearer compaction leaves fewer requests for a prune to pay back.
        assert!(cost.advice.saving < window.advice.saving, "{cost:?} {window:?}");
    }

    #[test]
    fn thresholds_read_from_options() {
        let t = |v| serde_json::from_value::<Threshold>(v);
        assert_eq!(t(json!(1000)).unwrap(), Threshold::Tokens(1000));
        assert_eq!(t(json!("cost")).unwrap(), Threshold::Cost(CostKeyword::Cost));
        assert!(t(json!("window")).is_err() && t(json!(-1)).is_err());
    }
}
