//! Reading captures: by the directory when the file is CLOSED, by scanning otherwise.
//!
//! A scan walks records from byte 32. A record counts only when its sync marker, a length
//! that fits the file and its payload checksum all agree; after damage the scan looks for
//! the next offset where all three agree (a label that spells `SREC` does not fool it).
//! Damage is reported as [`Defect`]s; every intact record is recovered, also under a header
//! that fails its check ([`Defect::HeaderDamaged`]). A frame record that does not read is
//! [`Defect::FrameUnreadable`], naming the frame it held.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;

use crate::container::{
    fourcc_name, is_damaged_magic, Header, CNTR, DIRE, FRAM, HEADER_LEN, META, RECORD_HEADER_LEN,
    SYMS, SYNC, TOPO,
};
use crate::error::{DecodeError, OpenError};
use crate::model::{CounterTrack, Frame, FrameEntry, Meta, SymId, Symbol, SymbolTable, Topology};
use crate::payload::tracks::FrameTable;
use crate::payload::{self, FrameDecoder};
use crate::wire::Cursor;

/// Something wrong inside a capture that the reader worked around.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Defect {
    /// The file ends inside a record (or inside a record header).
    TruncatedTail {
        /// Where the incomplete record starts.
        offset: u64,
        /// Bytes from there to the end of the file, lost.
        bytes_lost: u64,
    },
    /// Bytes that hold no intact record were skipped.
    Corrupt {
        /// First skipped byte.
        offset: u64,
        /// How many bytes were skipped before the next intact record.
        bytes_skipped: u64,
    },
    /// An intact record of a type this reader does not know was skipped.
    UnknownRecord {
        /// Record offset.
        offset: u64,
        /// Its type.
        record_type: u32,
    },
    /// An intact record (checksum good) whose payload did not decode.
    BadPayload {
        /// Record offset.
        offset: u64,
        /// Its type.
        record_type: u32,
        /// Why.
        error: DecodeError,
    },
    /// A symbol some record refers to is defined by no intact record.
    UnresolvedSymbol {
        /// The id.
        id: SymId,
        /// Offset of the first record that refers to it.
        first_offset: u64,
    },
    /// Two records define the same id differently; the first definition is kept.
    ConflictingSymbol {
        /// The id.
        id: SymId,
        /// Offset of the record with the later definition.
        offset: u64,
    },
    /// The writer never reached stop: the file was read by scanning.
    Unclosed {
        /// Where the last intact record ends.
        end_offset: u64,
    },
    /// The header says CLOSED but the directory could not be used; the file was scanned.
    DirectoryUnusable {
        /// Why.
        reason: String,
    },
    /// No intact META record.
    MissingMeta,
    /// The 32-byte header failed its check (its magic is one bit from `SGPT`, or
    /// its checksum does not match) but the file holds intact records: it was read by
    /// scanning, trusting nothing the header says.
    HeaderDamaged {
        /// What the check found.
        reason: String,
    },
    /// Bytes after the directory record, which ends a closed capture, belong to no record
    /// and were ignored.
    TrailingBytes {
        /// Where they start (the directory record's end).
        offset: u64,
        /// How many.
        bytes: u64,
    },
    /// A frame record the directory (or the scan) located does not read back: the frame it
    /// held is lost, and every other frame is unaffected.
    FrameUnreadable {
        /// The frame's index, as the directory (or the record's intact head) gives it.
        index: u64,
        /// Offset of its record.
        offset: u64,
        /// Length of its record, framing included.
        length: u64,
        /// What is wrong with the record: [`Defect::Corrupt`] (not an intact `FRAM` of
        /// that length there) or [`Defect::BadPayload`] (intact, but does not decode).
        cause: Box<Defect>,
    },
}

impl fmt::Display for Defect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TruncatedTail { offset, bytes_lost } => {
                write!(
                    f,
                    "truncated tail: incomplete record at offset {offset}, {bytes_lost} bytes lost"
                )
            }
            Self::Corrupt {
                offset,
                bytes_skipped,
            } => {
                write!(
                    f,
                    "corrupt data at offset {offset}: {bytes_skipped} bytes skipped"
                )
            }
            Self::UnknownRecord {
                offset,
                record_type,
            } => {
                write!(
                    f,
                    "unknown record type {} at offset {offset} skipped",
                    fourcc_name(*record_type)
                )
            }
            Self::BadPayload {
                offset,
                record_type,
                error,
            } => {
                write!(
                    f,
                    "{} record at offset {offset} does not decode: {error}",
                    fourcc_name(*record_type)
                )
            }
            Self::UnresolvedSymbol { id, first_offset } => {
                write!(f, "symbol {id} (first used by the record at offset {first_offset}) is defined by no intact record")
            }
            Self::ConflictingSymbol { id, offset } => {
                write!(
                    f,
                    "symbol {id} redefined differently at offset {offset}; first definition kept"
                )
            }
            Self::Unclosed { end_offset } => {
                write!(f, "capture was not closed (the writer never reached stop); recovered by scanning up to offset {end_offset}")
            }
            Self::DirectoryUnusable { reason } => {
                write!(f, "directory unusable ({reason}); recovered by scanning")
            }
            Self::MissingMeta => write!(f, "no intact META record"),
            Self::HeaderDamaged { reason } => {
                write!(f, "header damaged ({reason}); recovered by scanning")
            }
            Self::TrailingBytes { offset, bytes } => {
                write!(
                    f,
                    "{bytes} bytes after the directory record (from offset {offset}) belong to no record; ignored"
                )
            }
            Self::FrameUnreadable {
                index,
                offset,
                length,
                cause,
            } => {
                write!(
                    f,
                    "frame {index} is lost: its {length}-byte record at offset {offset} does not read ({cause})"
                )
            }
        }
    }
}

impl std::error::Error for Defect {}

/// Where one intact record sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef {
    /// Record type.
    pub record_type: u32,
    /// Offset of its `SREC` marker.
    pub offset: u64,
    /// Payload length.
    pub payload_len: u32,
}

impl RecordRef {
    /// Length of the whole record, framing included.
    pub fn length(&self) -> u64 {
        RECORD_HEADER_LEN as u64 + u64::from(self.payload_len)
    }

    /// Offset of the payload.
    pub fn payload_offset(&self) -> u64 {
        self.offset + RECORD_HEADER_LEN as u64
    }
}

/// Whether a header that failed to parse may be damage over a capture (a checksum that
/// does not match, a magic one bit from `SGPT`) rather than another kind of file.
fn header_damage_is_recoverable(e: &OpenError) -> bool {
    match e {
        OpenError::BadHeaderChecksum { .. } => true,
        OpenError::BadMagic { found, .. } => is_damaged_magic(*found),
        _ => false,
    }
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The intact record at `pos`, if sync, length and checksum agree.
fn record_at(bytes: &[u8], pos: usize) -> Option<RecordRef> {
    if u32_at(bytes, pos)? != SYNC {
        return None;
    }
    let record_type = u32_at(bytes, pos + 4)?;
    let payload_len = u32_at(bytes, pos + 8)?;
    // Every payload opens with a symbol block, so none is empty; refusing P = 0 keeps
    // `SREC` followed by zeros (CRC of nothing is 0) from passing as a record.
    if payload_len == 0 {
        return None;
    }
    let crc = u32_at(bytes, pos + 12)?;
    let start = pos + RECORD_HEADER_LEN;
    let payload = bytes.get(start..start.checked_add(payload_len as usize)?)?;
    if crc32fast::hash(payload) != crc {
        return None;
    }
    Some(RecordRef {
        record_type,
        offset: pos as u64,
        payload_len,
    })
}

/// Finds the next offset at or after `from` holding an intact record.
fn next_record(bytes: &[u8], from: usize) -> Option<(usize, RecordRef)> {
    let marker = SYNC.to_le_bytes();
    let mut pos = from;
    while pos + RECORD_HEADER_LEN <= bytes.len() {
        let hit = bytes[pos..].windows(4).position(|w| w == marker)?;
        pos += hit;
        if let Some(r) = record_at(bytes, pos) {
            return Some((pos, r));
        }
        pos += 1;
    }
    None
}

/// Scans the records of a whole file image (header included) from byte 32.
pub fn scan_records(bytes: &[u8]) -> (Vec<RecordRef>, Vec<Defect>) {
    let mut records = Vec::new();
    let mut defects = Vec::new();
    let mut pos = HEADER_LEN.min(bytes.len());
    while pos < bytes.len() {
        if let Some(r) = record_at(bytes, pos) {
            pos += r.length() as usize;
            records.push(r);
            continue;
        }
        match next_record(bytes, pos + 1) {
            Some((next, _)) => {
                defects.push(Defect::Corrupt {
                    offset: pos as u64,
                    bytes_skipped: (next - pos) as u64,
                });
                pos = next;
            }
            None => {
                defects.push(Defect::TruncatedTail {
                    offset: pos as u64,
                    bytes_lost: (bytes.len() - pos) as u64,
                });
                break;
            }
        }
    }
    (records, defects)
}

enum Source {
    Memory(Vec<u8>),
    File(Mutex<File>),
}

impl Source {
    fn read_at(&self, offset: u64, len: u64) -> std::io::Result<Cow<'_, [u8]>> {
        match self {
            Source::Memory(bytes) => {
                let range = usize::try_from(offset)
                    .ok()
                    .and_then(|s| Some(s..s.checked_add(usize::try_from(len).ok()?)?))
                    .filter(|r| r.end <= bytes.len())
                    .ok_or_else(|| {
                        std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "range past the end")
                    })?;
                Ok(Cow::Borrowed(&bytes[range]))
            }
            Source::File(file) => {
                let mut buf = vec![0u8; usize::try_from(len).map_err(std::io::Error::other)?];
                let guard = file
                    .lock()
                    .map_err(|_| std::io::Error::other("file lock poisoned"))?;
                // One positioned read (pread) where the platform has it: a frame read is
                // one system call, not a seek and a read.
                #[cfg(unix)]
                {
                    use std::os::unix::fs::FileExt;
                    guard.read_exact_at(&mut buf, offset)?;
                }
                #[cfg(not(unix))]
                {
                    let mut f = guard;
                    f.seek(SeekFrom::Start(offset))?;
                    f.read_exact(&mut buf)?;
                }
                Ok(Cow::Owned(buf))
            }
        }
    }
}

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
    /// See [`open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        let path = path.as_ref();
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(OpenError::Io(std::io::Error::other("is a directory")));
        }
        let file_len = meta.len();
        let mut head = vec![0u8; HEADER_LEN.min(file_len as usize)];
        file.read_exact(&mut head)?;
        let header = match Header::parse(&head) {
            Ok(header) => header,
            Err(e) if header_damage_is_recoverable(&e) => {
                let bytes = std::fs::read(path)?;
                return Self::header_damaged(bytes, e);
            }
            Err(e) => return Err(e),
        };
        if header.is_closed() {
            let source = Source::File(Mutex::new(file));
            match Self::by_directory(header, source, file_len) {
                Ok(capture) => return Ok(capture),
                Err((reason, _)) => {
                    let bytes = std::fs::read(path)?;
                    let mut c = Self::by_scan(header, bytes);
                    c.defects.insert(0, Defect::DirectoryUnusable { reason });
                    return Ok(c);
                }
            }
        }
        let mut bytes = Vec::with_capacity(file_len as usize);
        file.seek(SeekFrom::Start(0))?;
        file.read_to_end(&mut bytes)?;
        Ok(Self::by_scan(header, bytes))
    }

    /// See [`from_bytes`].
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, OpenError> {
        let header = match Header::parse(&bytes) {
            Ok(header) => header,
            Err(e) if header_damage_is_recoverable(&e) => return Self::header_damaged(bytes, e),
            Err(e) => return Err(e),
        };
        let file_len = bytes.len() as u64;
        if header.is_closed() {
            match Self::by_directory(header, Source::Memory(bytes), file_len) {
                Ok(c) => return Ok(c),
                Err((reason, Source::Memory(bytes))) => {
                    let mut c = Self::by_scan(header, bytes);
                    c.defects.insert(0, Defect::DirectoryUnusable { reason });
                    return Ok(c);
                }
                Err((reason, Source::File(_))) => {
                    return Err(OpenError::Io(std::io::Error::other(reason)));
                }
            }
        }
        Ok(Self::by_scan(header, bytes))
    }

    /// A file whose header failed its check: read by scanning, trusting nothing the header
    /// says, when it holds at least one intact record of a known type; else refused with
    /// the header's error (it is not a capture).
    fn header_damaged(bytes: Vec<u8>, error: OpenError) -> Result<Self, OpenError> {
        let (records, defects) = scan_records(&bytes);
        let known = |t: u32| matches!(t, META | SYMS | TOPO | FRAM | CNTR | DIRE);
        if !records.iter().any(|r| known(r.record_type)) {
            return Err(error);
        }
        let mut c = Self::by_scan_of(Header::new(), bytes, records, defects);
        c.defects.insert(
            0,
            Defect::HeaderDamaged {
                reason: error.to_string(),
            },
        );
        Ok(c)
    }

    fn read_record(
        source: &Source,
        offset: u64,
        length: u64,
        file_len: u64,
    ) -> Result<(RecordRef, Cow<'_, [u8]>), String> {
        if length < RECORD_HEADER_LEN as u64
            || offset.checked_add(length).is_none_or(|e| e > file_len)
        {
            return Err(format!("record at offset {offset} of length {length} lies past the end of the {file_len}-byte file"));
        }
        let bytes = source.read_at(offset, length).map_err(|e| e.to_string())?;
        let r = record_at(&bytes, 0)
            .filter(|r| r.length() == length)
            .ok_or_else(|| format!("no intact record of length {length} at offset {offset}"))?;
        let r = RecordRef { offset, ..r };
        Ok((r, bytes))
    }

    fn by_directory(
        header: Header,
        source: Source,
        file_len: u64,
    ) -> Result<Self, (String, Source)> {
        let dir_end = header
            .directory_offset
            .checked_add(header.directory_byte_length);
        if header.directory_offset < HEADER_LEN as u64 || dir_end.is_none_or(|e| e > file_len) {
            let reason = format!(
                "directory at {}..{} lies outside the {file_len}-byte file (truncated?)",
                header.directory_offset,
                header
                    .directory_offset
                    .saturating_add(header.directory_byte_length)
            );
            return Err((reason, source));
        }
        let result = (|| -> Result<Self, String> {
            let (dire, bytes) = Self::read_record(
                &source,
                header.directory_offset,
                header.directory_byte_length,
                file_len,
            )?;
            if dire.record_type != DIRE {
                return Err(format!(
                    "record at the directory offset is {}",
                    fourcc_name(dire.record_type)
                ));
            }
            let (dir_records, table) =
                payload::tracks::decode_directory_owned(bytes.into_owned(), RECORD_HEADER_LEN)
                    .map_err(|e| e.to_string())?;
            let mut c = Self {
                header,
                source: Source::Memory(Vec::new()),
                file_len,
                by_directory: true,
                records: Vec::new(),
                frames: Frames::Scanned(Vec::new()),
                meta: None,
                symbols: SymbolTable::new(),
                topologies: Vec::new(),
                defects: Vec::new(),
            };
            for r in &dir_records {
                let (rr, bytes) =
                    Self::read_record(&source, r.offset, r.length, header.directory_offset)?;
                if rr.record_type != r.record_type {
                    return Err(format!(
                        "directory says {} at offset {} but finds {}",
                        fourcc_name(r.record_type),
                        r.offset,
                        fourcc_name(rr.record_type)
                    ));
                }
                if matches!(r.record_type, META | TOPO | SYMS | CNTR) {
                    c.absorb(rr, &bytes[RECORD_HEADER_LEN..]);
                }
                c.records.push(rr);
            }
            let mut prev_end = HEADER_LEN as u64;
            for i in 0..table.len() {
                let Some((offset, length, flags)) = table.location(i) else {
                    break;
                };
                if flags & !payload::tracks::D_KNOWN != 0 {
                    return Err(format!("frame entry {i} has reserved flag bits {flags:#x}"));
                }
                if offset < prev_end || offset.saturating_add(length) > header.directory_offset {
                    return Err(format!(
                        "frame entry {i} at offset {offset} (length {length}) is out of place"
                    ));
                }
                prev_end = offset + length;
                if flags & payload::tracks::D_DEFINES_SYMBOLS != 0 {
                    let (rr, bytes) =
                        Self::read_record(&source, offset, length, header.directory_offset)?;
                    if let Ok(symbols) =
                        payload::decode_symbol_block(&mut Cursor::new(&bytes[RECORD_HEADER_LEN..]))
                    {
                        c.add_symbols(symbols, rr.offset);
                    }
                }
            }
            c.frames = Frames::Table(table);
            c.records.push(dire);
            c.records.sort_by_key(|r| r.offset);
            if c.meta.is_none() {
                c.defects.push(Defect::MissingMeta);
            }
            let end = dire.offset + dire.length();
            if end < file_len {
                c.defects.push(Defect::TrailingBytes {
                    offset: end,
                    bytes: file_len - end,
                });
            }
            Ok(c)
        })();
        match result {
            Ok(mut c) => {
                c.source = source;
                Ok(c)
            }
            Err(reason) => Err((reason, source)),
        }
    }

    fn by_scan(header: Header, bytes: Vec<u8>) -> Self {
        let (records, defects) = scan_records(&bytes);
        Self::by_scan_of(header, bytes, records, defects)
    }

    /// A capture from a scan's records and defects.
    fn by_scan_of(
        header: Header,
        bytes: Vec<u8>,
        records: Vec<RecordRef>,
        mut defects: Vec<Defect>,
    ) -> Self {
        // The directory ends a capture: what follows it and holds no intact record is
        // trailing bytes, not an incomplete record.
        if let (Some(last), Some(&Defect::TruncatedTail { offset, bytes_lost })) =
            (records.last(), defects.last())
        {
            if last.record_type == DIRE && offset == last.offset + last.length() {
                defects.pop();
                defects.push(Defect::TrailingBytes {
                    offset,
                    bytes: bytes_lost,
                });
            }
        }
        let mut c = Self {
            header,
            source: Source::Memory(Vec::new()),
            file_len: bytes.len() as u64,
            by_directory: false,
            records: Vec::with_capacity(records.len()),
            frames: Frames::Scanned(Vec::new()),
            meta: None,
            symbols: SymbolTable::new(),
            topologies: Vec::new(),
            defects,
        };
        let mut directory: Option<FrameTable> = None;
        let mut frames: Vec<FrameEntry> = Vec::new();
        let mut dropped_before: Vec<u64> = Vec::new();
        for r in records {
            let start = r.payload_offset() as usize;
            let payload = &bytes[start..start + r.payload_len as usize];
            match r.record_type {
                FRAM => match payload::peek_frame(payload) {
                    Ok(peek) => {
                        if peek.defines_symbols {
                            if let Ok(symbols) =
                                payload::decode_symbol_block(&mut Cursor::new(payload))
                            {
                                c.add_symbols(symbols, r.offset);
                            }
                        }
                        dropped_before.push(peek.dropped_frames_before);
                        frames.push(FrameEntry {
                            index: peek.index,
                            offset: r.offset,
                            length: r.length(),
                            cpu_begin_ns: peek.cpu_begin_ns,
                            work_ns: peek.cpu_end_ns.saturating_sub(peek.cpu_begin_ns),
                            period_ns: None,
                            gpu_ns: None,
                            hitch: false,
                            paused: peek.paused,
                        });
                    }
                    Err(error) => c.defects.push(Defect::BadPayload {
                        offset: r.offset,
                        record_type: FRAM,
                        error,
                    }),
                },
                DIRE => {
                    if let Ok((_, table)) = payload::decode_directory(payload) {
                        directory = Some(table);
                    }
                }
                _ => c.absorb(r, payload),
            }
            c.records.push(r);
        }
        crate::derived::fill_periods(&mut frames, &dropped_before);
        if let Some(table) = directory {
            // Hitch flags and GPU durations are only in the directory: match by offset.
            let by_offset: HashMap<u64, usize> = frames
                .iter()
                .enumerate()
                .map(|(i, f)| (f.offset, i))
                .collect();
            for (e, _) in table.iter() {
                if let Some(&i) = by_offset.get(&e.offset) {
                    frames[i].hitch = e.hitch;
                    frames[i].gpu_ns = e.gpu_ns;
                }
            }
        }
        c.frames = Frames::Scanned(frames);
        let end_offset = c
            .records
            .last()
            .map_or(HEADER_LEN as u64, |r| r.offset + r.length());
        let ended_with_directory = c.records.last().is_some_and(|r| r.record_type == DIRE);
        if !c.header.is_closed() && !ended_with_directory {
            c.defects.push(Defect::Unclosed { end_offset });
        } else {
            // Closed, yet scanned: if the file stops short of where its directory should
            // end and the scan found no incomplete record, the cut fell on a boundary.
            let dir_end = c
                .header
                .directory_offset
                .saturating_add(c.header.directory_byte_length);
            let tail_reported = c
                .defects
                .iter()
                .any(|d| matches!(d, Defect::TruncatedTail { .. }));
            if !tail_reported && end_offset == c.file_len && dir_end > c.file_len {
                c.defects.push(Defect::TruncatedTail {
                    offset: c.file_len,
                    bytes_lost: dir_end - c.file_len,
                });
            }
        }
        if c.meta.is_none() {
            c.defects.push(Defect::MissingMeta);
        }
        c.source = Source::Memory(bytes);
        c
    }

    fn add_symbols(&mut self, symbols: Vec<Symbol>, offset: u64) {
        for s in symbols {
            match self.symbols.get(s.id) {
                Some(existing) if *existing != s => {
                    self.defects
                        .push(Defect::ConflictingSymbol { id: s.id, offset });
                }
                Some(_) => {}
                None => {
                    self.symbols.insert(s);
                }
            }
        }
    }

    /// Takes in a non-frame record's payload.
    fn absorb(&mut self, r: RecordRef, payload: &[u8]) {
        let bad = |error| Defect::BadPayload {
            offset: r.offset,
            record_type: r.record_type,
            error,
        };
        match r.record_type {
            META => match payload::decode_meta(payload) {
                Ok((symbols, meta)) => {
                    self.add_symbols(symbols, r.offset);
                    if self.meta.is_none() {
                        self.meta = Some(meta);
                    }
                }
                Err(e) => self.defects.push(bad(e)),
            },
            TOPO => match payload::decode_topology(payload) {
                Ok((symbols, topo)) => {
                    self.add_symbols(symbols, r.offset);
                    self.topologies.push(topo);
                }
                Err(e) => self.defects.push(bad(e)),
            },
            SYMS => {
                let mut c = Cursor::new(payload);
                match payload::decode_symbol_block(&mut c).and_then(|s| c.finish().map(|()| s)) {
                    Ok(symbols) => self.add_symbols(symbols, r.offset),
                    Err(e) => self.defects.push(bad(e)),
                }
            }
            CNTR => match payload::decode_symbol_block(&mut Cursor::new(payload)) {
                Ok(symbols) => self.add_symbols(symbols, r.offset),
                Err(e) => self.defects.push(bad(e)),
            },
            FRAM | DIRE => {}
            other => self.defects.push(Defect::UnknownRecord {
                offset: r.offset,
                record_type: other,
            }),
        }
    }

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

    /// Decodes every sampled counter track.
    pub fn counter_tracks(&self) -> Vec<Result<CounterTrack, Defect>> {
        self.records
            .iter()
            .filter(|r| r.record_type == CNTR)
            .map(|r| {
                let bytes = self
                    .source
                    .read_at(r.payload_offset(), u64::from(r.payload_len))
                    .map_err(|_| Defect::Corrupt {
                        offset: r.offset,
                        bytes_skipped: r.length(),
                    })?;
                payload::decode_counter_track(&bytes)
                    .map(|(_, t)| t)
                    .map_err(|error| Defect::BadPayload {
                        offset: r.offset,
                        record_type: CNTR,
                        error,
                    })
            })
            .collect()
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
