//! The token counts a message line carries, so a load need not count the message again.
//!
//! The writer counts each message it writes once, with the counter of the session options the
//! store was opened with (or those its header records), and writes the part counts after the
//! message, last on the line:
//!
//! ```text
//! {"type":"message","message":{…},"counts":{"tokenizer":"o200k","version":1,"imageTokens":1000,"parts":[[total,output,cleared,call],…],"crc":…}}
//! ```
//!
//! A load uses them only when its counter is the one they were made with (tokenizer, its version,
//! image cost, output cut) and the CRC-32 of the message's bytes, that counter and the counts is
//! the one recorded; anything else (another tokenizer, a line without counts, a line whose bytes or
//! counts changed) is counted from the message. A count that does not fit its message (a corrupted
//! file, a hand edit) would need a change that keeps the checksum: CRC-32 detects every change of
//! up to 32 consecutive bits and misses a random one with probability 2^-32. Readers that do not
//! know the field ignore it.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::message::Message;
use crate::tokens::{message_total, Counter, MessageCount, PartCount};

/// The counter a writer records counts with: that of the session options it was given, or that
/// the header records (none without options, or with options that do not read as such).
pub fn writer_counter(session: Option<&serde_json::Value>) -> Option<Counter> {
    let opts: crate::session::SessionOptions = crate::policy::parse_options("session", session?.clone()).ok()?;
    let counter = opts.counter().ok()?;
    if let crate::tokens::Tokenizer::Exact(enc) = counter.tokenizer {
        crate::tokens::warm_up(enc);
    }
    Some(counter)
}

/// What separates the message from its counts on a line.
const KEY: &[u8] = b",\"counts\":";

/// The prefixes of the lines the writer adds counts to (`message`, `update`, `update` marked).
const PREFIXES: [&[u8]; 3] = [
    b"{\"type\":\"message\",\"message\":",
    b"{\"type\":\"update\",\"message\":",
    b"{\"type\":\"update\",\"view\":true,\"message\":",
];

#[derive(Serialize, Deserialize)]
struct Stored {
    tokenizer: String,
    version: u32,
    #[serde(rename = "imageTokens")]
    image_tokens: u64,
    #[serde(rename = "outputMaxChars", default, skip_serializing_if = "Option::is_none")]
    output_max_chars: Option<u64>,
    /// Per part: total, output, cleared, call (`PartCount`).
    parts: Vec<[u64; 4]>,
    crc: u32,
}

fn checksum(message: &[u8], counter: &Counter, parts: &[[u64; 4]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(message);
    h.update(counter.tokenizer.name().as_bytes());
    h.update(&counter.tokenizer.version().to_le_bytes());
    h.update(&counter.image_tokens.to_le_bytes());
    h.update(&counter.output_max_chars.map_or(u64::MAX, |n| n as u64).to_le_bytes());
    for p in parts {
        for n in p {
            h.update(&n.to_le_bytes());
        }
    }
    h.finalize()
}

/// `,"counts":{…}`, for the message whose serialized bytes are `message`.
pub fn encode(message: &[u8], counter: &Counter, counts: &[PartCount]) -> Vec<u8> {
    let parts: Vec<[u64; 4]> = counts.iter().map(|c| [c.total, c.output, c.cleared, c.call]).collect();
    let stored = Stored {
        tokenizer: counter.tokenizer.name().to_string(),
        version: counter.tokenizer.version(),
        image_tokens: counter.image_tokens,
        output_max_chars: counter.output_max_chars.map(|n| n as u64),
        crc: checksum(message, counter, &parts),
        parts,
    };
    let mut out = KEY.to_vec();
    serde_json::to_writer(&mut out, &stored).expect("counts serialize");
    out
}

/// The counts a line records, not checked yet: the message's bytes and the counts' text.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recorded<'a> {
    message: &'a [u8],
    counts: &'a str,
}

impl<'a> Recorded<'a> {
    /// Where `counts` (a value parsed from `line`) and the message before it sit, when the line
    /// is laid out as the writer lays it out; `None` otherwise (its counts are then not used).
    pub fn find(line: &'a [u8], counts: &'a RawValue) -> Option<Recorded<'a>> {
        let text = counts.get();
        let at = (text.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
        let start = PREFIXES.iter().find(|p| line.starts_with(p))?.len();
        let end = at.checked_sub(KEY.len())?;
        let fits = start <= end && &line[end..at] == KEY && line.get(at + text.len()..) == Some(b"}".as_slice());
        fits.then(|| Recorded { message: &line[start..end], counts: text })
    }

    /// The counts of `msg` (the message parsed from this line) by `counter`, when they were made
    /// by the same counter for exactly these bytes.
    pub fn counts(&self, counter: &Counter, msg: &Message) -> Option<MessageCount> {
        let s: Stored = serde_json::from_str(self.counts).ok()?;
        let same = s.tokenizer == counter.tokenizer.name()
            && s.version == counter.tokenizer.version()
            && s.image_tokens == counter.image_tokens
            && s.output_max_chars == counter.output_max_chars.map(|n| n as u64)
            && s.parts.len() == msg.parts.len();
        if !same || checksum(self.message, counter, &s.parts) != s.crc {
            return None;
        }
        // Sums that cannot overflow, parts whose shares fit their total.
        let mut sum = 0u64;
        for &[total, output, _, call] in &s.parts {
            sum = sum.checked_add(total)?;
            if output > total || call > total {
                return None;
            }
        }
        sum.checked_add(crate::tokens::MESSAGE_OVERHEAD)?;
        let parts: Vec<PartCount> =
            s.parts.iter().map(|&[total, output, cleared, call]| PartCount { total, output, cleared, call }).collect();
        let total = message_total(&parts);
        Some((parts, total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::parse_message;
    use crate::store::format::{encode_message, encode_update, parse_message_line};
    use crate::tokens::{Encoding, Tokenizer};
    use serde_json::json;

    fn message() -> Message {
        parse_message(json!({"id": "m", "role": "assistant", "parts": [
            {"type": "text", "id": "x", "text": "Reading the build log again."},
            {"type": "tool", "id": "t", "callID": "c", "tool": "bash", "state": {"status": "completed",
             "input": {"cmd": "cargo build"}, "output": "   Compiling contextfold v0.1.0\n"}}
        ]}))
        .unwrap()
    }

    fn counter(tokenizer: Tokenizer) -> Counter {
        Counter { tokenizer, image_tokens: 1200, output_max_chars: None }
    }

    /// What a load would take from `line` (no `\n`) with `c`.
    fn read(line: &[u8], c: &Counter) -> Option<MessageCount> {
        let (m, _, recorded) = parse_message_line(line).unwrap();
        recorded?.counts(c, &m)
    }

    fn strip(mut line: Vec<u8>) -> Vec<u8> {
        line.pop();
        line
    }

    #[test]
    fn counts_are_read_back_by_the_counter_that_made_them_only() {
        let m = message();
        let o200k = counter(Tokenizer::Exact(Encoding::O200k));
        for line in [
            encode_message(&m, Some(&o200k)),
            encode_update(&m, true, Some(&o200k)),
            encode_update(&m, false, Some(&o200k)),
        ] {
            let line = strip(line);
            assert!(line.ends_with(b"}}") && line.windows(KEY.len()).any(|w| w == KEY));
            assert_eq!(read(&line, &o200k), Some(o200k.message(&m)));
            for other in [
                counter(Tokenizer::Estimate),
                counter(Tokenizer::Exact(Encoding::Cl100k)),
                Counter { image_tokens: 1, ..o200k },
                Counter { output_max_chars: Some(10), ..o200k },
            ] {
                assert_eq!(read(&line, &other), None);
            }
        }
        assert_eq!(read(&strip(encode_message(&m, None)), &o200k), None);
    }

    #[test]
    fn counts_that_do_not_fit_their_bytes_are_not_used() {
        let m = message();
        let c = counter(Tokenizer::Estimate);
        let line = String::from_utf8(strip(encode_message(&m, Some(&c)))).unwrap();
        let total = c.message(&m).0[0].total;
        // A count changed, the message changed, or the line laid out otherwise.
        let changed_count = line.replacen(&format!("\"parts\":[[{total},"), &format!("\"parts\":[[{},", total + 1), 1);
        let changed_text = line.replacen("build log", "build lag", 1);
        let other_layout = line.replacen("{\"type\":\"message\",", "{\"type\":\"message\",\"x\":1,", 1);
        for bad in [changed_count, changed_text, other_layout] {
            assert_ne!(bad, line);
            assert_eq!(read(bad.as_bytes(), &c), None, "{bad}");
        }
        // Counts made for these bytes are used as they are, whatever they say (the checksum is
        // what makes them trusted): here a forged count with its checksum made again.
        let forged = PartCount { total: 999, ..PartCount::default() };
        let body = serde_json::to_vec(&m).unwrap();
        let mut line = b"{\"type\":\"message\",\"message\":".to_vec();
        line.extend_from_slice(&body);
        line.extend(encode(&body, &c, &[forged, forged]));
        line.push(b'}');
        assert_eq!(read(&line, &c), Some((vec![forged, forged], 2 * 999 + crate::tokens::MESSAGE_OVERHEAD)));
    }

    #[test]
    fn readers_that_do_not_know_counts_read_the_line_as_before() {
        // The shape of a message line as the previous version read it.
        #[derive(Deserialize)]
        struct Before {
            #[serde(default)]
            view: bool,
            message: Message,
        }
        let m = message();
        let line = strip(encode_update(&m, true, Some(&counter(Tokenizer::Estimate))));
        let before: Before = serde_json::from_slice(&line).unwrap();
        assert_eq!((before.message, before.view), (m, true));
    }
}
