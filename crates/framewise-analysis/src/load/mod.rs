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

/// What a load is doing, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Reading the file into memory; counted in bytes.
    Reading,
    /// Parsing what was read (Chrome JSON events); counted in bytes.
    Parsing,
    /// Decoding frames and folding them into the capture; counted in frames.
    Frames,
    /// Decoding every frame to find damage (`inspect`); counted in frames.
    Verifying,
}

impl Stage {
    /// What `done` and `total` count: `bytes` or `frames`.
    pub fn unit(self) -> &'static str {
        match self {
            Self::Reading | Self::Parsing => "bytes",
            Self::Frames | Self::Verifying => "frames",
        }
    }

    /// The stage in a word: `reading`, `parsing`, `frames`, `verifying`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Reading => "reading",
            Self::Parsing => "parsing",
            Self::Frames => "frames",
            Self::Verifying => "verifying",
        }
    }
}

/// How far a load has got: `done` of `total`, in the stage's [`Stage::unit`].
///
/// A loader reports each stage it enters with `done == 0`, then as it advances (at most
/// a few hundred times per stage), and last with `done == total`. Stages come in order
/// but not every load has every stage: a closed `.sgpt` is read frame by frame and
/// reports only [`Stage::Frames`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Progress {
    /// What is being done.
    pub stage: Stage,
    /// How much of it is done.
    pub done: u64,
    /// How much there is.
    pub total: u64,
}

/// Throttles progress calls for one stage: a call when the stage starts, then every
/// 1/256th of the total, then one at the end.
pub(crate) struct Reporter<'a> {
    sink: &'a mut dyn FnMut(Progress),
    stage: Stage,
    total: u64,
    step: u64,
    next: u64,
    last: Option<u64>,
}

impl<'a> Reporter<'a> {
    pub(crate) fn start(sink: &'a mut dyn FnMut(Progress), stage: Stage, total: u64) -> Self {
        let mut r = Self {
            sink,
            stage,
            total,
            step: total.div_ceil(256).max(1),
            next: 0,
            last: None,
        };
        r.update(0);
        r
    }

    pub(crate) fn update(&mut self, done: u64) {
        let done = done.min(self.total);
        if done >= self.next && self.last != Some(done) {
            (self.sink)(Progress {
                stage: self.stage,
                done,
                total: self.total,
            });
            self.last = Some(done);
            self.next = done.saturating_add(self.step);
        }
    }

    pub(crate) fn finish(mut self) {
        if self.last != Some(self.total) {
            self.next = 0;
            self.update(self.total);
        }
    }
}

/// A progress sink that ignores everything.
pub(crate) fn no_progress(_: Progress) {}

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
    from_bytes_reporting(bytes, options, &mut no_progress)
}

fn from_bytes_reporting(
    bytes: Vec<u8>,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, LoadError> {
    if bytes.is_empty() {
        return Err(LoadError::Empty);
    }
    match detect(&bytes) {
        Some(FileKind::Sgpt) => sgpt::from_bytes_reporting(bytes, options, progress),
        Some(FileKind::Litecap) => Ok(litecap::import_reporting(&bytes, options, progress)?),
        Some(FileKind::ChromeJson) => Ok(chrome::import_reporting(&bytes, options, progress)?),
        None => Err(LoadError::UnknownFormat {
            head: bytes.iter().take(8).copied().collect(),
        }),
    }
}

/// Loads a capture from a file of any supported kind.
pub fn open(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Capture, LoadError> {
    open_with_progress(path, options, no_progress)
}

/// Loads a capture from a file of any supported kind, calling `on_progress` as it goes
/// (see [`Progress`] for when): what a progress bar needs. The callback runs on the
/// calling thread, between pieces of the load; keep it cheap.
///
/// ```no_run
/// use framewise_analysis::{load, LoadOptions};
///
/// let capture = load::open_with_progress("game.sgpt", &LoadOptions::default(), |p| {
///     eprintln!("{}: {} of {} {}", p.stage.name(), p.done, p.total, p.stage.unit());
/// })?;
/// # Ok::<(), framewise_analysis::LoadError>(())
/// ```
pub fn open_with_progress(
    path: impl AsRef<Path>,
    options: &LoadOptions,
    mut on_progress: impl FnMut(Progress),
) -> Result<Capture, LoadError> {
    let path = path.as_ref();
    let progress: &mut dyn FnMut(Progress) = &mut on_progress;
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
        return sgpt::open_reporting(path, options, progress);
    }
    let bytes = read_reporting(path, meta.len(), progress).map_err(io)?;
    from_bytes_reporting(bytes, options, progress)
}

/// Reads a whole file in pieces, reporting bytes read.
fn read_reporting(
    path: &Path,
    expected_len: u64,
    progress: &mut dyn FnMut(Progress),
) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    const PIECE: usize = 1 << 20;
    let mut f = std::fs::File::open(path)?;
    // The length is a hint: the file may change while it is read; never trust it for
    // more than the first allocation.
    let hint = usize::try_from(expected_len).unwrap_or(0).min(1 << 30);
    let mut bytes = Vec::with_capacity(hint);
    let mut reporter = Reporter::start(progress, Stage::Reading, expected_len);
    let mut piece = vec![0u8; PIECE];
    loop {
        let n = match f.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        bytes.extend_from_slice(piece.get(..n).unwrap_or(&[]));
        reporter.update(bytes.len() as u64);
    }
    reporter.finish();
    Ok(bytes)
}
