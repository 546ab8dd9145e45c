//! The batch a closed frame travels in, and what frame close writes into it.

use framewise_format::model::{CounterValue, Frame, Mark, SymId};

use crate::gpu::GpuPassTiming;

/// GPU results handed over for an earlier (or this) frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Delivery {
    pub(crate) frame_index: u64,
    pub(crate) queue: SymId,
    pub(crate) readback_ns: u64,
    /// Range in the batch's `delivered_passes`.
    pub(crate) first_pass: usize,
    pub(crate) pass_count: usize,
}

/// What frame close writes into a batch, kept together in two cache lines so that close
/// touches as few of the batch's lines as it can (the batch comes from a pool the writer
/// last touched long before). The writer copies it into the frame when it gathers.
#[derive(Default)]
#[repr(C, align(64))]
pub(crate) struct Closed {
    /// The frame's index.
    pub(crate) index: u64,
    /// The frame's begin and end, in clock ticks (the writer converts them to ns): the
    /// writer gathers every thread's events up to the end.
    pub(crate) begin_ticks: u64,
    pub(crate) cutoff_ticks: u64,
    /// When frames were dropped before this one (`dropped_frames_before` is not 0), their
    /// events lie up to here: discarded first. (Otherwise whatever close last held.)
    pub(crate) skip_until_ticks: u64,
    pub(crate) dropped_frames_before: u64,
    pub(crate) topology: Option<u64>,
    pub(crate) phase: Option<SymId>,
    /// GPU submissions made during this frame whose results have not been delivered.
    pub(crate) gpu_outstanding: u32,
    pub(crate) paused: bool,
    /// The estimate counted in the queue's byte bound while the batch is queued.
    pub(crate) queued_bytes: usize,
    /// The frame's counter values: moved into the frame by the writer.
    pub(crate) counters: Vec<CounterValue>,
}

/// One closed frame on its way to the writer.
#[derive(Default)]
pub(crate) struct FrameBatch {
    /// What frame close wrote.
    pub(crate) closed: Closed,
    /// The frame; `frame.lanes[..lanes_used]` are this frame's lanes, the rest are spare
    /// buffers kept for reuse.
    pub(crate) frame: Frame,
    pub(crate) lanes_used: usize,
    /// GPU submissions made during this frame whose results have not been delivered (the
    /// writer's count, from `closed` on).
    pub(crate) gpu_outstanding: u32,
    /// GPU results delivered during this frame (for any frame).
    pub(crate) deliveries: Vec<Delivery>,
    pub(crate) delivered_passes: Vec<GpuPassTiming>,
    /// Marks the host set through the session (usermarks): they follow the threads' marks.
    pub(crate) staged_marks: Vec<Mark>,
}

/// A rough size of a closed frame's encoding, for the queue's byte bound, from what close
/// knows of it (its spans are still in the rings).
pub(crate) fn estimated_bytes(
    counters: usize,
    marks: usize,
    passes: usize,
    workloads: usize,
) -> usize {
    64 + counters * 16 + marks * 32 + passes * 32 + workloads * 64
}

impl FrameBatch {
    /// An empty batch with room for a typical frame's counters, marks and GPU results, so
    /// that a batch that first meets one of them in steady state does not allocate.
    pub(crate) fn with_typical_capacity() -> Self {
        let mut batch = Self::default();
        batch.closed.counters.reserve(COUNTERS_CAPACITY);
        batch.reserve_typical_rest();
        batch
    }

    /// Boxed batches with typical capacity, allocated so that what frame close touches of
    /// them lies in as few pages as it can: the batches first, one after another, then
    /// their counters' vectors, then the rest.
    #[expect(clippy::vec_box, reason = "the batches go into the ring's slots boxed")]
    pub(crate) fn boxed_with_typical_capacity(count: usize) -> Vec<Box<Self>> {
        let mut batches: Vec<Box<Self>> = (0..count).map(|_| Box::default()).collect();
        for batch in &mut batches {
            batch.closed.counters.reserve(COUNTERS_CAPACITY);
        }
        for batch in &mut batches {
            batch.reserve_typical_rest();
        }
        batches
    }

    /// The typical room of every vector but the counters'.
    fn reserve_typical_rest(&mut self) {
        self.frame.marks.reserve(32);
        self.frame.workloads.reserve(16);
        self.frame.gpu.queues.reserve(4);
        self.frame.gpu.passes.reserve(64);
        self.deliveries.reserve(8);
        self.delivered_passes.reserve(64);
    }

    /// The estimate of [`estimated_bytes`] for what the batch holds before it is gathered.
    #[cfg(test)]
    pub(crate) fn estimated_bytes(&self) -> usize {
        estimated_bytes(
            self.closed.counters.len(),
            self.frame.marks.len() + self.staged_marks.len(),
            self.delivered_passes.len(),
            self.frame.workloads.len(),
        )
    }

    /// Copies what close wrote into the frame (writer thread, before gathering); the
    /// counters' vector stays with the batch, emptied, for frame close to swap in again.
    pub(crate) fn open_closed(&mut self, clock: &crate::clock::SessionClock) {
        let closed = &mut self.closed;
        let frame = &mut self.frame;
        frame.index = closed.index;
        frame.cpu_begin_ns = clock.ns(closed.begin_ticks);
        frame.cpu_end_ns = clock.ns(closed.cutoff_ticks);
        frame.phase = closed.phase;
        frame.paused = closed.paused;
        frame.topology = closed.topology;
        frame.dropped_frames_before = closed.dropped_frames_before;
        frame.gpu.expected = closed.gpu_outstanding > 0;
        self.gpu_outstanding = closed.gpu_outstanding;
        frame.counters.clear();
        frame.counters.extend_from_slice(&closed.counters);
        closed.counters.clear();
    }

    /// Empties the batch, keeping every buffer's capacity.
    pub(crate) fn reset(&mut self) {
        for lane in &mut self.frame.lanes {
            lane.spans.clear();
            lane.dropped_spans = 0;
        }
        self.lanes_used = 0;
        let counters = std::mem::take(&mut self.closed.counters);
        self.closed = Closed {
            counters,
            ..Closed::default()
        };
        self.closed.counters.clear();
        let frame = &mut self.frame;
        frame.phase = None;
        frame.paused = false;
        frame.topology = None;
        frame.dropped_frames_before = 0;
        frame.gpu.expected = false;
        frame.gpu.results_missing = false;
        frame.gpu.queues.clear();
        frame.gpu.passes.clear();
        frame.workloads.clear();
        frame.bindings.clear();
        frame.counters.clear();
        frame.marks.clear();
        self.gpu_outstanding = 0;
        self.deliveries.clear();
        self.delivered_passes.clear();
        self.staged_marks.clear();
    }
}

/// Room reserved for counter values in every batch (and frame close's own vector): a frame
/// with more counters than this grows a batch's vector once, in warm-up.
pub(crate) const COUNTERS_CAPACITY: usize = 64;

#[cfg(test)]
mod tests {
    use super::FrameBatch;

    /// What a batch has room for, vector by vector.
    fn capacities(batch: &FrameBatch) -> [usize; 8] {
        [
            batch.closed.counters.capacity(),
            batch.frame.marks.capacity(),
            batch.frame.workloads.capacity(),
            batch.frame.gpu.queues.capacity(),
            batch.frame.gpu.passes.capacity(),
            batch.deliveries.capacity(),
            batch.delivered_passes.capacity(),
            batch.staged_marks.capacity(),
        ]
    }

    /// The ring's batches, allocated together, have the room one batch made alone has.
    #[test]
    fn batches_allocated_together_have_the_typical_room() {
        let alone = capacities(&FrameBatch::with_typical_capacity());
        assert!(alone[0] >= super::COUNTERS_CAPACITY);
        let together = FrameBatch::boxed_with_typical_capacity(5);
        assert_eq!(together.len(), 5);
        for batch in &together {
            assert_eq!(capacities(batch), alone);
        }
    }
}
