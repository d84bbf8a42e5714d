//! When written entries are forced to disk.
//!
//! Every entry is handed to the operating system whole, with one write, before `append` returns:
//! a crash of the process (SIGKILL included) never loses an acknowledged entry. What the policy
//! decides is when the OS is told to put it on the disk (`fsync`), which matters for power loss
//! and kernel crashes.

use std::time::{Duration, Instant};

/// `entry`: `sync_data` after every entry (the default). `batch`: on `flush()` / `close()`, and
/// by the first write made once `max_entries` entries or `max_ms` ms are unsynced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    #[default]
    Entry,
    Batch {
        max_entries: u32,
        max_ms: u32,
    },
}

pub const BATCH_ENTRIES: u32 = 64;
pub const BATCH_MS: u32 = 200;

impl Durability {
    /// Reads `'entry' | 'batch'` with the optional batch limits.
    pub fn parse(name: Option<&str>, max_entries: Option<u32>, max_ms: Option<u32>) -> Result<Durability, String> {
        match name.unwrap_or("entry") {
            "entry" => Ok(Durability::Entry),
            "batch" => Ok(Durability::Batch {
                max_entries: max_entries.unwrap_or(BATCH_ENTRIES).max(1),
                max_ms: max_ms.unwrap_or(BATCH_MS),
            }),
            other => Err(format!("durability: expected 'entry' or 'batch', got {other:?}")),
        }
    }
}

/// Counts what was written since the last sync.
#[derive(Debug)]
pub struct SyncState {
    pub policy: Durability,
    unsynced: u32,
    since: Option<Instant>,
}

impl SyncState {
    pub fn new(policy: Durability) -> SyncState {
        SyncState { policy, unsynced: 0, since: None }
    }

    /// Notes one written entry; true when it must be synced now.
    pub fn wrote(&mut self, now: Instant) -> bool {
        match self.policy {
            Durability::Entry => true,
            Durability::Batch { max_entries, max_ms } => {
                self.unsynced += 1;
                let since = *self.since.get_or_insert(now);
                self.unsynced >= max_entries || now.duration_since(since) >= Duration::from_millis(max_ms as u64)
            }
        }
    }

    pub fn synced(&mut self) {
        self.unsynced = 0;
        self.since = None;
    }

    pub fn pending(&self) -> bool {
        self.unsynced > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_syncs_every_write_and_batch_by_count_or_age() {
        let t0 = Instant::now();
        let mut e = SyncState::new(Durability::parse(None, None, None).unwrap());
        assert!(e.wrote(t0));
        let mut b = SyncState::new(Durability::parse(Some("batch"), Some(3), Some(50)).unwrap());
        assert!(!b.wrote(t0));
        assert!(!b.wrote(t0));
        assert!(b.wrote(t0));
        b.synced();
        assert!(!b.pending());
        assert!(!b.wrote(t0));
        assert!(b.pending());
        assert!(b.wrote(t0 + Duration::from_millis(60)));
        assert!(Durability::parse(Some("always"), None, None).unwrap_err().contains("'entry' or 'batch'"));
    }
}
