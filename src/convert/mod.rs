//! What the model sees: conversion to AI SDK `ModelMessage`s, truncation, media stripping.

pub mod markers;
mod model_messages;
mod truncate;

pub use model_messages::{to_model_messages, ConvertOptions, ModelMessage};
pub use truncate::keep_head_and_tail;
