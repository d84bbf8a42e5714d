//! The session store: an append-only JSONL file per session, crash-safe, one writer at a time,
//! loaded tail-first so opening a long compacted session costs what its context costs.
//!
//! - `format`: the lines (header, `message`, `update`, `prune`, `compaction`)
//! - `counts`: the token counts a message line carries, and when a load may use them
//! - `lines`: layout of a file, regions, the backward scan to the latest compaction entry
//! - `backward`: past the file's last few MB, the same scan parsing what it reads
//! - `replay`: entries applied in order give the messages
//! - `load`: full and tail-first loads
//! - `snapshot`: a binary copy of a long never-compacted file's replay, beside it, that loads fast
//! - `file_index`: what a writer knows (ids, line offsets, compaction structure)
//! - `writer`: appends, durability, torn-tail repair, compaction entries
//! - `lock`: the writer lock; `durability`: when entries are synced; `warning`: what was skipped
//! - `session_store`: `SessionStore`, tying them together
//! - `log`: the same entries kept in a database (the caller does the I/O)

mod backward;
mod counts;
mod durability;
mod file_index;
mod format;
mod lines;
mod load;
mod lock;
mod log;
mod log_session;
mod replay;
mod session_store;
mod snapshot;
mod warning;
mod writer;

pub use durability::Durability;
pub use format::{is_header, At, CompactionRecord, Header, Loc, PruneRecord, VERSION};
pub use load::Loaded;
pub use lock::lock_path;
pub use log::{header_entry, load_full, load_tail, new_header_entry, parse_header, plan, LogWriter};
pub use log_session::{load_session, log_options};
pub use session_store::{parse_open_options, Loader, OpenOptions, SessionStore, StoreOptions};
pub use warning::Warning;

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod props;

use std::path::Path;

use crate::error::{CfError, Code};

/// `CF_IO`, naming the file, what was being done and the OS's reason.
pub(crate) fn io_error(path: &Path, doing: &str, e: &std::io::Error) -> CfError {
    CfError::new(Code::Io, format!("{doing} {}: {e}", path.display()))
}
