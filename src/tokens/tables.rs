//! The o200k and cl100k tokenizers, from the counting tables `build.rs` embeds (zstd-compressed,
//! about a sixth of `bpe-openai`'s own tables). A table is inflated and read into its
//! `BytePairEncoding` on first use, once per process. The tables hold only what counting reads:
//! the tokenizers here are for `count` (and `split`), nothing else.

use std::sync::LazyLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use bpe_openai::Tokenizer;

static O200K: LazyLock<Tokenizer> = LazyLock::new(|| {
    // The pre-tokenizer of `bpe_openai::o200k_base()`: the `tests` below hold them equal.
    let pat1 = [
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "\\p{N}{1,3}",
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "\\s*[\\r\\n]+",
        "\\s+$",
    ]
    .join("|");
    load(include_bytes!(concat!(env!("OUT_DIR"), "/o200k.bpe.zst")), &pat1)
});

static CL100K: LazyLock<Tokenizer> = LazyLock::new(|| {
    // The pre-tokenizer of `bpe_openai::cl100k_base()`.
    let pat1 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$";
    load(include_bytes!(concat!(env!("OUT_DIR"), "/cl100k.bpe.zst")), pat1)
});

/// Inflates a table and builds its tokenizer. After the main pattern come the pieces both
/// encodings share, as `bpe-openai` writes them: `\s+(?!\S)` as a one-character look-ahead, then
/// any other whitespace.
fn load(compressed: &'static [u8], pat1: &str) -> Tokenizer {
    // Inflated whole into a buffer of the size the frame records, then read (msgpack through a
    // streaming decoder is many times slower).
    let size = zstd::zstd_safe::get_frame_content_size(compressed).ok().flatten().expect("build.rs records the size");
    let table = zstd::bulk::decompress(compressed, size as usize).expect("the table build.rs wrote");
    let bpe: BytePairEncoding = rmp_serde::from_slice(&table).expect("the table build.rs wrote");
    Tokenizer::new_lookahead(bpe, &[(pat1, false), ("\\s+\\s", true), ("\\s+", false)], false).expect("valid regex")
}

pub fn o200k() -> &'static Tokenizer {
    &O200K
}

pub fn cl100k() -> &'static Tokenizer {
    &CL100K
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text that exercises every branch of the patterns: contractions, case runs, digits, marks,
    /// CJK, punctuation runs, newlines and trailing whitespace.
    const SAMPLE: &str =
        "I'm here, they'RE there; HTTPServer's 12345 числа 数字とかな café\u{301}\n\n  \tfoo()/bar  \r\n x  ";

    #[test]
    fn splits_and_counts_like_bpe_openai() {
        for (ours, theirs) in [(o200k(), bpe_openai::o200k_base()), (cl100k(), bpe_openai::cl100k_base())] {
            assert_eq!(ours.split(SAMPLE).collect::<Vec<_>>(), theirs.split(SAMPLE).collect::<Vec<_>>());
            assert_eq!(ours.count(SAMPLE), theirs.count(SAMPLE));
        }
    }
}
