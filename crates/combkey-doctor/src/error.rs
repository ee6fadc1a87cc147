//! The doctor's error: what went wrong, and whether anything was changed.

use std::fmt;

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A bad argument: an unknown table or column, a URL of no known database or not in a
    /// form this tool reads (refused before any connection).
    Usage,
    /// The database could not be reached or refused the login (no server at the address, a
    /// wrong password, an unknown database); nothing was read or changed.
    Connection,
    /// The doctor refused before changing anything: something it cannot keep as it was, or
    /// values it cannot read (the message names them and what to do).
    Refused,
    /// A wait for a lock passed the lock timeout; nothing of the step was changed.
    LockTimeout,
    /// The transaction lost a race with another (a deadlock, a serialization failure) and
    /// was rolled back; it may be retried.
    Conflict,
    /// The database failed a statement. A change that was one transaction was rolled back;
    /// a journaled change (MySQL/MariaDB DDL) finishes when run again.
    Database,
    /// A check after the change failed (an orphaned row, a definition that differs): the
    /// change was rolled back where it was one transaction.
    Verification,
    /// Writing the output (`--migration-sql`'s script) or the audit's scratch files (its
    /// check of keys that would become one, in the temporary directory) failed; nothing was
    /// changed.
    Output,
    /// The change committed (every key is converted), and a check after the commit failed: a
    /// table's definition that another session changed meanwhile, a lock the check waited for
    /// too long. The message says which.
    AfterCommit,
    /// The keys are converted, and something the run was asked to put in place is not (the
    /// default or trigger of `--set-default`, which waited for another session's lock in short
    /// tries and gave up): the message says what is missing, what it breaks, and to run the same
    /// command again to put it in place.
    Incomplete,
}

/// A doctor error: its kind and a message that says what was found and what to do. Never
/// holds a password from the connection URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// The database's error code (SQLSTATE, or MySQL's number), where a statement failed.
    code: Option<String>,
    /// What kind of I/O error, for an [`ErrorKind::Output`] error.
    io: Option<std::io::ErrorKind>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into(), code: None, io: None }
    }

    /// The same error with the database's error code.
    pub(crate) fn with_code(mut self, code: String) -> Self {
        self.code = (!code.is_empty()).then_some(code);
        self
    }

    /// The database's error code, where a statement failed.
    pub(crate) fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// Writing the output failed.
    pub(crate) fn output(e: std::io::Error) -> Self {
        Error { io: Some(e.kind()), ..Error::new(ErrorKind::Output, format!("writing the output: {e}")) }
    }

    /// Writing a scratch file of the audit's failed (`message` says which, and why).
    pub(crate) fn scratch(message: String) -> Self {
        Error::new(ErrorKind::Output, message)
    }

    /// For an [`ErrorKind::Output`] error, the I/O error's kind (a closed pipe is
    /// [`BrokenPipe`](std::io::ErrorKind::BrokenPipe)).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.io
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Usage, message)
    }

    /// A catalog answer or a value of the database not in the shape expected: what, what was
    /// found, what was expected.
    pub(crate) fn config(what: &str, found: impl fmt::Display, expected: impl fmt::Display) -> Self {
        Error::usage(format!("invalid {what}: expected {expected}, found {found}"))
    }

    pub(crate) fn refused(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Refused, message)
    }

    /// The kind of failure.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use combkey_doctor::{Doctor, ErrorKind};
    ///
    /// let err = Doctor::connect("oracle://db/shop").await.err().unwrap();
    /// assert_eq!(err.kind(), ErrorKind::Usage);
    /// # }
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The same error with `hint` after its message.
    pub(crate) fn with_hint(mut self, hint: &str) -> Self {
        self.message.push_str(hint);
        self
    }

    /// The same error with `context: ` before its message.
    pub(crate) fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<combkey::Error> for Error {
    fn from(e: combkey::Error) -> Self {
        Error::usage(e.to_string())
    }
}
