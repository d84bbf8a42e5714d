//! A session from a log kept elsewhere: which options it loads with, and the load itself.

use serde_json::Value;

use super::log::{load_full, load_tail, parse_header};
use crate::error::{CfError, Result};
use crate::policy::parse_options;
use crate::session::{History, SessionOptions};

/// The options a load of the log with header entry `header` uses: `given` when there are any,
/// else those the header recorded.
pub fn log_options(label: &str, header: &[u8], given: Option<Value>) -> Result<SessionOptions> {
    if let Some(o) = given {
        return parse_options("options", o);
    }
    match parse_header(label, header)?.session {
        Some(v) => parse_options("the header's session options", v),
        None => Err(CfError::invalid_argument(format!(
            "{label}: no session options: pass them to load(), or to open() as `session`"
        ))),
    }
}

/// A session from a log's entries (numbered, after the header). With `compaction` (the number of
/// the latest compaction entry) the entries are those `plan` named and the load is tail-first:
/// `None` when they do not match the entry (load every entry instead). Without, they are every
/// entry after the header, in order.
pub fn load_session(
    label: &str,
    opts: SessionOptions,
    entries: Vec<(u64, Vec<u8>)>,
    compaction: Option<u64>,
) -> Result<Option<History>> {
    let counter = opts.counter()?;
    let loaded = match compaction {
        Some(at) => match load_tail(label, entries, at, Some(&counter))? {
            Some(l) => l,
            None => return Ok(None),
        },
        None => {
            let texts: Vec<&[u8]> = entries.iter().map(|(_, e)| e.as_slice()).collect();
            load_full(label, &texts, Some(&counter))?
        }
    };
    loaded.into_history(opts, &|| false).map(Some)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::Code;
    use crate::store::log::{header_entry, LogWriter};
    use crate::store::tests::{opts, request, summary, user};

    #[test]
    fn options_given_win_over_the_header_and_one_of_them_is_needed() {
        let with = |tokenizer: &str| json!({"model": {"limit": {"context": 1000}}, "tokenizer": tokenizer});
        let recorded = header_entry("s", 1, Some(with("cl100k")));
        let given = log_options("log", &recorded, Some(with("o200k"))).unwrap();
        assert_eq!(given.tokenizer.as_deref(), Some("o200k"));
        let from_header = log_options("log", &recorded, None).unwrap();
        assert_eq!(from_header.tokenizer.as_deref(), Some("cl100k"));
        let e = log_options("pg s", &header_entry("s", 1, None), None).unwrap_err();
        assert_eq!(e.code, Code::InvalidArgument);
        assert!(e.message.starts_with("pg s: no session options"), "{}", e.message);
        let bad = log_options("log", &recorded, Some(json!({"tokenizer": "o200k"}))).unwrap_err();
        assert_eq!(bad.code, Code::InvalidArgument);
    }

    #[test]
    fn a_tail_first_load_equals_a_full_load_and_says_when_the_entries_do_not_match() {
        let header = header_entry("s", 1, None);
        let mut w = LogWriter::from_entries("log", &[&header]).unwrap();
        let msgs =
            [user("a", "x"), user("b", "y"), request("r", Some("b"), None), summary("s1", "r", true), user("c", "z")];
        let mut entries = vec![header];
        for m in &msgs {
            entries.extend(w.append(m).unwrap());
        }
        let numbered = |from: u64| -> Vec<(u64, Vec<u8>)> {
            (from..=entries.len() as u64).map(|n| (n, entries[n as usize - 1].clone())).collect()
        };
        let full = load_session("log", opts(), numbered(2), None).unwrap().unwrap();
        let tail = load_session("log", opts(), numbered(3), Some(6)).unwrap().unwrap();
        let ids = |h: &History| h.visible().iter().map(|e| e.msg.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&tail), ids(&full));
        assert_eq!(ids(&full), ["r", "s1", "b", "c"]);
        assert!(load_session("log", opts(), numbered(4), Some(6)).unwrap().is_none());
    }
}
