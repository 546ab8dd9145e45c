//! The `FRAM` payload: one frame. Byte layout in docs/FORMAT.md; CPU lanes are bit streams
//! of begin/end events coded with adaptive Rice contexts (see [`crate::bits`]).

use crate::bits::{BitReader, BitWriter, RiceContext};
use crate::error::{DecodeError, EncodeError};
use crate::model::{
    Access, Binding, CounterValue, CpuSpan, Frame, GpuAnchor, GpuFrame, GpuPass, GpuQueueFrame,
    GpuTiming, Lane, Mark, MarkKind, PassWorkload, SymId, Symbol, Workload,
};
use crate::payload::symbols::{decode_symbol_block, encode_symbol_block};
use crate::wire::{put_str, put_svarint, put_varint, unzigzag, zigzag, Cursor};

const FLAG_PAUSED: u8 = 1;
const FLAG_TOPOLOGY: u8 = 2;
const FLAG_GPU_EXPECTED: u8 = 4;
const FLAG_GPU_MISSING: u8 = 8;
const FRAME_FLAGS_KNOWN: u8 = 0x0f;

/// Rice contexts of a lane stream, in the order docs/FORMAT.md lists them.
const CTX_GAP: usize = 0;
const CTX_LEAF: usize = 1;
const CTX_TAIL: usize = 2;
const CTX_SYM: usize = 3;
const CTX_DEPTH: usize = 4;
const CTX_INITIAL_MEANS: [u64; 5] = [64, 16384, 64, 4, 1];

fn lane_contexts() -> [RiceContext; 5] {
    CTX_INITIAL_MEANS.map(RiceContext::new)
}

/// Appends a FRAM payload: the symbol block (`defs`), then the frame.
pub fn encode_frame<'s>(
    out: &mut Vec<u8>,
    frame: &Frame,
    defs: impl ExactSizeIterator<Item = &'s Symbol>,
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
    for lane in &frame.lanes {
        encode_lane(out, lane, begin)?;
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

fn encode_lane(out: &mut Vec<u8>, lane: &Lane, frame_begin_ns: u64) -> Result<(), EncodeError> {
    put_varint(out, u64::from(lane.thread));
    put_varint(out, lane.dropped_spans);
    put_varint(out, lane.spans.len() as u64);
    let base = lane.spans.first().map_or(frame_begin_ns, |s| s.start_ns);
    put_svarint(out, base.wrapping_sub(frame_begin_ns) as i64);

    let mut bits = Vec::with_capacity(lane.spans.len() * 4);
    {
        let bad = |index: usize, reason: &'static str| EncodeError::BadNesting {
            thread: lane.thread,
            index,
            reason,
        };
        let mut w = BitWriter::new(&mut bits);
        let mut ctx = lane_contexts();
        // Open spans: (index, depth, end_ns).
        let mut stack: Vec<(usize, u32, u64, u64)> = Vec::with_capacity(16);
        let mut last_ns = base;
        let mut last_sym: i64 = 0;
        let mut last_was_begin_of: Option<usize> = None;
        let total = lane.spans.len();
        let mut begun = 0usize;
        let emit_end = |w: &mut BitWriter<'_>,
                        ctx: &mut [RiceContext; 5],
                        idx: usize,
                        end_ns: u64,
                        last_ns: &mut u64,
                        last_was_begin_of: &mut Option<usize>,
                        begun: usize|
         -> Result<(), EncodeError> {
            if end_ns < *last_ns {
                return Err(bad(idx, "ends before an event that precedes its end"));
            }
            if begun < total {
                w.put(0, 1); // token: end
            }
            let c = if *last_was_begin_of == Some(idx) {
                CTX_LEAF
            } else {
                CTX_TAIL
            };
            w.rice(&mut ctx[c], end_ns - *last_ns);
            *last_ns = end_ns;
            *last_was_begin_of = None;
            Ok(())
        };
        for (i, s) in lane.spans.iter().enumerate() {
            if s.end_ns < s.start_ns {
                return Err(bad(i, "ends before it starts"));
            }
            while let Some(&(idx, depth, start, end)) = stack.last() {
                let contains = s.start_ns >= start && s.end_ns <= end;
                if depth >= s.depth || !contains {
                    stack.pop();
                    emit_end(
                        &mut w,
                        &mut ctx,
                        idx,
                        end,
                        &mut last_ns,
                        &mut last_was_begin_of,
                        begun,
                    )?;
                } else {
                    break;
                }
            }
            if let Some(&(_, depth, _, _)) = stack.last() {
                if depth + 1 != s.depth {
                    return Err(bad(i, "is inside a span but not exactly one level deeper"));
                }
            }
            if s.start_ns < last_ns {
                return Err(bad(i, "starts before the previous event (not pre-order)"));
            }
            if !stack.is_empty() {
                w.put(1, 1); // token: begin (only coded when an end is also possible)
            }
            w.rice(&mut ctx[CTX_GAP], s.start_ns - last_ns);
            w.rice(&mut ctx[CTX_SYM], zigzag(i64::from(s.scope) - last_sym));
            last_sym = i64::from(s.scope);
            if stack.is_empty() {
                w.rice(&mut ctx[CTX_DEPTH], u64::from(s.depth));
            }
            last_ns = s.start_ns;
            last_was_begin_of = Some(i);
            begun += 1;
            stack.push((i, s.depth, s.start_ns, s.end_ns));
        }
        while let Some((idx, _, _, end)) = stack.pop() {
            emit_end(
                &mut w,
                &mut ctx,
                idx,
                end,
                &mut last_ns,
                &mut last_was_begin_of,
                begun,
            )?;
        }
        w.finish();
    }
    put_varint(out, bits.len() as u64);
    out.extend_from_slice(&bits);
    Ok(())
}

fn decode_lane(c: &mut Cursor<'_>, frame_begin_ns: u64) -> Result<Lane, DecodeError> {
    let thread = c.varint_u32("thread symbol")?;
    let dropped_spans = c.varint()?;
    let span_count_offset = c.pos();
    let span_count = c.varint()?;
    let base = frame_begin_ns.wrapping_add(c.svarint()? as u64);
    let bit_len = c.count(1)?;
    let stream = c.bytes(bit_len)?;
    // Every span costs at least two bits (gap and symbol), so a count the stream cannot
    // hold is refused before anything is allocated.
    if span_count > (stream.len() as u64) * 4 {
        return Err(DecodeError::ImplausibleCount {
            count: span_count,
            offset: span_count_offset,
            remaining: stream.len(),
        });
    }
    let total = span_count as usize;
    let mut spans: Vec<CpuSpan> = Vec::with_capacity(total);
    let mut r = BitReader::new(stream);
    let mut ctx = lane_contexts();
    let mut stack: Vec<usize> = Vec::with_capacity(16);
    let mut last_ns = base;
    let mut last_sym: i64 = 0;
    let mut last_was_begin_of: Option<usize> = None;
    let invalid = |field: &'static str, value: u64, r: &BitReader<'_>| DecodeError::InvalidValue {
        field,
        value,
        offset: stream.len() - r.remaining_bits() / 8,
    };
    while spans.len() < total || !stack.is_empty() {
        let is_begin = if stack.is_empty() {
            true
        } else if spans.len() == total {
            false
        } else {
            r.get(1)? == 1
        };
        if is_begin {
            let gap = r.rice(&mut ctx[CTX_GAP])?;
            let start_ns = last_ns
                .checked_add(gap)
                .ok_or_else(|| invalid("span gap", gap, &r))?;
            let sym_delta = unzigzag(r.rice(&mut ctx[CTX_SYM])?);
            let sym = last_sym.wrapping_add(sym_delta);
            let scope = u32::try_from(sym).map_err(|_| invalid("scope symbol", sym as u64, &r))?;
            last_sym = sym;
            let depth = match stack.last() {
                Some(&parent) => spans[parent]
                    .depth
                    .checked_add(1)
                    .ok_or_else(|| invalid("depth", u64::MAX, &r))?,
                None => {
                    let d = r.rice(&mut ctx[CTX_DEPTH])?;
                    u32::try_from(d).map_err(|_| invalid("depth", d, &r))?
                }
            };
            last_ns = start_ns;
            last_was_begin_of = Some(spans.len());
            stack.push(spans.len());
            spans.push(CpuSpan {
                scope,
                depth,
                start_ns,
                end_ns: start_ns,
            });
        } else {
            let Some(idx) = stack.pop() else {
                return Err(invalid("end token with no open span", 0, &r));
            };
            let c = if last_was_begin_of == Some(idx) {
                CTX_LEAF
            } else {
                CTX_TAIL
            };
            let delta = r.rice(&mut ctx[c])?;
            let end_ns = last_ns
                .checked_add(delta)
                .ok_or_else(|| invalid("span end", delta, &r))?;
            spans[idx].end_ns = end_ns;
            last_ns = end_ns;
            last_was_begin_of = None;
        }
    }
    if r.remaining_bits() >= 8 {
        return Err(DecodeError::TrailingBytes {
            extra: r.remaining_bits() / 8,
        });
    }
    Ok(Lane {
        thread,
        spans,
        dropped_spans,
    })
}

const W_DISPATCHES: u64 = 1 << 0;
const W_INDIRECT_DISPATCHES: u64 = 1 << 1;
const W_WORKGROUPS: u64 = 1 << 2;
const W_DRAWS: u64 = 1 << 3;
const W_INDEXED_DRAWS: u64 = 1 << 4;
const W_INDIRECT_DRAWS: u64 = 1 << 5;
const W_INSTANCES: u64 = 1 << 6;
const W_VERTICES: u64 = 1 << 7;
const W_PRIMITIVES: u64 = 1 << 8;
const W_WORKGROUP_SIZE: u64 = 1 << 9;
const W_INVOCATIONS: u64 = 1 << 10;
const W_PIPELINE: u64 = 1 << 11;
const W_ENTRY_POINT: u64 = 1 << 12;
const W_EXTRA: u64 = 1 << 13;
const W_KNOWN: u64 = (1 << 14) - 1;

fn encode_workload(out: &mut Vec<u8>, w: &Workload) {
    let counts = [
        (W_DISPATCHES, w.dispatches),
        (W_INDIRECT_DISPATCHES, w.indirect_dispatches),
        (W_WORKGROUPS, w.workgroups),
        (W_DRAWS, w.draws),
        (W_INDEXED_DRAWS, w.indexed_draws),
        (W_INDIRECT_DRAWS, w.indirect_draws),
        (W_INSTANCES, w.instances),
        (W_VERTICES, w.vertices),
        (W_PRIMITIVES, w.primitives),
    ];
    let mut mask = 0u64;
    for (bit, v) in counts {
        if v.is_some() {
            mask |= bit;
        }
    }
    if w.workgroup_size.is_some() {
        mask |= W_WORKGROUP_SIZE;
    }
    if w.invocations.is_some() {
        mask |= W_INVOCATIONS;
    }
    if w.pipeline.is_some() {
        mask |= W_PIPELINE;
    }
    if w.entry_point.is_some() {
        mask |= W_ENTRY_POINT;
    }
    if !w.extra.is_empty() {
        mask |= W_EXTRA;
    }
    put_varint(out, mask);
    for (_, v) in counts {
        if let Some(v) = v {
            put_varint(out, v);
        }
    }
    if let Some(size) = w.workgroup_size {
        for s in size {
            put_varint(out, u64::from(s));
        }
    }
    if let Some(v) = w.invocations {
        put_varint(out, v);
    }
    for s in [w.pipeline, w.entry_point].into_iter().flatten() {
        put_varint(out, u64::from(s));
    }
    if !w.extra.is_empty() {
        put_varint(out, w.extra.len() as u64);
        for (label, value) in &w.extra {
            put_varint(out, u64::from(*label));
            put_varint(out, *value);
        }
    }
}

fn decode_workload(c: &mut Cursor<'_>) -> Result<Workload, DecodeError> {
    let offset = c.pos();
    let mask = c.varint()?;
    if mask & !W_KNOWN != 0 {
        return Err(DecodeError::InvalidValue {
            field: "workload mask",
            value: mask,
            offset,
        });
    }
    let opt = |bit: u64, c: &mut Cursor<'_>| -> Result<Option<u64>, DecodeError> {
        if mask & bit != 0 {
            c.varint().map(Some)
        } else {
            Ok(None)
        }
    };
    let mut w = Workload {
        dispatches: opt(W_DISPATCHES, c)?,
        indirect_dispatches: opt(W_INDIRECT_DISPATCHES, c)?,
        workgroups: opt(W_WORKGROUPS, c)?,
        draws: opt(W_DRAWS, c)?,
        indexed_draws: opt(W_INDEXED_DRAWS, c)?,
        indirect_draws: opt(W_INDIRECT_DRAWS, c)?,
        instances: opt(W_INSTANCES, c)?,
        vertices: opt(W_VERTICES, c)?,
        primitives: opt(W_PRIMITIVES, c)?,
        ..Workload::default()
    };
    if mask & W_WORKGROUP_SIZE != 0 {
        w.workgroup_size = Some([
            c.varint_u32("workgroup size")?,
            c.varint_u32("workgroup size")?,
            c.varint_u32("workgroup size")?,
        ]);
    }
    w.invocations = opt(W_INVOCATIONS, c)?;
    if mask & W_PIPELINE != 0 {
        w.pipeline = Some(c.varint_u32("pipeline symbol")?);
    }
    if mask & W_ENTRY_POINT != 0 {
        w.entry_point = Some(c.varint_u32("entry point symbol")?);
    }
    if mask & W_EXTRA != 0 {
        let n = c.count(2)?;
        w.extra.reserve(n);
        for _ in 0..n {
            w.extra
                .push((c.varint_u32("workload label symbol")?, c.varint()?));
        }
    }
    Ok(w)
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
pub fn decode_frame(payload: &[u8]) -> Result<(Vec<Symbol>, Frame), DecodeError> {
    let mut c = Cursor::new(payload);
    let symbols = decode_symbol_block(&mut c)?;
    let head = decode_head(&mut c, &symbols)?;
    let begin = head.peek.cpu_begin_ns;
    let mut frame = Frame {
        index: head.peek.index,
        phase: head.phase,
        paused: head.peek.paused,
        topology: head.topology,
        cpu_begin_ns: begin,
        cpu_end_ns: head.peek.cpu_end_ns,
        dropped_frames_before: head.dropped_frames_before,
        ..Frame::default()
    };
    let lanes = c.count(5)?;
    frame.lanes.reserve(lanes);
    for _ in 0..lanes {
        frame.lanes.push(decode_lane(&mut c, begin)?);
    }

    let mut gpu = GpuFrame {
        expected: head.flags & FLAG_GPU_EXPECTED != 0,
        results_missing: head.flags & FLAG_GPU_MISSING != 0,
        ..GpuFrame::default()
    };
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
    frame.gpu = gpu;

    let n = c.count(2)?;
    frame.workloads.reserve(n);
    for _ in 0..n {
        let pass = c.varint_u32("pass symbol")?;
        let workload = decode_workload(&mut c)?;
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
    c.finish()?;
    Ok((symbols, frame))
}
