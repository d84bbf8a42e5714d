//! AI SDK `ModelMessage`s into a session: appended as they come (a tool message completes the
//! calls of the session's last answer), or synced from the whole array an app holds, appending
//! only what lies past the prefix the session already has. The prefix is recognised by the hash of
//! its first and last message and its length, so a sync costs what the new messages cost.

use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::History;
use crate::convert::{to_model_messages, ConvertOptions};
use crate::error::{CfError, Code, Result};
use crate::formats::{continue_model_messages, Warning};
use crate::message::ai_sdk_layout::LAYOUT;
use crate::message::{Role, Usage};

/// Where the ModelMessages taken so far end: how many, and hashes of the first and the last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelCursor {
    pub count: usize,
    first: u64,
    last: u64,
}

fn hash(v: &Value) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    // Map keys serialize sorted, so equal values hash equally whatever their key order in JS.
    serde_json::to_string(v).unwrap_or_default().hash(&mut h);
    h.finish()
}

/// What an append did: the messages added and the earlier message completed (by id).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelAppend {
    pub appended: Vec<String>,
    pub updated: Vec<String>,
    pub warnings: Vec<Warning>,
    /// A tool output taken now is longer than `toolOutputMaxChars`: the model must get the
    /// session's messages, which cut it, not the caller's.
    pub cut: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncStatus {
    /// New messages were taken.
    Appended,
    /// The array holds nothing past what the session has.
    Unchanged,
    /// The array does not extend what the session has (edited, shortened or another
    /// conversation): nothing was taken.
    Diverged,
}

impl ModelAppend {
    /// What a call that returned `status` with this outcome reports: one that took and completed
    /// nothing left the session unchanged.
    pub fn status(&self, status: SyncStatus) -> SyncStatus {
        if status == SyncStatus::Appended && self.appended.is_empty() && self.updated.is_empty() {
            SyncStatus::Unchanged
        } else {
            status
        }
    }
}

impl SyncStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SyncStatus::Appended => "appended",
            SyncStatus::Unchanged => "unchanged",
            SyncStatus::Diverged => "diverged",
        }
    }
}

/// Messages `resume_model_messages` matches as one block.
const RESUME_BLOCK: usize = 4;

impl History {
    /// How many ModelMessages the session has taken (`appendModelMessages`, `syncModelMessages`).
    pub fn model_cursor(&self) -> ModelCursor {
        self.model_cursor
    }

    /// Appends ModelMessages. `usage` (the step's provider usage) goes on the last assistant
    /// message they hold or complete. Nothing changes when a message is rejected.
    pub fn append_model_messages(&mut self, values: &[Value], usage: Option<Usage>) -> Result<ModelAppend> {
        let last = self.entries().last().map(|e| &e.msg);
        let imported =
            continue_model_messages(last, values, self.model_cursor.count.max(self.newest_model_id().unwrap_or(0)));
        let previous = last.filter(|m| m.role == Role::Assistant);
        let mut messages = imported.messages;
        let mut completed = None;
        if let (Some(prev), Some(first)) = (previous, messages.first()) {
            if first.id == prev.id {
                let first = messages.remove(0);
                completed = (&first != prev).then_some(first);
            }
        }
        // The step's usage goes on its answer: the last assistant message taken now.
        let mut reported = None;
        if let Some(u) = usage {
            let last = messages.iter_mut().rev().chain(completed.iter_mut()).find(|m| m.role == Role::Assistant);
            if let Some(m) = last {
                m.tokens = Some(u);
                reported = Some(m.id.clone());
            }
        }
        // Validate everything before changing anything: the checks `append` and `update` make.
        let mut ids = std::collections::HashSet::new();
        for m in completed.iter().chain(&messages) {
            crate::message::check_message(m, &format!("message {:?}", m.id))?;
        }
        for m in &messages {
            if self.get(&m.id).is_some() || !ids.insert(m.id.as_str()) {
                return Err(CfError::new(
                    Code::DuplicateId,
                    format!("message {:?}: id already used in the session", m.id),
                ));
            }
        }
        let mut out = ModelAppend { warnings: imported.warnings, ..ModelAppend::default() };
        out.cut = completed.iter().chain(&messages).any(|m| self.counter.cuts(m));
        if let Some(m) = completed {
            out.updated.push(m.id.clone());
            self.update(m)?;
        }
        for m in messages {
            out.appended.push(m.id.clone());
            self.append(m)?;
        }
        // The report was made before the tool results that came with the answer now.
        if let Some(id) = reported {
            self.report_before_results(&id);
        }
        if let (Some(first), Some(last)) = (values.first(), values.last()) {
            let c = &mut self.model_cursor;
            if c.count == 0 {
                c.first = hash(first);
            }
            c.count += values.len();
            c.last = hash(last);
        }
        Ok(out)
    }

    /// Takes what `all` (the whole ModelMessage array of an app) holds past the messages this
    /// session already took, if `all` extends them; reports a divergence instead of duplicating.
    /// Only `all[0]` and `all[count - 1..]` are read.
    pub fn sync_model_messages(
        &mut self,
        first: Option<&Value>,
        from_last: &[Value],
        total: usize,
        usage: Option<Usage>,
    ) -> Result<(SyncStatus, ModelAppend)> {
        let c = self.model_cursor;
        let extends = match c.count {
            0 => true,
            n => {
                total >= n
                    && first.is_some_and(|f| hash(f) == c.first)
                    && from_last.first().is_some_and(|l| hash(l) == c.last)
            }
        };
        if !extends {
            return Ok((SyncStatus::Diverged, ModelAppend::default()));
        }
        let new = if c.count == 0 { from_last } else { &from_last[1..] };
        if new.is_empty() {
            return Ok((SyncStatus::Unchanged, ModelAppend::default()));
        }
        Ok((SyncStatus::Appended, self.append_model_messages(new, usage)?))
    }

    /// For a session loaded from a store (the cursor is not stored): finds how many of an app's
    /// `total` ModelMessages (`at(i)` reads the i-th) the session already holds, and sets the
    /// cursor there, so that the next sync takes only what follows. The newest messages the session
    /// took from ModelMessages, converted back exactly, must end that prefix; it is looked for from
    /// the end, so this reads only the messages that are new. None when the array does not
    /// continue the session (nothing changes).
    pub fn resume_model_messages(&mut self, total: usize, mut at: impl FnMut(usize) -> Option<Value>) -> Option<usize> {
        // The newest few messages taken, as a block: a repeated message ("continue") alone could
        // be found further on in the array than where the session really is.
        let mut newest: Vec<_> = self
            .entries()
            .iter()
            .rev()
            .filter(|e| e.msg.extra.contains_key(LAYOUT))
            .take(RESUME_BLOCK)
            .map(|e| &e.msg)
            .collect();
        newest.reverse();
        let restored =
            serde_json::to_value(to_model_messages(newest.iter().copied(), &ConvertOptions::default())).ok()?;
        let restored: Vec<u64> = restored.as_array()?.iter().map(hash).collect();
        let (&last, before) = restored.split_last()?;
        let mut ends_at = |end: usize| {
            end > before.len()
                && end <= total
                && at(end - 1).map(|v| hash(&v)) == Some(last)
                && before.iter().enumerate().all(|(k, &h)| at(end - 1 - before.len() + k).map(|v| hash(&v)) == Some(h))
        };
        // The newest id numbers the ModelMessage its message starts at: where the block should end.
        let newest = *newest.last()?;
        let own = serde_json::to_value(to_model_messages([newest], &ConvertOptions::default())).ok()?;
        let numbered = newest
            .id
            .strip_prefix(&format!("{}-", crate::formats::Format::AiSdk.as_str()))
            .and_then(|n| n.parse::<usize>().ok())
            .map(|n| n - 1 + own.as_array().map_or(0, Vec::len));
        // Else (ids given otherwise) the block is looked for from the end.
        let end = numbered.filter(|&e| ends_at(e)).or_else(|| (1..=total).rev().find(|&e| ends_at(e)))?;
        self.model_cursor = ModelCursor { count: end, first: at(0).map(|v| hash(&v))?, last };
        Some(end)
    }

    /// Where to put cache breakpoints in a prompt of `head` (the app's system messages) and this
    /// session's `to_model_messages`: indices into that prompt (see `convert::cache`).
    pub fn cache_breakpoints(&self, head: &[Value]) -> Vec<(crate::convert::cache::Point, usize)> {
        let positions = self.visible_positions();
        let shown: Vec<_> = positions.iter().map(|&i| &self.entries()[i].msg).collect();
        let shapes: Vec<_> = positions.iter().map(|&i| self.shape(i)).collect();
        crate::convert::cache::in_prompt(head, &shown, &shapes)
    }

    /// The number in the newest `ai-sdk-<n>` id: new ids start past it (a session loaded
    /// tail-first holds fewer messages than its store, whose ids must not be given again).
    fn newest_model_id(&self) -> Option<usize> {
        let prefix = format!("{}-", crate::formats::Format::AiSdk.as_str());
        self.entries().iter().rev().find_map(|e| e.msg.id.strip_prefix(&prefix)?.parse::<usize>().ok())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::History;
    use crate::policy::{ModelInfo, ModelLimit};
    use crate::session::SessionOptions;

    fn conversation() -> Vec<Value> {
        vec![
            json!({"role": "user", "content": "fix the bug in lib.rs"}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "reading it"},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "read", "input": {"path": "lib.rs"},
                 "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}
            ]}),
            json!({"role": "tool", "content": [
                {"type": "tool-result", "toolCallId": "c1", "toolName": "read", "output": {"type": "text", "value": "fn main() {}"}}
            ]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]}),
            json!({"role": "user", "content": [{"type": "text", "text": "thanks, now the tests"}]}),
            json!({"role": "assistant", "content": [
                {"type": "tool-call", "toolCallId": "c2", "toolName": "bash", "input": {"command": "cargo test"}}
            ]}),
            json!({"role": "tool", "content": [
                {"type": "tool-result", "toolCallId": "c2", "toolName": "bash", "output": {"type": "text", "value": "ok"}}
            ]}),
        ]
    }

    fn session() -> History {
        let opts = SessionOptions {
            model: ModelInfo {
                limit: ModelLimit { context: 100_000, input: None, output: Some(4_000) },
                ..Default::default()
            },
            compaction: Default::default(),
            tokenizer: Some("estimate".into()),
            cache: Default::default(),
        };
        History::new(opts).unwrap()
    }

    /// A session holding `all[..n]`, rebuilt from its messages as a store load does (no cursor).
    fn reloaded(all: &[Value], n: usize) -> History {
        let mut h = session();
        h.append_model_messages(&all[..n], None).unwrap();
        let mut again = session();
        for e in h.entries() {
            again.append(e.msg.clone()).unwrap();
        }
        again
    }

    #[test]
    fn resume_finds_the_prefix_held_and_sync_takes_only_the_rest() {
        let all = conversation();
        for n in [1, 3, 4, 5, 7] {
            let mut h = reloaded(&all, n);
            let before = h.len();
            assert_eq!(h.resume_model_messages(all.len(), |i| all.get(i).cloned()), Some(n), "held {n}");
            let (status, r) = h.sync_model_messages(all.first(), &all[n.saturating_sub(1)..], all.len(), None).unwrap();
            if n == all.len() {
                assert_eq!(status, super::SyncStatus::Unchanged);
            } else {
                assert_eq!(status, super::SyncStatus::Appended);
                assert!(!r.appended.is_empty() || !r.updated.is_empty());
            }
            // Nothing taken twice: the session equals one built from the whole array at once.
            let mut whole = session();
            whole.append_model_messages(&all, None).unwrap();
            assert_eq!(h.len(), whole.len(), "held {n}, had {before}");
            let converted = |h: &History| serde_json::to_value(h.to_model_messages(&Default::default())).unwrap();
            assert_eq!(converted(&h), converted(&whole));
        }
    }

    #[test]
    fn an_append_that_takes_nothing_reports_unchanged() {
        let all = conversation();
        let mut h = session();
        let r = h.append_model_messages(&all[..2], None).unwrap();
        assert_eq!(r.status(super::SyncStatus::Appended), super::SyncStatus::Appended);
        let nothing = h.append_model_messages(&[], None).unwrap();
        assert_eq!(nothing.status(super::SyncStatus::Appended), super::SyncStatus::Unchanged);
        assert_eq!(nothing.status(super::SyncStatus::Diverged), super::SyncStatus::Diverged);
    }

    #[test]
    fn resume_reports_an_array_that_does_not_continue_the_session() {
        let all = conversation();
        let mut h = reloaded(&all, 4);
        let other = [json!({"role": "user", "content": "something else"})];
        assert_eq!(h.resume_model_messages(other.len(), |i| other.get(i).cloned()), None);
        assert_eq!(h.model_cursor().count, 0);
        // A session holding no ModelMessages has nothing to resume from.
        let mut empty = session();
        assert_eq!(empty.resume_model_messages(all.len(), |i| all.get(i).cloned()), None);
    }

    #[test]
    fn a_repeated_message_further_on_is_not_taken_for_where_the_session_is() {
        let mut all = conversation();
        let again = all[4].clone();
        all.push(json!({"role": "assistant", "content": [{"type": "text", "text": "all green"}]}));
        all.push(again);
        let mut h = reloaded(&all, 5);
        assert_eq!(h.resume_model_messages(all.len(), |i| all.get(i).cloned()), Some(5));
    }

    #[test]
    fn ids_say_where_the_session_is_when_every_turn_looks_alike() {
        let turn = [json!({"role": "user", "content": "go on"}), json!({"role": "assistant", "content": "ok"})];
        let all: Vec<Value> = turn.iter().cycle().take(12).cloned().collect();
        for n in [2, 4, 8] {
            let mut h = reloaded(&all, n);
            assert_eq!(h.resume_model_messages(all.len(), |i| all.get(i).cloned()), Some(n));
            let (_, r) = h.sync_model_messages(all.first(), &all[n - 1..], all.len(), None).unwrap();
            assert_eq!(r.appended.len(), all.len() - n);
        }
    }

    #[test]
    fn breakpoints_read_each_messages_shape_as_it_stands() {
        use crate::convert::cache::{in_prompt, Shape};
        // Placed from scratch: every shown message converted again.
        let fresh = |h: &History, head: &[Value]| {
            let shown: Vec<_> = h.visible().into_iter().map(|e| &e.msg).collect();
            let shapes: Vec<_> = shown.iter().map(|m| Shape::of(m)).collect();
            in_prompt(head, &shown, &shapes)
        };
        let head = [json!({"role": "system", "content": "be brief"})];
        let mut all = conversation();
        // Outputs longer than the marker a prune leaves.
        for i in [2, 6] {
            all[i]["content"][0]["output"]["value"] = json!("fn main() {}\n".repeat(200));
        }
        for text in ["and the docs", "done", "and the changelog", "done"] {
            let role = if text == "done" { "assistant" } else { "user" };
            all.push(json!({"role": role, "content": text}));
        }
        let mut h = session();
        // One ModelMessage at a time: a tool message updates the answer before it (its shape grows).
        for m in &all {
            h.append_model_messages(std::slice::from_ref(m), None).unwrap();
            assert_eq!(h.cache_breakpoints(&head), fresh(&h, &head));
            assert_eq!(h.cache_breakpoints(&[]), fresh(&h, &[]));
        }
        let mut opts = h.opts.clone();
        opts.compaction.prune_protect = Some(0);
        opts.compaction.prune_minimum = Some(0);
        h.opts = opts;
        assert!(h.prune().tokens_freed > 0);
        assert_eq!(h.cache_breakpoints(&head), fresh(&h, &head));
    }

    #[test]
    fn new_ids_continue_past_the_newest_one_taken() {
        let all = conversation();
        let mut h = session();
        h.append_model_messages(&all[..5], None).unwrap();
        // A tail-first load holds only the newest messages: their ids must not be given again.
        let tail: Vec<_> = h.entries()[2..].iter().map(|e| e.msg.clone()).collect();
        let mut loaded = session();
        for m in tail {
            loaded.append(m).unwrap();
        }
        let had: Vec<String> = h.entries().iter().map(|e| e.msg.id.clone()).collect();
        let r = loaded.append_model_messages(&all[5..], None).unwrap();
        assert!(!r.appended.is_empty());
        for id in &r.appended {
            assert!(!had.contains(id), "{id} reused");
        }
    }
}
