//! The streaming writer: header, then one complete record per call, then `DIRE` at finish.

use std::collections::{HashMap, HashSet};
use std::io::{Seek, SeekFrom, Write};

use crate::container::{self, Header, CNTR, DIRE, FLAG_CLOSED, FRAM, HEADER_LEN, META, SYMS, TOPO};
use crate::error::EncodeError;
use crate::model::{
    CounterTrack, Directory, Frame, FrameEntry, Meta, RecordEntry, SymId, Symbol, SymbolTable,
    Topology,
};
use crate::payload;

/// Every this many frame records, a frame re-declares every symbol it refers to, so
/// damage to the record that first defined a name leaves at most this many frames
/// unresolved.
pub const SYMBOL_REFRESH_FRAMES: u64 = 256;

/// Writes a capture to any sink, one complete record per call.
///
/// Records are written with a single `write_all` each; the writer does not flush (wrap a
/// file in a `BufWriter` and call [`Writer::flush`] when a record must reach the OS).
pub struct Writer<W: Write> {
    sink: Option<W>,
    pos: u64,
    emitted: HashSet<SymId>,
    topologies: HashSet<u64>,
    frames: Vec<FrameEntry>,
    frame_defines: Vec<bool>,
    records: Vec<RecordEntry>,
    gpu_periods: HashMap<SymId, f64>,
    frames_written: u64,
    scratch: Vec<u8>,
    /// A frame's payload, reused from frame to frame.
    payload: Vec<u8>,
    refs: Vec<SymId>,
}

impl<W: Write> Writer<W> {
    /// Writes the header and the META record. `symbols` must define every symbol META
    /// refers to (its GPU queues).
    pub fn new(sink: W, meta: &Meta, symbols: &SymbolTable) -> Result<Self, EncodeError> {
        let mut w = Self {
            sink: Some(sink),
            pos: 0,
            emitted: HashSet::new(),
            topologies: HashSet::new(),
            frames: Vec::new(),
            frame_defines: Vec::new(),
            records: Vec::new(),
            gpu_periods: meta
                .gpu_clocks
                .iter()
                .map(|c| (c.queue, c.timestamp_period_ns))
                .collect(),
            frames_written: 0,
            scratch: Vec::with_capacity(4096),
            payload: Vec::with_capacity(4096),
            refs: Vec::new(),
        };
        w.write_raw(&Header::new().to_bytes())?;
        let refs: Vec<SymId> = meta.gpu_clocks.iter().map(|c| c.queue).collect();
        let defs = w.definitions(&refs, symbols, false)?;
        let mut payload = Vec::new();
        payload::encode_meta(&mut payload, meta, defs.iter());
        w.write_record(META, &payload, &refs)?;
        Ok(w)
    }

    /// Bytes written so far, header included.
    pub fn bytes_written(&self) -> u64 {
        self.pos
    }

    /// Frame records written so far.
    pub fn frames_written(&self) -> u64 {
        self.frames_written
    }

    /// Flushes the sink.
    pub fn flush(&mut self) -> Result<(), EncodeError> {
        self.sink.as_mut().ok_or(EncodeError::Poisoned)?.flush()?;
        Ok(())
    }

    /// The sink, for inspection.
    pub fn get_ref(&self) -> Option<&W> {
        self.sink.as_ref()
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        let sink = self.sink.as_mut().ok_or(EncodeError::Poisoned)?;
        if let Err(e) = sink.write_all(bytes) {
            // A partial write leaves the stream's framing unknown; refuse further records
            // rather than write ones that would sit at a wrong offset.
            self.sink = None;
            return Err(e.into());
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Symbols among `refs` that this record must define: the ones never written yet, or
    /// all of them when `refresh` is set.
    fn definitions(
        &self,
        refs: &[SymId],
        symbols: &SymbolTable,
        refresh: bool,
    ) -> Result<Vec<Symbol>, EncodeError> {
        let mut defs = Vec::new();
        for &id in refs {
            if refresh || !self.emitted.contains(&id) {
                let s = symbols.get(id).ok_or(EncodeError::UndefinedSymbol { id })?;
                defs.push(s.clone());
            }
        }
        Ok(defs)
    }

    fn write_record(
        &mut self,
        record_type: u32,
        payload: &[u8],
        refs: &[SymId],
    ) -> Result<(u64, u64), EncodeError> {
        if u32::try_from(payload.len()).is_err() {
            return Err(EncodeError::PayloadTooLarge {
                bytes: payload.len(),
            });
        }
        let offset = self.pos;
        let header = container::record_header(record_type, payload);
        let mut rec = std::mem::take(&mut self.scratch);
        rec.clear();
        rec.extend_from_slice(&header);
        rec.extend_from_slice(payload);
        let result = self.write_raw(&rec);
        self.scratch = rec;
        result?;
        self.emitted.extend(refs.iter().copied());
        let length = self.pos - offset;
        if record_type != FRAM {
            self.records.push(RecordEntry {
                record_type,
                offset,
                length,
            });
        }
        Ok((offset, length))
    }

    /// Writes one frame record. Symbols it is the first to need are defined in it.
    pub fn write_frame(&mut self, frame: &Frame, symbols: &SymbolTable) -> Result<(), EncodeError> {
        let mut refs = std::mem::take(&mut self.refs);
        refs.clear();
        frame.referenced_symbols(&mut refs);
        let refresh =
            self.frames_written > 0 && self.frames_written.is_multiple_of(SYMBOL_REFRESH_FRAMES);
        let result = (|| {
            let defs = self.definitions(&refs, symbols, refresh)?;
            let defines_new = defs.iter().any(|d| !self.emitted.contains(&d.id));
            let mut payload = std::mem::take(&mut self.payload);
            payload.clear();
            let written = payload::encode_frame(&mut payload, frame, defs.iter())
                .and_then(|()| self.write_record(FRAM, &payload, &refs));
            self.payload = payload;
            let (offset, length) = written?;
            self.frames_written += 1;
            self.frames.push(FrameEntry {
                index: frame.index,
                offset,
                length,
                cpu_begin_ns: frame.cpu_begin_ns,
                work_ns: frame.work_ns(),
                period_ns: None,
                gpu_ns: self.gpu_duration_ns(frame),
                hitch: false,
                paused: frame.paused,
            });
            self.frame_defines.push(defines_new);
            Ok(())
        })();
        self.refs = refs;
        result
    }

    /// GPU duration of a frame in ns: per queue, first begin to last end of its timed
    /// passes, times the queue's declared period; the longest queue wins.
    fn gpu_duration_ns(&self, frame: &Frame) -> Option<u64> {
        let mut best: Option<u64> = None;
        for (qi, q) in frame.gpu.queues.iter().enumerate() {
            let Some(&period) = self.gpu_periods.get(&q.queue) else {
                continue;
            };
            let timed = frame
                .gpu
                .passes
                .iter()
                .filter(|p| p.queue_index as usize == qi)
                .filter_map(|p| p.timing);
            let (mut lo, mut hi) = (u64::MAX, 0u64);
            for t in timed {
                lo = lo.min(t.begin_ticks);
                hi = hi.max(t.end_ticks);
            }
            if lo <= hi {
                let ns = ((hi - lo) as f64 * period).round() as u64;
                best = Some(best.map_or(ns, |b| b.max(ns)));
            }
        }
        best
    }

    /// Writes a topology record unless one with the same id was already written.
    /// Returns whether it wrote.
    pub fn write_topology(
        &mut self,
        topo: &Topology,
        symbols: &SymbolTable,
    ) -> Result<bool, EncodeError> {
        if self.topologies.contains(&topo.id) {
            return Ok(false);
        }
        let mut refs = Vec::new();
        topo.referenced_symbols(&mut refs);
        let defs = self.definitions(&refs, symbols, false)?;
        let mut payload = Vec::new();
        payload::encode_topology(&mut payload, topo, defs.iter());
        self.write_record(TOPO, &payload, &refs)?;
        self.topologies.insert(topo.id);
        Ok(true)
    }

    /// Writes a sampled counter track record.
    pub fn write_counter_track(
        &mut self,
        track: &CounterTrack,
        symbols: &SymbolTable,
    ) -> Result<(), EncodeError> {
        let refs = [track.counter];
        let defs = self.definitions(&refs, symbols, false)?;
        let mut payload = Vec::new();
        payload::encode_counter_track(&mut payload, track, defs.iter());
        self.write_record(CNTR, &payload, &refs)?;
        Ok(())
    }

    /// Writes a standalone `SYMS` record defining those of `ids` not yet written (only
    /// for symbols no other record carries). Writes nothing when all are known.
    pub fn write_symbols(
        &mut self,
        ids: &[SymId],
        symbols: &SymbolTable,
    ) -> Result<(), EncodeError> {
        let defs = self.definitions(ids, symbols, false)?;
        if defs.is_empty() {
            return Ok(());
        }
        let mut payload = Vec::new();
        payload::encode_symbol_block(&mut payload, defs.iter());
        self.write_record(SYMS, &payload, ids)?;
        Ok(())
    }

    /// The directory as it stands: frames written so far with periods filled in.
    pub fn directory(&self, hitch_frames: &[u64]) -> Directory {
        let hitches: HashSet<u64> = hitch_frames.iter().copied().collect();
        let mut frames = self.frames.clone();
        for i in 0..frames.len() {
            let index = frames[i].index;
            let next_begin = frames
                .get(i + 1)
                .filter(|n| Some(n.index) == index.checked_add(1))
                .map(|f| f.cpu_begin_ns);
            let f = &mut frames[i];
            f.period_ns = next_begin.map(|n| n.saturating_sub(f.cpu_begin_ns));
            f.hitch = hitches.contains(&f.index);
        }
        Directory {
            frames,
            records: self.records.clone(),
        }
    }

    fn write_directory(&mut self, hitch_frames: &[u64]) -> Result<(u64, u64), EncodeError> {
        let dir = self.directory(hitch_frames);
        let mut payload = Vec::with_capacity(16 + dir.frames.len() * 12);
        payload::encode_directory(&mut payload, &dir, &self.frame_defines);
        self.write_record(DIRE, &payload, &[])
    }

    /// Writes `DIRE` (frames listed in `hitch_frames` flagged) and returns the sink. For a
    /// seekable sink prefer [`Writer::finish_and_close`], which also patches the header.
    pub fn finish(mut self, hitch_frames: &[u64]) -> Result<W, EncodeError> {
        self.write_directory(hitch_frames)?;
        self.flush()?;
        self.sink.take().ok_or(EncodeError::Poisoned)
    }
}

impl<W: Write + Seek> Writer<W> {
    /// Writes `DIRE`, then patches the header's CLOSED flag and directory pointer, leaving
    /// the sink positioned at the end.
    pub fn finish_and_close(mut self, hitch_frames: &[u64]) -> Result<W, EncodeError> {
        let (offset, length) = self.write_directory(hitch_frames)?;
        let mut sink = self.sink.take().ok_or(EncodeError::Poisoned)?;
        let header = Header {
            flags: FLAG_CLOSED,
            directory_offset: offset,
            directory_byte_length: length,
            ..Header::new()
        };
        sink.flush()?;
        sink.seek(SeekFrom::Start(0))?;
        sink.write_all(&header.to_bytes()[..HEADER_LEN])?;
        sink.seek(SeekFrom::Start(offset + length))?;
        sink.flush()?;
        Ok(sink)
    }
}
