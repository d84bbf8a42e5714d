//! What the model was handed last (`History::hand_model_messages`), so that the next hand-back
//! converts only the messages that changed or arrived since: an agent loop that sends the session's
//! messages on every call (after a prune or a compaction) pays for what is new, not for the whole
//! conversation.

use super::History;
use crate::convert::{with_ends_from, CallIds, ConvertOptions, ModelMessage};

/// The last hand-back: the positions of the messages it was made of, where each one's model
/// messages end, the call ids they took, and how many of them still convert as they did.
#[derive(Clone, Debug)]
pub(super) struct Handed {
    shown: Vec<usize>,
    ends: Vec<usize>,
    ids: CallIds,
    opts: ConvertOptions,
    /// How many of `shown` still convert as they did: a change to a message lowers it.
    intact: usize,
}

/// Model messages as a change to those handed back before.
#[derive(Debug)]
pub struct HandBack<'a> {
    /// How many of the previous hand-back's model messages stand as they were.
    pub unchanged: usize,
    /// The model messages that follow them.
    pub messages: Vec<ModelMessage<'a>>,
    /// The messages `messages` were made of.
    pub sources: Vec<&'a crate::message::Message>,
}

impl Handed {
    /// The message at position `i` changed: it and those after it convert afresh.
    pub(super) fn changed(&mut self, i: usize) {
        self.intact = self.intact.min(self.shown.partition_point(|&p| p < i));
    }
}

impl History {
    /// The visible messages as `to_model_messages` gives them, as a change to the previous
    /// hand-back: `held` is how many of its model messages the caller still holds (0: convert
    /// everything). Only the messages that changed (an update, a prune) or arrived since are
    /// converted; a change of what is visible (a compaction) or of the options converts all.
    pub fn hand_model_messages(&mut self, opts: &ConvertOptions, held: usize) -> HandBack<'_> {
        let shown = self.visible_positions();
        let (keep, ids) = match self.handed.take() {
            Some(h) if h.opts == *opts && shown.starts_with(&h.shown[..h.intact]) => {
                let mut keep = h.intact;
                // Whole messages only: the held count may end inside one message's output.
                while keep > 0 && h.ends[keep - 1] > held {
                    keep -= 1;
                }
                let (mut ids, mut ends) = (h.ids, h.ends);
                ids.rewind(keep);
                ends.truncate(keep);
                (keep, Some((ids, ends)))
            }
            _ => (0, None),
        };
        let (mut ids, mut ends) = ids.unwrap_or_default();
        let unchanged = ends.last().copied().unwrap_or(0);
        let sources: Vec<&crate::message::Message> = shown[keep..].iter().map(|&p| &self.entries[p].msg).collect();
        let (messages, more) = with_ends_from(sources.iter().copied(), opts, &mut ids);
        ends.extend(more.into_iter().map(|e| e + unchanged));
        let intact = shown.len();
        self.handed = Some(Handed { shown, ends, ids, opts: opts.clone(), intact });
        HandBack { unchanged, messages, sources }
    }
}
