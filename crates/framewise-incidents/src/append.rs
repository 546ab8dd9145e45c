//! The appender: one record, one line, one `write` on a file opened with `O_APPEND`.
//!
//! With `O_APPEND` the kernel moves to the end of the file and writes in one step, so lines
//! written by one `write` call each are never interleaved, even by two processes appending
//! to the same file at once (on a local file system; NFS does not keep that promise). The
//! line is built whole in memory first, newline included, and handed over in one call.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::Error;

/// Appends records to one JSONL file.
#[derive(Debug)]
pub struct Appender {
    path: PathBuf,
    file: File,
    /// The line being built, reused so steady appends do not allocate.
    line: Vec<u8>,
}

impl Appender {
    /// Opens (creating it if needed) `path` for appending. The directory must exist; a path
    /// that is there but not a regular file (a FIFO, a device) is an error, never opened.
    ///
    /// A file whose last line was torn (a writer crashed mid-line) gets a newline first, so
    /// the torn line stays one unreadable line of its own and the records appended after it
    /// read whole, instead of the first of them being glued onto it.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, Error> {
        let path = path.into();
        crate::regular_or_missing(&path)?;
        let io = |source| Error::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io)?;
        if ends_torn(&path).map_err(io)? {
            // One write: at worst (another process appended a whole line meanwhile) this
            // leaves an empty line, which readers skip.
            file.write_all(b"\n").map_err(io)?;
        }
        Ok(Self {
            path,
            file,
            line: Vec::with_capacity(1024),
        })
    }

    /// The file appended to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` as one line (compact JSON and `\n`) in one `write` call.
    pub fn append<T: Serialize>(&mut self, record: &T) -> Result<(), Error> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, record).map_err(|source| Error::Json {
            path: self.path.clone(),
            source,
        })?;
        self.line.push(b'\n');
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        let written = self.file.write(&self.line).map_err(io)?;
        if written < self.line.len() {
            // A regular file takes a whole write unless the disk is full or the call was
            // interrupted; finishing the line keeps the file readable, and the short write
            // is reported because another process may have appended in between.
            let rest = self.line.get(written..).unwrap_or_default();
            self.file.write_all(rest).map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })?;
            return Err(Error::ShortWrite {
                path: self.path.clone(),
                written,
                len: self.line.len(),
            });
        }
        Ok(())
    }
}

/// Whether the file at `path` is not empty and does not end with a newline.
fn ends_torn(path: &Path) -> std::io::Result<bool> {
    let mut file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}
