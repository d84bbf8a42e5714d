//! The N-API surface: conversions and error mapping only; the logic lives in the core modules.

mod errors;
mod functions;
mod objects;
mod session;
mod tasks;
mod value;
