//! Where a session writes its capture: the sink the host names, and the opened sink the
//! format writer writes to.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

/// A sink that can also seek: the capture header is patched CLOSED at stop.
pub trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// Where a session writes its capture.
///
/// A path to a regular file or a seekable writer gets a closed capture (header patched with
/// the directory at stop); a plain stream (a pipe), or a path that names a FIFO or a device,
/// gets the directory at its end but no header patch. The
/// session owns the sink, so the sink cannot go away while the session records.
pub enum Sink {
    /// A file, created (or truncated) at start; a FIFO or a device there is written as a
    /// stream.
    Path(std::path::PathBuf),
    /// A stream that cannot seek.
    Stream(Box<dyn Write + Send>),
    /// A writer that can seek.
    Seekable(Box<dyn WriteSeek + Send>),
}

impl Sink {
    /// A stream that cannot seek (a pipe, a socket).
    pub fn stream(writer: impl Write + Send + 'static) -> Self {
        Self::Stream(Box::new(writer))
    }

    /// A writer that can seek (an in-memory cursor, an already-open file).
    pub fn seekable(writer: impl Write + Seek + Send + 'static) -> Self {
        Self::Seekable(Box::new(writer))
    }
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Path(path) => f.debug_tuple("Path").field(path).finish(),
            Self::Stream(_) => f.write_str("Stream(..)"),
            Self::Seekable(_) => f.write_str("Seekable(..)"),
        }
    }
}

impl From<std::path::PathBuf> for Sink {
    fn from(path: std::path::PathBuf) -> Self {
        Self::Path(path)
    }
}

impl From<&std::path::Path> for Sink {
    fn from(path: &std::path::Path) -> Self {
        Self::Path(path.to_owned())
    }
}

impl From<&str> for Sink {
    fn from(path: &str) -> Self {
        Self::Path(path.into())
    }
}

impl From<String> for Sink {
    fn from(path: String) -> Self {
        Self::Path(path.into())
    }
}

/// The opened sink the format writer writes to, counting what it accepted.
pub(crate) struct OpenSink {
    kind: OpenKind,
    /// Bytes accepted by `write` calls (a header patch counts again: use only for streams).
    accepted: u64,
}

enum OpenKind {
    File(BufWriter<File>),
    Stream(Box<dyn Write + Send>),
    Seekable(Box<dyn WriteSeek + Send>),
}

impl OpenSink {
    /// A file opened from a path: a regular file is sought at stop (its header patched
    /// CLOSED); anything else a path can name (a FIFO, a terminal, a device) cannot seek and
    /// is written as a stream is.
    pub(crate) fn file(file: File) -> Self {
        let regular = file.metadata().is_ok_and(|m| m.file_type().is_file());
        let buffered = BufWriter::with_capacity(64 * 1024, file);
        Self::new(if regular {
            OpenKind::File(buffered)
        } else {
            OpenKind::Stream(Box::new(buffered))
        })
    }

    pub(crate) fn stream(stream: Box<dyn Write + Send>) -> Self {
        Self::new(OpenKind::Stream(stream))
    }

    pub(crate) fn seekable(seekable: Box<dyn WriteSeek + Send>) -> Self {
        Self::new(OpenKind::Seekable(seekable))
    }

    fn new(kind: OpenKind) -> Self {
        Self { kind, accepted: 0 }
    }

    pub(crate) fn can_seek(&self) -> bool {
        !matches!(self.kind, OpenKind::Stream(_))
    }

    fn writer(&mut self) -> &mut dyn Write {
        match &mut self.kind {
            OpenKind::File(w) => w,
            OpenKind::Stream(w) => w,
            OpenKind::Seekable(w) => w,
        }
    }

    /// The capture's final length once the writer finished with it.
    pub(crate) fn final_length(&mut self) -> u64 {
        let accepted = self.accepted;
        match &mut self.kind {
            OpenKind::File(w) => w.stream_position().unwrap_or(accepted),
            OpenKind::Seekable(w) => w.stream_position().unwrap_or(accepted),
            OpenKind::Stream(_) => accepted,
        }
    }
}

impl Write for OpenSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.writer().write(buf)?;
        self.accepted += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

impl Seek for OpenSink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match &mut self.kind {
            OpenKind::File(w) => w.seek(pos),
            OpenKind::Seekable(w) => w.seek(pos),
            OpenKind::Stream(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the capture sink is a stream and cannot seek",
            )),
        }
    }
}
