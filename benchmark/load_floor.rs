//! What a never-compacted load cannot go below on this machine: reading a store file, finding
//! where each line's JSON values end (serde's `IgnoredAny`), parsing the lines into messages, on
//! one core and on two threads, against the store's own load. Medians of 7 runs, file in the page
//! cache. Run on the store benchmark's file (`benchmark/store.mjs` writes one; any store file
//! works):
//! `cargo run --release --example load_floor --no-default-features --features tools -- FILE`

use std::path::Path;
use std::time::Instant;

use contextfold::message::Message;
use contextfold::store::{OpenOptions, SessionStore};
use serde::de::IgnoredAny;
use serde::Deserialize;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const RUNS: usize = 7;

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    message: Option<Message>,
}

/// Median ms of `RUNS` calls after a warm-up. What a call returns is dropped after its time is
/// taken: a load keeps what it parsed.
fn median<T>(mut f: impl FnMut() -> T) -> f64 {
    drop(f());
    let mut ms: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let out = f();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            drop(out);
            ms
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms[RUNS / 2]
}

/// The messages of these lines.
fn parse<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Vec<Message> {
    lines.filter_map(|l| serde_json::from_slice::<Line>(l).ok().and_then(|l| l.message)).collect()
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: load_floor FILE (a contextfold store file)");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(2);
    });
    // The lines after the header, found once.
    let mut all: Vec<&[u8]> = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', &bytes) {
        all.push(&bytes[start..end]);
        start = end + 1;
    }
    let all = &all[1.min(all.len())..];
    let lines = || all.iter().copied();
    let mb = bytes.len() as f64 / 1e6;
    let rate = |ms: f64| format!("{ms:.1} ms ({:.0} MB/s)", mb / ms * 1e3);

    let load_once = || {
        let open = OpenOptions { read_only: true, ..Default::default() };
        SessionStore::open(Path::new(&path), open).and_then(|mut store| store.load(None, &|| false))
    };
    if let Err(e) = load_once() {
        eprintln!("{path}: not a session file this store loads: {} ({:?})", e.message, e.code);
        std::process::exit(2);
    }
    // Lines that are not JSON (a torn last line) are passed over, as a load does with `recover`.
    let skim = |l: &[u8]| serde_json::from_slice::<IgnoredAny>(l).is_ok();

    let read = median(|| std::fs::read(&path).unwrap());
    let scan = median(|| lines().filter(|l| skim(l)).count());
    let (a, b) = all.split_at(all.len() / 2);
    let scan2 = median(|| {
        std::thread::scope(|s| {
            for half in [a, b] {
                s.spawn(move || half.iter().filter(|l| skim(l)).count());
            }
        })
    });
    let parse2 = median(|| {
        std::thread::scope(|s| {
            let halves = [a, b].map(|half| s.spawn(move || parse(half.iter().copied())));
            halves.map(|h| h.join().unwrap())
        })
    });
    let parse1 = median(|| parse(lines()));
    let load = median(|| load_once().unwrap());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{path}: {mb:.1} MB, {} lines", lines().count());
    println!("read the file:                                  {}", rate(read));
    println!("find where each JSON value ends (one core):     {}", rate(scan));
    println!("find where each JSON value ends (two threads):  {}", rate(scan2));
    println!("parse every line into messages (one core):      {}", rate(parse1));
    println!("the same on two threads, half each:             {}", rate(parse2));
    println!("store load, counts from the file ({cores} cores):    {}", rate(load));
}
