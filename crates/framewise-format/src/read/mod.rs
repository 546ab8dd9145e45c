//! Reading captures: by the directory when the file is CLOSED, by scanning otherwise.
//!
//! A scan walks records from byte 32. A record counts only when its sync marker, a length
//! that fits the file and its payload checksum all agree; after damage the scan looks for
//! the next offset where all three agree (a label that spells `SREC` does not fool it).
//! Damage is reported as [`Defect`]s; every intact record is recovered, also under a header
//! that fails its check ([`Defect::HeaderDamaged`]). A frame record that does not read is
//! [`Defect::FrameUnreadable`], naming the frame it held.

use std::fmt;
use std::fs::File;
#[cfg(not(unix))]
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::container::{Header, CENS, CNTR, FRAM, RECORD_HEADER_LEN};
use crate::error::OpenError;
use crate::model::{CounterTrack, Frame, FrameEntry, Meta, SymId, SymbolTable, Topology};
use crate::payload::tracks::FrameTable;
use crate::payload::{self, FrameDecoder};

mod defect;
mod open;
mod scan;
mod source;

pub use defect::Defect;
pub use scan::{scan_records, RecordRef};

use scan::record_at;
use source::Source;

/// Every frame record's location and directory facts: gathered by a scan, or the
/// directory's fixed-width table, decoded on access (so opening by the directory costs one
/// read of the table, whatever the number of frames).
enum Frames {
    Scanned(Vec<FrameEntry>),
    Table(FrameTable),
}

impl Frames {
    fn len(&self) -> usize {
        match self {
            Frames::Scanned(v) => v.len(),
            Frames::Table(t) => t.len(),
        }
    }

    fn get(&self, i: usize) -> Option<FrameEntry> {
        match self {
            Frames::Scanned(v) => v.get(i).copied(),
            Frames::Table(t) => t.get(i).map(|(e, _)| e),
        }
    }
}

/// A census record's document (`CENS`), as [`Capture::censuses`] reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CensusDocument {
    /// The record's offset (its `SREC` marker).
    pub offset: u64,
    /// The census, as JSON (`framewise.census/1`).
    pub document: String,
}

/// An opened capture.
pub struct Capture {
    header: Header,
    source: Source,
    file_len: u64,
    by_directory: bool,
    records: Vec<RecordRef>,
    frames: Frames,
    meta: Option<Meta>,
    symbols: SymbolTable,
    topologies: Vec<Topology>,
    defects: Vec<Defect>,
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture")
            .field("header", &self.header)
            .field("file_len", &self.file_len)
            .field("by_directory", &self.by_directory)
            .field("frames", &self.frames.len())
            .field("defects", &self.defects)
            .finish_non_exhaustive()
    }
}

/// Opens a capture file: by its directory when CLOSED and the directory is intact (only
/// the header, the directory, META, TOPO/SYMS and the frames that define symbols are
/// read), by scanning the whole file otherwise.
pub fn open(path: impl AsRef<Path>) -> Result<Capture, OpenError> {
    Capture::open(path)
}

/// Reads a capture from a whole file image.
pub fn from_bytes(bytes: Vec<u8>) -> Result<Capture, OpenError> {
    Capture::from_bytes(bytes)
}

/// Reads the one frame record `entry` locates (its offset and length, as
/// [`Capture::frame_entry`] gave them) from `file` and decodes it into `frame`: what
/// [`Capture::read_frame_into`] does for a capture opened by its directory, without the
/// opened capture. For a program that keeps a file open and re-reads frames on demand
/// long after it read the file (the inspector's timeline). The record must still be an
/// intact `FRAM` of that length at that offset (sync, length, checksum), else
/// [`Defect::Corrupt`] (nothing there, or something else) or [`Defect::BadPayload`] (a
/// record that does not decode): a file changed since it was read never panics here.
pub fn read_frame_at(
    file: &File,
    entry: FrameEntry,
    decoder: &mut FrameDecoder,
    frame: &mut Frame,
) -> Result<(), Defect> {
    let corrupt = || Defect::Corrupt {
        offset: entry.offset,
        bytes_skipped: entry.length,
    };
    // The length comes from a file: checked against what the file holds now before
    // anything is allocated.
    let file_len = file.metadata().map_err(|_| corrupt())?.len();
    let end = entry.offset.checked_add(entry.length).ok_or_else(corrupt)?;
    if entry.length < RECORD_HEADER_LEN as u64 || end > file_len {
        return Err(corrupt());
    }
    let mut bytes = vec![0u8; usize::try_from(entry.length).map_err(|_| corrupt())?];
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(&mut bytes, entry.offset)
            .map_err(|_| corrupt())?;
    }
    #[cfg(not(unix))]
    {
        let mut f = file;
        f.seek(SeekFrom::Start(entry.offset))
            .and_then(|_| f.read_exact(&mut bytes))
            .map_err(|_| corrupt())?;
    }
    Capture::decode_frame_record(&bytes, entry, decoder, frame)
}

impl Capture {
    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// File length in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Whether the capture was opened by its directory (else by scanning).
    pub fn opened_by_directory(&self) -> bool {
        self.by_directory
    }

    /// META, when an intact one was found.
    pub fn meta(&self) -> Option<&Meta> {
        self.meta.as_ref()
    }

    /// Every symbol defined by an intact record.
    pub fn symbols(&self) -> &SymbolTable {
        &self.symbols
    }

    /// Topologies, in file order.
    pub fn topologies(&self) -> &[Topology] {
        &self.topologies
    }

    /// Defects found while opening (frame payloads are checked as they are read).
    pub fn defects(&self) -> &[Defect] {
        &self.defects
    }

    /// Every intact record, in file order (frame records included).
    pub fn records(&self) -> Vec<RecordRef> {
        let mut all = self.records.clone();
        if self.by_directory {
            all.reserve(self.frames.len());
            for i in 0..self.frames.len() {
                if let Some(e) = self.frames.get(i) {
                    let payload_len =
                        u32::try_from(e.length.saturating_sub(RECORD_HEADER_LEN as u64))
                            .unwrap_or(u32::MAX);
                    all.push(RecordRef {
                        record_type: FRAM,
                        offset: e.offset,
                        payload_len,
                    });
                }
            }
            all.sort_by_key(|r| r.offset);
        }
        all
    }

    /// Number of intact frame records.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Directory facts of every frame (from `DIRE`, or gathered by the scan).
    pub fn frame_entries(&self) -> impl ExactSizeIterator<Item = FrameEntry> + '_ {
        (0..self.frames.len()).map(move |i| self.frames.get(i).unwrap_or_default())
    }

    /// Directory facts of frame `i` (file order).
    pub fn frame_entry(&self, i: usize) -> Option<FrameEntry> {
        self.frames.get(i)
    }

    /// Decodes the `i`-th frame record (file order).
    ///
    /// To read many frames, [`Capture::read_frame_into`] reuses one frame's allocations.
    pub fn read_frame(&self, i: usize) -> Result<Frame, Defect> {
        let mut frame = Frame::default();
        self.read_frame_into(i, &mut FrameDecoder::new(), &mut frame)?;
        Ok(frame)
    }

    /// Decodes the `i`-th frame record (file order) into `frame`, reusing its vectors and
    /// `decoder`'s scratch space: the same result and defect as [`Capture::read_frame`],
    /// without allocating once the vectors have grown to a frame's size. After a defect,
    /// `frame` holds an unspecified mix of old and new content.
    pub fn read_frame_into(
        &self,
        i: usize,
        decoder: &mut FrameDecoder,
        frame: &mut Frame,
    ) -> Result<(), Defect> {
        let entry = self.frames.get(i).ok_or(Defect::Corrupt {
            offset: self.file_len,
            bytes_skipped: 0,
        })?;
        self.read_entry_into(entry, decoder, frame)
            .map_err(|cause| frame_unreadable(entry, cause))
    }

    /// [`Capture::read_frame_into`] for a located frame; the defect is the record's.
    fn read_entry_into(
        &self,
        entry: FrameEntry,
        decoder: &mut FrameDecoder,
        frame: &mut Frame,
    ) -> Result<(), Defect> {
        let offset = entry.offset;
        let bad = |error| Defect::BadPayload {
            offset,
            record_type: FRAM,
            error,
        };
        let payload_offset = offset + RECORD_HEADER_LEN as u64;
        // The payload is `bytes[skip..]`.
        let (bytes, skip) = if self.by_directory {
            let (r, bytes) = Self::read_record(&self.source, offset, entry.length, self.file_len)
                .map_err(|_| Defect::Corrupt {
                offset,
                bytes_skipped: entry.length,
            })?;
            Self::check_frame_record(r, entry)?;
            (bytes, RECORD_HEADER_LEN)
        } else {
            let bytes = self
                .source
                .read_at(
                    payload_offset,
                    entry.length.saturating_sub(RECORD_HEADER_LEN as u64),
                )
                .map_err(|_| Defect::Corrupt {
                    offset,
                    bytes_skipped: entry.length,
                })?;
            (bytes, 0)
        };
        let payload = bytes.get(skip..).unwrap_or_default();
        decoder
            .decode_frame_into(payload, frame)
            .map(|_| ())
            .map_err(bad)
    }

    /// Decodes `bytes`, the whole record `entry` locates (framing included), into `frame`:
    /// it must be an intact `FRAM` of the entry's length.
    fn decode_frame_record(
        bytes: &[u8],
        entry: FrameEntry,
        decoder: &mut FrameDecoder,
        frame: &mut Frame,
    ) -> Result<(), Defect> {
        let r = record_at(bytes, 0)
            .filter(|r| r.length() == entry.length)
            .ok_or(Defect::Corrupt {
                offset: entry.offset,
                bytes_skipped: entry.length,
            })?;
        Self::check_frame_record(r, entry)?;
        decoder
            .decode_frame_into(bytes.get(RECORD_HEADER_LEN..).unwrap_or_default(), frame)
            .map(|_| ())
            .map_err(|error| Defect::BadPayload {
                offset: entry.offset,
                record_type: FRAM,
                error,
            })
    }

    /// A frame record read by its directory entry must be a `FRAM`.
    fn check_frame_record(r: RecordRef, entry: FrameEntry) -> Result<(), Defect> {
        if r.record_type == FRAM {
            Ok(())
        } else {
            Err(Defect::Corrupt {
                offset: entry.offset,
                bytes_skipped: entry.length,
            })
        }
    }

    /// Decodes frames `range` (file order) one after another into `frame`, handing each
    /// frame's index and result to `visit`: the same frames and defects as
    /// [`Capture::read_frame_into`] called for each index, but a file opened by its
    /// directory is read in pieces of about 1 MiB that cover many frame records, one
    /// positioned read each, rather than one read per frame. Indices past the last frame
    /// are not visited.
    pub fn read_frames_into(
        &self,
        range: std::ops::Range<usize>,
        decoder: &mut FrameDecoder,
        frame: &mut Frame,
        mut visit: impl FnMut(usize, Result<&Frame, Defect>),
    ) {
        const PIECE: u64 = 1 << 20;
        let range = range.start..range.end.min(self.frames.len());
        if !self.by_directory || !matches!(self.source, Source::File(_)) {
            for i in range {
                let result = self.read_frame_into(i, decoder, frame);
                visit(i, result.map(|()| &*frame));
            }
            return;
        }
        // `piece` holds the file's bytes from `piece_at`.
        let mut piece: Vec<u8> = Vec::new();
        let mut piece_at = 0u64;
        for i in range {
            let Some(entry) = self.frames.get(i) else {
                break;
            };
            let result = (|| {
                let corrupt = || Defect::Corrupt {
                    offset: entry.offset,
                    bytes_skipped: entry.length,
                };
                let end = entry
                    .offset
                    .checked_add(entry.length)
                    .filter(|&e| e <= self.file_len && entry.length >= RECORD_HEADER_LEN as u64)
                    .ok_or_else(corrupt)?;
                if entry.offset < piece_at || end > piece_at + piece.len() as u64 {
                    // The next piece starts at this record and runs on over the ones after;
                    // if that cannot be read, the record alone, as `read_frame_into` would.
                    let len = PIECE.max(entry.length).min(self.file_len - entry.offset);
                    piece = match self.source.read_at(entry.offset, len) {
                        Ok(bytes) => bytes.into_owned(),
                        Err(_) => self
                            .source
                            .read_at(entry.offset, entry.length)
                            .map_err(|_| corrupt())?
                            .into_owned(),
                    };
                    piece_at = entry.offset;
                }
                let from = usize::try_from(entry.offset - piece_at).map_err(|_| corrupt())?;
                let to = usize::try_from(end - piece_at).map_err(|_| corrupt())?;
                let bytes = piece.get(from..to).ok_or_else(corrupt)?;
                Self::decode_frame_record(bytes, entry, decoder, frame)
            })()
            .map_err(|cause| frame_unreadable(entry, cause));
            visit(i, result.map(|()| &*frame));
        }
    }

    /// Decodes every frame in file order.
    pub fn frames(&self) -> impl Iterator<Item = Result<Frame, Defect>> + '_ {
        (0..self.frames.len()).map(move |i| self.read_frame(i))
    }

    /// Reads every intact record of `record_type` and decodes its payload with `decode`:
    /// a record that no longer reads is `Corrupt`, a payload that does not decode
    /// `BadPayload`.
    fn decode_records<T>(
        &self,
        record_type: u32,
        decode: impl Fn(&RecordRef, &[u8]) -> Result<T, crate::DecodeError>,
    ) -> Vec<Result<T, Defect>> {
        self.records
            .iter()
            .filter(|r| r.record_type == record_type)
            .map(|r| {
                let bytes = self
                    .source
                    .read_at(r.payload_offset(), u64::from(r.payload_len))
                    .map_err(|_| Defect::Corrupt {
                        offset: r.offset,
                        bytes_skipped: r.length(),
                    })?;
                decode(r, &bytes).map_err(|error| Defect::BadPayload {
                    offset: r.offset,
                    record_type,
                    error,
                })
            })
            .collect()
    }

    /// Decodes every sampled counter track.
    pub fn counter_tracks(&self) -> Vec<Result<CounterTrack, Defect>> {
        self.decode_records(CNTR, |_, bytes| {
            payload::decode_counter_track(bytes).map(|(_, t)| t)
        })
    }

    /// Decodes every census record (`CENS`, format version 2), in file order: the JSON
    /// document each carries, with the record's offset.
    pub fn censuses(&self) -> Vec<Result<CensusDocument, Defect>> {
        self.decode_records(CENS, |r, bytes| {
            payload::decode_census(bytes).map(|(_, document)| CensusDocument {
                offset: r.offset,
                document,
            })
        })
    }

    /// Symbols `frame` refers to that no intact record defines.
    pub fn unresolved(&self, frame: &Frame) -> Vec<SymId> {
        let mut refs = Vec::new();
        frame.referenced_symbols(&mut refs);
        refs.retain(|id| !self.symbols.contains(*id));
        refs
    }

    /// Decodes everything and returns every defect: those found at open, frames that do
    /// not decode, and symbols no intact record defines.
    pub fn verify(&self) -> Vec<Defect> {
        let mut defects = self.defects.clone();
        let mut unresolved: Vec<(SymId, u64)> = Vec::new();
        let mut decoder = FrameDecoder::new();
        let mut frame = Frame::default();
        for i in 0..self.frames.len() {
            match self.read_frame_into(i, &mut decoder, &mut frame) {
                Ok(()) => {
                    for id in self.unresolved(&frame) {
                        if !unresolved.iter().any(|(u, _)| *u == id) {
                            unresolved.push((id, frame_offset(self, i)));
                        }
                    }
                }
                Err(d) => defects.push(d),
            }
        }
        for t in self.counter_tracks() {
            if let Err(d) = t {
                defects.push(d);
            }
        }
        for c in self.censuses() {
            if let Err(d) = c {
                defects.push(d);
            }
        }
        defects.extend(
            unresolved
                .into_iter()
                .map(|(id, first_offset)| Defect::UnresolvedSymbol { id, first_offset }),
        );
        defects
    }
}

/// The defect for a located frame whose record does not read: the frame it held, and why.
fn frame_unreadable(entry: FrameEntry, cause: Defect) -> Defect {
    Defect::FrameUnreadable {
        index: entry.index,
        offset: entry.offset,
        length: entry.length,
        cause: Box::new(cause),
    }
}

fn frame_offset(c: &Capture, i: usize) -> u64 {
    c.frames.get(i).map_or(0, |e| e.offset)
}
