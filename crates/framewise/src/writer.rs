//! The hand-off from frame close to the background writer thread, and the thread itself.
//!
//! Frame close fills a [`FrameBatch`] with what must be cut on the game thread (the frame's
//! end instant, counters, the host's context) and exchanges it for an empty one from a fixed
//! pool made when the session starts, so the game thread never allocates a batch in steady
//! state, and never pairs, builds or encodes anything. The writer thread gathers each frame's
//! spans and marks from the threads' rings up to the frame's end (pairing begins with ends,
//! in pre-order), encodes and writes the frame, holds frames whose GPU results are pending,
//! and recycles batches into the pool in FIFO order (so every batch's buffers reach their
//! steady-state size during warm-up).

use framewise_detect::hitch_rule::{HitchRule, DEFAULT_BUDGET_NS};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use framewise_format::model::{
    CounterTrack, Frame, GpuPass, GpuQueueFrame, GpuTiming, Mark, SymId, SymbolTable, Topology,
};
use framewise_format::{EncodeError, Writer};

use crate::clock::SessionClock;
use crate::error::SessionError;
use crate::gpu::GpuPassTiming;
use crate::intern;
use crate::report::Warning;
use crate::{thread, CaptureLevel};

/// How the writer behaves when it falls behind the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WriterMode {
    /// Drop whole frames (counted, and the count written into the next frame) rather than
    /// make the game wait. The default for interactive runs.
    #[default]
    Realtime,
    /// Make the game wait rather than lose a frame. The default under the bench harness
    /// (`Session::from_env`) and the right choice for tests.
    Lossless,
}

/// A sink that can also seek: the capture header is patched CLOSED at stop.
pub trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// Where a session writes its capture.
///
/// A path or a seekable writer gets a closed capture (header patched with the directory at
/// stop); a plain stream (a pipe) gets the directory at its end but no header patch. The
/// session owns the sink, so the sink cannot go away while the session records.
pub enum Sink {
    /// A file, created (or truncated) at start.
    Path(std::path::PathBuf),
    /// A stream that cannot seek.
    Stream(Box<dyn Write + Send>),
    /// A writer that can seek.
    Seekable(Box<dyn WriteSeek + Send>),
}

impl Sink {
    /// A stream that cannot seek (a pipe, a socket).
    pub fn stream(writer: impl Write + Send + 'static) -> Self {
        Self::Stream(Box::new(writer))
    }

    /// A writer that can seek (an in-memory cursor, an already-open file).
    pub fn seekable(writer: impl Write + Seek + Send + 'static) -> Self {
        Self::Seekable(Box::new(writer))
    }
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Path(path) => f.debug_tuple("Path").field(path).finish(),
            Self::Stream(_) => f.write_str("Stream(..)"),
            Self::Seekable(_) => f.write_str("Seekable(..)"),
        }
    }
}

impl From<std::path::PathBuf> for Sink {
    fn from(path: std::path::PathBuf) -> Self {
        Self::Path(path)
    }
}

impl From<&std::path::Path> for Sink {
    fn from(path: &std::path::Path) -> Self {
        Self::Path(path.to_owned())
    }
}

impl From<&str> for Sink {
    fn from(path: &str) -> Self {
        Self::Path(path.into())
    }
}

impl From<String> for Sink {
    fn from(path: String) -> Self {
        Self::Path(path.into())
    }
}

/// The opened sink the format writer writes to, counting what it accepted.
pub(crate) struct OpenSink {
    kind: OpenKind,
    /// Bytes accepted by `write` calls (a header patch counts again: use only for streams).
    accepted: u64,
}

enum OpenKind {
    File(BufWriter<File>),
    Stream(Box<dyn Write + Send>),
    Seekable(Box<dyn WriteSeek + Send>),
}

impl OpenSink {
    pub(crate) fn file(file: File) -> Self {
        Self::new(OpenKind::File(BufWriter::with_capacity(64 * 1024, file)))
    }

    pub(crate) fn stream(stream: Box<dyn Write + Send>) -> Self {
        Self::new(OpenKind::Stream(stream))
    }

    pub(crate) fn seekable(seekable: Box<dyn WriteSeek + Send>) -> Self {
        Self::new(OpenKind::Seekable(seekable))
    }

    fn new(kind: OpenKind) -> Self {
        Self { kind, accepted: 0 }
    }

    fn can_seek(&self) -> bool {
        !matches!(self.kind, OpenKind::Stream(_))
    }

    fn writer(&mut self) -> &mut dyn Write {
        match &mut self.kind {
            OpenKind::File(w) => w,
            OpenKind::Stream(w) => w,
            OpenKind::Seekable(w) => w,
        }
    }

    /// The capture's final length once the writer finished with it.
    fn final_length(&mut self) -> u64 {
        let accepted = self.accepted;
        match &mut self.kind {
            OpenKind::File(w) => w.stream_position().unwrap_or(accepted),
            OpenKind::Seekable(w) => w.stream_position().unwrap_or(accepted),
            OpenKind::Stream(_) => accepted,
        }
    }
}

impl Write for OpenSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.writer().write(buf)?;
        self.accepted += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

impl Seek for OpenSink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match &mut self.kind {
            OpenKind::File(w) => w.seek(pos),
            OpenKind::Seekable(w) => w.seek(pos),
            OpenKind::Stream(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the capture sink is a stream and cannot seek",
            )),
        }
    }
}

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

/// One closed frame on its way to the writer.
#[derive(Default)]
pub(crate) struct FrameBatch {
    /// The frame; `frame.lanes[..lanes_used]` are this frame's lanes, the rest are spare
    /// buffers kept for reuse.
    pub(crate) frame: Frame,
    pub(crate) lanes_used: usize,
    /// GPU submissions made during this frame whose results have not been delivered.
    pub(crate) gpu_outstanding: u32,
    /// GPU results delivered during this frame (for any frame).
    pub(crate) deliveries: Vec<Delivery>,
    pub(crate) delivered_passes: Vec<GpuPassTiming>,
    /// The frame's end: the writer gathers every thread's events up to it.
    pub(crate) cutoff_ticks: u64,
    /// Events up to here belong to frames dropped before this one: discarded first.
    pub(crate) skip_until_ticks: Option<u64>,
    /// Marks the host set through the session (usermarks): they follow the threads' marks.
    pub(crate) staged_marks: Vec<Mark>,
}

impl FrameBatch {
    /// An empty batch with room for a typical frame's counters, marks and GPU results, so
    /// that a batch that first meets one of them in steady state does not allocate.
    fn with_typical_capacity() -> Self {
        let mut batch = Self::default();
        batch.frame.counters.reserve(64);
        batch.frame.marks.reserve(32);
        batch.frame.workloads.reserve(16);
        batch.frame.gpu.queues.reserve(4);
        batch.frame.gpu.passes.reserve(64);
        batch.deliveries.reserve(8);
        batch.delivered_passes.reserve(64);
        batch
    }

    /// A rough size of the encoded frame, for the queue's byte bound.
    pub(crate) fn estimated_bytes(&self) -> usize {
        let spans: usize = self.frame.lanes[..self.lanes_used]
            .iter()
            .map(|lane| lane.spans.len())
            .sum();
        64 + spans * 24
            + self.frame.counters.len() * 16
            + (self.frame.marks.len() + self.staged_marks.len()) * 32
            + self.delivered_passes.len() * 32
            + self.frame.workloads.len() * 64
    }

    /// Empties the batch, keeping every buffer's capacity.
    pub(crate) fn reset(&mut self) {
        for lane in &mut self.frame.lanes {
            lane.spans.clear();
            lane.dropped_spans = 0;
        }
        self.lanes_used = 0;
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
        self.cutoff_ticks = 0;
        self.skip_until_ticks = None;
        self.staged_marks.clear();
    }
}

/// A message to the writer thread.
pub(crate) enum Message {
    Frame(Box<FrameBatch>),
    Topology(Box<Topology>),
    CounterTrack(CounterTrack),
    Stop,
}

struct QueueState {
    items: VecDeque<Message>,
    queued_bytes: usize,
    free: VecDeque<Box<FrameBatch>>,
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

/// Counters and state shared between the session, frame close and the writer thread.
pub(crate) struct Shared {
    queue: Mutex<QueueState>,
    writer_wake: Condvar,
    space: Condvar,
    capacity_bytes: usize,
    pub(crate) mode: WriterMode,
    pub(crate) failed: AtomicBool,
    pub(crate) bytes_written: AtomicU64,
    pub(crate) frames_written: AtomicU64,
    pub(crate) frames_dropped: AtomicU64,
    /// Frames whose events the writer has gathered from the rings.
    pub(crate) frames_gathered: AtomicU64,
    pub(crate) frames_lost_to_error: AtomicU64,
    pub(crate) spans_dropped: AtomicU64,
    pub(crate) gpu_results_missing: AtomicU64,
    pub(crate) gpu_deliveries_late: AtomicU64,
    /// Time the writer thread spent on frames (gathering, encoding, writing), ns.
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
        let free = (0..batches)
            .map(|_| Box::new(FrameBatch::with_typical_capacity()))
            .collect::<VecDeque<_>>();
        Self {
            queue: Mutex::new(QueueState {
                // Room for every batch plus control messages: pushing never reallocates.
                items: VecDeque::with_capacity(batches + 64),
                queued_bytes: 0,
                free,
            }),
            writer_wake: Condvar::new(),
            space: Condvar::new(),
            capacity_bytes,
            mode,
            failed: AtomicBool::new(false),
            bytes_written: AtomicU64::new(0),
            frames_written: AtomicU64::new(0),
            frames_dropped: AtomicU64::new(0),
            frames_gathered: AtomicU64::new(0),
            frames_lost_to_error: AtomicU64::new(0),
            spans_dropped: AtomicU64::new(0),
            gpu_results_missing: AtomicU64::new(0),
            gpu_deliveries_late: AtomicU64::new(0),
            writer_busy_ns: AtomicU64::new(0),
            error: Mutex::new(None),
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// Takes an empty batch from the pool (only at session start).
    pub(crate) fn take_free(&self) -> Box<FrameBatch> {
        lock(&self.queue).free.pop_front().unwrap_or_default()
    }

    /// Hands a closed frame to the writer. In realtime mode never waits; in lossless mode
    /// waits for the writer when the pool is empty or the queue is over its byte bound.
    pub(crate) fn exchange(&self, batch: Box<FrameBatch>) -> Exchange {
        if self.failed.load(Ordering::Relaxed) {
            return Exchange::Failed(batch);
        }
        let bytes = batch.estimated_bytes();
        let mut queue = lock(&self.queue);
        loop {
            if self.failed.load(Ordering::Relaxed) {
                return Exchange::Failed(batch);
            }
            let over_bytes = !queue.items.is_empty()
                && queue.queued_bytes.saturating_add(bytes) > self.capacity_bytes;
            if !over_bytes {
                if let Some(fresh) = queue.free.pop_front() {
                    queue.queued_bytes += bytes;
                    queue.items.push_back(Message::Frame(batch));
                    drop(queue);
                    self.writer_wake.notify_one();
                    return Exchange::Sent(fresh);
                }
            }
            match self.mode {
                WriterMode::Realtime => return Exchange::Dropped(batch),
                WriterMode::Lossless => {
                    queue = self
                        .space
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    /// Waits until the writer has gathered `frames` frames from the rings (or failed): a
    /// lossless game whose ring is over half full waits here rather than let the next frame
    /// overflow it while the writer is behind.
    pub(crate) fn wait_gathered(&self, frames: u64) {
        while self.frames_gathered.load(Ordering::Acquire) < frames
            && !self.failed.load(Ordering::Relaxed)
        {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    /// Sends a control message (never dropped, never waits).
    pub(crate) fn send(&self, message: Message) {
        lock(&self.queue).items.push_back(message);
        self.writer_wake.notify_one();
    }

    fn receive(&self) -> Message {
        let mut queue = lock(&self.queue);
        loop {
            if let Some(message) = queue.items.pop_front() {
                if let Message::Frame(batch) = &message {
                    queue.queued_bytes = queue.queued_bytes.saturating_sub(batch.estimated_bytes());
                }
                return message;
            }
            queue = self
                .writer_wake
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn recycle(&self, mut batch: Box<FrameBatch>) {
        batch.reset();
        lock(&self.queue).free.push_back(batch);
        self.space.notify_all();
    }

    /// Records the session's first error and stops all further writing.
    pub(crate) fn fail(&self, error: SessionError) {
        {
            let mut slot = lock(&self.error);
            if slot.is_none() {
                *slot = Some(error);
            }
        }
        self.failed.store(true, Ordering::Relaxed);
        // Wake a game thread waiting for room: it must not wait on a writer that stopped.
        let _queue = lock(&self.queue);
        self.space.notify_all();
    }

    pub(crate) fn error(&self) -> Option<SessionError> {
        lock(&self.error).clone()
    }

    pub(crate) fn warnings(&self) -> Vec<Warning> {
        lock(&self.warnings).clone()
    }
}

/// One frame written, as told to the per-frame callback (on the writer thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrameWritten {
    /// The frame's index.
    pub index: u64,
    /// Bytes the capture holds now.
    pub bytes_written: u64,
    /// Frames written so far.
    pub frames_written: u64,
}

/// A callback for warnings.
pub(crate) type WarningHook = Arc<dyn Fn(&Warning) + Send + Sync>;
/// A callback run after every frame written.
pub(crate) type FrameHook = Arc<dyn Fn(&FrameWritten) + Send + Sync>;

/// What the writer thread is told at start.
pub(crate) struct WriterConfig {
    /// The session clock, to turn the rings' ticks into ns.
    pub(crate) clock: SessionClock,
    pub(crate) gpu_wait_frames: u64,
    pub(crate) byte_budget: u64,
    pub(crate) level: CaptureLevel,
    /// The frame budget declared in META, if any: the hitch rule's budget.
    pub(crate) frame_budget_ns: Option<u64>,
    pub(crate) started: Instant,
    pub(crate) on_warning: Option<WarningHook>,
    pub(crate) on_frame_written: Option<FrameHook>,
}

/// What the writer thread reports when it ends.
pub(crate) struct WriterOutcome {
    /// The header was patched CLOSED.
    pub(crate) closed: bool,
}

fn session_error(error: EncodeError, bytes_written: u64) -> SessionError {
    match error {
        EncodeError::Io(io) => SessionError::Io {
            kind: io.kind(),
            message: io.to_string(),
            bytes_written,
        },
        other => SessionError::Encode {
            message: other.to_string(),
        },
    }
}

/// The writer thread's state.
pub(crate) struct WriterThread {
    writer: Option<Writer<OpenSink>>,
    symbols: SymbolTable,
    synced: usize,
    held: VecDeque<Box<FrameBatch>>,
    newest_closed: Option<u64>,
    config: WriterConfig,
    shared: Arc<Shared>,
    warned: bool,
    /// Where the events of dropped frames are drained to be discarded.
    discarded: Frame,
}

impl WriterThread {
    pub(crate) fn new(
        writer: Writer<OpenSink>,
        symbols: SymbolTable,
        synced: usize,
        config: WriterConfig,
        shared: Arc<Shared>,
    ) -> Self {
        shared
            .bytes_written
            .store(writer.bytes_written(), Ordering::Relaxed);
        Self {
            writer: Some(writer),
            symbols,
            synced,
            held: VecDeque::new(),
            newest_closed: None,
            config,
            shared,
            warned: false,
            discarded: Frame::default(),
        }
    }

    /// Runs until told to stop.
    pub(crate) fn run(mut self) -> WriterOutcome {
        loop {
            match self.shared.receive() {
                Message::Frame(mut batch) => {
                    let started_ns = self.config.clock.now_ns();
                    self.gather(&mut batch);
                    self.on_frame(batch);
                    let busy_ns = self.config.clock.now_ns().saturating_sub(started_ns);
                    self.shared
                        .writer_busy_ns
                        .fetch_add(busy_ns, Ordering::Relaxed);
                }
                Message::Topology(topology) => {
                    self.with_writer(|writer, symbols| {
                        writer.write_topology(&topology, symbols).map(|_| ())
                    });
                }
                Message::CounterTrack(track) => {
                    self.with_writer(|writer, symbols| writer.write_counter_track(&track, symbols));
                }
                Message::Stop => return self.finish(),
            }
        }
    }

    /// Runs one write against the format writer, unless the session already failed.
    fn with_writer(
        &mut self,
        write: impl FnOnce(&mut Writer<OpenSink>, &SymbolTable) -> Result<(), EncodeError>,
    ) -> bool {
        if self.shared.failed.load(Ordering::Relaxed) {
            return false;
        }
        let Some(writer) = self.writer.as_mut() else {
            return false;
        };
        intern::sync_into(&mut self.symbols, &mut self.synced);
        let result = write(writer, &self.symbols).and_then(|()| writer.flush());
        let bytes = writer.bytes_written();
        self.shared.bytes_written.store(bytes, Ordering::Relaxed);
        match result {
            Ok(()) => true,
            Err(error) => {
                self.shared.fail(session_error(error, bytes));
                false
            }
        }
    }

    /// Fills a closed frame's lanes and marks from the threads' rings: first discarding the
    /// events of frames dropped since the last one sent, then pairing every event up to the
    /// frame's end. The host's staged marks follow the threads' marks, as they always have.
    fn gather(&mut self, batch: &mut FrameBatch) {
        let clock = self.config.clock;
        if let Some(skip_until_ticks) = batch.skip_until_ticks {
            let discarded = &mut self.discarded;
            thread::drain_lanes(skip_until_ticks, &clock, discarded);
            discarded.marks.clear();
        }
        batch.lanes_used = thread::drain_lanes(batch.cutoff_ticks, &clock, &mut batch.frame);
        batch.frame.marks.append(&mut batch.staged_marks);
        self.shared.frames_gathered.fetch_add(1, Ordering::Release);
    }

    fn on_frame(&mut self, batch: Box<FrameBatch>) {
        if self.shared.failed.load(Ordering::Relaxed) {
            self.shared
                .frames_lost_to_error
                .fetch_add(1, Ordering::Relaxed);
            self.shared.recycle(batch);
            return;
        }
        let index = batch.frame.index;
        self.newest_closed = Some(index);
        let mut batch = batch;
        let deliveries = std::mem::take(&mut batch.deliveries);
        let passes = std::mem::take(&mut batch.delivered_passes);
        self.held.push_back(batch);
        for delivery in &deliveries {
            let timings = passes
                .get(delivery.first_pass..delivery.first_pass + delivery.pass_count)
                .unwrap_or(&[]);
            self.deliver(delivery, timings);
        }
        // Give the vectors back to the batch they came from, to keep their capacity.
        if let Some(batch) = self.held.back_mut() {
            let mut deliveries = deliveries;
            let mut passes = passes;
            deliveries.clear();
            passes.clear();
            batch.deliveries = deliveries;
            batch.delivered_passes = passes;
        }
        self.release(false);
    }

    fn deliver(&mut self, delivery: &Delivery, timings: &[GpuPassTiming]) {
        let Some(batch) = self
            .held
            .iter_mut()
            .find(|b| b.frame.index == delivery.frame_index)
        else {
            self.shared
                .gpu_deliveries_late
                .fetch_add(1, Ordering::Relaxed);
            return;
        };
        if batch.gpu_outstanding == 0 {
            self.shared
                .gpu_deliveries_late
                .fetch_add(1, Ordering::Relaxed);
            return;
        }
        batch.gpu_outstanding -= 1;
        let gpu = &mut batch.frame.gpu;
        let queue_index = match gpu.queues.iter().position(|q| q.queue == delivery.queue) {
            Some(i) => i,
            None => {
                gpu.queues.push(GpuQueueFrame {
                    queue: delivery.queue,
                    anchor: Default::default(),
                });
                gpu.queues.len() - 1
            }
        };
        if let Some(queue) = gpu.queues.get_mut(queue_index) {
            queue.anchor.cpu_readback_ns = Some(delivery.readback_ns);
        }
        let queue_index = u32::try_from(queue_index).unwrap_or(u32::MAX);
        for timing in timings {
            gpu.passes.push(GpuPass {
                pass: timing.pass.symbol,
                queue_index,
                depth: timing.depth,
                timing: match (timing.begin_ticks, timing.end_ticks) {
                    (Some(begin_ticks), Some(end_ticks)) => Some(GpuTiming {
                        begin_ticks,
                        end_ticks,
                    }),
                    _ => None,
                },
            });
        }
    }

    /// Writes held frames from the front, in order: each once its GPU results are all in, or
    /// once `gpu_wait_frames` newer frames have closed (or at stop), without them.
    fn release(&mut self, stopping: bool) {
        while let Some(front) = self.held.front() {
            let waited_out = self
                .newest_closed
                .is_some_and(|newest| newest >= front.frame.index + self.config.gpu_wait_frames);
            if front.gpu_outstanding > 0 && !waited_out && !stopping {
                return;
            }
            let Some(mut batch) = self.held.pop_front() else {
                return;
            };
            if batch.gpu_outstanding > 0 {
                batch.frame.gpu.results_missing = true;
                self.shared
                    .gpu_results_missing
                    .fetch_add(1, Ordering::Relaxed);
            }
            self.write_frame(&mut batch);
            self.shared.recycle(batch);
        }
    }

    fn write_frame(&mut self, batch: &mut FrameBatch) {
        if self.shared.failed.load(Ordering::Relaxed) {
            self.shared
                .frames_lost_to_error
                .fetch_add(1, Ordering::Relaxed);
            return;
        }
        let used = batch.lanes_used.min(batch.frame.lanes.len());
        let spare = batch.frame.lanes.split_off(used);
        let dropped_spans: u64 = batch.frame.lanes.iter().map(|l| l.dropped_spans).sum();
        let frame = &batch.frame;
        let written = self.with_writer(|writer, symbols| writer.write_frame(frame, symbols));
        batch.frame.lanes.extend(spare);
        if !written {
            self.shared
                .frames_lost_to_error
                .fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.shared
            .spans_dropped
            .fetch_add(dropped_spans, Ordering::Relaxed);
        let frames_written = self.shared.frames_written.fetch_add(1, Ordering::Relaxed) + 1;
        let bytes_written = self.shared.bytes_written.load(Ordering::Relaxed);
        if let Some(hook) = &self.config.on_frame_written {
            hook(&FrameWritten {
                index: batch.frame.index,
                bytes_written,
                frames_written,
            });
        }
        if !self.warned && bytes_written > self.config.byte_budget {
            self.warned = true;
            let elapsed_s = self.config.started.elapsed().as_secs_f64().max(1e-9);
            let warning = Warning::ByteBudgetExceeded {
                budget_bytes: self.config.byte_budget,
                bytes_written,
                level: self.config.level,
                frames_written,
                bytes_per_second: bytes_written as f64 / elapsed_s,
                bytes_per_frame: bytes_written as f64 / frames_written as f64,
            };
            match &self.config.on_warning {
                Some(hook) => hook(&warning),
                None => eprintln!("framewise: warning: {warning}"),
            }
            lock(&self.shared.warnings).push(warning);
        }
    }

    fn finish(mut self) -> WriterOutcome {
        self.release(true);
        let Some(writer) = self.writer.take() else {
            return WriterOutcome { closed: false };
        };
        if self.shared.failed.load(Ordering::Relaxed) {
            return WriterOutcome { closed: false };
        }
        let can_seek = writer.get_ref().is_some_and(OpenSink::can_seek);
        // The directory's hitch flags come from the one hitch rule (framewise-detect), the
        // same code `framewise hitches` runs, so the strip and the verdicts agree.
        let hitches = directory_hitches(&writer, self.config.frame_budget_ns);
        let result = if can_seek {
            writer.finish_and_close(&hitches)
        } else {
            writer.finish(&hitches)
        };
        match result {
            Ok(mut sink) => {
                self.shared
                    .bytes_written
                    .store(sink.final_length(), Ordering::Relaxed);
                WriterOutcome { closed: can_seek }
            }
            Err(error) => {
                let bytes = self.shared.bytes_written.load(Ordering::Relaxed);
                self.shared.fail(session_error(error, bytes));
                WriterOutcome { closed: false }
            }
        }
    }
}

/// Frames the hitch rule flags, judged over the directory's periods in frame order.
fn directory_hitches<W: std::io::Write>(writer: &Writer<W>, budget_ns: Option<u64>) -> Vec<u64> {
    let mut rule = HitchRule::new(budget_ns.unwrap_or(DEFAULT_BUDGET_NS));
    writer
        .directory_frames()
        .filter_map(|f| {
            let judgement = rule.observe(f.period_ns?, f.paused)?;
            judgement.hitch.then_some(f.index)
        })
        .collect()
}
