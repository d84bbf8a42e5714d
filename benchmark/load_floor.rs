//! What a never-compacted load cannot go below on this machine: reading a store file, and parsing
//! its lines into messages on one core, against only finding where its JSON strings end (serde's
//! `IgnoredAny`) and against the store's own load on every core. Medians of 7 runs, file in the
//! page cache. Run on the store benchmark's file (`benchmark/store.mjs` writes one; any store file
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

/// Median ms of `RUNS` calls after a warm-up.
fn median(mut f: impl FnMut()) -> f64 {
    f();
    let mut ms: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms[RUNS / 2]
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

    let read = median(|| drop(std::fs::read(&path).unwrap()));
    let scan = median(|| lines().for_each(|l| serde_json::from_slice::<IgnoredAny>(l).map(|_| ()).unwrap()));
    let (a, b) = all.split_at(all.len() / 2);
    let scan2 = median(|| {
        std::thread::scope(|s| {
            for half in [a, b] {
                s.spawn(move || half.iter().for_each(|l| serde_json::from_slice::<IgnoredAny>(l).map(|_| ()).unwrap()));
            }
        })
    });
    let parse2 = median(|| {
        std::thread::scope(|s| {
            for half in [a, b] {
                s.spawn(move || {
                    let messages: Vec<Message> = half
                        .iter()
                        .filter_map(|l| serde_json::from_slice::<Line>(l).ok().and_then(|l| l.message))
                        .collect();
                    drop(messages)
                });
            }
        })
    });
    let parse = median(|| {
        let messages: Vec<Message> =
            lines().filter_map(|l| serde_json::from_slice::<Line>(l).ok().and_then(|l| l.message)).collect();
        drop(messages)
    });
    let load = median(|| {
        let open = OpenOptions { read_only: true, ..Default::default() };
        let mut store = SessionStore::open(Path::new(&path), open).unwrap();
        drop(store.load(None, &|| false).unwrap())
    });
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{path}: {mb:.1} MB, {} lines", lines().count());
    println!("read the file:                                  {}", rate(read));
    println!("find where each JSON value ends (one core):     {}", rate(scan));
    println!("find where each JSON value ends (two threads):  {}", rate(scan2));
    println!("parse every line into messages (one core):      {}", rate(parse));
    println!("the same on two threads, half each:             {}", rate(parse2));
    println!("store load, counts from the file ({cores} cores):    {}", rate(load));
}
