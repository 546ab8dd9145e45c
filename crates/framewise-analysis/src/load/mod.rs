//! Loading a capture from a file or from bytes, whatever its kind.
//!
//! The kind is decided by content, not by extension: `SGPT` magic → `.sgpt`, `LCAP` →
//! `.litecap`, a JSON array or object → Chrome trace.

use std::path::{Path, PathBuf};

use crate::build::LoadOptions;
use crate::import::{chrome, litecap};
use crate::model::Capture;

pub mod sgpt;

/// A file kind this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// framewise's container.
    Sgpt,
    /// lite-profiler's buffer.
    Litecap,
    /// Chrome Trace Event JSON.
    ChromeJson,
}

/// Why a capture could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The path is a directory.
    #[error("{}: is a directory, not a capture", path.display())]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },
    /// The file is empty.
    #[error("empty input (0 bytes): not a capture")]
    Empty,
    /// Not a kind this crate reads.
    #[error("not a capture: first bytes {head:02x?} match no known format (.sgpt, .litecap, Chrome JSON)")]
    UnknownFormat {
        /// Up to the first 8 bytes.
        head: Vec<u8>,
    },
    /// A `.litecap` that does not decode.
    #[error(transparent)]
    Litecap(#[from] litecap::DecodeError),
    /// A Chrome trace that does not import.
    #[error(transparent)]
    Chrome(#[from] chrome::ChromeError),
    /// An `.sgpt` the format crate refused.
    #[error("sgpt: {message}")]
    Sgpt {
        /// What the reader said.
        message: String,
    },
}

/// The kind of a capture, from its first bytes.
pub fn detect(bytes: &[u8]) -> Option<FileKind> {
    if bytes.starts_with(b"SGPT") {
        return Some(FileKind::Sgpt);
    }
    if bytes.starts_with(&litecap::MAGIC) {
        return Some(FileKind::Litecap);
    }
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') | Some(b'{') => Some(FileKind::ChromeJson),
        _ => None,
    }
}

/// Loads a capture from bytes of any supported kind.
pub fn from_bytes(bytes: Vec<u8>, options: &LoadOptions) -> Result<Capture, LoadError> {
    if bytes.is_empty() {
        return Err(LoadError::Empty);
    }
    match detect(&bytes) {
        Some(FileKind::Sgpt) => sgpt::from_bytes(bytes, options),
        Some(FileKind::Litecap) => Ok(litecap::import(&bytes, options)?),
        Some(FileKind::ChromeJson) => Ok(chrome::import(&bytes, options)?),
        None => Err(LoadError::UnknownFormat {
            head: bytes.iter().take(8).copied().collect(),
        }),
    }
}

/// Loads a capture from a file of any supported kind.
pub fn open(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Capture, LoadError> {
    let path = path.as_ref();
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(LoadError::IsDirectory {
            path: path.to_owned(),
        });
    }
    // Peek first: an .sgpt goes to the format crate's own reader, which opens the file.
    let mut head = [0u8; 4];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(io)?;
        f.read(&mut head).map_err(io)?
    };
    if n == 0 {
        return Err(LoadError::Empty);
    }
    if detect(head.get(..n).unwrap_or(&[])) == Some(FileKind::Sgpt) {
        return sgpt::open(path, options);
    }
    let bytes = std::fs::read(path).map_err(io)?;
    from_bytes(bytes, options)
}
