//! Compaction, the pure-CPU half: choose what to summarize and build the summarizer's input
//! (`prepare`), then record the summary (`apply`). The LLM call in between belongs to the caller.

mod apply;
mod audit;
mod budget;
mod check;
mod prepare;
mod prune_advice;
mod replay;

pub use apply::{apply, ApplyPlan, SummaryInput};
pub use audit::{audit, facts_to_keep, normalize, preserved_budget, Audit, Dropped, Fact, FactKind, PRESERVED_HEADING};
pub use budget::summary_budget;
pub use check::{audit_summary, preview, AuditPlan, Preview, PreviewPlan};
pub use prepare::{prepare, CompactionPlan, PrepareOptions};
pub use prune_advice::{decide_prune, PruneDecision, Threshold};
pub use replay::replay;

#[cfg(test)]
mod tests;
