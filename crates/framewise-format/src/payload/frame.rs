//! The `FRAM` payload: one frame. Byte layout in docs/FORMAT.md; CPU lanes are bit streams
//! of begin/end events coded with adaptive Rice contexts (see [`crate::bits`]).

use crate::bits::{rice_field, BitReader, BitWriter, RiceContext};
use crate::error::{DecodeError, EncodeError};
use crate::model::{
    Access, Binding, CounterValue, CpuSpan, Frame, GpuAnchor, GpuPass, GpuQueueFrame, GpuTiming,
    Lane, Mark, MarkKind, PassWorkload, SymId, Symbol, Workload,
};
use crate::payload::symbols::{decode_symbol_block, encode_symbol_block};
use crate::wire::{put_str, put_svarint, put_varint, unzigzag, varint_bytes, zigzag, Cursor};

const FLAG_PAUSED: u8 = 1;
const FLAG_TOPOLOGY: u8 = 2;
const FLAG_GPU_EXPECTED: u8 = 4;
const FLAG_GPU_MISSING: u8 = 8;
const FRAME_FLAGS_KNOWN: u8 = 0x0f;

/// Initial means of a lane stream's Rice contexts, in the order docs/FORMAT.md lists them:
/// gap, leaf, tail, sym, depth.
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

/// Width of the stream length written before a lane's bits are known: right for streams of
/// 128 B to 16 KiB; any other length moves the stream once.
const STREAM_LEN_GUESS: usize = 2;

/// An open span while a lane is encoded.
#[derive(Clone, Copy)]
struct OpenSpan {
    index: usize,
    depth: u32,
    start_ns: u64,
    end_ns: u64,
}

fn encode_lane(
    out: &mut Vec<u8>,
    lane: &Lane,
    frame_begin_ns: u64,
    stack: &mut Vec<OpenSpan>,
) -> Result<(), EncodeError> {
    put_varint(out, u64::from(lane.thread));
    put_varint(out, lane.dropped_spans);
    put_varint(out, lane.spans.len() as u64);
    let base = lane.spans.first().map_or(frame_begin_ns, |s| s.start_ns);
    put_svarint(out, base.wrapping_sub(frame_begin_ns) as i64);

    // The stream goes straight into `out` after room for its length.
    let len_at = out.len();
    out.extend_from_slice(&[0; STREAM_LEN_GUESS]);
    let stream_at = out.len();
    encode_lane_stream(out, lane, base, stack)?;
    let stream_len = out.len() - stream_at;
    let (len_bytes, width) = varint_bytes(stream_len as u64);
    if width < STREAM_LEN_GUESS {
        out.copy_within(stream_at.., len_at + width);
        out.truncate(len_at + width + stream_len);
    } else if width > STREAM_LEN_GUESS {
        out.resize(out.len() + width - STREAM_LEN_GUESS, 0);
        out.copy_within(stream_at..stream_at + stream_len, len_at + width);
    }
    out[len_at..len_at + width].copy_from_slice(&len_bytes[..width]);
    Ok(())
}

/// The lane's event bit stream (docs/FORMAT.md §8.2, "Writer's lane algorithm"), appended
/// to `out`. The checks, and the order in which they are made, are the specification's.
///
/// An event's token and Rice codes are joined into one write when together they fit 56
/// bits (nearly always); otherwise they are written one by one. The bits are the same.
fn encode_lane_stream(
    out: &mut Vec<u8>,
    lane: &Lane,
    base: u64,
    stack: &mut Vec<OpenSpan>,
) -> Result<(), EncodeError> {
    let bad = |index: usize, reason: &'static str| EncodeError::BadNesting {
        thread: lane.thread,
        index,
        reason,
    };
    let mut w = BitWriter::new(out);
    // One local per context (not an array), so that each can stay in a register.
    let [mut gap_ctx, leaf_ctx, tail_ctx, mut sym_ctx, mut depth_ctx] = lane_contexts();
    // Leaf and tail side by side, picked by index: whether an end is a leaf follows the
    // shape of the span tree, which a branch would mispredict.
    let mut end_ctx = [leaf_ctx, tail_ctx];
    stack.clear();
    let mut last_ns = base;
    let mut last_sym: i64 = 0;
    // Whether the previous event was a begin: then the span on top of the stack is the one
    // that began, and its end is coded as a leaf.
    let mut last_was_begin = false;
    for (i, s) in lane.spans.iter().enumerate() {
        if s.end_ns < s.start_ns {
            return Err(bad(i, "ends before it starts"));
        }
        while let Some(&top) = stack.last() {
            let contains = s.start_ns >= top.start_ns && s.end_ns <= top.end_ns;
            if top.depth < s.depth && contains {
                break;
            }
            stack.pop();
            if top.end_ns < last_ns {
                return Err(bad(top.index, "ends before an event that precedes its end"));
            }
            // Span i has not begun, so fewer than S have: the token is coded.
            let ctx = &mut end_ctx[usize::from(!last_was_begin)];
            write_end(&mut w, ctx, top.end_ns - last_ns, true);
            last_ns = top.end_ns;
            last_was_begin = false;
        }
        if let Some(top) = stack.last() {
            if top.depth + 1 != s.depth {
                return Err(bad(i, "is inside a span but not exactly one level deeper"));
            }
        }
        if s.start_ns < last_ns {
            return Err(bad(i, "starts before the previous event (not pre-order)"));
        }
        // A begin: the 1 token when a span is open (an end is also possible), the gap, the
        // scope delta, and the depth when nothing is open.
        let open = !stack.is_empty();
        let gap = s.start_ns - last_ns;
        let sym = zigzag(i64::from(s.scope) - last_sym);
        let depth = u64::from(s.depth);
        let (k_gap, k_sym) = (gap_ctx.k(), sym_ctx.k());
        // The depth's parameter only when the depth is coded (nothing open).
        let depth_field = if open {
            Some((0, 0))
        } else {
            rice_field(depth_ctx.k(), depth)
        };
        match (rice_field(k_gap, gap), rice_field(k_sym, sym), depth_field) {
            (Some((g, gn)), Some((y, yn)), Some((d, dn)))
                if u32::from(open) + gn + yn + dn <= 56 =>
            {
                let code = (((((u64::from(open) << gn) | g) << yn) | y) << dn) | d;
                w.field(code, u32::from(open) + gn + yn + dn);
            }
            _ => {
                if open {
                    w.bit(true);
                }
                w.rice_k(k_gap, gap);
                w.rice_k(k_sym, sym);
                if !open {
                    w.rice_k(depth_ctx.k(), depth);
                }
            }
        }
        gap_ctx.update(gap);
        sym_ctx.update(sym);
        if !open {
            depth_ctx.update(depth);
        }
        last_sym = i64::from(s.scope);
        last_ns = s.start_ns;
        last_was_begin = true;
        stack.push(OpenSpan {
            index: i,
            depth: s.depth,
            start_ns: s.start_ns,
            end_ns: s.end_ns,
        });
    }
    // Every span has begun: the remaining ends carry no token.
    while let Some(top) = stack.pop() {
        if top.end_ns < last_ns {
            return Err(bad(top.index, "ends before an event that precedes its end"));
        }
        let ctx = &mut end_ctx[usize::from(!last_was_begin)];
        write_end(&mut w, ctx, top.end_ns - last_ns, false);
        last_ns = top.end_ns;
        last_was_begin = false;
    }
    w.finish();
    Ok(())
}

/// An end event: the 0 token when it is coded, then `end - t` with the context.
#[inline(always)]
fn write_end(w: &mut BitWriter<'_>, ctx: &mut RiceContext, delta: u64, token: bool) {
    let k = ctx.k();
    match rice_field(k, delta) {
        // The 0 token is a leading zero: the same bits, one more of them.
        Some((code, n)) if n < 56 => w.field(code, n + u32::from(token)),
        _ => {
            if token {
                w.bit(false);
            }
            w.rice_k(k, delta);
        }
    }
    ctx.update(delta);
}

/// A lane-stream value the format does not allow; the offset is the byte holding the
/// stream's next unread bit, as readers have always reported it.
#[cold]
#[inline(never)]
fn invalid_in_stream(
    field: &'static str,
    value: u64,
    stream_len: usize,
    r: BitReader<'_>,
) -> DecodeError {
    DecodeError::InvalidValue {
        field,
        value,
        offset: stream_len - r.remaining_bits() / 8,
    }
}

/// No span: before the first top-level span, there is no previous one.
const NO_SPAN: usize = usize::MAX;

/// Marks an open top-level span's parent field, which holds the index of the previous
/// top-level span instead (`ROOT_MARK | NO_SPAN` = [`NO_SPAN`] for the first, which no span
/// index matches even without the mark). No span index has this bit: a vector of spans
/// (24 bytes each) has fewer than `isize::MAX / 24` elements.
const ROOT_MARK: usize = 1 << (usize::BITS - 1);

/// Rule 9 of docs/FORMAT.md §8.2 ("What a reader refuses in a lane"), once top-level span
/// `span` has ended, `previous` being the top-level span before it (if any).
///
/// The writer's lane algorithm keeps a span open while the next span lies inside it and is
/// deeper. A top-level span that begins when the previous top-level span ends, has no
/// length and is deeper lies inside that span: the writer would have nested it there (and
/// coded other events), or refused the lane. Refused here too, so that every lane read is
/// one the writer writes, with these very events.
#[inline(always)]
fn check_top_level(
    spans: &[CpuSpan],
    previous: usize,
    span: usize,
    thread: SymId,
) -> Result<(), DecodeError> {
    if let (Some(r), Some(s)) = (spans.get(previous), spans.get(span)) {
        if s.start_ns == r.end_ns && s.end_ns == s.start_ns && s.depth > r.depth {
            return Err(lane_nesting(thread, span, s, r));
        }
    }
    Ok(())
}

/// The error for [`check_top_level`], out of line: lanes that break the rule are rare.
#[cold]
#[inline(never)]
fn lane_nesting(thread: SymId, span: usize, s: &CpuSpan, r: &CpuSpan) -> DecodeError {
    DecodeError::LaneNesting {
        thread,
        span,
        start_ns: s.start_ns,
        depth: s.depth,
        previous_depth: r.depth,
    }
}

/// Decodes a lane into `lane`, reusing its span vector.
///
/// The decoder keeps as little state as it can outside the spans, so that the hot loop
/// keeps it in registers: the stack of open spans lives in the spans themselves (while a
/// span is open, its `end_ns` holds the index of its parent; at the top level, that of the
/// previous top-level span with [`ROOT_MARK`], for [`check_top_level`] when the span ends;
/// `top` is the innermost open span); the previous event was a begin
/// exactly when the innermost open span is the last one begun; the previous begin's scope
/// is that span's.
fn decode_lane_into(
    c: &mut Cursor<'_>,
    frame_begin_ns: u64,
    lane: &mut Lane,
) -> Result<(), DecodeError> {
    lane.thread = c.varint_u32("thread symbol")?;
    lane.dropped_spans = c.varint()?;
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
    lane.spans.clear();
    lane.spans.resize(
        total,
        CpuSpan {
            scope: 0,
            depth: 0,
            start_ns: 0,
            end_ns: 0,
        },
    );
    let spans = &mut lane.spans[..];
    // The reader and the contexts are locals, not fields behind a reference, so that the
    // hot loop keeps them in registers.
    let mut r = BitReader::new(stream);
    let [mut gap_ctx, leaf_ctx, tail_ctx, mut sym_ctx, mut depth_ctx] = lane_contexts();
    // Leaf and tail side by side, picked by index: whether an end is a leaf follows the
    // shape of the span tree, which a branch would mispredict.
    let mut end_ctx = [leaf_ctx, tail_ctx];
    let mut last_ns = base;
    let mut begun = 0usize;
    let mut last_root = NO_SPAN;
    let invalid = |field, value, r| invalid_in_stream(field, value, stream.len(), r);
    // Each pass of the outer loop is a top-level span and everything inside it; each
    // event refills the cache once, and its token and values are read from the cache while
    // it holds them (an event rarely needs more than half of it).
    while begun < spans.len() {
        // Nothing is open: the event is a begin, with no token, and its depth is coded.
        r.prepare();
        let gap = r.rice_no_refill(&mut gap_ctx)?;
        let Some(start_ns) = last_ns.checked_add(gap) else {
            return Err(invalid("span gap", gap, r));
        };
        let last_sym = begun
            .checked_sub(1)
            .and_then(|i| spans.get(i))
            .map_or(0, |s| s.scope);
        let sym = i64::from(last_sym).wrapping_add(unzigzag(r.rice_no_refill(&mut sym_ctx)?));
        let Ok(scope) = u32::try_from(sym) else {
            return Err(invalid("scope symbol", sym as u64, r));
        };
        let d = r.rice_no_refill(&mut depth_ctx)?;
        let Ok(depth) = u32::try_from(d) else {
            return Err(invalid("depth", d, r));
        };
        let Some(slot) = spans.get_mut(begun) else {
            // Unreachable: begun < total.
            return Err(invalid("span count", span_count, r));
        };
        *slot = CpuSpan {
            scope,
            depth,
            start_ns,
            end_ns: (ROOT_MARK | last_root) as u64,
        };
        let mut top = begun;
        begun += 1;
        last_ns = start_ns;

        // Something is open: a token says which event comes, once both are possible. The
        // loop ends when the top-level span does, with the top-level span before it.
        let previous_root = loop {
            r.prepare();
            let is_begin = begun < spans.len() && r.bit_after_refill()?;
            if is_begin {
                let gap = r.rice_no_refill(&mut gap_ctx)?;
                let Some(start_ns) = last_ns.checked_add(gap) else {
                    return Err(invalid("span gap", gap, r));
                };
                let (Some(parent), Some(last)) = (spans.get(top), spans.get(begun - 1)) else {
                    // Unreachable: top < begun.
                    return Err(invalid("end token with no open span", 0, r));
                };
                let parent_depth = parent.depth;
                let sym =
                    i64::from(last.scope).wrapping_add(unzigzag(r.rice_no_refill(&mut sym_ctx)?));
                let Ok(scope) = u32::try_from(sym) else {
                    return Err(invalid("scope symbol", sym as u64, r));
                };
                // The parent's depth + 1, refused when the parent's is u32::MAX.
                let Some(depth) = parent_depth.checked_add(1) else {
                    return Err(invalid("depth", u64::MAX, r));
                };
                let Some(slot) = spans.get_mut(begun) else {
                    // Unreachable: begun < total.
                    return Err(invalid("span count", span_count, r));
                };
                *slot = CpuSpan {
                    scope,
                    depth,
                    start_ns,
                    end_ns: top as u64,
                };
                top = begun;
                begun += 1;
                last_ns = start_ns;
            } else {
                // A span with no children ends right after its own begin: a leaf.
                let ctx = &mut end_ctx[usize::from(top + 1 != begun)];
                let delta = r.rice_no_refill(ctx)?;
                let Some(end_ns) = last_ns.checked_add(delta) else {
                    return Err(invalid("span end", delta, r));
                };
                let Some(span) = spans.get_mut(top) else {
                    // Unreachable: top is an open span.
                    return Err(invalid("end token with no open span", 0, r));
                };
                let parent = span.end_ns as usize;
                span.end_ns = end_ns;
                last_ns = end_ns;
                if parent & ROOT_MARK != 0 {
                    break parent & !ROOT_MARK;
                }
                top = parent;
            }
        };
        check_top_level(spans, previous_root, top, lane.thread)?;
        last_root = top;
    }
    if r.remaining_bits() >= 8 {
        return Err(DecodeError::TrailingBytes {
            extra: r.remaining_bits() / 8,
        });
    }
    Ok(())
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
