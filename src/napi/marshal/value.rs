//! Conversions: JS values in through serde, Rust values out through serde without an intermediate
//! `serde_json::Value`.

use napi::bindgen_prelude::*;
use serde::Serialize;
use serde_json::Value;

use super::js_value::{from_js, named_properties, Reader};
use crate::error::{CfError, Code, Result};
use crate::message::{parse_message, Message};
use crate::policy::parse_options;
use crate::session::SessionOptions;

/// An argument taken as JSON. Conversion never fails at the boundary, so that a value of the
/// wrong kind (a NaN, a cycle, nesting past napi's limit) is reported inside `guard` with a stable
/// code and the argument's name rather than as a bare N-API status.
pub struct Json {
    value: std::result::Result<Value, String>,
    /// A part that could not be read (too deep, say); the rest is in `value`.
    problem: Option<String>,
    /// A NaN or infinity read as null (as `JSON.stringify` does), refused in options.
    non_finite: Option<String>,
}

/// Reads one value with its own reader.
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
unsafe fn read(env: sys::napi_env, v: sys::napi_value) -> Json {
    let mut reader = Reader::default();
    // SAFETY: the caller's contract.
    let value = unsafe { from_js(env, v, 0, &mut reader) }.map(|v| v.unwrap_or(Value::Null));
    Json { value, problem: reader.problem, non_finite: reader.non_finite }
}

impl FromNapiValue for Json {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: napi-rs converts an argument with the live `env` and handle of the call.
        Ok(unsafe { read(env, v) })
    }
}

impl TypeName for Json {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl ValidateNapiValue for Json {}

impl Json {
    pub fn value(self, what: &str, code: Code) -> Result<Value> {
        match (self.value, self.problem) {
            (Err(reason), _) | (Ok(_), Some(reason)) => Err(CfError::new(code, format!("{what}: {reason}"))),
            (Ok(v), None) => Ok(v),
        }
    }

    pub fn message(self) -> Result<Message> {
        message(self)
    }

    pub fn options<T: serde::de::DeserializeOwned>(self, what: &str) -> Result<T> {
        if let Some(reason) = &self.non_finite {
            return Err(CfError::invalid_argument(format!("{what}{reason}")));
        }
        parse_options(what, self.value(what, Code::InvalidArgument)?)
    }
}

/// Validates a message read from JS, naming it by id even when part of it could not be read.
fn message(json: Json) -> Result<Message> {
    match (json.value, json.problem) {
        (Ok(v), None) => parse_message(v),
        (Ok(v), Some(problem)) => {
            let label = match v.get("id") {
                Some(Value::String(id)) if !id.is_empty() => format!("message {id:?}"),
                _ => "message (without id)".to_string(),
            };
            Err(CfError::invalid_message(format!("{label}: {problem}")))
        }
        (Err(reason), _) => Err(CfError::invalid_message(format!("message: {reason}"))),
    }
}

/// An object argument of which only the fields `T` deserializes are read: a compaction plan sent
/// back to `applyCompaction` leaves its transcript (megabytes) in JS. Anything but an object is
/// read whole, for `T`'s deserializer to report.
pub struct Picked<T> {
    json: Json,
    _into: std::marker::PhantomData<T>,
}

impl<T: serde::de::DeserializeOwned> FromNapiValue for Picked<T> {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        let (mut t, mut is_array) = (0, false);
        // SAFETY: `env` and `v` are live handles of this call; the out-pointers are valid locals.
        let object = unsafe { sys::napi_typeof(env, v, &mut t) } == sys::Status::napi_ok
            && t == sys::ValueType::napi_object
            && unsafe { sys::napi_is_array(env, v, &mut is_array) } == sys::Status::napi_ok
            && !is_array;
        let json = if object {
            let mut reader = Reader::default();
            // SAFETY: as above; `v` is an object.
            let value = unsafe { named_properties(env, v, field_names::<T>(), &mut reader) }.map(Value::Object);
            Json { value, problem: reader.problem, non_finite: reader.non_finite }
        } else {
            // SAFETY: as above.
            unsafe { read(env, v) }
        };
        Ok(Picked { json, _into: std::marker::PhantomData })
    }
}

impl<T> TypeName for Picked<T> {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Unknown
    }
}

impl<T: serde::de::DeserializeOwned> ValidateNapiValue for Picked<T> {}

impl<T: serde::de::DeserializeOwned> Picked<T> {
    pub fn get(self, what: &str) -> Result<T> {
        self.json.options(what)
    }
}

/// The fields a struct's `Deserialize` asks for, as the input spells them (renames applied).
fn field_names<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::Error as _;
    type E = serde::de::value::Error;
    struct Names<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Names<'_> {
        type Error = E;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> std::result::Result<V::Value, E> {
            Err(E::custom("not a struct"))
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> std::result::Result<V::Value, E> {
            *self.0 = fields;
            Err(E::custom("fields read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
            unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Names(&mut fields));
    fields
}

/// A list of messages; each element converted on its own, so one bad element is named by index.
pub struct JsonList(std::result::Result<Vec<Json>, CfError>);

impl FromNapiValue for JsonList {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: napi-rs converts an argument with the live `env` and handle of the call; the
        // conversion reads the array's length, which fails for anything but an array.
        let Ok(array) = (unsafe { Array::from_napi_value(env, v) }) else {
            return Ok(JsonList(Err(CfError::invalid_argument("messages: expected an array of messages"))));
        };
        let out = (0..array.len()).map(|i| match array.get::<Json>(i) {
            Ok(Some(json)) => Ok(json),
            _ => Err(CfError::invalid_argument(format!("messages[{i}]: could not read the element"))),
        });
        Ok(JsonList(out.collect()))
    }
}

impl TypeName for JsonList {
    fn type_name() -> &'static str {
        "unknown[]"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ValidateNapiValue for JsonList {}

impl JsonList {
    /// Validates every message; errors also say at which index the bad message sits.
    pub fn messages(self) -> Result<Vec<Message>> {
        self.0?
            .into_iter()
            .enumerate()
            .map(|(i, json)| message(json).map_err(|e| CfError::new(e.code, format!("messages[{i}]: {}", e.message))))
            .collect()
    }
}

/// A string argument, checked inside `guard`.
pub struct Text(Option<String>);

impl FromNapiValue for Text {
    unsafe fn from_napi_value(env: sys::napi_env, v: sys::napi_value) -> napi::Result<Self> {
        // SAFETY: napi-rs converts an argument with the live `env` and handle of the call; a value
        // that is no string fails the read.
        Ok(Text(unsafe { String::from_napi_value(env, v) }.ok()))
    }
}

impl TypeName for Text {
    fn type_name() -> &'static str {
        "string"
    }

    fn value_type() -> ValueType {
        ValueType::String
    }
}

impl ValidateNapiValue for Text {}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Some(s.to_string()))
    }
}

impl Text {
    pub fn get(self, what: &str) -> Result<String> {
        self.0.ok_or_else(|| CfError::invalid_argument(format!("{what}: expected a string")))
    }
}

/// A Rust value handed to JS as JSON text read by V8's `JSON.parse`: several times faster than
/// building the objects property by property through N-API, and a `__proto__` key in the data
/// (tool input from a model, say) stays an own data property.
pub fn to_js<'env, T: Serialize>(env: &'env Env, value: &T) -> Result<Unknown<'env>> {
    let text = serde_json::to_string(value).map_err(|e| CfError::new(Code::Internal, e.to_string()))?;
    let parse = || -> napi::Result<Unknown<'env>> {
        let json: Object = env.get_global()?.get_named_property("JSON")?;
        let parse: Function<String, Unknown> = json.get_named_property("parse")?;
        parse.apply(json, text)
    };
    parse().map_err(|e| CfError::new(Code::Internal, format!("handing a value to JS: {}", e.reason)))
}

/// Messages carrying at least this many bytes of text each, on average, reach JS faster as
/// objects built in place (`to_js::build`) than as JSON text; the measured crossover is near 700.
const BUILD_MIN_AVERAGE: usize = 1024;

/// `to_js` for a value made of `messages` (a list of them, a context, an import): built in place
/// when they carry long texts, which JSON text would make V8 scan and copy twice.
pub fn messages_to_js<'env, 'm, T: Serialize>(
    env: &'env Env,
    value: &T,
    messages: impl IntoIterator<Item = &'m Message>,
) -> Result<Unknown<'env>> {
    let messages: Vec<&Message> = messages.into_iter().collect();
    let bytes: usize = messages.iter().map(|m| m.payload_len()).sum();
    // Messages from AI SDK ModelMessages may give back binary data, which JSON text cannot carry.
    let binary = messages.iter().any(|m| m.extra.contains_key(crate::message::ai_sdk_layout::LAYOUT));
    if !binary && (messages.is_empty() || bytes < BUILD_MIN_AVERAGE * messages.len()) {
        return to_js(env, value);
    }
    let mut shared = super::to_js::Shared::default();
    messages.iter().flat_map(|m| m.texts()).for_each(|t| shared.add(t));
    built(env, super::to_js::build_sharing(env, value, shared))
}

fn build<'env, T: Serialize>(env: &'env Env, value: &T) -> Result<Unknown<'env>> {
    built(env, super::to_js::build(env, value))
}

fn built(env: &Env, raw: std::result::Result<napi::sys::napi_value, super::to_js::Error>) -> Result<Unknown<'_>> {
    let raw = raw.map_err(|e| CfError::new(Code::Internal, format!("handing a value to JS: {e}")))?;
    // SAFETY: `raw` was just created in `env`'s current scope.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), raw) })
}

/// A compaction plan: its transcript blocks and the user messages are most of it, and are moved
/// to JS, not copied.
pub fn plan_to_js(env: &Env, mut plan: crate::compaction::CompactionPlan) -> Result<Unknown<'_>> {
    let transcript = std::mem::take(&mut plan.transcript);
    let turn_prefix = std::mem::take(&mut plan.turn_prefix);
    let user_messages = std::mem::take(&mut plan.facts.user_messages);
    let fail = |e: super::to_js::Error| CfError::new(Code::Internal, format!("handing a plan to JS: {e}"));
    let object = build(env, &plan)?;
    let transcript = super::to_js::strings(env, transcript).map_err(fail)?;
    super::to_js::set(env, &object, c"transcript", transcript).map_err(fail)?;
    let turn_prefix = super::to_js::strings(env, turn_prefix).map_err(fail)?;
    super::to_js::set(env, &object, c"turnPrefix", turn_prefix).map_err(fail)?;
    // Every user message's text, quoted: the largest of the facts.
    let user_messages = super::to_js::strings(env, user_messages).map_err(fail)?;
    let facts = super::to_js::get(env, &object, c"facts").map_err(fail)?;
    super::to_js::set(env, &facts, c"userMessages", user_messages).map_err(fail)?;
    Ok(object)
}

pub fn undefined(env: &Env) -> Result<Unknown<'_>> {
    ().into_unknown(env).map_err(|e| CfError::new(Code::Internal, e.reason.clone()))
}

pub fn session_options(value: Json) -> Result<SessionOptions> {
    value.options("options")
}

/// Options that may be left out: `undefined` and `null` mean the defaults.
pub fn optional<T: serde::de::DeserializeOwned + Default>(what: &str, value: Option<Json>) -> Result<T> {
    match value {
        None => Ok(T::default()),
        Some(v) => match v.value(what, Code::InvalidArgument)? {
            Value::Null => Ok(T::default()),
            v => parse_options(what, v),
        },
    }
}

/// A JS array of ModelMessages read element by element (each as JSON), so that a call reads only
/// the elements it needs.
pub struct ArrayReader<'a> {
    array: Array<'a>,
    pub len: usize,
}

impl<'a> ArrayReader<'a> {
    pub fn new(env: &'a Env, all: &Unknown<'a>) -> Result<ArrayReader<'a>> {
        if !all.is_array().unwrap_or(false) {
            return Err(bad_array("must be an array of ModelMessages"));
        }
        // SAFETY: `env` and `all` are live handles of this call, borrowed for `'a`, and `all` is
        // an array.
        let array = unsafe { Array::from_napi_value(env.raw(), all.raw()) }
            .map_err(|_| bad_array("could not read its length"))?;
        Ok(ArrayReader { len: array.len() as usize, array })
    }

    /// Element `i` (`i < len`) as JSON.
    pub fn get(&self, i: usize) -> Result<Value> {
        match self.array.get::<Json>(i as u32) {
            Ok(Some(json)) => json.value(&format!("all[{i}]"), Code::InvalidArgument),
            _ => Err(bad_array(&format!("could not read element {i}"))),
        }
    }
}

fn bad_array(what: &str) -> CfError {
    CfError::new(Code::InvalidArgument, format!("all: {what}"))
}

/// `all[0]`, `all[from..]` (read as JSON) and `all.length`: a sync reads only the window it needs.
pub fn array_window(env: &Env, all: &Unknown, from: usize) -> Result<(Option<Value>, Vec<Value>, usize)> {
    let all = ArrayReader::new(env, all)?;
    let first = if all.len > 0 { Some(all.get(0)?) } else { None };
    let window = (from..all.len).map(|i| all.get(i)).collect::<Result<Vec<_>>>()?;
    Ok((first, window, all.len))
}
