//! One writer at a time: an OS lock on a sidecar `<file>.lock`.
//!
//! The lock is the operating system's (`flock` on Unix, `LockFileEx` on Windows), held by the
//! open file handle: it goes away with the process, so a writer killed with SIGKILL never leaves a
//! stale lock. It sits on a sidecar file rather than on the session file because Windows locks
//! are mandatory and would block readers. Readers never take it.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use fs4::fs_std::FileExt;

use crate::error::{CfError, Code, Result};

/// The lock file of a session file: `<path>.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Held while a store is open for writing; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct WriterLock {
    file: File,
}

impl WriterLock {
    /// Takes the lock without waiting: `CF_SESSION_LOCKED` when another writer holds it.
    pub fn acquire(path: &Path) -> Result<WriterLock> {
        let lp = lock_path(path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lp)
            .map_err(|e| super::io_error(&lp, "cannot open the lock file", &e))?;
        match FileExt::try_lock_exclusive(&file) {
            Ok(true) => Ok(WriterLock { file }),
            Ok(false) => Err(CfError::new(
                Code::SessionLocked,
                format!(
                    "{}: another writer has this session open (lock {}); open it with readOnly: true to read it",
                    path.display(),
                    lp.display()
                ),
            )),
            Err(e) => Err(super::io_error(&lp, "cannot lock", &e)),
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = FileExt::unlock(&self.file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let first = WriterLock::acquire(&path).unwrap();
        let e = WriterLock::acquire(&path).unwrap_err();
        assert_eq!(e.code, Code::SessionLocked);
        assert!(e.message.contains("s.jsonl"), "{}", e.message);
        drop(first);
        let _again = WriterLock::acquire(&path).unwrap();
        assert_eq!(lock_path(&path), dir.path().join("s.jsonl.lock"));
    }
}
