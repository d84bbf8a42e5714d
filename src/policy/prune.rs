//! Prune (opencode semantics): clear old tool output, keep the call and its result paired.
//!
//! Walk back from the newest message, skipping the last two user turns (at most
//! `prune_protect_steps` answers of them, so a long loop on one request prunes too); stop at a
//! summary or at an output pruned before. The newest `prune_protect` tokens of tool output are kept; everything older
//! is cleared, but only when that frees more than `prune_minimum` (net of the markers that take
//! the outputs' place).

use super::{CompactionConfig, Seq};
use crate::message::{Part, ToolState};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneResult {
    /// (context index, part position) of each output to clear, newest first.
    pub victims: Vec<(usize, usize)>,
    /// Tokens of the outputs to clear.
    pub output_tokens: u64,
}

/// `window`: the model's context window, which scales the default thresholds; `marker`: the tokens of the marker a cleared output becomes. The walk reads `context` from its
/// end and stops early (at a summary or an earlier prune), so it never copies the context.
pub fn prune<'a>(context: &(impl Seq<'a> + ?Sized), cfg: &CompactionConfig, window: u64, marker: u64) -> PruneResult {
    let limits = cfg.prune_limits(window);
    let (mut turns, mut steps) = (0, 0u64);
    let mut total = 0u64;
    let mut found = PruneResult::default();
    'walk: for i in (0..context.len()).rev() {
        let e = context.at(i);
        if e.msg.is_user() {
            turns += 1;
        }
        if turns < 2 && steps < limits.protect_steps {
            steps += u64::from(e.msg.is_assistant());
            continue;
        }
        if e.msg.is_summary() {
            break;
        }
        for (j, part) in e.msg.parts.iter().enumerate().rev() {
            let Part::Tool(t) = part else { continue };
            let ToolState::Completed { compacted_at, .. } = &t.state else {
                continue;
            };
            if cfg.protected_tools.iter().any(|p| p == &t.tool) {
                continue;
            }
            if compacted_at.is_some() {
                // A stub a microcompact rule left is not an earlier age prune: walk past it.
                if t.state.cleared_text() != Some(crate::message::markers::PRUNED) {
                    continue;
                }
                break 'walk;
            }
            let tokens = e.parts[j].output;
            total += tokens;
            if total > limits.protect {
                found.output_tokens += tokens;
                found.victims.push((i, j));
            }
        }
    }
    let freed = found.output_tokens.saturating_sub(marker * found.victims.len() as u64);
    if freed > limits.minimum {
        found
    } else {
        PruneResult::default()
    }
}
