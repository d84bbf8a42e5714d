//! What a request costs with a provider's prompt cache, and whether a prune pays for the cache it
//! breaks. Prices are per million tokens; only their ratios matter to the decisions.

mod advice;

pub use advice::{advise_prune, cheapest_threshold, PruneAdvice, PruneCase};

use serde::{Deserialize, Serialize};

/// A model's prices in USD per million tokens (models.dev's `cost`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields, rename = "ModelCost"))]
#[serde(rename_all = "camelCase")]
pub struct Prices {
    #[serde(deserialize_with = "price")]
    pub input: f64,
    #[serde(deserialize_with = "price")]
    pub output: f64,
    /// Reading a cached prefix; without it the provider has no cache discount.
    #[serde(default, deserialize_with = "opt_price", skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Writing to the 5-minute cache; without it writing costs the input price (OpenAI).
    #[serde(default, deserialize_with = "opt_price", skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// Writing to the 1-hour cache (Anthropic: twice the input price).
    #[serde(rename = "cacheWrite1h", default, deserialize_with = "opt_price", skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
}

/// Used when neither the options nor the model give prices: Anthropic's ratios (reads at 0.1×,
/// writes at 1.25×), the provider where breaking the cache costs most, so the policy errs towards
/// keeping the prefix.
pub const DEFAULT_PRICES: Prices =
    Prices { input: 1.0, output: 5.0, cache_read: Some(0.1), cache_write: Some(1.25), cache_write_1h: Some(2.0) };

/// Anthropic's default cache lifetime; OpenAI keeps prefixes 5–10 minutes.
pub const DEFAULT_TTL_MS: f64 = 5.0 * 60_000.0;

/// A provider's cache lifetime above which writes are priced as the 1-hour cache.
const LONG_TTL_MS: f64 = 5.0 * 60_000.0;

/// The prompt cache as the session is told about it (`SessionOptions.cache`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase", default)]
pub struct CacheOptions {
    /// How long the provider keeps a prefix after its last use: milliseconds, `'5m'` or `'1h'`
    /// (default 5 minutes).
    #[serde(deserialize_with = "ttl", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(type = "number | '5m' | '1h'"))]
    pub ttl: Option<f64>,
    /// Prices overriding `model.cost`. Without either, Anthropic's ratios (reads 0.1×, writes 1.25× the
    /// input price): where breaking the cache costs most, so pruning errs towards keeping the prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prices: Option<Prices>,
}

fn ttl<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Ms(f64),
        Name(String),
    }
    Ok(Some(match Raw::deserialize(d)? {
        Raw::Ms(ms) if ms.is_finite() && ms >= 0.0 => ms,
        Raw::Name(n) if n == "5m" => 5.0 * 60_000.0,
        Raw::Name(n) if n == "1h" => 3_600_000.0,
        _ => return Err(serde::de::Error::custom("must be milliseconds >= 0, '5m' or '1h'")),
    }))
}

/// Per-token prices of what a request does with the cache, and the cache's lifetime.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheModel {
    pub input: f64,
    pub output: f64,
    /// Reading a cached token (the input price when there is no cache).
    pub read: f64,
    /// Writing a token to the cache (the input price when writes carry no premium).
    pub write: f64,
    pub ttl_ms: f64,
}

impl CacheModel {
    /// The options' prices, else the model's, else [`DEFAULT_PRICES`].
    pub fn resolve(cache: &CacheOptions, model_cost: Option<&Prices>) -> CacheModel {
        let p = known_prices(cache, model_cost).unwrap_or(&DEFAULT_PRICES);
        let ttl_ms = cache.ttl.unwrap_or(DEFAULT_TTL_MS);
        let write =
            if ttl_ms > LONG_TTL_MS { p.cache_write_1h.or(p.cache_write.map(|w| w * 1.6)) } else { p.cache_write };
        CacheModel {
            input: p.input,
            output: p.output,
            read: p.cache_read.unwrap_or(p.input),
            write: write.unwrap_or(p.input),
            ttl_ms,
        }
    }

    /// True when reading a cached prefix is cheaper than sending it again.
    pub fn caches(&self) -> bool {
        self.read < self.input
    }

    /// USD of one request: `input` tokens sent afresh, `read` from the cache, `written` to it,
    /// `output` generated (prices are per million tokens).
    pub fn request_usd(&self, input: u64, read: u64, written: u64, output: u64) -> f64 {
        (input as f64 * self.input
            + read as f64 * self.read
            + written as f64 * self.write
            + output as f64 * self.output)
            / 1e6
    }
}

/// The prices given: the options', else the model's; `None` when neither says them.
pub fn known_prices<'a>(cache: &'a CacheOptions, model_cost: Option<&'a Prices>) -> Option<&'a Prices> {
    cache.prices.as_ref().or(model_cost)
}

fn price<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let n = f64::deserialize(d)?;
    if !n.is_finite() || n < 0.0 {
        return Err(serde::de::Error::custom(format!("must be a finite price >= 0, got {n}")));
    }
    Ok(n)
}

fn opt_price<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?.map(|n| price(serde::de::value::F64Deserializer::new(n))).transpose()
}
