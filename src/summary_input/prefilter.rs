//! Cheap byte scans that tell when a pattern cannot match a text, so the regular expressions that
//! collect facts and find secrets run only on the few texts that may hold one. Each scan finds a
//! superset of what its pattern matches: skipping a text never changes a result.

/// Whether `text` holds a character that Unicode case folding turns into an ASCII letter (`ſ`
/// folds to `s`, the Kelvin sign `K` to `k`): a case-insensitive pattern may match it where an
/// ASCII-lowercased copy of the text shows nothing.
pub fn folds_to_ascii(text: &str) -> bool {
    !text.is_ascii() && (text.contains('\u{17f}') || text.contains('\u{212a}'))
}

/// Whether `hay` contains `needle` (ASCII) in any letter case. The search looks for the needle's
/// rarest letter (by English letter frequency) and compares around it.
pub fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    const COMMON_FIRST: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";
    let rank = |b: u8| COMMON_FIRST.iter().position(|&c| c == b.to_ascii_lowercase()).unwrap_or(COMMON_FIRST.len());
    let (at, &anchor) = needle.iter().enumerate().max_by_key(|&(_, &b)| rank(b)).expect("a needle");
    memchr::memchr2_iter(anchor.to_ascii_lowercase(), anchor.to_ascii_uppercase(), hay)
        .any(|i| i >= at && hay.get(i - at..i - at + needle.len()).is_some_and(|w| w.eq_ignore_ascii_case(needle)))
}

/// Whether `bytes` holds a run of at least `min` (> 0) consecutive bytes of `class`. A window of
/// `min` bytes is read from its end: at its last byte outside `class`, no run can start before the
/// next byte, so the next window starts there (most windows are skipped after a few bytes).
pub fn has_run(bytes: &[u8], min: usize, class: impl Fn(u8) -> bool) -> bool {
    let mut start = 0;
    while start + min <= bytes.len() {
        match bytes[start..start + min].iter().rposition(|&b| !class(b)) {
            None => return true,
            Some(k) => start += k + 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_found_wherever_they_are() {
        let hex = |b: u8| b.is_ascii_hexdigit();
        for len in 0..40 {
            for at in 0..12 {
                let s = format!("{}{}{}", "x".repeat(at), "a".repeat(len), "x".repeat(7));
                assert_eq!(has_run(s.as_bytes(), 7, hex), len >= 7, "{s}");
            }
        }
        assert!(!has_run(b"abc", 7, hex));
        assert!(has_run(b"deadbeef", 7, hex));
        assert!(!has_run(b"dead beef cafe", 7, hex));
    }

    #[test]
    fn literal_scans() {
        assert!(folds_to_ascii("ſhould") && folds_to_ascii("\u{212a}eep") && !folds_to_ascii("Äpfel should"));
        assert!(contains_ignore_case(b"on BRanch x", b"branch") && !contains_ignore_case(b"bran ch", b"branch"));
        assert!(contains_ignore_case(b"xbranch", b"branch") && !contains_ignore_case(b"branc", b"branch"));
        assert!(contains_ignore_case(b"Exit code", b"exit") && contains_ignore_case(b"xexit", b"exit"));
        assert!(!contains_ignore_case(b"x", b"exit") && !contains_ignore_case(b"eXi", b"exit"));
    }
}
