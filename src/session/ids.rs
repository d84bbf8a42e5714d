//! Ids the library writes (compaction requests, summaries, the messages `compact()` appends,
//! pins): the time in ms and a process-wide counter, so that they sort after earlier ones.

use std::sync::atomic::{AtomicU64, Ordering};

use super::History;

/// The wall clock in epoch ms (0 before 1970).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// `<prefix>_<ms, 12 hex digits><counter, 6 hex digits>`.
pub fn timed_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = now_ms();
    format!("{prefix}_{now:012x}{:06x}", COUNTER.fetch_add(1, Ordering::Relaxed) & 0xff_ffff)
}

impl History {
    /// A message id no message of this history has.
    pub fn new_id(&self, prefix: &str) -> String {
        loop {
            let id = timed_id(prefix);
            if self.get(&id).is_none() {
                return id;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_in_the_order_they_are_made() {
        let h =
            History::new(serde_json::from_value(serde_json::json!({"model": {"limit": {"context": 1000}}})).unwrap())
                .unwrap();
        let ids: Vec<String> = (0..1000).map(|i| if i % 2 == 0 { h.new_id("msg") } else { timed_id("msg") }).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(ids, sorted);
    }
}
