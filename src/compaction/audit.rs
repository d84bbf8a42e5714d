//! The loss audit: the facts a summary must keep, checked against what the model will see after the
//! compaction (the summary and the messages kept verbatim); what is missing is restored, verbatim,
//! in a short deterministic "Preserved" section appended to the summary.

use serde::{Deserialize, Serialize};

use crate::session::Pin;
use crate::summary_input::{decode_entities, Facts};
use crate::tokens::Counter;

/// What a fact is: checked by the loss audit in this order of importance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum FactKind {
    /// The latest user request.
    Request,
    /// A pinned message or text.
    Pin,
    /// A user constraint.
    Constraint,
    /// The last error.
    Error,
    /// A decision the user or the agent stated.
    Decision,
    ModifiedFile,
    /// A URL, ticket id, commit sha or branch name.
    Identifier,
    ReadFile,
}

impl FactKind {
    fn label(self) -> &'static str {
        match self {
            FactKind::Request => "Latest request",
            FactKind::Constraint => "Constraint",
            FactKind::Error => "Last error",
            FactKind::Decision => "Decision",
            FactKind::ModifiedFile => "Modified file",
            FactKind::Pin => "Pinned",
            FactKind::Identifier => "Identifier",
            FactKind::ReadFile => "Read file",
        }
    }
}

/// One thing the summary must keep, verbatim.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    pub kind: FactKind,
    pub text: String,
    /// For an error: whether a later run of the same thing succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<bool>,
    /// For a pin: the user's note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Fact {
    pub fn new(kind: FactKind, text: impl Into<String>) -> Fact {
        Fact { kind, text: text.into(), resolved: None, note: None }
    }

    fn line(&self) -> String {
        let label = match (self.kind, self.resolved) {
            (FactKind::Error, Some(true)) => "Last error (resolved)".to_string(),
            (FactKind::Error, Some(false)) => "Last error (unresolved)".to_string(),
            (FactKind::Pin, _) if self.note.is_some() => format!("Pinned ({})", self.note.as_deref().unwrap_or("")),
            (k, _) => k.label().to_string(),
        };
        let text = self.text.trim();
        // "Decision: …" is labelled already.
        if self.kind == FactKind::Decision && text.get(..9).is_some_and(|l| l.eq_ignore_ascii_case("decision:")) {
            return format!("- {text}");
        }
        if text.contains('\n') {
            format!("- {label}:\n  {}", text.replace('\n', "\n  "))
        } else {
            format!("- {label}: {text}")
        }
    }
}

/// A fact left out, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Dropped {
    pub fact: Fact,
    pub reason: String,
}

/// The loss audit: facts the summary or the kept messages already hold, facts restored in the
/// Preserved section, facts a budget forced out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Audit {
    pub kept: Vec<Fact>,
    pub restored: Vec<Fact>,
    #[cfg_attr(test, ts(as = "Vec<Dropped>", inline))]
    pub dropped: Vec<Dropped>,
    /// The "## Preserved" section restoring `restored` verbatim, to append to the summary (absent
    /// when nothing is restored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

/// The heading of the section restored facts go in.
pub const PRESERVED_HEADING: &str = "## Preserved";
const PRESERVED_NOTE: &str = "(Restored verbatim: facts the summary above had left out.)";

/// Text as compared: entities decoded, escapes undone, typographic quotes plain, lower case, runs
/// of whitespace and backticks as one space.
pub fn normalize(text: &str) -> String {
    let decoded = decode_entities(text).replace("\\[", "[");
    let mut out = String::with_capacity(decoded.len());
    let mut space = true;
    for c in decoded.chars() {
        let c = match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201c}' | '\u{201d}' => '"',
            '`' => ' ',
            c => c,
        };
        if c.is_whitespace() {
            if !space {
                out.push(' ');
                space = true;
            }
        } else {
            out.extend(c.to_lowercase());
            space = false;
        }
    }
    out.trim_end().to_string()
}

/// A fact's text as matched: normalized, without the punctuation that ends a sentence.
fn needle(fact: &Fact) -> String {
    normalize(&fact.text).trim_end_matches(['.', '!', ';', ':', ',']).trim().to_string()
}

/// The facts a compaction must keep: the previous compaction's (carried: constraints, decisions,
/// pins and identifiers stay; the request and the error are replaced by newer ones) and this one's.
pub fn facts_to_keep(
    previous: &[Fact],
    facts: &Facts,
    pins: &[Pin],
    read_files: &[String],
    modified_files: &[String],
) -> Vec<Fact> {
    let mut out: Vec<Fact> = Vec::new();
    let mut add = |f: Fact| {
        if !f.text.trim().is_empty() && !out.iter().any(|o| o.kind == f.kind && needle(o) == needle(&f)) {
            out.push(f);
        }
    };
    match &facts.latest_request {
        Some(r) => add(Fact::new(FactKind::Request, r.clone())),
        None => previous.iter().filter(|f| f.kind == FactKind::Request).for_each(|f| add(f.clone())),
    }
    for p in pins {
        add(Fact { note: p.note.clone(), ..Fact::new(FactKind::Pin, p.text.clone()) });
    }
    for f in previous.iter().filter(|f| f.kind == FactKind::Constraint) {
        add(f.clone());
    }
    for c in &facts.constraints {
        add(Fact::new(FactKind::Constraint, c.clone()));
    }
    match &facts.last_error {
        Some(e) => add(Fact { resolved: Some(e.resolved), ..Fact::new(FactKind::Error, e.text.clone()) }),
        None => previous.iter().filter(|f| f.kind == FactKind::Error).for_each(|f| add(f.clone())),
    }
    for f in previous.iter().filter(|f| f.kind == FactKind::Decision) {
        add(f.clone());
    }
    for d in &facts.decisions {
        add(Fact::new(FactKind::Decision, d.clone()));
    }
    for m in modified_files {
        add(Fact::new(FactKind::ModifiedFile, m.clone()));
    }
    for f in previous.iter().filter(|f| f.kind == FactKind::Identifier) {
        add(f.clone());
    }
    for i in &facts.identifiers {
        add(Fact::new(FactKind::Identifier, i.clone()));
    }
    for r in read_files {
        add(Fact::new(FactKind::ReadFile, r.clone()));
    }
    out
}

/// Checks `facts` against `seen` (the summary and the kept messages, as the model reads them) and
/// builds the Preserved section for the missing ones, most important kind first, within `budget`
/// tokens (the latest request is never dropped: it is restored whole, outside the budget, so a
/// long one leaves the others their room).
pub fn audit(facts: &[Fact], seen: &str, budget: u64, counter: &Counter) -> Audit {
    let haystack = normalize(seen);
    let mut a = Audit::default();
    let mut lines: Vec<String> = Vec::new();
    let mut used = counter.text(PRESERVED_HEADING) + counter.text(PRESERVED_NOTE) + 2;
    let mut order: Vec<&Fact> = facts.iter().collect();
    order.sort_by_key(|f| f.kind);
    for f in order {
        let n = needle(f);
        if n.is_empty() || haystack.contains(&n) {
            a.kept.push(f.clone());
            continue;
        }
        let line = f.line();
        // The latest request is restored whatever it costs: the agent must know what it was asked.
        if f.kind != FactKind::Request {
            let cost = counter.text(&line) + 1;
            if used + cost > budget {
                a.dropped.push(Dropped {
                    fact: f.clone(),
                    reason: format!("the Preserved section is limited to {budget} tokens and this needs {cost} more"),
                });
                continue;
            }
            used += cost;
        }
        lines.push(line);
        a.restored.push(f.clone());
    }
    if !lines.is_empty() {
        a.section = Some(format!("{PRESERVED_HEADING}\n{PRESERVED_NOTE}\n{}", lines.join("\n")));
    }
    a
}

/// How many tokens the Preserved section may take: a quarter of the summary budget, at least 500.
pub fn preserved_budget(summary_budget: u64) -> u64 {
    (summary_budget / 4).max(500)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary_input::LastError;
    use crate::tokens::Tokenizer;

    fn counter() -> Counter {
        Counter { tokenizer: Tokenizer::Estimate, image_tokens: 1000, output_max_chars: None }
    }

    #[test]
    fn restores_what_is_missing_verbatim_and_keeps_what_is_there() {
        let facts = Facts {
            latest_request: Some("Add a --json flag to `export`".into()),
            constraints: vec!["Never touch the migrations.".into(), "Target Node 18 too".into()],
            last_error: Some(LastError {
                text: "error[E0425]: cannot find value `x`".into(),
                source: "bash: cargo test".into(),
                resolved: false,
            }),
            identifiers: vec!["ENG-4521".into()],
            ..Facts::default()
        };
        let keep = facts_to_keep(&[], &facts, &[], &["README.md".into()], &["src/export.rs".into()]);
        let seen = "## Constraints\n- never touch the MIGRATIONS\n<modified-files>\nsrc/export.rs\n</modified-files>\nTicket ENG-4521";
        let a = audit(&keep, seen, 1000, &counter());
        let kinds = |v: &[Fact]| v.iter().map(|f| f.kind).collect::<Vec<_>>();
        assert_eq!(kinds(&a.kept), [FactKind::Constraint, FactKind::ModifiedFile, FactKind::Identifier]);
        assert_eq!(kinds(&a.restored), [FactKind::Request, FactKind::Constraint, FactKind::Error, FactKind::ReadFile]);
        let pinned = facts_to_keep(
            &[],
            &Facts::default(),
            &[Pin {
                id: "p".into(),
                message_id: None,
                text: "deploy target 10.0.0.7".into(),
                note: Some("ops".into()),
            }],
            &[],
            &[],
        );
        let p = audit(&pinned, "", 1000, &counter());
        assert_eq!(p.section.unwrap(), "## Preserved\n(Restored verbatim: facts the summary above had left out.)\n- Pinned (ops): deploy target 10.0.0.7");
        let section = a.section.unwrap();
        assert!(section.starts_with("## Preserved\n"));
        assert!(section.contains("- Latest request: Add a --json flag to `export`"));
        assert!(section.contains("- Constraint: Target Node 18 too"));
        assert!(section.contains("- Last error (unresolved): error[E0425]: cannot find value `x`"));
        // Once restored, a second audit finds everything.
        let again = audit(&keep, &format!("{seen}\n{section}"), 1000, &counter());
        assert!(again.restored.is_empty() && again.dropped.is_empty());
    }

    #[test]
    fn a_budget_drops_the_least_important_with_the_reason() {
        let facts = Facts { latest_request: Some("do it".into()), ..Facts::default() };
        let reads: Vec<String> = (0..200).map(|i| format!("src/module_{i}/file_{i}.rs")).collect();
        let keep = facts_to_keep(&[], &facts, &[], &reads, &[]);
        let a = audit(&keep, "", 200, &counter());
        assert_eq!(a.restored[0].kind, FactKind::Request);
        assert!(!a.dropped.is_empty());
        assert!(a
            .dropped
            .iter()
            .all(|d| d.fact.kind == FactKind::ReadFile && d.reason.contains("limited to 200 tokens")));
    }

    #[test]
    fn the_latest_request_is_restored_whole_past_any_budget() {
        let long = format!("Port the exporter to the new API. {}", "Keep every field as it is. ".repeat(400));
        let facts = Facts { latest_request: Some(long.clone()), ..Facts::default() };
        let keep = facts_to_keep(&[], &facts, &[], &[], &[]);
        let a = audit(&keep, "", 100, &counter());
        assert!(a.dropped.is_empty());
        assert_eq!(a.restored[0].text, long);
        assert!(a.section.unwrap().contains(long.trim()));
    }

    #[test]
    fn a_long_request_leaves_the_constraints_their_budget() {
        let facts = Facts {
            latest_request: Some(format!("Port the exporter. {}", "Keep every field as it is. ".repeat(200))),
            constraints: vec!["Use polars, not pandas, for anything new you write.".into()],
            decisions: vec!["Decision: late events go to a quarantine table, because replays reorder them.".into()],
            ..Facts::default()
        };
        let keep = facts_to_keep(&[], &facts, &[], &[], &[]);
        let a = audit(&keep, "", 500, &counter());
        assert!(a.dropped.is_empty(), "{:?}", a.dropped);
        let section = a.section.unwrap();
        assert!(section.contains("- Constraint: Use polars, not pandas, for anything new you write."));
        // A decision labelled as one is not labelled twice.
        assert!(section.contains("\n- Decision: late events go to a quarantine table"));
    }

    #[test]
    fn a_pin_over_the_budget_is_reported_not_dropped_silently() {
        let pin = |id: &str, text: String| Pin { id: id.into(), message_id: None, text, note: None };
        let keep = facts_to_keep(
            &[],
            &Facts::default(),
            &[pin("small", "deploy target 10.0.0.7".into()), pin("big", "log line ".repeat(500))],
            &[],
            &[],
        );
        let a = audit(&keep, "", 120, &counter());
        assert_eq!(a.restored.iter().map(|f| f.text.as_str()).collect::<Vec<_>>(), ["deploy target 10.0.0.7"]);
        assert_eq!(a.dropped.len(), 1);
        assert_eq!(a.dropped[0].fact.kind, FactKind::Pin);
        assert!(a.dropped[0].reason.contains("limited to 120 tokens"));
    }

    #[test]
    fn facts_carry_across_compactions() {
        let first = facts_to_keep(
            &[],
            &Facts {
                latest_request: Some("old ask".into()),
                constraints: vec!["Never push to main".into()],
                ..Facts::default()
            },
            &[],
            &[],
            &[],
        );
        let second = facts_to_keep(
            &first,
            &Facts {
                latest_request: Some("new ask".into()),
                constraints: vec!["Use pnpm".into()],
                decisions: vec!["We decided to vendor the parser instead of forking it.".into()],
                ..Facts::default()
            },
            &[],
            &[],
            &[],
        );
        let third =
            facts_to_keep(&second, &Facts { latest_request: Some("newest".into()), ..Facts::default() }, &[], &[], &[]);
        let texts: Vec<&str> = third.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            ["newest", "Never push to main", "Use pnpm", "We decided to vendor the parser instead of forking it."]
        );
    }
}
