//! What a load or an open skipped or repaired, with the line it concerns.

use std::sync::{Arc, Mutex};

use super::format::Loc;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Warning {
    /// Line number (1 is the header).
    pub line: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    pub message: String,
}

impl Warning {
    pub fn at(loc: Loc, message: impl Into<String>) -> Warning {
        Warning { line: loc.line, offset: loc.offset, message: message.into() }
    }
}

/// The warnings of one store, shared with its async loads; each is kept once.
#[derive(Clone, Debug, Default)]
pub struct Warnings(Arc<Mutex<Vec<Warning>>>);

impl Warnings {
    pub fn add(&self, new: impl IntoIterator<Item = Warning>) {
        let mut list = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for w in new {
            if !list.contains(&w) {
                list.push(w);
            }
        }
    }

    pub fn list(&self) -> Vec<Warning> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_warning_is_kept_once() {
        let w = Warnings::default();
        let a = Warning::at(Loc { offset: 5, line: 2 }, "torn");
        w.add([a.clone(), a.clone()]);
        w.clone().add([a.clone(), Warning::at(Loc { offset: 9, line: 3 }, "x")]);
        assert_eq!(w.list().len(), 2);
        assert_eq!(w.list()[0], a);
    }
}
