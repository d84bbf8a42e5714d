//! AI SDK `ModelMessage`s into a session: appended as they come (a tool message completes the
//! calls of the session's last answer), or synced from the whole array an app holds, appending
//! only what lies past the prefix the session already has. The prefix is recognised by the hash of
//! its first and last message and its length, so a sync costs what the new messages cost.

use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::History;
use crate::error::{CfError, Code, Result};
use crate::formats::{continue_model_messages, Warning};
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

impl SyncStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SyncStatus::Appended => "appended",
            SyncStatus::Unchanged => "unchanged",
            SyncStatus::Diverged => "diverged",
        }
    }
}

impl History {
    /// How many ModelMessages the session has taken (`appendModelMessages`, `syncModelMessages`).
    pub fn model_cursor(&self) -> ModelCursor {
        self.model_cursor
    }

    /// Appends ModelMessages. `usage` (the step's provider usage) goes on the last assistant
    /// message they hold or complete. Nothing changes when a message is rejected.
    pub fn append_model_messages(&mut self, values: &[Value], usage: Option<Usage>) -> Result<ModelAppend> {
        let last = self.entries().last().map(|e| &e.msg);
        let imported = continue_model_messages(last, values, self.len());
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
}
