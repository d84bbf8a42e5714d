//! Errors cross to JS as `Error`s whose `code` is the core's stable code; panics are caught here.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::*;

use crate::error::{CfError, Code};

/// The `code` of a thrown error.
pub struct JsCode(&'static str);

impl AsRef<str> for JsCode {
    fn as_ref(&self) -> &str {
        self.0
    }
}

pub type JsResult<T> = std::result::Result<T, napi::Error<JsCode>>;

pub fn js_err(e: CfError) -> napi::Error<JsCode> {
    napi::Error::new(JsCode(e.code.as_str()), e.message)
}

fn panic_error(panic: Box<dyn std::any::Any + Send>) -> CfError {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    CfError::new(Code::Internal, format!("internal error (please report): {what}"))
}

/// Runs `f`, turning a panic into a `CF_INTERNAL` error so it never takes the process down.
pub fn catching<T>(f: impl FnOnce() -> crate::error::Result<T>) -> crate::error::Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_error(p)))
}

/// `catching` with the error converted for JS.
pub fn guard<T>(f: impl FnOnce() -> crate::error::Result<T>) -> JsResult<T> {
    catching(f).map_err(js_err)
}

/// Builds the JS error object for an async rejection (`AbortError` for aborts).
pub fn js_error(env: &Env, e: &CfError) -> napi::Error {
    let build = || -> Result<napi::Error> {
        let mut obj = env.create_error(napi::Error::new(Status::GenericFailure, e.message.clone()))?;
        obj.set_named_property("code", e.code.as_str())?;
        if e.code == Code::Aborted {
            obj.set_named_property("name", "AbortError")?;
        }
        Ok(napi::Error::from(obj.to_unknown()))
    };
    build().unwrap_or_else(|err| err)
}
