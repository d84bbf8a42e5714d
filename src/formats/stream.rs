//! Input as a stream of JSON values: one per line, several on one line, pretty-printed over many
//! lines, or a single document. A malformed region becomes a warning and decoding resumes at the
//! next line that starts a value.

use serde_json::Value;

use super::Warning;
use crate::error::{CfError, Result};

/// One decoded value and the 1-based line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub line: usize,
    pub value: Value,
}

/// Decodes every JSON value in `text`; malformed regions are skipped with a warning.
pub fn decode(text: &str, warnings: &mut Vec<Warning>) -> Vec<Record> {
    decode_with(text, warnings, &|| false).unwrap_or_default()
}

fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// How often `aborted` is polled, in values.
const POLL: usize = 256;

pub(super) fn decode_with(text: &str, warnings: &mut Vec<Warning>, aborted: &dyn Fn() -> bool) -> Result<Vec<Record>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    let mut line = 1;
    loop {
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            if bytes[pos] == b'\n' {
                line += 1;
            }
            pos += 1;
        }
        if pos >= bytes.len() {
            break;
        }
        if out.len() % POLL == 0 && aborted() {
            return Err(CfError::aborted());
        }
        let mut values = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                let end = pos + values.byte_offset();
                out.push(Record { line, value });
                line += newlines(&bytes[pos..end]);
                pos = end;
            }
            Some(Err(e)) => {
                // Resume at the next line that starts (in column 0) with `{` or `[`.
                let mut next = pos;
                loop {
                    match bytes[next..].iter().position(|&b| b == b'\n') {
                        None => {
                            next = bytes.len();
                            break;
                        }
                        Some(i) => {
                            next += i + 1;
                            if next < bytes.len() && matches!(bytes[next], b'{' | b'[') {
                                break;
                            }
                        }
                    }
                }
                let last = line + newlines(&bytes[pos..next]).saturating_sub(1);
                let what = describe(&e);
                let lines = if last > line { format!("lines {line}-{last}") } else { format!("line {line}") };
                warnings.push(Warning { line, message: format!("malformed JSON ({what}); skipped {lines}") });
                line += newlines(&bytes[pos..next]);
                pos = next;
            }
            None => break,
        }
    }
    Ok(out)
}

/// The error without serde's position, which is relative to where the attempt started.
fn describe(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(records: &[Record]) -> Vec<usize> {
        records.iter().map(|r| r.line).collect()
    }

    #[test]
    fn reads_concatenated_pretty_and_broken_input() {
        let mut w = Vec::new();
        let text = "{\"a\":1}{\"b\":2}\n\n{\n  \"c\": [\n    1\n  ]\n}\n{\"d\": tru\n{\"e\":5}\n[1,2]";
        let r = decode(text, &mut w);
        assert_eq!(
            r.iter().map(|r| r.value.clone()).collect::<Vec<_>>(),
            vec![json!({"a":1}), json!({"b":2}), json!({"c":[1]}), json!({"e":5}), json!([1, 2])]
        );
        assert_eq!(lines(&r), vec![1, 1, 3, 9, 10]);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].line, 8);
        assert!(w[0].message.starts_with("malformed JSON ("), "{}", w[0].message);
        assert!(w[0].message.ends_with("skipped line 8"), "{}", w[0].message);
    }

    #[test]
    fn a_torn_last_line_and_garbage_are_warnings() {
        let mut w = Vec::new();
        let r = decode("\u{feff}{\"a\":1}\nnot json\n  still not\n{\"b\":", &mut w);
        assert_eq!(r.len(), 1);
        assert_eq!(w.len(), 2);
        assert_eq!((w[0].line, w[1].line), (2, 4));
        assert!(w[0].message.ends_with("skipped lines 2-3"), "{}", w[0].message);
    }
}
