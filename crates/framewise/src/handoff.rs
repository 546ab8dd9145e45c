//! The hand-off between frame close and the writer thread, lock-free both ways.
//!
//! Frame close fills a [`FrameBatch`] and exchanges it for an empty one in one slot of a
//! ring made when the session starts (`ring`: each slot holds a batch and a stamp saying
//! whose turn it is), so the game thread takes no lock the writer also takes, and allocates
//! nothing, in steady state. The writer thread takes the frames in the order they were sent
//! and puts an empty batch back into each slot once it has one (the batch of a frame it
//! wrote). Control messages (topologies, counter tracks, censuses, stop), sent from any
//! thread, go through a bounded lock-free queue (`crossbeam_queue::ArrayQueue`), each with
//! the number of frames sent before it, so that the writer takes frames and control messages
//! in the order they were sent.
//!
//! Frame close touches few cache lines another thread writes, since every such line costs a
//! transfer between cores: of the hand-off, the one slot's line (which the writer last wrote
//! when it refilled the slot, a ring's length of frames before) and the count of frames sent,
//! a line only frame close writes; what it writes into a batch lies in the batch's [`Closed`]
//! header; the flags it reads every frame ([`Gate`]) share no line with what the writer
//! writes every frame; and the writer's progress ([`Progress`]: frames gathered, bytes taken)
//! is read again only when the last reading of it, kept by frame close's [`Sender`], says the
//! byte bound or the wake-up threshold may be crossed.
//!
//! Waiting is parking, never a lock in the common path. The writer, finding no message,
//! parks for at most [`WRITER_POLL`] and looks again, so a frame reaches the file within
//! about a millisecond of its close; it wakes between two closes rather than at one (see
//! `wake`, [`WakePlan`]). Frame close makes no system call: waking a parked
//! thread is one, and under load the woken writer would often take the closing thread's core
//! there and then (measured: `end_frame` p99 35–47 µs at 1,000 frames/s with a wake per frame,
//! 2.2–2.4 µs without, load 15 on 2 cores). Frame close wakes the writer only when a quarter
//! of the queue (from 8 to 32 frames) waits (a game faster than the poll:
//! [`wake_at_queued`]), and every other sender (stop, control records) and every waiter
//! wakes it at once. A woken writer is one that announced
//! it was parking (`writer_parked`): a sender that sees the announcement after its push (or
//! its slot's stamp) unparks it (the announcement and the check after it, and the push and
//! the check after it, are each separated by a `SeqCst` fence, so one side always sees the other). A lossless
//! game thread that finds no room registers itself and parks until the writer gives a batch
//! back (and re-checks at least every millisecond); only that path takes a lock.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::Thread;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;
use framewise_format::model::{CounterTrack, Topology};
use ring::{FrameRing, Position};
pub(crate) use wake::WakePlan;

pub(crate) use batch::{estimated_bytes, Closed, Delivery, FrameBatch, COUNTERS_CAPACITY};

use crate::error::SessionError;
use crate::report::Warning;
use crate::thread::Padded;
use crate::writer::WriterMode;

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

/// Room in the queue of control messages (topologies, sampled counter tracks, censuses,
/// stop). A sender of control messages waits only when this many are queued ahead of the
/// writer.
const CONTROL_SLOTS: usize = 1024;

/// How long a game thread waiting for room sleeps at most before it looks again (a missed
/// wake-up, which the protocol rules out, would cost no more than this).
const RECHECK: Duration = Duration::from_millis(1);

/// How long the writer sleeps at most when no message waits.
const WRITER_POLL: Duration = Duration::from_millis(1);

/// Frame close wakes the writer once a quarter of the queue's slots, and at most this many
/// frames, wait for it (see [`wake_at_queued`]).
const WAKE_AT_QUEUED: u64 = 32;

/// The frames waiting for the writer at which frame close wakes it, for a queue of `slots`:
/// a quarter of the slots, at least [`WAKE_AT_LEAST`] and at most [`WAKE_AT_QUEUED`].
///
/// A writer that keeps up wakes by itself (every [`WRITER_POLL`] at most, between two
/// closes) and takes what waits, so this wake is for a game faster than the poll, and it is
/// a system call inside `end_frame` whose woken writer may take the closing thread's core
/// there and then. With a wake at 8 frames, a game closing frames as fast as it can on 2
/// cores had about a hundred closes in 16,000 switched out for 40-80 us each, and several
/// hundred more over 5 us; at 32, a handful over 5 us
/// (docs/performance/recorder-passes-close.md, "fourteenth pass"). A quarter of the slots
/// leaves three quarters of the queue for the time the woken writer takes to run.
pub(crate) fn wake_at_queued(slots: usize) -> u64 {
    (slots as u64 / 4).clamp(WAKE_AT_LEAST, WAKE_AT_QUEUED)
}

/// The fewest frames waiting at which frame close wakes the writer, however small the queue
/// (as before the threshold followed the queue's size). Right after a close its own
/// frame waits for a writer that wakes between closes, and one that wakes late under load
/// may still be a frame or two behind at the next close: a wake for so few would make those
/// closes system calls for a writer about to wake anyway (a queue of 8 slots woken at 2
/// frames: realtime `end_frame` p99 2.0-2.6 us at 1,000 frames/s, where 1.2-1.5 at 8).
const WAKE_AT_LEAST: u64 = 8;

/// What frame close reads every frame, written rarely (once, for the flags): a cache line
/// of its own, so that the writer's per-frame writes elsewhere in [`Shared`] do not take it
/// away from the closing thread.
struct Gate {
    mode: WriterMode,
    capacity_bytes: usize,
    /// Frame close wakes the writer once this many frames wait for it ([`wake_at_queued`]).
    wake_at_queued: u64,
    /// The frames' slots (the pointer and length are read every frame, never written).
    ring: FrameRing,
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
/// only when the stale reading crosses a bound (the byte bound, or [`wake_at_queued`]).
#[derive(Debug, Default)]
pub(crate) struct Sender {
    /// Frames handed to the writer so far, and the slot of the next.
    at: Position,
    bytes_sent: usize,
    bytes_taken_seen: usize,
    gathered_seen: u64,
}

/// The writer's side of the hand-off (the writer thread's only; behind a lock no other
/// thread takes, so that `Shared` stays `Sync`).
struct Consumer {
    /// The next frame to take, and its slot.
    next: Position,
    /// The oldest frame taken whose slot has no empty batch back yet.
    refill: Position,
    /// Empty batches not yet put back into a slot.
    #[expect(
        clippy::vec_box,
        reason = "batches travel between the ring and the writer boxed: moving one moves a pointer"
    )]
    spares: Vec<Box<FrameBatch>>,
    /// A control message taken off its queue that waits for frames sent before it.
    pending: Option<(u64, Message)>,
}

/// Counters and state shared between the session, frame close and the writer thread.
pub(crate) struct Shared {
    /// Control messages, each with the number of frames sent before it.
    control: ArrayQueue<(u64, Message)>,
    /// Frames handed over (written by frame close only; read by senders of control
    /// messages).
    frames_sent: Padded<AtomicU64>,
    consumer: Mutex<Consumer>,
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
    /// Shared state with `batches` empty frame batches: one the caller takes for the first
    /// frame ([`Self::take_free`]), the others in the ring's slots (at least one).
    pub(crate) fn new(mode: WriterMode, capacity_bytes: usize, batches: usize) -> Self {
        let slots = batches.saturating_sub(1).max(1);
        Self {
            control: ArrayQueue::new(CONTROL_SLOTS),
            frames_sent: Padded(AtomicU64::new(0)),
            consumer: Mutex::new(Consumer {
                next: Position::default(),
                refill: Position::default(),
                spares: Vec::with_capacity(batches + 1),
                pending: None,
            }),
            gate: Padded(Gate {
                mode,
                capacity_bytes,
                wake_at_queued: wake_at_queued(slots),
                ring: FrameRing::new(slots),
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

    /// An empty batch for the first frame (only at session start).
    pub(crate) fn take_free(&self) -> Box<FrameBatch> {
        Box::new(FrameBatch::with_typical_capacity())
    }

    /// Estimated bytes of the frames `sender` sent that the writer has not taken yet, at
    /// most (from `sender`'s last reading of the writer's progress).
    fn queued_bytes_at_most(sender: &Sender) -> usize {
        sender.bytes_sent.wrapping_sub(sender.bytes_taken_seen)
    }

    /// Whether a frame of `bytes` is over the byte bound by the last reading of the writer's
    /// progress (which overstates what waits: see [`Sender`]).
    #[inline(always)]
    fn over_bytes_as_seen(&self, sender: &Sender, bytes: usize) -> bool {
        let queued = Self::queued_bytes_at_most(sender);
        queued > 0 && queued.saturating_add(bytes) > self.gate.0.capacity_bytes
    }

    /// Whether a frame of `bytes` is over the byte bound, reading the writer's progress only
    /// when the last reading says so.
    fn over_bytes(&self, sender: &mut Sender, bytes: usize) -> bool {
        if !self.over_bytes_as_seen(sender, bytes) {
            return false;
        }
        sender.bytes_taken_seen = self.progress.0.bytes_taken.load(Ordering::Relaxed);
        self.over_bytes_as_seen(sender, bytes)
    }

    /// Hands a closed frame, estimated at `bytes` for the queue's byte bound, to the writer.
    /// In realtime mode never waits; in lossless mode waits for the writer when the pool is
    /// empty or the queue is over its byte bound.
    ///
    /// In line in frame close (its only caller but the tests), with only the path a frame
    /// takes when the session has not failed, its slot holds an empty batch and the last
    /// reading of the writer's progress puts it under the byte bound: every other case
    /// (failed, full, a bound to check against a fresh reading, dropped, waiting) is
    /// [`Self::exchange_otherwise`], out of line, so that the code a close runs every frame
    /// lies in as few instruction-cache lines as it can.
    #[inline(always)]
    pub(crate) fn exchange(
        &self,
        sender: &mut Sender,
        mut batch: Box<FrameBatch>,
        bytes: usize,
    ) -> Exchange {
        batch.closed.queued_bytes = bytes;
        if !self.has_failed()
            && self.gate.0.ring.has_room(&sender.at)
            && !self.over_bytes_as_seen(sender, bytes)
        {
            return Exchange::Sent(self.put(sender, batch, bytes));
        }
        self.exchange_otherwise(sender, batch, bytes)
    }

    /// Puts the frame into its slot, which has room for it, and returns the empty batch it
    /// held.
    #[inline(always)]
    fn put(&self, sender: &mut Sender, batch: Box<FrameBatch>, bytes: usize) -> Box<FrameBatch> {
        let ring = &self.gate.0.ring;
        let fresh = ring.put(&mut sender.at, batch);
        sender.bytes_sent = sender.bytes_sent.wrapping_add(bytes);
        // Only senders of control messages read it: a line no other thread writes.
        self.frames_sent.0.store(sender.at.frame, Ordering::Release);
        fresh
    }

    /// [`Self::exchange`] when the frame cannot go straight into its slot: the session failed,
    /// the slot is not free yet, or the byte bound may be crossed (checked again against the
    /// writer's progress read now). Drops the frame in realtime mode, waits in lossless mode.
    #[cold]
    #[inline(never)]
    fn exchange_otherwise(
        &self,
        sender: &mut Sender,
        batch: Box<FrameBatch>,
        bytes: usize,
    ) -> Exchange {
        loop {
            if self.has_failed() {
                return Exchange::Failed(batch);
            }
            if self.gate.0.ring.has_room(&sender.at) && !self.over_bytes(sender, bytes) {
                return Exchange::Sent(self.put(sender, batch, bytes));
            }
            match self.mode() {
                WriterMode::Realtime => return Exchange::Dropped(batch),
                WriterMode::Lossless => self.wait_for_room(sender, bytes),
            }
        }
    }

    /// The line of the gate, which every [`Self::exchange`] reads first (the mode, the
    /// failure flag, the ring).
    pub(crate) fn gate_line(&self) -> *const u8 {
        std::ptr::from_ref(&self.gate).cast()
    }

    /// The line of the slot the next [`Self::exchange`] from `sender` writes.
    #[inline]
    pub(crate) fn next_slot_line(&self, sender: &Sender) -> *const u8 {
        self.gate.0.ring.slot_line(&sender.at)
    }

    /// Parks the calling (lossless game) thread, whose frame of `bytes` found no room, until
    /// the writer gives a batch back, the session fails, or [`RECHECK`] passes.
    #[cold]
    fn wait_for_room(&self, sender: &mut Sender, bytes: usize) {
        self.wake_writer();
        *lock(&self.room_waiter) = Some(std::thread::current());
        self.room_wanted.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let no_room = !self.gate.0.ring.has_room(&sender.at) || self.over_bytes(sender, bytes);
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

    /// Wakes the writer when [`wake_at_queued`] of the frames `sender` handed over wait for
    /// it (frame close, after a frame was sent). In steady state a compare of two numbers
    /// `sender` holds (and the threshold, on the gate's line, which close reads anyway): the
    /// writer's line is read again only when the last reading of it says that many wait,
    /// once every that many frames at most.
    #[inline]
    pub(crate) fn nudge_writer(&self, sender: &mut Sender) {
        let wake_at = self.gate.0.wake_at_queued;
        if sender.at.frame.saturating_sub(sender.gathered_seen) < wake_at {
            return;
        }
        sender.gathered_seen = self.progress.0.frames_gathered.load(Ordering::Relaxed);
        if sender.at.frame.saturating_sub(sender.gathered_seen) >= wake_at {
            // A writer that keeps up is never woken from close: out of its every-frame code.
            std::hint::cold_path();
            self.wake_writer();
        }
    }

    /// Waits until the writer has gathered the frames `sender` sent (or failed): a lossless
    /// close waits here when a recording thread's ring went over half taken, rather than let
    /// the next frame overflow it while the writer is behind.
    #[cold]
    #[inline(never)]
    pub(crate) fn wait_gathered(&self, sender: &mut Sender) {
        self.wake_writer();
        loop {
            sender.gathered_seen = self.progress.0.frames_gathered.load(Ordering::Acquire);
            if sender.gathered_seen >= sender.at.frame || self.has_failed() || self.writer_gone() {
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
        // The frames sent before this message: the writer takes those first. (A frame closed
        // on another thread meanwhile may go either side, as it could before.)
        let mut message = (self.frames_sent.0.load(Ordering::Acquire), message);
        loop {
            match self.control.push(message) {
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

    /// The next message, parking until one comes (writer thread only), each time for as
    /// long as `plan` says at the session time `now_ns` gives.
    pub(crate) fn receive(&self, plan: &WakePlan, now_ns: impl Fn() -> u64) -> Message {
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
            std::thread::park_timeout(plan.park_for(now_ns(), WRITER_POLL));
            self.writer_parked.store(false, Ordering::Relaxed);
        }
    }

    /// The next message in the order sent, if one waits (writer thread only): a control
    /// message once the frames sent before it are taken, else the next frame.
    fn pop(&self) -> Option<Message> {
        let mut consumer = lock(&self.consumer);
        let consumer = &mut *consumer;
        if consumer.pending.is_none() {
            consumer.pending = self.control.pop();
        }
        if let Some((frames_before, _)) = &consumer.pending {
            if *frames_before <= consumer.next.frame {
                return consumer.pending.take().map(|(_, message)| message);
            }
        }
        let batch = self.gate.0.ring.take(&mut consumer.next)?;
        self.progress
            .0
            .bytes_taken
            .fetch_add(batch.closed.queued_bytes, Ordering::Relaxed);
        Some(Message::Frame(batch))
    }

    /// Whether a message waits for the writer (writer thread only).
    pub(crate) fn has_messages(&self) -> bool {
        let consumer = lock(&self.consumer);
        consumer.pending.is_some()
            || !self.control.is_empty()
            || self.gate.0.ring.has_frame(&consumer.next)
    }

    /// Gives an emptied batch back to frame close (writer thread only): it goes into the
    /// oldest slot taken and not yet refilled.
    pub(crate) fn recycle(&self, mut batch: Box<FrameBatch>) {
        batch.reset();
        {
            let mut consumer = lock(&self.consumer);
            let consumer = &mut *consumer;
            consumer.spares.push(batch);
            while consumer.refill.frame < consumer.next.frame {
                let Some(spare) = consumer.spares.pop() else {
                    break;
                };
                self.gate.0.ring.refill(&mut consumer.refill, spare);
            }
        }
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

mod batch;
mod ring;
#[cfg(test)]
mod tests;
mod wake;
