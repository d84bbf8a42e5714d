//! The N-API surface: conversions and error mapping only; the logic lives in the core modules.
// The exports are reached through the N-API registration, which unit-test builds leave out.
#![cfg_attr(test, allow(dead_code))]
// Every unsafe block says why it is sound, every unsafe function what its caller must uphold.
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod constants;
mod errors;
mod formats;
mod functions;
mod log;
mod marshal;
mod objects;
pub(crate) mod session;
mod store;
mod tasks;

use marshal::value;
