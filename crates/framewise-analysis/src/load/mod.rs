//! Loading a capture from a file or from bytes, whatever its kind.
//!
//! The kind is decided by content, not by extension: `SGPT` magic → `.sgpt`, `LCAP` →
//! `.litecap`, a JSON array or object → Chrome trace. A magic one bit from
//! `SGPT` is a damaged `.sgpt` header, handed to the `.sgpt` reader.

use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use framewise_format::container::is_damaged_magic;

use crate::build::LoadOptions;
use crate::import::{chrome, litecap};
use crate::model::{Capture, FrameSpans};

mod directory;
pub mod sgpt;

pub use directory::{frame_directory, FrameDirectory};

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
    /// The path is a character or block device, or a socket: no capture is read from one
    /// (a device such as `/dev/zero` never ends).
    #[error("{}: is a {kind}, not a capture: a capture is read from a regular file, a pipe or a FIFO", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is: `character device`, `block device` or `socket`.
        kind: &'static str,
    },
    /// The file is empty.
    #[error("empty input (0 bytes): not a capture")]
    Empty,
    /// Not a kind this crate reads.
    #[error("not a capture: its first bytes, {}, match no known format (.sgpt, .litecap, Chrome JSON)", shown_bytes(.head))]
    UnknownFormat {
        /// Up to the first 8 bytes.
        head: Vec<u8>,
    },
    /// A stream (a pipe or a FIFO) that starts with more than [`STREAM_BLANK_LIMIT_BYTES`]
    /// blank bytes: no capture starts so late, and a stream of blanks can be endless.
    #[error("not a capture: it starts with more than {} of blanks (whitespace), and no capture starts so late (a Chrome JSON's first non-blank byte, `{{` or `[`, comes sooner)", shown_bytes_count(*.limit_bytes))]
    OnlyBlank {
        /// The limit passed: [`STREAM_BLANK_LIMIT_BYTES`].
        limit_bytes: usize,
    },
    /// A `.litecap` that does not decode.
    #[error(transparent)]
    Litecap(#[from] litecap::DecodeError),
    /// A `.litecap` input that goes on past the bytes its header sizes by more than
    /// [`LITECAP_TRAILING_LIMIT_BYTES`]: not read on (a stream can be endless).
    #[error("litecap: the input goes on past the {sized} bytes its header sizes, by more than {} after the last section: not read on (lite-profiler writes no byte after it, and a stream can be endless)", shown_bytes_count(usize::try_from(*.trailing_limit).unwrap_or(usize::MAX)))]
    LitecapOverlong {
        /// The length the header sizes.
        sized: u64,
        /// The bytes after it that are still read: [`LITECAP_TRAILING_LIMIT_BYTES`].
        trailing_limit: u64,
    },
    /// An input whose bytes do not fit in the memory this process may take (an endless
    /// stream, or a file larger than memory): refused when the next piece could not be held,
    /// rather than aborted.
    #[error("{}: cannot hold the input in memory: {} read, and room for more could not be had (an endless stream, or an input larger than the memory this process may take)", .path.display(), shown_bytes_count(usize::try_from(*.read_bytes).unwrap_or(usize::MAX)))]
    TooLarge {
        /// The input.
        path: PathBuf,
        /// The bytes read when room for more could not be had.
        read_bytes: u64,
    },
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

/// Why one frame's spans could not be read ([`FrameSource::frame_spans`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameReadError {
    /// The capture has no such row.
    #[error("no frame at row {row}: the capture has {frames} frames")]
    NoSuchRow {
        /// The row asked for.
        row: usize,
        /// How many rows there are.
        frames: usize,
    },
    /// The frame's record no longer reads back from the file as it was loaded.
    #[error("{}: frame {index} (row {row}) no longer reads back as it was loaded, so the file changed after it was loaded: {reason}", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
        /// The row asked for.
        row: usize,
        /// The frame's index as it was loaded.
        index: u64,
        /// What was found instead.
        reason: String,
    },
}

/// Where a capture's spans come from, one frame at a time: its own span table (a capture
/// loaded with spans), or its `.sgpt` file, kept open and read again for the one frame
/// asked for ([`open_with_frame_source`]). Either way the spans are the rows a load with
/// spans keeps for that frame ([`crate::model::SpanTable::frame_spans`]): a re-read frame
/// goes through the loader's own conversion and span-table code.
pub struct FrameSource {
    from: SpansFrom,
}

enum SpansFrom {
    Kept,
    File(Box<sgpt::FrameFile>),
}

impl std::fmt::Debug for FrameSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.from {
            SpansFrom::Kept => f.write_str("FrameSource::Kept"),
            SpansFrom::File(file) => write!(f, "FrameSource::File({})", file.path().display()),
        }
    }
}

impl FrameSource {
    /// Spans from the capture's own span table (none when it was loaded without spans).
    pub fn kept() -> Self {
        Self {
            from: SpansFrom::Kept,
        }
    }

    /// The file frames are read from on demand, if they are.
    pub fn file(&self) -> Option<&Path> {
        match &self.from {
            SpansFrom::Kept => None,
            SpansFrom::File(file) => Some(file.path()),
        }
    }

    /// Frame `row`'s spans. `capture` is the capture this source came with (from
    /// [`open_with_frame_source`], or the one loaded with spans for [`Self::kept`]).
    ///
    /// A file that was truncated or overwritten since it was loaded is an error
    /// ([`FrameReadError::Changed`]), never a panic and never another frame's spans; a
    /// file deleted or renamed over after its load is still read (it stays open).
    pub fn frame_spans(&self, capture: &Capture, row: usize) -> Result<FrameSpans, FrameReadError> {
        match &self.from {
            SpansFrom::File(file) => file.frame_spans(capture, row),
            SpansFrom::Kept if row < capture.frame_count() => Ok(capture
                .spans()
                .map(|t| t.frame_spans(row))
                .unwrap_or_default()),
            SpansFrom::Kept => Err(FrameReadError::NoSuchRow {
                row,
                frames: capture.frame_count(),
            }),
        }
    }
}

/// What a load is doing, for a progress display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Stage {
    /// Reading the file into memory (`.litecap`); counted in bytes.
    Reading,
    /// Reading and parsing Chrome JSON events, streamed from the file; counted in bytes.
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
    // A magic one bit from `SGPT` is a damaged header: the format crate's reader
    // recovers the capture by scanning, or refuses the file when it holds no record.
    if let Some(&[a, b, c, d]) = bytes.get(..4) {
        if is_damaged_magic(u32::from_le_bytes([a, b, c, d])) {
            return Some(FileKind::Sgpt);
        }
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
    if is_stream(path) {
        // A pipe or a FIFO (`/dev/stdin`) is read once, whole: peeking at its first bytes
        // would consume them, and the reader opening it again would find the rest, or
        // nothing ("0 bytes, shorter than the 32-byte header").
        let bytes = read_stream(path, progress)?;
        return from_bytes_reporting(bytes, options, progress);
    }
    // Peek first: an .sgpt goes to the format crate's own reader, which opens the file.
    let len = peek(path)?;
    if len.sgpt {
        return sgpt::open_reporting(path, options, progress);
    }
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    // Chrome JSON is streamed from the file: its text can be hundreds of MB, and the
    // importer keeps only compact rows.
    let mut reader = std::io::BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
    let head = reader.fill_buf().map_err(io)?;
    let kind = detect(head);
    // First bytes that decide no kind are refused here, as a stream's are, before a 10 GB
    // file of garbage is read whole (and held in memory) only to be refused.
    if kind.is_none() && kind_decided(head, &mut 0) {
        return Err(LoadError::UnknownFormat {
            head: head.iter().take(8).copied().collect(),
        });
    }
    if kind == Some(FileKind::ChromeJson) {
        return chrome::import_reader_reporting(reader, len.bytes, options, progress).map_err(
            |e| match e {
                chrome::ChromeError::Read { offset, message } => io(std::io::Error::other(
                    format!("at byte {offset}: {message}"),
                )),
                other => LoadError::Chrome(other),
            },
        );
    }
    let bytes = read_reporting(path, len.bytes, progress)?;
    from_bytes_reporting(bytes, options, progress)
}

/// Loads a capture for browsing frame by frame (the inspector): an `.sgpt` file is loaded
/// without its spans, whatever `options.with_spans` says, and the [`FrameSource`] keeps
/// it open to read one frame's spans again when asked; any other kind (`.litecap`, Chrome
/// JSON: its spans are compact rows once imported) is loaded with its spans, which the source then
/// hands out. Progress is reported as by [`open_with_progress`].
///
/// ```no_run
/// use framewise_analysis::{load, LoadOptions};
///
/// let (capture, frames) =
///     load::open_with_frame_source("game.sgpt", &LoadOptions::default(), |_| {})?;
/// let spans = frames.frame_spans(&capture, 0)?;
/// println!("{} CPU spans in the first frame", spans.cpu.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn open_with_frame_source(
    path: impl AsRef<Path>,
    options: &LoadOptions,
    mut on_progress: impl FnMut(Progress),
) -> Result<(Capture, FrameSource), LoadError> {
    let path = path.as_ref();
    // A stream cannot be read again for a frame's spans: it is loaded with them.
    if !is_stream(path) && peek(path)?.sgpt {
        let (capture, file) = sgpt::open_with_frames(path, options, &mut on_progress)?;
        return Ok((
            capture,
            FrameSource {
                from: SpansFrom::File(Box::new(file)),
            },
        ));
    }
    let capture = open_with_progress(path, &options.clone().with_spans(true), on_progress)?;
    Ok((capture, FrameSource::kept()))
}

/// Whether `path` is a stream that can be read only once, front to back: a pipe or a FIFO
/// (`/dev/stdin` on a pipe is one). A character or block device or a socket is no stream
/// here: it is refused ([`LoadError::NotAFile`]), never read.
pub fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// What a file is when it is neither a regular file, a directory nor a FIFO:
/// `character device`, `block device` or `socket`; `None` otherwise.
pub fn special_kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let file_type = meta.file_type();
    if file_type.is_char_device() {
        Some("character device")
    } else if file_type.is_block_device() {
        Some("block device")
    } else if file_type.is_socket() {
        Some("socket")
    } else {
        None
    }
}

/// What a file is, for a message that refuses one that is not a regular file: `directory`,
/// `FIFO (a named pipe)`, `character device`, `block device`, `socket` (or `regular file`,
/// `special file`).
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if meta.is_file() {
        "regular file"
    } else if meta.is_dir() {
        "directory"
    } else if meta.file_type().is_fifo() {
        "FIFO (a named pipe)"
    } else {
        special_kind(meta).unwrap_or("special file")
    }
}

/// Refuses what holds no capture though it can be opened: a character or block device, or
/// a socket. A device such as `/dev/zero` never ends, so it is refused by its type, before
/// anything opens it, with one line.
pub fn refuse_special(path: &Path, meta: &std::fs::Metadata) -> Result<(), LoadError> {
    match special_kind(meta) {
        Some(kind) => Err(LoadError::NotAFile {
            path: path.to_owned(),
            kind,
        }),
        None => Ok(()),
    }
}

/// What [`peek`] found.
pub(crate) struct Peeked {
    /// The file's length as its metadata gives it.
    pub(crate) bytes: u64,
    /// It starts with the `.sgpt` magic.
    pub(crate) sgpt: bool,
}

/// A file's length and whether it is an `.sgpt`, from its first bytes: an error for a
/// directory, an empty or unreadable file.
pub(crate) fn peek(path: &Path) -> Result<Peeked, LoadError> {
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
    refuse_special(path, &meta)?;
    let mut head = [0u8; 4];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(io)?;
        f.read(&mut head).map_err(io)?
    };
    if n == 0 {
        return Err(LoadError::Empty);
    }
    Ok(Peeked {
        bytes: meta.len(),
        sgpt: detect(head.get(..n).unwrap_or(&[])) == Some(FileKind::Sgpt),
    })
}

/// How many blank bytes (ASCII whitespace, after an optional UTF-8 byte order mark) a stream
/// may start with before it is refused ([`LoadError::OnlyBlank`]): a Chrome JSON may start
/// with blanks, but none starts with a MiB of them, and a stream of blanks can be endless
/// (`yes '' | framewise summarize /dev/stdin`).
pub const STREAM_BLANK_LIMIT_BYTES: usize = 1 << 20;

/// The UTF-8 byte order mark a JSON text may start with.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A byte count as people read it: `1 MiB` when it is whole MiB, else `N bytes`.
fn shown_bytes_count(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// Whether `head`, a stream's first bytes, already decides its kind: four bytes decide a
/// magic (`.sgpt`, `.litecap`, a damaged `.sgpt` magic), and the first byte that is not
/// blank decides Chrome JSON or nothing. More bytes never change what they decided.
/// `blank_from` is where the bytes not yet looked at begin (every byte before it is blank,
/// after the byte order mark), so that a long run of blanks is looked at once.
fn kind_decided(head: &[u8], blank_from: &mut usize) -> bool {
    let start = if head.starts_with(BOM) { BOM.len() } else { 0 };
    let from = (*blank_from).max(start);
    let rest = head.get(from..).unwrap_or(&[]);
    match rest.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(_) => head.len() >= 4,
        None => {
            *blank_from = head.len();
            false
        }
    }
}

/// Reads a stream (a pipe or a FIFO) once, whole, reporting bytes read; but first its
/// first bytes, and an input that they show is no capture is refused there, before reading
/// on: a stream of garbage can be endless (`cat /dev/zero | framewise summarize /dev/stdin`).
/// So can a stream of blanks: past [`STREAM_BLANK_LIMIT_BYTES`] of them it is refused.
pub(crate) fn read_stream(
    path: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<u8>, LoadError> {
    use std::io::Read;
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    refuse_special(path, &meta)?;
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut head = Vec::new();
    let mut piece = [0u8; 4096];
    let mut blank_from = 0;
    while !kind_decided(&head, &mut blank_from) {
        let bom_bytes = if head.starts_with(BOM) { BOM.len() } else { 0 };
        if blank_from.saturating_sub(bom_bytes) > STREAM_BLANK_LIMIT_BYTES {
            return Err(LoadError::OnlyBlank {
                limit_bytes: STREAM_BLANK_LIMIT_BYTES,
            });
        }
        match f.read(&mut piece) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(piece.get(..n).unwrap_or(&[])),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        }
    }
    if head.is_empty() {
        return Err(LoadError::Empty);
    }
    if detect(&head).is_none() {
        return Err(LoadError::UnknownFormat {
            head: head.iter().take(8).copied().collect(),
        });
    }
    read_rest(f, head, 0, path, progress)
}

/// How many bytes after its last section a `.litecap` may have and still be read (they are
/// a defect then: a damaged count, or files joined); an input that goes on further is
/// refused ([`LoadError::LitecapOverlong`]), so that an endless stream that starts as a
/// `.litecap` (`cat /dev/zero` after `LCAP`) is not read into memory without end.
pub const LITECAP_TRAILING_LIMIT_BYTES: u64 = 1 << 20;

/// Reads a whole file in pieces, reporting bytes read.
fn read_reporting(
    path: &Path,
    expected_len: u64,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<u8>, LoadError> {
    let f = std::fs::File::open(path).map_err(|source| LoadError::Io {
        path: path.to_owned(),
        source,
    })?;
    read_rest(f, Vec::new(), expected_len, path, progress)
}

/// Reads `f` to its end after the `bytes` already read from it, reporting bytes read. A
/// `.litecap` is read no further than the length its header sizes
/// ([`litecap::sized_len`]) and [`LITECAP_TRAILING_LIMIT_BYTES`] after it: past that, the
/// input is refused rather than read on.
fn read_rest(
    mut f: impl std::io::Read,
    mut bytes: Vec<u8>,
    expected_len: u64,
    path: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vec<u8>, LoadError> {
    const PIECE: usize = 1 << 20;
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    // The length is a hint: the file may change while it is read; never trust it for
    // more than the first allocation.
    let hint = usize::try_from(expected_len).unwrap_or(0).min(1 << 30);
    bytes.reserve(hint.saturating_sub(bytes.len()));
    let mut reporter = Reporter::start(progress, Stage::Reading, expected_len);
    reporter.update(bytes.len() as u64);
    let mut piece = vec![0u8; PIECE];
    // A `.litecap`'s length, once its bytes size it: `(sized, most bytes read)`.
    let mut bound: Option<(u64, u64)> = None;
    // The bytes a `.litecap` needs before it is sized again.
    let mut size_at = 0u64;
    loop {
        let len = bytes.len() as u64;
        if bound.is_none() && len >= size_at && bytes.starts_with(&litecap::MAGIC) {
            match litecap::sized_len(&bytes) {
                litecap::SizedLen::Whole(sized) => {
                    bound = Some((sized, sized.saturating_add(LITECAP_TRAILING_LIMIT_BYTES)))
                }
                litecap::SizedLen::Needs(n) => size_at = n,
                // The decoder refuses it from the bytes read: reading on changes nothing.
                _ => break,
            }
        }
        let want = match bound {
            Some((sized, most)) if len > most => {
                return Err(LoadError::LitecapOverlong {
                    sized,
                    trailing_limit: LITECAP_TRAILING_LIMIT_BYTES,
                })
            }
            // One byte past the most read says the input goes on.
            Some((_, most)) => {
                usize::try_from(most + 1 - len).map_or(PIECE, |left| left.min(PIECE))
            }
            None => PIECE,
        };
        let n = match f.read(piece.get_mut(..want).unwrap_or(&mut [])) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e)),
        };
        // Room asked for, not assumed: a stream with no end (or an input larger than the
        // memory the process may take) is refused in one line rather than aborting.
        if bytes.try_reserve(n).is_err() {
            return Err(LoadError::TooLarge {
                path: path.to_owned(),
                read_bytes: bytes.len() as u64,
            });
        }
        bytes.extend_from_slice(piece.get(..n).unwrap_or(&[]));
        reporter.update(bytes.len() as u64);
    }
    reporter.finish();
    Ok(bytes)
}

/// Bytes as a person reads them in an error: hex, then the text they spell when it is
/// printable ASCII (`67 61 72 62 = "garb"`).
fn shown_bytes(bytes: &[u8]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let hex = hex.join(" ");
    if !bytes.is_empty() && bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("{hex} = {:?}", String::from_utf8_lossy(bytes))
    } else {
        format!("{hex} (hex)")
    }
}

#[cfg(test)]
mod shown_bytes_tests {
    use super::*;

    #[test]
    fn an_unknown_format_names_its_bytes_in_hex_and_as_text() {
        let text = LoadError::UnknownFormat {
            head: b"garbage ".to_vec(),
        }
        .to_string();
        assert!(
            text.contains(r#"67 61 72 62 61 67 65 20 = "garbage ""#),
            "{text}"
        );
        let binary = LoadError::UnknownFormat {
            head: vec![0, 0xff, 7],
        }
        .to_string();
        assert!(binary.contains("00 ff 07 (hex)"), "{binary}");
    }
}

#[cfg(test)]
mod stream_head_tests {
    use super::*;

    #[test]
    fn blanks_decide_nothing_and_are_looked_at_once() {
        let mut blank_from = 0;
        assert!(!kind_decided(b" \n\t\r ", &mut blank_from));
        assert_eq!(blank_from, 5, "every byte so far is blank");
        assert!(kind_decided(b" \n\t\r [", &mut blank_from));
        let mut blank_from = 0;
        assert!(!kind_decided(b"\xEF\xBB\xBF  ", &mut blank_from));
        assert_eq!(blank_from, 5, "a byte order mark, then blanks");
        assert!(kind_decided(b"\xEF\xBB\xBF  {", &mut blank_from));
        let mut blank_from = 0;
        assert!(
            !kind_decided(b"{", &mut blank_from),
            "one byte decides no magic"
        );
        assert_eq!(blank_from, 0);
        assert!(kind_decided(b"SGPT", &mut blank_from));
    }

    #[test]
    fn a_blank_stream_names_its_limit_in_mib() {
        let text = LoadError::OnlyBlank {
            limit_bytes: STREAM_BLANK_LIMIT_BYTES,
        }
        .to_string();
        assert!(
            text.starts_with("not a capture: it starts with more than 1 MiB of blanks"),
            "{text}"
        );
        assert_eq!(shown_bytes_count(4096), "4096 bytes");
    }
}

#[cfg(test)]
mod litecap_bound_tests {
    use super::*;
    use std::io::Read;

    /// A reader that counts the bytes read from it.
    struct Counting<R> {
        inner: R,
        read: u64,
    }

    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read += n as u64;
            Ok(n)
        }
    }

    fn read_all(head: &[u8], rest: impl Read) -> (Result<Vec<u8>, LoadError>, u64) {
        let mut counting = Counting {
            inner: rest,
            read: 0,
        };
        let got = read_rest(
            &mut counting,
            head.to_vec(),
            0,
            Path::new("/dev/stdin"),
            &mut no_progress,
        );
        (got, counting.read)
    }

    /// `LCAP`, version 2, then zeros (`cat /dev/zero`): the header sizes 14 bytes (no
    /// frame, no phase, no meta), so the zeros after them are read up to the limit of
    /// trailing bytes, then refused; they were read into memory without end.
    #[test]
    fn an_endless_litecap_is_read_no_further_than_its_header_and_the_trailing_limit() {
        let zeros = || std::io::repeat(0).take(64 << 20);
        for head in [&b""[..], b"LCAP"] {
            let rest = std::io::Cursor::new(b"LCAP\x02".get(head.len()..).unwrap_or(&[]).to_vec())
                .chain(zeros());
            let (got, read) = read_all(head, rest);
            let e = got.expect_err("refused");
            assert!(
                matches!(
                    e,
                    LoadError::LitecapOverlong {
                        sized: 14,
                        trailing_limit: LITECAP_TRAILING_LIMIT_BYTES
                    }
                ),
                "{e}"
            );
            assert!(
                read + head.len() as u64 <= 14 + LITECAP_TRAILING_LIMIT_BYTES + 1,
                "read {read} bytes"
            );
            let text = e.to_string();
            assert!(!text.contains('\n'), "{text}");
            assert!(
                text.starts_with("litecap: the input goes on past the 14 bytes its header sizes, by more than 1 MiB"),
                "{text}"
            );
        }
    }

    /// A `.litecap` with bytes after its last section, up to the limit, is read whole (the
    /// importer makes them a defect); its length is no limit for any other kind.
    #[test]
    fn trailing_bytes_up_to_the_limit_are_read() {
        let mut one_frame = b"LCAP\x01".to_vec();
        one_frame.extend_from_slice(&1u32.to_le_bytes());
        one_frame.push(0);
        one_frame.extend_from_slice(&16f32.to_le_bytes());
        assert_eq!(litecap::sized_len(&one_frame), litecap::SizedLen::Whole(14));
        let limit = usize::try_from(LITECAP_TRAILING_LIMIT_BYTES).expect("small");
        let mut at_limit = one_frame.clone();
        at_limit.resize(one_frame.len() + limit, 7);
        let (got, _) = read_all(b"", std::io::Cursor::new(at_limit.clone()));
        assert_eq!(got.expect("read"), at_limit);
        let mut past = at_limit.clone();
        past.push(7);
        let (got, _) = read_all(b"", std::io::Cursor::new(past));
        assert!(matches!(got, Err(LoadError::LitecapOverlong { .. })));
        // A cut `.litecap` reads what there is (the decoder says it is cut).
        let (got, _) = read_all(b"", std::io::Cursor::new(one_frame[..12].to_vec()));
        assert_eq!(got.expect("read"), one_frame[..12].to_vec());
        // A version no reader knows: its header decides it, nothing after it is needed.
        let (got, read) = read_all(b"LCAP\x09", std::io::repeat(0).take(64 << 20));
        assert!(read <= 1 << 20, "read {read} bytes");
        assert!(got.is_ok_and(|b| b.starts_with(b"LCAP\x09")));
        // Anything else is read to its end.
        let other = vec![b' '; 3 << 20];
        let (got, _) = read_all(b"", std::io::Cursor::new(other.clone()));
        assert_eq!(got.expect("read"), other);
    }
}
