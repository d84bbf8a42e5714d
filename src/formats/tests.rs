//! The importers against the shared corpus (`../shared/corpus`, described in its README) and
//! against small hand-written transcripts for what the corpus lacks.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::*;
use crate::invariants::check_all;
use crate::message::{Part, Role, ToolState};
use crate::policy::View;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");

/// One corpus file: the README's columns (`msgs`, `tool calls`, `prior compactions`), then what
/// the import gives: messages and calls left without a result.
struct Case {
    path: &'static str,
    format: Format,
    records: usize,
    tool_calls: usize,
    readme_compactions: usize,
    messages: usize,
    unanswered: usize,
}

const fn case(
    path: &'static str,
    format: Format,
    records: usize,
    tool_calls: usize,
    readme_compactions: usize,
    messages: usize,
    unanswered: usize,
) -> Case {
    Case { path, format, records, tool_calls, readme_compactions, messages, unanswered }
}

use Format::*;

/// README columns as published; `messages` differ from `msgs` by exactly
/// `records − skipped − offBranch − merged + added` (asserted per file below): tool results are
/// folded into their call, split responses merged, other branches left out, compactions add a
/// request (and Codex its kept messages).
const CASES: &[Case] = &[
    case("claude-code/ccviewer-fe5e1c67-orchestrator-todoapp.jsonl", ClaudeCode, 437, 167, 0, 12, 0),
    case("claude-code/entirecli-062a8bdd-image-compaction.jsonl", ClaudeCode, 386, 127, 2, 168, 1),
    case("claude-code/entirecli-5a3bb1c8-tiny.jsonl", ClaudeCode, 4, 1, 0, 2, 1),
    case("claude-code/entirecli-6113e919-3compactions.jsonl", ClaudeCode, 778, 206, 6, 283, 0),
    case("claude-code/entirecli-86cc3044-2malformed-lines.jsonl", ClaudeCode, 205, 56, 0, 66, 1),
    case("claude-code/hive-extracted-02ed589a-5compactions.jsonl", ClaudeCode, 2230, 627, 10, 1544, 0),
    case("claude-code/hive-extracted-agent-a000c74-sidechain.jsonl", ClaudeCode, 50, 19, 0, 31, 0),
    case("claude-code/hive-extracted-ebbb9edc-stripped-images.jsonl", ClaudeCode, 1179, 328, 4, 845, 0),
    case("claude-code/hive-raw-6f2580aa-queueops.jsonl", ClaudeCode, 95, 31, 0, 14, 0),
    case("claude-code/kimicli-516b7270-chinese.jsonl", ClaudeCode, 123, 47, 0, 48, 0),
    case("claude-code/kimicli-7758c4c5-images-3mb.jsonl", ClaudeCode, 277, 102, 0, 110, 0),
    case("claude-code/kimicli-9205db7e-chinese-plan.jsonl", ClaudeCode, 125, 37, 0, 53, 0),
    case("codex/agentv-019ed836-small.jsonl", Codex, 12, 23, 0, 15, 2),
    case("codex/agentv-019ed99c-3compactions.jsonl", Codex, 277, 531, 3, 364, 0),
    case("codex/agentv-019f17a5-2compactions.jsonl", Codex, 215, 362, 2, 259, 0),
    case("codex/agentv-019f1d64-nocompaction.jsonl", Codex, 98, 221, 0, 120, 0),
    case("codex/codex-homelab-truncated-head.jsonl", Codex, 3, 0, 0, 3, 0),
    case("copilot-cli/agentv-copilot-10fb4666.jsonl", CopilotCli, 56, 68, 0, 57, 0),
    case("gemini-cli/entirecli-gemini-session.json", GeminiCli, 13, 9, 0, 12, 0),
    case("kimi-cli/sklearn-26323-context-main.jsonl", KimiCli, 94, 46, 0, 48, 0),
    case("kimi-cli/sklearn-26323-subagent-read1.jsonl", KimiCli, 30, 14, 0, 16, 0),
    case("mini-swe-agent/django-13265-deepseek-toolcalls.traj.json", MiniSweAgent, 314, 156, 0, 158, 1),
    case("mini-swe-agent/github-issue-textaction-v1.traj.json", MiniSweAgent, 22, 10, 0, 12, 0),
    case("mini-swe-agent/sqlfluff-2419-deepseek-toolcalls.traj.json", MiniSweAgent, 84, 41, 0, 43, 1),
    case("openai-chat/swesmith-ft-xml-3convs.jsonl", OpenAiChat, 209, 103, 0, 109, 3),
    case("openhands/oh-basic-gui-mode-vue-todo.json", OpenHands, 18, 4, 0, 6, 0),
    case("openhands/oh-wrong-initial-state.json", OpenHands, 8, 4, 0, 5, 1),
    case("pi/pi-mono-before-compaction-v1.jsonl", Pi, 990, 454, 2, 546, 6),
    case("pi/pi-mono-compact-with-images-v1.jsonl", Pi, 1011, 432, 2, 586, 3),
    case("pi/pi-mono-large-session-v1.jsonl", Pi, 914, 391, 0, 541, 18),
    case("pi/pi-mono-session-custom-tool-v1.jsonl", Pi, 454, 189, 1, 267, 0),
    case("swe-agent/ctf-web-i_got_id.traj", SweAgent, 43, 21, 0, 23, 1),
    case("swe-agent/marshmallow-1867-function-calling.traj", SweAgent, 28, 13, 0, 15, 0),
    case("swe-agent/pydicom-1458-gpt4-textaction.traj", SweAgent, 26, 12, 0, 15, 1),
    case("swe-agent/swesmith-pandas-53652-claude-dup-messages.traj", SweAgent, 76, 37, 0, 39, 0),
];

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{CORPUS}/{path}")).unwrap()
}

fn import_case(c: &Case) -> Imported {
    import_transcript(&read(c.path), None).unwrap_or_else(|e| panic!("{}: {e}", c.path))
}

fn unanswered(msgs: &[crate::message::Message]) -> usize {
    msgs.iter()
        .flat_map(|m| &m.parts)
        .filter(
            |p| matches!(p, Part::Tool(t) if matches!(t.state, ToolState::Pending { .. } | ToolState::Running { .. })),
        )
        .count()
}

fn view(msgs: &[crate::message::Message]) -> Vec<usize> {
    let index: HashMap<String, usize> = msgs.iter().enumerate().map(|(i, m)| (m.id.clone(), i)).collect();
    View::compute(msgs.len(), &|i| &msgs[i], &index).order(msgs.len())
}

#[test]
fn the_corpus_is_all_here() {
    let mut n = 0;
    for dir in std::fs::read_dir(CORPUS).unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            n += std::fs::read_dir(&dir).unwrap().count();
        }
    }
    assert_eq!(n, CASES.len(), "35 files in the corpus README");
}

#[test]
fn every_corpus_file_imports_with_the_documented_counts() {
    for c in CASES {
        let imp = import_case(c);
        let s = &imp.stats;
        assert_eq!(imp.format, c.format, "{}: detected format", c.path);
        assert_eq!(s.records, c.records, "{}: README msgs", c.path);
        assert_eq!(s.tool_calls, c.tool_calls, "{}: README tool calls", c.path);
        // The README counts Claude Code compactions by record: a compact_boundary line and its
        // isCompactSummary line, two per compaction.
        let per = if c.format == ClaudeCode { 2 } else { 1 };
        assert_eq!(s.compactions * per, c.readme_compactions, "{}: compactions", c.path);
        assert_eq!(imp.messages.len(), s.records - s.skipped - s.off_branch - s.merged + s.added, "{}: {s:?}", c.path);
        assert_eq!(imp.messages.len(), c.messages, "{}: messages {s:?}", c.path);
        assert_eq!(unanswered(&imp.messages), c.unanswered, "{}: unanswered calls", c.path);
        // Every message passes the same validation as messages handed to a Session.
        let mut ids = HashSet::new();
        for m in &imp.messages {
            assert!(ids.insert(m.id.clone()), "{}: duplicate id {}", c.path, m.id);
            let back = crate::message::parse_message(serde_json::to_value(m).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", c.path));
            assert_eq!(&back, m);
            let mut part_ids = HashSet::new();
            for p in &m.parts {
                assert!(part_ids.insert(p.id().to_string()), "{}: part id {}", c.path, p.id());
            }
        }
        // Importing twice gives the same ids.
        assert_eq!(import_case(c).messages, imp.messages, "{}: stable", c.path);
    }
}

#[test]
fn explicit_formats_match_detection_and_wrong_ones_do_not_panic() {
    for c in CASES.iter().step_by(3) {
        let text = read(c.path);
        assert_eq!(import_transcript(&text, Some(c.format)).unwrap(), import_transcript(&text, None).unwrap());
        for f in Format::ALL {
            let _ = import_transcript(&text, Some(f));
        }
    }
}

#[test]
fn claude_code_compactions_hide_everything_before_the_summary() {
    for c in CASES.iter().filter(|c| c.format == ClaudeCode && c.readme_compactions > 0) {
        let imp = import_case(c);
        let msgs = &imp.messages;
        let last_req = msgs.iter().rposition(|m| m.compaction().is_some()).unwrap();
        let order = view(msgs);
        assert_eq!(order, (last_req..msgs.len()).collect::<Vec<_>>(), "{}", c.path);
        let summary = &msgs[last_req + 1];
        assert!(summary.is_completed_summary());
        assert_eq!(summary.parent_id.as_deref(), Some(msgs[last_req].id.as_str()));
        let Part::Text(t) = &summary.parts[0] else { panic!() };
        assert!(t.text.starts_with("This session is being continued"), "{}", c.path);
        // Every earlier compaction is there too, each with its summary.
        let requests = msgs.iter().filter(|m| m.compaction().is_some()).count();
        assert_eq!(requests * 2, c.readme_compactions);
    }
}

/// pi v1: the context is the summary, the entries from `firstKeptEntryIndex` up to the compaction,
/// then everything after it (counted here straight from the file: toolResults fold into their call).
#[test]
fn pi_compactions_keep_the_entries_pi_kept() {
    for c in CASES.iter().filter(|c| c.format == Pi && c.readme_compactions > 0) {
        let text = read(c.path);
        let mut w = Vec::new();
        let entries: Vec<Value> = decode(&text, &mut w).into_iter().map(|r| r.value).collect();
        let (ci, comp) = entries.iter().enumerate().rev().find(|(_, e)| e["type"] == "compaction").unwrap();
        let kept = comp["firstKeptEntryIndex"].as_u64().unwrap() as usize;
        let becomes_message = |e: &Value| {
            e["type"] == "message"
                && matches!(e["message"]["role"].as_str(), Some("user" | "assistant" | "bashExecution"))
        };
        let tail = entries[kept.min(ci)..ci].iter().filter(|e| becomes_message(e)).count();
        let after = entries[ci + 1..].iter().filter(|e| becomes_message(e)).count();
        let imp = import_case(c);
        let order = view(&imp.messages);
        assert_eq!(order.len(), 2 + tail + after, "{}", c.path);
        let first = &imp.messages[order[0]];
        let summary = &imp.messages[order[1]];
        assert!(first.compaction().is_some() && summary.is_completed_summary());
        let Part::Text(t) = &summary.parts[0] else { panic!() };
        assert_eq!(t.text, comp["summary"].as_str().unwrap());
        if tail > 0 {
            let part = first.compaction().unwrap();
            let start = &imp.messages[order[2]];
            assert_eq!(part.tail_start_id.as_deref(), Some(start.id.as_str()));
            // The first kept entry is a message whose text we can compare.
            let src = &entries[kept]["message"];
            if let Some(s) = src["content"].as_str() {
                assert!(matches!(&start.parts[0], Part::Text(t) if t.text == s));
            }
        }
    }
}

/// Codex: after `compacted`, the model saw `replacement_history` and what followed.
#[test]
fn the_system_prompt_and_tools_a_transcript_records_outside_its_messages() {
    let codex = jsonl(&[
        json!({"type": "session_meta", "payload": {"id": "x", "base_instructions": {"text": "You are Codex."}}}),
        json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}}),
    ]);
    let imp = import_transcript(&codex, Some(Codex)).unwrap();
    assert_eq!(imp.overhead.system, ["You are Codex."]);
    assert!(imp.overhead.tools.is_none());
    let tools = json!([{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]);
    let chat = json!({"messages": [{"role": "user", "content": "hi"}], "tools": tools}).to_string();
    let imp = import_transcript(&chat, Some(OpenAiChat)).unwrap();
    assert_eq!((imp.overhead.system.len(), imp.overhead.tools.as_ref()), (0, Some(&tools)));
    // Nothing recorded: nothing in the result (the field is left out of the JSON).
    let plain = import_transcript(&json!({"messages": [{"role": "user", "content": "hi"}]}).to_string(), None).unwrap();
    assert!(plain.overhead.is_empty());
    assert!(serde_json::to_value(&plain).unwrap().get("overhead").is_none());
}

#[test]
fn codex_compactions_show_the_replacement_history() {
    for c in CASES.iter().filter(|c| c.format == Codex && c.readme_compactions > 0) {
        let text = read(c.path);
        let mut w = Vec::new();
        let records: Vec<Value> = decode(&text, &mut w).into_iter().map(|r| r.value).collect();
        let last = records.iter().rev().find(|r| r["type"] == "compacted").unwrap();
        let kept: Vec<String> = last["payload"]["replacement_history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| content::text_of(&m["content"]))
            .collect();
        let imp = import_case(c);
        let msgs = &imp.messages;
        let req = msgs.iter().rposition(|m| m.compaction().is_some()).unwrap();
        let order = view(msgs);
        assert_eq!(order, (req..msgs.len()).collect::<Vec<_>>());
        assert!(msgs[req + 1].is_completed_summary());
        for (k, text) in kept.iter().enumerate() {
            let m = &msgs[req + 2 + k];
            assert!(matches!(m.role, Role::User | Role::System));
            let texts: Vec<&str> = m
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(&texts.join("\n"), text);
        }
    }
}

#[test]
fn the_tool_pair_rule_holds_in_every_format_and_unanswered_calls_read_as_interrupted() {
    for c in CASES {
        let imp = import_case(c);
        let all: Vec<&crate::message::Message> = imp.messages.iter().collect();
        let interrupted = check_all(&all, c.path);
        // Unanswered calls of sendable messages get the interrupted result (a call in an errored
        // answer is left out with its message).
        let sendable_open = imp
            .messages
            .iter()
            .filter(|m| m.error.is_none() || m.error.as_ref().is_some_and(|e| e.name == "MessageAbortedError"))
            .map(|m| unanswered(std::slice::from_ref(m)))
            .sum::<usize>();
        assert_eq!(interrupted[0], sendable_open, "{}", c.path);
        let visible: Vec<&crate::message::Message> =
            view(&imp.messages).into_iter().map(|i| &imp.messages[i]).collect();
        check_all(&visible, c.path);
    }
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n")
}

fn texts(m: &crate::message::Message) -> Vec<&str> {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn detects_every_format() {
    let cases: Vec<(String, Format)> = vec![
        (jsonl(&[json!({"type": "user", "uuid": "a", "parentUuid": null, "message": {"role": "user", "content": "hi"}})]), ClaudeCode),
        (jsonl(&[json!({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x"}}), json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}})]), Codex),
        (jsonl(&[json!({"type": "session", "version": 3, "id": "s", "cwd": "/"}), json!({"type": "message", "id": "a1", "parentId": null, "message": {"role": "user", "content": "hi"}})]), Pi),
        (json!({"info": {"id": "ses_1"}, "messages": [{"info": {"id": "msg_1", "role": "user"}, "parts": [{"id": "prt_1", "type": "text", "text": "hi"}]}]}).to_string(), Opencode),
        (json!({"history": [{"role": "user", "content": "hi"}], "trajectory": [], "info": {}}).to_string(), SweAgent),
        (json!({"trajectory_format": "mini-swe-agent-1.1", "messages": [{"role": "user", "content": "hi"}], "info": {}}).to_string(), MiniSweAgent),
        (json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "```mswea_bash_command\nls\n```"}]).to_string(), MiniSweAgent),
        (json!([{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}]).to_string(), OpenHands),
        (json!([{"id": "e1", "source": "user", "kind": "MessageEvent", "llm_message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}]).to_string(), OpenHands),
        (json!({"messages": [{"role": "user", "content": "hi"}]}).to_string(), OpenAiChat),
        (jsonl(&[json!({"role": "user", "content": "hi"}), json!({"role": "assistant", "content": "yo"})]), OpenAiChat),
        (jsonl(&[json!({"role": "_checkpoint", "id": 0}), json!({"role": "user", "content": "hi"})]), KimiCli),
        (jsonl(&[json!({"type": "session.start", "data": {"sessionId": "s"}, "id": "1", "parentId": null}), json!({"type": "user.message", "data": {"content": "hi"}, "id": "2", "parentId": "1"})]), CopilotCli),
        (json!({"sessionId": "s", "projectHash": "h", "messages": [{"id": "1", "type": "user", "content": "hi"}]}).to_string(), GeminiCli),
    ];
    for (text, format) in cases {
        let imp = import_transcript(&text, None).unwrap_or_else(|e| panic!("{format:?}: {e}"));
        assert_eq!(imp.format, format);
        assert_eq!(texts(&imp.messages[0]), vec!["hi"], "{format:?}");
    }
    let e = import_transcript("{\"hello\": 1}", None).unwrap_err();
    assert_eq!(e.code, crate::error::Code::UnknownFormat);
    assert_eq!(import_transcript("  \n", None).unwrap_err().code, crate::error::Code::UnknownFormat);
    assert_eq!(Format::parse("nope").unwrap_err().code, crate::error::Code::InvalidArgument);
}

#[test]
fn malformed_lines_are_warnings_with_line_numbers() {
    let text = [
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "message": {"role": "user", "content": "hi"}}).to_string(),
        "{\"type\": \"assistant\", \"uuid\": \"a1\", \"parentUu".to_string(),
        json!({"type": "assistant", "uuid": "a2", "parentUuid": "u1", "message": {"id": "m", "role": "assistant", "content": [{"type": "text", "text": "ok"}]}}).to_string(),
        "garbage".to_string(),
    ]
    .join("\n");
    let imp = import_transcript(&text, None).unwrap();
    assert_eq!(imp.messages.len(), 2);
    let lines: Vec<usize> = imp.warnings.iter().map(|w| w.line).collect();
    assert_eq!(lines, vec![2, 4]);
    assert!(imp.warnings[0].message.contains("malformed JSON"));
}

#[test]
fn claude_code_follows_the_newest_branch_merges_split_responses_and_keeps_images() {
    let l = |v: Value| v;
    let lines = vec![
        l(json!({"type": "file-history-snapshot", "messageId": "x"})),
        l(json!({"type": "user", "uuid": "u1", "parentUuid": null, "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg"}}]}})),
        // An abandoned answer (the user rewound and asked again).
        l(
            json!({"type": "assistant", "uuid": "old", "parentUuid": "u1", "message": {"id": "m0", "role": "assistant", "content": [{"type": "text", "text": "old answer"}]}}),
        ),
        l(json!({"type": "user", "uuid": "u2", "parentUuid": null, "message": {"role": "user", "content": "again"}})),
        // One response split over three lines, with two parallel calls.
        l(
            json!({"type": "assistant", "uuid": "a1", "parentUuid": "u2", "message": {"id": "m1", "role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}],
            "usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 5}}}),
        ),
        l(
            json!({"type": "assistant", "uuid": "a2", "parentUuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": 1}}]}}),
        ),
        l(
            json!({"type": "assistant", "uuid": "a3", "parentUuid": "a2", "message": {"id": "m1", "role": "assistant", "stop_reason": "tool_use", "content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"p": 2}}],
            "usage": {"input_tokens": 10, "output_tokens": 7, "cache_read_input_tokens": 5}}}),
        ),
        // Results hang off their own call's line: t1's is a sibling of the chain.
        l(
            json!({"type": "user", "uuid": "r1", "parentUuid": "a2", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "one"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "BBBB"}}]}]}}),
        ),
        l(
            json!({"type": "user", "uuid": "r2", "parentUuid": "a3", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "two", "is_error": true}]}}),
        ),
        l(json!({"type": "progress", "uuid": "p1", "parentUuid": "r2"})),
        l(
            json!({"type": "assistant", "uuid": "a4", "parentUuid": "p1", "message": {"id": "m2", "role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "Bash", "input": {}}]}}),
        ),
    ];
    let imp = import_transcript(&jsonl(&lines), None).unwrap();
    let m = &imp.messages;
    // u2 has no parent: the branch from the newest message starts there, u1 and "old" are left out.
    assert_eq!(m.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), vec!["u2", "a1", "a4"]);
    assert_eq!(imp.stats.off_branch, 2);
    assert_eq!(imp.stats.merged, 4);
    let a1 = &m[1];
    assert!(matches!(&a1.parts[0], Part::Reasoning(r) if r.extra["signature"] == "sig"));
    assert_eq!(a1.finish.as_deref(), Some("tool-calls"));
    assert_eq!(a1.tokens.as_ref().unwrap().output, 7, "usage is the response's, not a sum");
    let Part::Tool(t1) = &a1.parts[1] else { panic!() };
    let ToolState::Completed { output, attachments, .. } = &t1.state else { panic!("{:?}", t1.state) };
    assert_eq!(output, "one");
    assert_eq!(attachments.as_ref().unwrap()[0].url, "data:image/png;base64,BBBB");
    let Part::Tool(t2) = &a1.parts[2] else { panic!() };
    assert!(matches!(&t2.state, ToolState::Error { error, .. } if error == "two"));
    assert_eq!(unanswered(m), 1);

    // On the first branch (drop the rewind): images kept as data URLs, stripped ones as text.
    let imp = import_transcript(&jsonl(&lines[..3]), None).unwrap();
    let u1 = &imp.messages[0];
    assert!(matches!(&u1.parts[1], Part::File(f) if f.url == "data:image/png;base64,AAAA" && f.mime == "image/png"));
    assert!(matches!(&u1.parts[2], Part::Text(t) if t.text.contains("image/jpeg") && t.synthetic == Some(true)));
}

#[test]
fn claude_code_cycles_stop_with_a_warning() {
    let lines = vec![
        json!({"type": "user", "uuid": "a", "parentUuid": "b", "message": {"role": "user", "content": "x"}}),
        json!({"type": "assistant", "uuid": "b", "parentUuid": "a", "message": {"role": "assistant", "content": [{"type": "text", "text": "y"}]}}),
    ];
    let imp = import_transcript(&jsonl(&lines), None).unwrap();
    assert_eq!(imp.messages.len(), 2);
    assert!(imp.warnings.iter().any(|w| w.message.contains("loops")));
}

#[test]
fn pi_v3_follows_the_leaf_and_keeps_the_tail_pi_kept() {
    let e = |id: &str, parent: Option<&str>, role: &str, content: Value| json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00Z", "message": {"role": role, "content": content}});
    let lines = vec![
        json!({"type": "session", "version": 3, "id": "s", "cwd": "/"}),
        e("u1", None, "user", json!("first")),
        e(
            "a1",
            Some("u1"),
            "assistant",
            json!([{"type": "text", "text": "one"}, {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "x"}}]),
        ),
        json!({"type": "message", "id": "r1", "parentId": "a1", "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "file"}, {"type": "image", "data": "CCCC", "mimeType": "image/png"}], "isError": false}}),
        e("u2", Some("r1"), "user", json!("second")),
        e("dead", Some("u2"), "assistant", json!([{"type": "text", "text": "abandoned"}])),
        e("a2", Some("u2"), "assistant", json!([{"type": "text", "text": "two"}])),
        json!({"type": "compaction", "id": "k1", "parentId": "a2", "summary": "the summary", "firstKeptEntryId": "u2", "tokensBefore": 1000}),
        e("u3", Some("k1"), "user", json!("third")),
    ];
    let imp = import_transcript(&jsonl(&lines), None).unwrap();
    let ids: Vec<&str> = imp.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, vec!["u1", "a1", "u2", "a2", "pi-1", "pi-2", "u3"]);
    assert_eq!(imp.stats.off_branch, 1);
    let Part::Tool(t) = &imp.messages[1].parts[1] else { panic!() };
    assert!(
        matches!(&t.state, ToolState::Completed { output, attachments: Some(a), .. } if output == "file" && a[0].url == "data:image/png;base64,CCCC")
    );
    let order: Vec<&str> = view(&imp.messages).into_iter().map(|i| imp.messages[i].id.as_str()).collect();
    assert_eq!(order, vec!["pi-1", "pi-2", "u2", "a2", "u3"]);
    assert_eq!(imp.messages[4].compaction().unwrap().extra["tokensBefore"], 1000);
}

#[test]
fn opencode_exports_map_field_for_field() {
    let doc = json!({"info": {"id": "ses_1", "title": "t"}, "messages": [
        {"info": {"id": "msg_u", "sessionID": "ses_1", "role": "user", "time": {"created": 1}}, "parts": [
            {"id": "prt_1", "messageID": "msg_u", "type": "text", "text": "hi"},
            {"id": "prt_2", "messageID": "msg_u", "type": "file", "mime": "image/png", "url": "data:image/png;base64,AA"}]},
        {"info": {"id": "msg_a", "role": "assistant", "parentID": "msg_u", "finish": "tool-calls", "modelID": "m", "providerID": "p",
                  "tokens": {"input": 5, "output": 2, "reasoning": 0, "cache": {"read": 3, "write": 0}}, "time": {"created": 2, "completed": 3}}, "parts": [
            {"id": "prt_3", "type": "step-start"},
            {"id": "prt_4", "type": "tool", "callID": "c1", "tool": "bash", "state": {"status": "completed", "input": {"command": "ls"}, "output": "a", "title": "ls", "metadata": {}, "time": {"start": 1, "end": 2, "compacted": 9}}},
            {"id": "prt_5", "type": "tool", "callID": "c2", "tool": "bash", "state": {"status": "running", "input": {}}}]},
        {"info": {"id": "msg_c", "role": "user"}, "parts": [{"id": "prt_6", "type": "compaction", "auto": true}]},
        {"info": {"id": "msg_s", "role": "assistant", "parentID": "msg_c", "summary": true, "finish": "stop"}, "parts": [{"id": "prt_7", "type": "text", "text": "summary"}]},
        {"info": {"id": "msg_x", "role": "assistant", "error": {"name": "APIError", "data": {"message": "boom"}}}, "parts": [{"id": "prt_8", "type": "tool", "state": {}}]}
    ]});
    let imp = import_transcript(&serde_json::to_string_pretty(&doc).unwrap(), None).unwrap();
    assert_eq!(imp.format, Opencode);
    let m = &imp.messages;
    assert_eq!(m.len(), 5);
    assert_eq!(m[0].extra["sessionID"], "ses_1");
    assert!(matches!(&m[0].parts[1], Part::File(_)));
    assert_eq!(m[1].model.as_ref().unwrap().model_id, "m");
    assert_eq!(m[1].tokens.as_ref().unwrap().cache_read, Some(3));
    assert!(matches!(&m[1].parts[0], Part::Other(_)));
    let Part::Tool(t) = &m[1].parts[1] else { panic!() };
    assert!(t.is_pruned(), "time.compacted is the prune mark");
    assert_eq!(unanswered(m), 1);
    assert_eq!(view(m), vec![2, 3, 4]);
    assert_eq!(m[4].error.as_ref().unwrap().message, "boom");
    assert_eq!(imp.warnings.len(), 1, "the unreadable part: {:?}", imp.warnings);
    assert_eq!(imp.stats.tool_calls, 2);
}

#[test]
fn openhands_v1_condensation_hides_the_forgotten_events() {
    let ev = json!([
        {"id": "e0", "source": "agent", "kind": "SystemPromptEvent", "system_prompt": {"text": "sys"}},
        {"id": "e1", "source": "user", "kind": "MessageEvent", "llm_message": {"role": "user", "content": [{"type": "text", "text": "task"}]}},
        {"id": "e2", "source": "agent", "kind": "ActionEvent", "thought": [{"type": "text", "text": "look"}], "tool_name": "bash", "tool_call_id": "c1", "llm_response_id": "r1", "tool_call": {"id": "c1", "name": "bash", "arguments": "{\"command\": \"ls\"}"}},
        {"id": "e3", "source": "environment", "kind": "ObservationEvent", "tool_call_id": "c1", "tool_name": "bash", "observation": {"content": [{"type": "text", "text": "a b"}]}},
        {"id": "e4", "source": "agent", "kind": "ActionEvent", "thought": [], "tool_name": "bash", "tool_call_id": "c2", "llm_response_id": "r2", "tool_call": {"id": "c2", "name": "bash", "arguments": "{}"}},
        {"id": "e5", "source": "environment", "kind": "ObservationEvent", "tool_call_id": "c2", "observation": {"content": [{"type": "text", "text": "x"}]}},
        {"id": "e6", "source": "user", "kind": "MessageEvent", "llm_message": {"role": "user", "content": [{"type": "text", "text": "more"}]}},
        {"id": "e7", "source": "agent", "kind": "Condensation", "forgotten_event_ids": ["e2", "e3"], "summary": "looked at files"},
        {"id": "e8", "source": "agent", "kind": "ConversationStateUpdateEvent"}
    ]);
    let imp = import_transcript(&ev.to_string(), None).unwrap();
    let m = &imp.messages;
    let texts_in_view: Vec<Vec<&str>> = view(m).into_iter().map(|i| texts(&m[i])).collect();
    assert_eq!(texts_in_view, vec![vec!["sys"], vec!["task"], vec![], vec!["looked at files"], vec![], vec!["more"]]);
    assert_eq!(imp.stats.compactions, 1);
    assert_eq!(imp.stats.records, 9);
    assert_eq!(m.len(), imp.stats.records - imp.stats.skipped - imp.stats.merged + imp.stats.added);
}

#[test]
fn results_without_calls_and_repeated_results_are_kept_safe() {
    let text = jsonl(&[
        json!({"role": "user", "content": "hi"}),
        json!({"role": "tool", "tool_call_id": "ghost", "content": "orphan"}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "r1"}),
        json!({"role": "tool", "tool_call_id": "c1", "content": "again"}),
    ]);
    let imp = import_transcript(&text, None).unwrap();
    assert_eq!(imp.warnings.len(), 2, "{:?}", imp.warnings);
    assert_eq!((imp.warnings[0].line, imp.warnings[1].line), (2, 5));
    assert_eq!(imp.messages.len(), 3);
    let Part::Tool(t) = &imp.messages[1].parts[0] else { panic!() };
    assert_eq!(t.call_id, "ghost");
    let all: Vec<&crate::message::Message> = imp.messages.iter().collect();
    check_all(&all, "orphans");
}

#[test]
fn openai_chat_content_of_unknown_kinds_is_kept_and_reported() {
    // The AI SDK fuzz finding's shape as chat messages: an answer without content, then tool
    // messages of items chat messages do not have.
    let text = jsonl(&[
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "input_audio", "input_audio": {"data": "AA"}}]}),
        json!({"role": "assistant"}),
        json!({"role": "tool", "content": [{"": ""}], "": ""}),
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "out"}, {"t": ""}]}),
    ]);
    let imp = import_transcript(&text, Some(Format::OpenAiChat)).unwrap();
    let warned: Vec<&str> = imp.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        warned,
        [
            "content of type \"input_audio\", which chat messages do not have: kept as it came",
            "a tool message without tool_call_id; ignored",
            "content without a type, which chat messages do not have: read as its JSON",
        ]
    );
    assert!(matches!(&imp.messages[0].parts[1], Part::Other(o) if o["input_audio"]["data"] == "AA"));
    let ToolState::Completed { output, .. } = &tool_of(&imp.messages, "c1").state else { panic!() };
    assert_eq!(output.as_str(), "out\n{\"t\":\"\"}");
    let all: Vec<&crate::message::Message> = imp.messages.iter().collect();
    check_all(&all, "openai-chat, unknown content");
    for m in &imp.messages {
        assert_eq!(&crate::message::parse_message(serde_json::to_value(m).unwrap()).unwrap(), m);
    }
}

/// The tool part answering `call`.
fn tool_of<'a>(msgs: &'a [crate::message::Message], call: &str) -> &'a crate::message::ToolPart {
    msgs.iter()
        .flat_map(|m| &m.parts)
        .find_map(|p| match p {
            Part::Tool(t) if t.call_id == call => Some(t),
            _ => None,
        })
        .unwrap()
}

fn identity_holds(imp: &Imported) {
    let s = &imp.stats;
    assert_eq!(imp.messages.len(), s.records - s.skipped - s.off_branch - s.merged + s.added, "{s:?}");
}

#[test]
fn openhands_v1_terminal_observations_read_as_the_model_read_them_with_event_ids() {
    let ev = json!([
        {"id": "evt-sys", "timestamp": "2025-06-01T10:00:00", "source": "agent", "kind": "SystemPromptEvent", "system_prompt": {"type": "text", "text": "You are OpenHands agent."}, "tools": []},
        {"id": "evt-u1", "timestamp": "2025-06-01T10:00:01", "source": "user", "kind": "MessageEvent",
         "llm_message": {"role": "user", "content": [{"type": "text", "text": "Run the tests in /workspace/app"}]},
         "extended_content": [{"type": "text", "text": "<EXTRA_INFO>\nThe repository uses pytest.\n</EXTRA_INFO>"}]},
        {"id": "evt-a1", "timestamp": "2025-06-01T10:00:02", "source": "agent", "kind": "ActionEvent", "thought": [{"type": "text", "text": "Running pytest."}],
         "action": {"kind": "TerminalAction", "command": "pytest -q"}, "tool_name": "terminal", "tool_call_id": "call_1",
         "tool_call": {"id": "call_1", "name": "terminal", "arguments": "{\"command\": \"pytest -q\"}"}, "llm_response_id": "resp-1"},
        {"id": "evt-o1", "timestamp": "2025-06-01T10:00:04", "source": "environment", "kind": "ObservationEvent", "tool_name": "terminal", "tool_call_id": "call_1", "action_id": "evt-a1",
         "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": "3 passed in 0.12s"}], "is_error": false, "command": "pytest -q", "exit_code": 0, "timeout": false,
           "metadata": {"exit_code": 0, "pid": -1, "username": "openhands", "hostname": "sandbox", "working_dir": "/workspace/app", "py_interpreter_path": "/usr/bin/python", "prefix": "", "suffix": "\n[The command completed with exit code 0.]"}}},
        {"id": "evt-a2", "timestamp": "2025-06-01T10:00:05", "source": "agent", "kind": "ActionEvent", "thought": [],
         "action": {"kind": "TerminalAction", "command": "npm run build"}, "tool_name": "terminal", "tool_call_id": "call_2",
         "tool_call": {"id": "call_2", "name": "terminal", "arguments": "{\"command\": \"npm run build\"}"}, "llm_response_id": "resp-2"},
        {"id": "evt-o2", "timestamp": "2025-06-01T10:00:06", "source": "environment", "kind": "ObservationEvent", "tool_name": "terminal", "tool_call_id": "call_2", "action_id": "evt-a2",
         "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": ""}], "is_error": true, "command": "npm run build", "exit_code": -1, "timeout": false,
           "metadata": {"exit_code": -1, "pid": -1, "working_dir": "/workspace/app", "py_interpreter_path": null,
             "prefix": "[Previous command still running. You cannot send a new command until it completes or times out.]\n", "suffix": ""}}},
        {"id": "evt-st", "timestamp": "2025-06-01T10:00:07", "source": "environment", "kind": "ConversationStateUpdateEvent", "key": "execution_status", "value": "finished"}
    ]);
    let imp = import_transcript(&ev.to_string(), None).unwrap();
    assert_eq!(imp.format, OpenHands);
    let ids: Vec<&str> = imp.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["evt-sys", "evt-u1", "evt-a1", "evt-a2"]);
    assert_eq!(
        texts(&imp.messages[1]),
        ["Run the tests in /workspace/app", "<EXTRA_INFO>\nThe repository uses pytest.\n</EXTRA_INFO>"]
    );
    let ToolState::Completed { output, .. } = &tool_of(&imp.messages, "call_1").state else { panic!() };
    assert_eq!(
        output,
        "3 passed in 0.12s\n[The command completed with exit code 0.]\n[Current working directory: /workspace/app]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]"
    );
    let ToolState::Error { error, .. } = &tool_of(&imp.messages, "call_2").state else { panic!() };
    assert_eq!(
        error,
        "[An error occurred during execution.]\n[Previous command still running. You cannot send a new command until it completes or times out.]\n\n[Current working directory: /workspace/app]"
    );
    assert_eq!(imp.stats.omitted.get("ConversationStateUpdateEvent"), Some(&1));
    identity_holds(&imp);
}

#[test]
fn claude_code_microcompact_boundaries_clear_results_and_attachments_are_kept() {
    let lines = [
        json!({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}),
        json!({"type": "user", "uuid": "u1", "parentUuid": null, "timestamp": "2025-06-01T10:00:00Z", "message": {"role": "user", "content": "Read the config and fix the port"}}),
        json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2025-06-01T10:00:01Z", "message": {"id": "msg_1", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/app/config.yml"}}]}}),
        json!({"type": "user", "uuid": "r1", "parentUuid": "a1", "timestamp": "2025-06-01T10:00:02Z", "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "port: 8080\nhost: 0.0.0.0\n".repeat(40)}]}}),
        json!({"type": "attachment", "uuid": "att1", "parentUuid": "r1", "timestamp": "2025-06-01T10:00:03Z",
            "attachment": {"type": "hook_additional_context", "hookName": "PostToolUse:Read", "content": ["Config files are generated: edit config.src.yml instead."]}}),
        json!({"type": "attachment", "uuid": "att2", "parentUuid": "att1", "timestamp": "2025-06-01T10:00:03Z", "attachment": {"type": "goal_status", "met": false}}),
        json!({"type": "system", "subtype": "microcompact_boundary", "uuid": "mc1", "parentUuid": "att2", "timestamp": "2025-06-01T10:05:00Z",
            "content": "Context microcompacted", "level": "info", "isMeta": false,
            "microcompactMetadata": {"trigger": "auto", "preTokens": 91234, "tokensSaved": 812, "compactedToolIds": ["toolu_1"], "clearedAttachmentUUIDs": []}}),
        json!({"type": "assistant", "uuid": "a2", "parentUuid": "mc1", "timestamp": "2025-06-01T10:05:01Z", "message": {"id": "msg_2", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "I'll edit config.src.yml."}]}}),
    ];
    let imp = import_transcript(&jsonl(&lines), None).unwrap();
    assert_eq!(imp.format, ClaudeCode);
    let read = tool_of(&imp.messages, "toolu_1");
    assert!(read.is_pruned(), "the result Claude Code cleared reads as cleared");
    let att = imp.messages.iter().find(|m| m.id == "att1").unwrap();
    assert_eq!(
        texts(att),
        ["<system-reminder>\nConfig files are generated: edit config.src.yml instead.\n</system-reminder>"]
    );
    assert_eq!(imp.stats.omitted.get("file-history-snapshot"), Some(&1));
    assert_eq!(imp.stats.omitted.get("system:microcompact_boundary"), Some(&1));
    assert_eq!(imp.stats.omitted.get("attachment:goal_status"), Some(&1));
    identity_holds(&imp);
}

#[test]
fn copilot_cli_keeps_what_the_model_received_and_the_usage() {
    let lines = [
        json!({"type": "session.start", "id": "e0", "timestamp": "2025-06-01T10:00:00Z", "parentId": null, "data": {"sessionId": "s", "copilotVersion": "0.0.340"}}),
        json!({"type": "user.message", "id": "e1", "timestamp": "2025-06-01T10:00:01Z", "parentId": "e0", "data": {
            "content": "fix the flaky test", "attachments": [],
            "transformedContent": "<current_datetime>2025-06-01T10:00:01Z</current_datetime>\n\nfix the flaky test\n\n<reminder>Use the report_intent tool.</reminder>"}}),
        json!({"type": "hook.start", "id": "e2", "timestamp": "2025-06-01T10:00:01Z", "parentId": "e1", "data": {"hookType": "preToolUse"}}),
        json!({"type": "assistant.message", "id": "e3", "timestamp": "2025-06-01T10:00:03Z", "parentId": "e2", "data": {
            "messageId": "m1", "content": "Looking at the test.", "model": "claude-sonnet-4.5", "outputTokens": 42,
            "toolRequests": [{"toolCallId": "tc1", "name": "bash", "arguments": {"command": "npm test"}}]}}),
        json!({"type": "assistant.usage", "id": "e4", "timestamp": "2025-06-01T10:00:03Z", "parentId": "e3", "data": {
            "model": "claude-sonnet-4.5", "inputTokens": 15210, "outputTokens": 42, "cacheReadTokens": 12000, "cacheWriteTokens": 3000}}),
        json!({"type": "tool.execution_complete", "id": "e5", "timestamp": "2025-06-01T10:00:09Z", "parentId": "e4", "data": {
            "toolCallId": "tc1", "success": true, "result": {"content": "1 failing"}}}),
        json!({"type": "session.shutdown", "id": "e6", "timestamp": "2025-06-01T10:10:00Z", "parentId": "e5", "data": {
            "shutdownType": "routine", "modelMetrics": {"claude-sonnet-4.5": {"requests": {"count": 3, "cost": 3},
              "usage": {"inputTokens": 45000, "outputTokens": 900, "cacheReadTokens": 30000, "cacheWriteTokens": 6000}}}}}),
    ];
    let imp = import_transcript(&jsonl(&lines), None).unwrap();
    assert_eq!(imp.format, CopilotCli);
    let user = &imp.messages[0];
    assert!(texts(user)[0].starts_with("<current_datetime>"), "what the model received");
    assert_eq!(user.extra.get("userContent"), Some(&json!("fix the flaky test")));
    let answer = &imp.messages[1];
    let u = answer.tokens.as_ref().unwrap();
    assert_eq!((u.input, u.output, u.cache_read, u.cache_write), (15210, 42, Some(12000), Some(3000)));
    assert_eq!(answer.extra.get("outputTokens"), Some(&json!(42)));
    let total = imp.stats.usage.as_ref().unwrap();
    assert_eq!((total.input, total.output, total.cache_read), (45000, 900, Some(30000)));
    assert_eq!(imp.stats.omitted.get("hook.start"), Some(&1));
    assert_eq!(imp.stats.omitted.get("session.start"), Some(&1));
    identity_holds(&imp);
}

#[test]
fn swe_agent_trajectories_report_the_fields_left_out() {
    let imp = import_transcript(&read("swe-agent/marshmallow-1867-function-calling.traj"), None).unwrap();
    for key in ["trajectory", "info"] {
        assert_eq!(imp.stats.omitted.get(key), Some(&1), "{key}: {:?}", imp.stats.omitted);
    }
    assert!(!imp.stats.omitted.contains_key("history"));
    let mini = import_transcript(&read("mini-swe-agent/django-13265-deepseek-toolcalls.traj.json"), None).unwrap();
    assert_eq!(mini.stats.omitted.get("info"), Some(&1), "{:?}", mini.stats.omitted);
    assert!(!mini.stats.omitted.contains_key("messages"));
}

/// The summary's file lists come from each importer's own tool names: every corpus file whose
/// agent read or edited files through a file tool yields both lists (or the one its agent used).
#[test]
fn file_lists_fill_for_every_importers_tool_names() {
    use crate::summary_input::{track_files, FileOps};
    let mut by_format: HashMap<String, (usize, usize)> = HashMap::new();
    for c in CASES {
        let imp = import_case(c);
        let mut ops = FileOps::default();
        track_files(&imp.messages, &mut ops);
        let e = by_format.entry(format!("{:?}", c.format)).or_default();
        e.0 += ops.read.len();
        e.1 += ops.modified.len();
    }
    for (format, (read, modified)) in &by_format {
        assert!(read + modified > 0, "{format}: no file tracked ({by_format:?})");
    }
}

/// A transcript under `__test__/fixtures/transcripts/` (shared with the package's specs).
fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/__test__/fixtures/transcripts/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn call_ids(msgs: &[crate::message::Message]) -> Vec<&str> {
    msgs.iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::Tool(t) => Some(t.call_id.as_str()),
            _ => None,
        })
        .collect()
}

/// Claude Code chains the next `tool_use` of a response through a line the chain from the newest
/// message does not pass (a progress line, the result of the response's first call): every line
/// of a response on the branch is kept with its results; a copy on another branch is not.
#[test]
fn claude_code_keeps_every_line_of_a_response_on_the_branch() {
    let imp = import_transcript(&fixture("claude-code-parallel-calls.jsonl"), None).unwrap();
    let m = &imp.messages;
    assert_eq!(m.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["u1", "a1", "a4", "a6"]);
    assert_eq!(call_ids(m), ["toolu_A", "toolu_B", "toolu_C", "toolu_D"]);
    assert_eq!(imp.stats.tool_calls, 4);
    assert_eq!(unanswered(m), 0);
    let ToolState::Completed { output, .. } = &tool_of(m, "toolu_B").state else { panic!() };
    assert_eq!(output, "export const b = 2\n");
    assert!(matches!(&tool_of(m, "toolu_C").state, ToolState::Error { .. }));
    let ToolState::Completed { output, .. } = &tool_of(m, "toolu_D").state else { panic!() };
    assert_eq!(output, "PASS b.test.ts");
    let lines: Vec<(usize, &str)> = imp.warnings.iter().map(|w| (w.line, w.message.as_str())).collect();
    assert_eq!(
        lines,
        [
            (2, "repeats lines of response \"msg_01\" from another branch; left out"),
            (6, "off the parentUuid chain, but part of response \"msg_01\" on the branch; kept with it"),
            (11, "off the parentUuid chain, but part of response \"msg_02\" on the branch; kept with it"),
        ]
    );
    assert_eq!(imp.stats.off_branch, 1, "the copy");
    identity_holds(&imp);
    let all: Vec<&crate::message::Message> = m.iter().collect();
    check_all(&all, "parallel calls");
}

/// Codex `view_image`: a `function_call_output` whose `output` is content items. The image is
/// the result's attachment, never its base64 as text.
#[test]
fn codex_image_outputs_are_attachments_not_text() {
    let imp = import_transcript(&fixture("codex-view-image.jsonl"), None).unwrap();
    assert_eq!(imp.format, Codex);
    let view = tool_of(&imp.messages, "call_view1");
    let ToolState::Completed { output, attachments, .. } = &view.state else { panic!("{:?}", view.state) };
    assert_eq!(output, "");
    let files = attachments.as_ref().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].mime, "image/png");
    assert!(files[0].url.starts_with("data:image/png;base64,iVBORw0KGgo"));
    let ToolState::Completed { output, attachments, .. } = &tool_of(&imp.messages, "call_rg1").state else { panic!() };
    assert_eq!(output, "12:.header { display: flex; height: 0; }");
    assert_eq!(attachments.as_ref().map(Vec::len), Some(1));
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    // An item of a kind not understood stays in the output as it came, reported.
    let odd = fixture("codex-view-image.jsonl").replace(
        r#"{"type": "input_text", "text": "12:"#,
        r#"{"type": "audio", "data": "AAAA"}, {"type": "input_text", "text": "12:"#,
    );
    let imp = import_transcript(&odd, None).unwrap();
    let ToolState::Completed { output, .. } = &tool_of(&imp.messages, "call_rg1").state else { panic!() };
    assert!(output.starts_with(r#"{"data":"AAAA","type":"audio"}"#), "{output:?}");
    assert_eq!(imp.warnings.len(), 1);
    assert_eq!(imp.warnings[0].line, 8);
}

fn files(msgs: &[crate::message::Message]) -> Vec<&crate::message::FilePart> {
    msgs.iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::File(f) => Some(f),
            _ => None,
        })
        .collect()
}

/// Claude Code's `microcompact_boundary`: one naming tool results clears them, an error result
/// included; one naming none cleared images (2,000 tokens each in `tokensSaved`), oldest first.
#[test]
fn claude_code_microcompact_boundaries_clear_errors_and_images() {
    let text = fixture("claude-code-microcompact-images.jsonl");
    let imp = import_transcript(&text, None).unwrap();
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    let m = &imp.messages;
    let grep = tool_of(m, "toolu_grep");
    assert!(
        matches!(&grep.state, ToolState::Error { error, .. } if error.starts_with("Exit code 2")),
        "kept as it came"
    );
    assert!(grep.is_pruned() && tool_of(m, "toolu_read").is_pruned());
    assert_eq!(grep.state.cleared_text(), Some(crate::message::markers::PRUNED));
    let images = files(m);
    assert_eq!(images.len(), 2);
    assert!(images.iter().all(|f| f.is_cleared() && f.url.starts_with("data:image/png;base64,")), "kept, marked");
    let at = images[0].extra["compactedAt"].as_f64().unwrap();
    assert_eq!(at, content::iso_ms("2026-01-20T14:08:00.000Z").unwrap());
    // Cleared parts count as their markers, and the prune marks know what they freed.
    let counter = crate::tokens::Counter {
        tokenizer: crate::tokens::Tokenizer::Estimate,
        image_tokens: 1200,
        output_max_chars: None,
    };
    let c = counter.part(&Part::File(images[0].clone()));
    assert_eq!(c.total, counter.text(&crate::message::markers::cleared("image/png", "file")));
    assert_eq!(c.total + c.cleared, 1200);
    assert_eq!(counter.media(&Part::File(images[0].clone())), 0);

    // Fewer images than the boundary counts: the oldest go, and the mismatch is reported.
    let one = import_transcript(&text.replace(r#""tokensSaved": 4000"#, r#""tokensSaved": 2000"#), None).unwrap();
    let cleared: Vec<bool> = files(&one.messages).iter().map(|f| f.is_cleared()).collect();
    assert_eq!(cleared, [true, false]);
    let many = import_transcript(&text.replace(r#""tokensSaved": 4000"#, r#""tokensSaved": 6000"#), None).unwrap();
    assert!(files(&many.messages).iter().all(|f| f.is_cleared()));
    assert_eq!(many.warnings.len(), 1);
    assert_eq!(many.warnings[0].line, 9);
    assert_eq!(
        many.warnings[0].message,
        "microcompact_boundary cleared 3 images (tokensSaved 6000); the context holds 2: the oldest 2 cleared"
    );
    let odd = import_transcript(&text.replace(r#""tokensSaved": 4000"#, r#""tokensSaved": 1234"#), None).unwrap();
    assert!(files(&odd.messages).iter().all(|f| !f.is_cleared()));
    assert!(odd.warnings[0].message.contains("not a whole number of images"), "{:?}", odd.warnings);
    identity_holds(&imp);
}

fn reasonings(m: &crate::message::Message) -> Vec<&str> {
    m.parts
        .iter()
        .filter_map(|p| match p {
            Part::Reasoning(r) => Some(r.text.as_str()),
            _ => None,
        })
        .collect()
}

/// A Gemini CLI saved chat (`Content[]`, the API's shape): thoughts are reasoning, calls pair with
/// their responses (by id, else by name in order), a `<state_snapshot>` turn is a compaction.
#[test]
fn gemini_cli_saved_chats_read_as_content() {
    let text = fixture("gemini-cli-saved-chat.json");
    let imp = import_transcript(&text, None).unwrap();
    assert_eq!(imp.format, GeminiCli);
    assert_eq!(imp.stats.records, 12);
    assert_eq!(imp.stats.compactions, 1);
    identity_holds(&imp);
    let m = &imp.messages;
    // The snapshot's request and summary come first; Gemini CLI's environment context is kept.
    let order: Vec<Vec<&str>> = view(m).into_iter().map(|i| texts(&m[i])).collect();
    assert_eq!(order.len(), m.len());
    assert!(m[order_first(m)].compaction().is_some());
    assert!(order[1][0].starts_with("<state_snapshot>") && order[1][0].contains("no new runtime dependencies"));
    assert!(order[2][0].starts_with("This is the Gemini CLI."));
    let ask = m.iter().find(|m| texts(m).first().is_some_and(|t| t.starts_with("パーサー"))).unwrap();
    assert_eq!(ask.role, Role::User);
    let read = m.iter().find(|m| !reasonings(m).is_empty()).unwrap();
    assert_eq!(reasonings(read), ["**Reading the parser**\nI need the parser's entry point before writing tests."]);
    assert_eq!(texts(read), ["I'll read the parser first."]);
    let call = tool_of(m, "read_file-1772537000000-0");
    assert_eq!(call.extra.get("thoughtSignature"), Some(&json!("CiQBcsjafKq3gGYB0Q==")));
    assert!(matches!(&call.state, ToolState::Completed { output, .. } if output.starts_with("export function parse")));
    // Calls without ids pair with the responses of the same name, in order.
    let shell: Vec<&crate::message::ToolPart> = m
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::Tool(t) if t.tool == "run_shell_command" => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(shell.len(), 2);
    assert!(matches!(&shell[0].state, ToolState::Completed { output, .. } if output.contains("expected 4, got 3")));
    assert!(matches!(&shell[1].state, ToolState::Error { error, .. } if error.contains("Missing script")));
    assert_eq!(unanswered(m), 0);
    assert_eq!(files(m).len(), 1);
    // A part of a kind not read is kept as it came, reported.
    assert!(m
        .iter()
        .flat_map(|m| &m.parts)
        .any(|p| matches!(p, Part::Other(v) if v["type"] == "gemini-executableCode")));
    assert_eq!(imp.warnings.len(), 1, "{:?}", imp.warnings);
    assert!(imp.warnings[0].message.contains("`executableCode` part is kept"));
    // The newer file shape, `{history, authType}`, reads the same.
    let wrapped = format!("{{\"history\": {text}, \"authType\": \"oauth-personal\"}}");
    let again = import_transcript(&wrapped, None).unwrap();
    assert_eq!((again.format, again.messages), (GeminiCli, imp.messages.clone()));
    assert_eq!(import_transcript(&text, Some(GeminiCli)).unwrap(), imp);
    let all: Vec<&crate::message::Message> = m.iter().collect();
    check_all(&all, "gemini saved chat");
}

fn order_first(m: &[crate::message::Message]) -> usize {
    view(m)[0]
}

/// Gemini CLI's JSONL session: a record repeating an id replaces the message, `$rewindTo` drops
/// from that message on, `$set` is metadata.
#[test]
fn gemini_cli_jsonl_sessions_replay_updates_and_rewinds() {
    let imp = import_transcript(&fixture("gemini-cli-session.jsonl"), None).unwrap();
    assert_eq!(imp.format, GeminiCli);
    assert!(imp.warnings.is_empty(), "{:?}", imp.warnings);
    let m = &imp.messages;
    assert_eq!(m.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["m1", "m2", "m5", "m6"]);
    assert_eq!(texts(&m[1]), ["Two files: a.txt and b.txt."], "the later record of m2");
    assert_eq!(m[1].tokens.as_ref().unwrap().total, Some(5260));
    assert!(matches!(&tool_of(m, "list_directory-1772614860000-0").state, ToolState::Completed { .. }));
    for key in ["session metadata", "$set", "$rewindTo"] {
        assert_eq!(imp.stats.omitted.get(key), Some(&1), "{key}: {:?}", imp.stats.omitted);
    }
    assert_eq!(imp.stats.omitted.get("info"), Some(&1));
    identity_holds(&imp);
}

/// Detection never settles on a format that reads no message: another format that reads some is
/// taken (and said so); when none does, the import fails with CF_UNKNOWN_FORMAT.
#[test]
fn detection_falls_back_when_the_detected_format_reads_nothing() {
    // Looks like Kimi CLI (a `_usage` record) but is one Codex rollout.
    let text = jsonl(&[
        json!({"role": "_usage", "token_count": 10}),
        json!({"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}}),
    ]);
    let imp = import_transcript(&text, None).unwrap();
    assert_eq!(imp.format, Codex);
    assert_eq!(texts(&imp.messages[0]), ["hi"]);
    assert_eq!(imp.warnings[0].line, 0);
    assert!(imp.warnings[0].message.starts_with("read as codex: it looked like kimi-cli"), "{:?}", imp.warnings);
    // Records no format reads.
    let e = import_transcript(&jsonl(&[json!({"role": "robot", "content": "beep"})]), None).unwrap_err();
    assert_eq!(e.code, crate::error::Code::UnknownFormat);
    assert!(
        e.message.starts_with(
            "read as openai-chat, it gives no message (1 records; first warning, line 1: message with unknown role"
        ),
        "{}",
        e.message
    );
    // An empty conversation is no error, and an explicit format reads as asked.
    assert!(import_transcript("{\"messages\": []}", None).unwrap().messages.is_empty());
    assert!(import_transcript(&text, Some(KimiCli)).unwrap().messages.is_empty());
}

/// OpenHands V1: an action's `reasoning_content`, `thinking_blocks` and
/// `responses_reasoning_item` are the answer's reasoning, each text once.
#[test]
fn openhands_v1_keeps_reasoning() {
    let imp = import_transcript(&fixture("openhands-v1-reasoning.json"), None).unwrap();
    assert_eq!(imp.format, OpenHands);
    let m = &imp.messages;
    let by_id = |id: &str| m.iter().find(|m| m.id == id).unwrap();
    assert_eq!(
        reasonings(by_id("a1")),
        ["I should reproduce the failure before changing anything; running only the failing test keeps the output short."]
    );
    assert_eq!(texts(by_id("a1")), ["Running the failing test first."]);
    assert_eq!(call_ids(std::slice::from_ref(by_id("a1"))), ["call_1", "call_2"], "one response");
    let a3 = by_id("a3");
    let r3 = reasonings(a3);
    assert_eq!(r3.len(), 1, "thinking block and reasoning_content are the same text");
    assert!(r3[0].ends_with("先看一下 handler 的实现。"));
    let Part::Reasoning(first) = &a3.parts[0] else { panic!("{:?}", a3.parts[0]) };
    assert_eq!(first.extra.get("signature"), Some(&json!("EqQBCkgIBxABGAIiQL3s")));
    assert!(a3.parts.iter().any(|p| matches!(p, Part::Other(v) if v["type"] == "redacted_thinking")));
    let a4 = by_id("a4");
    assert_eq!(
        reasonings(a4),
        ["**Verifying the fix**\n\nget_user now returns None for unknown ids; rerunning the suite."]
    );
    let Part::Reasoning(r) = &a4.parts[0] else { panic!() };
    assert_eq!(r.extra.get("encrypted_content"), Some(&json!("gAAAAABo_x1")));
    assert_eq!(reasonings(by_id("m2")), ["The suite is green; summarize the change for the user."]);
    identity_holds(&imp);
}

/// Kimi CLI's `_usage` records (the context size before and after each step) are the usage of the
/// answer between them; `_system_prompt` is the system message.
#[test]
fn kimi_cli_usage_records_are_the_answers_usage() {
    let imp = import_transcript(&fixture("kimi-cli-usage.jsonl"), None).unwrap();
    assert_eq!(imp.format, KimiCli);
    let m = &imp.messages;
    assert_eq!(m[0].role, Role::System);
    assert!(texts(&m[0])[0].starts_with("You are Kimi CLI"));
    let usage: Vec<(u64, u64, Option<u64>)> =
        m.iter().filter_map(|m| m.tokens.as_ref()).map(|u| (u.input, u.output, u.total)).collect();
    assert_eq!(usage, [(3120, 65, Some(3185)), (3790, 32, Some(3822))]);
    assert_eq!(imp.stats.omitted.get("_checkpoint"), Some(&3));
    identity_holds(&imp);
    // The corpus file: the last answer reports the last context size the file recorded.
    let text = read("kimi-cli/sklearn-26323-context-main.jsonl");
    let last = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["role"] == "_usage")
        .unwrap();
    let imp = import_case(CASES.iter().find(|c| c.path == "kimi-cli/sklearn-26323-context-main.jsonl").unwrap());
    let answer = imp.messages.iter().rev().find(|m| m.role == Role::Assistant).unwrap();
    assert_eq!(answer.tokens.as_ref().unwrap().total, last["token_count"].as_u64());
    let with_usage = imp.messages.iter().filter(|m| m.tokens.is_some()).count();
    assert_eq!(with_usage, imp.messages.iter().filter(|m| m.role == Role::Assistant).count());
}

/// Copilot CLI: without `assistant.usage` (not always written), the context size recorded after an
/// answer (`currentTokens` of `session.usage_info`, `session.shutdown`) is its usage.
#[test]
fn copilot_cli_recorded_context_sizes_are_usage() {
    let imp = import_transcript(&fixture("copilot-cli-usage.jsonl"), None).unwrap();
    assert_eq!(imp.format, CopilotCli);
    let usage: Vec<(&str, Option<u64>)> =
        imp.messages.iter().filter_map(|m| m.tokens.as_ref().map(|u| (m.id.as_str(), u.total))).collect();
    assert_eq!(usage, [("m1", Some(18412)), ("m2", Some(18498))]);
    assert_eq!(imp.stats.usage.as_ref().unwrap().input, 36700);
    identity_holds(&imp);
}

/// The corpus file where Claude Code chained a parallel call through a progress line: every one
/// of its 102 calls is on the branch (101 were, before lines of a response were kept wherever
/// they hang), and the warning says where the line was taken from.
#[test]
fn claude_code_corpus_parallel_call_through_a_progress_line() {
    let c = CASES.iter().find(|c| c.path == "claude-code/kimicli-7758c4c5-images-3mb.jsonl").unwrap();
    let imp = import_case(c);
    let on_branch: HashSet<&str> = call_ids(&imp.messages).into_iter().collect();
    assert_eq!(on_branch.len(), c.tool_calls);
    assert!(on_branch.contains("toolu_01YCqNwWUKUDgNGQp9smuhmB"));
    let w: Vec<(usize, &str)> = imp.warnings.iter().map(|w| (w.line, w.message.as_str())).collect();
    assert_eq!(w, [(26, "off the parentUuid chain, but part of response \"msg_01P57Cog45E44QFxt4K2yuEh\" on the branch; kept with it")]);
}
