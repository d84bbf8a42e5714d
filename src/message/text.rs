//! Message text, held once and shared. Cloning a message shares its texts, and a long ASCII text
//! reaches JS as an external string over these same bytes: handing a long context to JS neither
//! copies its text nor reads it (see `napi::marshal`). Whether a text is ASCII is decided once,
//! when it is made, while its bytes are in cache.
//!
//! A store's snapshot (`store::snapshot`) keeps the texts of many messages in one buffer: the texts
//! read from it are ranges of that buffer, and while one is being written or read, `Text`'s serde
//! form is such a range (see `Snapshot`).

use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone)]
pub struct Text {
    bytes: Bytes,
    ascii: bool,
}

#[derive(Clone)]
enum Bytes {
    Own(Arc<str>),
    /// `[start, end)` of a snapshot's texts (char boundaries, checked when made).
    In(Arc<String>, usize, usize),
}

impl Text {
    pub fn as_str(&self) -> &str {
        match &self.bytes {
            Bytes::Own(s) => s,
            Bytes::In(all, start, end) => &all[*start..*end],
        }
    }

    pub fn is_ascii(&self) -> bool {
        self.ascii
    }
}

/// What `Text`'s serde form is on this thread while a snapshot is written or read.
enum Mode {
    /// Texts are appended here and written as their range.
    Writing(String),
    /// Ranges are read as texts of this buffer.
    Reading(Arc<String>),
}

thread_local! {
    static MODE: RefCell<Option<Mode>> = const { RefCell::new(None) };
}

/// Serializing and deserializing texts as ranges of one buffer, on this thread.
pub struct Snapshot;

impl Snapshot {
    /// Runs `f` with every text it serializes appended to a buffer; returns what `f` returned
    /// and the buffer.
    pub fn writing<T>(f: impl FnOnce() -> T) -> (T, String) {
        let previous = MODE.replace(Some(Mode::Writing(String::new())));
        let out = f();
        let texts = match MODE.replace(previous) {
            Some(Mode::Writing(t)) => t,
            _ => String::new(),
        };
        (out, texts)
    }

    /// Runs `f` with the ranges it deserializes read from `texts`.
    pub fn reading<T>(texts: Arc<String>, f: impl FnOnce() -> T) -> T {
        let previous = MODE.replace(Some(Mode::Reading(texts)));
        let out = f();
        MODE.replace(previous);
        out
    }
}

/// A range as it is serialized: start and length, little-endian.
fn range_bytes(start: usize, len: usize) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&(start as u64).to_le_bytes());
    out[8..].copy_from_slice(&(len as u64).to_le_bytes());
    out
}

impl Default for Text {
    fn default() -> Text {
        Text::from("")
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text { ascii: s.is_ascii(), bytes: Bytes::Own(Arc::from(s)) }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text { ascii: s.is_ascii(), bytes: Bytes::Own(Arc::from(s)) }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let range = MODE.with_borrow_mut(|mode| match mode {
            Some(Mode::Writing(texts)) => {
                let start = texts.len();
                texts.push_str(self);
                Some(range_bytes(start, self.len()))
            }
            _ => None,
        });
        match range {
            Some(r) => s.serialize_bytes(&r),
            None => s.serialize_str(self),
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        if MODE.with_borrow(|m| matches!(m, Some(Mode::Reading(_)))) {
            d.deserialize_any(TextVisitor)
        } else {
            d.deserialize_str(TextVisitor)
        }
    }
}

/// Takes the text from the parser's buffer straight into the shared one.
struct TextVisitor;

impl serde::de::Visitor<'_> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Text, E> {
        Ok(Text::from(s))
    }

    /// A range of the snapshot being read.
    fn visit_bytes<E: serde::de::Error>(self, b: &[u8]) -> Result<Text, E> {
        let bad = || E::invalid_value(serde::de::Unexpected::Bytes(b), &"a range of the snapshot's texts");
        let r: [u8; 16] = b.try_into().map_err(|_| bad())?;
        let start = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
        let len = u64::from_le_bytes(r[8..].try_into().expect("8 bytes"));
        MODE.with_borrow(|mode| {
            let Some(Mode::Reading(all)) = mode else {
                return Err(E::invalid_type(serde::de::Unexpected::Bytes(b), &self));
            };
            let start = usize::try_from(start).map_err(|_| bad())?;
            let end = start.checked_add(usize::try_from(len).map_err(|_| bad())?).ok_or_else(bad)?;
            let text = all.get(start..end).ok_or_else(bad)?;
            Ok(Text { ascii: text.is_ascii(), bytes: Bytes::In(all.clone(), start, end) })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_as_a_plain_string() {
        let t: Text = serde_json::from_str(r#""a\nb é""#).unwrap();
        assert_eq!(t, "a\nb é");
        assert!(!t.is_ascii());
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""a\nb é""#);
        let v: Text = serde_json::from_value(serde_json::json!("plain")).unwrap();
        assert!(v.is_ascii());
        assert!(serde_json::from_str::<Text>("3").is_err());
    }

    #[test]
    fn a_snapshot_holds_texts_as_ranges_of_one_buffer() {
        let texts = vec![Text::from("héllo"), Text::from(""), Text::from("plain")];
        let (encoded, all) = Snapshot::writing(|| rmp_serde::to_vec(&texts).unwrap());
        assert_eq!(all, "héllo".to_string() + "plain");
        let all = Arc::new(all);
        let back: Vec<Text> = Snapshot::reading(all.clone(), || rmp_serde::from_slice(&encoded).unwrap());
        assert_eq!(back, texts);
        assert!(!back[0].is_ascii() && back[2].is_ascii());
        assert_eq!(back[2].as_ptr(), all[all.len() - 5..].as_ptr());
        // Outside a snapshot, or out of its bounds, a range is an error, never a text.
        assert!(rmp_serde::from_slice::<Vec<Text>>(&encoded).is_err());
        let short = Arc::new("hé".to_string());
        assert!(Snapshot::reading(short, || rmp_serde::from_slice::<Vec<Text>>(&encoded)).is_err());
        let mid_char = rmp_serde::to_vec(&serde_bytes_of(range_bytes(2, 1))).unwrap();
        assert!(Snapshot::reading(all, || rmp_serde::from_slice::<Text>(&mid_char)).is_err());
        // Plain strings still read as texts while reading a snapshot.
        let plain = rmp_serde::to_vec("x").unwrap();
        assert_eq!(Snapshot::reading(Arc::new(String::new()), || rmp_serde::from_slice::<Text>(&plain).unwrap()), "x");
    }

    /// `b` serialized as msgpack bytes.
    fn serde_bytes_of(b: [u8; 16]) -> impl Serialize {
        struct B([u8; 16]);
        impl Serialize for B {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
        B(b)
    }

    #[test]
    fn clones_share_their_bytes() {
        let t = Text::from("x".repeat(2000));
        let c = t.clone();
        assert_eq!(t.as_str().as_ptr(), c.as_str().as_ptr());
        assert_eq!(Text::default(), "");
    }
}
