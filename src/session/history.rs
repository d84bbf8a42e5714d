use rustc_hash::FxHashMap;

use super::derived::DerivedList;
use super::fenwick::Fenwick;
use super::ids::timed_id;
use super::pins::{pins_of, readable_text, Pin};
use super::prunes::Prunes;
pub use super::pruning::{PruneOutcome, RuleCount};
use super::requests::Growth;
use super::usage::Calibration;
use super::visible::Visible;
use super::Breakdown;
use super::{ContextUsage, SessionOptions, Source};
use crate::convert::{to_model_messages, ConvertOptions, ModelMessage};
use crate::error::{CfError, Code, Result};
use crate::message::{Message, Part, ToolState};
use crate::policy::{self, pressure_tier, Base, Selection, Turn, View};
use crate::tokens::Entry;
use crate::tokens::{Counter, MessageCount, Tokenizer};

/// Messages in arrival order, each counted once, with what per-turn queries need kept current:
/// prefix sums of tokens, the newest completed compaction, and the newest trusted provider usage.
#[derive(Clone, Debug)]
pub struct History {
    pub(super) opts: SessionOptions,
    pub(super) counter: Counter,
    pub(super) entries: Vec<Entry>,
    /// What is worked out of each message when first asked (prompt shape, transcript digest).
    pub(super) derived: DerivedList,
    /// Positions by message id (Fx: ids are hashed once per message a load reads).
    index: FxHashMap<String, usize>,
    pub(super) sums: Fenwick,
    /// Prefix sums of each message's tokens by kind (`breakdown`).
    pub(super) kinds: Fenwick<Breakdown>,
    /// Prefix sums of what each message adds to the context's growth per request.
    pub(super) growth: Fenwick<Growth>,
    pub(super) view: View,
    /// Where the view's computation starts (a history loaded from the part of a file its context
    /// needs starts from the state the file recorded).
    base: Base,
    /// Newest answer whose provider usage describes the current context.
    last_usage: Option<usize>,
    pub(super) prunes: Prunes,
    pub(super) calibration: Calibration,
    /// The history's clock (ms): never behind the wall clock or a reported message time, and
    /// strictly increasing, so a prune is always ordered after the usage it corrects.
    pub(super) clock: f64,
    pins: Vec<Pin>,
    /// Positions of the entries that start a turn (`policy::is_turn_start`), ascending.
    pub(super) turn_starts: Vec<usize>,
    /// How far the AI SDK ModelMessages taken so far go (`append_model_messages`).
    pub(super) model_cursor: super::ModelCursor,
    /// Tokens the provider receives besides the messages: the system prompt and the tool
    /// definitions (`set_overhead`). Counted until a provider usage report covers them.
    pub(super) overhead: u64,
    /// The last request the caller recorded (`record_request`).
    pub(super) last_request: Option<super::Sent>,
    /// The last `hand_model_messages`, which the next one continues.
    pub(super) handed: Option<super::handed::Handed>,
}

/// An output a prune would clear: its message's position, the signed change of that message's
/// tokens, and the tokens it clears (which provider usage reported before the prune still holds).
#[derive(Clone, Copy, Debug)]
pub(super) struct Clearing {
    pub position: usize,
    pub delta: i64,
    pub cleared: u64,
}

/// Messages counted per chunk between abort checks.
const CHUNK: usize = 256;

/// Messages with their counts where known, each moved once into its entry (counted when its count
/// is missing).
fn entries_of(
    share: impl Iterator<Item = (Message, Option<MessageCount>)>,
    counter: &Counter,
    aborted: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<Entry>> {
    let mut out = Vec::with_capacity(share.size_hint().0);
    for (k, (msg, count)) in share.enumerate() {
        if k % CHUNK == 0 && aborted() {
            return Err(CfError::aborted());
        }
        out.push(match count {
            Some((parts, tokens)) => Entry { msg, parts, tokens, seen_at: 0.0, reported_tokens: tokens },
            None => Entry::new(msg, counter),
        });
    }
    Ok(out)
}

impl History {
    pub fn new(opts: SessionOptions) -> Result<History> {
        let counter = opts.counter()?;
        if let Tokenizer::Exact(enc) = counter.tokenizer {
            crate::tokens::warm_up(enc);
        }
        Ok(History {
            opts,
            counter,
            entries: Vec::new(),
            derived: DerivedList::default(),
            index: FxHashMap::default(),
            sums: Fenwick::default(),
            kinds: Fenwick::default(),
            growth: Fenwick::default(),
            view: View::default(),
            base: Base::default(),
            last_usage: None,
            prunes: Prunes::default(),
            calibration: Calibration::default(),
            clock: 0.0,
            pins: Vec::new(),
            turn_starts: Vec::new(),
            model_cursor: Default::default(),
            overhead: 0,
            last_request: None,
            handed: None,
        })
    }

    /// Builds a history from many messages, counting on every core. `aborted` is polled between
    /// chunks.
    pub fn from_messages(
        messages: Vec<Message>,
        opts: SessionOptions,
        aborted: &(dyn Fn() -> bool + Sync),
    ) -> Result<History> {
        History::from_messages_at(messages, Base::default(), opts, aborted)
    }

    /// `from_messages`, with the view of the first `base.len` messages given: they are what a
    /// longer history showed after its newest compaction (see `View::base`), the rest came later.
    pub fn from_messages_at(
        messages: Vec<Message>,
        base: Base,
        opts: SessionOptions,
        aborted: &(dyn Fn() -> bool + Sync),
    ) -> Result<History> {
        History::from_counted_at(messages, Vec::new(), base, opts, aborted)
    }

    /// `from_messages_at`, with the counts of some messages already made (by `opts`' counter,
    /// as a store load makes them while it parses): `counts[i]`, when there, is message `i`'s.
    pub fn from_counted_at(
        messages: Vec<Message>,
        counts: Vec<Option<MessageCount>>,
        base: Base,
        opts: SessionOptions,
        aborted: &(dyn Fn() -> bool + Sync),
    ) -> Result<History> {
        let len = messages.len();
        let fits = base.len <= len
            && base.order.iter().chain(&base.answered).all(|&p| p < base.len)
            && base.cut.as_ref().is_none_or(|c| c.request < base.len && c.summary < base.len);
        if !fits {
            return Err(CfError::invalid_argument(format!(
                "the base view covers {} messages and names positions beyond them (of {len})",
                base.len
            )));
        }
        let mut h = History::new(opts)?;
        h.base = base;
        let mut index = FxHashMap::with_capacity_and_hasher(messages.len(), Default::default());
        for (i, m) in messages.iter().enumerate() {
            if let Some(prev) = index.insert(m.id.clone(), i) {
                return Err(CfError::new(
                    Code::DuplicateId,
                    format!("message {:?}: id already used by the message at index {prev}", m.id),
                ));
            }
        }
        let counter = h.counter;
        // Threads only when there is counting to share: a store load finds most counts recorded.
        let missing = (0..len).filter(|&i| counts.get(i).is_none_or(Option::is_none)).count();
        let threads = if missing < CHUNK { 1 } else { crate::cores::cores() };
        let per_thread = len.div_ceil(threads).max(CHUNK);
        let mut counts = counts.into_iter();
        let pairs = messages.into_iter().map(|m| (m, counts.next().flatten()));
        let entries = if len <= per_thread {
            // One share: made here (a thread to wait for would only add its start).
            entries_of(pairs, &counter, aborted)?
        } else {
            let mut pairs: Vec<_> = pairs.collect();
            let mut shares = Vec::with_capacity(threads);
            while pairs.len() > per_thread {
                let rest = pairs.split_off(per_thread);
                shares.push(std::mem::replace(&mut pairs, rest));
            }
            shares.push(pairs);
            std::thread::scope(|scope| -> Result<Vec<Entry>> {
                let workers: Vec<_> = shares
                    .into_iter()
                    .map(|share| scope.spawn(move || entries_of(share.into_iter(), &counter, aborted)))
                    .collect();
                let mut entries = Vec::with_capacity(len);
                for w in workers {
                    entries.extend(w.join().map_err(|_| CfError::new(Code::Internal, "a counting thread panicked"))??);
                }
                Ok(entries)
            })?
        };
        h.entries = entries;
        h.derived = DerivedList::with_len(h.entries.len());
        let now = h.tick();
        for e in &mut h.entries {
            e.seen_at = e.stated_time().unwrap_or(now);
            h.clock = h.clock.max(e.seen_at);
        }
        h.prunes = Prunes::of(&h.entries);
        h.clock = h.clock.max(h.prunes.latest());
        h.index = index;
        h.sums = Fenwick::from_values(h.entries.iter().map(|e| e.tokens));
        h.kinds = Fenwick::from_values(h.entries.iter().map(|e| Breakdown::of(e, &h.counter)));
        h.growth = Fenwick::from_values(h.entries.iter().map(Growth::of));
        h.turn_starts = turn_starts(&h.entries);
        h.pins = pins_of(h.entries.iter().map(|e| &e.msg));
        h.refresh_view();
        Ok(h)
    }

    /// The pins, oldest first.
    pub fn pins(&self) -> &[Pin] {
        &self.pins
    }

    /// Replaces the pins (a store load gives the ones its file recorded last).
    pub fn set_pins(&mut self, pins: Vec<Pin>) {
        self.pins = pins;
    }

    /// Pins a message: what the model reads of it is kept verbatim through compactions.
    /// `CF_NOT_FOUND` when the session has no such message. Pinning it again replaces the note.
    pub fn pin(&mut self, message_id: &str, note: Option<String>) -> Result<Pin> {
        let Some(e) = self.get(message_id) else {
            return Err(CfError::new(Code::NotFound, format!("pin: no message {message_id:?} in the session")));
        };
        let text = readable_text(&e.msg);
        if let Some(p) = self.pins.iter_mut().find(|p| p.message_id.as_deref() == Some(message_id)) {
            p.note = note;
            p.text = text;
            return Ok(p.clone());
        }
        let pin = Pin { id: timed_id("pin"), message_id: Some(message_id.to_string()), text, note };
        self.pins.push(pin.clone());
        Ok(pin)
    }

    /// Pins a text (a fact the agent or the user wants kept verbatim).
    pub fn pin_text(&mut self, text: &str, note: Option<String>) -> Result<Pin> {
        if text.trim().is_empty() {
            return Err(CfError::invalid_argument("pinText: the text is empty"));
        }
        let pin = Pin { id: timed_id("pin"), message_id: None, text: text.to_string(), note };
        self.pins.push(pin.clone());
        Ok(pin)
    }

    /// Removes a pin, by its id or the id of the pinned message; false when there is none.
    pub fn unpin(&mut self, id: &str) -> bool {
        let before = self.pins.len();
        self.pins.retain(|p| p.id != id && p.message_id.as_deref() != Some(id));
        self.pins.len() != before
    }

    /// The provider's report on the answer at `id` was made before its tool results arrived: from
    /// now on they count locally, beside the report (as when they arrive by `update`).
    pub(super) fn report_before_results(&mut self, id: &str) {
        if let Some(&i) = self.index.get(id) {
            let e = &mut self.entries[i];
            let results: u64 = e
                .msg
                .parts
                .iter()
                .zip(&e.parts)
                .filter(|(p, _)| {
                    matches!(p, Part::Tool(t) if matches!(t.state, ToolState::Completed { .. } | ToolState::Error { .. }))
                })
                .map(|(_, c)| c.total.saturating_sub(c.call))
                .sum();
            e.reported_tokens = e.tokens.saturating_sub(results);
        }
    }

    /// Sets the tokens the provider receives besides the messages (system prompt, tool
    /// definitions), counted from their text with the session's tokenizer.
    pub fn set_overhead(&mut self, texts: &[&str]) -> u64 {
        self.overhead = texts.iter().filter(|t| !t.is_empty()).map(|t| self.counter.text(t)).sum();
        self.overhead
    }

    /// `set_overhead` of an `Overhead` value: `system` (a string, or strings) and `tools` (any
    /// JSON, counted as its text); anything else in it counts nothing.
    pub fn set_overhead_of(&mut self, overhead: &serde_json::Value) -> u64 {
        use serde_json::Value;
        let mut texts: Vec<String> = match overhead.get("system") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
            _ => Vec::new(),
        };
        if let Some(tools) = overhead.get("tools").filter(|t| !t.is_null()) {
            texts.push(tools.to_string());
        }
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.set_overhead(&texts)
    }

    pub fn overhead(&self) -> u64 {
        self.overhead
    }

    pub fn options(&self) -> &SessionOptions {
        &self.opts
    }

    pub fn counter(&self) -> &Counter {
        &self.counter
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.index.get(id).map(|&i| &self.entries[i])
    }

    /// The position of the message with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// Appends a message. A rejected message leaves the history exactly as it was.
    pub fn append(&mut self, msg: Message) -> Result<()> {
        if let Some(&prev) = self.index.get(&msg.id) {
            return Err(CfError::new(
                Code::DuplicateId,
                format!("message {:?}: id already used by the message at index {prev}", msg.id),
            ));
        }
        let mut entry = Entry::new(msg, &self.counter);
        entry.seen_at = self.tick();
        self.push_entry(entry);
        Ok(())
    }

    /// Appends a counted entry whose id is new, as it is (its `seen_at` included).
    pub(super) fn push_entry(&mut self, entry: Entry) {
        self.clock = self.clock.max(entry.seen_at);
        let i = self.entries.len();
        self.index.insert(entry.msg.id.clone(), i);
        self.sums.push(entry.tokens);
        self.kinds.push(Breakdown::of(&entry, &self.counter));
        self.growth.push(Growth::of(&entry));
        if policy::is_turn_start(&entry) {
            self.turn_starts.push(i);
        }
        let changes_view = entry.msg.is_completed_summary();
        let trusted = entry.msg.trusted_usage().is_some();
        self.entries.push(entry);
        self.derived.push();
        if changes_view {
            self.refresh_view();
        } else if trusted {
            self.note_usage(i);
        }
    }

    /// Replaces the message with the same id (streaming updates, finished answers, edits).
    pub fn update(&mut self, msg: Message) -> Result<()> {
        let Some(&i) = self.index.get(&msg.id) else {
            return Err(CfError::new(
                Code::NotFound,
                format!("message {:?}: no message with this id to update", msg.id),
            ));
        };
        let mut entry = Entry::new(msg, &self.counter);
        // Streaming more of an answer does not make its usage report newer; a new report does.
        let same_report = entry.msg.trusted_usage() == self.entries[i].msg.trusted_usage();
        entry.seen_at = if same_report { self.entries[i].seen_at } else { self.tick() };
        let old = std::mem::replace(&mut self.entries[i], entry);
        self.changed(i);
        self.derived.reset(i);
        self.sums.replace(i, old.tokens, self.entries[i].tokens);
        self.kinds.replace(i, Breakdown::of(&old, &self.counter), Breakdown::of(&self.entries[i], &self.counter));
        self.growth.replace(i, Growth::of(&old), Growth::of(&self.entries[i]));
        if policy::is_turn_start(&old) != policy::is_turn_start(&self.entries[i]) {
            self.turn_starts = turn_starts(&self.entries);
        }
        if old.parts.iter().chain(&self.entries[i].parts).any(|c| c.cleared > 0) {
            self.prunes.replace(i, &self.entries[i]);
        }
        let new = &self.entries[i].msg;
        let structural = |m: &Message| m.is_summary() || m.compaction().is_some();
        if structural(&old.msg) || structural(new) {
            self.refresh_view();
        } else if new.trusted_usage().is_some() {
            if i >= self.view.usage_floor() && self.last_usage.is_none_or(|u| i >= u) {
                self.note_usage(i);
            }
        } else if self.last_usage == Some(i) {
            self.last_usage = self.find_last_usage();
            self.calibration.rebase();
        }
        Ok(())
    }

    fn find_last_usage(&self) -> Option<usize> {
        let floor = self.view.usage_floor();
        (floor..self.entries.len()).rev().find(|&i| self.entries[i].msg.trusted_usage().is_some())
    }

    /// Recomputes the view, then replays the trusted usage reports of the current context so the
    /// calibration is a function of the history alone (a fresh session over the same messages
    /// agrees with one built message by message).
    fn refresh_view(&mut self) {
        self.handed = None;
        let entries = &self.entries;
        self.view = View::compute_from(&self.base, entries.len(), &|i| &entries[i].msg, &self.index);
        let view = &self.view;
        self.derived.forget_hidden(|i| view.is_visible(i));
        self.last_usage = None;
        self.calibration = Calibration::default();
        let floor = self.view.usage_floor();
        for i in floor..self.entries.len() {
            if self.entries[i].msg.trusted_usage().is_some() {
                self.note_usage(i);
            }
        }
    }

    /// The message at position `i` changed in place: the next hand-back converts it again.
    pub(super) fn changed(&mut self, i: usize) {
        if let Some(h) = &mut self.handed {
            h.changed(i);
        }
    }

    /// Advances the clock: the wall clock, but always after every time seen so far.
    pub(super) fn tick(&mut self) -> f64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        self.clock = now.max(self.clock + 0.001);
        self.clock
    }

    fn note_usage(&mut self, i: usize) {
        self.last_usage = Some(i);
        if self.counter.tokenizer == Tokenizer::Estimate {
            let prompt = self.entries[i].msg.trusted_usage().map_or(0, |u| u.prompt_tokens());
            let before = self.visible_tokens().saturating_sub(self.sums.range(i, self.entries.len()));
            self.calibration.observe(i, prompt, before);
        }
    }

    /// Tokens by kind of positions `[a, b)` (`b` may be the view's open end).
    pub(super) fn kinds_range(&self, a: usize, b: usize) -> Breakdown {
        self.kinds.range(a, b.min(self.entries.len()))
    }

    /// Local token count of everything the model sees.
    fn visible_tokens(&self) -> u64 {
        let len = self.entries.len();
        self.view.segments.iter().map(|&(a, b)| self.sums.range(a, b.min(len))).sum()
    }

    #[cfg(test)]
    pub(crate) fn visible_tokens_for_tests(&self) -> u64 {
        self.visible_tokens()
    }

    pub fn usable(&self) -> u64 {
        policy::usable(&self.opts.model, &self.opts.compaction)
    }

    pub fn usage(&self) -> ContextUsage {
        self.usage_after(&[])
    }

    /// `usage()` as it will be once the outputs of `pending` are cleared (a prune's dry run).
    pub(super) fn usage_after(&self, pending: &[Clearing]) -> ContextUsage {
        let len = self.entries.len();
        // The change of the tokens of positions `[a, b)`.
        let shift = |a: usize, b: usize| -> i64 {
            pending.iter().filter(|c| (a..b).contains(&c.position)).map(|c| c.delta).sum()
        };
        let plus = |n: u64, d: i64| n.saturating_add_signed(d);
        let (usage_tokens, local, source) = match self.last_usage {
            Some(u) => {
                let reported = self.entries[u].msg.trusted_usage().map_or(0, |x| x.context_tokens());
                // What the answer grew by after its report (its tool results) is counted locally.
                let grown =
                    plus(self.entries[u].tokens, shift(u, u + 1)).saturating_sub(self.entries[u].reported_tokens);
                let trailing = plus(self.sums.range(u + 1, len), shift(u + 1, len)) + grown;
                let source = if trailing == 0 { Source::Usage } else { Source::Mixed };
                // Outputs cleared after the report are still in it.
                let visible = |p: usize| self.view.is_visible(p);
                let cleared = self.prunes.cleared_after(self.entries[u].seen_at, u, visible)
                    + pending.iter().filter(|c| c.position < u && visible(c.position)).map(|c| c.cleared).sum::<u64>();
                (reported.saturating_sub(cleared), trailing, source)
            }
            // The system prompt and tool definitions count until a usage report covers them.
            None => (0, plus(self.visible_tokens(), shift(0, len)) + self.overhead, Source::Estimate),
        };
        let local_tokens = self.calibration.apply(local);
        let tokens = usage_tokens + local_tokens;
        let usable = self.usable();
        // A known window too small for its output reserve overflows at any size.
        let pressure = if self.opts.model.limit.context == 0 { 0.0 } else { tokens as f64 / usable.max(1) as f64 };
        ContextUsage {
            tokens,
            usable,
            pressure,
            tier: pressure_tier(pressure),
            source,
            usage_tokens,
            local_tokens,
            calibration: self.calibration.factor,
        }
    }

    pub fn is_overflow(&self) -> bool {
        policy::is_overflow(self.usage().tokens, &self.opts.model, &self.opts.compaction)
    }

    /// Positions of the messages the model sees, in the order it reads them.
    pub fn visible_positions(&self) -> Vec<usize> {
        self.view.order(self.entries.len())
    }

    pub fn visible(&self) -> Vec<&Entry> {
        self.visible_positions().into_iter().map(|i| &self.entries[i]).collect()
    }

    pub fn view(&self) -> &View {
        &self.view
    }

    pub fn turns(&self) -> Vec<Turn> {
        policy::turns(&self.visible())
    }

    pub fn select(&self) -> Selection {
        let budget = policy::preserve_recent_budget(&self.opts.model, &self.opts.compaction);
        policy::select(&self.context_seq(), budget, self.opts.compaction.tail_turns)
    }

    /// The tail a compaction now keeps: `select()`, moved back to keep what the provider has not
    /// read yet (see `policy::compaction_tail`).
    pub fn compaction_selection(&self) -> Selection {
        policy::compaction_tail(
            &self.context_seq(),
            &self.opts.model,
            &self.opts.compaction,
            self.unread_in_context(),
            self.overhead,
        )
    }

    /// The context read in place, for walks that stop early.
    pub(super) fn context_seq(&self) -> Visible<'_> {
        Visible::new(&self.entries, &self.sums, &self.turn_starts, &self.view.segments)
    }

    /// The options `toModelMessages` uses unless told otherwise.
    pub fn convert_options(&self) -> ConvertOptions {
        ConvertOptions {
            strip_media: false,
            tool_output_max_chars: self.opts.compaction.tool_output_max_chars.map(|n| n as usize),
        }
    }

    pub fn to_model_messages(&self, opts: &ConvertOptions) -> Vec<ModelMessage<'_>> {
        to_model_messages(self.visible().into_iter().map(|e| &e.msg), opts)
    }
}

/// Positions of the entries that start a turn, ascending.
fn turn_starts(entries: &[Entry]) -> Vec<usize> {
    (0..entries.len()).filter(|&i| policy::is_turn_start(&entries[i])).collect()
}
