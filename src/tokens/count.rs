//! Counting a message part the way it will be sent, once, when it enters a session.

use super::Tokenizer;
use crate::message::markers;
use crate::message::{is_media, FilePart, Message, Part, ToolState};

/// Framing tokens per message (role and separators), as chat formats add them.
pub const MESSAGE_OVERHEAD: u64 = 3;

/// A message's part counts and its total.
pub type MessageCount = (Vec<PartCount>, u64);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartCount {
    /// Everything the part costs in the context.
    pub total: u64,
    /// The share a prune would clear (a completed tool output, attachments included).
    pub output: u64,
    /// For an output already pruned: what the prune freed (provider usage reported before the
    /// prune still includes it).
    pub cleared: u64,
    /// For a tool part: the call (name and input); the rest of `total` is its result.
    pub call: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counter {
    pub tokenizer: Tokenizer,
    /// Fixed cost of an image or PDF, never its base64 length.
    pub image_tokens: u64,
    /// Tool outputs are cut to this many characters (head and tail) when sent: they count so.
    pub output_max_chars: Option<usize>,
}

impl Counter {
    pub fn text(&self, text: &str) -> u64 {
        self.tokenizer.count(text)
    }

    fn file(&self, f: &FilePart) -> u64 {
        if is_media(&f.mime) {
            self.image_tokens
        } else {
            self.text(&f.url)
        }
    }

    /// The tokens of `part` that are images or PDFs (a file, a tool output's attachments).
    pub fn media(&self, part: &Part) -> u64 {
        match part {
            Part::File(f) if is_media(&f.mime) && !f.is_cleared() => self.image_tokens,
            Part::Tool(t) => match &t.state {
                ToolState::Completed { attachments, compacted_at: None, .. } => {
                    attachments.iter().flatten().filter(|a| is_media(&a.mime)).count() as u64 * self.image_tokens
                }
                _ => 0,
            },
            _ => 0,
        }
    }

    /// Whether `msg` holds a tool output that is sent cut (`output_max_chars`).
    pub fn cuts(&self, msg: &Message) -> bool {
        let Some(max) = self.output_max_chars else { return false };
        msg.parts.iter().any(|p| match p {
            Part::Tool(t) => match &t.state {
                ToolState::Completed { output, compacted_at: None, .. } => {
                    crate::message::head_and_tail(output, max).is_some()
                }
                _ => false,
            },
            _ => false,
        })
    }

    pub fn part(&self, part: &Part) -> PartCount {
        let plain = |total| PartCount { total, ..PartCount::default() };
        match part {
            Part::Text(p) => plain(self.text(&p.text)),
            Part::Reasoning(p) => plain(self.text(&p.text)),
            Part::File(f) if f.is_cleared() => {
                cleared(0, self.file(f), self.text(&markers::cleared(&f.mime, f.display_name())))
            }
            Part::File(f) => plain(self.file(f)),
            Part::Compaction(_) => plain(self.text(markers::COMPACTION_REQUEST)),
            Part::Tool(t) => {
                let call = self.text(&t.tool) + self.text(&json(t.state.input()));
                let result = |total| PartCount { call, total: call + total, ..PartCount::default() };
                match &t.state {
                    ToolState::Completed { output, attachments, compacted_at, .. } => {
                        let sent = match self.output_max_chars {
                            Some(max) => crate::message::keep_head_and_tail(output, max),
                            None => std::borrow::Cow::Borrowed(output.as_str()),
                        };
                        let out = self.text(&sent) + attachments.iter().flatten().map(|a| self.file(a)).sum::<u64>();
                        match compacted_at {
                            Some(_) => cleared(call, out, self.text(t.state.cleared_text().unwrap_or(markers::PRUNED))),
                            None => PartCount { output: out, ..result(out) },
                        }
                    }
                    ToolState::Error { error, .. } => match t.state.cleared_text() {
                        Some(marker) => cleared(call, self.text(error), self.text(marker)),
                        None => result(self.text(error)),
                    },
                    ToolState::Pending { .. } | ToolState::Running { .. } => result(self.text(markers::INTERRUPTED)),
                }
            }
            // Kept as it came (a part of a kind this model does not know): counted by its JSON.
            Part::Other(v) => plain(self.text(&v.to_string())),
        }
    }

    /// The counts of a completed tool output just pruned, from its counts before the prune (when
    /// it was not pruned yet): the output's count is kept as what the prune freed, so it is not
    /// counted again. `None` for a part that is not a pruned tool output.
    pub fn pruned(&self, part: &Part, before: PartCount) -> Option<PartCount> {
        let Part::Tool(t) = part else {
            return None;
        };
        Some(cleared(before.call, before.output, self.text(t.state.cleared_text()?)))
    }

    pub fn message(&self, m: &Message) -> MessageCount {
        // Parts of unknown kinds reach the model only in messages that came from AI SDK
        // ModelMessages (they are given back as they came); elsewhere they are an agent's own
        // metadata (opencode's step and patch parts), which no model reads.
        let sends_other = m.extra.contains_key(crate::message::ai_sdk_layout::LAYOUT);
        let mut parts: Vec<PartCount> = m
            .parts
            .iter()
            .map(|p| if matches!(p, Part::Other(_)) && !sends_other { PartCount::default() } else { self.part(p) })
            .collect();
        // A summary's restated request is a message of its own, counted with the summary's text.
        if let (Some(text), Some(first)) = (m.latest_request(), parts.first_mut()) {
            first.total += MESSAGE_OVERHEAD + self.text(text);
        }
        let total = message_total(&parts);
        (parts, total)
    }
}

/// A pruned tool output (a cleared file: no call): the call, and the marker in place of the
/// output (`out` tokens).
fn cleared(call: u64, out: u64, marker: u64) -> PartCount {
    PartCount { call, total: call + marker, cleared: out.saturating_sub(marker), output: 0 }
}

/// A message's total: the framing and its parts' totals.
pub fn message_total(parts: &[PartCount]) -> u64 {
    MESSAGE_OVERHEAD + parts.iter().map(|c| c.total).sum::<u64>()
}

fn json(v: &serde_json::Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::json;

    #[test]
    fn counts_media_at_a_fixed_cost_and_prunable_output_apart() {
        let c = Counter { tokenizer: Tokenizer::Estimate, image_tokens: 1200, output_max_chars: None };
        let m = parse_message(json!({"id": "m", "role": "assistant", "parts": [
            {"type": "file", "id": "f", "mime": "image/png", "url": format!("data:image/png;base64,{}", "A".repeat(100_000))},
            {"type": "tool", "id": "t", "callID": "c", "tool": "bash", "state": {"status": "completed", "input": {"cmd": "ls"}, "output": "a b c d e f g"}}
        ]})).unwrap();
        let (parts, total) = c.message(&m);
        assert_eq!(parts[0].total, 1200);
        assert!(parts[1].output > 0 && parts[1].output < parts[1].total);
        assert_eq!(total, MESSAGE_OVERHEAD + parts[0].total + parts[1].total);
    }

    #[test]
    fn a_prune_is_counted_from_the_counts_before_it() {
        for tokenizer in [Tokenizer::Estimate, Tokenizer::Exact(crate::tokens::Encoding::O200k)] {
            let c = Counter { tokenizer, image_tokens: 800, output_max_chars: Some(40) };
            let mut m = parse_message(json!({"id": "m", "role": "assistant", "parts": [
                {"type": "tool", "id": "t", "callID": "c", "tool": "bash", "state": {"status": "completed",
                 "input": {"cmd": "ls -la"}, "output": "line of output\n".repeat(20)}},
                {"type": "text", "id": "x", "text": "done"}
            ]}))
            .unwrap();
            let before = c.message(&m).0;
            assert_eq!(c.pruned(&m.parts[1], before[1]), None);
            for stub in [None, Some("[Same output as the later bash call c9]")] {
                let Part::Tool(t) = &mut m.parts[0] else { unreachable!() };
                let ToolState::Completed { compacted_at, extra, .. } = &mut t.state else { unreachable!() };
                *compacted_at = Some(5.0);
                if let Some(s) = stub {
                    extra.insert("compactedAs".into(), json!(s));
                }
                assert_eq!(c.pruned(&m.parts[0], before[0]), Some(c.part(&m.parts[0])));
            }
        }
    }
}
