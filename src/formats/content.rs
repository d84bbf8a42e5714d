//! Small readers shared by the importers: text out of content blocks, images as data URLs, tool
//! arguments, timestamps.

use serde_json::{Map, Value};

/// Text of a content value: a string, or the text blocks of a list (`text`, `input_text`,
/// `output_text`, ...) joined by newlines.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let texts: Vec<&str> = items.iter().filter_map(block_text).collect();
            texts.join("\n")
        }
        Value::Object(_) => block_text(v).unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

/// The `type`s of text-like blocks (a block without `type` is one too).
pub const TEXT_BLOCKS: [&str; 5] = ["text", "input_text", "output_text", "summary_text", "reasoning_text"];

/// The text of one text-like block.
pub fn block_text(b: &Value) -> Option<&str> {
    match b {
        Value::String(s) => Some(s),
        Value::Object(o) => {
            let ty = o.get("type").and_then(Value::as_str).unwrap_or("text");
            if TEXT_BLOCKS.contains(&ty) {
                o.get("text").and_then(Value::as_str)
            } else {
                None
            }
        }
        _ => None,
    }
}

pub fn data_url(mime: &str, data: &str) -> String {
    format!("data:{mime};base64,{data}")
}

/// The media type of a `data:` URL.
pub fn data_url_mime(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("data:")?;
    let end = rest.find([';', ','])?;
    Some(&rest[..end]).filter(|m| !m.is_empty())
}

/// A best guess at an image URL's media type (data URL, then extension).
pub fn image_mime(url: &str) -> String {
    if let Some(m) = data_url_mime(url) {
        return m.to_string();
    }
    let path = url.split(['?', '#']).next().unwrap_or(url).to_ascii_lowercase();
    let ext = path.rsplit('.').next().unwrap_or("");
    match ext {
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        _ => "image/png",
    }
    .to_string()
}

/// The placeholder standing where a transcript kept an image's type but not its data.
pub fn stripped_image(mime: &str) -> String {
    format!("[Image ({mime}) not kept in the transcript]")
}

/// Tool arguments as a JSON value: JSON strings are parsed, other strings kept as they are.
pub fn parse_args(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                Value::Object(Map::new())
            } else {
                serde_json::from_str(t).unwrap_or_else(|_| Value::String(s.clone()))
            }
        }
        Some(v) => v.clone(),
    }
}

/// A tool output that is not a string, as text.
pub fn output_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(_) => {
            let t = text_of(v);
            if t.is_empty() {
                v.to_string()
            } else {
                t
            }
        }
        other => other.to_string(),
    }
}

pub fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Epoch milliseconds of a timestamp: an ISO-8601 string, or a number in seconds or milliseconds.
pub fn time_of(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::String(s) => iso_ms(s),
        Value::Number(n) => {
            let x = n.as_f64()?;
            if !x.is_finite() || x <= 0.0 {
                None
            } else if x < 1e11 {
                Some((x * 1000.0).round())
            } else {
                Some(x.round())
            }
        }
        _ => None,
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]` (a space also separates date and time; no zone
/// means UTC) into epoch milliseconds.
pub fn iso_ms(s: &str) -> Option<f64> {
    let b = s.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac = 0.0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let digits = std::str::from_utf8(&b[start..i]).ok()?;
        if !digits.is_empty() {
            frac = format!("0.{digits}").parse::<f64>().ok()?;
        }
    }
    let offset_min = match b.get(i) {
        None | Some(b'Z') | Some(b'z') => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let oh = num(i + 1..i + 3)?;
            let om = match b.get(i + 3) {
                Some(b':') => num(i + 4..i + 6)?,
                Some(_) => num(i + 3..i + 5)?,
                None => 0,
            };
            let m = oh * 60 + om;
            if sign == b'+' {
                m
            } else {
                -m
            }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    let secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(((secs as f64 + frac) * 1000.0).round())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_timestamps() {
        assert_eq!(iso_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(iso_ms("2026-02-02T23:59:49.965Z"), Some(1_770_076_789_965.0));
        assert_eq!(iso_ms("2025-01-27T23:16:54.105108"), Some(1_738_019_814_105.0));
        assert_eq!(iso_ms("2026-02-03T01:59:49.965+02:00"), iso_ms("2026-02-02T23:59:49.965Z"));
        assert_eq!(iso_ms("yesterday"), None);
        assert_eq!(time_of(Some(&json!(1775890959.089275))), Some(1_775_890_959_089.0));
        assert_eq!(time_of(Some(&json!(1782352242556_u64))), Some(1_782_352_242_556.0));
    }

    #[test]
    fn reads_text_and_arguments() {
        assert_eq!(text_of(&json!([{"type": "input_text", "text": "a"}, {"type": "image"}, "b"])), "a\nb");
        assert_eq!(parse_args(Some(&json!("{\"x\":1}"))), json!({"x": 1}));
        assert_eq!(parse_args(Some(&json!("not json"))), json!("not json"));
        assert_eq!(parse_args(None), json!({}));
        assert_eq!(image_mime("data:image/jpeg;base64,AAA"), "image/jpeg");
        assert_eq!(image_mime("https://x/y.webp?z=1"), "image/webp");
    }
}
