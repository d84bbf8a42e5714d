//! Microcompact: prune rules that lose nothing the context does not hold elsewhere. An older read of
//! a file whose later read returned the same content becomes a one-line stub pointing at the later
//! read; an output identical to a later one is kept once; an older read of a file modified
//! afterwards is marked stale. Each rule is a `CompactionConfig` option; like any prune, the output
//! stays in the history and the store, marked (`compactedAt`, with the stub in `compactedAs`).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::{CompactionConfig, Seq};
use crate::message::{Part, ToolState};
use crate::summary_input::file_op;
use crate::tokens::Counter;

/// Outputs shorter than this are never deduplicated: a stub would not save anything.
const MIN_DUPLICATE_CHARS: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Rule {
    /// Cleared by age (opencode's prune).
    Age,
    /// The same output as a later call.
    Duplicate,
    /// The same content as a later read of the same file.
    Reread,
    /// A read of a file modified afterwards.
    Stale,
    /// An output the model had not read yet, cut (head and tail kept) so that it fits the window
    /// beside a summary (`History::cut_unread`).
    Fit,
}

/// An output a rule replaces with `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stub {
    pub position: (usize, usize),
    pub rule: Rule,
    pub text: String,
}

fn norm(path: &str) -> &str {
    path.trim().trim_start_matches("./")
}

/// The outputs the enabled rules would stub. Like prune, the newest two user turns are left as
/// they are, and the walk stops at a summary; outputs already pruned are neither stubbed nor
/// pointed at.
pub fn microcompact<'a>(context: &(impl Seq<'a> + ?Sized), cfg: &CompactionConfig, counter: &Counter) -> Vec<Stub> {
    if !(cfg.prune_duplicates || cfg.prune_rereads || cfg.prune_stale_reads) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut turns = 0;
    // What later (newer) parts hold: outputs, the nearest later read of each path, modified paths.
    let mut outputs: HashMap<&str, (&str, &str)> = HashMap::new();
    let mut reads: HashMap<String, (&str, &str)> = HashMap::new();
    let mut modified: HashSet<String> = HashSet::new();
    for i in (0..context.len()).rev() {
        let e = context.at(i);
        if e.msg.is_user() {
            turns += 1;
        }
        if e.msg.is_summary() && turns >= 2 {
            break;
        }
        for (j, part) in e.msg.parts.iter().enumerate().rev() {
            let Part::Tool(t) = part else { continue };
            let ToolState::Completed { output, compacted_at, .. } = &t.state else { continue };
            if compacted_at.is_some() {
                continue;
            }
            let op = file_op(&t.tool, t.state.input());
            let read_path = match &op {
                Some((false, paths)) if paths.len() == 1 => Some(norm(&paths[0]).to_string()),
                _ => None,
            };
            let read_path = read_path.as_deref();
            let candidate = turns >= 2 && !cfg.protected_tools.iter().any(|p| p == &t.tool);
            let stub = candidate
                .then(|| {
                    if let Some(path) = read_path.filter(|p| cfg.prune_stale_reads && modified.contains(*p)) {
                        return Some((
                            Rule::Stale,
                            format!(
                                "[Stale: {path} was modified after this read; read it again for its current content]"
                            ),
                        ));
                    }
                    if let Some((path, (_, call))) = read_path
                        .filter(|_| cfg.prune_rereads)
                        .and_then(|p| reads.get(p).map(|r| (p, r)))
                        .filter(|(_, (later, _))| *later == output.as_str())
                    {
                        return Some((
                            Rule::Reread,
                            format!("[Unchanged: same content as the later read of {path} (call {call})]"),
                        ));
                    }
                    if cfg.prune_duplicates && output.len() >= MIN_DUPLICATE_CHARS {
                        if let Some((tool, call)) = outputs.get(output.as_str()) {
                            return Some((Rule::Duplicate, format!("[Same output as the later {tool} call {call}]")));
                        }
                    }
                    None
                })
                .flatten()
                .filter(|(_, text)| counter.text(text) < e.parts[j].output);
            let stubbed = stub.is_some();
            if let Some((rule, text)) = stub {
                out.push(Stub { position: (i, j), rule, text });
            }
            match op {
                Some((true, paths)) => modified.extend(paths.iter().map(|p| norm(p).to_string())),
                Some((false, _)) if !stubbed => {
                    if let Some(p) = read_path {
                        reads.insert(p.to_string(), (output.as_str(), t.call_id.as_str()));
                    }
                }
                _ => {}
            }
            if !stubbed && output.len() >= MIN_DUPLICATE_CHARS {
                outputs.insert(output.as_str(), (t.tool.as_str(), t.call_id.as_str()));
            }
        }
    }
    out
}
