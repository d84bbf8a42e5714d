//! Fuzz target bodies, shared by the cargo-fuzz targets in `fuzz/` and by the replay of
//! `fuzz/regressions/` that runs with the unit tests. Each takes arbitrary bytes and panics only
//! when an invariant breaks.

use serde_json::json;

use crate::compaction::{apply, prepare, PrepareOptions, SummaryInput};
use crate::formats::{decode, import_transcript, Format};
use crate::invariants::{check_all, reference_view};
use crate::message::{parse_message, Message};
use crate::policy::{CompactionConfig, ModelInfo, ModelLimit};
use crate::session::{History, SessionOptions};
use crate::store::{OpenOptions, SessionStore};
use crate::summary_input::{escape, serialize_message, MARKERS, TAGS};

/// Reads the fuzzer's bytes as small numbers; zeros once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn u8(&mut self) -> u8 {
        self.byte().unwrap_or(0)
    }

    fn u16(&mut self) -> u16 {
        u16::from(self.u8()) << 8 | u16::from(self.u8())
    }
}

/// The stream-of-JSON decoder on any text.
pub fn stream(data: &[u8]) {
    let mut warnings = Vec::new();
    decode(&String::from_utf8_lossy(data), &mut warnings);
}

/// Every importer (the first byte, modulo the number of formats plus one, picks one: 0 detection,
/// `k` the `k`-th of `Format::ALL`, so a seed for detection keeps its meaning as formats are
/// added): what imports must make a valid session whose model messages keep the tool-pair rule in
/// every format, whole and as viewed, and each message must read back from its JSON as it is (what
/// JS and a session file get).
pub fn import(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else { return };
    let format = match usize::from(pick) % (Format::ALL.len() + 1) {
        0 => None,
        k => Some(Format::ALL[k - 1]),
    };
    let Ok(imported) = import_transcript(&String::from_utf8_lossy(rest), format) else { return };
    for m in &imported.messages {
        let back = parse_message(serde_json::to_value(m).expect("a message serializes"));
        assert_eq!(back.as_ref(), Ok(m), "message {:?} reads back from its JSON", m.id);
    }
    let all: Vec<&Message> = imported.messages.iter().collect();
    check_all(&all, "import");
    let h = History::from_messages(imported.messages, SessionOptions::default(), &|| false)
        .expect("imported messages make a session");
    let visible: Vec<&Message> = h.visible().into_iter().map(|e| &e.msg).collect();
    check_all(&visible, "import, viewed");
}

/// Escaping leaves nothing that reads as the transcript's structure, and a message serializes to
/// exactly one marker line of its own.
pub fn escaping(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let escaped = escape(&text);
    for line in escaped.split('\n') {
        let trimmed = line.trim_start();
        assert!(!MARKERS.iter().any(|m| trimmed.starts_with(m)), "a marker survived: {line:?}");
    }
    let lower = escaped.to_ascii_lowercase();
    for tag in TAGS {
        for open in ["<", "</"] {
            assert!(!reserved_at(&lower, &format!("{open}{tag}")), "{open}{tag} survived");
        }
    }
    assert_eq!(escape(&escaped), escaped, "escaping is idempotent");
    let m = parse_message(json!({"id": "u", "role": "user", "parts": [{"type": "text", "id": "t", "text": text}]}))
        .expect("a text message is valid");
    if let Some(block) = serialize_message(&m) {
        let structure = block.split('\n').filter(|l| MARKERS.iter().any(|m| l.trim_start().starts_with(m))).count();
        assert_eq!(structure, 1, "one [User]: line and nothing else that reads as structure: {block:?}");
    }
}

/// Whether `needle` (`<tag` or `</tag`) occurs as a whole tag name (not `<summary-x`).
fn reserved_at(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(i, _)| {
        text.as_bytes().get(i + needle.len()).is_none_or(|c| !(c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_'))
    })
}

fn tool_state(u: &mut Bytes) -> serde_json::Value {
    match u.u8() % 5 {
        0 => json!({"status": "pending", "input": {}}),
        1 => json!({"status": "running", "input": {"cmd": "make"}}),
        2 => json!({"status": "error", "input": {"path": "a.rs"}, "error": "ENOENT"}),
        _ => json!({"status": "completed", "input": {"filePath": format!("f{}.rs", u.u8())},
            "output": "out ".repeat(usize::from(u.u8()) * 8)}),
    }
}

fn new_message(u: &mut Bytes, id: &str, user: bool) -> serde_json::Value {
    if user {
        let mut parts =
            vec![json!({"type": "text", "id": format!("{id}t"), "text": "w ".repeat(usize::from(u.u8()) * 4)})];
        if u.u8() % 4 == 0 {
            parts.push(
                json!({"type": "file", "id": format!("{id}f"), "mime": "image/png", "url": "data:image/png;base64,AA"}),
            );
        }
        return json!({"id": id, "role": "user", "parts": parts});
    }
    let mut parts = vec![json!({"type": "text", "id": format!("{id}t"), "text": "a ".repeat(usize::from(u.u8()))})];
    for k in 0..u.u8() % 4 {
        // Reused call ids on purpose: conversion must make them unique.
        parts.push(json!({"type": "tool", "id": format!("{id}p{k}"), "callID": format!("c{}", u.u8() % 3),
            "tool": if k == 3 { "skill" } else { "bash" }, "state": tool_state(u)}));
    }
    let mut m = json!({"id": id, "role": "assistant", "parts": parts});
    let flags = u.u8();
    if flags & 1 != 0 {
        m["finish"] = json!("stop");
    }
    if flags & 2 != 0 {
        m["tokens"] = json!({"input": u.u16(), "output": u.u8()});
    }
    if flags & 4 != 0 && flags & 8 != 0 {
        m["error"] = json!({"name": "APIError", "message": "500"});
    }
    m
}

/// The store loader on any file: opening and loading never panic, and when both loads succeed
/// without skipping anything, the tail-first load shows exactly what the full history shows.
pub fn store_load(data: &[u8]) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "contextfold-fuzz-{}-{}.jsonl",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, data).expect("the temp dir is writable");
    for recover in [false, true] {
        let opts = OpenOptions { read_only: true, create: false, recover, ..OpenOptions::default() };
        let Ok(mut store) = SessionStore::open(&path, opts) else { continue };
        let torn = store.warnings().len();
        let (Ok(context), Ok(all)) = (store.load(None, &|| false), store.load_all()) else { continue };
        // Counts made while parsing (then kept or dropped by updates and prunes) are the counts.
        for e in context.entries() {
            assert_eq!(context.counter().message(&e.msg), (e.parts.clone(), e.tokens), "message {:?}", e.msg.id);
        }
        // A damaged file loads as well as it can: where the full read skipped a line, a tail-first
        // read (which by design does not read the part a compaction hid) may differ from it. A
        // torn last line (what a crash leaves) is not damage.
        if store.warnings().len() > torn {
            continue;
        }
        let Ok(full) = History::from_messages(all, context.options().clone(), &|| false) else { continue };
        let ids = |h: &History| h.visible().iter().map(|e| e.msg.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&context), ids(&full), "the tail-first load shows what the whole file shows");
    }
    let _ = std::fs::remove_file(&path);
}

/// Random sequences of session operations, with the session's invariants checked after each.
pub fn session_ops(data: &[u8]) {
    let mut u = Bytes(data);
    let budget = u64::from(u.u16()) * 2;
    let opts = SessionOptions {
        model: ModelInfo {
            limit: ModelLimit { context: 10_000 + u64::from(u.u16()), input: None, output: Some(4_000) },
            ..Default::default()
        },
        compaction: CompactionConfig {
            preserve_recent_tokens: Some(budget),
            prune_protect: Some(u64::from(u.u16())),
            prune_minimum: Some(u64::from(u.u8()) * 4),
            tool_output_max_chars: Some(300),
            ..Default::default()
        },
        tokenizer: Some("estimate".into()),
        cache: Default::default(),
    };
    let mut h = History::new(opts.clone()).expect("valid options");
    let mut next = 0;
    while let Some(op) = u.byte() {
        match op % 8 {
            0..=4 => {
                next += 1;
                let m = parse_message(new_message(&mut u, &format!("m{next}"), op % 8 < 2)).expect("valid message");
                h.append(m).expect("a new id appends");
            }
            5 if !h.is_empty() => {
                let at = usize::from(u.u8()) % h.len();
                let old = &h.entries()[at].msg;
                if old.compaction().is_none() && !old.is_summary() {
                    let id = old.id.clone();
                    let m = parse_message(new_message(&mut u, &id, old.is_user())).expect("valid message");
                    h.update(m).expect("an existing id updates");
                }
            }
            6 => {
                let before = h.usage().tokens;
                let out = h.prune();
                assert!(h.prune().part_ids.is_empty(), "prune is idempotent");
                assert!(h.usage().tokens <= before + 8 * out.part_ids.len() as u64);
            }
            _ => {
                let order = h.visible_positions();
                let pick = |u: &mut Bytes| {
                    (!order.is_empty()).then(|| h.entries()[order[usize::from(u.u8()) % order.len()]].msg.id.clone())
                };
                let mode = u.u8() % 4;
                let popts = PrepareOptions {
                    up_to: (mode == 1).then(|| pick(&mut u)).flatten(),
                    from: (mode == 2).then(|| pick(&mut u)).flatten(),
                    protect_first_turns: u32::from(u.u8() % 3),
                    ..Default::default()
                };
                if let Ok(Some(plan)) = prepare(&h, &popts) {
                    let text = if u.u8() % 8 == 0 { String::new() } else { "## Goal\nsummary".to_string() };
                    let len = h.len();
                    match apply(&mut h, &(&plan).into(), SummaryInput { text, ..Default::default() }) {
                        Ok(_) => {
                            let visible: Vec<String> = h.visible().iter().map(|e| e.msg.id.clone()).collect();
                            for id in &plan.summarized_ids {
                                let m = h.get(id).expect("summarized messages stay stored");
                                let pair = m.msg.compaction().is_some() || m.msg.is_summary();
                                assert!(pair || !visible.contains(id), "{id} was summarized but is still shown");
                            }
                        }
                        Err(_) => assert_eq!(h.len(), len, "a failed apply changes nothing"),
                    }
                }
            }
        }
        check_session(&h, budget, &opts);
    }
}

fn check_session(h: &History, budget: u64, opts: &SessionOptions) {
    let visible: Vec<&Message> = h.visible().into_iter().map(|e| &e.msg).collect();
    check_all(&visible, "session");
    let all: Vec<&Message> = h.entries().iter().map(|e| &e.msg).collect();
    assert_eq!(h.visible_positions(), reference_view(&all, all.len()), "the view follows the compaction rule");
    let s = h.select();
    if s.tail_start_id.is_some() {
        let tail: u64 = h.visible()[s.head_end..].iter().map(|e| e.tokens).sum();
        assert!(tail <= budget, "the tail fits its budget");
    }
    let rebuilt =
        History::from_messages(all.into_iter().cloned().collect(), opts.clone(), &|| false).expect("rebuilds");
    assert_eq!(rebuilt.visible_positions(), h.visible_positions());
    assert_eq!(rebuilt.breakdown(), h.breakdown(), "counts kept incrementally equal counts from scratch");
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Replays every input kept in `fuzz/regressions/<target>/` (crashes found and fixed, and a
    /// seed corpus), so a fixed crash stays fixed without a fuzzer.
    #[test]
    fn regressions_replay() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
        type Target = fn(&[u8]);
        let targets: [(&str, Target); 5] = [
            ("stream", super::stream),
            ("import", super::import),
            ("escaping", super::escaping),
            ("session_ops", super::session_ops),
            ("store_load", super::store_load),
        ];
        let mut replayed = 0;
        for (name, target) in targets {
            let Ok(dir) = std::fs::read_dir(root.join(name)) else { continue };
            for file in dir.flatten() {
                target(&std::fs::read(file.path()).unwrap());
                replayed += 1;
            }
        }
        assert!(replayed > 0, "fuzz/regressions holds inputs for the targets");
    }
}
