//! The `FRAM` payload: one frame. Byte layout in docs/FORMAT.md; CPU lanes are bit streams
//! of begin/end events coded with adaptive Rice contexts (see [`crate::bits`]).
//!
//! This module holds the record: the frame's head, GPU passes, counters and marks, and the
//! decoder that reuses a frame's vectors. Its two dense parts live beside it: `lane`, a
//! thread's CPU spans as a bit stream, and `workload`, a GPU pass's workload counts.

mod lane;
mod workload;

use crate::error::{DecodeError, EncodeError};
use crate::model::{
    Access, Binding, CounterValue, Frame, GpuAnchor, GpuPass, GpuQueueFrame, GpuTiming, Lane, Mark,
    MarkKind, PassWorkload, SymId, Symbol,
};
use crate::payload::symbols::{decode_symbol_block, encode_symbol_block};
use crate::wire::{put_str, put_svarint, put_varint, Cursor};
use lane::{decode_lane_into, encode_lane};
use workload::{decode_workload, encode_workload};

const FLAG_PAUSED: u8 = 1;
const FLAG_TOPOLOGY: u8 = 2;
const FLAG_GPU_EXPECTED: u8 = 4;
const FLAG_GPU_MISSING: u8 = 8;
const FRAME_FLAGS_KNOWN: u8 = 0x0f;

/// Appends a FRAM payload: the symbol block (`defs`), then the frame.
pub fn encode_frame<'s>(
    out: &mut Vec<u8>,
    frame: &Frame,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
) -> Result<(), EncodeError> {
    encode_frame_with(out, frame, defs, true)
}

/// [`encode_frame`] with every lane coded through each check of the specification's lane
/// algorithm, never by its depths alone: the same bytes and errors, more slowly. The
/// reference that tests (the recorder's among them) compare [`encode_frame`] with.
#[doc(hidden)]
pub fn encode_frame_checked<'s>(
    out: &mut Vec<u8>,
    frame: &Frame,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
) -> Result<(), EncodeError> {
    encode_frame_with(out, frame, defs, false)
}

/// [`encode_frame`] with its lane encoder compiled for BMI1, BMI2 and LZCNT (x86-64): the
/// same bytes and errors, in fewer instructions (the Rice parameters' bit counts in one
/// `lzcnt` each, shifts by any register with `shlx`/`shrx`, which leaves `rcx` to the loop's
/// state).
///
/// # Safety
///
/// The CPU must have BMI1, BMI2 and LZCNT: a caller not built for them calls this in
/// `unsafe`, after checking them (`is_x86_feature_detected!`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2,lzcnt")]
pub fn encode_frame_bmi2<'s>(
    out: &mut Vec<u8>,
    frame: &Frame,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
) -> Result<(), EncodeError> {
    // The closure has this function's features, so it calls the lane encoder built for them.
    encode_frame_body(out, frame, defs, |out, lane, begin, stack| {
        lane::encode_lane_bmi2(out, lane, begin, stack)
    })
}

fn encode_frame_with<'s>(
    out: &mut Vec<u8>,
    frame: &Frame,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
    by_depth: bool,
) -> Result<(), EncodeError> {
    encode_frame_body(out, frame, defs, |out, lane, begin, stack| {
        encode_lane(out, lane, begin, stack, by_depth)
    })
}

/// The body of [`encode_frame_with`] and [`encode_frame_bmi2`], each lane appended by
/// `encode_lane`.
#[inline(always)]
fn encode_frame_body<'s>(
    out: &mut Vec<u8>,
    frame: &Frame,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
    mut encode_lane: impl FnMut(&mut Vec<u8>, &Lane, u64, &mut Vec<u64>) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    encode_symbol_block(out, defs);
    put_varint(out, frame.index);
    let mut flags = 0u8;
    if frame.paused {
        flags |= FLAG_PAUSED;
    }
    if frame.topology.is_some() {
        flags |= FLAG_TOPOLOGY;
    }
    if frame.gpu.expected {
        flags |= FLAG_GPU_EXPECTED;
    }
    if frame.gpu.results_missing {
        flags |= FLAG_GPU_MISSING;
    }
    out.push(flags);
    crate::wire::put_opt_sym(out, frame.phase);
    if let Some(t) = frame.topology {
        out.extend_from_slice(&t.to_le_bytes());
    }
    let begin = frame.cpu_begin_ns;
    put_varint(out, begin);
    put_varint(out, frame.cpu_end_ns.wrapping_sub(begin));
    put_varint(out, frame.dropped_frames_before);

    put_varint(out, frame.lanes.len() as u64);
    let mut stack = Vec::new();
    for lane in &frame.lanes {
        encode_lane(out, lane, begin, &mut stack)?;
    }

    // GPU
    put_varint(out, frame.gpu.queues.len() as u64);
    for q in &frame.gpu.queues {
        put_varint(out, u64::from(q.queue));
        let a = q.anchor;
        out.push(
            u8::from(a.cpu_submit_ns.is_some()) | (u8::from(a.cpu_readback_ns.is_some()) << 1),
        );
        for t in [a.cpu_submit_ns, a.cpu_readback_ns].into_iter().flatten() {
            put_svarint(out, t.wrapping_sub(begin) as i64);
        }
    }
    put_varint(out, frame.gpu.passes.len() as u64);
    let mut prev_begin_ticks = 0u64;
    for p in &frame.gpu.passes {
        put_varint(out, u64::from(p.pass));
        put_varint(
            out,
            (u64::from(p.queue_index) << 1) | u64::from(p.timing.is_some()),
        );
        put_varint(out, u64::from(p.depth));
        if let Some(t) = p.timing {
            put_svarint(out, t.begin_ticks.wrapping_sub(prev_begin_ticks) as i64);
            put_svarint(out, t.end_ticks.wrapping_sub(t.begin_ticks) as i64);
            prev_begin_ticks = t.begin_ticks;
        }
    }

    put_varint(out, frame.workloads.len() as u64);
    for w in &frame.workloads {
        put_varint(out, u64::from(w.pass));
        encode_workload(out, &w.workload);
    }

    put_varint(out, frame.bindings.len() as u64);
    for b in &frame.bindings {
        put_varint(out, u64::from(b.pass));
        put_varint(out, u64::from(b.resource));
        out.push(u8::from(b.attachment));
        put_varint(out, u64::from(b.slot));
        out.push(b.access as u8);
    }

    put_varint(out, frame.counters.len() as u64);
    let mut prev_sym: i64 = 0;
    for c in &frame.counters {
        put_svarint(out, i64::from(c.counter) - prev_sym);
        prev_sym = i64::from(c.counter);
        put_svarint(out, c.value);
    }

    put_varint(out, frame.marks.len() as u64);
    for m in &frame.marks {
        put_varint(out, u64::from(m.name));
        put_varint(out, u64::from(m.thread));
        put_svarint(out, m.at_ns.wrapping_sub(begin) as i64);
        match &m.kind {
            MarkKind::Instant => out.push(0),
            MarkKind::User { window_ns, note } => {
                out.push(1);
                put_varint(out, *window_ns);
                put_str(out, note);
            }
        }
    }
    Ok(())
}

/// The fields of a frame that precede its lanes: enough for a directory entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FramePeek {
    /// Frame index.
    pub index: u64,
    /// Paused flag.
    pub paused: bool,
    /// Frame begin, ns.
    pub cpu_begin_ns: u64,
    /// Frame end, ns.
    pub cpu_end_ns: u64,
    /// The record's symbol block defines at least one symbol.
    pub defines_symbols: bool,
    /// Whole frames the writer dropped immediately before this one.
    pub dropped_frames_before: u64,
}

struct Head {
    peek: FramePeek,
    flags: u8,
    phase: Option<SymId>,
    topology: Option<u64>,
    dropped_frames_before: u64,
}

fn decode_head(c: &mut Cursor<'_>, symbols: &[Symbol]) -> Result<Head, DecodeError> {
    let index = c.varint()?;
    let offset = c.pos();
    let flags = c.u8()?;
    if flags & !FRAME_FLAGS_KNOWN != 0 {
        return Err(DecodeError::InvalidValue {
            field: "frame flags",
            value: u64::from(flags),
            offset,
        });
    }
    let phase = c.opt_sym()?;
    let topology = if flags & FLAG_TOPOLOGY != 0 {
        Some(c.u64_le()?)
    } else {
        None
    };
    let cpu_begin_ns = c.varint()?;
    let cpu_end_ns = cpu_begin_ns.wrapping_add(c.varint()?);
    let dropped_frames_before = c.varint()?;
    Ok(Head {
        peek: FramePeek {
            index,
            paused: flags & FLAG_PAUSED != 0,
            cpu_begin_ns,
            cpu_end_ns,
            defines_symbols: !symbols.is_empty(),
            dropped_frames_before,
        },
        flags,
        phase,
        topology,
        dropped_frames_before,
    })
}

/// Reads only the symbol block and the frame's head fields.
pub fn peek_frame(payload: &[u8]) -> Result<FramePeek, DecodeError> {
    let mut c = Cursor::new(payload);
    let symbols = decode_symbol_block(&mut c)?;
    Ok(decode_head(&mut c, &symbols)?.peek)
}

/// Reads a FRAM payload: its symbol definitions and the frame.
///
/// To decode many frames, a [`FrameDecoder`] and [`FrameDecoder::decode_frame_into`] reuse
/// one frame's vectors instead of allocating new ones for each.
pub fn decode_frame(payload: &[u8]) -> Result<(Vec<Symbol>, Frame), DecodeError> {
    let mut decoder = FrameDecoder::new();
    let mut frame = Frame::default();
    decoder.decode_frame_into(payload, &mut frame)?;
    Ok((std::mem::take(&mut decoder.symbols), frame))
}

/// Decodes FRAM payloads one after another into the caller's [`Frame`], reusing its vectors
/// (and the decoder's own symbol buffer), so that a steady stream of frames allocates
/// nothing once the vectors have grown to a frame's size.
///
/// ```
/// use framewise_format::model::Frame;
/// use framewise_format::payload::{encode_frame, FrameDecoder};
///
/// let mut payload = Vec::new();
/// encode_frame(&mut payload, &Frame { index: 7, ..Frame::default() }, std::iter::empty())?;
/// let mut decoder = FrameDecoder::new();
/// let mut frame = Frame::default();
/// for _ in 0..3 {
///     let symbols = decoder.decode_frame_into(&payload, &mut frame)?;
///     assert!(symbols.is_empty());
///     assert_eq!(frame.index, 7);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct FrameDecoder {
    /// The symbol block of the last payload.
    symbols: Vec<Symbol>,
}

impl FrameDecoder {
    /// A new decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes a FRAM payload into `frame`, overwriting every field and reusing the
    /// allocations of its vectors (lanes and their spans, GPU passes, counters, …). Returns
    /// the symbols the payload defines, valid until the next call.
    ///
    /// The result, and the error, are exactly [`decode_frame`]'s. After an error `frame`
    /// holds an unspecified mix of old and new content: decode into it again before use.
    pub fn decode_frame_into(
        &mut self,
        payload: &[u8],
        frame: &mut Frame,
    ) -> Result<&[Symbol], DecodeError> {
        let mut c = Cursor::new(payload);
        self.symbols = decode_symbol_block(&mut c)?;
        let head = decode_head(&mut c, &self.symbols)?;
        decode_body(&mut c, head, frame)?;
        Ok(&self.symbols)
    }
}

/// Everything after the head, into `frame`.
fn decode_body(c: &mut Cursor<'_>, head: Head, frame: &mut Frame) -> Result<(), DecodeError> {
    let begin = head.peek.cpu_begin_ns;
    frame.index = head.peek.index;
    frame.phase = head.phase;
    frame.paused = head.peek.paused;
    frame.topology = head.topology;
    frame.cpu_begin_ns = begin;
    frame.cpu_end_ns = head.peek.cpu_end_ns;
    frame.dropped_frames_before = head.dropped_frames_before;

    let lanes = c.count(5)?;
    frame.lanes.truncate(lanes);
    frame.lanes.reserve(lanes - frame.lanes.len());
    for i in 0..lanes {
        if i == frame.lanes.len() {
            frame.lanes.push(Lane::default());
        }
        let Some(lane) = frame.lanes.get_mut(i) else {
            break; // unreachable: lane i exists
        };
        decode_lane_into(c, begin, lane)?;
    }

    let gpu = &mut frame.gpu;
    gpu.expected = head.flags & FLAG_GPU_EXPECTED != 0;
    gpu.results_missing = head.flags & FLAG_GPU_MISSING != 0;
    gpu.queues.clear();
    gpu.passes.clear();
    let queues = c.count(2)?;
    for _ in 0..queues {
        let queue = c.varint_u32("queue symbol")?;
        let offset = c.pos();
        let f = c.u8()?;
        if f & !3 != 0 {
            return Err(DecodeError::InvalidValue {
                field: "anchor flags",
                value: u64::from(f),
                offset,
            });
        }
        let mut anchor = GpuAnchor::default();
        if f & 1 != 0 {
            anchor.cpu_submit_ns = Some(begin.wrapping_add(c.svarint()? as u64));
        }
        if f & 2 != 0 {
            anchor.cpu_readback_ns = Some(begin.wrapping_add(c.svarint()? as u64));
        }
        gpu.queues.push(GpuQueueFrame { queue, anchor });
    }
    let passes = c.count(3)?;
    gpu.passes.reserve(passes);
    let mut prev_begin_ticks = 0u64;
    for _ in 0..passes {
        let pass = c.varint_u32("pass symbol")?;
        let offset = c.pos();
        let h = c.varint()?;
        let queue_index = u32::try_from(h >> 1)
            .ok()
            .filter(|&q| (q as usize) < gpu.queues.len())
            .ok_or(DecodeError::InvalidValue {
                field: "gpu queue index",
                value: h >> 1,
                offset,
            })?;
        let depth = c.varint_u32("gpu pass depth")?;
        let timing = if h & 1 != 0 {
            let begin_ticks = prev_begin_ticks.wrapping_add(c.svarint()? as u64);
            let end_ticks = begin_ticks.wrapping_add(c.svarint()? as u64);
            prev_begin_ticks = begin_ticks;
            Some(GpuTiming {
                begin_ticks,
                end_ticks,
            })
        } else {
            None
        };
        gpu.passes.push(GpuPass {
            pass,
            queue_index,
            depth,
            timing,
        });
    }

    frame.workloads.clear();
    frame.bindings.clear();
    frame.counters.clear();
    frame.marks.clear();
    let n = c.count(2)?;
    frame.workloads.reserve(n);
    for _ in 0..n {
        let pass = c.varint_u32("pass symbol")?;
        let workload = decode_workload(c)?;
        frame.workloads.push(PassWorkload { pass, workload });
    }

    let n = c.count(5)?;
    frame.bindings.reserve(n);
    for _ in 0..n {
        let pass = c.varint_u32("pass symbol")?;
        let resource = c.varint_u32("resource symbol")?;
        let attachment = c.bool("binding attachment flag")?;
        let slot = c.varint_u32("binding slot")?;
        let offset = c.pos();
        let a = c.u8()?;
        let access = Access::from_u8(a).ok_or(DecodeError::InvalidValue {
            field: "access",
            value: u64::from(a),
            offset,
        })?;
        frame.bindings.push(Binding {
            pass,
            resource,
            attachment,
            slot,
            access,
        });
    }

    let n = c.count(2)?;
    frame.counters.reserve(n);
    let mut prev_sym: i64 = 0;
    for _ in 0..n {
        let offset = c.pos();
        let sym = prev_sym.wrapping_add(c.svarint()?);
        let counter = u32::try_from(sym).map_err(|_| DecodeError::InvalidValue {
            field: "counter symbol",
            value: sym as u64,
            offset,
        })?;
        prev_sym = sym;
        frame.counters.push(CounterValue {
            counter,
            value: c.svarint()?,
        });
    }

    let n = c.count(4)?;
    frame.marks.reserve(n);
    for _ in 0..n {
        let name = c.varint_u32("mark symbol")?;
        let thread = c.varint_u32("thread symbol")?;
        let at_ns = begin.wrapping_add(c.svarint()? as u64);
        let offset = c.pos();
        let kind = match c.u8()? {
            0 => MarkKind::Instant,
            1 => MarkKind::User {
                window_ns: c.varint()?,
                note: c.string()?,
            },
            v => {
                return Err(DecodeError::InvalidValue {
                    field: "mark kind",
                    value: u64::from(v),
                    offset,
                })
            }
        };
        frame.marks.push(Mark {
            name,
            thread,
            at_ns,
            kind,
        });
    }
    c.finish()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_depth_0;
