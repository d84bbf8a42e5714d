//! contextfold: context compaction for coding agents.
//!
//! The core is plain Rust (usable as a library); `napi` only converts to and from JS.

pub mod compaction;
pub mod convert;
mod cores;
pub mod cost;
pub mod error;
pub mod formats;
#[doc(hidden)]
pub mod fuzzing;
#[doc(hidden)]
pub mod invariants;
pub mod message;
pub mod policy;
pub mod session;
pub mod store;
pub mod summary_input;
pub mod tokens;
#[cfg(all(test, feature = "node"))]
mod typings;

#[cfg(feature = "node")]
mod napi;

/// The addon allocates through mimalloc (see Cargo.toml); a Rust user of the crate keeps its own.
#[cfg(feature = "node")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
