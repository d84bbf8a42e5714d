//! The native history: messages with their token counts, kept in sync incrementally so per-turn
//! queries cost O(log n) whatever the length of the session.

mod breakdown;
mod derived;
mod fenwick;
mod handed;
mod history;
mod ids;
mod model_messages;
mod options;
mod pins;
mod prunes;
mod pruning;
mod requests;
mod timeline;
mod usage;
mod visible;
mod whole_list;

pub use breakdown::{Breakdown, ToolOutputSize};
pub use handed::HandBack;
pub use history::{History, PruneOutcome, RuleCount};
pub use ids::now_ms;
pub use model_messages::{ModelAppend, ModelCursor, SyncStatus};
pub use options::SessionOptions;
pub use pins::{pins_of, readable_text, recorded_pins, Pin};
pub use requests::Sent;
pub use timeline::{CallPoint, CompactionPoint, PrunePoint, Timeline};
pub use usage::{ContextUsage, Source};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod props;
