//! Decisions over a history: overflow and pressure, prune, turns and the verbatim tail, what a
//! summary hides.

mod microcompact;
mod options;
mod overflow;
mod prune;
mod turns;
mod view;

pub use microcompact::{microcompact, Rule, Stub};
pub(crate) use options::limit;
pub(crate) use options::opt_limit;
pub use options::{parse_options, CompactionConfig, ModelInfo, ModelLimit, PruneLimits, PrunePolicy};
pub use overflow::{
    is_overflow, max_output_tokens, pressure_tier, usable, ContextSize, OverflowArgs, Tier, UsableArgs,
};
pub use prune::{prune, PruneResult};
pub use turns::{
    can_start_tail, compaction_tail, is_turn_start, message_turns, preserve_recent_budget, select, split_turn,
    summary_ceiling, turns, unread_cap, unread_start, Selection, Seq, Turn, SUMMARY_FLOOR,
};
pub use view::{Base, Cut, View, OPEN};
