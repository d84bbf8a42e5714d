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

/// The tool-pair rule on every shape: strictly on the typed messages (what the Anthropic and OpenAI
/// shapes are made from, and the AI SDK shape of every message not taken from ModelMessages), and
/// as AI SDK reads them on the AI SDK shape as sent; returns how many calls got the interrupted
/// result in each typed shape.
pub fn check_all(msgs: &[&crate::message::Message], path: &str) -> [usize; 3] {
    let opts = ConvertOptions::default();
    let convert = || to_model_messages(msgs.iter().copied(), &opts);
    let out = |f| serde_json::to_value(reshape(convert(), f)).unwrap();
    let sent = out(ModelFormat::AiSdk);
    check_ai_sdk_sent(&sent);
    let typed: Vec<_> = convert().into_iter().flat_map(|m| m.into_typed()).collect();
    let r = [
        check_ai_sdk(&serde_json::to_value(typed).unwrap()),
        check_anthropic(&out(ModelFormat::Anthropic)),
        check_openai(&out(ModelFormat::OpenAi)),
    ];
    assert!(r[0] == r[1] && r[1] == r[2], "{path}: {r:?}");
    r
}

/// The calls of an assistant message, and what answered them so far.
#[derive(Default)]
struct Answering {
    calls: Vec<String>,
    answered: HashSet<String>,
    /// Calls the message asks approval for.
    approval: HashSet<String>,
}

impl Answering {
    fn result(&mut self, it: &Value) {
        let id = it["toolCallId"].as_str().unwrap();
        assert!(self.calls.iter().any(|c| c == id), "result {id} answers no call of the message before it");
        assert!(self.answered.insert(id.to_string()), "call {id} answered twice");
    }

    /// Every call got its result, but one the SDK still has to approve and run (or deny).
    fn close(self) {
        for c in &self.calls {
            assert!(self.answered.contains(c) || self.approval.contains(c), "call {c} has no result");
        }
    }
}

/// Whether an item is a call or a result, as the AI SDK importer reads one under a type of its own.
fn call_or_result(it: &Value) -> Option<bool> {
    it["toolCallId"].as_str()?;
    match it.get("output") {
        None => it.get("input").is_some().then_some(true),
        Some(_) => Some(false),
    }
}

/// The tool-pair rule as AI SDK reads ModelMessages, on the AI SDK shape as sent (messages taken
/// from ModelMessages go out as they came): the tool messages after an assistant message (AI SDK
/// sends a run of them, e.g. an approval response, then the result) each answer its calls (a
/// `tool-result`, or a `tool-approval-response` to an earlier request); every call gets exactly
/// one result, there or in its own message (provider-executed), unless the message asks approval
/// for it (the SDK runs or denies it); call ids are unique. Items of kinds AI SDK does not define
/// pass as they came.
pub fn check_ai_sdk_sent(out: &Value) {
    let mut seen = HashSet::new();
    let mut requested = HashSet::new();
    let mut open: Option<Answering> = None;
    for m in out.as_array().unwrap() {
        let items = m["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        if m["role"] == "tool" {
            let a = open.as_mut().expect("tool message after a non-assistant");
            let mut answers = 0;
            for it in items {
                match it["type"].as_str() {
                    Some("tool-approval-response") => {
                        let id = it["approvalId"].as_str().unwrap_or_default();
                        assert!(requested.contains(id), "approval response {id} answers no request");
                    }
                    Some("tool-result") => a.result(it),
                    _ if call_or_result(it) == Some(false) => a.result(it),
                    _ => continue,
                }
                answers += 1;
            }
            assert!(answers > 0, "a tool message that answers no call");
            continue;
        }
        if let Some(a) = open.take() {
            a.close();
        }
        if m["role"] != "assistant" {
            continue;
        }
        let mut a = Answering::default();
        for it in items {
            let kind = it["type"].as_str();
            if kind == Some("tool-approval-request") {
                requested.insert(it["approvalId"].as_str().unwrap_or_default().to_string());
                a.approval.extend(it["toolCallId"].as_str().map(str::to_string));
                continue;
            }
            match (kind, call_or_result(it)) {
                (Some("tool-call"), _) | (_, Some(true)) => {
                    let id = it["toolCallId"].as_str().unwrap();
                    assert!(seen.insert(id.to_string()), "call id {id} reused");
                    a.calls.push(id.to_string());
                }
                (Some("tool-result"), _) | (_, Some(false)) => a.result(it),
                _ => {}
            }
        }
        open = Some(a);
    }
    if let Some(a) = open {
        a.close();
    }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::check_ai_sdk_sent;

    fn fails(out: serde_json::Value) -> String {
        let e = std::panic::catch_unwind(|| check_ai_sdk_sent(&out)).expect_err("the check fails");
        e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap()
    }

    #[test]
    fn the_ai_sdk_rule_as_sent_takes_what_ai_sdk_sends_and_nothing_that_answers_no_call() {
        let call = |id: &str| json!({"type": "tool-call", "toolCallId": id, "toolName": "rm", "input": {}});
        let result = |id: &str| json!({"type": "tool-result", "toolCallId": id, "toolName": "rm", "output": {"type": "text", "value": ""}});
        // An approval response, then the result, in tool messages of their own; a provider-executed
        // call answered in its message; a call left for the SDK to approve; items of other kinds.
        check_ai_sdk_sent(&json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [
                call("c1"), {"type": "tool-approval-request", "approvalId": "a1", "toolCallId": "c1"},
                call("c2"), result("c2"), call("c3"), {"type": "tool-approval-request", "approvalId": "a3", "toolCallId": "c3"},
                {"type": "novel"}
            ]},
            {"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "a1", "approved": true}]},
            {"role": "tool", "content": [result("c1"), {"type": "mystery"}]},
            {"role": "assistant"}
        ]));
        // The fuzz finding as it was sent.
        let finding = json!([{"role": "assistant"}, {"role": "tool", "content": [{"": ""}]}, {"role": "tool", "content": [{"t": ""}]}]);
        assert!(fails(finding).contains("a tool message that answers no call"));
        let after_user = json!([{"role": "user", "content": "x"}, {"role": "tool", "content": [result("c1")]}]);
        assert!(fails(after_user).contains("tool message after a non-assistant"));
        let unanswered = json!([{"role": "assistant", "content": [call("c1")]}, {"role": "user", "content": "x"}]);
        assert!(fails(unanswered).contains("call c1 has no result"));
        let twice = json!([{"role": "assistant", "content": [call("c1")]}, {"role": "tool", "content": [result("c1")]}, {"role": "tool", "content": [result("c1")]}]);
        assert!(fails(twice).contains("answered twice"));
        let stray = json!([{"role": "assistant", "content": [call("c1")]}, {"role": "tool", "content": [result("c1"), {"type": "tool-approval-response", "approvalId": "z"}]}]);
        assert!(fails(stray).contains("approval response z answers no request"));
        let reused = json!([{"role": "assistant", "content": [call("c1"), call("c1")]}]);
        assert!(fails(reused).contains("reused"));
    }
}
