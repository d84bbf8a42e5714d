//! Prune over the context as the model reads it (so a history and its `context()` prune alike),
//! and its dry run: what a prune would free and where the prompt would first change.

use std::collections::{BTreeMap, HashSet};

use super::history::Clearing;
use super::requests::Growth;
use super::{Breakdown, History};
use crate::message::{markers, Part, ToolState};
use crate::policy::{self, Rule, Seq};

/// What one prune rule cleared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleCount {
    pub parts: u64,
    pub tokens: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PruneOutcome {
    pub part_ids: Vec<String>,
    /// For each pruned part, the stub a microcompact rule put in its place (`None`: cleared by age).
    pub stubs: Vec<Option<String>>,
    /// Parts and tokens freed by each rule.
    pub rules: BTreeMap<Rule, RuleCount>,
    /// The message of each pruned part, in the same order.
    pub message_ids: Vec<String>,
    pub tokens_freed: u64,
    pub compacted_at: f64,
    /// The first message of the context the prune changes: the provider's cached prefix ends there.
    pub first_changed: Option<String>,
    /// Tokens of the context from that message on, after the prune: what the next request sends
    /// again instead of reading it from the cache.
    pub tokens_from_first_changed: u64,
    /// The context's tokens after the prune, as `usage()` says them (provider usage reported
    /// before it is corrected by what it clears).
    pub tokens_after: u64,
    /// Nothing was changed: this is what a prune would do now.
    pub dry_run: bool,
}

/// An output to clear: its (position, part), the rule, and a microcompact stub.
type Victim = ((usize, usize), Rule, Option<String>);

/// `part` as a prune at `at` leaves it.
fn clear(part: &mut Part, at: f64, stub: Option<&str>) {
    if let Part::Tool(t) = part {
        if let ToolState::Completed { compacted_at, extra, .. } = &mut t.state {
            *compacted_at = Some(at);
            if let Some(text) = stub {
                extra.insert("compactedAs".into(), serde_json::Value::String(text.to_string()));
            }
        }
    }
}

impl History {
    /// The outputs a prune would clear now, microcompact stubs first, with the context index and
    /// the history position of each.
    fn victims(&self) -> Vec<(usize, Victim)> {
        let context = self.context_seq();
        let cfg = &self.opts.compaction;
        let found = policy::prune(&context, cfg, self.opts.model.limit.context, self.counter.text(markers::PRUNED));
        let stubs = policy::microcompact(&context, cfg, &self.counter);
        let at = |(k, j): (usize, usize)| (k, (context.position(k), j));
        let stubbed: HashSet<(usize, usize)> = stubs.iter().map(|s| s.position).collect();
        let by_age = found.victims.into_iter().filter(|v| !stubbed.contains(v)).map(|v| {
            let (k, p) = at(v);
            (k, (p, Rule::Age, None))
        });
        stubs
            .into_iter()
            .map(|s| {
                let (k, p) = at(s.position);
                (k, (p, s.rule, Some(s.text)))
            })
            .chain(by_age)
            .collect()
    }

    /// Clears old tool output (see `policy::prune`), marking it with the time of the prune.
    pub fn prune(&mut self) -> PruneOutcome {
        let victims = self.victims();
        self.clear_all(&victims)
    }

    /// Cuts the tool outputs the provider has not read yet (head and tail kept, with a marker that
    /// says how much was left out) when they do not fit the tail a compaction keeps of them
    /// (`policy::unread_cap`): the model then reads the newest results, cut, instead of a summary
    /// of results it never saw. The largest are cut first, down to one size. Nothing when they fit.
    pub fn cut_unread(&mut self) -> PruneOutcome {
        let cuts = self.unread_cuts();
        self.clear_all(&cuts)
    }

    /// The stubs `cut_unread` puts in place of unread outputs, shrunk until the unread step fits.
    fn unread_cuts(&self) -> Vec<(usize, Victim)> {
        let seq = self.context_seq();
        let cap = policy::unread_cap(&self.opts.model, &self.opts.compaction, self.overhead);
        let Some(start) = policy::unread_start(&seq, self.unread_in_context()).filter(|_| cap > 0) else {
            return Vec::new();
        };
        let total = seq.tokens(start, seq.len());
        // The outputs that can shrink, as (context index, part, tokens sent, characters).
        let mut outputs = Vec::new();
        for k in start..seq.len() {
            let e = seq.at(k);
            for (j, part) in e.msg.parts.iter().enumerate() {
                if let Part::Tool(t) = part {
                    if let ToolState::Completed { output, compacted_at: None, .. } = &t.state {
                        outputs.push((k, j, e.parts[j].output, output.chars().count()));
                    }
                }
            }
        }
        let sizes: Vec<u64> = outputs.iter().map(|o| o.2).collect();
        let Some(mut level) = level(&sizes, total.saturating_sub(cap)).filter(|_| total > cap) else {
            return Vec::new();
        };
        // What a cut counts is known once it is made (characters per token vary, the marker
        // counts): lower the level by what is still over, a few times.
        for _ in 0..4 {
            let mut cuts = Vec::new();
            let mut after = total;
            for &(k, j, tokens, chars) in &outputs {
                if tokens <= level {
                    continue;
                }
                let Part::Tool(t) = &seq.at(k).msg.parts[j] else { continue };
                let ToolState::Completed { output, .. } = &t.state else { continue };
                let keep = (chars as u128 * u128::from(level) / u128::from(tokens)) as usize;
                let stub = crate::message::keep_head_and_tail(output, keep).into_owned();
                let mut part = seq.at(k).msg.parts[j].clone();
                clear(&mut part, 0.0, Some(&stub));
                after = after - seq.at(k).parts[j].total + self.counter.part(&part).total;
                cuts.push((k, ((seq.position(k), j), Rule::Fit, Some(stub))));
            }
            let over = after.saturating_sub(cap);
            if over == 0 {
                return cuts;
            }
            level = level.saturating_sub(over.div_ceil(cuts.len().max(1) as u64));
        }
        Vec::new()
    }

    /// Clears `victims` (a prune's, or `cut_unread`'s), marking them with the time of now.
    fn clear_all(&mut self, victims: &[(usize, Victim)]) -> PruneOutcome {
        let now = self.tick();
        let mut outcome = PruneOutcome { compacted_at: now, ..Default::default() };
        let mut freed = 0i64;
        for &(_, ((i, j), rule, ref stub)) in victims {
            clear(&mut self.entries[i].msg.parts[j], now, stub.as_deref());
            self.changed(i);
            // The transcript block shows the cleared output now (the prompt shape stays).
            self.derived.forget_digest(i);
            let count = self.counter.part(&self.entries[i].msg.parts[j]);
            let entry = &mut self.entries[i];
            // An output shorter than the marker grows a little: the change is signed.
            let delta = count.total as i64 - entry.parts[j].total as i64;
            let kinds_before = Breakdown::of(entry, &self.counter);
            let growth_before = Growth::of(entry);
            self.prunes.record(now, i, count.cleared);
            entry.parts[j] = count;
            let tokens_before = entry.tokens;
            entry.tokens = (entry.tokens as i64 + delta) as u64;
            self.sums.replace(i, tokens_before, entry.tokens);
            self.kinds.replace(i, kinds_before, Breakdown::of(entry, &self.counter));
            self.growth.replace(i, growth_before, Growth::of(entry));
            freed -= delta;
            self.note(&mut outcome, (i, j), rule, stub.clone(), delta);
        }
        self.finish(&mut outcome, victims, freed);
        if outcome.tokens_freed > 0 {
            self.calibration.rebase();
        }
        outcome.tokens_after = self.usage().tokens;
        outcome
    }

    /// What `prune` would clear and free now, changing nothing.
    pub fn prune_dry_run(&self) -> PruneOutcome {
        let victims = self.victims();
        let now = self.clock;
        let mut outcome = PruneOutcome { dry_run: true, compacted_at: now, ..Default::default() };
        let mut freed = 0i64;
        let mut pending = Vec::with_capacity(victims.len());
        for &(_, ((i, j), rule, ref stub)) in &victims {
            let mut part = self.entries[i].msg.parts[j].clone();
            clear(&mut part, now, stub.as_deref());
            let count = self.counter.part(&part);
            let delta = count.total as i64 - self.entries[i].parts[j].total as i64;
            freed -= delta;
            pending.push(Clearing { position: i, delta, cleared: count.cleared });
            self.note(&mut outcome, (i, j), rule, stub.clone(), delta);
        }
        self.finish(&mut outcome, &victims, freed);
        outcome.tokens_after = self.usage_after(&pending).tokens;
        // The counts are still the ones before the prune.
        outcome.tokens_from_first_changed = outcome.tokens_from_first_changed.saturating_sub(freed.max(0) as u64);
        outcome
    }

    /// Records one cleared part (history position `(i, j)`) in `outcome`.
    fn note(&self, outcome: &mut PruneOutcome, (i, j): (usize, usize), rule: Rule, stub: Option<String>, delta: i64) {
        let counted = outcome.rules.entry(rule).or_default();
        counted.parts += 1;
        counted.tokens += (-delta).max(0) as u64;
        let entry = &self.entries[i];
        outcome.part_ids.push(entry.msg.parts[j].id().to_string());
        outcome.message_ids.push(entry.msg.id.clone());
        outcome.stubs.push(stub);
    }

    /// The totals: tokens freed, and where the context first changes with the tokens from there on.
    fn finish(&self, outcome: &mut PruneOutcome, victims: &[(usize, Victim)], freed: i64) {
        outcome.tokens_freed = freed.max(0) as u64;
        if let Some(k) = victims.iter().map(|v| v.0).min() {
            let context = self.context_seq();
            outcome.first_changed = Some(context.at(k).msg.id.clone());
            outcome.tokens_from_first_changed = context.tokens(k, context.len());
        }
    }
}

/// The highest size the largest of `sizes` can be cut down to so that together they give up at
/// least `excess`; `None` when even cutting them all to nothing would not.
fn level(sizes: &[u64], excess: u64) -> Option<u64> {
    let given = |level: u64| sizes.iter().map(|&t| t.saturating_sub(level)).sum::<u64>();
    if given(0) < excess {
        return None;
    }
    // `given` falls as the level rises: the highest level that still gives enough.
    let (mut lo, mut hi) = (0u64, sizes.iter().copied().max().unwrap_or(0));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if given(mid) >= excess {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

#[cfg(test)]
mod tests {
    #[test]
    fn level_cuts_the_largest_down_to_one_size() {
        assert_eq!(super::level(&[100, 40, 10], 70), Some(35));
        assert_eq!(super::level(&[100, 40, 10], 60), Some(40));
        assert_eq!(super::level(&[100], 100), Some(0));
        assert_eq!(super::level(&[100, 40], 141), None);
    }
}
