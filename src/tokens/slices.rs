//! Exact counts of long text in slices, so that a caller can stop between them.

use super::exact::{count_tokens, Encoding};
use crate::error::{CfError, Result};

/// Text is counted in slices of about this many bytes between abort checks.
const SLICE: usize = 1 << 20;

/// `count_tokens` of `text`, asking `aborted` before each slice of about a mebibyte (and so once
/// for shorter text). The slices are cut where no o200k or cl100k pre-tokenizer piece can span, so
/// their counts add up to the exact count.
pub fn count_tokens_in_slices(text: &str, encoding: Encoding, aborted: &dyn Fn() -> bool) -> Result<u64> {
    count_in_slices(text, encoding, SLICE, aborted)
}

fn count_in_slices(text: &str, encoding: Encoding, size: usize, aborted: &dyn Fn() -> bool) -> Result<u64> {
    let mut total = 0;
    let mut rest = text;
    loop {
        if aborted() {
            return Err(CfError::aborted());
        }
        let cut = slice_end(rest, size);
        total += count_tokens(&rest[..cut], encoding);
        rest = &rest[cut..];
        if rest.is_empty() {
            return Ok(total);
        }
    }
}

/// The end of the slice starting `text`: the first safe cut at or after `size` bytes, or the end.
/// Safe: between a newline and an ASCII letter or digit, or between an ASCII letter and a space
/// before a letter.
fn slice_end(text: &str, size: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = size.min(bytes.len());
    while i < bytes.len() {
        let newline_then_word = bytes[i - 1] == b'\n' && bytes[i].is_ascii_alphanumeric();
        let word_space_word = bytes[i - 1].is_ascii_alphabetic()
            && bytes[i] == b' '
            && bytes.get(i + 1).is_some_and(u8::is_ascii_alphabetic);
        if newline_then_word || word_space_word {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::error::Code;

    const TEXT: &str = "fn main() {\n    let x = 1;\n}\nHello world, it's 2026!\n\n  indented\tline\nzz top";

    #[test]
    fn slices_add_up_to_the_exact_count() {
        let text = TEXT.repeat(5000);
        for enc in [Encoding::O200k, Encoding::Cl100k] {
            let slices = Cell::new(0);
            let total = count_in_slices(&text, enc, 997, &|| {
                slices.set(slices.get() + 1);
                false
            });
            assert_eq!(total.unwrap(), count_tokens(&text, enc));
            assert!(slices.get() > 100, "counted in {} slices", slices.get());
        }
    }

    #[test]
    fn short_text_and_empty_text_are_one_slice() {
        for text in ["", TEXT] {
            let asked = Cell::new(0);
            let total = count_tokens_in_slices(text, Encoding::O200k, &|| {
                asked.set(asked.get() + 1);
                false
            });
            assert_eq!(total.unwrap(), count_tokens(text, Encoding::O200k));
            assert_eq!(asked.get(), 1);
        }
    }

    #[test]
    fn stops_between_slices_once_aborted() {
        let text = TEXT.repeat(200);
        let asked = Cell::new(0);
        let result = count_in_slices(&text, Encoding::O200k, 1000, &|| {
            asked.set(asked.get() + 1);
            asked.get() == 3
        });
        assert_eq!(result.unwrap_err().code, Code::Aborted);
        assert_eq!(asked.get(), 3);
        assert!(count_in_slices(&text, Encoding::O200k, 1000, &|| true).is_err());
    }
}
