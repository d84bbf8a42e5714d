//! The overflow replay: the user message the provider rejected as too long, sent again after the
//! summary with new ids, its images and PDFs replaced by their markers (opencode's replay).

use serde_json::Value;

use crate::message::{is_media, markers, Message, Part, Role, TextPart, Time};

/// `original` again as message `id`, created at `now` (epoch ms): its fields (agent, model,
/// system, tools...) carried over, its parts with new ids, media as `[Attached <mime>: <name>]`
/// text, compaction parts left out.
pub fn replay(original: &Message, id: String, now: f64) -> Message {
    let parts = original
        .parts
        .iter()
        .enumerate()
        .filter(|(_, p)| !matches!(p, Part::Compaction(_)))
        .map(|(i, p)| {
            let part_id = format!("{id}_p{i}");
            match p {
                Part::File(f) if is_media(&f.mime) => Part::Text(TextPart {
                    id: part_id,
                    text: markers::attached(&f.mime, f.display_name()).into(),
                    synthetic: None,
                    extra: Default::default(),
                }),
                other => with_id(other.clone(), part_id),
            }
        })
        .collect();
    let mut m = Message::new(id, Role::User, parts, Some(Time { created: now, completed: None }));
    m.model = original.model.clone();
    m.extra = original.extra.clone();
    m
}

fn with_id(mut part: Part, id: String) -> Part {
    match &mut part {
        Part::Text(p) => p.id = id,
        Part::Reasoning(p) => p.id = id,
        Part::Tool(p) => p.id = id,
        Part::File(p) => p.id = id,
        Part::Compaction(p) => p.id = id,
        Part::Other(Value::Object(o)) => {
            o.insert("id".into(), Value::String(id));
        }
        Part::Other(_) => {}
    }
    part
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::message::parse_message;

    #[test]
    fn carries_fields_renews_ids_and_strips_media() {
        let original = parse_message(json!({
            "id": "u7", "role": "user", "agent": "build", "model": {"providerID": "p", "modelID": "m"},
            "time": {"created": 1}, "parentID": "x", "tokens": {"input": 5, "output": 1},
            "parts": [
                {"type": "text", "id": "t", "text": "look at this"},
                {"type": "file", "id": "f", "mime": "image/png", "url": "data:image/png;base64,AA", "filename": "shot.png"},
                {"type": "file", "id": "g", "mime": "text/plain", "url": "data:text/plain,hi"},
                {"type": "compaction", "id": "c", "auto": true},
                {"type": "step-start", "id": "s"}
            ]
        }))
        .unwrap();
        let r = serde_json::to_value(replay(&original, "msg_1".into(), 42.0)).unwrap();
        assert_eq!(
            r,
            json!({
                "id": "msg_1", "role": "user", "agent": "build", "model": {"providerID": "p", "modelID": "m"},
                "time": {"created": 42.0},
                "parts": [
                    {"type": "text", "id": "msg_1_p0", "text": "look at this"},
                    {"type": "text", "id": "msg_1_p1", "text": "[Attached image/png: shot.png]"},
                    {"type": "file", "id": "msg_1_p2", "mime": "text/plain", "url": "data:text/plain,hi"},
                    {"type": "step-start", "id": "msg_1_p4"}
                ]
            })
        );
    }
}
