//! Binary file data and `URL` objects of AI SDK messages across the boundary. The core keeps them
//! as JSON tags, `{__cf: 'bytes', base64, kind}` and `{__cf: 'url', href}`; the reader makes the tags
//! from `Uint8Array`, `Buffer`, `ArrayBuffer` and `URL` values, the writer makes those values from
//! the tags the converters give back ([`crate::convert::BINARY_TAG`]).

use std::ptr;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use napi::bindgen_prelude::FromNapiValue;
use napi::sys;
use serde_json::{json, Value};

fn ok(status: sys::napi_status) -> bool {
    status == sys::Status::napi_ok
}

/// A global constructor (`URL`, `Uint8Array`...), `None` where the runtime has none. Raw calls with
/// a static C name: napi-rs's `get_named_property` would make a `CString` on every typed array.
///
/// # Safety
/// `env` must be the live environment of the current call.
unsafe fn global(env: sys::napi_env, name: &std::ffi::CStr) -> Option<sys::napi_value> {
    let (mut g, mut ctor) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: `env` is live (the caller's contract), `g` is the global object it returns, `name`
    // is NUL-terminated and the out-pointers are valid locals.
    let found = unsafe {
        ok(sys::napi_get_global(env, &mut g)) && ok(sys::napi_get_named_property(env, g, name.as_ptr(), &mut ctor))
    };
    found.then_some(ctor)
}

/// Whether `v` is an instance of the global constructor `name` (false where there is none).
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
unsafe fn instance_of(env: sys::napi_env, v: sys::napi_value, name: &std::ffi::CStr) -> bool {
    let mut is = false;
    // SAFETY: the caller's contract; `ctor` is a live handle `global` just returned, `is` a local.
    unsafe { global(env, name) }.is_some_and(|ctor| unsafe { ok(sys::napi_instanceof(env, v, ctor, &mut is)) } && is)
}

/// The tag for `v` when it is a `Uint8Array` or a `Buffer` (checked on every object: one call).
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
pub unsafe fn read_typed(env: sys::napi_env, v: sys::napi_value) -> Option<Value> {
    let mut is = false;
    // SAFETY: live handles (the caller's contract); `is` is a valid local.
    if !(unsafe { ok(sys::napi_is_typedarray(env, v, &mut is)) } && is) {
        return None;
    }
    // `napi_is_buffer` is true for any Uint8Array on current Node: ask the prototype chain. Asked
    // first: `instanceof` may run JS, which must not run between reading the bytes' address and
    // the bytes.
    // SAFETY: live handles (the caller's contract).
    let kind = if unsafe { instance_of(env, v, c"Buffer") } { "Buffer" } else { "Uint8Array" };
    let (mut ty, mut len, mut data, mut buffer, mut offset) = (0, 0usize, ptr::null_mut(), ptr::null_mut(), 0usize);
    // SAFETY: as above, and `v` is a typed array; the out-pointers are valid locals.
    let read = unsafe { sys::napi_get_typedarray_info(env, v, &mut ty, &mut len, &mut data, &mut buffer, &mut offset) };
    // Only bytes are file data; other typed arrays read as the objects they are.
    if !ok(read) || ty != sys::TypedarrayType::uint8_array {
        return None;
    }
    // SAFETY: N-API gave `data` and `len` for this array's bytes, and no JS (which alone could
    // detach or free them) runs before they are read here.
    Some(bytes_tag(unsafe { bytes(data, len) }, kind))
}

/// The tag for `v` when it is an `ArrayBuffer` or a `URL`: objects without own enumerable keys,
/// so only those are checked.
///
/// # Safety
/// `env` and `v` must be live handles of the current call.
pub unsafe fn read_keyless(env: sys::napi_env, v: sys::napi_value) -> Option<Value> {
    let (mut data, mut len, mut is) = (ptr::null_mut(), 0usize, false);
    // SAFETY: live handles (the caller's contract); `is` is a valid local.
    if unsafe { ok(sys::napi_is_arraybuffer(env, v, &mut is)) } && is {
        // SAFETY: as above, and `v` is an ArrayBuffer; the out-pointers are valid locals.
        unsafe { ok(sys::napi_get_arraybuffer_info(env, v, &mut data, &mut len)) }.then_some(())?;
        // SAFETY: N-API gave `data` and `len` for this buffer's bytes, and no JS (which alone could
        // detach or free them) runs before they are read here.
        return Some(bytes_tag(unsafe { bytes(data, len) }, "ArrayBuffer"));
    }
    // SAFETY: live handles (the caller's contract).
    if !unsafe { instance_of(env, v, c"URL") } {
        return None;
    }
    let mut href = ptr::null_mut();
    // SAFETY: live handles; the name is NUL-terminated; `href` is a valid local.
    unsafe { ok(sys::napi_get_named_property(env, v, c"href".as_ptr(), &mut href)) }.then_some(())?;
    // SAFETY: `href` is a live handle just returned; a URL's `href` is a string (else this fails).
    let href = unsafe { String::from_napi_value(env, href) }.ok()?;
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

/// The value a tag object stands for: a `Buffer`, `Uint8Array`, `ArrayBuffer` or `URL`; the object
/// itself when it is no tag this reader wrote.
///
/// # Safety
/// `env` and `tag` must be live handles of the current call.
pub unsafe fn write(env: sys::napi_env, tag: sys::napi_value) -> Result<sys::napi_value, String> {
    let field = |name: &std::ffi::CStr| -> Option<String> {
        let mut v = ptr::null_mut();
        // SAFETY: live handles (the caller's contract); `name` is NUL-terminated; `v` is a local.
        unsafe { ok(sys::napi_get_named_property(env, tag, name.as_ptr(), &mut v)) }.then_some(())?;
        // SAFETY: `v` is a live handle just returned; a value that is no string fails the read.
        unsafe { String::from_napi_value(env, v) }.ok()
    };
    let mut out = ptr::null_mut();
    match field(c"__cf").as_deref() {
        Some("url") => {
            // SAFETY: `env` is live (the caller's contract).
            let (Some(ctor), Some(href)) = (unsafe { global(env, c"URL") }, field(c"href")) else { return Ok(tag) };
            let mut arg = ptr::null_mut();
            // SAFETY: `href` outlives the calls and holds `href.len()` UTF-8 bytes; `ctor` is a live
            // handle; one argument is passed from `arg`; out-pointers are valid locals.
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
                // SAFETY: `env` is live; the engine copies `bytes.len()` bytes from `bytes`, which
                // outlives the call; out-pointers are valid locals.
                Some("Buffer") => unsafe {
                    ok(sys::napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr().cast(), &mut data, &mut out))
                },
                kind => {
                    // SAFETY: `env` is live; out-pointers are valid locals.
                    let made = unsafe { ok(sys::napi_create_arraybuffer(env, bytes.len(), &mut data, &mut buffer)) };
                    if made && !bytes.is_empty() {
                        // SAFETY: the engine just allocated `bytes.len()` writable bytes at `data`,
                        // which no JS can reach yet; `bytes` is a separate Rust allocation.
                        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), bytes.len()) };
                    }
                    if kind == Some("ArrayBuffer") {
                        out = buffer;
                        made
                    } else {
                        // SAFETY: `buffer` is the live ArrayBuffer just made, `bytes.len()` long
                        // from offset 0; `out` is a valid local.
                        made && unsafe {
                            ok(sys::napi_create_typedarray(
                                env,
                                sys::TypedarrayType::uint8_array,
                                bytes.len(),
                                buffer,
                                0,
                                &mut out,
                            ))
                        }
                    }
                }
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
