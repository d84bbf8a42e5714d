//! Checks of the invariants the rest of contextfold relies on, shared by the unit tests, the
//! property tests and the fuzz targets: each panics, naming what broke.

use std::collections::HashSet;

use serde_json::Value;

use crate::convert::{reshape, to_model_messages, ConvertOptions, ModelFormat};
use crate::message::markers;
use crate::message::Message;

/// Checks the tool-pair rule on each output shape; returns how many calls got the interrupted
/// result.
pub fn check_ai_sdk(out: &Value) -> usize {
    let msgs = out.as_array().unwrap();
    let mut seen = HashSet::new();
    let mut interrupted = 0;
    for (i, m) in msgs.iter().enumerate() {
        let calls: Vec<&str> = match m["content"].as_array() {
            Some(c) if m["role"] == "assistant" => {
                c.iter().filter(|b| b["type"] == "tool-call").map(|b| b["toolCallId"].as_str().unwrap()).collect()
            }
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
        let results: Vec<&str> =
            next["content"].as_array().unwrap().iter().map(|r| r["toolCallId"].as_str().unwrap()).collect();
        assert_eq!(results, calls);
        interrupted +=
            next["content"].as_array().unwrap().iter().filter(|r| r["output"]["value"] == markers::INTERRUPTED).count();
    }
    interrupted
}

pub fn check_anthropic(out: &Value) -> usize {
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
        let results: Vec<&str> =
            blocks.iter().filter(|b| b["type"] == "tool_result").map(|b| b["tool_use_id"].as_str().unwrap()).collect();
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

pub fn check_openai(out: &Value) -> usize {
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
        let Some(calls) = m["tool_calls"].as_array() else {
            continue;
        };
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

pub fn check_all(msgs: &[&crate::message::Message], path: &str) -> [usize; 3] {
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

/// The compaction rule read literally: the newest completed summary among the first `len`
/// messages replaces, in the context of everything before its request, the run from
/// `hiddenFromID` (or the start) up to `tailStartID` (or the end); what follows the summary comes
/// after the kept tail.
pub fn reference_view(msgs: &[&Message], len: usize) -> Vec<usize> {
    let summary = (0..len).rev().find(|&s| {
        msgs[s].is_completed_summary()
            && msgs[..s].iter().any(|m| Some(m.id.as_str()) == msgs[s].parent_id.as_deref() && m.compaction().is_some())
    });
    let Some(s) = summary else { return (0..len).collect() };
    let w = (0..s).rev().find(|&w| Some(msgs[w].id.as_str()) == msgs[s].parent_id.as_deref()).unwrap();
    let before = reference_view(msgs, w);
    let part = msgs[w].compaction().unwrap();
    let find = |id: &Option<String>| id.as_ref().and_then(|id| before.iter().position(|&p| &msgs[p].id == id));
    let tail = find(&part.tail_start_id).unwrap_or(before.len());
    let head = find(&part.hidden_from_id).filter(|&x| x <= tail).unwrap_or(0);
    let mut out = before[..head].to_vec();
    out.extend(w..=s);
    out.extend_from_slice(&before[tail..]);
    out.extend(s + 1..len);
    out
}
