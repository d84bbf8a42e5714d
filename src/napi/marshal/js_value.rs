//! JS values to JSON with JSON.stringify's reading of what JSON cannot hold: a non-finite number
//! becomes null, and `undefined`, functions and symbols are left out of objects (null in arrays).
//! So a NaN token count reaches validation, which names the message and the field, instead of
//! failing the conversion. Nesting is bounded (which also stops cycles).

use std::ptr;

use napi::bindgen_prelude::FromNapiValue;
use napi::sys;
use serde_json::{Map, Number, Value};

/// Deeper values are rejected (JSON parsers commonly stop at 128; tool arguments rarely pass 20).
pub const MAX_DEPTH: usize = 512;

fn check(status: sys::napi_status, what: &str) -> Result<(), String> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(format!("could not read {what} from JS"))
    }
}

/// # Safety
/// `env` and `v` must be live handles of the current call.
unsafe fn type_of(env: sys::napi_env, v: sys::napi_value) -> Result<sys::napi_valuetype, String> {
    let mut t = 0;
    // SAFETY: live handles (the caller's contract); `t` is a valid local.
    check(unsafe { sys::napi_typeof(env, v, &mut t) }, "a value's type")?;
    Ok(t)
}

/// Where the reader is, and the first problem it met. A value too deep becomes null and is
/// reported here, so the caller still sees the rest (a message's id, say) when it explains.
#[derive(Default)]
pub struct Reader {
    path: Vec<String>,
    pub problem: Option<String>,
    /// Where the first NaN or infinity was (`.a.b: …`): JSON holds none, so it reads as null,
    /// which options would take for "the default".
    pub non_finite: Option<String>,
}

/// Path segments are kept this deep (enough to say where, without a cost on every value).
const PATH_DEPTH: usize = 4;

impl Reader {
    fn enter(&mut self, depth: usize, segment: impl FnOnce() -> String) {
        if depth < PATH_DEPTH {
            self.path.push(segment());
        }
    }

    fn leave(&mut self, depth: usize) {
        if depth < PATH_DEPTH {
            self.path.pop();
        }
    }

    fn report(&mut self, depth: usize, what: &str) {
        if self.problem.is_none() {
            let more = if depth > PATH_DEPTH { "…" } else { "" };
            let path = self.path.concat();
            self.problem = Some(if path.is_empty() { what.to_string() } else { format!("{path}{more}: {what}") });
        }
    }
}

/// Reads `v`; `None` for what JSON leaves out (`undefined`, functions, symbols).
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
pub unsafe fn from_js(
    env: sys::napi_env,
    v: sys::napi_value,
    depth: usize,
    r: &mut Reader,
) -> Result<Option<Value>, String> {
    // SAFETY: `env` and `v` are live handles of this call (the caller's contract). The same holds
    // for every call below ("as above"): out-pointers are valid locals, and a handle N-API returns
    // (an element, a property) lives in the call's handle scope, so the recursive reads get live
    // handles too.
    Ok(Some(match unsafe { type_of(env, v)? } {
        sys::ValueType::napi_undefined | sys::ValueType::napi_function | sys::ValueType::napi_symbol => {
            return Ok(None)
        }
        sys::ValueType::napi_null => Value::Null,
        sys::ValueType::napi_boolean => {
            let mut b = false;
            // SAFETY: as above; `v` is a boolean.
            check(unsafe { sys::napi_get_value_bool(env, v, &mut b) }, "a boolean")?;
            Value::Bool(b)
        }
        sys::ValueType::napi_number => {
            let mut n = 0.0;
            // SAFETY: as above; `v` is a number.
            check(unsafe { sys::napi_get_value_double(env, v, &mut n) }, "a number")?;
            if !n.is_finite() && r.non_finite.is_none() {
                let path = r.path.concat();
                let at = if path.is_empty() || path.starts_with('[') { path } else { format!(".{path}") };
                r.non_finite = Some(format!("{at}: must be a finite number, got {n}"));
            }
            number(n)
        }
        sys::ValueType::napi_bigint => {
            let (mut n, mut lossless) = (0i64, false);
            // SAFETY: as above; `v` is a bigint.
            check(unsafe { sys::napi_get_value_bigint_int64(env, v, &mut n, &mut lossless) }, "a bigint")?;
            if !lossless {
                r.report(depth, "a bigint does not fit in 64 bits");
                return Ok(Some(Value::Null));
            }
            Value::Number(n.into())
        }
        // SAFETY: as above; `v` is a string.
        sys::ValueType::napi_string => Value::String(unsafe { string(env, v)? }),
        sys::ValueType::napi_object => {
            if depth >= MAX_DEPTH {
                r.report(depth, &format!("nested deeper than {MAX_DEPTH} levels (or a cycle)"));
                return Ok(Some(Value::Null));
            }
            let mut is_array = false;
            // SAFETY: as above.
            check(unsafe { sys::napi_is_array(env, v, &mut is_array) }, "an array")?;
            // SAFETY: as above.
            if let Some(tag) = (!is_array).then(|| unsafe { super::binary::read_typed(env, v) }).flatten() {
                tag
            } else if is_array {
                // SAFETY: as above; `v` is an array.
                Value::Array(unsafe { array(env, v, depth, r)? })
            } else {
                // SAFETY: as above; `v` is an object.
                Value::Object(unsafe { object(env, v, depth, r)? })
            }
        }
        _ => return Ok(None),
    }))
}

fn number(n: f64) -> Value {
    if !n.is_finite() {
        Value::Null
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::Number((n as i64).into())
    } else {
        Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// A JS string's text. napi-rs reads it with the same two calls this reader made by hand, and
/// trusts N-API's UTF-8 (lone surrogates become U+FFFD) instead of checking it again.
///
/// # Safety
/// `env` and `v` must be live handles of the current call, `v` a string.
unsafe fn string(env: sys::napi_env, v: sys::napi_value) -> Result<String, String> {
    // SAFETY: the caller's contract.
    unsafe { String::from_napi_value(env, v) }.map_err(|_| "could not read a string from JS".into())
}

/// # Safety
/// `env` and `v` must be live handles of the current call, `v` an array.
unsafe fn array(env: sys::napi_env, v: sys::napi_value, depth: usize, r: &mut Reader) -> Result<Vec<Value>, String> {
    let mut len = 0u32;
    // SAFETY: live handles (the caller's contract) and a valid out-pointer. The same holds for
    // every call below ("as above"); each element handle lives in the call's handle scope.
    check(unsafe { sys::napi_get_array_length(env, v, &mut len) }, "an array's length")?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let mut element = ptr::null_mut();
        // SAFETY: as above; `i` is below the length.
        check(unsafe { sys::napi_get_element(env, v, i, &mut element) }, "an array element")?;
        r.enter(depth, || format!("[{i}]"));
        // SAFETY: as above.
        out.push(unsafe { from_js(env, element, depth + 1, r)? }.unwrap_or(Value::Null));
        r.leave(depth);
    }
    Ok(out)
}

/// # Safety
/// `env` and `v` must be live handles of the current call, `v` an object.
unsafe fn object(
    env: sys::napi_env,
    v: sys::napi_value,
    depth: usize,
    r: &mut Reader,
) -> Result<Map<String, Value>, String> {
    let mut keys = ptr::null_mut();
    check(
        // SAFETY: live handles (the caller's contract) and a valid out-pointer. The same holds for
        // every call below ("as above"); `keys`, each key and each value live in the call's
        // handle scope.
        unsafe {
            sys::napi_get_all_property_names(
                env,
                v,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut keys,
            )
        },
        "an object's keys",
    )?;
    let mut len = 0u32;
    // SAFETY: as above; `keys` is an array.
    check(unsafe { sys::napi_get_array_length(env, keys, &mut len) }, "an object's keys")?;
    if len == 0 {
        // An `ArrayBuffer` or a `URL` (AI SDK file data) has no own keys: read as its tag.
        // SAFETY: as above.
        if let Some(Value::Object(tag)) = unsafe { super::binary::read_keyless(env, v) } {
            return Ok(tag);
        }
    }
    let mut out = Map::new();
    for i in 0..len {
        let mut key = ptr::null_mut();
        // SAFETY: as above; `i` is below the length.
        check(unsafe { sys::napi_get_element(env, keys, i, &mut key) }, "a key")?;
        // SAFETY: as above; the keys were converted to strings.
        let name = unsafe { string(env, key)? };
        let mut value = ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { sys::napi_get_property(env, v, key, &mut value) }, "a property")?;
        r.enter(depth, || if depth == 0 { name.clone() } else { format!(".{name}") });
        // SAFETY: as above.
        let value = unsafe { from_js(env, value, depth + 1, r)? };
        r.leave(depth);
        if let Some(value) = value {
            out.insert(name, value);
        }
    }
    Ok(out)
}

/// Reads only the properties `names` of the object `v` (those it lacks or leaves `undefined` are
/// left out): what a call needs of a large object, without reading the rest.
///
/// # Safety
/// `env` and `v` must be live handles of the current call, `v` an object.
pub unsafe fn named_properties(
    env: sys::napi_env,
    v: sys::napi_value,
    names: &[&str],
    r: &mut Reader,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for &name in names {
        let key = std::ffi::CString::new(name).map_err(|_| format!("{name:?}: not a property name"))?;
        let mut value = ptr::null_mut();
        // SAFETY: `env` and `v` are live handles of this call (the caller's contract); `key` is a
        // NUL-terminated string that outlives the call; `value` is a valid out-pointer.
        check(unsafe { sys::napi_get_named_property(env, v, key.as_ptr(), &mut value) }, "a property")?;
        r.enter(0, || name.to_string());
        // SAFETY: `value` was just returned by N-API for this call, so it is a live handle.
        let value = unsafe { from_js(env, value, 1, r)? };
        r.leave(0);
        if let Some(value) = value {
            out.insert(name.to_string(), value);
        }
    }
    Ok(out)
}
