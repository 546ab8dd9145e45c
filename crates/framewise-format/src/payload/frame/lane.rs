//! A CPU lane of a `FRAM` record: one thread's spans as a bit stream of begin/end events,
//! coded with adaptive Rice contexts (docs/FORMAT.md §8.2; [`crate::bits`]). The writer's
//! lane algorithm and the reader's refusals are the specification's, check for check.

use crate::bits::{rice_field, BitReader, BitWriter, RiceContext};
use crate::error::{DecodeError, EncodeError};
use crate::model::{CpuSpan, Lane, SymId};
use crate::wire::{put_svarint, put_varint, unzigzag, varint_bytes, zigzag, Cursor};

/// Initial means of a lane stream's Rice contexts, in the order docs/FORMAT.md lists them:
/// gap, leaf, tail, sym, depth.
const CTX_INITIAL_MEANS: [u64; 5] = [64, 16384, 64, 4, 1];

pub(super) fn lane_contexts() -> [RiceContext; 5] {
    CTX_INITIAL_MEANS.map(RiceContext::new)
}

/// Width of the stream length written before a lane's bits are known: right for streams of
/// 128 B to 16 KiB; any other length moves the stream once.
const STREAM_LEN_GUESS: usize = 2;

/// An open span while a lane is encoded.
#[derive(Clone, Copy)]
pub(super) struct OpenSpan {
    index: usize,
    depth: u32,
    start_ns: u64,
    end_ns: u64,
}

pub(super) fn encode_lane(
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
pub(super) fn decode_lane_into(
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
