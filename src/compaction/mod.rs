//! Compaction, the pure-CPU half: choose what to summarize and build the summarizer's input
//! (`prepare`), then record the summary (`apply`). The LLM call in between belongs to the caller.

mod apply;
mod budget;
mod prepare;

pub use apply::{apply, SummaryInput};
pub use budget::summary_budget;
pub use prepare::{prepare, CompactionPlan, PrepareOptions};

#[cfg(test)]
mod tests;
