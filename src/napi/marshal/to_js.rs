//! Rust values handed to JS as objects built in place: a serde `Serializer` whose output is
//! `napi_value`s. Long ASCII strings (tool outputs, file contents) become external strings outside
//! the JS heap, so V8 neither decodes them nor moves them through its young generation; a 50 MB
//! context reaches JS several times faster than as JSON text. A message's own texts (`Shared`) are
//! shared with JS as they are; other long strings point at a copy.

use rustc_hash::FxHashMap;
use std::ffi::c_void;
use std::ptr;
use std::sync::OnceLock;

use napi::bindgen_prelude::{Env, JsValue, Unknown};
use napi::sys::{self, napi_env, napi_status, napi_value};
use serde::ser::{self, Serialize};

/// Shorter strings are copied into the JS heap (V8 would copy them anyway).
const EXTERNAL_MIN: usize = 1024;
/// Longer property names are not worth remembering.
const KEY_CACHED: usize = 64;
/// String values this short are shared like property names.
const VALUE_CACHED: usize = 16;
/// Names remembered per call at most: the ones that repeat (keys, roles, part types) come early;
/// unique short values (message ids) would only grow the table, on fresh pages each call.
const KEYS_MAX: usize = 256;

type ExternalLatin1 = unsafe extern "C" fn(
    env: napi_env,
    str_: *const std::os::raw::c_char,
    length: isize,
    finalize: sys::napi_finalize,
    hint: *mut c_void,
    result: *mut napi_value,
    copied: *mut bool,
) -> napi_status;

/// `node_api_create_external_string_latin1` when this Node has it (20.4 and later); looked up
/// at run time so older runtimes fall back to copying instead of failing to load the addon.
fn external_latin1() -> Option<ExternalLatin1> {
    static FOUND: OnceLock<Option<ExternalLatin1>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        #[cfg(unix)]
        {
            // SAFETY: dlsym with a NUL-terminated name, searching the loaded images.
            let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"node_api_create_external_string_latin1".as_ptr()) };
            // SAFETY: a non-null result is Node's exported function of that name, whose C signature
            // (js_native_api.h) is ExternalLatin1; it stays loaded as long as the process.
            (!f.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, ExternalLatin1>(f) })
        }
        #[cfg(not(unix))]
        None
    })
}

/// Text whose bytes stay where they are while it is owned and moved: a `String`'s heap buffer, a
/// transcript block's shared one (the session keeps it too). An external string points at them.
pub trait Stable {
    fn text(&self) -> &str;
    fn is_ascii(&self) -> bool {
        self.text().is_ascii()
    }
}

impl Stable for String {
    fn text(&self) -> &str {
        self
    }
}

impl Stable for crate::message::Text {
    fn text(&self) -> &str {
        self
    }
    fn is_ascii(&self) -> bool {
        crate::message::Text::is_ascii(self)
    }
}

impl Stable for crate::summary_input::Block {
    fn text(&self) -> &str {
        &self.text
    }
    fn is_ascii(&self) -> bool {
        self.ascii
    }
}

/// Frees what an external string pointed at: its owner, boxed in the hint.
///
/// # Safety
/// `hint` must be a `Box<T>` that `external` leaked, and this its only call for that box.
unsafe extern "C" fn drop_owner<T: Stable>(_env: napi_env, _data: *mut c_void, hint: *mut c_void) {
    // SAFETY: `hint` is the Box<T> that `external` leaked for this string; Node calls the
    // finalizer once (and `external` calls it only when Node will not), so it is freed once.
    drop(unsafe { Box::from_raw(hint.cast::<T>()) });
}

/// An external JS string over the bytes of `s` (ASCII, so valid Latin-1), which V8 holds from
/// here on: its owner is dropped when the string is collected, or at once when Node copies them.
/// `env` is a builder's (see `Builder`).
fn external<T: Stable>(env: napi_env, create: ExternalLatin1, s: T) -> Result<napi_value> {
    let (data, len) = (s.text().as_ptr(), s.text().len() as isize);
    // The bytes stay where they are when their owner is moved into its box (`Stable`).
    let hint = Box::into_raw(Box::new(s)).cast::<c_void>();
    let (mut out, mut copied) = (ptr::null_mut(), false);
    // SAFETY: a live `env` (see `Builder`); `data` holds `len` ASCII bytes owned by the boxed
    // owner, which the finalizer drops once Node is done with them (Node calls it once, right
    // away when it copies); the out-pointers are valid locals.
    let status = unsafe { create(env, data.cast(), len, Some(drop_owner::<T>), hint, &mut out, &mut copied) };
    if status != sys::Status::napi_ok {
        // SAFETY: on failure Node never calls the finalizer, so the box is freed here, once.
        unsafe { drop_owner::<T>(env, ptr::null_mut(), hint) };
        check(status, "creating an external string")?;
    }
    Ok(out)
}

/// `strings` as a JS array. The long ASCII ones become external strings over their own buffers,
/// not copied (a compaction's transcript blocks: most of what it hands to JS).
pub fn strings<T: Stable>(env: &Env, strings: Vec<T>) -> Result<napi_value> {
    let mut b = Builder::new(env);
    for s in strings {
        let value = b.owned_string(s)?;
        b.elements.push(value);
    }
    b.array_of(0)
}

/// `object[name]`. A raw call with a static C name, as `set`.
pub fn get<'env>(env: &'env Env, object: &Unknown, name: &std::ffi::CStr) -> Result<Unknown<'env>> {
    let mut out = ptr::null_mut();
    // SAFETY: `env` and `object` are live handles of the current call (borrowed for it), `name`
    // is NUL-terminated, `out` is a valid local.
    let status = unsafe { sys::napi_get_named_property(env.raw(), object.raw(), name.as_ptr(), &mut out) };
    check(status, "reading a property")?;
    // SAFETY: `out` is a live value of this call's handle scope.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), out) })
}

/// Sets `object[name]` (an existing property keeps its place). A raw call with a static C name:
/// napi-rs's `set_named_property` would make a `CString` of it.
pub fn set(env: &Env, object: &Unknown, name: &std::ffi::CStr, value: napi_value) -> Result<()> {
    // SAFETY: `env` and `object` are live handles of the current call (borrowed for it), `value`
    // was made in it (by `strings`); `name` is NUL-terminated and outlives the call.
    check(unsafe { sys::napi_set_named_property(env.raw(), object.raw(), name.as_ptr(), value) }, "setting a property")
}

#[derive(Debug)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

type Result<T> = std::result::Result<T, Error>;

fn check(status: napi_status, doing: &str) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(Error(format!("{doing} failed (napi status {status})")))
    }
}

/// Serializes `value` into a JS value in `env`'s current handle scope.
pub fn build<T: Serialize + ?Sized>(env: &Env, value: &T) -> Result<napi_value> {
    value.serialize(&mut Builder::new(env))
}

/// Texts a value about to be built shows, by where their bytes are: a long one becomes an
/// external string over those bytes, which it shares, rather than over a copy. Its bytes are not
/// read, not even to see whether they are ASCII: the text knows.
#[derive(Default)]
pub struct Shared(FxHashMap<usize, crate::message::Text>);

impl Shared {
    pub fn add(&mut self, text: &crate::message::Text) {
        if text.len() >= EXTERNAL_MIN {
            self.0.insert(text.as_ptr() as usize, text.clone());
        }
    }

    /// The text whose bytes `s` is, all of them.
    fn take(&mut self, s: &str) -> Option<crate::message::Text> {
        self.0.remove(&(s.as_ptr() as usize)).filter(|t| t.len() == s.len())
    }
}

/// `build`, where the long texts of `shared` are shared with JS rather than copied.
pub fn build_sharing<T: Serialize + ?Sized>(env: &Env, value: &T, shared: Shared) -> Result<napi_value> {
    value.serialize(&mut Builder { shared, ..Builder::new(env) })
}

/// What every value of one serialization shares: the environment, and the property names made so
/// far (the same few names recur on every message).
///
/// `env` is the live environment of the N-API call that made the builder (`build` and `strings`
/// are called with the `env` of the entry point running), and the builder lives no longer than
/// that call: so every raw call below gets a live `env`, and every handle it passes was made by
/// this builder in the call's handle scope, which keeps it alive until the call returns.
struct Builder {
    env: napi_env,
    external: Option<ExternalLatin1>,
    keys: FxHashMap<Box<str>, napi_value>,
    /// Field and variant names (`&'static str`) by where they are: found without hashing text.
    names: FxHashMap<(usize, usize), napi_value>,
    /// Fields of the objects being built, innermost last.
    props: Vec<sys::napi_property_descriptor>,
    /// Elements of the arrays being built, innermost last.
    elements: Vec<napi_value>,
    /// `PUSH_ALL`, compiled when first needed.
    push_all: Option<napi_value>,
    shared: Shared,
}

/// Arrays this long are filled by a JS call per `ARGS_MAX` elements: `napi_set_element` looks each
/// index up as a property, which costs most of handing a plan's 10,000 blocks to JS.
const BULK_MIN: usize = 32;
/// Elements per call: they go on V8's stack as arguments.
const ARGS_MAX: usize = 8192;
const PUSH_ALL: &str = "(function (out, ...values) { out.push(...values) })";

impl Builder {
    fn new(env: &Env) -> Builder {
        Builder {
            env: env.raw(),
            external: external_latin1(),
            keys: FxHashMap::default(),
            names: FxHashMap::default(),
            props: Vec::new(),
            elements: Vec::new(),
            push_all: None,
            shared: Shared::default(),
        }
    }

    /// An array of `elements[from..]`, which it drops from the stack.
    fn array_of(&mut self, from: usize) -> Result<napi_value> {
        let n = self.elements.len() - from;
        if n < BULK_MIN {
            let array = self.array(n)?;
            for (i, &v) in self.elements[from..].iter().enumerate() {
                self.push(array, i as u32, v)?;
            }
            self.elements.truncate(from);
            return Ok(array);
        }
        let push_all = self.push_all()?;
        let mut array = ptr::null_mut();
        // SAFETY: a live `env` (see `Builder`); `array` is a valid local.
        check(unsafe { sys::napi_create_array(self.env, &mut array) }, "creating an array")?;
        let mut argv = Vec::with_capacity(ARGS_MAX.min(n) + 1);
        for chunk in self.elements[from..].chunks(ARGS_MAX) {
            argv.clear();
            argv.push(array);
            argv.extend_from_slice(chunk);
            let mut out = ptr::null_mut();
            // SAFETY: a live `env`; `push_all` is a function and `argv` holds `argv.len()` handles,
            // all made in this call's scope; `out` is a valid local. `array` is the receiver too:
            // any object will do, the function does not read `this`.
            let status =
                unsafe { sys::napi_call_function(self.env, array, push_all, argv.len(), argv.as_ptr(), &mut out) };
            check(status, "filling an array")?;
        }
        self.elements.truncate(from);
        Ok(array)
    }

    fn push_all(&mut self) -> Result<napi_value> {
        if let Some(f) = self.push_all {
            return Ok(f);
        }
        let (mut source, mut f) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: a live `env`; `PUSH_ALL` is ASCII of the given length; the out-pointers are
        // valid locals. The script is an expression whose value is the function.
        unsafe {
            check(
                sys::napi_create_string_latin1(
                    self.env,
                    PUSH_ALL.as_ptr().cast(),
                    PUSH_ALL.len() as isize,
                    &mut source,
                ),
                "creating a string",
            )?;
            check(sys::napi_run_script(self.env, source, &mut f), "compiling PUSH_ALL")?;
        }
        self.push_all = Some(f);
        Ok(f)
    }

    fn string(&mut self, s: &str) -> Result<napi_value> {
        if s.len() >= EXTERNAL_MIN {
            if let Some(text) = self.shared.take(s) {
                return self.owned_string(text);
            }
        }
        let ascii = s.is_ascii();
        if let Some(create) = self.external_for(s.len(), ascii) {
            return external(self.env, create, s.to_owned());
        }
        self.copied_string(s, ascii)
    }

    /// `s` copied into the JS heap, `ascii` telling how to read it.
    fn copied_string(&self, s: &str, ascii: bool) -> Result<napi_value> {
        let mut out = ptr::null_mut();
        let len = s.len() as isize;
        let status = if ascii {
            // SAFETY: a live `env` (see `Builder`); `s` outlives the call and holds `len` ASCII
            // bytes, so valid Latin-1; `out` is a valid local.
            unsafe { sys::napi_create_string_latin1(self.env, s.as_ptr().cast(), len, &mut out) }
        } else {
            // SAFETY: as above, with `len` bytes of UTF-8.
            unsafe { sys::napi_create_string_utf8(self.env, s.as_ptr().cast(), len, &mut out) }
        };
        check(status, "creating a string")?;
        Ok(out)
    }

    /// `string` of text the caller gives up: an external string takes its buffer as it is.
    fn owned_string<T: Stable>(&self, s: T) -> Result<napi_value> {
        let ascii = s.is_ascii();
        match self.external_for(s.text().len(), ascii) {
            Some(create) => external(self.env, create, s),
            None => self.copied_string(s.text(), ascii),
        }
    }

    /// How to make text of `len` bytes an external string, when it is long and `ascii` and this
    /// Node can.
    fn external_for(&self, len: usize, ascii: bool) -> Option<ExternalLatin1> {
        self.external.filter(|_| len >= EXTERNAL_MIN && ascii)
    }

    fn number(&self, n: f64) -> Result<napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live `env` (see `Builder`); `out` is a valid local.
        check(unsafe { sys::napi_create_double(self.env, n, &mut out) }, "creating a number")?;
        Ok(out)
    }

    fn null(&self) -> Result<napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live `env` (see `Builder`); `out` is a valid local.
        check(unsafe { sys::napi_get_null(self.env, &mut out) }, "getting null")?;
        Ok(out)
    }

    fn object(&self) -> Result<napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live `env` (see `Builder`); `out` is a valid local.
        check(unsafe { sys::napi_create_object(self.env, &mut out) }, "creating an object")?;
        Ok(out)
    }

    fn array(&self, len: usize) -> Result<napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live `env` (see `Builder`); `out` is a valid local.
        check(unsafe { sys::napi_create_array_with_length(self.env, len, &mut out) }, "creating an array")?;
        Ok(out)
    }

    /// `key` of a name from the program's own text (field and variant names).
    fn name(&mut self, name: &'static str) -> Result<napi_value> {
        let at = (name.as_ptr() as usize, name.len());
        if let Some(&k) = self.names.get(&at) {
            return Ok(k);
        }
        let k = self.key(name)?;
        self.names.insert(at, k);
        Ok(k)
    }

    /// A property name; short ones are made once per call.
    fn key(&mut self, name: &str) -> Result<napi_value> {
        if let Some(&k) = self.keys.get(name) {
            return Ok(k);
        }
        let k = self.string(name)?;
        if name.len() <= KEY_CACHED && self.keys.len() < KEYS_MAX {
            self.keys.insert(name.into(), k);
        }
        Ok(k)
    }

    /// Defines `object`'s own data properties (as `JSON.parse` makes them: writable, enumerable,
    /// configurable) from `props[from..]`, in one call, and drops them from the stack. Defining
    /// rather than assigning also keeps a `__proto__` key from the data an ordinary property.
    fn define(&mut self, object: napi_value, from: usize) -> Result<()> {
        let fields = &self.props[from..];
        let status = if fields.is_empty() {
            sys::Status::napi_ok
        } else {
            // SAFETY: a live `env` and handles (see `Builder`); `fields` points at `fields.len()`
            // descriptors whose names and values are handles of this call, and stays borrowed
            // (unchanged) until the call returns.
            unsafe { sys::napi_define_properties(self.env, object, fields.len(), fields.as_ptr()) }
        };
        self.props.truncate(from);
        check(status, "defining properties")
    }

    fn field(&mut self, key: napi_value, value: napi_value) {
        self.props.push(sys::napi_property_descriptor {
            utf8name: ptr::null(),
            name: key,
            method: None,
            getter: None,
            setter: None,
            value,
            attributes: sys::PropertyAttributes::writable
                | sys::PropertyAttributes::enumerable
                | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        });
    }

    fn push(&self, array: napi_value, index: u32, value: napi_value) -> Result<()> {
        // SAFETY: a live `env` and handles (see `Builder`).
        check(unsafe { sys::napi_set_element(self.env, array, index, value) }, "setting an element")
    }
}

/// An array being filled (sequences, tuples).
struct Seq<'a> {
    b: &'a mut Builder,
    /// Where this array's elements start on the builder's stack.
    from: usize,
}

/// An object being filled (maps, structs), and the pending key of a map entry.
struct Obj<'a> {
    b: &'a mut Builder,
    object: napi_value,
    /// Where this object's fields start on the builder's stack.
    from: usize,
    key: Option<napi_value>,
}

/// `{ variant: [...] }` / `{ variant: {...} }`, serde_json's layout of enum variants with data.
struct Variant<I> {
    outer: napi_value,
    name: &'static str,
    inner: I,
}

/// JS numbers are doubles, as `JSON.parse` would give them.
macro_rules! numbers {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name(self, v: $ty) -> Result<napi_value> {
            self.number(v as f64)
        })*
    };
}

/// A map key from a scalar: its text.
macro_rules! as_text {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name(self, v: $ty) -> Result<String> {
            Ok(v.to_string())
        })*
    };
}

/// A map key from what JSON cannot use as one.
macro_rules! not_a_key {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name(self, _v: $ty) -> Result<String> {
            Err(key_error())
        })*
    };
}

impl<'a> ser::Serializer for &'a mut Builder {
    type Ok = napi_value;
    type Error = Error;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Variant<Seq<'a>>;
    type SerializeMap = Obj<'a>;
    type SerializeStruct = Obj<'a>;
    type SerializeStructVariant = Variant<Obj<'a>>;

    fn serialize_bool(self, v: bool) -> Result<napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live `env` (see `Builder`); `out` is a valid local.
        check(unsafe { sys::napi_get_boolean(self.env, v, &mut out) }, "getting a boolean")?;
        Ok(out)
    }
    numbers! { serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64 }
    numbers! { serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64 }
    fn serialize_f32(self, v: f32) -> Result<napi_value> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<napi_value> {
        // As JSON would have it: no NaN or infinities.
        if v.is_finite() {
            self.number(v)
        } else {
            self.null()
        }
    }
    fn serialize_char(self, v: char) -> Result<napi_value> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<napi_value> {
        // Short values repeat (roles, part types, tool names): one JS string each per call.
        if v.len() <= VALUE_CACHED {
            self.key(v)
        } else {
            self.string(v)
        }
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<napi_value> {
        let array = self.array(v.len())?;
        for (i, &b) in v.iter().enumerate() {
            let n = self.number(b.into())?;
            self.push(array, i as u32, n)?;
        }
        Ok(array)
    }
    fn serialize_none(self) -> Result<napi_value> {
        self.null()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<napi_value> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<napi_value> {
        self.null()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<napi_value> {
        self.null()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<napi_value> {
        self.name(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> Result<napi_value> {
        let env = self.env;
        let v = value.serialize(self)?;
        if name == crate::convert::BINARY_TAG {
            // SAFETY: `v` was just made in `env`'s current scope.
            return unsafe { super::binary::write(env, v) }.map_err(Error);
        }
        Ok(v)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<napi_value> {
        let outer = self.object()?;
        let inner = value.serialize(&mut *self)?;
        wrap(self, outer, variant, inner)
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'a>> {
        Ok(Seq { from: self.elements.len(), b: self })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'a>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Variant<Seq<'a>>> {
        let outer = self.object()?;
        let inner = self.serialize_seq(Some(len))?;
        Ok(Variant { outer, name: variant, inner })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Obj<'a>> {
        let object = self.object()?;
        let from = self.props.len();
        Ok(Obj { b: self, object, from, key: None })
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Obj<'a>> {
        self.serialize_map(None)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Variant<Obj<'a>>> {
        let outer = self.object()?;
        let inner = self.serialize_map(None)?;
        Ok(Variant { outer, name: variant, inner })
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = napi_value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let v = value.serialize(&mut *self.b)?;
        self.b.elements.push(v);
        Ok(())
    }
    fn end(self) -> Result<napi_value> {
        self.b.array_of(self.from)
    }
}

impl ser::SerializeTuple for Seq<'_> {
    type Ok = napi_value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<napi_value> {
        self.b.array_of(self.from)
    }
}

impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = napi_value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<napi_value> {
        self.b.array_of(self.from)
    }
}

impl ser::SerializeMap for Obj<'_> {
    type Ok = napi_value;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.key = Some(self.b.key(&key.serialize(KeyName)?)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self.key.take().ok_or_else(|| Error("a map value without its key".into()))?;
        let v = value.serialize(&mut *self.b)?;
        self.b.field(key, v);
        Ok(())
    }
    fn end(self) -> Result<napi_value> {
        self.b.define(self.object, self.from)?;
        Ok(self.object)
    }
}

impl ser::SerializeStruct for Obj<'_> {
    type Ok = napi_value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<()> {
        let k = self.b.name(key)?;
        let v = value.serialize(&mut *self.b)?;
        self.b.field(k, v);
        Ok(())
    }
    fn end(self) -> Result<napi_value> {
        self.b.define(self.object, self.from)?;
        Ok(self.object)
    }
}

/// Puts a finished variant body under its name.
fn wrap(b: &mut Builder, outer: napi_value, name: &'static str, inner: napi_value) -> Result<napi_value> {
    let (key, from) = (b.name(name)?, b.props.len());
    b.field(key, inner);
    b.define(outer, from)?;
    Ok(outer)
}

impl ser::SerializeTupleVariant for Variant<Seq<'_>> {
    type Ok = napi_value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(&mut self.inner, value)
    }
    fn end(self) -> Result<napi_value> {
        let Seq { b, from } = self.inner;
        let array = b.array_of(from)?;
        wrap(b, self.outer, self.name, array)
    }
}

impl ser::SerializeStructVariant for Variant<Obj<'_>> {
    type Ok = napi_value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<()> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Result<napi_value> {
        let Obj { b, object, from, .. } = self.inner;
        b.define(object, from)?;
        wrap(b, self.outer, self.name, object)
    }
}

/// A map key as JSON would write it: strings as they are, numbers and booleans as text.
struct KeyName;

impl ser::Serializer for KeyName {
    type Ok = String;
    type Error = Error;
    type SerializeSeq = ser::Impossible<String, Error>;
    type SerializeTuple = ser::Impossible<String, Error>;
    type SerializeTupleStruct = ser::Impossible<String, Error>;
    type SerializeTupleVariant = ser::Impossible<String, Error>;
    type SerializeMap = ser::Impossible<String, Error>;
    type SerializeStruct = ser::Impossible<String, Error>;
    type SerializeStructVariant = ser::Impossible<String, Error>;

    fn serialize_str(self, v: &str) -> Result<String> {
        Ok(v.to_owned())
    }
    as_text! { serialize_char: char, serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64 }
    as_text! { serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64 }
    not_a_key! { serialize_f32: f32, serialize_f64: f64, serialize_bytes: &[u8] }
    fn serialize_none(self) -> Result<String> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<String> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<String> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<String> {
        Err(key_error())
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<String> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<String> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<String> {
        Err(key_error())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(key_error())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(key_error())
    }
    fn serialize_tuple_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeTupleStruct> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(key_error())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(key_error())
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(key_error())
    }
}

fn key_error() -> Error {
    Error("an object key must be a string, a number or a boolean".into())
}
