//! Identifiers a summary must keep exactly: URLs, ticket ids, commit shas, branch names.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem;

use regex::Regex;

use super::prefilter::{contains_ignore_case, has_run};

static URL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"https?://[^\s<>"'`\])}]+"#).unwrap());
/// JIRA-style keys (`PROJ-123`) and issue references (`#1234`).
static TICKET: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b|(?:^|\s)#\d{2,6}\b").unwrap());
/// Hex strings of commit-sha length with at least one digit and one letter.
static SHA: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b[0-9a-f]{7,40}\b").unwrap());
/// Branch names where a sentence or a git command names one.
static BRANCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\bbranch(?:es)?\s+(?:named\s+|called\s+)?|git (?:checkout|switch) (?:-[bc] )?|git push (?:-u |--set-upstream )?\S+ )[`'\x22]?([A-Za-z0-9][\w./-]*[\w/])").unwrap()
});
/// `git commit` output: `[main 1a2b3c4] message`.
static COMMIT_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^\[([\w./-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\]").unwrap());

fn is_sha(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_lowercase())
}

const NOT_BRANCHES: &[&str] =
    &["to", "the", "a", "and", "is", "was", "from", "of", "for", "in", "on", "with", "that", "this"];

/// Identifiers in text the user wrote or a tool call's input: every kind.
pub fn identifiers_in(text: &str, out: &mut Vec<String>) {
    identifiers_in_scanned(text, out, true)
}

/// [`identifiers_in`] with every pattern run, for the tests that check the scans miss nothing.
#[cfg(test)]
pub(super) fn identifiers_in_unfiltered(text: &str, out: &mut Vec<String>) {
    identifiers_in_scanned(text, out, false)
}

/// `identifiers_in`; with `scan`, each pattern runs only where a scan for what it cannot match
/// without finds it.
fn identifiers_in_scanned(text: &str, out: &mut Vec<String>, scan: bool) {
    let without_urls = if !scan || memmem::find(text.as_bytes(), b"://").is_some() {
        for m in URL.find_iter(text) {
            out.push(m.as_str().trim_end_matches(['.', ',', ';', ':']).to_string());
        }
        URL.replace_all(text, " ")
    } else {
        Cow::Borrowed(text)
    };
    let bytes = without_urls.as_bytes();
    // `-` or `#` before a digit (`\d` is any Unicode digit: a non-ASCII byte may start one).
    let ticket = memchr::memchr2_iter(b'-', b'#', bytes)
        .any(|i| bytes.get(i + 1).is_some_and(|&b| b.is_ascii_digit() || b >= 0x80));
    if !scan || ticket {
        for m in TICKET.find_iter(&without_urls) {
            out.push(m.as_str().trim().to_string());
        }
    }
    if !scan || has_run(bytes, 7, |b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        for m in SHA.find_iter(&without_urls) {
            if is_sha(m.as_str()) {
                out.push(m.as_str().to_string());
            }
        }
    }
    if !scan || contains_ignore_case(bytes, b"branch") || contains_ignore_case(bytes, b"git ") {
        for c in BRANCH.captures_iter(&without_urls) {
            let name = &c[1];
            if !NOT_BRANCHES.contains(&name.to_ascii_lowercase().as_str()) && !name.starts_with('-') {
                out.push(name.to_string());
            }
        }
    }
}

/// Identifiers a tool's output reports (commits made, pull requests opened): only those shapes,
/// not every hash a log prints.
pub fn identifiers_in_output(output: &str, out: &mut Vec<String>) {
    identifiers_in_output_scanned(output, out, true)
}

/// [`identifiers_in_output`] with every pattern run, for the tests that check the scan.
#[cfg(test)]
pub(super) fn identifiers_in_output_unfiltered(output: &str, out: &mut Vec<String>) {
    identifiers_in_output_scanned(output, out, false)
}

fn identifiers_in_output_scanned(output: &str, out: &mut Vec<String>, scan: bool) {
    // One scan for both: a `[` that starts a line (a commit line) and a `:` before `//` (a URL).
    let bytes = output.as_bytes();
    let (mut commit, mut url) = (!scan, !scan);
    for i in memchr::memchr2_iter(b'[', b':', bytes).take_while(|_| scan) {
        if bytes[i] == b'[' {
            commit |= i == 0 || bytes[i - 1] == b'\n';
        } else {
            url |= bytes[i + 1..].starts_with(b"//");
        }
        if commit && url {
            break;
        }
    }
    if commit {
        for c in COMMIT_LINE.captures_iter(output) {
            out.push(c[1].to_string());
            out.push(c[2].to_string());
        }
    }
    if url {
        for m in URL.find_iter(output) {
            let u = m.as_str();
            if u.contains("/pull/") || u.contains("/merge_requests/") || u.contains("/issues/") {
                out.push(u.trim_end_matches(['.', ',', ';', ':']).to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_urls_tickets_shas_and_branches() {
        let mut out = Vec::new();
        identifiers_in(
            "See https://example.com/a/b?x=1. Ticket ENG-4521 and #1234; base it on 3f2a9c1d, branch `feat/login-v2`",
            &mut out,
        );
        assert_eq!(out, ["https://example.com/a/b?x=1", "ENG-4521", "#1234", "3f2a9c1d", "feat/login-v2"]);
        let mut out = Vec::new();
        identifiers_in("git checkout -b fix/parser-crash && git push -u origin fix/parser-crash", &mut out);
        assert_eq!(out, ["fix/parser-crash", "fix/parser-crash"]);
        let mut out = Vec::new();
        identifiers_in("deadbeef is a word, 1234567 a number, cafe123 a sha", &mut out);
        assert_eq!(out, ["cafe123"]);
        let mut out = Vec::new();
        identifiers_in_output("[main 9fceb02] Fix parser\n 1 file changed\nabc1234 old commit", &mut out);
        assert_eq!(out, ["main", "9fceb02"]);
    }
}
