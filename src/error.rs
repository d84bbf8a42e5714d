//! Errors of the core. Every error has a stable code that reaches JS as `error.code`.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// A message or part is missing a required field or has a wrong type.
    InvalidMessage,
    /// An argument other than a message is wrong (options, encodings, ids to update).
    InvalidArgument,
    /// A message id is already in the session.
    DuplicateId,
    /// A message id that should exist does not.
    NotFound,
    /// The caller aborted the operation.
    Aborted,
    /// A transcript whose format could not be recognised (or that holds no JSON at all).
    UnknownFormat,
    /// A session file has a line that is not a valid entry (line number and byte offset given).
    CorruptSession,
    /// Another writer holds the session file's lock.
    SessionLocked,
    /// The session file does not exist (and `create: false`, or a read-only open).
    SessionNotFound,
    /// A write was attempted on a store opened with `readOnly: true`.
    ReadOnly,
    /// The store was closed.
    StoreClosed,
    /// The operating system refused a file operation (permissions, disk full, ...).
    Io,
    /// A Rust panic was caught at the boundary: a bug, never the caller's fault.
    Internal,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidMessage => "CF_INVALID_MESSAGE",
            Code::InvalidArgument => "CF_INVALID_ARGUMENT",
            Code::DuplicateId => "CF_DUPLICATE_ID",
            Code::NotFound => "CF_NOT_FOUND",
            Code::Aborted => "CF_ABORTED",
            Code::UnknownFormat => "CF_UNKNOWN_FORMAT",
            Code::CorruptSession => "CF_CORRUPT_SESSION",
            Code::SessionLocked => "CF_SESSION_LOCKED",
            Code::SessionNotFound => "CF_SESSION_NOT_FOUND",
            Code::ReadOnly => "CF_READ_ONLY",
            Code::StoreClosed => "CF_STORE_CLOSED",
            Code::Io => "CF_IO",
            Code::Internal => "CF_INTERNAL",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CfError {
    pub code: Code,
    pub message: String,
}

impl CfError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        CfError { code, message: message.into() }
    }

    pub fn invalid_message(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidMessage, message)
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArgument, message)
    }

    pub fn aborted() -> Self {
        Self::new(Code::Aborted, "the operation was aborted")
    }
}

impl fmt::Display for CfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for CfError {}

pub type Result<T> = std::result::Result<T, CfError>;
