//! What a summary is built from and must not lose, collected once, natively and deterministically:
//! the requests (the latest verbatim), the user's constraints, identifiers, commands grouped by
//! program, the errors (the last one with whether it was resolved), the decisions the user and the
//! assistant stated, and the calls left open.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::commands::{failed_exit_code, group, identifying_line, program, CommandGroup};
use super::digest::Block;
use super::identifiers::{identifiers_in, identifiers_in_output};
use super::prefilter::folds_to_ascii;
use super::user_text::{decode_entities, is_constraint, may_hold_constraint, sentences, user_text};
use crate::message::keep_head_and_tail;
use crate::message::{Message, Part, ToolState};

/// Each quoted text is kept to this many characters (head and tail).
const QUOTE_MAX_CHARS: usize = 2_000;
const MAX_COMMANDS: usize = 30;
const MAX_ERRORS: usize = 5;
const MAX_IDENTIFIERS: usize = 30;
const MAX_DECISIONS: usize = 10;

/// The newest error, and whether a later run of the same thing succeeded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct LastError {
    /// The line that identifies it (`error[E0425]: cannot find value`).
    pub text: String,
    /// The tool, and the command or file it ran on: `bash: cargo test`.
    pub source: String,
    pub resolved: bool,
}

/// What a summary is built from, collected natively (the extractive summarizer renders it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    /// Every user message's own text (injected instructions and notices left out), oldest first
    /// (shared with each message's digest).
    #[cfg_attr(test, ts(as = "Vec<String>"))]
    pub user_messages: Vec<Block>,
    /// Shell commands run, newest last.
    pub commands: Vec<String>,
    /// The commands grouped by program, in order of their newest run.
    pub command_groups: Vec<CommandGroup>,
    /// The latest tool and answer errors (a failing command's identifying line), newest last.
    pub errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// Tool calls that never finished: `tool(input)`.
    pub open_tool_calls: Vec<String>,
    /// The last thing the assistant said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_text: Option<String>,
    /// The user's constraints, verbatim sentences, oldest first.
    pub constraints: Vec<String>,
    /// URLs, ticket ids, commit shas and branch names the user or the tools gave, oldest first.
    pub identifiers: Vec<String>,
    /// Decisions the user and the assistant stated (a labelled `Decision: …`, a choice made, the
    /// assistant's "X instead of Y"), verbatim sentences, newest last.
    pub decisions: Vec<String>,
    /// The newest request in the whole context, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_request: Option<String>,
    /// The latest request is in the messages kept after the summary, not in what it summarizes.
    pub latest_request_kept: bool,
}

fn quote(s: &str) -> String {
    keep_head_and_tail(s.trim(), QUOTE_MAX_CHARS).into_owned()
}

/// The user's own text of a message (`None` for assistant messages, compaction requests and
/// messages that only carry injected text).
pub fn request_text(m: &Message) -> Option<String> {
    if !m.is_user() || m.compaction().is_some() {
        return None;
    }
    let text: Vec<&str> = m
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) if t.synthetic != Some(true) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    user_text(&text.join("\n"))
}

/// A decision: labelled as one, or a choice made ("we decided to", "I went with", "chose", "opted
/// for", "settled on").
static DECISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:key )?decision\s*:|\b(?:decided|decide to|chose|chosen|opted|opt for|going with|go with|went with|settled on|picked)\b").unwrap()
});

/// An approach the assistant took over another ("I'll switch to stable instead of nightly").
static ALTERNATIVE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\b(?:instead of|rather than)\b").unwrap());

/// Longer sentences are reasoning, not a decision to quote.
const DECISION_MAX_CHARS: usize = 400;

/// Whether a sentence of `text` may state a decision: DECISION's or ALTERNATIVE's words after an
/// ASCII word boundary in an ASCII-lowercased copy, or an entity that may decode into one. A
/// sentence ends at characters that are not word characters, so a decision in one is a decision
/// in the text.
pub(super) fn may_hold_decision(text: &str) -> bool {
    static HINT: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
        regex::bytes::Regex::new(r"(?-u)\b(?:decision|decide|chose|opt|going with|go with|went with|settled on|picked|instead of|rather than)").unwrap()
    });
    text.contains('&') || folds_to_ascii(text) || HINT.is_match(text.to_ascii_lowercase().as_bytes())
}

/// The sentences of `text` that state a decision (with `alternatives`, also an approach taken over
/// another).
pub(super) fn decisions_in(text: &str, alternatives: bool) -> impl Iterator<Item = &str> {
    sentences(text).into_iter().filter(move |s| {
        s.len() <= DECISION_MAX_CHARS && (DECISION.is_match(s) || alternatives && ALTERNATIVE.is_match(s))
    })
}

fn command_of(input: &serde_json::Value) -> Option<&str> {
    input.get("command").or_else(|| input.get("cmd")).and_then(|c| c.as_str())
}

/// What an error is about, so a later success of the same thing resolves it.
fn subject(tool: &str, input: &serde_json::Value) -> String {
    match command_of(input) {
        Some(c) if !tool.to_ascii_lowercase().contains("editor") => format!("{tool}: {}", program(c)),
        _ => {
            let path = ["path", "file_path", "filePath"].iter().find_map(|k| input.get(k).and_then(|v| v.as_str()));
            format!("{tool}: {}", path.unwrap_or(""))
        }
    }
}

/// `v` without empty and repeated strings, each at its first place (one pass, however many).
fn unique(v: Vec<&String>) -> Vec<&String> {
    let mut seen = rustc_hash::FxHashSet::default();
    v.into_iter().filter(|s| !s.is_empty() && seen.insert(s.as_str())).collect()
}

/// The last `n` of `v`, copied.
fn last<'a>(v: impl IntoIterator<Item = &'a String, IntoIter: ExactSizeIterator>, n: usize) -> Vec<String> {
    let v = v.into_iter();
    let skip = v.len().saturating_sub(n);
    v.skip(skip).cloned().collect()
}

/// The last text part of `m` that says something.
fn last_text(m: &Message) -> Option<&str> {
    m.parts.iter().rev().find_map(|p| match p {
        Part::Text(t) if !t.text.trim().is_empty() => Some(t.text.as_str()),
        _ => None,
    })
}

/// How a message counts among the facts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Kind {
    /// A compaction request or a summary: only its successful tool runs count, when kept.
    #[default]
    Skipped,
    User,
    Other,
}

/// What one message adds to the facts, worked out from the message alone, so a session keeps it
/// with the message and a prepare only gathers (see [`gather`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageFacts {
    kind: Kind,
    /// An answer with text: its last text part may be the last thing the assistant said.
    answer_text: bool,
    /// The user's own text ([`request_text`]) quoted, and the constraints and identifiers found
    /// in the quote. The whole text is not kept: only the latest is wanted, read again then.
    quoted: Option<Block>,
    /// `quoted` with its secrets replaced, and how many, when it holds any.
    quoted_redacted: Option<(Block, u64)>,
    constraints: Vec<String>,
    identifiers: Vec<String>,
    /// Shell commands run (quoted), each with its program.
    commands: Vec<(String, String)>,
    errors: Vec<String>,
    /// The message's newest failure.
    last_error: Option<LastError>,
    /// Subjects of the tool runs that succeeded.
    successes: Vec<String>,
    open_tool_calls: Vec<String>,
    decisions: Vec<String>,
}

/// The facts `m` adds (nothing for compaction requests and summaries).
pub fn message_facts(m: &Message) -> MessageFacts {
    let mut f = MessageFacts::default();
    if m.compaction().is_some() || m.is_summary() || m.is_user() {
        // Only their tool runs that succeeded count (when kept, after an error).
        f.successes = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Tool(t) => match &t.state {
                    ToolState::Completed { output, .. } if failed_exit_code(output).is_none() => {
                        Some(subject(&t.tool, t.state.input()))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
    }
    if m.compaction().is_some() || m.is_summary() {
        return f;
    }
    if m.is_user() {
        f.kind = Kind::User;
        if let Some(full) = request_text(m) {
            let text = quote(&full);
            if may_hold_decision(&text) {
                f.decisions = decisions_in(&text, false).map(str::to_string).collect();
            }
            if may_hold_constraint(&text) {
                // A stated decision is one, even when it says what must be done.
                f.constraints = sentences(&text)
                    .into_iter()
                    .filter(|s| is_constraint(s) && !f.decisions.iter().any(|d| d == s))
                    .map(str::to_string)
                    .collect();
            }
            identifiers_in(&text, &mut f.identifiers);
            let quoted = Block::new(text);
            f.quoted_redacted = quoted.redacted();
            f.quoted = Some(quoted);
        }
        return f;
    }
    f.kind = Kind::Other;
    f.answer_text = m.is_assistant() && last_text(m).is_some();
    if let Some(e) = &m.error {
        let line = identifying_line(&decode_entities(&format!("{}: {}", e.name, e.message)));
        f.errors.push(line.clone());
        f.last_error = Some(LastError { text: line, source: "answer".into(), resolved: false });
    }
    for p in &m.parts {
        match p {
            Part::Text(t) if m.is_assistant() && !t.text.trim().is_empty() && may_hold_decision(&t.text) => {
                let text = decode_entities(&t.text);
                f.decisions.extend(decisions_in(&text, true).map(str::to_string));
            }
            Part::Tool(t) => {
                let input = t.state.input();
                let command = command_of(input).filter(|_| !t.tool.to_ascii_lowercase().contains("editor"));
                if let Some(cmd) = command {
                    let quoted = quote(cmd);
                    f.commands.push((program(&quoted), quoted));
                    identifiers_in(cmd, &mut f.identifiers);
                }
                let subject = subject(&t.tool, input);
                let failure = match &t.state {
                    ToolState::Error { error, .. } => Some(decode_entities(error).into_owned()),
                    ToolState::Completed { output, .. } => {
                        identifiers_in_output(output, &mut f.identifiers);
                        failed_exit_code(output).map(|code| {
                            let line = identifying_line(&decode_entities(output));
                            if line.is_empty() {
                                format!("exit code {code}")
                            } else {
                                line
                            }
                        })
                    }
                    ToolState::Pending { .. } | ToolState::Running { .. } => {
                        f.open_tool_calls.push(quote(&format!("{}({})", t.tool, input)));
                        None
                    }
                };
                match failure {
                    Some(text) => {
                        let line = identifying_line(&text);
                        f.errors.push(format!("{}: {line}", t.tool));
                        f.last_error = Some(LastError { text: line, source: subject, resolved: false });
                    }
                    None if matches!(t.state, ToolState::Completed { .. }) => f.successes.push(subject),
                    None => {}
                }
            }
            _ => {}
        }
    }
    f
}

/// Facts of `summarized` (what a summary replaces); `kept` (the rest of the context) only tells
/// which request is the latest and whether the last error was resolved later.
pub fn facts<'a>(
    summarized: impl IntoIterator<Item = &'a Message>,
    kept: impl IntoIterator<Item = &'a Message>,
) -> Facts {
    let summarized: Vec<(&Message, MessageFacts)> = summarized.into_iter().map(|m| (m, message_facts(m))).collect();
    let kept: Vec<(&Message, MessageFacts)> = kept.into_iter().map(|m| (m, message_facts(m))).collect();
    gather(summarized.iter().map(|(m, f)| (*m, f)), kept.iter().map(|(m, f)| (*m, f)), false).0
}

/// [`facts`] from each message's [`message_facts`], worked out beforehand. With `redact`, the
/// user messages come with their secrets replaced (the second value counts them); the other
/// facts are few, and left to the caller.
pub fn gather<'a>(
    summarized: impl IntoIterator<Item = (&'a Message, &'a MessageFacts)>,
    kept: impl IntoIterator<Item = (&'a Message, &'a MessageFacts)>,
    redact: bool,
) -> (Facts, u64) {
    let mut f = Facts::default();
    let mut redacted = 0u64;
    // Borrowed while gathering: only what is kept of each list is copied.
    let (mut constraints, mut identifiers, mut commands, mut errors, mut decisions) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // The newest error, and whether a later message ran the same thing successfully.
    let mut last_error: Option<&LastError> = None;
    let mut resolved = false;
    let resolves = |e: Option<&LastError>, mf: &MessageFacts| e.is_some_and(|e| mf.successes.contains(&e.source));
    // Quoted once, at the end: only the last one is kept.
    let mut last_answer: Option<&Message> = None;
    let mut latest_request: Option<&Message> = None;
    for (m, mf) in summarized {
        if mf.kind == Kind::Skipped {
            continue;
        }
        if mf.kind == Kind::User {
            if let Some(quoted) = &mf.quoted {
                constraints.extend(&mf.constraints);
                decisions.extend(&mf.decisions);
                identifiers.extend(&mf.identifiers);
                // The latest request stays whole: it is restored verbatim, however long.
                latest_request = Some(m);
                f.user_messages.push(match &mf.quoted_redacted {
                    Some((text, n)) if redact => {
                        redacted += n;
                        text.clone()
                    }
                    _ => quoted.clone(),
                });
            }
            continue;
        }
        errors.extend(&mf.errors);
        commands.extend(&mf.commands);
        identifiers.extend(&mf.identifiers);
        f.open_tool_calls.extend(mf.open_tool_calls.iter().cloned());
        decisions.extend(&mf.decisions);
        match &mf.last_error {
            // Its own message's successes came before it or beside it: they resolve nothing.
            Some(e) => {
                last_error = Some(e);
                resolved = false;
            }
            None => resolved |= resolves(last_error, mf),
        }
        if mf.answer_text {
            last_answer = Some(m);
        }
    }
    let mut latest_kept: Option<&Message> = None;
    for (m, mf) in kept {
        if mf.quoted.is_some() {
            latest_kept = Some(m);
        }
        resolved |= resolves(last_error, mf);
    }
    f.latest_request_kept = latest_kept.is_some();
    f.latest_request = match latest_kept {
        Some(m) => request_text(m).map(|t| t.trim().to_string()),
        None => latest_request.and_then(request_text),
    };
    f.last_assistant_text = last_answer.and_then(last_text).map(|t| quote(&decode_entities(t)));
    f.last_error = last_error.map(|e| LastError { resolved, ..e.clone() });
    f.command_groups = group(commands.iter().map(|(p, c)| (p.as_str(), c.as_str())));
    f.commands = last(commands.iter().map(|(_, c)| c), MAX_COMMANDS);
    f.errors = last(errors, MAX_ERRORS);
    f.constraints = unique(constraints).into_iter().cloned().collect();
    f.identifiers = last(unique(identifiers), MAX_IDENTIFIERS);
    f.decisions = last(unique(decisions), MAX_DECISIONS);
    (f, redacted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use serde_json::json;

    fn msg(v: serde_json::Value) -> Message {
        parse_message(v).unwrap()
    }

    #[test]
    fn collects_requests_commands_errors_and_open_calls() {
        let msgs = [
            msg(
                json!({"id": "u", "role": "user", "parts": [{"type": "text", "id": "t", "text": "Fix the bug. Never touch main.rs"}]}),
            ),
            msg(json!({"id": "a", "role": "assistant", "parts": [
                {"type": "tool", "id": "x", "callID": "c", "tool": "bash", "state": {"status": "error", "input": {"command": "cargo test"}, "error": "exit 101"}},
                {"type": "tool", "id": "y", "callID": "d", "tool": "bash", "state": {"status": "running", "input": {"command": "make"}}},
                {"type": "text", "id": "z", "text": "Tests fail. I'll switch to the stable toolchain instead of nightly."}
            ]})),
        ];
        let f = facts(&msgs, []);
        assert_eq!(f.user_messages, ["Fix the bug. Never touch main.rs"]);
        assert_eq!(f.constraints, ["Never touch main.rs"]);
        assert_eq!(f.commands, ["cargo test", "make"]);
        assert_eq!(f.errors, ["bash: exit 101"]);
        assert_eq!(
            f.last_error,
            Some(LastError { text: "exit 101".into(), source: "bash: cargo test".into(), resolved: false })
        );
        assert_eq!(f.open_tool_calls, ["bash({\"command\":\"make\"})"]);
        assert_eq!(f.decisions, ["I'll switch to the stable toolchain instead of nightly."]);
        assert_eq!(f.latest_request.as_deref(), Some("Fix the bug. Never touch main.rs"));
        assert!(!f.latest_request_kept);
    }

    #[test]
    fn the_latest_request_is_whole_however_long() {
        let long = format!("Migrate the config loader. {}", "x".repeat(QUOTE_MAX_CHARS * 3));
        let m = msg(json!({"id": "u", "role": "user", "parts": [{"type": "text", "id": "t", "text": long}]}));
        assert_eq!(facts([&m], []).latest_request.as_deref(), Some(long.as_str()));
        assert_eq!(facts([], [&m]).latest_request.as_deref(), Some(long.as_str()));
        // Other uses of user text stay quoted (head and tail).
        assert!(facts([&m], []).user_messages[0].len() < long.len());
    }

    #[test]
    fn a_failing_exit_code_is_an_error_resolved_by_a_later_success() {
        let run = |id: &str, out: &str| {
            msg(json!({"id": id, "role": "assistant", "parts": [
                {"type": "tool", "id": format!("{id}t"), "callID": id, "tool": "bash", "state": {"status": "completed", "input": {"command": "cargo test -p core"}, "output": out}}
            ]}))
        };
        let failing = run("a", "running 2 tests\nerror[E0425]: cannot find value `x` in this scope\nExit code: 101");
        let f = facts([&failing], []);
        let e = f.last_error.clone().unwrap();
        assert_eq!(e.text, "error[E0425]: cannot find value `x` in this scope");
        assert!(!e.resolved);
        let passing = run("b", "test result: ok\nExit code: 0");
        let ask =
            msg(json!({"id": "u2", "role": "user", "parts": [{"type": "text", "id": "t", "text": "Now add docs"}]}));
        let f = facts([&failing], [&passing, &ask]);
        assert!(f.last_error.unwrap().resolved);
        assert_eq!(f.latest_request.as_deref(), Some("Now add docs"));
        assert!(f.latest_request_kept);
    }

    #[test]
    fn decisions_of_the_user_and_the_assistant_with_their_reason() {
        let msgs = [
            msg(json!({"id": "u", "role": "user", "parts": [{"type": "text", "id": "t", "text":
                "Next, the retry path. Decision: retries happen in the pool, not in the handlers, so a request is retried once at most. Do not use global mutable state; pass dependencies through the Server struct."}]})),
            msg(json!({"id": "a", "role": "assistant", "parts": [{"type": "text", "id": "t", "text":
                "I'll read the pool first. We decided to cap idle connections per backend instead of globally, since one slow backend starved the rest. I went with a token bucket because it needs no allocation."}]})),
        ];
        let f = facts(&msgs, []);
        assert_eq!(
            f.decisions,
            [
                "Decision: retries happen in the pool, not in the handlers, so a request is retried once at most.",
                "We decided to cap idle connections per backend instead of globally, since one slow backend starved the rest.",
                "I went with a token bucket because it needs no allocation.",
            ]
        );
        // A decision is not a constraint too; a semicolon does not end a constraint.
        assert_eq!(f.constraints, ["Do not use global mutable state; pass dependencies through the Server struct."]);
    }

    #[test]
    fn injected_instructions_are_not_requests() {
        let msgs = [
            msg(
                json!({"id": "u1", "role": "user", "parts": [{"type": "text", "id": "t", "text": "Deploy to ENG-7 from branch release/2.1"}]}),
            ),
            msg(
                json!({"id": "u2", "role": "user", "parts": [{"type": "text", "id": "t", "text": "# AGENTS.md instructions for /repo\n<INSTRUCTIONS>Always run lint</INSTRUCTIONS>"}]}),
            ),
            msg(
                json!({"id": "u3", "role": "user", "parts": [{"type": "text", "id": "t", "text": "<system-reminder>You must use TodoWrite</system-reminder>"}]}),
            ),
        ];
        let f = facts(&msgs, []);
        assert_eq!(f.latest_request.as_deref(), Some("Deploy to ENG-7 from branch release/2.1"));
        assert!(f.constraints.is_empty());
        assert_eq!(f.identifiers, ["ENG-7", "release/2.1"]);
    }
}
