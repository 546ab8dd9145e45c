//! Frame close: what the game thread pays once per frame.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use framewise_format::model::CounterValue;

use crate::clock::now_ticks;
use crate::counters;
use crate::handoff::{self, Closed, Delivery, Exchange, FrameBatch, Sender, COUNTERS_CAPACITY};
use crate::thread::{self, prefetch, prefetch_line, LINE};
use crate::writer::WriterMode;

use super::{FrameGuard, FrameOutcome, Session, Staging};

/// The lines close writes that [`Entry`] holds, by index: the frame history's slot, the batch
/// header's (two: the header is two lines, aligned to one), the hand-off slot's, and the
/// counters' vector's.
const HISTORY_LINE: usize = 0;
const HEADER_LINES: usize = 1;
const SLOT_LINE: usize = 3;
const COUNTERS_LINE: usize = 4;
const _: () = assert!(size_of::<Closed>() == 2 * LINE && align_of::<Closed>() == LINE);
const WRITTEN_LINES: usize = 5;

/// What `end_frame` reads first: whether the session finished, and where the data lines lie
/// that the next close touches and could find only by reading others (behind a pointer, or at
/// an index that moves every frame). Each close writes them down for the next, which asks for
/// all of them at once before it reads any of its lines: a close whose lines have all left
/// the caches while the game ran its frame then waits for them together, where it found them
/// one after another. In the session handle itself (`Session::entry`), beside the pointer to
/// the session's state: close finds these addresses in the lines that hold that pointer, and
/// asks for the session's lines and the written-down ones in one go, where it waited for the
/// entry's own lines first. Only closes write it (and `finish`, once).
#[repr(C)]
pub(super) struct Entry {
    pub(super) finished: AtomicBool,
    /// The address of the hand-off gate's line, which close reads (set once: the gate does
    /// not move; only ever asked for, never read through).
    gate: usize,
    /// Lines close writes, asked for in the exclusive state (until a close writes one down,
    /// the counters' list head: a line close reads anyway, and one that is always mapped).
    written: [AtomicPtr<u8>; WRITTEN_LINES],
    /// Lines close reads and the counting threads keep reading or writing: the first counter
    /// slots' and the threads' totals of the first sum (`counters::collect`), asked for
    /// shared, so that the request does not take a line from a thread about to count.
    read: [AtomicPtr<u8>; counters::LINES_ASKED_FOR],
}

impl Entry {
    /// An entry for a session whose hand-off gate lies at `gate`.
    pub(super) fn new(gate: *const u8) -> Self {
        Self {
            finished: AtomicBool::new(false),
            gate: gate.addr(),
            written: std::array::from_fn(|_| AtomicPtr::new(counters::head_line().cast_mut())),
            read: std::array::from_fn(|_| AtomicPtr::new(counters::head_line().cast_mut())),
        }
    }

    /// Asks for the lines the previous close wrote down, without waiting for them.
    #[inline(always)]
    fn prefetch_next(&self) {
        prefetch_line(std::ptr::without_provenance(self.gate), false);
        for line in &self.written {
            prefetch_line(line.load(Ordering::Relaxed), true);
        }
        for line in &self.read {
            prefetch_line(line.load(Ordering::Relaxed), false);
        }
    }

    /// Writes down a line the next close reads, at `index` (see `counters::collect`).
    #[inline(always)]
    fn read_down(&self, index: usize, line: *const u8) {
        if let Some(read) = self.read.get(index) {
            read.store(line.cast_mut(), Ordering::Relaxed);
        }
    }

    /// Writes down a line the next close writes, at `index` (see [`WRITTEN_LINES`]).
    #[inline(always)]
    fn write_down(&self, index: usize, line: *const u8) {
        self.written[index].store(line.cast_mut(), Ordering::Relaxed);
    }
}

impl Session {
    /// Asks for every data line close touches, without waiting for them: those the previous
    /// close wrote down (see [`Entry`]) and the session state's own, both found in the handle.
    #[inline(always)]
    fn prefetch_close(&self) {
        self.entry.prefetch_next();
        let inner = &*self.inner;
        // The closer's lock and state, `shared` and `frame_limit`: `Inner`'s first two lines.
        let first = std::ptr::from_ref(inner).cast::<u8>();
        prefetch_line(first, false);
        prefetch_line(first.wrapping_add(LINE), false);
        // What close reads of `Staging` every frame is its first line.
        prefetch(&*inner.staging, 1);
        counters::prefetch_head();
    }
}

/// Frame-close state: owned by whoever closes a frame (one at a time).
pub(super) struct Closer {
    /// The batch the next frame closes into (always `Some` between closes).
    pub(super) current: Option<Box<FrameBatch>>,
    /// Where the next close collects the counters (swapped into the batch, so that the
    /// batch's own vector, prefetched, is the one filled by the close after).
    pub(super) counters: Vec<CounterValue>,
    pub(super) begin_ticks: u64,
    pub(super) frames_closed: u64,
    /// Frames dropped since the last one sent (written into the next one sent).
    pub(super) dropped_pending: u64,
    /// The end of the newest dropped frame, while `dropped_pending` is not 0 (no frame was
    /// sent since): the events of dropped frames are still in the threads' rings, and the
    /// writer discards those up to here before it gathers the next frame sent (which reads
    /// it only when its `dropped_frames_before` is not 0). A bare count, not an `Option`
    /// beside the one `dropped_pending` already gives: `Closer` and what else close reads of
    /// `Inner` fit in two cache lines.
    pub(super) skip_until_ticks: u64,
    /// The hand-off's sending side: frames and bytes sent, the writer's progress as read.
    pub(super) sender: Sender,
}

impl Closer {
    pub(super) fn new(current: Box<FrameBatch>, begin_ticks: u64) -> Self {
        Self {
            current: Some(current),
            counters: Vec::with_capacity(COUNTERS_CAPACITY),
            begin_ticks,
            frames_closed: 0,
            dropped_pending: 0,
            skip_until_ticks: 0,
            sender: Sender::default(),
        }
    }
}

/// Swaps `from` into `into` when it holds anything: swapping two empty vectors changes
/// nothing and would touch `into`'s cache line for nothing.
#[inline(always)]
fn swap_in<T>(into: &mut Vec<T>, from: &mut Vec<T>) {
    if !from.is_empty() {
        std::mem::swap(into, from);
    }
}

/// Moves what the host set for the frame (a topology, workloads, marks, GPU queues and
/// results) into the batch, and returns the frame's byte estimate with them. Out of line,
/// and run only when a setter flagged `Staging::set`: a frame with none of them reads none
/// of `Staging`'s lines past its first.
#[inline(never)]
fn take_staged(batch: &mut FrameBatch, staging: &mut Staging, counted: usize) -> usize {
    staging.set = false;
    batch.closed.topology = staging.topology.take();
    let bytes = handoff::estimated_bytes(
        counted,
        staging.marks.len(),
        staging.delivered_passes.len(),
        staging.workloads.len(),
    );
    let frame = &mut batch.frame;
    swap_in(&mut frame.workloads, &mut staging.workloads);
    swap_in(&mut batch.staged_marks, &mut staging.marks);
    swap_in(&mut frame.gpu.queues, &mut staging.gpu_queues);
    swap_in(&mut batch.deliveries, &mut staging.deliveries);
    swap_in(&mut batch.delivered_passes, &mut staging.delivered_passes);
    bytes
}

impl Session {
    /// Begins a frame now. Optional: without it, a frame begins where the previous one
    /// ended (or at session start). Time between an `end_frame` and the next `begin_frame`
    /// belongs to no frame's work, but to the previous frame's period.
    ///
    /// Like `end_frame`, callable from any thread: the instant is read under the closer's
    /// lock, in the order of the closes, and never before the previous frame's end.
    pub fn begin_frame(&self) {
        let mut closer = self.inner.closer.lock();
        let ticks = now_ticks().max(closer.begin_ticks);
        closer.begin_ticks = ticks;
        self.inner.staging.lock().begin_ticks = ticks;
    }

    /// Begins a frame and returns a guard that ends it when dropped.
    pub fn frame(&self) -> FrameGuard<'_> {
        self.begin_frame();
        FrameGuard { session: self }
    }

    /// Closes the current frame: takes its counters and context and hands the frame to the
    /// writer thread, which gathers every thread's spans and marks up to this instant from
    /// their rings, pairs and encodes them. Never waits on I/O; in lossless mode waits for
    /// the writer to make room when it is behind.
    ///
    /// Callable from any thread, and from several at once (the session is `Sync`): the
    /// closes are serialised by the closer's lock, and each frame ends at an instant read
    /// under it, so that frames end in the order they close, none before it began.
    pub fn end_frame(&self) -> FrameOutcome {
        self.prefetch_close();
        if self.entry.finished.load(Ordering::Acquire) {
            return FrameOutcome::Finished;
        }
        let limit_reached = {
            let mut closer = self.inner.closer.lock();
            // Re-checked under the lock: `finish` takes it to send the writer its last
            // message, so no frame can be handed over after that.
            if self.entry.finished.load(Ordering::Acquire) {
                std::hint::cold_path();
                return FrameOutcome::Finished;
            }
            // Read under the lock: read before it, a close that waited for the lock ended
            // its frame before the begin the close ahead of it had left (the end of that
            // close's frame). Never before that begin either: two threads' clocks (their
            // cores' TSCs) need not agree to the nanosecond, and `rdtsc` may run ahead of
            // the lock's acquisition.
            let end_ticks = now_ticks().max(closer.begin_ticks);
            self.close_frame(&mut closer, end_ticks)
        };
        if limit_reached {
            return self.finish_at_limit();
        }
        FrameOutcome::Recording
    }

    /// The session reached `frame_limit`: it finishes now. Out of line with the drop of the
    /// report it returns, as `dropped` below: the code a close runs every frame stays in fewer
    /// instruction-cache lines.
    #[cold]
    #[inline(never)]
    fn finish_at_limit(&self) -> FrameOutcome {
        let _ = self.finish();
        FrameOutcome::Finished
    }

    /// Frame close proper; returns whether `frame_limit` was reached.
    ///
    /// The threads' events stay in their rings: the writer thread pairs every event up to
    /// the frame's end into spans (see `WriterThread::gather`). Only what is shared with
    /// other threads and must be cut at this instant is taken here: the counters (what every
    /// thread's totals grew by since the close before, `counters::collect`) and what the host
    /// set for the frame (swapped, not copied). Everything
    /// close writes into the batch lies in its `closed` header (two cache lines) unless the
    /// host set something for the frame; the ticks are converted to ns by the writer.
    fn close_frame(&self, closer: &mut Closer, end_ticks: u64) -> bool {
        let inner = &*self.inner;
        let Some(mut batch) = closer.current.take() else {
            return false;
        };
        // The lines the next close writes are written down as this one finds them.
        let entry = &self.entry;
        counters::collect(&mut closer.counters, |index, line| {
            entry.read_down(index, line);
        });
        let counted = closer.counters.len();
        let batch_ref = &mut *batch;
        let closed = &mut batch_ref.closed;
        std::mem::swap(&mut closed.counters, &mut closer.counters);
        closed.begin_ticks = closer.begin_ticks;
        closed.cutoff_ticks = end_ticks;
        closed.dropped_frames_before = closer.dropped_pending;
        closed.skip_until_ticks = closer.skip_until_ticks;
        let bytes;
        {
            let mut staging = inner.staging.lock();
            let staging = &mut *staging;
            let index = staging.index;
            closed.index = index;
            closed.phase = staging.phase;
            closed.paused = staging.paused;
            closed.gpu_outstanding = std::mem::take(&mut staging.gpu_outstanding);
            bytes = if staging.set {
                take_staged(batch_ref, staging, counted)
            } else {
                handoff::estimated_bytes(counted, 0, 0, 0)
            };
            *staging.history_begin_ticks.slot(index) = closer.begin_ticks;
            staging.index = index + 1;
            staging.begin_ticks = end_ticks;
            let next = staging.history_begin_ticks.slot(index + 1);
            entry.write_down(HISTORY_LINE, std::ptr::from_ref(next).cast());
        }

        let exchanged = inner.shared.exchange(&mut closer.sender, batch, bytes);
        closer.current = Some(match exchanged {
            Exchange::Sent(fresh) => {
                closer.dropped_pending = 0;
                inner.shared.nudge_writer(&mut closer.sender);
                // The next close writes into this batch's header, the counters' vector just
                // swapped out of the batch before it and the next hand-off slot, each last
                // written by the writer long ago: asked for now as well as at the next
                // close's top, so that a frame that leaves them in this core's cache finds
                // them there (the next close asks again for a frame that did not).
                let header = std::ptr::from_ref(&fresh.closed).cast::<u8>();
                prefetch_line(header, false);
                prefetch_line(header.wrapping_add(LINE), false);
                prefetch(
                    closer.counters.as_ptr(),
                    counted * std::mem::size_of::<CounterValue>(),
                );
                prefetch_line(inner.shared.next_slot_line(&closer.sender), false);
                fresh
            }
            Exchange::Dropped(same) => self.dropped(closer, same, end_ticks),
            Exchange::Failed(same) => self.failed(same),
        });
        closer.frames_closed += 1;
        closer.begin_ticks = end_ticks;
        if let Some(batch) = closer.current.as_deref() {
            let header = std::ptr::from_ref(&batch.closed).cast::<u8>();
            entry.write_down(HEADER_LINES, header);
            entry.write_down(HEADER_LINES + 1, header.wrapping_add(LINE));
        }
        entry.write_down(SLOT_LINE, inner.shared.next_slot_line(&closer.sender));
        if closer.counters.capacity() > 0 {
            entry.write_down(COUNTERS_LINE, closer.counters.as_ptr().cast());
        }
        // Last: what the wait below changes is none of what was written down above.
        if inner.shared.mode() == WriterMode::Lossless {
            self.lossless_check(closer);
        }
        closer.frames_closed >= inner.frame_limit
    }

    /// Lossless: when a recording thread's ring went over half taken since the last close
    /// that looked (the closing thread's or any other's: each producer raises a flag as its
    /// ring passes half, `thread::take_ring_over_half`), close waits for the writer to gather
    /// what it handed over, so that the next frame cannot overflow the ring and lose spans.
    /// One load of a line almost never written when no ring did. Out of line: a realtime close
    /// runs none of it, and its code stays in fewer lines.
    #[inline(never)]
    fn lossless_check(&self, closer: &mut Closer) {
        if thread::take_ring_over_half() {
            self.inner.shared.wait_gathered(&mut closer.sender);
        }
    }

    /// A frame dropped at the hand-off (realtime mode, the writer behind): its batch back,
    /// emptied, for the next frame. Out of line, as the failure below: the code close runs
    /// every frame stays in fewer instruction-cache lines.
    #[cold]
    #[inline(never)]
    fn dropped(
        &self,
        closer: &mut Closer,
        mut same: Box<FrameBatch>,
        end_ticks: u64,
    ) -> Box<FrameBatch> {
        closer.dropped_pending += 1;
        // Its events are still in the rings: the writer discards everything up to here
        // before it gathers the next frame sent.
        closer.skip_until_ticks = end_ticks;
        self.inner
            .shared
            .frames_dropped
            .fetch_add(1, Ordering::Relaxed);
        self.keep_carried(&mut same);
        same.reset();
        same
    }

    /// A frame not written because the session failed: its batch back, emptied.
    #[cold]
    #[inline(never)]
    fn failed(&self, mut same: Box<FrameBatch>) -> Box<FrameBatch> {
        self.inner
            .shared
            .frames_lost_to_error
            .fetch_add(1, Ordering::Relaxed);
        same.reset();
        same
    }

    /// What a dropped frame held that is not its own to lose rides with the next frame
    /// instead: the GPU results delivered during it, which belong to earlier frames, and the
    /// usermarks made in it (the player's "it felt wrong here", which must not vanish with
    /// the frame), each with its own time and window, ahead of any made since. The rest the
    /// host set for it (its topology, workloads, GPU submissions) describes that frame only
    /// and goes with it.
    fn keep_carried(&self, batch: &mut FrameBatch) {
        if batch.deliveries.is_empty() && batch.staged_marks.is_empty() {
            return;
        }
        let mut staging = self.inner.staging.lock();
        let staging = &mut *staging;
        staging.set = true;
        if !batch.staged_marks.is_empty() {
            // In the order they were made: the carried ones first, then those made since
            // this close let go of `Staging`. The batch keeps the emptied vector.
            batch.staged_marks.append(&mut staging.marks);
            std::mem::swap(&mut staging.marks, &mut batch.staged_marks);
        }
        if batch.deliveries.is_empty() {
            return;
        }
        let offset = staging.delivered_passes.len();
        staging
            .delivered_passes
            .extend_from_slice(&batch.delivered_passes);
        staging
            .deliveries
            .extend(batch.deliveries.iter().map(|delivery| Delivery {
                first_pass: delivery.first_pass + offset,
                ..*delivery
            }));
    }
}

#[cfg(test)]
mod tests {
    use parking_lot::Mutex;

    use super::super::{Session, Staging};
    use crate::thread::Padded;

    /// What close reads first, the pointer to the session's state and the entry, lies in the
    /// two cache lines the handle is aligned to.
    #[test]
    fn the_handle_is_two_cache_lines() {
        assert_eq!(align_of::<Session>(), 64);
        assert_eq!(size_of::<Session>(), 128);
    }

    /// What close reads and writes of the session's state every frame, the closer's lock and
    /// state, the pointer to `Shared` and the frame limit, lies in the state's first two
    /// cache lines, which close asks for (the state starts a line: `staging` aligns it).
    #[test]
    fn what_close_reads_of_the_session_state_is_two_lines() {
        use super::super::Inner;
        assert_eq!(align_of::<Inner>(), 64);
        assert_eq!(std::mem::offset_of!(Inner, closer), 0);
        assert!(std::mem::offset_of!(Inner, shared) + size_of::<usize>() <= 128);
        assert!(std::mem::offset_of!(Inner, frame_limit) + size_of::<u64>() <= 128);
        assert!(size_of::<Mutex<super::Closer>>() <= 128);
    }

    /// What close reads and writes of `Staging` every frame (the fields it reads when no
    /// setter flagged `set`) lies in the mutex's own cache line.
    #[test]
    fn what_close_reads_of_staging_every_frame_is_one_line() {
        let staging = Padded(Mutex::new(Staging::default()));
        let line = std::ptr::from_ref(&staging) as usize;
        let guard = staging.lock();
        let within = |start: usize, bytes: usize| start >= line && start + bytes <= line + 64;
        let at = |field: *const u8| field as usize;
        assert!(within(at(std::ptr::from_ref(&guard.index).cast()), 8));
        assert!(within(at(std::ptr::from_ref(&guard.begin_ticks).cast()), 8));
        assert!(within(
            at(std::ptr::from_ref(&guard.history_begin_ticks).cast()),
            8
        ));
        assert!(within(at(std::ptr::from_ref(&guard.phase).cast()), 8));
        assert!(within(
            at(std::ptr::from_ref(&guard.gpu_outstanding).cast()),
            4
        ));
        assert!(within(at(std::ptr::from_ref(&guard.paused).cast()), 1));
        assert!(within(at(std::ptr::from_ref(&guard.set).cast()), 1));
    }
}
