//! How many threads a CPU-bound pass (parsing a load, counting, digesting) may use: the cores this
//! process may run on, at most 8. Asked once, as the standard library reads the cgroup's quota
//! files on every call (~30 µs, a good part of a small load).

use std::sync::OnceLock;

pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(8))
}
