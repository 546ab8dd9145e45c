//! The hand-off between frame close and the writer thread, lock-free both ways.
//!
//! Frame close fills a [`FrameBatch`] and exchanges it for an empty one: it takes an empty
//! batch from the `free` queue and pushes the full one onto the `messages` queue, two
//! bounded lock-free queues (`crossbeam_queue::ArrayQueue`) made when the session starts, so
//! the game thread takes no lock the writer also takes, and allocates nothing, in steady
//! state. The writer thread pops messages in the order they were sent, and pushes each batch
//! back onto `free` once its frame is written (in FIFO order, so every batch's buffers reach
//! their steady-state size during warm-up).
//!
//! Frame close touches few cache lines another thread writes, since every such line costs a
//! transfer between cores: what it writes into a batch lies in the batch's [`Closed`] header,
//! the flags it reads every frame ([`Gate`]) share no line with what the writer writes every
//! frame, and the writer's progress ([`Progress`]: frames gathered, bytes taken) is read
//! again only when the last reading of it, kept by frame close's [`Sender`], says the byte
//! bound or the wake-up threshold may be crossed.
//!
//! Waiting is parking, never a lock in the common path. The writer, finding no message,
//! parks for at most [`WRITER_POLL`] and looks again, so a frame reaches the file within
//! about a millisecond of its close, and frame close makes no system call: waking a parked
//! thread is one, and under load the woken writer would often take the closing thread's core
//! there and then (measured: `end_frame` p99 35–47 µs at 1,000 frames/s with a wake per frame,
//! 2.2–2.4 µs without, load 15 on 2 cores). Frame close wakes the writer only when
//! [`WAKE_AT_QUEUED`] frames wait (a game faster than the poll), and every other sender (stop,
//! control records) and every waiter wakes it at once. A woken writer is one that announced
//! it was parking (`writer_parked`): a sender that sees the announcement after its push
//! unparks it (the announcement and the check after it, and the push and the check after
//! it, are each separated by a `SeqCst` fence, so one side always sees the other). A lossless
//! game thread that finds no room registers itself and parks until the writer gives a batch
//! back (and re-checks at least every millisecond); only that path takes a lock.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::Thread;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;
use framewise_format::model::{CounterTrack, CounterValue, Frame, Mark, SymId, Topology};

use crate::error::SessionError;
use crate::gpu::GpuPassTiming;
use crate::report::Warning;
use crate::thread::Padded;
use crate::writer::WriterMode;

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
    /// Events up to here belong to frames dropped before this one: discarded first.
    pub(crate) skip_until_ticks: Option<u64>,
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
    fn with_typical_capacity() -> Self {
        let mut batch = Self::default();
        batch.closed.counters.reserve(COUNTERS_CAPACITY);
        batch.frame.marks.reserve(32);
        batch.frame.workloads.reserve(16);
        batch.frame.gpu.queues.reserve(4);
        batch.frame.gpu.passes.reserve(64);
        batch.deliveries.reserve(8);
        batch.delivered_passes.reserve(64);
        batch
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

/// A message to the writer thread.
pub(crate) enum Message {
    Frame(Box<FrameBatch>),
    Topology(Box<Topology>),
    CounterTrack(CounterTrack),
    /// A scene census: a `CENS` record, and `.framewise/census.json` when the live log is on.
    Census(Box<framewise_census::Census>),
    Stop,
}

/// What happened to a closed frame at the hand-off.
pub(crate) enum Exchange {
    /// Queued for writing; here is an empty batch for the next frame.
    Sent(Box<FrameBatch>),
    /// Dropped (realtime mode, writer behind): the same batch back, to be reused.
    Dropped(Box<FrameBatch>),
    /// Not written because the sink failed: the same batch back.
    Failed(Box<FrameBatch>),
}

/// Room in the message queue beyond one slot per batch, for control messages (topologies,
/// sampled counter tracks, stop). A sender of control messages waits only when this many are
/// queued ahead of the writer.
const CONTROL_SLOTS: usize = 1024;

/// How long a game thread waiting for room sleeps at most before it looks again (a missed
/// wake-up, which the protocol rules out, would cost no more than this).
const RECHECK: Duration = Duration::from_millis(1);

/// How long the writer sleeps at most when no message waits.
const WRITER_POLL: Duration = Duration::from_millis(1);

/// Frame close wakes the writer once this many frames wait for it.
const WAKE_AT_QUEUED: u64 = 8;

/// What frame close reads every frame, written rarely (once, for the flags): a cache line
/// of its own, so that the writer's per-frame writes elsewhere in [`Shared`] do not take it
/// away from the closing thread.
struct Gate {
    mode: WriterMode,
    capacity_bytes: usize,
    /// The session failed: nothing more is written.
    failed: AtomicBool,
    /// The writer thread has ended: nothing will take messages any more.
    writer_gone: AtomicBool,
}

/// What the writer writes for every frame it takes: a cache line of its own, which frame
/// close reads only when its last reading of it says it must (see [`Sender`]).
struct Progress {
    /// Frames whose events the writer has gathered from the rings.
    frames_gathered: AtomicU64,
    /// Estimated bytes of the frames the writer has taken off the queue, summed.
    bytes_taken: AtomicUsize,
}

/// Frame close's side of the hand-off (owned by whoever closes frames, one at a time): what
/// it sent, and the writer's progress as it last read it. The writer's counts only grow, so
/// a stale reading overstates what waits for the writer: close reads the writer's line again
/// only when the stale reading crosses a bound (the byte bound, or [`WAKE_AT_QUEUED`]).
#[derive(Debug, Default)]
pub(crate) struct Sender {
    /// Frames handed to the writer so far.
    pub(crate) frames_sent: u64,
    bytes_sent: usize,
    bytes_taken_seen: usize,
    gathered_seen: u64,
}

/// Counters and state shared between the session, frame close and the writer thread.
pub(crate) struct Shared {
    /// Closed frames and control messages, in the order they were sent.
    messages: ArrayQueue<Message>,
    /// Empty batches, for frame close to take.
    free: ArrayQueue<Box<FrameBatch>>,
    gate: Padded<Gate>,
    progress: Padded<Progress>,
    /// The writer thread, set by itself before it first parks.
    writer: OnceLock<Thread>,
    /// The writer announced it is about to park.
    writer_parked: AtomicBool,
    /// A lossless game thread is waiting for a batch to come back.
    room_wanted: AtomicBool,
    /// That thread (taken only when waiting for room, or waking a waiter).
    room_waiter: Mutex<Option<Thread>>,
    pub(crate) bytes_written: AtomicU64,
    pub(crate) frames_written: AtomicU64,
    pub(crate) frames_dropped: AtomicU64,
    pub(crate) frames_lost_to_error: AtomicU64,
    pub(crate) spans_dropped: AtomicU64,
    pub(crate) gpu_results_missing: AtomicU64,
    pub(crate) gpu_deliveries_late: AtomicU64,
    /// Time the writer thread spent working (gathering, encoding, writing, flushing), ns.
    pub(crate) writer_busy_ns: AtomicU64,
    pub(crate) error: Mutex<Option<SessionError>>,
    pub(crate) warnings: Mutex<Vec<Warning>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here leaves its data consistent, so a panic elsewhere while the
    // lock was held does not make it wrong to go on.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Shared state with a pool of `batches` empty frame batches (one of which the caller
    /// takes for the first frame).
    pub(crate) fn new(mode: WriterMode, capacity_bytes: usize, batches: usize) -> Self {
        let batches = batches.max(1);
        let free = ArrayQueue::new(batches);
        for _ in 0..batches {
            let _ = free.push(Box::new(FrameBatch::with_typical_capacity()));
        }
        Self {
            // Every batch fits, plus control messages: a frame is never refused for room
            // unless control messages fill their share.
            messages: ArrayQueue::new(batches + CONTROL_SLOTS),
            free,
            gate: Padded(Gate {
                mode,
                capacity_bytes,
                failed: AtomicBool::new(false),
                writer_gone: AtomicBool::new(false),
            }),
            progress: Padded(Progress {
                frames_gathered: AtomicU64::new(0),
                bytes_taken: AtomicUsize::new(0),
            }),
            writer: OnceLock::new(),
            writer_parked: AtomicBool::new(false),
            room_wanted: AtomicBool::new(false),
            room_waiter: Mutex::new(None),
            bytes_written: AtomicU64::new(0),
            frames_written: AtomicU64::new(0),
            frames_dropped: AtomicU64::new(0),
            frames_lost_to_error: AtomicU64::new(0),
            spans_dropped: AtomicU64::new(0),
            gpu_results_missing: AtomicU64::new(0),
            gpu_deliveries_late: AtomicU64::new(0),
            writer_busy_ns: AtomicU64::new(0),
            error: Mutex::new(None),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// The writer's mode.
    pub(crate) fn mode(&self) -> WriterMode {
        self.gate.0.mode
    }

    /// Whether the session failed (nothing more is written).
    pub(crate) fn has_failed(&self) -> bool {
        self.gate.0.failed.load(Ordering::Relaxed)
    }

    fn writer_gone(&self) -> bool {
        self.gate.0.writer_gone.load(Ordering::Acquire)
    }

    /// Takes an empty batch from the pool (only at session start).
    pub(crate) fn take_free(&self) -> Box<FrameBatch> {
        self.free.pop().unwrap_or_default()
    }

    /// Estimated bytes of the frames `sender` sent that the writer has not taken yet, at
    /// most (from `sender`'s last reading of the writer's progress).
    fn queued_bytes_at_most(sender: &Sender) -> usize {
        sender.bytes_sent.wrapping_sub(sender.bytes_taken_seen)
    }

    /// Whether a frame of `bytes` is over the byte bound, reading the writer's progress only
    /// when the last reading says so.
    fn over_bytes(&self, sender: &mut Sender, bytes: usize) -> bool {
        let over =
            |queued: usize| queued > 0 && queued.saturating_add(bytes) > self.gate.0.capacity_bytes;
        if !over(Self::queued_bytes_at_most(sender)) {
            return false;
        }
        sender.bytes_taken_seen = self.progress.0.bytes_taken.load(Ordering::Relaxed);
        over(Self::queued_bytes_at_most(sender))
    }

    /// Hands a closed frame, estimated at `bytes` for the queue's byte bound, to the writer.
    /// In realtime mode never waits; in lossless mode waits for the writer when the pool is
    /// empty or the queue is over its byte bound.
    pub(crate) fn exchange(
        &self,
        sender: &mut Sender,
        mut batch: Box<FrameBatch>,
        bytes: usize,
    ) -> Exchange {
        batch.closed.queued_bytes = bytes;
        loop {
            if self.has_failed() {
                return Exchange::Failed(batch);
            }
            if !self.over_bytes(sender, bytes) {
                if let Some(fresh) = self.free.pop() {
                    match self.messages.push(Message::Frame(batch)) {
                        Ok(()) => {
                            sender.bytes_sent = sender.bytes_sent.wrapping_add(bytes);
                            sender.frames_sent += 1;
                            return Exchange::Sent(fresh);
                        }
                        Err(refused) => {
                            // Control messages fill the queue: no room after all.
                            let _ = self.free.push(fresh);
                            let Message::Frame(refused) = refused else {
                                unreachable!("the queue gives back what it was given");
                            };
                            batch = refused;
                        }
                    }
                }
            }
            match self.mode() {
                WriterMode::Realtime => return Exchange::Dropped(batch),
                WriterMode::Lossless => self.wait_for_room(sender, bytes),
            }
        }
    }

    /// Parks the calling (lossless game) thread, whose frame of `bytes` found no room, until
    /// the writer gives a batch back, the session fails, or [`RECHECK`] passes.
    #[cold]
    fn wait_for_room(&self, sender: &mut Sender, bytes: usize) {
        self.wake_writer();
        *lock(&self.room_waiter) = Some(std::thread::current());
        self.room_wanted.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let no_room = self.free.is_empty() || self.over_bytes(sender, bytes);
        if no_room && !self.has_failed() && !self.writer_gone() {
            std::thread::park_timeout(RECHECK);
        }
        self.room_wanted.store(false, Ordering::Relaxed);
    }

    /// Wakes a game thread waiting for room, if one announced it.
    fn wake_room_waiter(&self) {
        fence(Ordering::SeqCst);
        if self.room_wanted.load(Ordering::Relaxed) {
            if let Some(waiter) = lock(&self.room_waiter).as_ref() {
                waiter.unpark();
            }
        }
    }

    /// Wakes the writer when [`WAKE_AT_QUEUED`] of the frames `sender` handed over wait for
    /// it (frame close, after a frame was sent). In steady state a compare of two numbers
    /// `sender` holds: the writer's line is read again only when the last reading of it
    /// says that many wait, once every [`WAKE_AT_QUEUED`] frames at most.
    #[inline]
    pub(crate) fn nudge_writer(&self, sender: &mut Sender) {
        if sender.frames_sent.saturating_sub(sender.gathered_seen) < WAKE_AT_QUEUED {
            return;
        }
        sender.gathered_seen = self.progress.0.frames_gathered.load(Ordering::Relaxed);
        if sender.frames_sent.saturating_sub(sender.gathered_seen) >= WAKE_AT_QUEUED {
            self.wake_writer();
        }
    }

    /// Waits until the writer has gathered the frames `sender` sent (or failed): a lossless
    /// game whose ring is over half full waits here rather than let the next frame overflow
    /// it while the writer is behind.
    pub(crate) fn wait_gathered(&self, sender: &mut Sender) {
        self.wake_writer();
        loop {
            sender.gathered_seen = self.progress.0.frames_gathered.load(Ordering::Acquire);
            if sender.gathered_seen >= sender.frames_sent || self.has_failed() || self.writer_gone()
            {
                return;
            }
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    /// The writer has gathered one more frame's events from the rings (writer thread only).
    pub(crate) fn frame_gathered(&self) {
        self.progress
            .0
            .frames_gathered
            .fetch_add(1, Ordering::Release);
    }

    /// Sends a control message. Never dropped while the writer runs; waits only when
    /// [`CONTROL_SLOTS`] messages are queued ahead of it. Dropped once the writer has ended
    /// (after stop, or a panic), when nothing would read it.
    pub(crate) fn send(&self, message: Message) {
        let mut message = message;
        loop {
            match self.messages.push(message) {
                Ok(()) => {
                    self.wake_writer();
                    return;
                }
                Err(refused) => {
                    if self.writer_gone() {
                        return;
                    }
                    message = refused;
                    self.wake_writer();
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        }
    }

    /// Unparks the writer if it announced it was parking.
    #[inline]
    fn wake_writer(&self) {
        // Pairs with the fence in `receive`: the push above, or the announcement there, is
        // seen by the other side.
        fence(Ordering::SeqCst);
        if self.writer_parked.load(Ordering::Relaxed)
            && self.writer_parked.swap(false, Ordering::Relaxed)
        {
            if let Some(writer) = self.writer.get() {
                writer.unpark();
            }
        }
    }

    /// The next message, parking until one comes (writer thread only).
    pub(crate) fn receive(&self) -> Message {
        self.writer.get_or_init(std::thread::current);
        loop {
            if let Some(message) = self.pop() {
                return message;
            }
            self.writer_parked.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if let Some(message) = self.pop() {
                self.writer_parked.store(false, Ordering::Relaxed);
                return message;
            }
            std::thread::park_timeout(WRITER_POLL);
            self.writer_parked.store(false, Ordering::Relaxed);
        }
    }

    fn pop(&self) -> Option<Message> {
        let message = self.messages.pop()?;
        if let Message::Frame(batch) = &message {
            self.progress
                .0
                .bytes_taken
                .fetch_add(batch.closed.queued_bytes, Ordering::Relaxed);
        }
        Some(message)
    }

    /// Whether a message waits for the writer.
    pub(crate) fn has_messages(&self) -> bool {
        !self.messages.is_empty()
    }

    /// Gives an emptied batch back to frame close (writer thread only).
    pub(crate) fn recycle(&self, mut batch: Box<FrameBatch>) {
        batch.reset();
        // There is a slot for every batch: this never fails.
        let _ = self.free.push(batch);
        self.wake_room_waiter();
    }

    /// The writer thread has ended (it calls this last, also after a panic).
    pub(crate) fn writer_ended(&self) {
        self.gate.0.writer_gone.store(true, Ordering::Release);
        self.wake_room_waiter();
    }

    /// Records the session's first error and stops all further writing.
    pub(crate) fn fail(&self, error: SessionError) {
        {
            let mut slot = lock(&self.error);
            if slot.is_none() {
                *slot = Some(error);
            }
        }
        self.gate.0.failed.store(true, Ordering::Relaxed);
        // Wake a game thread waiting for room: it must not wait on a writer that stopped.
        self.wake_room_waiter();
    }

    pub(crate) fn error(&self) -> Option<SessionError> {
        lock(&self.error).clone()
    }

    pub(crate) fn warnings(&self) -> Vec<Warning> {
        lock(&self.warnings).clone()
    }
}

#[cfg(test)]
mod tests;
