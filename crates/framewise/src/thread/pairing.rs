//! Pairing a thread's begin and end events into spans, on the writer thread.
//!
//! The hot loop ([`run`]) keeps its whole state in locals that never have their address
//! taken, so that it stays in registers: the vectors it fills are padded with filler up to
//! their capacity and seen as slices (a begin writes the next span by index, with no
//! capacity check that could call out to grow a vector in line), and it returns for
//! whatever is rare (an end below the top of the stack, a vector full), which its caller
//! handles on the vectors before running it again.

use framewise_format::model::{CpuSpan, SymId};

use super::{Event, KIND_BEGIN, KIND_END};
use crate::clock::SessionClock;

/// A span begun in an earlier drain and still open: it has no slot in the lane being filled.
#[derive(Clone, Copy, Debug)]
pub(super) struct Carried {
    pub(super) id: SymId,
    pub(super) start_ns: u64,
    pub(super) depth: u32,
}

/// What fills the padding of the span vector: never read as a span.
pub(super) const FILLER: CpuSpan = CpuSpan {
    scope: 0,
    depth: 0,
    start_ns: 0,
    end_ns: 0,
};

/// Why [`run`] stopped.
pub(super) enum Stop {
    /// Every event given to it was paired.
    Done,
    /// The next event is past the cut-off: it stays in the ring.
    Cutoff,
    /// A begin found no room in `out`: grow it, then run again from the begin.
    Full,
    /// An end that does not close the top of the stack ([`end_below_top`]): it was
    /// consumed; the caller pairs it the long way, then runs again.
    EndBelowTop {
        /// The end's scope.
        id: SymId,
        /// The end's time.
        at_ns: u64,
    },
    /// A mark (consumed): the caller records it, then runs again.
    Mark {
        /// The mark's name.
        id: SymId,
        /// The mark's time.
        at_ns: u64,
    },
}

/// No slot: below the first span begun in this drain there is no open span in the lane.
pub(super) const NO_SLOT: usize = usize::MAX;

/// The pairing's state between events.
///
/// The stack of spans begun in this drain and still open lives in the spans themselves:
/// while a span is open, its `end_ns` holds the slot of the open span below it ([`NO_SLOT`]
/// for the first), and `top` is the innermost one's. [`open_slots`] reads the stack out.
pub(super) struct Cursor {
    /// `out[..spans]` are the lane's spans so far.
    pub(super) spans: usize,
    /// The slot of the innermost span begun in this drain and still open, or [`NO_SLOT`].
    pub(super) top: usize,
    /// Spans open, carried ones included: the next span's depth. (The ring reserves room
    /// for every open span's end, so there are far fewer than `u32::MAX`.)
    pub(super) depth: u32,
    /// The latest tick seen, at least the session's base tick.
    pub(super) last_ticks: u64,
    /// Events of the part being paired consumed.
    pub(super) taken: usize,
}

/// Pairs `events[cursor.taken..]` up to `cutoff_ticks` into `out` (padded: its slots past
/// `cursor.spans` are filler).
///
/// The loop works on copies of the cursor's fields and on a slice, and calls nothing (no
/// vector that could grow in line), so that its state stays in registers; whatever is rare
/// returns, a mark included.
///
/// `FINE` is [`SessionClock::tick_at_most_ns`]: then ticks convert to ns with no check for
/// saturation, which cannot happen (the loop is compiled once for each case).
#[inline(always)]
pub(super) fn run<const FINE: bool>(
    events: &[std::cell::UnsafeCell<Event>],
    cursor: &mut Cursor,
    cutoff_ticks: u64,
    clock: &SessionClock,
    out: &mut [CpuSpan],
) -> Stop {
    let Cursor {
        mut spans,
        mut top,
        mut depth,
        mut last_ticks,
        taken,
    } = *cursor;
    let part = events.get(taken..).unwrap_or(&[]);
    // Events consumed from `part` (an index, not an iterator: one induction variable).
    let mut read = 0usize;
    let stop = 'events: {
        while let Some(cell) = part.get(read) {
            read += 1;
            // SAFETY: the caller passes only slots the producer published (acquire) and
            // that are not rewritten until the tail passes them.
            let event = unsafe { *cell.get() };
            if event.ticks > cutoff_ticks {
                break 'events Stop::Cutoff;
            }
            last_ticks = event.ticks.max(last_ticks);
            let at_ns = if FINE {
                clock.ns_from_base_fine(last_ticks)
            } else {
                clock.ns_from_base(last_ticks)
            };
            if event.kind == KIND_BEGIN {
                let Some(span) = out.get_mut(spans) else {
                    break 'events Stop::Full;
                };
                *span = CpuSpan {
                    scope: event.id,
                    depth,
                    start_ns: at_ns,
                    end_ns: top as u64,
                };
                top = spans;
                spans += 1;
                depth += 1;
            } else if event.kind == KIND_END {
                // Ends match the innermost open span with their id: nearly always the top
                // of this drain's stack, filled in place; anything else goes the long way.
                match out.get_mut(top) {
                    Some(span) if span.scope == event.id => {
                        top = usize::try_from(span.end_ns).unwrap_or(NO_SLOT);
                        span.end_ns = at_ns;
                        depth -= 1;
                    }
                    _ => {
                        break 'events Stop::EndBelowTop {
                            id: event.id,
                            at_ns,
                        }
                    }
                }
            } else {
                break 'events Stop::Mark {
                    id: event.id,
                    at_ns,
                };
            }
        }
        Stop::Done
    };
    // A begin with no room and the event past the cut-off are not consumed.
    let unconsumed = usize::from(matches!(stop, Stop::Full | Stop::Cutoff));
    *cursor = Cursor {
        spans,
        top,
        depth,
        last_ticks,
        taken: taken + read - unconsumed,
    };
    stop
}

/// The slots of the spans begun in this drain and still open, outermost first, into `open`
/// (read from the links in `out[..]`, see [`Cursor`]).
pub(super) fn open_slots(out: &[CpuSpan], top: usize, open: &mut Vec<usize>) {
    open.clear();
    let mut slot = top;
    // Links go to lower slots only: the walk ends.
    while let Some(span) = out.get(slot) {
        open.push(slot);
        slot = usize::try_from(span.end_ns).unwrap_or(NO_SLOT);
    }
    open.reverse();
}

/// Pads `v` with `fill` up to its capacity, returning its true length.
pub(super) fn pad<T: Copy>(v: &mut Vec<T>, fill: T) -> usize {
    let len = v.len();
    v.resize(v.capacity(), fill);
    len
}

/// Gives `v`, padded past `len`, room for at least one more element, padded again.
#[cold]
#[inline(never)]
pub(super) fn grow<T: Copy>(v: &mut Vec<T>, len: usize, fill: T) {
    v.truncate(len);
    v.reserve(len.max(16));
    pad(v, fill);
}

/// An end that does not close the top of this drain's stack: it closes the innermost open
/// span with its id, further down or carried; the spans above that one were never ended (a
/// leaked guard, or guards dropped out of order) and are lost: they leave the lane, and the
/// spans they enclosed that had closed stay in it, each lifted by the number of its lost
/// ancestors (so that it lies exactly one level below its innermost ancestor kept). An end
/// with no begin belongs to a span begun before the session, and is ignored. Returns the
/// spans lost.
#[cold]
#[inline(never)]
pub(super) fn end_below_top(
    id: SymId,
    at_ns: u64,
    lane_start: usize,
    carried: &mut Vec<Carried>,
    open: &mut Vec<usize>,
    out: &mut Vec<CpuSpan>,
) -> u64 {
    if let Some(position) = open
        .iter()
        .rposition(|&slot| out.get(slot).is_some_and(|span| span.scope == id))
    {
        let lost = (open.len() - position - 1) as u64;
        lose(&open[position + 1..], out);
        open.truncate(position + 1);
        if let Some(span) = open.pop().and_then(|slot| out.get_mut(slot)) {
            span.end_ns = at_ns;
        }
        return lost;
    }
    let Some(position) = carried.iter().rposition(|c| c.id == id) else {
        return 0;
    };
    let lost_carried = carried.len() - position - 1;
    // Every span of the lane begun in this drain while the carried ones were open: each
    // is inside every lost carried span.
    let lifted = u32::try_from(lost_carried).unwrap_or(u32::MAX);
    if lifted > 0 {
        for span in out.iter_mut().skip(lane_start) {
            span.depth = span.depth.saturating_sub(lifted);
        }
    }
    let lost = (lost_carried + open.len()) as u64;
    lose(open, out);
    open.clear();
    carried.truncate(position + 1);
    if let Some(span) = carried.pop() {
        out.insert(
            lane_start,
            CpuSpan {
                scope: span.id,
                depth: span.depth,
                start_ns: span.start_ns,
                end_ns: at_ns,
            },
        );
    }
    lost
}

/// Removes the placeholders of lost spans at `slots` (ascending, the highest open in the
/// lane), lifting every span after one of them by the number of them below it:
/// a span after an open slot began while that span was open, so it is that span's
/// descendant. One pass, moving the spans kept down over the removed slots.
fn lose(slots: &[usize], out: &mut Vec<CpuSpan>) {
    let Some(&first) = slots.first() else {
        return;
    };
    let mut lost = slots.iter().copied().peekable();
    let mut below = 0u32;
    let mut kept = first;
    for read in first..out.len() {
        if lost.next_if_eq(&read).is_some() {
            below += 1;
            continue;
        }
        if let Some(mut span) = out.get(read).copied() {
            span.depth = span.depth.saturating_sub(below);
            if let Some(slot) = out.get_mut(kept) {
                *slot = span;
            }
            kept += 1;
        }
    }
    out.truncate(kept);
}

/// Removes the placeholders at `slots` (ascending, the highest in the lane): from the top
/// down, so that each removal leaves the slots below it in place.
fn unplace(slots: &[usize], out: &mut Vec<CpuSpan>) {
    for &slot in slots.iter().rev() {
        if slot < out.len() {
            out.remove(slot);
        }
    }
}

/// Carries the spans still open in this drain to the next one: they leave the lane.
pub(super) fn carry_open(
    carried: &mut Vec<Carried>,
    open: &mut Vec<usize>,
    out: &mut Vec<CpuSpan>,
) {
    for &slot in open.iter() {
        if let Some(span) = out.get(slot) {
            carried.push(Carried {
                id: span.scope,
                start_ns: span.start_ns,
                depth: span.depth,
            });
        }
    }
    unplace(open, out);
    open.clear();
}
