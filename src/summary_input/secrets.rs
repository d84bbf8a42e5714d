//! Credentials kept out of what a summarizer reads: well-known token shapes (one rule per
//! provider, in the manner of gitleaks' rules: a distinctive prefix, a fixed alphabet and length),
//! private keys, `Authorization` headers, connection strings with passwords, `.env`-style
//! assignments of secret-looking names, and high-entropy strings. Each is replaced by
//! `[REDACTED:<kind>]`. Hashes, UUIDs, file paths and media markers are not secrets and stay.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::prefilter::{folds_to_ascii, has_run};

/// A rule: what it finds, and the capture group holding the secret (0: the whole match).
struct Rule {
    kind: &'static str,
    re: Regex,
    group: usize,
}

fn rule(kind: &'static str, pattern: &str, group: usize) -> Rule {
    Rule { kind, re: Regex::new(pattern).expect("valid secret pattern"), group }
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        rule(
            "private-key",
            r"-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            0,
        ),
        rule("aws-access-key", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b", 0),
        rule("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b", 0),
        rule("gitlab-token", r"\bglpat-[A-Za-z0-9_-]{20,}\b", 0),
        rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", 0),
        rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/]{20,}", 0),
        rule("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b", 0),
        rule("anthropic-key", r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}\b", 0),
        rule("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b", 0),
        rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
        rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", 0),
        rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", 0),
        rule("twilio-key", r"\bSK[0-9a-f]{32}\b", 0),
        rule("huggingface-token", r"\bhf_[A-Za-z]{34}\b", 0),
        rule("jwt", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", 0),
        rule(
            "authorization-header",
            r"(?i)\b(?:authorization|proxy-authorization)\s*[:=]\s*[\x22']?(?:bearer|basic|token|bot)\s+([A-Za-z0-9._~+/=-]{8,})",
            1,
        ),
        rule("bearer-token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)", 1),
        rule("connection-string-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@\x22']+:([^\s@/\x22']{3,})@", 1),
        // An ASCII word boundary: a Unicode one keeps the engine off its lazy DFA (about 15 times
        // slower on tool output); the two differ only next to a non-ASCII letter, where this one
        // redacts more.
        rule(
            "secret-assignment",
            r#"(?i)(?-u:\b)(?P<name>[A-Z0-9_.-]*(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth)[A-Z0-9_.-]*)\x22?\s*[:=]\s*[\x22']?([^\s\x22',;`]{8,})"#,
            2,
        ),
    ]
});

static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_=-]{32,}").unwrap());
static REDACTED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[REDACTED:[a-z-]+\]").unwrap());

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 128];
    for b in s.bytes() {
        counts[(b & 0x7f) as usize] += 1;
    }
    let n = s.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / n).map(|p| -p * p.log2()).sum()
}

/// A random-looking token: long, mixed letters and digits, high entropy, and not a hex hash, a
/// UUID or a path.
fn high_entropy(s: &str) -> bool {
    let t = s.trim_end_matches('=');
    let hex = t.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    let digits = t.bytes().filter(u8::is_ascii_digit).count();
    let upper = t.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = t.bytes().filter(u8::is_ascii_lowercase).count();
    let slashes = t.bytes().filter(|&b| b == b'/').count();
    !hex && digits >= 2 && upper >= 2 && lower >= 2 && slashes * 12 < t.len() && entropy(t) >= 4.3
}

/// Whether a secret-looking name is assigned a secret rather than code (`token = getToken()`) or a
/// reference (`API_KEY=${API_KEY}`): a value with a digit, or any plain value of an `.env`-style
/// upper-case name that is not a path (`DB_PASSWORD=correcthorsebattery`, not `TOKEN_FILE=/run/token`).
fn assigned_secret(c: &Captures<'_>, value: &str) -> bool {
    if value.bytes().any(|b| b.is_ascii_digit()) {
        return true;
    }
    let env_name = c.name("name").is_some_and(|n| !n.as_str().bytes().any(|b| b.is_ascii_lowercase()));
    env_name && !value.starts_with(['/', '.', '~']) && !value.bytes().any(|b| b"(){}$<>[]".contains(&b))
}

/// Names of secret-assignment, lowercased, as the name before a `:` or `=` may hold them.
const SECRET_NAMES: &[&[u8]] = &[
    b"secret",
    b"token",
    b"passw",
    b"pwd",
    b"apikey",
    b"api_key",
    b"api-key",
    b"accesskey",
    b"access_key",
    b"access-key",
    b"privatekey",
    b"private_key",
    b"private-key",
    b"credential",
    b"auth",
];

/// Whether `b` may be in a token: every rule's secret but a key block, a connection string's
/// password and an assigned value is a run of at least 15 of these (the shortest, a Slack token:
/// `xoxb-` and 10 more), and so is every high-entropy candidate.
fn token_byte(b: u8) -> bool {
    const TABLE: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            t[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'+' | b'/' | b'=' | b'~' | b'-');
            b += 1;
        }
        t
    };
    TABLE[b as usize]
}

/// Whether the `:` or `=` at `at` follows a name that holds a secret-looking word (as
/// secret-assignment and authorization-header need): the name, an optional `"` and whitespace
/// (any non-ASCII byte counts as whitespace here) before it.
fn assigns_secret_name(bytes: &[u8], at: usize) -> bool {
    let before = &bytes[..at];
    let end = before.iter().rposition(|&b| !(b.is_ascii_whitespace() || b >= 0x80)).map_or(0, |i| i + 1);
    let end = if end > 0 && before[end - 1] == b'"' { end - 1 } else { end };
    let start = before[..end]
        .iter()
        .rposition(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')))
        .map_or(0, |i| i + 1);
    let name = before[start..end].to_ascii_lowercase();
    SECRET_NAMES.iter().any(|k| memchr::memmem::find(&name, k).is_some())
}

/// Whether a rule may match `text`, by scans much cheaper than the patterns: a token-like run, a
/// key block, a URL scheme, a `:` or `=` after a secret-looking name, or a character that case
/// folding turns into an ASCII letter (the case-insensitive rules may match it). Finds every text
/// a rule matches, and few others.
pub(super) fn may_hold_secret(text: &str) -> bool {
    let b = text.as_bytes();
    has_run(b, 15, token_byte)
        || memchr::memmem::find(b, b"-----BEGIN").is_some()
        || memchr::memmem::find(b, b"://").is_some()
        || memchr::memchr2_iter(b':', b'=', b).any(|i| assigns_secret_name(b, i))
        || folds_to_ascii(text)
}

/// Whether any rule's pattern, or a high-entropy string, is in `text` (what the prefilter must
/// not miss).
#[cfg(test)]
pub(super) fn rules_match(text: &str) -> bool {
    RULES.iter().any(|r| r.re.is_match(text)) || CANDIDATE.find_iter(text).any(|m| high_entropy(m.as_str()))
}

/// `text` with every secret replaced by `[REDACTED:<kind>]`, and how many were replaced.
pub fn redact(text: &str) -> (Cow<'_, str>, usize) {
    let mut out = Cow::Borrowed(text);
    let mut n = 0;
    if !may_hold_secret(text) {
        return (out, 0);
    }
    // Rule by rule: each pattern's own search (literal prefilters, a lazy DFA) is several times
    // faster than one overlapping pass of a set of them all.
    for r in RULES.iter() {
        if !r.re.is_match(&out) {
            continue;
        }
        let replaced =
            r.re.replace_all(&out, |c: &Captures<'_>| {
                let whole = c.get(0).expect("group 0 always matches");
                match c.get(r.group) {
                    Some(secret) if r.kind == "secret-assignment" && !assigned_secret(c, secret.as_str()) => {
                        whole.as_str().to_string()
                    }
                    Some(secret) if !REDACTED.is_match(secret.as_str()) => {
                        n += 1;
                        let (a, b) = (secret.start() - whole.start(), secret.end() - whole.start());
                        let w = whole.as_str();
                        format!("{}[REDACTED:{}]{}", &w[..a], r.kind, &w[b..])
                    }
                    _ => whole.as_str().to_string(),
                }
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    if CANDIDATE.find_iter(&out).any(|m| high_entropy(m.as_str())) {
        let replaced = CANDIDATE
            .replace_all(&out, |c: &Captures<'_>| {
                let s = &c[0];
                if high_entropy(s) {
                    n += 1;
                    "[REDACTED:high-entropy]".to_string()
                } else {
                    s.to_string()
                }
            })
            .into_owned();
        out = Cow::Owned(replaced);
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_each_kind_and_keeps_the_context() {
        let cases = [
            ("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github-token"),
            ("curl -H 'Authorization: Bearer abc.def-ghi_jkl0123456789'", "authorization-header"),
            ("DATABASE_URL=postgres://app:s3cr3t-pw@db.internal:5432/app", "connection-string-password"),
            ("STRIPE_SECRET=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "private-key"),
            ("OPENAI_API_KEY=sk-proj-Abcdefghijklmnop1234567890", "openai-key"),
            ("password = \"hunter2hunter2\"", "secret-assignment"),
            ("DB_PASSWORD=correcthorsebattery", "secret-assignment"),
        ];
        for (text, kind) in cases {
            let (out, n) = redact(text);
            assert!(n >= 1, "{text}");
            assert!(out.contains(&format!("[REDACTED:{kind}]")), "{text} -> {out}");
        }
        let (out, _) = redact("DATABASE_URL=postgres://app:s3cr3t-pw@db.internal:5432/app");
        assert_eq!(out, "DATABASE_URL=postgres://app:[REDACTED:connection-string-password]@db.internal:5432/app");
    }

    #[test]
    fn look_alikes_survive() {
        let keep = [
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "src/components/settings/UserProfileSettingsPanel.test.tsx",
            "[Image (image/png) not kept in the transcript]",
            "[Attached image/png: screenshot.png]",
            "the token budget is 2000 tokens; password reset flow in auth.rs",
            "https://github.com/org/repo/pull/42",
            "const token = getToken();",
            "API_KEY=${API_KEY}",
            "AUTH_MODE=oauth",
            "TOKEN_FILE=/run/secrets/token",
            "passwordField = form.elements.password",
        ];
        for text in keep {
            assert_eq!(redact(text), (Cow::Borrowed(text), 0), "{text}");
        }
        let (out, n) = redact("key: Zx8Qm2Lp9Rt4Vw7Yb3Nc6Hd1Jf5Kg0Ts");
        assert_eq!((out.as_ref(), n), ("key: [REDACTED:high-entropy]", 1));
    }
}
