//! Errors: starting a session, and what went wrong while it recorded.

use std::io;
use std::path::PathBuf;

use framewise_format::EncodeError;

use crate::report::Report;

/// Why a session could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// Another session is recording in this process; a process records one session at a time.
    #[error("another framewise session is already recording in this process; stop it first")]
    AlreadyRunning,
    /// The capture file could not be created.
    #[error("cannot create capture file {path}: {source}")]
    CreateFile {
        /// The path asked for.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: io::Error,
    },
    /// The capture path names something a session does not record into: not a regular file
    /// (a FIFO, a device, a directory, a socket), or a file of the incident log's directory
    /// (`perf.jsonl`, `fixes.jsonl`, `bench-history.jsonl`, `profile.json`, `census.json`),
    /// which the capture would destroy (see [`crate::check_capture_path`]). Nothing was
    /// opened or written.
    #[error("cannot record into {path}: {reason}")]
    CapturePath {
        /// The path asked for.
        path: PathBuf,
        /// Why it is refused.
        reason: String,
    },
    /// The capture header or META record could not be written to the sink.
    #[error("cannot write the capture header: {0}")]
    Encode(#[from] EncodeError),
    /// The background writer thread could not be started.
    #[error("cannot start the framewise writer thread: {0}")]
    Spawn(#[source] io::Error),
    /// An environment variable of the harness holds a value that does not parse.
    #[error("environment variable {var}={value:?}: {reason}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What was expected.
        reason: String,
    },
}

/// Something that went wrong while a session recorded. The game keeps running; the session
/// stops writing and says so in its report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// Writing or flushing the sink failed (disk full, closed pipe…).
    #[error("writing the capture failed ({kind:?}) after {bytes_written} bytes: {message}")]
    Io {
        /// The I/O error's kind.
        kind: io::ErrorKind,
        /// The I/O error's message.
        message: String,
        /// Bytes the capture had received before the failure.
        bytes_written: u64,
    },
    /// A record could not be encoded.
    #[error("encoding a record failed: {message}")]
    Encode {
        /// The encoder's message.
        message: String,
    },
    /// The writer thread panicked (a bug in framewise).
    #[error("the framewise writer thread panicked")]
    WriterPanicked,
}

/// A session that stopped with an error: the error, and the report of what was recorded.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{error}")]
pub struct StopError {
    /// The first error the session met.
    pub error: SessionError,
    /// What was recorded nonetheless.
    pub report: Box<Report>,
}
