//! Binary file data and `URL` objects of AI SDK messages across the boundary. The core keeps them
//! as JSON tags, `{__cf: 'bytes', base64, kind}` and `{__cf: 'url', href}`; the reader makes the tags
//! from `Uint8Array`, `Buffer`, `ArrayBuffer` and `URL` values, the writer makes those values from
//! the tags the converters give back ([`crate::convert::BINARY_TAG`]).

use std::ptr;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use napi::sys;
use serde_json::{json, Value};

fn ok(status: sys::napi_status) -> bool {
    status == sys::Status::napi_ok
}

/// A global constructor (`URL`, `Uint8Array`...), `None` where the runtime has none.
///
/// # Safety
/// `env` must be the live environment of the current call.
unsafe fn global(env: sys::napi_env, name: &std::ffi::CStr) -> Option<sys::napi_value> {
    let (mut g, mut ctor) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: `env` is live; the out-pointers are valid locals.
    let found = unsafe {
        ok(sys::napi_get_global(env, &mut g)) && ok(sys::napi_get_named_property(env, g, name.as_ptr(), &mut ctor))
    };
    found.then_some(ctor)
}

/// The tag for `v` when it is a `Uint8Array` or a `Buffer` (checked on every object: one call).
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
pub unsafe fn read_typed(env: sys::napi_env, v: sys::napi_value) -> Option<Value> {
    let (mut data, mut len, mut is) = (ptr::null_mut(), 0usize, false);
    // SAFETY (each call): `env` and `v` are live handles; the out-pointers are valid locals, and
    // `data`/`len` describe memory the engine keeps alive for the rest of this call.
    if !(unsafe { ok(sys::napi_is_typedarray(env, v, &mut is)) } && is) {
        return None;
    }
    let (mut ty, mut buffer, mut offset) = (0, ptr::null_mut(), 0usize);
    let read = unsafe { sys::napi_get_typedarray_info(env, v, &mut ty, &mut len, &mut data, &mut buffer, &mut offset) };
    // Only bytes are file data; other typed arrays read as the objects they are.
    if !ok(read) || ty != sys::TypedarrayType::uint8_array {
        return None;
    }
    // `napi_is_buffer` is true for any Uint8Array on current Node: ask the prototype chain.
    let buffer = unsafe { global(env, c"Buffer") }
        .is_some_and(|ctor| unsafe { ok(sys::napi_instanceof(env, v, ctor, &mut is)) } && is);
    let kind = if buffer { "Buffer" } else { "Uint8Array" };
    // SAFETY: as above.
    Some(bytes_tag(unsafe { bytes(data, len) }, kind))
}

/// The tag for `v` when it is an `ArrayBuffer` or a `URL`: objects without own enumerable keys,
/// so only those are checked.
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
pub unsafe fn read_keyless(env: sys::napi_env, v: sys::napi_value) -> Option<Value> {
    let (mut data, mut len, mut is) = (ptr::null_mut(), 0usize, false);
    // SAFETY (each call): as in `read_typed`.
    if unsafe { ok(sys::napi_is_arraybuffer(env, v, &mut is)) } && is {
        unsafe { ok(sys::napi_get_arraybuffer_info(env, v, &mut data, &mut len)) }.then_some(())?;
        return Some(bytes_tag(unsafe { bytes(data, len) }, "ArrayBuffer"));
    }
    let ctor = unsafe { global(env, c"URL") }?;
    let mut href = ptr::null_mut();
    let url = unsafe {
        ok(sys::napi_instanceof(env, v, ctor, &mut is))
            && is
            && ok(sys::napi_get_named_property(env, v, c"href".as_ptr(), &mut href))
    };
    let href = if url { unsafe { string(env, href) }? } else { return None };
    Some(json!({ "__cf": "url", "href": href }))
}

/// # Safety
/// `data` must point at `len` bytes alive for the current call (or be null with `len` 0).
unsafe fn bytes<'a>(data: *mut std::ffi::c_void, len: usize) -> &'a [u8] {
    if len == 0 || data.is_null() {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
    }
}

fn bytes_tag(bytes: &[u8], kind: &str) -> Value {
    json!({ "__cf": "bytes", "base64": STANDARD.encode(bytes), "kind": kind })
}

/// A JS string's UTF-8 text.
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
unsafe fn string(env: sys::napi_env, v: sys::napi_value) -> Option<String> {
    let (mut size, mut written) = (0usize, 0usize);
    // SAFETY: live handles, valid out-pointers, and a buffer of the size the engine asked for.
    unsafe { ok(sys::napi_get_value_string_utf8(env, v, ptr::null_mut(), 0, &mut size)) }.then_some(())?;
    let mut buf = vec![0u8; size + 1];
    unsafe { ok(sys::napi_get_value_string_utf8(env, v, buf.as_mut_ptr().cast(), buf.len(), &mut written)) }
        .then_some(())?;
    buf.truncate(written);
    String::from_utf8(buf).ok()
}

/// The value a tag object stands for: a `Buffer`, `Uint8Array`, `ArrayBuffer` or `URL`; the object
/// itself when it is no tag this reader wrote.
///
/// # Safety
/// `env` and `tag` must be live handles of the current call.
pub unsafe fn write(env: sys::napi_env, tag: sys::napi_value) -> Result<sys::napi_value, String> {
    // SAFETY (every call below): `env` and the handles are live; out-pointers are valid locals.
    let field = |name: &std::ffi::CStr| -> Option<String> {
        let mut v = ptr::null_mut();
        unsafe { ok(sys::napi_get_named_property(env, tag, name.as_ptr(), &mut v)) }.then_some(())?;
        unsafe { string(env, v) }
    };
    let mut out = ptr::null_mut();
    match field(c"__cf").as_deref() {
        Some("url") => {
            let (Some(ctor), Some(href)) = (unsafe { global(env, c"URL") }, field(c"href")) else { return Ok(tag) };
            let mut arg = ptr::null_mut();
            let made = unsafe {
                ok(sys::napi_create_string_utf8(env, href.as_ptr().cast(), href.len() as isize, &mut arg))
                    && ok(sys::napi_new_instance(env, ctor, 1, &arg, &mut out))
            };
            Ok(if made { out } else { tag })
        }
        Some("bytes") => {
            let Some(bytes) = field(c"base64").and_then(|b| STANDARD.decode(b).ok()) else { return Ok(tag) };
            let (mut data, mut buffer) = (ptr::null_mut(), ptr::null_mut());
            let made = match field(c"kind").as_deref() {
                Some("Buffer") => unsafe {
                    ok(sys::napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr().cast(), &mut data, &mut out))
                },
                kind => unsafe {
                    let made = ok(sys::napi_create_arraybuffer(env, bytes.len(), &mut data, &mut buffer));
                    if made && !bytes.is_empty() {
                        // SAFETY: the engine just allocated `bytes.len()` writable bytes at `data`.
                        ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len());
                    }
                    if kind == Some("ArrayBuffer") {
                        out = buffer;
                        made
                    } else {
                        made && ok(sys::napi_create_typedarray(
                            env,
                            sys::TypedarrayType::uint8_array,
                            bytes.len(),
                            buffer,
                            0,
                            &mut out,
                        ))
                    }
                },
            };
            if made {
                Ok(out)
            } else {
                Err("could not create binary data".into())
            }
        }
        _ => Ok(tag),
    }
}
