//! The importers against the shared corpus (`../shared/corpus`, described in its README) and
//! against small hand-written transcripts for what the corpus lacks.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::*;
use crate::convert::{markers, reshape, to_model_messages, ConvertOptions, ModelFormat};
use crate::model::{Part, Role, ToolState};
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
    Case {
        path,
        format,
        records,
        tool_calls,
        readme_compactions,
        messages,
        unanswered,
    }
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

fn unanswered(msgs: &[crate::model::Message]) -> usize {
    msgs.iter()
        .flat_map(|m| &m.parts)
        .filter(|p| {
            matches!(p, Part::Tool(t) if matches!(t.state, ToolState::Pending { .. } | ToolState::Running { .. }))
        })
        .count()
}

fn view(msgs: &[crate::model::Message]) -> Vec<usize> {
    let index: HashMap<String, usize> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.clone(), i))
        .collect();
    View::compute(msgs.len(), |i| &msgs[i], &index).order(msgs.len())
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
        assert_eq!(
            imp.messages.len(),
            s.records - s.skipped - s.off_branch - s.merged + s.added,
            "{}: {s:?}",
            c.path
        );
        assert_eq!(imp.messages.len(), c.messages, "{}: messages {s:?}", c.path);
        assert_eq!(unanswered(&imp.messages), c.unanswered, "{}: unanswered calls", c.path);
        // Every message passes the same validation as messages handed to a Session.
        let mut ids = HashSet::new();
        for m in &imp.messages {
            assert!(ids.insert(m.id.clone()), "{}: duplicate id {}", c.path, m.id);
            let back = crate::model::parse_message(serde_json::to_value(m).unwrap())
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
        assert_eq!(
            import_transcript(&text, Some(c.format)).unwrap(),
            import_transcript(&text, None).unwrap()
        );
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
        let (ci, comp) = entries
            .iter()
            .enumerate()
            .rev()
            .find(|(_, e)| e["type"] == "compaction")
            .unwrap();
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

/// Checks the tool-pair rule on each output shape; returns how many calls got the interrupted
/// result.
fn check_ai_sdk(out: &Value) -> usize {
    let msgs = out.as_array().unwrap();
    let mut seen = HashSet::new();
    let mut interrupted = 0;
    for (i, m) in msgs.iter().enumerate() {
        let calls: Vec<&str> = match m["content"].as_array() {
            Some(c) if m["role"] == "assistant" => c
                .iter()
                .filter(|b| b["type"] == "tool-call")
                .map(|b| b["toolCallId"].as_str().unwrap())
                .collect(),
            _ => Vec::new(),
        };
        if m["role"] == "tool" {
            assert!(i > 0 && msgs[i - 1]["role"] == "assistant", "tool message after a non-assistant");
        }
        if calls.is_empty() {
            continue;
        }
        for c in &calls {
            assert!(seen.insert(c.to_string()), "call id {c} reused");
        }
        let next = &msgs[i + 1];
        assert_eq!(next["role"], "tool");
        let results: Vec<&str> = next["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["toolCallId"].as_str().unwrap())
            .collect();
        assert_eq!(results, calls);
        interrupted += next["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["output"]["value"] == markers::INTERRUPTED)
            .count();
    }
    interrupted
}

fn check_anthropic(out: &Value) -> usize {
    let msgs = out["messages"].as_array().unwrap();
    if msgs.is_empty() {
        return 0;
    }
    assert_eq!(msgs[0]["role"], "user", "the first message is a user message");
    let mut seen = HashSet::new();
    let mut interrupted = 0;
    for (i, m) in msgs.iter().enumerate() {
        if i > 0 {
            assert_ne!(m["role"], msgs[i - 1]["role"], "roles alternate");
        }
        let blocks = m["content"].as_array().unwrap();
        assert!(!blocks.is_empty());
        for b in blocks {
            if b["type"] == "text" {
                assert!(!b["text"].as_str().unwrap().trim().is_empty());
            }
            if b["type"] == "tool_use" {
                assert!(b["input"].is_object());
                let id = b["id"].as_str().unwrap();
                assert!(id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{id}");
            }
        }
        let results: Vec<&str> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| b["tool_use_id"].as_str().unwrap())
            .collect();
        // Results come first in their user message and answer exactly the previous message's calls.
        assert!(blocks.iter().take(results.len()).all(|b| b["type"] == "tool_result"));
        let prev_calls: Vec<&str> = if i > 0 {
            msgs[i - 1]["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap())
                .collect()
        } else {
            Vec::new()
        };
        assert_eq!(results, prev_calls);
        for id in &prev_calls {
            assert!(seen.insert(id.to_string()));
        }
        interrupted += blocks
            .iter()
            .filter(|b| b["type"] == "tool_result" && b["content"][0]["text"] == markers::INTERRUPTED)
            .count();
    }
    let last = msgs.last().unwrap();
    assert!(!last["content"].as_array().unwrap().iter().any(|b| b["type"] == "tool_use"));
    interrupted
}

fn check_openai(out: &Value) -> usize {
    let msgs = out.as_array().unwrap();
    let mut seen = HashSet::new();
    let mut interrupted = 0;
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        assert_ne!(m["role"], "tool", "a tool message must follow an assistant's tool_calls");
        if m["role"] == "assistant" {
            assert!(m["content"].is_string() || m["tool_calls"].is_array());
        }
        i += 1;
        let Some(calls) = m["tool_calls"].as_array() else { continue };
        let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
        for (k, c) in calls.iter().enumerate() {
            assert!(seen.insert(ids[k].to_string()));
            let args: Value = serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
            assert!(args.is_object());
        }
        let mut answered = Vec::new();
        while i < msgs.len() && msgs[i]["role"] == "tool" {
            answered.push(msgs[i]["tool_call_id"].as_str().unwrap());
            if msgs[i]["content"] == markers::INTERRUPTED {
                interrupted += 1;
            }
            i += 1;
        }
        assert_eq!(answered, ids);
    }
    interrupted
}

fn check_all(msgs: &[&crate::model::Message], path: &str) -> [usize; 3] {
    let opts = ConvertOptions::default();
    let out = |f| serde_json::to_value(reshape(to_model_messages(msgs.iter().copied(), &opts), f)).unwrap();
    let r = [
        check_ai_sdk(&out(ModelFormat::AiSdk)),
        check_anthropic(&out(ModelFormat::Anthropic)),
        check_openai(&out(ModelFormat::OpenAi)),
    ];
    assert!(r[0] == r[1] && r[1] == r[2], "{path}: {r:?}");
    r
}

#[test]
fn the_tool_pair_rule_holds_in_every_format_and_unanswered_calls_read_as_interrupted() {
    for c in CASES {
        let imp = import_case(c);
        let all: Vec<&crate::model::Message> = imp.messages.iter().collect();
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
        let visible: Vec<&crate::model::Message> =
            view(&imp.messages).into_iter().map(|i| &imp.messages[i]).collect();
        check_all(&visible, c.path);
    }
}
