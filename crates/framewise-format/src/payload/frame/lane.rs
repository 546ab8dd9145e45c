//! A CPU lane of a `FRAM` record: one thread's spans as a bit stream of begin/end events,
//! coded with adaptive Rice contexts (docs/FORMAT.md §8.2; [`crate::bits`]). The writer's
//! lane algorithm and the reader's refusals are the specification's, check for check; a
//! lane whose depths give its nesting (nearly every lane the recorder writes) is coded by them,
//! to the same bits, without rebuilding the span tree from the spans' times.

use crate::bits::{BitReader, RiceContext, RicePair, WriteState, UNARY_LIMIT};
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

/// Appends a lane: its head, then its event stream, coded by the spans' depths
/// ([`encode_lane_by_depth`]) when `by_depth` is set and they allow it, else through every
/// check ([`encode_lane_stream`]); the bytes, and the errors, are the same either way.
pub(super) fn encode_lane(
    out: &mut Vec<u8>,
    lane: &Lane,
    frame_begin_ns: u64,
    stack: &mut Vec<u64>,
    by_depth: bool,
) -> Result<(), EncodeError> {
    encode_lane_body::<false>(out, lane, frame_begin_ns, stack, by_depth)
}

/// [`encode_lane`] (by depth where the depths allow it) compiled for BMI1, BMI2 and LZCNT:
/// see `encode_frame_bmi2`. Its Rice parameters count leading zeros of the contexts' counts
/// without `| 1` (see `bits::nonzero_count`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2,lzcnt")]
pub(super) fn encode_lane_bmi2(
    out: &mut Vec<u8>,
    lane: &Lane,
    frame_begin_ns: u64,
    stack: &mut Vec<u64>,
) -> Result<(), EncodeError> {
    encode_lane_body::<true>(out, lane, frame_begin_ns, stack, true)
}

/// The body of [`encode_lane`] and [`encode_lane_bmi2`], inlined into each; `LZCNT` when
/// built for LZCNT (see `bits::nonzero_count`).
#[inline(always)]
fn encode_lane_body<const LZCNT: bool>(
    out: &mut Vec<u8>,
    lane: &Lane,
    frame_begin_ns: u64,
    stack: &mut Vec<u64>,
    by_depth: bool,
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
    // The vector and the bit state are separate locals (see `WriteState`), so that the
    // state stays in registers.
    let mut buf = std::mem::take(out);
    let mut w = WriteState::new(&buf);
    // Room for the stores of a lane of 8 bytes a span (most take under 7), zero-filled here
    // in one step rather than grown by the bit writer out of line at its first store.
    buf.resize(stream_at + 8 * lane.spans.len() + 8, 0);
    let result = if by_depth && encode_lane_by_depth::<LZCNT>(&mut buf, &mut w, &lane.spans, base) {
        Ok(())
    } else {
        // Not a lane whose depths give its nesting: the stream starts again, every check
        // made. A span opens at most one span: sized once, the stack is never grown while
        // the lane is walked (and never allocated while every lane is coded by depth).
        if stack.len() < lane.spans.len() {
            stack.resize(lane.spans.len(), 0);
        }
        buf.truncate(stream_at);
        w = WriteState::new(&buf);
        encode_lane_stream::<LZCNT>(&mut buf, &mut w, lane, base, stack)
    };
    w.finish(&mut buf);
    *out = buf;
    result?;
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

/// The lane's event bit stream when the spans' depths alone give their nesting, as in
/// nearly every lane the recorder writes: the first span's depth is the lane's top level, and
/// every later span is at most one level deeper than the one before it and not above the
/// top level. Then a span of depth `d` lies in the open span of depth `d - 1`, the open
/// spans of depth `≥ d` end before it begins, and nothing needs the spans' times to
/// rebuild the tree ([`encode_lane_stream`] tests each open span's depth and times).
///
/// The one check left is that the events so placed never run back in time. When they do
/// not, the specification's algorithm finds the same nesting and passes every check (a
/// span's parent begins no later and, its end coming later in the stream, ends no
/// earlier; a span ends no earlier than it begins), so the bits are its bits. Otherwise,
/// and when a depth breaks the rule, this returns false, having written part of a
/// stream: the caller starts again with [`encode_lane_stream`], which decides.
///
/// The open spans' ends are all the loop keeps of them: the first end coded before a begin
/// (or after the last one) is the last span begun, a leaf, and any other a tail. The leaf's
/// end waits in a local; the spans open below it are a local array of [`BY_DEPTH_LEVELS`]
/// slots, whose address and length the loop never keeps in a register; a lane nested deeper
/// returns false, and the caller codes it through every check.
///
/// A lane whose top level is depth 0, the usual case, takes a copy of the loop without the
/// depth context: the depths it codes are all 0, whose code stays the one bit 0
/// ([`write_begin_at_depth_0`]).
#[inline(always)]
pub(super) fn encode_lane_by_depth<const LZCNT: bool>(
    out: &mut Vec<u8>,
    w: &mut WriteState,
    spans: &[CpuSpan],
    base: u64,
) -> bool {
    match spans.first() {
        None => true,
        Some(first) if first.depth == 0 => by_depth_loop::<true, LZCNT>(out, w, spans, base, 0),
        Some(first) => by_depth_loop::<false, LZCNT>(out, w, spans, base, first.depth),
    }
}

/// The loop of [`encode_lane_by_depth`] for a lane whose top level is `top_depth`;
/// `AT_DEPTH_0` when that is 0.
///
/// The last span begun is kept apart from the stack, its end in a local (`pending`): when the
/// next span is not its child, that end is the first one coded (a leaf, whose end the stack
/// never holds); when it is, the end goes on the stack. Below the lane's first span lies a
/// virtual root in the stack's slot 0, never ended, so that the first span is the root's
/// child like any other (spans are one level further from the stack's bottom than from the
/// top level, and a span at level `l` lies inside an open span when `l > 1`).
#[inline(always)]
fn by_depth_loop<const AT_DEPTH_0: bool, const LZCNT: bool>(
    out: &mut Vec<u8>,
    w: &mut WriteState,
    spans: &[CpuSpan],
    base: u64,
    top_depth: u32,
) -> bool {
    let mut open = [0u64; BY_DEPTH_LEVELS];
    let [gap, leaf, tail, sym, depth] = CTX_INITIAL_MEANS;
    let mut begin_ctx = RicePair::new([gap, sym]);
    let mut depth_ctx = RiceContext::new(depth);
    let mut leaf_ctx = RiceContext::new(leaf);
    let mut tail_ctx = RiceContext::new(tail);
    let mut last_ns = base;
    let mut last_sym: i64 = 0;
    // Open spans below the last one begun: open[..level], innermost last (open[0] the
    // virtual root); the last span begun is at level `level`, its end `pending`.
    let mut level = 0usize;
    let mut pending = 0u64;
    for s in spans {
        // The span's level is `rel + 1`; a depth above the top level gives a large `rel`.
        let rel = s.depth.wrapping_sub(top_depth) as usize;
        if rel >= level {
            if rel > level {
                return false;
            }
            // A child of the last span begun, which stays open. Its slot fails past
            // BY_DEPTH_LEVELS levels below the root: the lane is coded through every check.
            let Some(slot) = open.get_mut(level) else {
                return false;
            };
            *slot = pending;
            level += 1;
        } else {
            // The last span begun ends: a leaf. Then the open spans down to the new one's
            // level: tails.
            let Some(end_ns) = end_open::<LZCNT>(out, w, &mut leaf_ctx, pending, last_ns, true)
            else {
                return false;
            };
            last_ns = end_ns;
            while rel + 1 < level {
                level -= 1;
                let end_ns = open[level % BY_DEPTH_LEVELS];
                let Some(end_ns) = end_open::<LZCNT>(out, w, &mut tail_ctx, end_ns, last_ns, true)
                else {
                    return false;
                };
                last_ns = end_ns;
            }
        }
        if s.start_ns < last_ns {
            return false;
        }
        let in_span = level > 1;
        let gap_sym = (s.start_ns - last_ns, zigzag(i64::from(s.scope) - last_sym));
        if AT_DEPTH_0 {
            write_begin_at_depth_0::<LZCNT>(out, w, &mut begin_ctx, gap_sym, in_span);
        } else {
            let depth = (!in_span).then_some(s.depth);
            write_begin::<LZCNT>(out, w, (&mut begin_ctx, &mut depth_ctx), gap_sym, depth);
        }
        last_sym = i64::from(s.scope);
        last_ns = s.start_ns;
        pending = s.end_ns;
    }
    // Every span has begun: the remaining ends carry no token. The last span begun is a leaf.
    let Some(end_ns) = end_open::<LZCNT>(out, w, &mut leaf_ctx, pending, last_ns, false) else {
        return false;
    };
    last_ns = end_ns;
    while level > 1 {
        level -= 1;
        let end_ns = open[level % BY_DEPTH_LEVELS];
        let Some(end_ns) = end_open::<LZCNT>(out, w, &mut tail_ctx, end_ns, last_ns, false) else {
            return false;
        };
        last_ns = end_ns;
    }
    true
}

/// Levels of open spans [`encode_lane_by_depth`] keeps: a lane nested deeper than this below
/// its top level is coded through every check instead, to the same bits.
pub(super) const BY_DEPTH_LEVELS: usize = 64;

/// The end of an open span of [`encode_lane_by_depth`] (`end_ns`: the leaf's, or a tail's
/// read from its slot in the stack), coded after an event at `last_ns`: its time, or `None`
/// when time would run back.
///
/// The callers read a tail's slot as `open[level % BY_DEPTH_LEVELS]` after `level -= 1`: a
/// level is only entered once its slot was written (`open.get_mut(level)` succeeded), so
/// `level` is at most [`BY_DEPTH_LEVELS`] and the `%` never changes the index; it only spares
/// the bounds check (2.9 instructions a span in `fw_encode`).
#[inline(always)]
fn end_open<const LZCNT: bool>(
    out: &mut Vec<u8>,
    w: &mut WriteState,
    ctx: &mut RiceContext,
    end_ns: u64,
    last_ns: u64,
    token: bool,
) -> Option<u64> {
    let delta = end_ns.checked_sub(last_ns)?;
    write_end::<LZCNT>(out, w, ctx, delta, token);
    Some(end_ns)
}

/// The lane's event bit stream (docs/FORMAT.md §8.2, "Writer's lane algorithm"), appended
/// to `out` through `w`. The checks, and the order in which they are made, are the
/// specification's.
///
/// An event's token and Rice codes are joined into one write when together they fit 56
/// bits (nearly always); otherwise they are written one by one. The bits are the same.
///
/// The loop's state is this function's main cost: what does not fit the registers goes to
/// the stack and back on every span. So the stack of open spans holds their indices only
/// (their times and depth are read from the lane), in `open` (at least as many slots as
/// the lane has spans) with its depth in a local; the gap and scope contexts, always
/// updated together, share their count ([`RicePair`]); whether an end is a leaf is read
/// from the indices.
#[inline(always)]
fn encode_lane_stream<const LZCNT: bool>(
    out: &mut Vec<u8>,
    w: &mut WriteState,
    lane: &Lane,
    base: u64,
    open: &mut [u64],
) -> Result<(), EncodeError> {
    let bad = |index: usize, reason: &'static str| EncodeError::BadNesting {
        thread: lane.thread,
        index,
        reason,
    };
    let spans = &lane.spans[..];
    let [gap, leaf, tail, sym, depth] = CTX_INITIAL_MEANS;
    let mut begin_ctx = RicePair::new([gap, sym]);
    let mut depth_ctx = RiceContext::new(depth);
    // Leaf and tail side by side, picked by index: whether an end is a leaf follows the
    // shape of the span tree, which a branch would mispredict. An end is a leaf exactly
    // when its span is the last one begun (then nothing has happened since its begin).
    let mut end_ctx = [RiceContext::new(leaf), RiceContext::new(tail)];
    let mut last_ns = base;
    let mut last_sym: i64 = 0;
    // Open spans: open[..level], innermost last.
    let mut level = 0usize;
    for (i, s) in spans.iter().enumerate() {
        if s.end_ns < s.start_ns {
            return Err(bad(i, "ends before it starts"));
        }
        let mut parent_depth = None;
        while let Some(&t) = level.checked_sub(1).and_then(|j| open.get(j)) {
            let t = t as usize;
            let Some(top) = spans.get(t) else { break };
            if top.depth < s.depth && s.start_ns >= top.start_ns && s.end_ns <= top.end_ns {
                parent_depth = Some(top.depth);
                break;
            }
            level -= 1;
            if top.end_ns < last_ns {
                return Err(bad(t, "ends before an event that precedes its end"));
            }
            // Span i has not begun, so fewer than S have: the token is coded.
            let ctx = &mut end_ctx[usize::from(t + 1 != i)];
            write_end::<LZCNT>(out, w, ctx, top.end_ns - last_ns, true);
            last_ns = top.end_ns;
        }
        if let Some(d) = parent_depth {
            if d + 1 != s.depth {
                return Err(bad(i, "is inside a span but not exactly one level deeper"));
            }
        }
        if s.start_ns < last_ns {
            return Err(bad(i, "starts before the previous event (not pre-order)"));
        }
        write_begin::<LZCNT>(
            out,
            w,
            (&mut begin_ctx, &mut depth_ctx),
            (s.start_ns - last_ns, zigzag(i64::from(s.scope) - last_sym)),
            parent_depth.is_none().then_some(s.depth),
        );
        last_sym = i64::from(s.scope);
        last_ns = s.start_ns;
        if let Some(slot) = open.get_mut(level) {
            // Always: level ≤ i < the span count ≤ open.len().
            *slot = i as u64;
        }
        level += 1;
    }
    // Every span has begun: the remaining ends carry no token.
    while let Some(&t) = level.checked_sub(1).and_then(|j| open.get(j)) {
        let t = t as usize;
        level -= 1;
        let Some(top) = spans.get(t) else { break };
        if top.end_ns < last_ns {
            return Err(bad(t, "ends before an event that precedes its end"));
        }
        let ctx = &mut end_ctx[usize::from(t + 1 != spans.len())];
        write_end::<LZCNT>(out, w, ctx, top.end_ns - last_ns, false);
        last_ns = top.end_ns;
    }
    Ok(())
}

/// A begin event: the 1 token when a span is open (an end is also possible), the gap, the
/// scope delta, and the depth when nothing is open (`depth` is then `Some`).
#[inline(always)]
fn write_begin<const LZCNT: bool>(
    out: &mut Vec<u8>,
    w: &mut WriteState,
    (begin_ctx, depth_ctx): (&mut RicePair, &mut RiceContext),
    (gap, sym): (u64, u64),
    depth: Option<u32>,
) {
    // Parameters of at most 64 (see `RicePair::k`): 64, which no context of a lane reaches,
    // would take the long path, which clamps it; a shift by it is not a quotient used.
    let (k_gap, k_sym) = begin_ctx.k::<LZCNT>();
    let (q_gap, q_sym) = (gap.wrapping_shr(k_gap), sym.wrapping_shr(k_sym));
    let (gn, yn) = (code_len(k_gap, q_gap), code_len(k_sym, q_sym));
    match depth {
        None => {
            let n = gn.wrapping_add(yn).wrapping_add(1);
            // No quotient ≥ 24 (an escape) when their OR is below 24.
            if (q_gap | q_sym) < UNARY_LIMIT && n <= 56 {
                let g = rice_code(k_gap, q_gap, gap);
                let y = rice_code(k_sym, q_sym, sym);
                w.put_small(out, (((1 << gn) | g) << yn) | y, n);
                // Each code is at most 54 bits, so k ≤ 53 and the value is below
                // 24 · 2^k, the sum at most 63 · 2^k: no sum can overflow.
                begin_ctx.update_unsaturated(gap, sym);
            } else {
                let taken = std::mem::take(out);
                (*w, *out) = write_long(
                    *w,
                    taken,
                    Some(true),
                    (k_gap, gap),
                    [Some((k_sym, sym)), None],
                );
                begin_ctx.update(gap, sym);
            }
        }
        Some(depth) => {
            let depth = u64::from(depth);
            let k_depth = depth_ctx.k_for_encoder::<LZCNT>();
            let q_depth = depth.wrapping_shr(k_depth);
            let dn = code_len(k_depth, q_depth);
            let n = gn.wrapping_add(yn).wrapping_add(dn);
            if (q_gap | q_sym | q_depth) < UNARY_LIMIT && n <= 56 {
                let g = rice_code(k_gap, q_gap, gap);
                let y = rice_code(k_sym, q_sym, sym);
                let d = rice_code(k_depth, q_depth, depth);
                w.put_small(out, (((g << yn) | y) << dn) | d, n);
                // As above: no sum can overflow.
                depth_ctx.update_unsaturated(depth);
                begin_ctx.update_unsaturated(gap, sym);
            } else {
                let taken = std::mem::take(out);
                let rest = [Some((k_sym, sym)), Some((k_depth, depth))];
                (*w, *out) = write_long(*w, taken, None, (k_gap, gap), rest);
                depth_ctx.update(depth);
                begin_ctx.update(gap, sym);
            }
        }
    }
}

/// [`write_begin`] in a lane whose top level is depth 0, coded by depth: a span at the top
/// level has depth 0, and the depth context, which sees no other value, codes it as the
/// one bit 0 (its sum starts at 1 and a 0 never raises it: its parameter stays 0). So a
/// begin is `n = gap + scope + 1` bits either way: the 1 token first when a span is open,
/// the depth's 0 last when none is. The depth context is not kept: nothing else reads it.
#[inline(always)]
fn write_begin_at_depth_0<const LZCNT: bool>(
    out: &mut Vec<u8>,
    w: &mut WriteState,
    begin_ctx: &mut RicePair,
    (gap, sym): (u64, u64),
    in_span: bool,
) {
    // Parameters of at most 64: see `write_begin`.
    let (k_gap, k_sym) = begin_ctx.k::<LZCNT>();
    let (q_gap, q_sym) = (gap.wrapping_shr(k_gap), sym.wrapping_shr(k_sym));
    let (gn, yn) = (code_len(k_gap, q_gap), code_len(k_sym, q_sym));
    let gy_len = gn.wrapping_add(yn);
    // The begin's n = gy_len + 1 bits fit one write.
    if (q_gap | q_sym) < UNARY_LIMIT && gy_len < 56 {
        let g = rice_code(k_gap, q_gap, gap);
        let y = rice_code(k_sym, q_sym, sym);
        let gy = (g << yn) | y;
        // Open: 1, gap, scope (2^gy_len + gy). At the top level: gap, scope, 0 (gy + gy).
        let value = gy + if in_span { 1 << gy_len } else { gy };
        w.put_small(out, value, gy_len + 1);
        // As in `write_begin`: no sum can overflow.
        begin_ctx.update_unsaturated(gap, sym);
    } else {
        let taken = std::mem::take(out);
        let (token, depth) = if in_span {
            (Some(true), None)
        } else {
            (None, Some((0, 0)))
        };
        (*w, *out) = write_long(*w, taken, token, (k_gap, gap), [Some((k_sym, sym)), depth]);
        begin_ctx.update(gap, sym);
    }
}

/// An end event: the 0 token when it is coded, then `end - t` with the context.
#[inline(always)]
fn write_end<const LZCNT: bool>(
    out: &mut Vec<u8>,
    w: &mut WriteState,
    ctx: &mut RiceContext,
    delta: u64,
    token: bool,
) {
    // At most 64 (see `RiceContext::k_for_encoder`); 32 and more take the long path.
    let k = ctx.k_for_encoder::<LZCNT>();
    let q = delta.wrapping_shr(k);
    // q < 24 and k ≤ 31: the code is q + 1 + k ≤ 55 bits, and the token fits beside it.
    if q < UNARY_LIMIT && k < 32 {
        // The 0 token is a leading zero: the same bits, one more of them.
        w.put_small(
            out,
            rice_code(k, q, delta),
            code_len(k, q) + u32::from(token),
        );
        // delta < 24 · 2^31 and the sum at most 63 · 2^31: it cannot overflow.
        ctx.update_unsaturated(delta);
    } else {
        let taken = std::mem::take(out);
        let token = token.then_some(false);
        (*w, *out) = write_long(*w, taken, token, (k, delta), [None, None]);
        ctx.update(delta);
    }
}

/// The events whose codes do not fit one write, one code at a time, out of line (they
/// are rare): the token if any, then each `(k, value)` field, its parameter clamped at 63
/// (the callers' may be 64, see `RiceContext::k_for_encoder`). Takes and returns the state
/// and the vector by value, so that the caller's never have their address taken.
#[cold]
#[inline(never)]
fn write_long(
    mut w: WriteState,
    mut out: Vec<u8>,
    token: Option<bool>,
    (k, value): (u32, u64),
    rest: [Option<(u32, u64)>; 2],
) -> (WriteState, Vec<u8>) {
    if let Some(token) = token {
        w.put_small(&mut out, u64::from(token), 1);
    }
    w.rice(&mut out, k.min(63), value);
    for (k, value) in rest.into_iter().flatten() {
        w.rice(&mut out, k.min(63), value);
    }
    (w, out)
}

/// The length of a Rice code with parameter `k` and quotient `q`, `q + 1 + k`, when
/// `q < 24` (otherwise a number the caller does not use).
#[inline(always)]
fn code_len(k: u32, q: u64) -> u32 {
    (q as u32).wrapping_add(k + 1)
}

/// The Rice code of `value` with parameter `k` and quotient `q = value >> k < 24`: `q`
/// one-bits, a zero-bit, then the low `k` bits, in `q + 1 + k` bits.
#[inline(always)]
fn rice_code(k: u32, q: u64, value: u64) -> u64 {
    // ((2^(q+1) - 2) << k) + (value - (q << k)); no mask needed. The prefix is read from a
    // table (a `movzx` and a load) where `(2 << q) - 2 - q` took four instructions.
    (UNARY[usize::from(q as u8)] << k).wrapping_add(value)
}

/// `2^(q+1) - 2 - q` for every `q < 24` ([`rice_code`]'s prefix), indexed by `q`'s low byte:
/// 256 entries, so that the index needs no bounds check (the entries past 23 are never used).
static UNARY: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut q = 0;
    while q < UNARY_LIMIT as usize {
        t[q] = (2u64 << q) - 2 - q as u64;
        q += 1;
    }
    t
};

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

#[cfg(test)]
mod rice_code_tests {
    use super::{code_len, rice_code, UNARY_LIMIT};

    #[test]
    fn a_rice_code_is_q_ones_a_zero_and_the_low_k_bits() {
        // Every quotient the one-write paths code, with every parameter they allow, against
        // the code built bit by bit.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for q in 0..UNARY_LIMIT {
            for k in 0..32u32 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let low = x & ((1u64 << k) - 1);
                let value = (q << k) | low;
                let mut want = 0u64;
                for _ in 0..q {
                    want = (want << 1) | 1;
                }
                want = (want << 1) << k | low;
                assert_eq!(rice_code(k, value >> k, value), want, "q {q}, k {k}");
                assert_eq!(code_len(k, q), q as u32 + 1 + k);
            }
        }
    }
}
