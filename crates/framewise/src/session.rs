//! The session: built and started by the game, closed frame by frame, stopped explicitly,
//! by `frame_limit`, or by being dropped.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use framewise_format::model::{
    AdapterInfo, CounterTrack, GpuQueueClock, GpuQueueFrame, Mark, MarkKind, Meta, PassWorkload,
    RenderSettings, Sample, SymId, SymbolTable, TopoEdge, TopoPass, TopoResource, Topology,
    Workload,
};
use framewise_format::Writer;

use crate::clock::{now_ticks, ClockChoice, SessionClock};
use crate::counters;
use crate::error::{SessionError, StartError, StopError};
use crate::gpu::{GpuPassTiming, GpuQueue, GpuTicket, Label, PassLabel};
use crate::intern::{self, NamedKind};
use crate::report::{Report, UsermarkRecord, Warning};
use crate::thread;
use crate::topology::{TopologyDesc, TopologyId};
use crate::writer::{
    Delivery, Exchange, FrameBatch, FrameHook, FrameWritten, Message, OpenSink, Shared, Sink,
    WarningHook, WriterConfig, WriterMode, WriterThread,
};
use crate::{CaptureLevel, Gauge, ACTIVE, ENABLED};

/// Default `byte_budget`: 512 MiB.
pub const DEFAULT_BYTE_BUDGET: u64 = 512 * 1024 * 1024;
/// Default `gpu_wait_frames`.
pub const DEFAULT_GPU_WAIT_FRAMES: u32 = 3;
/// Default usermark window: the trailing 5 s.
pub const DEFAULT_USERMARK_WINDOW: Duration = Duration::from_secs(5);
/// Default bound of the writer queue in bytes.
pub const DEFAULT_QUEUE_BYTES: usize = 64 * 1024 * 1024;
/// Default number of frames that may be in flight to the writer (queued or held for GPU
/// results).
pub const DEFAULT_QUEUE_FRAMES: usize = 32;
/// How many recent frames a session remembers to place usermark windows.
const FRAME_HISTORY: usize = 4096;
/// Samples buffered per counter track before a `CNTR` record is written.
const SAMPLES_PER_TRACK: usize = 256;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section in the session leaves its data consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Configures and starts a [`Session`].
#[must_use = "a builder does nothing until `start`"]
pub struct SessionBuilder {
    level: CaptureLevel,
    frame_limit: Option<u64>,
    byte_budget: u64,
    mode: WriterMode,
    queue_bytes: usize,
    queue_frames: usize,
    gpu_wait_frames: u32,
    usermark_window: Duration,
    clock: ClockChoice,
    meta: Meta,
    build_id_set: bool,
    gpu_queues: Vec<(String, f64)>,
    on_warning: Option<WarningHook>,
    on_frame_written: Option<FrameHook>,
    env_fixed_dt: Option<Duration>,
    env_golden_frame: Option<u64>,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("level", &self.level)
            .field("frame_limit", &self.frame_limit)
            .field("byte_budget", &self.byte_budget)
            .field("mode", &self.mode)
            .field("gpu_wait_frames", &self.gpu_wait_frames)
            .finish_non_exhaustive()
    }
}

impl Default for SessionBuilder {
    fn default() -> Self {
        Self {
            level: CaptureLevel::Timing,
            frame_limit: None,
            byte_budget: DEFAULT_BYTE_BUDGET,
            mode: WriterMode::Realtime,
            queue_bytes: DEFAULT_QUEUE_BYTES,
            queue_frames: DEFAULT_QUEUE_FRAMES,
            gpu_wait_frames: DEFAULT_GPU_WAIT_FRAMES,
            usermark_window: DEFAULT_USERMARK_WINDOW,
            clock: ClockChoice::Auto,
            meta: Meta::default(),
            build_id_set: false,
            gpu_queues: Vec::new(),
            on_warning: None,
            on_frame_written: None,
            env_fixed_dt: None,
            env_golden_frame: None,
        }
    }
}

impl SessionBuilder {
    /// The capture level (default [`CaptureLevel::Timing`]); each level adds to the one below.
    pub fn level(mut self, level: CaptureLevel) -> Self {
        self.level = level;
        self
    }

    /// Ends the session, as `stop()` would, when this many frames have closed (default:
    /// unlimited).
    pub fn frame_limit(mut self, frames: u64) -> Self {
        self.frame_limit = Some(frames);
        self
    }

    /// Warn once when the capture grows past this many bytes (default 512 MiB). Recording
    /// goes on.
    pub fn byte_budget(mut self, bytes: u64) -> Self {
        self.byte_budget = bytes;
        self
    }

    /// Realtime (drop whole frames when the writer falls behind) or lossless (wait).
    pub fn writer_mode(mut self, mode: WriterMode) -> Self {
        self.mode = mode;
        self
    }

    /// Bound of the writer queue in (estimated encoded) bytes (default 64 MiB).
    pub fn queue_bytes(mut self, bytes: usize) -> Self {
        self.queue_bytes = bytes.max(1);
        self
    }

    /// Frames that may be in flight to the writer at once (default 32; at least
    /// `gpu_wait_frames + 4`). Their buffers are made when the session starts, so frame
    /// close never allocates one.
    pub fn queue_frames(mut self, frames: usize) -> Self {
        self.queue_frames = frames;
        self
    }

    /// Frames to hold a frame whose GPU results are pending before writing it without them
    /// (default 3).
    pub fn gpu_wait_frames(mut self, frames: u32) -> Self {
        self.gpu_wait_frames = frames;
        self
    }

    /// The trailing window a usermark flags when none is given (default 5 s).
    pub fn usermark_window(mut self, window: Duration) -> Self {
        self.usermark_window = window;
        self
    }

    /// The CPU clock (default: the TSC where trustworthy, else the monotonic clock).
    pub fn clock(mut self, clock: ClockChoice) -> Self {
        self.clock = clock;
        self
    }

    /// The build id of the recorded program (default: `FRAMEWISE_BUILD`, else none).
    pub fn build_id(mut self, build_id: impl Into<String>) -> Self {
        self.meta.build_id = build_id.into();
        self.build_id_set = true;
        self
    }

    /// A free-form note stored in META.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.meta.note = note.into();
        self
    }

    /// One facet of the situation (`view=top`): keep them few and low-cardinality.
    pub fn situation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.meta.situation.push((key.into(), value.into()));
        self
    }

    /// A free-form key–value setting stored in META.
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.meta.settings.push((key.into(), value.into()));
        self
    }

    /// The frame budget the host targets (readers default to 16.67 ms).
    pub fn frame_budget(mut self, budget: Duration) -> Self {
        self.meta.frame_budget_ns = u64::try_from(budget.as_nanos()).ok();
        self
    }

    /// The GPU adapter, as the host knows it.
    pub fn adapter(mut self, adapter: AdapterInfo) -> Self {
        self.meta.adapter = Some(adapter);
        self
    }

    /// Render settings the host declares.
    pub fn render_settings(mut self, render: RenderSettings) -> Self {
        self.meta.render = Some(render);
        self
    }

    /// The scene scale the host declares.
    pub fn scene_scale(mut self, scale: impl Into<String>) -> Self {
        self.meta.scene_scale = scale.into();
        self
    }

    /// A feature or limit that matters, stored in META.
    pub fn feature(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.meta.features.push((key.into(), value.into()));
        self
    }

    /// Declares a GPU queue with the graphics API's tick-to-ns factor (its own declaration,
    /// e.g. wgpu's `Queue::get_timestamp_period`). Get its handle with
    /// [`Session::gpu_queue`].
    pub fn gpu_queue(mut self, name: impl Into<String>, timestamp_period_ns: f64) -> Self {
        self.gpu_queues.push((name.into(), timestamp_period_ns));
        self
    }

    /// Called once with each warning (on the writer thread). Without it, warnings go to
    /// standard error.
    pub fn on_warning(mut self, hook: impl Fn(&Warning) + Send + Sync + 'static) -> Self {
        self.on_warning = Some(Arc::new(hook));
        self
    }

    /// Called after every frame written (on the writer thread), e.g. to show
    /// `bytes_written`.
    pub fn on_frame_written(
        mut self,
        hook: impl Fn(&FrameWritten) + Send + Sync + 'static,
    ) -> Self {
        self.on_frame_written = Some(Arc::new(hook));
        self
    }

    /// Applies what the environment harness asked for (see [`crate::env`]).
    pub fn apply_env(mut self, env: &crate::env::EnvConfig) -> Self {
        if let Some(frames) = env.frames {
            self.frame_limit = Some(frames);
        }
        if let Some(level) = env.level {
            self.level = level;
        }
        if let Some(note) = &env.note {
            self.meta.note = note.clone();
        }
        if let Some(build) = &env.build {
            self.meta.build_id = build.clone();
            self.build_id_set = true;
        }
        if let Some(mode) = env.writer_mode {
            self.mode = mode;
        }
        if let Some(dt) = env.fixed_dt {
            self.env_fixed_dt = Some(dt);
            self.meta
                .settings
                .push(("FRAMEWISE_FIXED_DT".into(), format!("{}", dt.as_secs_f64())));
        }
        if let Some(frame) = env.golden_frame {
            self.env_golden_frame = Some(frame);
            self.meta
                .settings
                .push(("FRAMEWISE_GOLDEN_FRAME".into(), frame.to_string()));
        }
        self
    }

    /// Starts recording into `sink` (a path, or [`Sink::stream`] / [`Sink::seekable`]).
    ///
    /// Writes the capture header and META before returning, so a sink that cannot be written
    /// is an error here. Fails when another session is recording in this process.
    pub fn start(self, sink: impl Into<Sink>) -> Result<Session, StartError> {
        if ACTIVE
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(StartError::AlreadyRunning);
        }
        let started = self.start_active(sink.into());
        if started.is_err() {
            ACTIVE.store(false, Ordering::Release);
        }
        started
    }

    fn start_active(mut self, sink: Sink) -> Result<Session, StartError> {
        let clock = SessionClock::start(self.clock);
        let (open, path) = match sink {
            Sink::Path(path) => {
                let file = File::create(&path).map_err(|source| StartError::CreateFile {
                    path: path.clone(),
                    source,
                })?;
                (OpenSink::file(file), Some(path))
            }
            Sink::Stream(stream) => (OpenSink::stream(stream), None),
            Sink::Seekable(seekable) => (OpenSink::seekable(seekable), None),
        };

        let started = Instant::now();
        let mut queues = Vec::with_capacity(self.gpu_queues.len());
        for (name, period) in &self.gpu_queues {
            let symbol = intern::intern(NamedKind::Queue, name);
            queues.push((name.clone(), GpuQueue { symbol }));
            self.meta.gpu_clocks.push(GpuQueueClock {
                queue: symbol,
                timestamp_period_ns: *period,
            });
        }
        let meta = self.meta_for(&clock);
        let mut symbols = SymbolTable::new();
        let mut synced = 0;
        intern::sync_into(&mut symbols, &mut synced);
        let writer = Writer::new(open, &meta, &symbols)?;

        let batches = self
            .queue_frames
            .max(self.gpu_wait_frames as usize + 4)
            .saturating_add(1);
        let shared = Arc::new(Shared::new(self.mode, self.queue_bytes, batches));
        let current = shared.take_free();
        let writer_thread = WriterThread::new(
            writer,
            symbols,
            synced,
            WriterConfig {
                gpu_wait_frames: u64::from(self.gpu_wait_frames),
                byte_budget: self.byte_budget,
                level: self.level,
                frame_budget_ns: self.meta.frame_budget_ns,
                started,
                on_warning: self.on_warning.clone(),
                on_frame_written: self.on_frame_written.clone(),
            },
            Arc::clone(&shared),
        );

        // Forget whatever was recorded while no session ran, then open the gate.
        counters::reset_all();
        {
            let mut registry = thread::registry();
            registry.retain(|buffer| {
                buffer.discard();
                !buffer.is_finished()
            });
        }
        let writer_shared = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("framewise-writer".into())
            .spawn(move || {
                // A panic in the writer (a bug, or a host callback that panics) must not leave
                // a lossless game waiting forever for room: fail the session instead.
                let run = std::panic::AssertUnwindSafe(|| writer_thread.run());
                std::panic::catch_unwind(run).unwrap_or_else(|_| {
                    writer_shared.fail(SessionError::WriterPanicked);
                    crate::writer::WriterOutcome { closed: false }
                })
            })
            .map_err(StartError::Spawn)?;
        let begin_ticks = now_ticks();
        ENABLED.store(true, Ordering::Release);

        Ok(Session {
            inner: Arc::new(Inner {
                shared,
                clock,
                level: self.level,
                frame_limit: self.frame_limit,
                usermark_window: self.usermark_window,
                path,
                queues,
                fixed_dt: self.env_fixed_dt,
                golden_frame: self.env_golden_frame,
                finished: AtomicBool::new(false),
                closer: Mutex::new(Closer {
                    current: Some(current),
                    begin_ticks,
                    frames_closed: 0,
                    dropped_pending: 0,
                }),
                staging: Mutex::new(Staging {
                    index: 0,
                    begin_ns: clock.ns(begin_ticks),
                    history_begin_ns: vec![0; FRAME_HISTORY],
                    ..Staging::default()
                }),
                topologies: Mutex::new(HashSet::new()),
                writer: Mutex::new(Some(handle)),
                outcome: Mutex::new(None),
            }),
        })
    }

    fn meta_for(&mut self, clock: &SessionClock) -> Meta {
        let mut meta = std::mem::take(&mut self.meta);
        meta.session_id = session_id();
        meta.wall_clock_start_unix_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|d| u64::try_from(d.as_nanos()).ok())
            .unwrap_or(0);
        meta.capture_level = self.level as u8;
        if !self.build_id_set {
            if let Ok(build) = std::env::var(crate::env::BUILD) {
                meta.build_id = build;
            }
        }
        meta.cpu_clock.source = clock.source();
        meta.cpu_clock.resolution_ns = clock.resolution_ns();
        meta.host = host_description();
        meta.recorder_overhead_ns_per_scope = Some(crate::thread::measure_ns_per_scope());
        meta.writer = concat!("framewise ", env!("CARGO_PKG_VERSION")).to_owned();
        meta.settings.push((
            "writer_mode".into(),
            match self.mode {
                WriterMode::Lossless => "lossless".into(),
                _ => "realtime".into(),
            },
        ));
        meta.settings
            .push(("gpu_wait_frames".into(), self.gpu_wait_frames.to_string()));
        meta
    }
}

/// A 128-bit id that differs between sessions: time, process, and the standard library's
/// per-process random hash keys.
fn session_id() -> [u8; 16] {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut id = [0u8; 16];
    for (half, chunk) in id.chunks_mut(8).enumerate() {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(now);
        hasher.write_u32(std::process::id());
        hasher.write_usize(half);
        chunk.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    id
}

fn host_description() -> Vec<(String, String)> {
    let mut host = vec![
        ("os".to_owned(), std::env::consts::OS.to_owned()),
        ("arch".to_owned(), std::env::consts::ARCH.to_owned()),
    ];
    if let Ok(cpus) = std::thread::available_parallelism() {
        host.push(("logical_cpus".to_owned(), cpus.to_string()));
    }
    if let Ok(cpuinfo) = std::fs::read_to_string("/proc/cpuinfo") {
        if let Some(model) = cpuinfo
            .lines()
            .find(|line| line.starts_with("model name"))
            .and_then(|line| line.split_once(':'))
        {
            host.push(("cpu".to_owned(), model.1.trim().to_owned()));
        }
    }
    host
}

/// Frame-close state: owned by whoever closes a frame (one at a time).
struct Closer {
    /// The batch the next frame closes into (always `Some` between closes).
    current: Option<Box<FrameBatch>>,
    begin_ticks: u64,
    frames_closed: u64,
    /// Frames dropped since the last one sent (written into the next one sent).
    dropped_pending: u64,
}

/// What the host set for the open frame, from any thread.
#[derive(Default)]
struct Staging {
    /// The open frame's index.
    index: u64,
    /// The open frame's begin, ns.
    begin_ns: u64,
    phase: Option<SymId>,
    paused: bool,
    topology: Option<u64>,
    workloads: Vec<PassWorkload>,
    marks: Vec<Mark>,
    gpu_queues: Vec<GpuQueueFrame>,
    gpu_outstanding: u32,
    deliveries: Vec<Delivery>,
    delivered_passes: Vec<GpuPassTiming>,
    /// Begin ns of recent frames, by `index % FRAME_HISTORY`.
    history_begin_ns: Vec<u64>,
    usermarks: Vec<UsermarkRecord>,
    samples: HashMap<SymId, Vec<Sample>>,
}

struct Inner {
    shared: Arc<Shared>,
    clock: SessionClock,
    level: CaptureLevel,
    frame_limit: Option<u64>,
    usermark_window: Duration,
    path: Option<PathBuf>,
    queues: Vec<(String, GpuQueue)>,
    fixed_dt: Option<Duration>,
    golden_frame: Option<u64>,
    finished: AtomicBool,
    closer: Mutex<Closer>,
    staging: Mutex<Staging>,
    topologies: Mutex<HashSet<u64>>,
    writer: Mutex<Option<JoinHandle<crate::writer::WriterOutcome>>>,
    outcome: Mutex<Option<Result<Report, StopError>>>,
}

/// Whether the session goes on after a frame closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameOutcome {
    /// Recording goes on.
    Recording,
    /// The session has ended (`frame_limit` reached, or stopped): `stop()` returns its report.
    Finished,
}

/// A recording session. Built with [`Session::builder`] (or [`Session::from_env`]); the game
/// owns it. Stopping it, reaching `frame_limit`, or dropping it ends the recording.
///
/// Every method takes `&self`, and the session is `Send + Sync`: share it by reference
/// (or in an `Arc`) with the threads that report GPU results or set context.
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("level", &self.inner.level)
            .field("path", &self.inner.path)
            .field("finished", &self.is_finished())
            .finish_non_exhaustive()
    }
}

/// Closes its frame when dropped; made by [`Session::frame`].
#[must_use = "the frame closes when the guard is dropped"]
#[derive(Debug)]
pub struct FrameGuard<'a> {
    session: &'a Session,
}

impl Drop for FrameGuard<'_> {
    fn drop(&mut self) {
        // The outcome stays readable through `Session::is_finished`.
        let _ = self.session.end_frame();
    }
}

impl Session {
    /// A builder with the defaults.
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }

    /// Starts a session as the environment harness asks (`FRAMEWISE_CAPTURE` and friends, see
    /// [`crate::env`]), in lossless mode unless `FRAMEWISE_WRITER=realtime`. `Ok(None)` when
    /// `FRAMEWISE_CAPTURE` is not set.
    pub fn from_env() -> Result<Option<Session>, StartError> {
        let env = crate::env::EnvConfig::from_env()?;
        let Some(path) = env.capture.clone() else {
            return Ok(None);
        };
        Session::builder()
            .writer_mode(WriterMode::Lossless)
            .apply_env(&env)
            .start(path)
            .map(Some)
    }

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

    /// The index the next closed frame will have (frames count from 0).
    pub fn frame_index(&self) -> u64 {
        lock(&self.inner.staging).index
    }

    /// Whether the session has ended (stopped, or `frame_limit` reached).
    pub fn is_finished(&self) -> bool {
        self.inner.finished.load(Ordering::Acquire)
    }

    /// Bytes the capture holds so far (header included). Readable at any time.
    pub fn bytes_written(&self) -> u64 {
        self.inner.shared.bytes_written.load(Ordering::Relaxed)
    }

    /// Frames written to the capture so far.
    pub fn frames_written(&self) -> u64 {
        self.inner.shared.frames_written.load(Ordering::Relaxed)
    }

    /// Frames the realtime writer dropped so far.
    pub fn frames_dropped(&self) -> u64 {
        self.inner.shared.frames_dropped.load(Ordering::Relaxed)
    }

    /// The first error the session met (the capture stopped growing then), if any.
    pub fn error(&self) -> Option<SessionError> {
        self.inner.shared.error()
    }

    /// Warnings given so far.
    pub fn warnings(&self) -> Vec<Warning> {
        self.inner.shared.warnings()
    }

    /// The capture level: skip gathering what the level does not record.
    pub fn level(&self) -> CaptureLevel {
        self.inner.level
    }

    /// The fixed simulation step the harness asked for (`FRAMEWISE_FIXED_DT`), if any: the
    /// host pins its step to it so runs are comparable.
    pub fn fixed_dt(&self) -> Option<Duration> {
        self.inner.fixed_dt
    }

    /// The frame whose image the harness asked the host to write (`FRAMEWISE_GOLDEN_FRAME`).
    pub fn golden_frame(&self) -> Option<u64> {
        self.inner.golden_frame
    }

    /// Session time now, ns (the clock every `*_ns` in the capture uses).
    pub fn now_ns(&self) -> u64 {
        self.inner.clock.now_ns()
    }

    /// Sets the phase (`boot`, `load`, `play`…) carried by every frame from the one open now.
    pub fn set_phase(&self, phase: &str) {
        let symbol = intern::intern(NamedKind::Phase, phase);
        lock(&self.inner.staging).phase = Some(symbol);
    }

    /// Declares frames paused (recorded, but excluded from budgets and hitches) from the one
    /// open now.
    pub fn set_paused(&self, paused: bool) {
        lock(&self.inner.staging).paused = paused;
    }

    /// Flags the trailing default window (5 s unless configured) as "it felt wrong here".
    /// Bind it to a hotkey.
    pub fn usermark(&self, note: &str) -> UsermarkRecord {
        self.usermark_with_window(note, self.inner.usermark_window)
    }

    /// Flags the trailing `window` as "it felt wrong here", with a note.
    pub fn usermark_with_window(&self, note: &str, window: Duration) -> UsermarkRecord {
        let at_ns = self.now_ns();
        let window_ns = u64::try_from(window.as_nanos()).unwrap_or(u64::MAX);
        let window_start_ns = at_ns.saturating_sub(window_ns);
        let thread = thread::current_thread_symbol().unwrap_or(SymId::MAX);
        let name = intern::intern(NamedKind::Mark, "usermark");
        let mut staging = lock(&self.inner.staging);
        let frame = staging.index;
        // Walk back from the open frame to the one containing the window's start, as far as
        // the session remembers.
        let mut first_frame = frame;
        let mut begin_ns = staging.begin_ns;
        while begin_ns > window_start_ns && first_frame > 0 {
            let previous = first_frame - 1;
            if frame - previous >= FRAME_HISTORY as u64 {
                break;
            }
            first_frame = previous;
            begin_ns = staging
                .history_begin_ns
                .get((previous % FRAME_HISTORY as u64) as usize)
                .copied()
                .unwrap_or(0);
        }
        let record = UsermarkRecord {
            note: note.to_owned(),
            at_ns,
            window_ns,
            window_start_ns,
            first_frame,
            frame,
        };
        staging.marks.push(Mark {
            name,
            thread,
            at_ns,
            kind: MarkKind::User {
                window_ns,
                note: note.to_owned(),
            },
        });
        staging.usermarks.push(record.clone());
        record
    }

    /// The handle of a GPU queue declared on the builder.
    pub fn gpu_queue(&self, name: &str) -> Option<GpuQueue> {
        self.inner
            .queues
            .iter()
            .find(|(queue_name, _)| queue_name == name)
            .map(|(_, queue)| *queue)
    }

    /// Interns a pass label (once; reuse the handle every frame).
    pub fn pass_label(&self, label: &str) -> PassLabel {
        PassLabel {
            symbol: intern::intern(NamedKind::Pass, label),
        }
    }

    /// Interns a pipeline label.
    pub fn pipeline_label(&self, label: &str) -> Label {
        Label {
            symbol: intern::intern(NamedKind::Pipeline, label),
        }
    }

    /// Interns any other label (shader entry points, extra workload names).
    pub fn label(&self, label: &str) -> Label {
        Label {
            symbol: intern::intern(NamedKind::Label, label),
        }
    }

    /// Records that the open frame submitted GPU work on `queue` now. The frame is held
    /// until the ticket is delivered or `gpu_wait_frames` more frames close.
    pub fn gpu_submit(&self, queue: GpuQueue) -> GpuTicket {
        let submit_ns = self.now_ns();
        let mut staging = lock(&self.inner.staging);
        if !staging.gpu_queues.iter().any(|q| q.queue == queue.symbol) {
            staging.gpu_queues.push(GpuQueueFrame {
                queue: queue.symbol,
                anchor: framewise_format::model::GpuAnchor {
                    cpu_submit_ns: Some(submit_ns),
                    cpu_readback_ns: None,
                },
            });
        }
        staging.gpu_outstanding += 1;
        GpuTicket {
            frame_index: staging.index,
            queue: queue.symbol,
        }
    }

    /// Hands over a submission's pass timestamps, read back now (any number of frames
    /// later). Results for a frame already written (or dropped) are counted late and ignored.
    pub fn gpu_deliver(&self, ticket: GpuTicket, passes: &[GpuPassTiming]) {
        let readback_ns = self.now_ns();
        let mut staging = lock(&self.inner.staging);
        let first_pass = staging.delivered_passes.len();
        staging.delivered_passes.extend_from_slice(passes);
        staging.deliveries.push(Delivery {
            frame_index: ticket.frame_index,
            queue: ticket.queue,
            readback_ns,
            first_pass,
            pass_count: passes.len(),
        });
    }

    /// Registers a frame graph (interning its names and hashing it by content) and, at
    /// level 1 and up, writes it once. Register once per distinct graph; then
    /// [`set_topology`](Self::set_topology) each frame.
    pub fn register_topology(&self, desc: &TopologyDesc) -> TopologyId {
        let mut topology = Topology {
            id: 0,
            passes: desc
                .passes
                .iter()
                .map(|pass| TopoPass {
                    label: intern::intern(NamedKind::Pass, &pass.label),
                    kind: pass.kind,
                    culled: pass.culled,
                    scope: pass
                        .scope
                        .as_deref()
                        .map(|scope| intern::intern_scope(scope, "", 0)),
                })
                .collect(),
            resources: desc
                .resources
                .iter()
                .map(|resource| TopoResource {
                    label: intern::intern(NamedKind::Resource, &resource.label),
                    kind: resource.kind,
                    format: resource
                        .format
                        .as_deref()
                        .map(|format| intern::intern(NamedKind::Label, format)),
                    usage: resource
                        .usage
                        .as_deref()
                        .map(|usage| intern::intern(NamedKind::Label, usage)),
                    declared_bytes: resource.declared_bytes,
                    transient: resource.transient,
                    imported: resource.imported,
                    first_use: resource.first_use,
                    last_use: resource.last_use,
                })
                .collect(),
            edges: desc
                .edges
                .iter()
                .map(|edge| TopoEdge {
                    pass: edge.pass,
                    resource: edge.resource,
                    access: edge.access,
                    version: edge.version,
                })
                .collect(),
        };
        let mut referenced = Vec::new();
        topology.referenced_symbols(&mut referenced);
        let mut table = SymbolTable::new();
        intern::copy_into(&mut table, &referenced);
        topology.id = framewise_format::topology_id(&topology, &table);
        let id = TopologyId(topology.id);
        let first_time = lock(&self.inner.topologies).insert(id.0);
        if first_time && self.inner.level >= CaptureLevel::Structure && !self.is_finished() {
            self.inner
                .shared
                .send(Message::Topology(Box::new(topology)));
        }
        id
    }

    /// Declares the frame graph the open frame runs (level 1 and up; ignored below).
    pub fn set_topology(&self, topology: TopologyId) {
        if self.inner.level >= CaptureLevel::Structure {
            lock(&self.inner.staging).topology = Some(topology.0);
        }
    }

    /// Records one pass's workload in the open frame (level 2 and up; ignored below).
    /// `Workload`'s `None` fields mean unknown, which is not zero.
    pub fn record_workload(&self, pass: PassLabel, workload: Workload) {
        if self.inner.level >= CaptureLevel::Workload {
            lock(&self.inner.staging).workloads.push(PassWorkload {
                pass: pass.symbol,
                workload,
            });
        }
    }

    /// Samples a gauge's value now into its sampled track (`CNTR` records: value over time,
    /// not per frame), for levels sampled off the frame clock such as memory in use.
    pub fn sample(&self, gauge: &Gauge, value: i64) {
        let at_ns = self.now_ns();
        let counter = gauge.symbol();
        let full = {
            let mut staging = lock(&self.inner.staging);
            let samples = staging.samples.entry(counter).or_default();
            samples.push(Sample { at_ns, value });
            (samples.len() >= SAMPLES_PER_TRACK).then(|| std::mem::take(samples))
        };
        if let Some(samples) = full {
            self.inner
                .shared
                .send(Message::CounterTrack(CounterTrack { counter, samples }));
        }
    }

    /// Stops the session: the open frame is discarded, frames waiting for GPU results are
    /// written without them, the directory is written and (for a file or seekable sink) the
    /// header patched CLOSED. Returns the report, or the first error with the report.
    /// After `frame_limit` ended the session, returns the same result.
    pub fn stop(self) -> Result<Report, StopError> {
        self.finish()
    }

    fn finish(&self) -> Result<Report, StopError> {
        let inner = &*self.inner;
        let mut outcome = lock(&inner.outcome);
        if let Some(done) = &*outcome {
            return done.clone();
        }
        let closer = lock(&inner.closer);
        inner.finished.store(true, Ordering::Release);
        ENABLED.store(false, Ordering::Release);
        let tracks: Vec<(SymId, Vec<Sample>)> = lock(&inner.staging).samples.drain().collect();
        for (counter, samples) in tracks {
            if !samples.is_empty() {
                inner
                    .shared
                    .send(Message::CounterTrack(CounterTrack { counter, samples }));
            }
        }
        inner.shared.send(Message::Stop);
        let frames_closed = closer.frames_closed;
        drop(closer);
        let handle = lock(&inner.writer).take();
        let closed = match handle.map(JoinHandle::join) {
            Some(Ok(writer)) => writer.closed,
            Some(Err(_)) => {
                inner.shared.fail(SessionError::WriterPanicked);
                false
            }
            None => false,
        };
        let shared = &inner.shared;
        let frames_written = shared.frames_written.load(Ordering::Relaxed);
        let frames_dropped = shared.frames_dropped.load(Ordering::Relaxed);
        let error = shared.error();
        // After an error every closed frame that was neither written nor dropped was lost to
        // it, wherever it was (queued, held for GPU results, or refused at close).
        let frames_lost_to_error = if error.is_some() {
            frames_closed.saturating_sub(frames_written + frames_dropped)
        } else {
            shared.frames_lost_to_error.load(Ordering::Relaxed)
        };
        let report = Report {
            path: inner.path.clone(),
            frames_closed,
            frames_written,
            frames_dropped,
            frames_lost_to_error,
            spans_dropped: shared.spans_dropped.load(Ordering::Relaxed),
            gpu_results_missing: shared.gpu_results_missing.load(Ordering::Relaxed),
            gpu_deliveries_late: shared.gpu_deliveries_late.load(Ordering::Relaxed),
            bytes_written: shared.bytes_written.load(Ordering::Relaxed),
            closed,
            warnings: shared.warnings(),
            usermarks: lock(&inner.staging).usermarks.clone(),
            error,
        };
        let result = match report.error.clone() {
            Some(error) => Err(StopError {
                error,
                report: Box::new(report),
            }),
            None => Ok(report),
        };
        *outcome = Some(result.clone());
        ACTIVE.store(false, Ordering::Release);
        result
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // Dropping stops cleanly; the report is lost unless `stop()` was called, but the
        // capture is complete and closed all the same.
        let _ = self.finish();
    }
}
