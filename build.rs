//! Build script: the N-API setup (with the `node` feature), and the tokenizer tables the crate
//! embeds.
//!
//! `bpe-openai` embeds each BPE table as the whole serialized `BytePairEncoding` (o200k 32 MB,
//! cl100k 15 MB): three Aho-Corasick automata, a hash index of token bytes and the token bytes
//! themselves. Counting (`BytePairEncoding::count`, the backtracking encoder) reads only the
//! leftmost-longest automaton, the token boundaries, the prefix links and the merge tables. So
//! the tables written here keep those, replace the two overlapping-match automata by one-pattern
//! stand-ins, drop the hash index and the token bytes, sort the remaining maps (their order is
//! free, and sorted they compress better) and compress the result with zstd. `tokens::tables`
//! inflates them on first use. The build checks that every token of the vocabulary counts the
//! same through the written table as through `bpe-openai`'s.
//!
//! Compressing takes tens of seconds, and the script reruns whenever napi-rs's environment changes
//! (`napi build` after `cargo test`): a table already written from the same source is kept.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::de::{Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// zstd level: 19 halves what level 3 leaves, at a few seconds of build time per table.
const ZSTD_LEVEL: i32 = 19;

fn main() {
    if std::env::var_os("CARGO_FEATURE_NODE").is_some() {
        napi_build::setup();
    }

    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    write_table(bpe_openai::o200k_base(), &out.join("o200k.bpe.zst"));
    write_table(bpe_openai::cl100k_base(), &out.join("cl100k.bpe.zst"));
    println!("cargo::rerun-if-changed=build.rs");
}

fn write_table(tokenizer: &bpe_openai::Tokenizer, path: &Path) {
    let full = rmp_serde::to_vec(&tokenizer.bpe).expect("serializing a BPE table");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    full.hash(&mut hasher);
    let source = format!("{:016x} zstd {ZSTD_LEVEL}\n", hasher.finish());
    let stamp = path.with_extension("source");
    if path.exists() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == source) {
        return;
    }
    let table: Table = rmp_serde::from_slice(&full).expect("the BytePairEncoding layout this build script knows");
    let counting = rmp_serde::to_vec(&table.for_counting()).expect("serializing the counting table");
    check(&tokenizer.bpe, &counting);
    let compressed = zstd::bulk::compress(&counting, ZSTD_LEVEL).expect("zstd compression");
    std::fs::write(path, compressed).expect("writing the table to OUT_DIR");
    std::fs::write(stamp, source).expect("writing the table's stamp to OUT_DIR");
}

/// Every token's bytes count as one token through the written table, as through the original,
/// and so do a few concatenations (which exercise the merge tables and backtracking).
fn check(original: &BytePairEncoding, counting: &[u8]) {
    let stripped: BytePairEncoding = rmp_serde::from_slice(counting).expect("the counting table reads back");
    let tokens = original.num_tokens() as u32;
    let mut text = Vec::new();
    for id in 0..tokens {
        let bytes = original.token_bytes(id);
        assert_eq!(stripped.count(bytes), 1, "token {id} must count as one token");
        text.extend_from_slice(bytes);
        if text.len() > 64 {
            assert_eq!(stripped.count(&text), original.count(&text), "counts differ on {text:?}");
            text.clear();
        }
    }
}

/// `BytePairEncoding`'s serialized fields, in its order (rmp-serde writes a struct as an array).
#[derive(Deserialize)]
struct Table {
    #[allow(dead_code)]
    all_tokens: Vec<u8>,
    token_starts: Vec<u32>,
    #[allow(dead_code)]
    bytes_hash_to_token: HashMap<u32, u32>,
    split_table: Vec<(u32, u32)>,
    pair_lookup: HashMap<(u32, u32), u32>,
    longest_searcher: Bytes,
    #[allow(dead_code)]
    overlapping_searcher: Bytes,
    #[allow(dead_code)]
    overlapping_searcher_rev: Bytes,
    next_prefix_match: Vec<u32>,
    hash_factor: u64,
}

/// The same layout, holding only what counting reads.
#[derive(Serialize)]
struct CountingTable {
    all_tokens: Vec<u8>,
    token_starts: Vec<u32>,
    bytes_hash_to_token: BTreeMap<u32, u32>,
    split_table: Vec<(u32, u32)>,
    pair_lookup: BTreeMap<(u32, u32), u32>,
    longest_searcher: Bytes,
    overlapping_searcher: Bytes,
    overlapping_searcher_rev: Bytes,
    next_prefix_match: Vec<u32>,
    hash_factor: u64,
}

impl Table {
    fn for_counting(self) -> CountingTable {
        // A valid automaton that counting never consults (an empty one cannot be built).
        let unused =
            Bytes(aneubeck_daachorse::DoubleArrayAhoCorasick::<u32>::new([[0u8]]).expect("one pattern").serialize());
        CountingTable {
            all_tokens: Vec::new(),
            token_starts: self.token_starts,
            bytes_hash_to_token: BTreeMap::new(),
            split_table: self.split_table,
            pair_lookup: self.pair_lookup.into_iter().collect(),
            longest_searcher: self.longest_searcher,
            overlapping_searcher: unused.clone(),
            overlapping_searcher_rev: unused,
            next_prefix_match: self.next_prefix_match,
            hash_factor: self.hash_factor,
        }
    }
}

/// An automaton, serialized as msgpack bytes (as `BytePairEncoding` writes it).
#[derive(Clone)]
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BytesVisitor;
        impl Visitor<'_> for BytesVisitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("msgpack bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
        }
        d.deserialize_bytes(BytesVisitor)
    }
}
