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

const D_HITCH: u8 = 1;
const D_PAUSED: u8 = 2;
const D_DEFINES_SYMBOLS: u8 = 4;

/// Appends a DIRE payload. `defines_symbols[i]` says whether frame `i`'s record carries
/// symbol definitions (a reader opening by the directory loads those records' symbols).
pub fn encode_directory(out: &mut Vec<u8>, dir: &Directory, defines_symbols: &[bool]) {
    encode_symbol_block(out, std::iter::empty());
    put_varint(out, dir.frames.len() as u64);
    let (mut prev_index, mut prev_offset, mut prev_begin) = (0u64, 0u64, 0u64);
    for (i, f) in dir.frames.iter().enumerate() {
        put_svarint(out, f.index.wrapping_sub(prev_index) as i64);
        put_svarint(out, f.offset.wrapping_sub(prev_offset) as i64);
        put_varint(out, f.length);
        put_svarint(out, f.cpu_begin_ns.wrapping_sub(prev_begin) as i64);
        put_varint(out, f.work_ns);
        put_varint(out, f.period_ns.map_or(0, |p| p.saturating_add(1)));
        put_varint(out, f.gpu_ns.map_or(0, |g| g.saturating_add(1)));
        let mut flags = 0;
        if f.hitch {
            flags |= D_HITCH;
        }
        if f.paused {
            flags |= D_PAUSED;
        }
        if defines_symbols.get(i).copied().unwrap_or(false) {
            flags |= D_DEFINES_SYMBOLS;
        }
        out.push(flags);
        prev_index = f.index;
        prev_offset = f.offset;
        prev_begin = f.cpu_begin_ns;
    }
    put_varint(out, dir.records.len() as u64);
    for r in &dir.records {
        out.extend_from_slice(&r.record_type.to_le_bytes());
        put_varint(out, r.offset);
        put_varint(out, r.length);
    }
}

/// Reads a DIRE payload: the directory and, per frame, whether its record defines symbols.
pub fn decode_directory(payload: &[u8]) -> Result<(Directory, Vec<bool>), DecodeError> {
    let mut c = Cursor::new(payload);
    let _ = decode_symbol_block(&mut c)?;
    let n = c.count(8)?;
    let mut dir = Directory {
        frames: Vec::with_capacity(n),
        records: Vec::new(),
    };
    let mut defines = Vec::with_capacity(n);
    let (mut index, mut offset, mut begin) = (0u64, 0u64, 0u64);
    for _ in 0..n {
        index = index.wrapping_add(c.svarint()? as u64);
        offset = offset.wrapping_add(c.svarint()? as u64);
        let length = c.varint()?;
        begin = begin.wrapping_add(c.svarint()? as u64);
        let work_ns = c.varint()?;
        let period_ns = c.varint()?.checked_sub(1);
        let gpu_ns = c.varint()?.checked_sub(1);
        let at = c.pos();
        let flags = c.u8()?;
        if flags & !7 != 0 {
            return Err(DecodeError::InvalidValue {
                field: "directory flags",
                value: u64::from(flags),
                offset: at,
            });
        }
        dir.frames.push(FrameEntry {
            index,
            offset,
            length,
            cpu_begin_ns: begin,
            work_ns,
            period_ns,
            gpu_ns,
            hitch: flags & D_HITCH != 0,
            paused: flags & D_PAUSED != 0,
        });
        defines.push(flags & D_DEFINES_SYMBOLS != 0);
    }
    let n = c.count(6)?;
    dir.records.reserve(n);
    for _ in 0..n {
        let b = c.bytes(4)?;
        let record_type = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        dir.records.push(RecordEntry {
            record_type,
            offset: c.varint()?,
            length: c.varint()?,
        });
    }
    c.finish()?;
    Ok((dir, defines))
}
