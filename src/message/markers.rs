//! The exact strings the model reads in place of what was cut, cleared or never finished.

/// A pruned tool output (opencode's text).
pub const PRUNED: &str = "[Old tool result content cleared]";
/// The result given to a tool call that never finished.
pub const INTERRUPTED: &str = "[Tool execution was interrupted]";
/// A compaction request reads as this user question, so the summary reads as its answer.
pub const COMPACTION_REQUEST: &str = "What did we do so far?";

/// The user turn put first where a provider requires the conversation to start with the user.
pub const CONVERSATION_START: &str = "[Conversation continues]";

/// What replaces an image or PDF when media is stripped.
pub fn attached(mime: &str, filename: &str) -> String {
    format!("[Attached {mime}: {filename}]")
}

/// What an image or PDF reads as once the agent that wrote the transcript cleared it.
pub fn cleared(mime: &str, filename: &str) -> String {
    format!("[Cleared {mime}: {filename}]")
}

/// The line that stands where the middle of a long text was cut.
pub fn omitted(chars: usize) -> String {
    format!("\n[... omitted {chars} chars ...]\n")
}
