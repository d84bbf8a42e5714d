use std::borrow::Cow;

use super::markers;

/// Keeps the head and the tail of `text` within `max_chars` characters (the marker excluded), with
/// a marker that says how many characters were omitted. Errors and results sit at both ends of
/// tool output, so both are kept.
pub fn keep_head_and_tail(text: &str, max_chars: usize) -> Cow<'_, str> {
    match head_and_tail(text, max_chars) {
        None => Cow::Borrowed(text),
        Some(Cut { head, omitted, tail }) => {
            let mut out = String::with_capacity(head.len() + tail.len() + 40);
            out.push_str(head);
            out.push_str(&markers::omitted(omitted));
            out.push_str(tail);
            Cow::Owned(out)
        }
    }
}

/// What [`keep_head_and_tail`] keeps of a text longer than its limit.
#[derive(Debug, PartialEq, Eq)]
pub struct Cut<'a> {
    pub head: &'a str,
    /// Characters left out between head and tail.
    pub omitted: usize,
    pub tail: &'a str,
}

/// The head and tail of `text` within `max_chars` characters; `None` when it fits.
pub fn head_and_tail(text: &str, max_chars: usize) -> Option<Cut<'_>> {
    // Byte length bounds the char count: most outputs return here without counting.
    if text.len() <= max_chars {
        return None;
    }
    // ASCII (checked faster than characters are counted): characters are bytes.
    let total = if text.is_ascii() { text.len() } else { text.chars().count() };
    if total <= max_chars {
        return None;
    }
    let head = max_chars - max_chars / 2;
    let tail = max_chars / 2;
    if total == text.len() {
        return Some(Cut { head: &text[..head], omitted: total - head - tail, tail: &text[text.len() - tail..] });
    }
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = text.char_indices().nth_back(tail.saturating_sub(1)).map_or(text.len(), |(i, _)| i);
    let tail_str = if tail == 0 { "" } else { &text[tail_start..] };
    Some(Cut { head: &text[..head_end], omitted: total - head - tail, tail: tail_str })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_short_text_and_cuts_the_middle_of_long_text() {
        assert_eq!(keep_head_and_tail("abc", 3), "abc");
        assert_eq!(keep_head_and_tail("héllo", 5), "héllo");
        assert_eq!(keep_head_and_tail("abcdefghij", 4), "ab\n[... omitted 6 chars ...]\nij");
        assert_eq!(keep_head_and_tail("abcdefghij", 1), "a\n[... omitted 9 chars ...]\n");
        assert_eq!(keep_head_and_tail("日本語のテキスト", 3), "日本\n[... omitted 5 chars ...]\nト");
        assert_eq!(keep_head_and_tail("abc", 0), "\n[... omitted 3 chars ...]\n");
    }
}
