//! Frame close: what the game thread pays once per frame.

use std::sync::atomic::Ordering;

use crate::clock::now_ticks;
use crate::counters;
use crate::thread;
use crate::writer::{Delivery, Exchange, FrameBatch};

use super::{lock, FrameGuard, FrameOutcome, Session, FRAME_HISTORY};

/// Frame-close state: owned by whoever closes a frame (one at a time).
pub(super) struct Closer {
    /// The batch the next frame closes into (always `Some` between closes).
    pub(super) current: Option<Box<FrameBatch>>,
    pub(super) begin_ticks: u64,
    pub(super) frames_closed: u64,
    /// Frames dropped since the last one sent (written into the next one sent).
    pub(super) dropped_pending: u64,
}

impl Session {
    /// Begins a frame now. Optional: without it, a frame begins where the previous one
    /// ended (or at session start). Time between an `end_frame` and the next `begin_frame`
    /// belongs to no frame's work, but to the previous frame's period.
    pub fn begin_frame(&self) {
        let ticks = now_ticks();
        lock(&self.inner.closer).begin_ticks = ticks;
        lock(&self.inner.staging).begin_ns = self.inner.clock.ns(ticks);
    }

    /// Begins a frame and returns a guard that ends it when dropped.
    pub fn frame(&self) -> FrameGuard<'_> {
        self.begin_frame();
        FrameGuard { session: self }
    }

    /// Closes the current frame: gathers every thread's spans closed in it, the counters,
    /// marks and context, and hands the frame to the writer thread. Never waits on I/O; in
    /// lossless mode waits for the writer to make room when it is behind.
    pub fn end_frame(&self) -> FrameOutcome {
        if self.inner.finished.load(Ordering::Acquire) {
            return FrameOutcome::Finished;
        }
        let end_ticks = now_ticks();
        let limit_reached = {
            let mut closer = lock(&self.inner.closer);
            // Re-checked under the lock: `finish` takes it to send the writer its last
            // message, so no frame can be handed over after that.
            if self.inner.finished.load(Ordering::Acquire) {
                return FrameOutcome::Finished;
            }
            self.close_frame(&mut closer, end_ticks)
        };
        if limit_reached {
            let _ = self.finish();
            return FrameOutcome::Finished;
        }
        FrameOutcome::Recording
    }

    /// Frame close proper; returns whether `frame_limit` was reached.
    fn close_frame(&self, closer: &mut Closer, end_ticks: u64) -> bool {
        let inner = &*self.inner;
        let clock = &inner.clock;
        let Some(mut batch) = closer.current.take() else {
            return false;
        };

        // Every thread's events up to the frame's end.
        {
            let frame = &mut batch.frame;
            let mut used = 0usize;
            let mut registry = thread::registry();
            registry.retain(|buffer| {
                if frame.lanes.len() == used {
                    frame.lanes.push(Default::default());
                }
                if let Some(lane) = frame.lanes.get_mut(used) {
                    lane.spans.clear();
                    lane.thread = buffer.thread;
                    lane.dropped_spans =
                        buffer.drain(end_ticks, clock, &mut lane.spans, &mut frame.marks);
                    if !lane.spans.is_empty() || lane.dropped_spans > 0 {
                        used += 1;
                    }
                }
                !buffer.is_finished()
            });
            batch.lanes_used = used;
        }
        counters::collect(&mut batch.frame.counters);

        let index;
        {
            let mut staging = lock(&inner.staging);
            let staging = &mut *staging;
            index = staging.index;
            let frame = &mut batch.frame;
            frame.index = index;
            frame.cpu_begin_ns = clock.ns(closer.begin_ticks);
            frame.cpu_end_ns = clock.ns(end_ticks);
            frame.phase = staging.phase;
            frame.paused = staging.paused;
            frame.topology = staging.topology.take();
            std::mem::swap(&mut frame.workloads, &mut staging.workloads);
            frame.marks.append(&mut staging.marks);
            std::mem::swap(&mut frame.gpu.queues, &mut staging.gpu_queues);
            frame.gpu.expected = staging.gpu_outstanding > 0;
            batch.gpu_outstanding = std::mem::take(&mut staging.gpu_outstanding);
            std::mem::swap(&mut batch.deliveries, &mut staging.deliveries);
            std::mem::swap(&mut batch.delivered_passes, &mut staging.delivered_passes);
            if let Some(slot) = staging
                .history_begin_ns
                .get_mut((index % FRAME_HISTORY as u64) as usize)
            {
                *slot = frame.cpu_begin_ns;
            }
            staging.index = index + 1;
            staging.begin_ns = frame.cpu_end_ns;
        }
        batch.frame.dropped_frames_before = closer.dropped_pending;

        closer.current = Some(match inner.shared.exchange(batch) {
            Exchange::Sent(fresh) => {
                closer.dropped_pending = 0;
                fresh
            }
            Exchange::Dropped(mut same) => {
                closer.dropped_pending += 1;
                inner.shared.frames_dropped.fetch_add(1, Ordering::Relaxed);
                self.keep_deliveries(&mut same);
                same.reset();
                same
            }
            Exchange::Failed(mut same) => {
                inner
                    .shared
                    .frames_lost_to_error
                    .fetch_add(1, Ordering::Relaxed);
                same.reset();
                same
            }
        });
        closer.frames_closed += 1;
        closer.begin_ticks = end_ticks;
        inner
            .frame_limit
            .is_some_and(|limit| closer.frames_closed >= limit)
    }

    /// GPU results delivered during a frame that was dropped still belong to earlier frames:
    /// they ride with the next frame instead.
    fn keep_deliveries(&self, batch: &mut FrameBatch) {
        if batch.deliveries.is_empty() {
            return;
        }
        let mut staging = lock(&self.inner.staging);
        let staging = &mut *staging;
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
