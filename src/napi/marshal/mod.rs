//! The marshalling between JS values and the core's types, and nothing else: JS values read as
//! JSON (`js_value`), core values written as JS values (`to_js`), binary data (`binary`), and the
//! argument types the entry points take (`value`). Every `unsafe` block here says why it is sound.

pub mod binary;
pub mod js_value;
pub mod to_js;
pub mod value;
