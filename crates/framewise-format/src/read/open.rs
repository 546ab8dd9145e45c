//! Opening a capture: validating the header (and recovering from a damaged one), by the
//! directory when the file is CLOSED and the directory is usable, by scanning otherwise.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Mutex;

use crate::container::{
    fourcc_name, is_damaged_magic, Header, CENS, CNTR, DIRE, FRAM, HEADER_LEN, META,
    RECORD_HEADER_LEN, SYMS, TOPO,
};
use crate::error::OpenError;
use crate::model::{FrameEntry, Symbol, SymbolTable};
use crate::payload;
use crate::payload::tracks::FrameTable;
use crate::wire::Cursor;

use super::scan::{record_at, scan, Scan};
use super::source::Source;
use super::{Capture, Defect, Frames, RecordRef};

/// Whether a header that failed to parse may be damage over a capture (a checksum that
/// does not match, a magic one bit from `SGPT`) rather than another kind of file.
fn header_damage_is_recoverable(e: &OpenError) -> bool {
    match e {
        OpenError::BadHeaderChecksum { .. } => true,
        OpenError::BadMagic { found, .. } => is_damaged_magic(*found),
        _ => false,
    }
}

impl Capture {
    /// See [`open`](super::open).
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

    /// See [`from_bytes`](super::from_bytes).
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
        let scanned = scan(&bytes);
        let known = |t: u32| matches!(t, META | SYMS | TOPO | FRAM | CNTR | CENS | DIRE);
        if !scanned.records.iter().any(|r| known(r.record_type)) {
            return Err(error);
        }
        let mut c = Self::by_scan_of(Header::new(), bytes, scanned);
        c.defects.insert(
            0,
            Defect::HeaderDamaged {
                reason: error.to_string(),
            },
        );
        Ok(c)
    }

    pub(super) fn read_record(
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
                if matches!(r.record_type, META | TOPO | SYMS | CNTR | CENS) {
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
        let scanned = scan(&bytes);
        Self::by_scan_of(header, bytes, scanned)
    }

    /// A capture from what a scan read.
    fn by_scan_of(header: Header, bytes: Vec<u8>, scanned: Scan) -> Self {
        let Scan {
            records,
            mut defects,
            tail,
        } = scanned;
        if let Some(tail) = tail {
            let after_directory = records.last().is_some_and(|last| {
                last.record_type == DIRE && tail.offset == last.offset + last.length()
            });
            // A closed file whose unreadable tail is exactly where its header puts the
            // directory (offset and length, to the end of the file) lost its directory, which
            // directory-unusable reports, not frames: every record before it read.
            let lost_directory = header.is_closed()
                && tail.offset == header.directory_offset
                && tail.bytes == header.directory_byte_length
                && tail.offset.saturating_add(tail.bytes) == bytes.len() as u64;
            if after_directory {
                // The directory ends a capture: what follows it and holds no intact record
                // is trailing bytes, not an incomplete record.
                defects.push(Defect::TrailingBytes {
                    offset: tail.offset,
                    bytes: tail.bytes,
                });
            } else if !lost_directory {
                defects.push(tail.truncated());
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
        if let Some(table) = &directory {
            // The directory is the one witness of frames after the last one the scan read
            // (gaps before it show in the indices themselves): frames it lists past that one
            // are no longer in the file.
            let last_read = frames.iter().map(|f| f.index).max();
            let mut listed_after = table
                .iter()
                .map(|(e, _)| e.index)
                .filter(|&index| last_read.is_none_or(|last| index > last));
            if let Some(first_index) = listed_after.next() {
                c.defects.push(Defect::FramesMissing {
                    count: 1 + listed_after.count() as u64,
                    first_index,
                });
            }
        }
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
            // A scan that ended on an intact directory read the whole file: the header's
            // pointer is what is wrong (directory-unusable says so), nothing was cut.
            if !tail_reported
                && !ended_with_directory
                && end_offset == c.file_len
                && dir_end > c.file_len
            {
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
            // The document is decoded on demand (`Capture::censuses`); its symbols now.
            CENS => match payload::decode_symbol_block(&mut Cursor::new(payload)) {
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
}
