//! The `CNTR` (sampled counter track) and `DIRE` (directory) payloads.

use crate::error::DecodeError;
use crate::model::{CounterTrack, Directory, FrameEntry, RecordEntry, Sample, Symbol};
use crate::payload::symbols::{decode_symbol_block, encode_symbol_block};
use crate::wire::{put_svarint, put_varint, Cursor};

/// Appends a CNTR payload.
pub fn encode_counter_track<'s>(
    out: &mut Vec<u8>,
    track: &CounterTrack,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
) {
    encode_symbol_block(out, defs);
    put_varint(out, u64::from(track.counter));
    put_varint(out, track.samples.len() as u64);
    let (mut prev_at, mut prev_value) = (0u64, 0i64);
    for s in &track.samples {
        put_svarint(out, s.at_ns.wrapping_sub(prev_at) as i64);
        put_svarint(out, s.value.wrapping_sub(prev_value));
        prev_at = s.at_ns;
        prev_value = s.value;
    }
}

/// Reads a CNTR payload.
pub fn decode_counter_track(payload: &[u8]) -> Result<(Vec<Symbol>, CounterTrack), DecodeError> {
    let mut c = Cursor::new(payload);
    let symbols = decode_symbol_block(&mut c)?;
    let counter = c.varint_u32("counter symbol")?;
    let n = c.count(2)?;
    let mut samples = Vec::with_capacity(n);
    let (mut at_ns, mut value) = (0u64, 0i64);
    for _ in 0..n {
        at_ns = at_ns.wrapping_add(c.svarint()? as u64);
        value = value.wrapping_add(c.svarint()?);
        samples.push(Sample { at_ns, value });
    }
    c.finish()?;
    Ok((symbols, CounterTrack { counter, samples }))
}

/// Directory frame-entry flag: the writer's hitch rule flagged the frame.
pub const D_HITCH: u32 = 1;
/// Directory frame-entry flag: the host declared the frame paused.
pub const D_PAUSED: u32 = 2;
/// Directory frame-entry flag: the frame's record defines at least one new symbol.
pub const D_DEFINES_SYMBOLS: u32 = 4;
/// Directory frame-entry flag: `period_ns` is present.
pub const D_HAS_PERIOD: u32 = 8;
/// Directory frame-entry flag: `gpu_ns` is present.
pub const D_HAS_GPU: u32 = 16;
/// Every directory frame-entry flag this version defines; other bits are reserved.
pub const D_KNOWN: u32 = 31;

/// Bytes per fixed-width frame entry in `DIRE`.
pub const FRAME_ENTRY_LEN: usize = 56;

/// Appends a DIRE payload: the symbol block (empty), the other records (varints), then a
/// fixed-width table of frame entries, so a reader can open a capture of any size without
/// decoding per-frame varints. `defines_symbols[i]` says whether frame `i`'s record carries
/// new symbol definitions.
pub fn encode_directory(out: &mut Vec<u8>, dir: &Directory, defines_symbols: &[bool]) {
    encode_directory_head(out, &dir.records, dir.frames.len());
    out.reserve(dir.frames.len() * FRAME_ENTRY_LEN);
    for (i, f) in dir.frames.iter().enumerate() {
        encode_frame_entry(out, f, defines_symbols.get(i).copied().unwrap_or(false));
    }
}

/// Appends the part of a DIRE payload before its frame table: the (empty) symbol block, the
/// other records and the number of frame entries. With [`encode_frame_entry`] per frame it
/// makes the bytes [`encode_directory`] makes, one entry at a time.
pub fn encode_directory_head(out: &mut Vec<u8>, records: &[RecordEntry], frames: usize) {
    encode_symbol_block(out, std::iter::empty());
    put_varint(out, records.len() as u64);
    for r in records {
        out.extend_from_slice(&r.record_type.to_le_bytes());
        put_varint(out, r.offset);
        put_varint(out, r.length);
    }
    put_varint(out, frames as u64);
}

/// Appends one fixed-width ([`FRAME_ENTRY_LEN`]-byte) frame entry of a DIRE table.
pub fn encode_frame_entry(out: &mut Vec<u8>, f: &FrameEntry, defines_symbols: bool) {
    let mut flags = 0u32;
    if f.hitch {
        flags |= D_HITCH;
    }
    if f.paused {
        flags |= D_PAUSED;
    }
    if defines_symbols {
        flags |= D_DEFINES_SYMBOLS;
    }
    if f.period_ns.is_some() {
        flags |= D_HAS_PERIOD;
    }
    if f.gpu_ns.is_some() {
        flags |= D_HAS_GPU;
    }
    let payload_len = f.length.saturating_sub(16).min(u64::from(u32::MAX)) as u32;
    out.extend_from_slice(&f.index.to_le_bytes());
    out.extend_from_slice(&f.offset.to_le_bytes());
    out.extend_from_slice(&payload_len.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&f.cpu_begin_ns.to_le_bytes());
    out.extend_from_slice(&f.work_ns.to_le_bytes());
    out.extend_from_slice(&f.period_ns.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&f.gpu_ns.unwrap_or(0).to_le_bytes());
}

/// The frame table of a decoded `DIRE`: fixed-width entries, decoded on access. It owns
/// the bytes it was read into, so opening a large capture copies the table zero times.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct FrameTable {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl FrameTable {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn entry_bytes(&self, i: usize) -> Option<&[u8]> {
        if i >= self.len {
            return None;
        }
        let at = self.start + i * FRAME_ENTRY_LEN;
        self.bytes.get(at..at + FRAME_ENTRY_LEN)
    }

    /// Entry `i` and whether its record defines symbols.
    pub fn get(&self, i: usize) -> Option<(FrameEntry, bool)> {
        let b = self.entry_bytes(i)?;
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(a)
        };
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let flags = u32_at(20);
        let entry = FrameEntry {
            index: u64_at(0),
            offset: u64_at(8),
            length: 16 + u64::from(u32_at(16)),
            cpu_begin_ns: u64_at(24),
            work_ns: u64_at(32),
            period_ns: (flags & D_HAS_PERIOD != 0).then(|| u64_at(40)),
            gpu_ns: (flags & D_HAS_GPU != 0).then(|| u64_at(48)),
            hitch: flags & D_HITCH != 0,
            paused: flags & D_PAUSED != 0,
        };
        Some((entry, flags & D_DEFINES_SYMBOLS != 0))
    }

    /// Entry `i`'s record offset, record length and flags, without decoding the rest.
    pub fn location(&self, i: usize) -> Option<(u64, u64, u32)> {
        let b = self.entry_bytes(i)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[8..16]);
        let payload_len = u32::from_le_bytes([b[16], b[17], b[18], b[19]]);
        let flags = u32::from_le_bytes([b[20], b[21], b[22], b[23]]);
        Some((u64::from_le_bytes(a), 16 + u64::from(payload_len), flags))
    }

    /// Every entry with its defines-symbols flag.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (FrameEntry, bool)> + '_ {
        (0..self.len()).map(move |i| self.get(i).unwrap_or_default())
    }
}

/// Reads a DIRE payload: the other records and the frame table (entries checked for
/// reserved flag bits, decoded on access).
pub fn decode_directory(payload: &[u8]) -> Result<(Vec<RecordEntry>, FrameTable), DecodeError> {
    let (records, table) = decode_directory_owned(payload.to_vec(), 0)?;
    for i in 0..table.len() {
        if let Some((_, _, flags)) = table.location(i) {
            if flags & !D_KNOWN != 0 {
                return Err(DecodeError::InvalidValue {
                    field: "directory flags",
                    value: u64::from(flags),
                    offset: table.start + i * FRAME_ENTRY_LEN + 20,
                });
            }
        }
    }
    Ok((records, table))
}

/// As [`decode_directory`], taking ownership of a buffer whose payload starts at
/// `payload_start` (so the frame table is never copied). Reserved flag bits are not
/// checked here: a caller that walks the table checks them with [`D_KNOWN`] as it goes.
pub fn decode_directory_owned(
    bytes: Vec<u8>,
    payload_start: usize,
) -> Result<(Vec<RecordEntry>, FrameTable), DecodeError> {
    let payload = bytes.get(payload_start..).unwrap_or_default();
    let mut c = Cursor::new(payload);
    let _ = decode_symbol_block(&mut c)?;
    let n = c.count(6)?;
    let mut records = Vec::with_capacity(n);
    for _ in 0..n {
        let b = c.bytes(4)?;
        let record_type = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        records.push(RecordEntry {
            record_type,
            offset: c.varint()?,
            length: c.varint()?,
        });
    }
    let len = c.count(FRAME_ENTRY_LEN)?;
    let start = c.pos();
    c.bytes(len * FRAME_ENTRY_LEN)?;
    c.finish()?;
    Ok((
        records,
        FrameTable {
            start: payload_start + start,
            len,
            bytes,
        },
    ))
}
