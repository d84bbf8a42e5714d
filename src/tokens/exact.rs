//! Exact OpenAI token counts. The BPE tables load lazily, once per process; counting never builds
//! a token vector. The `bpe-openai` encoder is linear in the input, so one 50 MB word cannot stall.
//! Agent text repeats the same pre-tokenizer pieces (words, indentation, punctuation) endlessly,
//! so short pieces' counts are cached per thread: that makes counting about 1.6 times faster.

use std::cell::RefCell;
use std::sync::Once;

use rustc_hash::FxHashMap;

use super::tables;
use crate::error::{CfError, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    O200k,
    Cl100k,
}

impl Encoding {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "o200k" | "o200k_base" => Ok(Encoding::O200k),
            "cl100k" | "cl100k_base" => Ok(Encoding::Cl100k),
            other => {
                Err(CfError::invalid_argument(format!("unknown encoding {other:?}: expected \"o200k\" or \"cl100k\"")))
            }
        }
    }

    fn index(self) -> usize {
        match self {
            Encoding::O200k => 0,
            Encoding::Cl100k => 1,
        }
    }

    fn tokenizer(self) -> &'static bpe_openai::Tokenizer {
        match self {
            Encoding::O200k => tables::o200k(),
            Encoding::Cl100k => tables::cl100k(),
        }
    }
}

/// Pieces longer than this are rare and seldom repeat: they are counted without the cache.
const CACHED_PIECE: usize = 48;
/// The cache is emptied when it grows past this many pieces (a few MB).
const CACHE_CAP: usize = 100_000;

thread_local! {
    static PIECES: RefCell<[FxHashMap<Box<str>, u32>; 2]> = RefCell::new(Default::default());
}

pub fn count_tokens(text: &str, encoding: Encoding) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let tokenizer = encoding.tokenizer();
    PIECES.with_borrow_mut(|caches| {
        let cache = &mut caches[encoding.index()];
        let mut total = 0u64;
        for piece in tokenizer.split(text) {
            if piece.len() > CACHED_PIECE {
                total += tokenizer.bpe.count(piece.as_bytes()) as u64;
                continue;
            }
            let n = match cache.get(piece) {
                Some(&n) => n,
                None => {
                    if cache.len() >= CACHE_CAP {
                        cache.clear();
                    }
                    let n = tokenizer.bpe.count(piece.as_bytes()) as u32;
                    cache.insert(piece.into(), n);
                    n
                }
            };
            total += n as u64;
        }
        total
    })
}

/// Loads an encoding's tables on a background thread so the first count on the JS thread does not
/// pay for it (120-400 ms).
pub fn warm_up(encoding: Encoding) {
    static O200K: Once = Once::new();
    static CL100K: Once = Once::new();
    let once = match encoding {
        Encoding::O200k => &O200K,
        Encoding::Cl100k => &CL100K,
    };
    once.call_once(|| {
        std::thread::spawn(move || {
            encoding.tokenizer();
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        assert_eq!(count_tokens("", Encoding::O200k), 0);
        assert_eq!(count_tokens("hello world", Encoding::O200k), 2);
        assert_eq!(count_tokens("hello world", Encoding::Cl100k), 2);
        assert!(Encoding::parse("gpt2").is_err());
    }

    #[test]
    fn matches_tiktoken_on_the_corpus() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
        let groups = std::fs::read_dir(dir).expect("the corpus lives in ../shared/corpus");
        let o200k = tiktoken_rs::o200k_base().unwrap();
        let cl100k = tiktoken_rs::cl100k_base().unwrap();
        let mut checked = 0;
        for group in groups.flatten().filter(|g| g.path().is_dir()) {
            for file in std::fs::read_dir(group.path()).unwrap().flatten() {
                let text = String::from_utf8_lossy(&std::fs::read(file.path()).unwrap()).into_owned();
                // Line by line keeps tiktoken's quadratic worst case (one huge piece) out of the test.
                for line in text.lines().step_by(7).take(60) {
                    let line: String = line.chars().take(20_000).collect();
                    assert_eq!(
                        count_tokens(&line, Encoding::O200k),
                        o200k.encode_ordinary(&line).len() as u64,
                        "o200k differs on a line of {:?}",
                        file.path()
                    );
                    assert_eq!(count_tokens(&line, Encoding::Cl100k), cl100k.encode_ordinary(&line).len() as u64);
                    checked += 1;
                }
            }
        }
        assert!(checked > 500, "the corpus should be beside the project");
    }
}
