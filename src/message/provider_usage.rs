//! Provider usage reports in every shape an agent meets, as one `Usage` (opencode's meaning:
//! `input` is the prompt tokens not read from or written to the cache, so the context is
//! `input + cacheRead + cacheWrite + output`). The one mapping the importers, the summarizers and
//! the AI SDK integration share.

use serde_json::{Map, Value};

use super::Usage;

fn count(o: &Map<String, Value>, path: &[&str]) -> Option<u64> {
    let (last, parents) = path.split_last()?;
    let mut cur = o;
    for p in parents {
        cur = cur.get(*p)?.as_object()?;
    }
    let n = cur.get(*last)?.as_f64()?;
    (n.is_finite() && n >= 0.0).then(|| n.round() as u64)
}

/// The usage `v` reports, or `None` when it is no usage object:
/// - AI SDK v5 (`inputTokens` including cached ones, `cachedInputTokens`, `reasoningTokens`);
/// - AI SDK v6 and v7 (`inputTokenDetails: { noCacheTokens, cacheReadTokens, cacheWriteTokens }`,
///   `outputTokenDetails: { reasoningTokens }`);
/// - the AI SDK provider specification's nested shape (`inputTokens: { total, noCache, cacheRead,
///   cacheWrite }`, `outputTokens: { total, text, reasoning }`);
/// - OpenAI chat completions (`prompt_tokens`, `prompt_tokens_details.cached_tokens`) and
///   responses (`input_tokens`, `input_tokens_details.cached_tokens`);
/// - Anthropic (`input_tokens` without the cache, `cache_read_input_tokens`,
///   `cache_creation_input_tokens`);
/// - pi-ai (`input` and `output` as in contextfold's own, with `totalTokens`; nothing counted, all
///   zero, is no report);
/// - contextfold's own `Usage` (`input`, `output`, `cacheRead`...), as it is.
pub fn usage_from_provider(v: &Value) -> Option<Usage> {
    let o = v.as_object()?;
    let total = count(o, &["totalTokens"]).or_else(|| count(o, &["total_tokens"]));
    // (prompt tokens in all, read from the cache, written to it, output, reasoning)
    let (prompt, read, write, output, reasoning) = if o.get("inputTokens").is_some_and(Value::is_object)
        || o.get("outputTokens").is_some_and(Value::is_object)
    {
        let read = count(o, &["inputTokens", "cacheRead"]);
        let write = count(o, &["inputTokens", "cacheWrite"]);
        let prompt = count(o, &["inputTokens", "total"])
            .or_else(|| count(o, &["inputTokens", "noCache"]).map(|n| n + read.unwrap_or(0) + write.unwrap_or(0)));
        (prompt, read, write, count(o, &["outputTokens", "total"]), count(o, &["outputTokens", "reasoning"]))
    } else if o.contains_key("inputTokens") || o.contains_key("outputTokens") {
        let read = count(o, &["inputTokenDetails", "cacheReadTokens"]).or_else(|| count(o, &["cachedInputTokens"]));
        let write = count(o, &["inputTokenDetails", "cacheWriteTokens"]);
        let reasoning = count(o, &["outputTokenDetails", "reasoningTokens"]).or_else(|| count(o, &["reasoningTokens"]));
        (count(o, &["inputTokens"]), read, write, count(o, &["outputTokens"]), reasoning)
    } else if o.contains_key("prompt_tokens") || o.contains_key("completion_tokens") {
        (
            count(o, &["prompt_tokens"]),
            count(o, &["prompt_tokens_details", "cached_tokens"]),
            None,
            count(o, &["completion_tokens"]),
            count(o, &["completion_tokens_details", "reasoning_tokens"]),
        )
    } else if o.contains_key("cache_read_input_tokens") || o.contains_key("cache_creation_input_tokens") {
        // Anthropic: `input_tokens` already leaves the cache out.
        let read = count(o, &["cache_read_input_tokens"]);
        let write = count(o, &["cache_creation_input_tokens"]);
        let prompt = count(o, &["input_tokens"]).map(|n| n + read.unwrap_or(0) + write.unwrap_or(0));
        (prompt, read, write, count(o, &["output_tokens"]), None)
    } else if o.contains_key("input_tokens") || o.contains_key("output_tokens") {
        (
            count(o, &["input_tokens"]),
            count(o, &["input_tokens_details", "cached_tokens"]),
            None,
            count(o, &["output_tokens"]),
            count(o, &["output_tokens_details", "reasoning_tokens"]),
        )
    } else if (o.contains_key("input") || o.contains_key("output")) && o.contains_key("totalTokens") {
        let (input, output) = (count(o, &["input"]), count(o, &["output"]));
        if input.unwrap_or(0) == 0 && output.unwrap_or(0) == 0 {
            return None;
        }
        let read = count(o, &["cacheRead"]);
        let write = count(o, &["cacheWrite"]);
        (input.map(|n| n + read.unwrap_or(0) + write.unwrap_or(0)), read, write, output, None)
    } else if o.contains_key("input") || o.contains_key("output") {
        return serde_json::from_value(v.clone()).ok();
    } else {
        return None;
    };
    if prompt.is_none() && output.is_none() {
        return None;
    }
    let (read, write) = (read.filter(|&n| n > 0), write.filter(|&n| n > 0));
    let prompt = prompt.unwrap_or(0);
    let output = output.unwrap_or(0);
    Some(Usage {
        input: prompt.saturating_sub(read.unwrap_or(0) + write.unwrap_or(0)),
        output,
        reasoning,
        cache_read: read,
        cache_write: write,
        total: Some(total.filter(|&t| t > 0).unwrap_or(prompt + output)),
    })
}

/// The usage of a model call or step: Anthropic's own report when its provider metadata has one
/// (ai v5's Anthropic provider leaves the cache out of `inputTokens` and reports cache writes only
/// there), else `usage`.
pub fn step_usage_from_provider(usage: &Value, provider_metadata: Option<&Value>) -> Option<Usage> {
    let anthropic = provider_metadata.and_then(|m| m.get("anthropic")).and_then(|a| a.get("usage"));
    match anthropic {
        Some(raw) if raw.get("input_tokens").is_some_and(Value::is_number) => usage_from_provider(raw),
        _ => usage_from_provider(usage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn u(input: u64, output: u64, read: Option<u64>, write: Option<u64>, reasoning: Option<u64>, total: u64) -> Usage {
        Usage { input, output, reasoning, cache_read: read, cache_write: write, total: Some(total) }
    }

    #[test]
    fn every_shape_counts_the_cache_once() {
        let cases = [
            // AI SDK v5: inputTokens includes the cached ones.
            (
                json!({"inputTokens": 300, "outputTokens": 30, "totalTokens": 330, "cachedInputTokens": 100, "reasoningTokens": 5}),
                u(200, 30, Some(100), None, Some(5), 330),
            ),
            // v6 / v7.
            (
                json!({"inputTokens": 300, "outputTokens": 30, "totalTokens": 330, "inputTokenDetails": {"noCacheTokens": 150, "cacheReadTokens": 100, "cacheWriteTokens": 50}, "outputTokenDetails": {"textTokens": 25, "reasoningTokens": 5}}),
                u(150, 30, Some(100), Some(50), Some(5), 330),
            ),
            // The provider specification's nested shape.
            (
                json!({"inputTokens": {"total": 300, "noCache": 150, "cacheRead": 100, "cacheWrite": 50}, "outputTokens": {"total": 30, "text": 25, "reasoning": 5}}),
                u(150, 30, Some(100), Some(50), Some(5), 330),
            ),
            (
                json!({"inputTokens": {"noCache": 150, "cacheRead": 100}, "outputTokens": {"total": 30}}),
                u(150, 30, Some(100), None, None, 280),
            ),
            // OpenAI chat and responses.
            (
                json!({"prompt_tokens": 300, "completion_tokens": 30, "total_tokens": 330, "prompt_tokens_details": {"cached_tokens": 100}, "completion_tokens_details": {"reasoning_tokens": 5}}),
                u(200, 30, Some(100), None, Some(5), 330),
            ),
            (
                json!({"input_tokens": 300, "output_tokens": 30, "input_tokens_details": {"cached_tokens": 100}, "output_tokens_details": {"reasoning_tokens": 5}}),
                u(200, 30, Some(100), None, Some(5), 330),
            ),
            // Anthropic: input_tokens leaves the cache out.
            (
                json!({"input_tokens": 150, "output_tokens": 30, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 50}),
                u(150, 30, Some(100), Some(50), None, 330),
            ),
            // Uncached and zero cache counts.
            (json!({"inputTokens": 10, "outputTokens": 2, "cachedInputTokens": 0}), u(10, 2, None, None, None, 12)),
        ];
        for (v, want) in cases {
            let got = usage_from_provider(&v).unwrap_or_else(|| panic!("{v}"));
            assert_eq!(got, want, "{v}");
            assert_eq!(got.context_tokens(), want.total.unwrap(), "{v}");
        }
        let own = json!({"input": 10, "output": 2, "cacheRead": 5});
        assert_eq!(
            usage_from_provider(&own),
            Some(Usage { input: 10, output: 2, cache_read: Some(5), reasoning: None, cache_write: None, total: None })
        );
    }

    #[test]
    fn pi_ai_usage_leaves_the_cache_out_of_input() {
        let pi = json!({"input": 150, "output": 30, "cacheRead": 100, "cacheWrite": 0, "totalTokens": 280, "cost": {"total": 0.1}});
        assert_eq!(usage_from_provider(&pi), Some(u(150, 30, Some(100), None, None, 280)));
        let untotalled = json!({"input": 150, "output": 30, "totalTokens": 0});
        assert_eq!(usage_from_provider(&untotalled), Some(u(150, 30, None, None, None, 180)));
        // pi-ai reports zeros when the provider counted nothing.
        assert_eq!(usage_from_provider(&json!({"input": 0, "output": 0, "cacheRead": 5, "totalTokens": 0})), None);
    }

    #[test]
    fn a_step_reads_anthropics_own_report_first() {
        // ai v5's Anthropic provider: `inputTokens` without the cache writes, which only its own report has.
        let usage = json!({"inputTokens": 250, "outputTokens": 30, "cachedInputTokens": 100});
        let meta = json!({"anthropic": {"usage": {"input_tokens": 150, "output_tokens": 30, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 50}}});
        assert_eq!(step_usage_from_provider(&usage, Some(&meta)), Some(u(150, 30, Some(100), Some(50), None, 330)));
        assert_eq!(step_usage_from_provider(&usage, None), Some(u(150, 30, Some(100), None, None, 280)));
        let other = json!({"anthropic": {"usage": {"input_tokens": "x"}}, "openai": {}});
        assert_eq!(step_usage_from_provider(&usage, Some(&other)), usage_from_provider(&usage));
        assert_eq!(step_usage_from_provider(&json!(null), Some(&json!({}))), None);
    }

    #[test]
    fn what_is_no_usage_is_none() {
        for v in [
            json!(null),
            json!(3),
            json!({}),
            json!({"foo": 1}),
            json!({"inputTokens": "x"}),
            json!({"inputTokens": {"cacheRead": 3}}),
        ] {
            assert_eq!(usage_from_provider(&v), None, "{v}");
        }
        // Negative or non-finite counts are left out, never wrapped.
        assert_eq!(usage_from_provider(&json!({"inputTokens": -5, "outputTokens": 2})).unwrap().input, 0);
    }
}
