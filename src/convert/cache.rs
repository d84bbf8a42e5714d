//! Prompt-cache breakpoints: where a provider that caches up to marked points (Anthropic's
//! `cache_control`) should be told to cache. The points are stable from one request to the next:
//! the system prompt (with the tools, which the provider caches with it), the newest summary, the
//! newest prune mark, and the end. At most [`MAX_BREAKPOINTS`] in all, counting those the app set
//! itself, which are always kept; ours are dropped from the least valuable first. Placing them
//! reads each message's [`Shape`] (how many model messages it gives, how many breakpoints the app
//! set on it), which a session works out once per message: a call converts no message.

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::model_messages::{with_ends, ConvertOptions};
use crate::message::ai_sdk_layout::{is_sent, LAYOUT, PART, RESULT};
use crate::message::{Message, Part, Role, ToolState};

/// The provider's limit of breakpoints in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// A point worth caching up to, most valuable first: the end is what the next request reads
/// back, the system prompt never changes, a summary changes at a compaction, a prune mark at the
/// next prune.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Point {
    End,
    System,
    Summary,
    Prune,
}

impl Point {
    pub fn as_str(self) -> &'static str {
        match self {
            Point::End => "end",
            Point::System => "system",
            Point::Summary => "summary",
            Point::Prune => "prune",
        }
    }
}

/// The `cache_control` to place: `{ type: 'ephemeral', ttl? }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheControl {
    /// `'5m'` (the provider's default) or `'1h'`.
    pub ttl: Option<String>,
}

impl CacheControl {
    pub fn to_value(&self) -> Value {
        match &self.ttl {
            Some(ttl) => json!({"type": "ephemeral", "ttl": ttl}),
            None => json!({"type": "ephemeral"}),
        }
    }
}

/// The shown message each point falls on (indices into `shown`), most valuable first.
pub fn candidates(shown: &[&Message]) -> [(Point, Option<usize>); 4] {
    let system = shown.iter().take_while(|m| m.role == Role::System).count().checked_sub(1);
    let summary = shown.iter().rposition(|m| m.is_summary());
    let prune = shown.iter().rposition(|m| m.parts.iter().any(|p| matches!(p, Part::Tool(t) if t.is_pruned())));
    let end = shown.len().checked_sub(1);
    [(Point::End, end), (Point::System, system), (Point::Summary, summary), (Point::Prune, prune)]
}

/// The breakpoints to add: `candidates` (positions, most valuable first) that no app breakpoint
/// already covers, as many as fit beside the `app_count` breakpoints the app set (at `app`).
pub fn choose<T: Copy + PartialEq>(
    candidates: impl IntoIterator<Item = (Point, Option<T>)>,
    app: &[T],
    app_count: usize,
) -> Vec<(Point, T)> {
    let mut room = MAX_BREAKPOINTS.saturating_sub(app_count);
    let mut out: Vec<(Point, T)> = Vec::new();
    for (point, at) in candidates {
        let Some(at) = at else { continue };
        if room == 0 {
            break;
        }
        if app.contains(&at) || out.iter().any(|&(_, o)| o == at) {
            continue;
        }
        out.push((point, at));
        room -= 1;
    }
    out
}

/// What one message gives a prompt: its AI SDK ModelMessages (as many in any sequence: a message
/// converts on its own) and the cache breakpoints the app set on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub model_messages: usize,
    pub app_breakpoints: usize,
}

impl Shape {
    pub fn of(m: &Message) -> Shape {
        let (_, ends) = with_ends([m], &ConvertOptions::default());
        Shape { model_messages: ends[0], app_breakpoints: in_message(m).len() }
    }
}

/// Breakpoints for a prompt of `head` (AI SDK messages sent before the shown ones: the app's system
/// prompt) followed by `shown` as AI SDK ModelMessages (`shapes[i]` is `shown[i]`'s), as indices into
/// that prompt. The app's own (in `head`, or in the `providerOptions` the messages came with) are
/// counted, not repeated.
pub fn in_prompt(head: &[Value], shown: &[&Message], shapes: &[Shape]) -> Vec<(Point, usize)> {
    let ends: Vec<usize> = shapes
        .iter()
        .scan(0, |total, s| {
            *total += s.model_messages;
            Some(*total)
        })
        .collect();
    // The last model message of shown message `i` (of the messages before it when it gives none).
    let at = |i: usize| ends[i].checked_sub(1).map(|j| head.len() + j);
    let mut app = Vec::new();
    let mut count = 0;
    let found = head.iter().enumerate().map(|(k, m)| (Some(k), in_model_message(m).len()));
    for (k, n) in found.chain(shapes.iter().enumerate().map(|(i, s)| (at(i), s.app_breakpoints))) {
        if n > 0 {
            app.extend(k);
            count += n;
        }
    }
    let candidates = candidates(shown).map(|(point, i)| match point {
        Point::System if !head.is_empty() => (point, Some(head.len() - 1)),
        _ => (point, i.and_then(at)),
    });
    choose(candidates, &app, count)
}

/// The cache control an AI SDK `providerOptions` object holds for Anthropic (`cacheControl`, or
/// `cache_control` as the provider also reads it).
pub fn anthropic_cache_control(provider_options: Option<&Value>) -> Option<&Value> {
    let a = provider_options?.get("anthropic")?;
    a.get("cacheControl").or_else(|| a.get("cache_control")).filter(|v| !v.is_null())
}

/// The cache controls an AI SDK message (a system message of a prompt) sets: its own and its parts'.
pub fn in_model_message(m: &Value) -> Vec<&Value> {
    let own = anthropic_cache_control(m.get("providerOptions"));
    let parts = m.get("content").and_then(Value::as_array).into_iter().flatten();
    own.into_iter().chain(parts.filter_map(|p| anthropic_cache_control(p.get("providerOptions")))).collect()
}

/// The cache controls the app set on a message taken from AI SDK ModelMessages: on the messages
/// it came from (those sent) and on their parts (kept with the message as they came).
pub fn in_message(m: &Message) -> Vec<&Value> {
    fn of(residual: Option<&Value>) -> Option<&Value> {
        anthropic_cache_control(residual?.get("providerOptions"))
    }
    fn extra<'v>(e: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
        of(e.get(key))
    }
    let layout = m.extra.get(LAYOUT).and_then(Value::as_array).into_iter().flatten();
    let messages = layout.filter(|entry| is_sent(entry)).filter_map(|entry| of(entry.get("message")));
    let parts = m.parts.iter().flat_map(|p| {
        let (part, result) = match p {
            Part::Text(t) => (extra(&t.extra, PART), None),
            Part::Reasoning(r) => (extra(&r.extra, PART), None),
            Part::File(f) => (extra(&f.extra, PART), None),
            Part::Tool(t) => {
                let result = match &t.state {
                    ToolState::Completed { extra: e, .. } | ToolState::Error { extra: e, .. } => extra(e, RESULT),
                    ToolState::Pending { .. } | ToolState::Running { .. } => None,
                };
                (extra(&t.extra, PART), result)
            }
            Part::Other(v) => (anthropic_cache_control(v.get("providerOptions")), None),
            Part::Compaction(_) => (None, None),
        };
        part.into_iter().chain(result)
    });
    messages.chain(parts).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_the_most_valuable_within_the_limit_beside_the_apps() {
        let all = [(Point::End, Some(9)), (Point::System, Some(0)), (Point::Summary, Some(2)), (Point::Prune, Some(5))];
        assert_eq!(
            choose(all, &[], 0),
            vec![(Point::End, 9), (Point::System, 0), (Point::Summary, 2), (Point::Prune, 5)]
        );
        // Two set by the app: the prune mark and the summary give way.
        assert_eq!(choose(all, &[7], 2), vec![(Point::End, 9), (Point::System, 0)]);
        // An app breakpoint where ours would go covers it.
        assert_eq!(choose(all, &[0], 1), vec![(Point::End, 9), (Point::Summary, 2), (Point::Prune, 5)]);
        assert!(choose(all, &[1, 3, 4, 6], 4).is_empty());
        // Two points on one message make one breakpoint.
        let same = [(Point::End, Some(3)), (Point::System, None), (Point::Summary, Some(3)), (Point::Prune, Some(1))];
        assert_eq!(choose(same, &[], 0), vec![(Point::End, 3), (Point::Prune, 1)]);
    }

    #[test]
    fn places_them_in_a_prompt_of_the_apps_system_messages_and_the_sessions() {
        let values = [
            json!({"role": "user", "content": "fix it"}),
            json!({"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "read", "input": {}}]}),
            json!({"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "read", "output": {"type": "text", "value": "x"}}]}),
            json!({"role": "user", "content": "next", "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}),
            json!({"role": "assistant", "content": "done"}),
        ];
        let msgs = crate::formats::continue_model_messages(None, &values, 0).messages;
        let shown: Vec<&Message> = msgs.iter().collect();
        let shapes: Vec<Shape> = msgs.iter().map(Shape::of).collect();
        let head = [json!({"role": "system", "content": "be brief"})];
        // The app's one (on "next", prompt index 4) counts: the end (5) and the system prompt (0).
        assert_eq!(in_prompt(&head, &shown, &shapes), vec![(Point::End, 5), (Point::System, 0)]);
        let marked = [
            json!({"role": "system", "content": "be brief", "providerOptions": {"anthropic": {"cache_control": {"type": "ephemeral"}}}}),
        ];
        assert_eq!(in_prompt(&marked, &shown, &shapes), vec![(Point::End, 5)]);
        // No system prompt: the end only, on the tool message that follows the call.
        assert_eq!(in_prompt(&[], &shown[..2], &shapes[..2]), vec![(Point::End, 2)]);
    }

    #[test]
    fn shapes_add_up_to_the_conversion_of_the_whole() {
        // AI SDK messages (kept with their layout), a reused call id, a call never answered, an
        // aborted answer with nothing to send, a compaction request, a summary, a pruned output.
        let values = [
            json!({"role": "system", "content": "rules"}),
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "two calls"},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "read", "input": {}},
                {"type": "tool-call", "toolCallId": "c2", "toolName": "read", "input": {},
                 "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}
            ]}),
            json!({"role": "tool", "content": [
                {"type": "tool-result", "toolCallId": "c1", "toolName": "read", "output": {"type": "text", "value": "a"}}
            ]}),
            json!({"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "read", "input": {}}]}),
            json!({"role": "tool", "content": [
                {"type": "tool-result", "toolCallId": "c1", "toolName": "read", "output": {"type": "text", "value": "b"}}
            ]}),
        ];
        let mut msgs = crate::formats::continue_model_messages(None, &values, 0).messages;
        let more = [
            json!({"id": "a1", "role": "assistant", "error": {"name": "MessageAbortedError"}, "parts": [{"type": "reasoning", "id": "a1-r", "text": "hm"}]}),
            json!({"id": "r1", "role": "user", "parts": [{"type": "compaction", "id": "r1-c", "auto": true}]}),
            json!({"id": "s1", "role": "assistant", "summary": true, "parts": [{"type": "text", "id": "s1-t", "text": "the summary"}]}),
            json!({"id": "t1", "role": "assistant", "parts": [
                {"type": "text", "id": "t1-a", "text": "step"},
                {"type": "tool", "id": "p1", "callID": "c9", "tool": "bash",
                 "state": {"status": "completed", "input": {}, "output": "out", "time": {"start": 1, "end": 2, "compacted": 3}}},
                {"type": "tool", "id": "p2", "callID": "c9", "tool": "bash", "state": {"status": "running", "input": {}}},
                {"type": "text", "id": "t1-b", "text": "after"}
            ]}),
        ];
        msgs.extend(more.iter().map(|v| crate::message::parse_message(v.clone()).unwrap()));
        let (_, ends) = with_ends(msgs.iter(), &ConvertOptions::default());
        let summed: Vec<usize> = msgs
            .iter()
            .map(Shape::of)
            .scan(0, |t, s| {
                *t += s.model_messages;
                Some(*t)
            })
            .collect();
        assert_eq!(summed, ends);
        assert_eq!(msgs.iter().map(|m| Shape::of(m).app_breakpoints).sum::<usize>(), 1);
    }
}
