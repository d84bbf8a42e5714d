//! A transcript given as a file path or as its text (`importTranscript`'s one argument).

use std::path::Path;

use super::{import_transcript_with, Format, Imported, Warning};
use crate::error::{CfError, Code, Result};

/// Imports `path_or_text`: text that starts like JSON (or is blank) is the transcript itself;
/// anything else names a file, read as UTF-8 (invalid bytes are replaced, with a warning at line
/// 0). `aborted` is polled as in [`import_transcript_with`].
pub fn import_path_or_text(path_or_text: &str, format: Option<Format>, aborted: &dyn Fn() -> bool) -> Result<Imported> {
    let (loaded, mut warnings) = load(path_or_text)?;
    let text = loaded.as_deref().unwrap_or(path_or_text);
    let mut imported = import_transcript_with(text, format, aborted)?;
    if !warnings.is_empty() {
        warnings.append(&mut imported.warnings);
        imported.warnings = warnings;
    }
    Ok(imported)
}

/// The file's text when `path_or_text` names one (`None`: it is the text), and what reading it
/// replaced.
fn load(path_or_text: &str) -> Result<(Option<String>, Vec<Warning>)> {
    let trimmed = path_or_text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') || trimmed.is_empty() {
        return Ok((None, Vec::new()));
    }
    let bytes = std::fs::read(Path::new(path_or_text)).map_err(|e| {
        let code = if e.kind() == std::io::ErrorKind::NotFound { Code::NotFound } else { Code::Io };
        CfError::new(code, format!("cannot read {path_or_text:?}: {e}"))
    })?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok((Some(text), Vec::new())),
        Err(e) => {
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let replaced =
                Warning { line: 0, message: "the file is not valid UTF-8; invalid bytes were replaced".into() };
            Ok((Some(text), vec![replaced]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAT: &str = r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]"#;

    fn import(path_or_text: &str) -> Result<Imported> {
        import_path_or_text(path_or_text, Some(Format::OpenAiChat), &|| false)
    }

    #[test]
    fn text_that_starts_like_json_is_the_transcript() {
        let direct = import(&format!("\u{feff}  {CHAT}")).unwrap();
        assert_eq!(direct.messages.len(), 2);
        assert!(direct.warnings.is_empty());
    }

    #[test]
    fn anything_else_names_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.json");
        std::fs::write(&path, CHAT).unwrap();
        let from_file = import(path.to_str().unwrap()).unwrap();
        assert_eq!(from_file.messages, import(CHAT).unwrap().messages);

        let missing = import(dir.path().join("missing.json").to_str().unwrap()).unwrap_err();
        assert_eq!(missing.code, Code::NotFound);
        assert_eq!(import(dir.path().to_str().unwrap()).unwrap_err().code, Code::Io);
    }

    #[test]
    fn a_file_that_is_not_utf8_is_read_with_a_warning_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.json");
        let mut bytes = br#"[{"role":"user","content":"hi "#.to_vec();
        bytes.push(0xff);
        bytes.extend_from_slice(br#""}]"#);
        std::fs::write(&path, bytes).unwrap();
        let imported = import(path.to_str().unwrap()).unwrap();
        assert_eq!(imported.messages.len(), 1);
        assert_eq!(imported.warnings[0].line, 0);
        assert!(imported.warnings[0].message.contains("not valid UTF-8"));
    }

    #[test]
    fn stops_when_aborted() {
        let err = import_path_or_text(CHAT, None, &|| true).unwrap_err();
        assert_eq!(err.code, Code::Aborted);
    }
}
