//! Where a session writes its capture: the sink the host names, and the opened sink the
//! format writer writes to.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Component, Path, PathBuf};

use crate::error::StartError;

/// A sink that can also seek: the capture header is patched CLOSED at stop.
pub trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// Where a session writes its capture.
///
/// A path to a regular file or a seekable writer gets a closed capture (header patched with
/// the directory at stop); a plain stream (a pipe) gets the directory at its end but no
/// header patch. The session owns the sink, so the sink cannot go away while the session
/// records.
pub enum Sink {
    /// A regular file, created (or truncated) at start. On Linux a FIFO whose reader is
    /// already there is written as a stream; a FIFO without one is refused at once (start
    /// never waits for a reader), and so is anything else at the path — a device, a
    /// directory, a socket — and a file of the incident log's directory
    /// ([`check_capture_path`]). A program can also hand over a pipe with [`Sink::stream`].
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

/// The files of the incident log's directory a capture must never replace, and what each is.
const LOG_FILES: [(&str, &str); 5] = [
    (
        framewise_incidents::PERF_FILE,
        "append-only (the game's memory): the capture would replace it",
    ),
    (
        framewise_incidents::FIXES_FILE,
        "append-only (the verified fixes): the capture would replace it",
    ),
    (
        framewise_incidents::BENCH_HISTORY_FILE,
        "append-only (every bench comparison): the capture would replace it",
    ),
    (
        framewise_incidents::PROFILE_FILE,
        "the rolling summary the recorder rewrites while it records: the capture would be lost",
    ),
    (
        framewise_census::CENSUS_FILE,
        "which the recorder rewrites when the game records a census: the capture would be lost",
    ),
];

/// Checks a capture path as [`SessionBuilder::start`](crate::SessionBuilder::start) does
/// before it opens one, without opening anything: the path, its symlinks followed, must name
/// a regular file or nothing yet (not a device, a directory or a socket; a FIFO passes on
/// Linux, where `start` streams into it when its reader is there and refuses it at once when
/// not, and is refused elsewhere), and must
/// not be one of the incident log's files — `perf.jsonl`, `fixes.jsonl`,
/// `bench-history.jsonl`, `profile.json`, `census.json` — in `incident_dir` (the directory
/// the session's log goes to: `framewise_incidents::locate`) or in any directory named
/// `.framewise`, whether that file exists yet or not. The path as given, every link on the
/// way and the file reached are each judged. A host can call it to refuse a path before it
/// does anything else; `start` checks again, and once the file is open, checks what it
/// opened (a FIFO made in between, a hard link to a log).
pub fn check_capture_path(path: &Path, incident_dir: Option<&Path>) -> Result<(), StartError> {
    if let Some(reason) = log_file(path, incident_dir) {
        return Err(refused(path, reason));
    }
    match std::fs::metadata(path) {
        // A FIFO is for `start` to judge: it streams into one whose reader is there.
        Ok(meta) if is_streamable_fifo(&meta) => Ok(()),
        Ok(meta) if !meta.is_file() => Err(refused(path, not_regular(&meta))),
        // Nothing there yet (or nothing reachable): opening it says why, if anything.
        _ => Ok(()),
    }
}

/// Opens the capture file at `path` for a session whose incident log goes to `incident_dir`:
/// [`check_capture_path`], then created when missing and emptied — never opened when the
/// check refuses it, and never waiting on a FIFO (it is opened non-blocking).
pub(crate) fn open_capture(path: &Path, incident_dir: Option<&Path>) -> Result<File, StartError> {
    check_capture_path(path, incident_dir)?;
    let cannot = |source: io::Error| StartError::CreateFile {
        path: path.to_owned(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    // Not truncated on open: what was opened is checked first.
    options.write(true).create(true);
    // A FIFO made at the path since the check: opening it fails at once when it has no
    // reader (ENXIO) rather than waiting for one, and is refused below when it has.
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|source| match std::fs::metadata(path) {
            // ENXIO: a FIFO nobody reads yet. Waiting for a reader would hang the game.
            Ok(meta) if is_streamable_fifo(&meta) => refused(
                path,
                "it is a FIFO with no reader yet (start the reader first: the game does not wait for one)"
                    .to_owned(),
            ),
            Ok(meta) if !meta.is_file() => refused(path, not_regular(&meta)),
            _ => cannot(source),
        })?;
    let meta = file.metadata().map_err(cannot)?;
    if is_streamable_fifo(&meta) {
        // A reader is there: written as a stream, blocking again (a full pipe waits for its
        // reader as any stream does).
        blocking(&file).map_err(cannot)?;
        return Ok(file);
    }
    if !meta.is_file() {
        return Err(refused(path, not_regular(&meta)));
    }
    if let Some(reason) = same_file_as_a_log(&meta, incident_dir) {
        return Err(refused(path, reason));
    }
    file.set_len(0).map_err(cannot)?;
    Ok(file)
}

/// Whether `meta` is a FIFO a session streams into: on Linux, where it is opened without
/// waiting for a reader (elsewhere it is refused, as opening it could wait forever).
fn is_streamable_fifo(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    cfg!(target_os = "linux") && meta.file_type().is_fifo()
}

/// Clears `O_NONBLOCK` on `file` (opened non-blocking so that a FIFO without a reader fails
/// at once): from here on, writes wait as they do on any stream.
#[cfg(target_os = "linux")]
fn blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is the open descriptor `file` owns; F_GETFL/F_SETFL only read and set its
    // status flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn blocking(_file: &File) -> io::Result<()> {
    Ok(())
}

fn refused(path: &Path, reason: String) -> StartError {
    StartError::CapturePath {
        path: path.to_owned(),
        reason,
    }
}

/// Why a file that is not a regular file cannot hold a capture.
fn not_regular(meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "no regular file"
    };
    format!(
        "it is {what}, not a regular file (a capture is recorded into a regular file; a program \
         streams one to a pipe with Sink::stream)"
    )
}

/// The log file `path` names, said as a refusal: the path itself, each symlink on the way and
/// the file reached, by name, in `incident_dir` or a directory named `.framewise`.
fn log_file(path: &Path, incident_dir: Option<&Path>) -> Option<String> {
    if let Some(reason) = framewise_output::link_chain(path)
        .iter()
        .find_map(|hop| log_file_named(hop, incident_dir))
    {
        return Some(reason);
    }
    // The file reached through directory links too (`link/perf.jsonl`, `link` a
    // `.framewise/`).
    let real = path.canonicalize().ok()?;
    log_file_named(&real, incident_dir)
}

/// [`log_file`] for one name, its links not followed.
fn log_file_named(path: &Path, incident_dir: Option<&Path>) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let (name, what) = LOG_FILES.iter().find(|(log, _)| *log == name)?;
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    in_log_dir(parent, incident_dir)
        .then(|| format!("it is the incident log's {name}, {what}; name another file"))
}

/// Whether `dir` is the incident log's directory: named `.framewise` (as written, or once its
/// links are resolved), or `incident_dir` itself.
fn in_log_dir(dir: &Path, incident_dir: Option<&Path>) -> bool {
    let named = |p: &Path| p.file_name() == Some(framewise_incidents::DIR_NAME.as_ref());
    let real = dir.canonicalize().ok();
    if named(dir) || real.as_deref().is_some_and(named) {
        return true;
    }
    let Some(log_dir) = incident_dir else {
        return false;
    };
    match (real, log_dir.canonicalize().ok()) {
        (Some(a), Some(b)) => a == b,
        // A directory not made yet: the same when spelt the same (`./x` is `x`).
        _ => lexical(dir) == lexical(log_dir),
    }
}

/// The path's components without `.`.
fn lexical(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// The log file of `incident_dir` the opened file is (a hard link to one), said as a refusal.
fn same_file_as_a_log(opened: &std::fs::Metadata, incident_dir: Option<&Path>) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dir = incident_dir?;
    LOG_FILES.iter().find_map(|(name, what)| {
        let log = std::fs::metadata(dir.join(name)).ok()?;
        ((log.dev(), log.ino()) == (opened.dev(), opened.ino())).then(|| {
            format!("it is the incident log's {name} (a link to it), {what}; name another file")
        })
    })
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
