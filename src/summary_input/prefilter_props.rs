//! Property tests: each prefilter finds every text its patterns match (a text it skips is one the
//! patterns would have left alone).

use proptest::prelude::*;

use super::facts::{decisions_in, may_hold_decision};
use super::identifiers::{
    identifiers_in, identifiers_in_output, identifiers_in_output_unfiltered, identifiers_in_unfiltered,
};
use super::redact;
use super::secrets::{may_hold_secret, rules_match};
use super::user_text::{is_constraint, may_hold_constraint, sentences};

/// Texts built from pieces near what the patterns look for: secret shapes, names and separators,
/// modal words, identifiers, and characters that case folding or `\s`/`\d` treat specially.
fn text() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        " ",
        "\n",
        ": ",
        "=",
        "\"",
        "'",
        ".",
        "-",
        "#",
        "/",
        "://",
        "@",
        "_",
        "~",
        "ſ",
        "\u{212a}",
        "\u{a0}",
        "é",
        "٣",
        "AKIA",
        "ghp_",
        "sk-",
        "sk_live_",
        "xoxb-",
        "eyJ",
        "SG.",
        "SK",
        "hf_",
        "npm_",
        "AIza",
        "glpat-",
        "-----BEGIN RSA PRIVATE KEY-----",
        "Authorization",
        "Bearer",
        "token",
        "TOKEN",
        "secret",
        "passwd",
        "api_key",
        "auth",
        "postgres",
        "user",
        "pw",
        "ABCDEFGHIJKLMNOP",
        "abcdef0123456789",
        "Zx8Qm2Lp9Rt4Vw7Yb3Nc6Hd1Jf5Kg0Ts",
        "0123",
        "never",
        "Use",
        "keep",
        "Please",
        "should",
        "don't",
        "ENG",
        "-42",
        "#123",
        "deadbeef1",
        "branch",
        "git checkout -b ",
        "https",
        "git push -u origin ",
        "fix/x",
        "I'll",
        "need",
        "All ",
        "Every",
        "before you",
        "has to",
        "enforced",
        "Decision",
        "decided",
        "went with",
        "rather than",
        "Opted",
        "CHOSE",
        "the",
        "word",
        "x",
        "A",
    ]);
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn a_skipped_text_holds_no_secret(t in text()) {
        if !may_hold_secret(&t) {
            prop_assert!(!rules_match(&t), "{t:?}");
            prop_assert_eq!(redact(&t).1, 0);
        }
    }

    #[test]
    fn a_skipped_text_holds_no_constraint(t in text()) {
        if !may_hold_constraint(&t) {
            prop_assert!(sentences(&t).iter().all(|s| !is_constraint(s)), "{t:?}");
        }
    }

    #[test]
    fn a_skipped_text_holds_no_decision(t in text()) {
        if !may_hold_decision(&t) {
            prop_assert_eq!(decisions_in(&t, true).count(), 0, "{:?}", t);
        }
    }

    #[test]
    fn identifiers_are_those_every_pattern_finds(t in text()) {
        let (mut fast, mut all) = (Vec::new(), Vec::new());
        identifiers_in(&t, &mut fast);
        identifiers_in_unfiltered(&t, &mut all);
        prop_assert_eq!(fast, all, "{:?}", t);
    }

    #[test]
    fn output_identifiers_are_those_every_pattern_finds(t in text()) {
        let (mut fast, mut all) = (Vec::new(), Vec::new());
        identifiers_in_output(&t, &mut fast);
        identifiers_in_output_unfiltered(&t, &mut all);
        prop_assert_eq!(fast, all, "{:?}", t);
    }
}
