//! Message text, held once and shared. Cloning a message shares its texts, and a long ASCII text
//! reaches JS as an external string over these same bytes: handing a long context to JS neither
//! copies its text nor reads it (see `napi::marshal`). Whether a text is ASCII is decided once,
//! when it is made, while its bytes are in cache.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone)]
pub struct Text {
    bytes: Arc<str>,
    ascii: bool,
}

impl Text {
    pub fn as_str(&self) -> &str {
        &self.bytes
    }

    pub fn is_ascii(&self) -> bool {
        self.ascii
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::from("")
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.bytes
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text { ascii: s.is_ascii(), bytes: Arc::from(s) }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text { ascii: s.is_ascii(), bytes: Arc::from(s) }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.bytes == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.bytes == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.bytes == **other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.bytes, f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.bytes)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        d.deserialize_str(TextVisitor)
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
    fn clones_share_their_bytes() {
        let t = Text::from("x".repeat(2000));
        let c = t.clone();
        assert_eq!(t.as_str().as_ptr(), c.as_str().as_ptr());
        assert_eq!(Text::default(), "");
    }
}
