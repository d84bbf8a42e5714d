//! A transcript given as a file or as its text (`importTranscript`'s `{ path }` or `{ text }`).

use std::path::Path;

use serde::Deserialize;

use super::{import_transcript_with, Format, Imported, Warning};
use crate::error::{CfError, Code, Result};

/// Where `importTranscript` reads a transcript: `{ path }` (a file, read as UTF-8) or `{ text }`
/// (the transcript itself). The caller says which; nothing is guessed.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "TranscriptSource"))]
pub enum Source {
    Path { path: String },
    Text { text: String },
}

/// Imports `source`. A file is read as UTF-8 (invalid bytes are replaced, with a warning at line
/// 0). `aborted` is polled as in [`import_transcript_with`].
pub fn import_source(source: &Source, format: Option<Format>, aborted: &dyn Fn() -> bool) -> Result<Imported> {
    let (text, mut warnings) = match source {
        Source::Text { text } => return import_transcript_with(text, format, aborted),
        Source::Path { path } => read(path)?,
    };
    let mut imported = import_transcript_with(&text, format, aborted)?;
    if !warnings.is_empty() {
        warnings.append(&mut imported.warnings);
        imported.warnings = warnings;
    }
    Ok(imported)
}

/// The file's text, and what reading it replaced.
fn read(path: &str) -> Result<(String, Vec<Warning>)> {
    let bytes = std::fs::read(Path::new(path)).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound { Code::NotFound } else { Code::Io };
        CfError::new(code, format!("cannot read {path:?}: {e}"))
    })?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok((text, Vec::new())),
        Err(e) => {
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let replaced =
                Warning { line: 0, message: "the file is not valid UTF-8; invalid bytes were replaced".into() };
            Ok((text, vec![replaced]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAT: &str = r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]"#;

    fn text(t: &str) -> Source {
        Source::Text { text: t.into() }
    }

    #[test]
    fn a_source_is_a_path_or_a_text_never_both() {
        let parse = |v: serde_json::Value| serde_json::from_value::<Source>(v);
        assert!(matches!(parse(serde_json::json!({ "path": "a" })).unwrap(), Source::Path { .. }));
        assert!(matches!(parse(serde_json::json!({ "text": "a" })).unwrap(), Source::Text { .. }));
        assert!(parse(serde_json::json!({ "path": "a", "text": "b" })).is_err());
        assert!(parse(serde_json::json!({})).is_err());
        assert!(parse(serde_json::json!("a")).is_err());
    }

    fn import(source: Source) -> Result<Imported> {
        import_source(&source, Some(Format::OpenAiChat), &|| false)
    }

    #[test]
    fn text_is_the_transcript_even_when_it_looks_like_a_path() {
        let direct = import(text(CHAT)).unwrap();
        assert_eq!(direct.messages.len(), 2);
        assert!(direct.warnings.is_empty());
        let err = import_source(&text("chat.json"), None, &|| false).unwrap_err();
        assert_ne!(err.code, Code::NotFound);
    }

    #[test]
    fn a_path_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.json");
        std::fs::write(&path, CHAT).unwrap();
        let from_file = import(Source::Path { path: path.to_str().unwrap().into() }).unwrap();
        assert_eq!(from_file.messages, import(text(CHAT)).unwrap().messages);

        let missing =
            import(Source::Path { path: dir.path().join("missing.json").to_str().unwrap().into() }).unwrap_err();
        assert_eq!(missing.code, Code::NotFound);
        assert_eq!(import(Source::Path { path: dir.path().to_str().unwrap().into() }).unwrap_err().code, Code::Io);
    }

    #[test]
    fn a_file_that_is_not_utf8_is_read_with_a_warning_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.json");
        let mut bytes = br#"[{"role":"user","content":"hi "#.to_vec();
        bytes.push(0xff);
        bytes.extend_from_slice(br#""}]"#);
        std::fs::write(&path, bytes).unwrap();
        let imported = import(Source::Path { path: path.to_str().unwrap().into() }).unwrap();
        assert_eq!(imported.messages.len(), 1);
        assert_eq!(imported.warnings[0].line, 0);
        assert!(imported.warnings[0].message.contains("not valid UTF-8"));
    }

    #[test]
    fn stops_when_aborted() {
        let err = import_source(&text(CHAT), None, &|| true).unwrap_err();
        assert_eq!(err.code, Code::Aborted);
    }
}
