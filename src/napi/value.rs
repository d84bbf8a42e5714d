//! Conversions: JS values in through serde, Rust values out through serde without an intermediate
//! `serde_json::Value`.

use napi::bindgen_prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::error::{CfError, Result};
use crate::model::{parse_message, Message};
use crate::policy::parse_options;
use crate::session::SessionOptions;

/// A Rust value handed to JS as plain objects.
pub struct Js<T: Serialize>(pub T);

impl<T: Serialize> ToNapiValue for Js<T> {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let env = Env::from_raw(env);
        Ok(env.to_js_value(&val.0)?.raw())
    }
}

impl<T: Serialize> TypeName for Js<T> {
    fn type_name() -> &'static str {
        "Object"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

pub fn message(value: Value) -> Result<Message> {
    parse_message(value)
}

/// Parses a list of messages; errors also say at which index the bad message sits.
pub fn messages(values: Vec<Value>) -> Result<Vec<Message>> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            parse_message(v)
                .map_err(|e| CfError::new(e.code, format!("messages[{i}]: {}", e.message)))
        })
        .collect()
}

pub fn session_options(value: Value) -> Result<SessionOptions> {
    parse_options("options", value)
}

/// Options that may be left out: `undefined` and `null` mean the defaults.
pub fn optional<T: serde::de::DeserializeOwned + Default>(
    what: &str,
    value: Option<Value>,
) -> Result<T> {
    match value {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => parse_options(what, v),
    }
}

/// `toModelMessages` options as JS passes them; unset fields fall back to the session's settings.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ConvertArgs {
    pub strip_media: Option<bool>,
    /// `'ai-sdk'` (default), `'anthropic'` or `'openai'`.
    pub format: Option<String>,
    #[serde(deserialize_with = "crate::policy::opt_limit")]
    pub tool_output_max_chars: Option<u64>,
}

impl ConvertArgs {
    pub fn model_format(&self) -> Result<crate::convert::ModelFormat> {
        self.format
            .as_deref()
            .map_or(Ok(Default::default()), crate::convert::ModelFormat::parse)
    }

    pub fn over(self, base: crate::convert::ConvertOptions) -> crate::convert::ConvertOptions {
        crate::convert::ConvertOptions {
            strip_media: self.strip_media.unwrap_or(base.strip_media),
            tool_output_max_chars: self
                .tool_output_max_chars
                .map(|n| n as usize)
                .or(base.tool_output_max_chars),
        }
    }
}

/// A large Rust value handed to JS as JSON text parsed by V8's `JSON.parse`: several times faster
/// than building the objects property by property through N-API.
pub struct ViaJson<T: Serialize>(pub T);

impl<T: Serialize> ToNapiValue for ViaJson<T> {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
        let text =
            serde_json::to_string(&val.0).map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let mut global = std::ptr::null_mut();
        check(sys::napi_get_global(env, &mut global))?;
        let mut json = std::ptr::null_mut();
        check(sys::napi_get_named_property(
            env,
            global,
            c"JSON".as_ptr(),
            &mut json,
        ))?;
        let mut parse = std::ptr::null_mut();
        check(sys::napi_get_named_property(
            env,
            json,
            c"parse".as_ptr(),
            &mut parse,
        ))?;
        let mut arg = std::ptr::null_mut();
        check(sys::napi_create_string_utf8(
            env,
            text.as_ptr().cast(),
            text.len() as isize,
            &mut arg,
        ))?;
        let mut out = std::ptr::null_mut();
        check(sys::napi_call_function(env, json, parse, 1, &arg, &mut out))?;
        Ok(out)
    }
}

impl<T: Serialize> TypeName for ViaJson<T> {
    fn type_name() -> &'static str {
        "Object"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

fn check(status: sys::napi_status) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::from_reason(format!(
            "N-API call failed with status {status}"
        )))
    }
}
