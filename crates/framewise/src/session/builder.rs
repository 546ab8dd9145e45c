//! Configuring and starting a session.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use framewise_format::model::{AdapterInfo, GpuQueueClock, Meta, RenderSettings, SymbolTable};
use framewise_format::Writer;
use parking_lot::Mutex;

use crate::clock::{now_ticks, ClockChoice, SessionClock};
use crate::counters;
use crate::error::{SessionError, StartError};
use crate::gpu::GpuQueue;
use crate::handoff::Shared;
use crate::intern::{self, NamedKind};
use crate::report::Warning;
use crate::sink::{OpenSink, Sink};
use crate::thread;
use crate::writer::{FrameHook, FrameWritten, WarningHook, WriterConfig, WriterMode, WriterThread};
use crate::{CaptureLevel, ACTIVE, ENABLED};

use super::{
    Closer, Entry, Inner, Session, Staging, DEFAULT_BYTE_BUDGET, DEFAULT_GPU_WAIT_FRAMES,
    DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_FRAMES, DEFAULT_REALTIME_QUEUE_FRAMES,
    DEFAULT_USERMARK_WINDOW,
};

/// Set once a session looked for `FRAMEWISE_*` variables framewise does not read: each is
/// warned about once per process.
static UNKNOWN_VARIABLES_CHECKED: AtomicBool = AtomicBool::new(false);

/// Configures and starts a [`Session`].
#[must_use = "a builder does nothing until `start`"]
pub struct SessionBuilder {
    level: CaptureLevel,
    frame_limit: Option<u64>,
    byte_budget: u64,
    mode: WriterMode,
    queue_bytes: usize,
    queue_frames: Option<usize>,
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
    env_seed: Option<u64>,
    env_resolution: Option<(u32, u32)>,
    incidents: crate::incidents::IncidentSettings,
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
            queue_frames: None,
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
            env_seed: None,
            env_resolution: None,
            incidents: crate::incidents::IncidentSettings::default(),
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

    /// Frames that may be in flight to the writer at once (default 512 in realtime mode,
    /// where a frame that finds them all in flight is dropped, and 128 in lossless mode,
    /// where frame close then waits; at least `gpu_wait_frames + 4`). Their buffers are
    /// made when the session starts, so frame close never allocates one. The writer wakes by
    /// itself between two frame closes (at least every millisecond); frame close wakes it,
    /// a system call, only once a quarter of these frames (at least 8, at most 32) wait.
    pub fn queue_frames(mut self, frames: usize) -> Self {
        self.queue_frames = Some(frames);
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

    /// Writes the live incident log (`perf.jsonl`, `profile.json`) into `dir`, created when
    /// missing. Without it the log goes to `FRAMEWISE_DIR` when set, else to `.framewise/`
    /// in the working directory when that exists, else nowhere. The log is written on the
    /// writer thread, never the game's.
    pub fn incident_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.incidents.dir = Some(dir.into());
        self
    }

    /// Turns the live incident log on or off. Off: no `.framewise/` file is touched, even
    /// when a directory is found. On: a warning when no directory is found.
    pub fn incident_log(mut self, on: bool) -> Self {
        self.incidents.enabled = Some(on);
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
    /// `bytes_written`: once the frame has reached the OS (the writer flushes the sink when no
    /// frame waits for it, and at least every 16 frames while it catches up).
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
        if let Some(seed) = env.seed {
            self.env_seed = Some(seed);
            self.meta
                .settings
                .push((crate::env::SEED.into(), seed.to_string()));
        }
        if let Some((w, h)) = env.resolution {
            self.env_resolution = Some((w, h));
            self.meta
                .settings
                .push((crate::env::RESOLUTION.into(), format!("{w}x{h}")));
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
                // Checked against the directory the incident log goes to (whether or not the
                // log is on: its files are never a capture's).
                let log_dir = framewise_incidents::locate(self.incidents.dir.as_deref());
                let file = crate::sink::open_capture(&path, log_dir.as_deref())?;
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
        let (incidents, incident_warning) =
            match crate::incidents::LiveLog::open(&self.incidents, &meta) {
                Ok(log) => (log, None),
                Err(warning) => (None, Some(warning)),
            };

        let queue_frames = self.queue_frames.unwrap_or(match self.mode {
            WriterMode::Realtime => DEFAULT_REALTIME_QUEUE_FRAMES,
            WriterMode::Lossless => DEFAULT_QUEUE_FRAMES,
        });
        let batches = queue_frames
            .max(self.gpu_wait_frames as usize + 4)
            .saturating_add(1);
        let shared = Arc::new(Shared::new(self.mode, self.queue_bytes, batches));
        let current = shared.take_free();
        let writer_thread = WriterThread::new(
            writer,
            symbols,
            synced,
            WriterConfig {
                clock,
                gpu_wait_frames: u64::from(self.gpu_wait_frames),
                byte_budget: self.byte_budget,
                level: self.level,
                // `meta_for` took the builder's META: read the budget from what is written.
                frame_budget_ns: meta.frame_budget_ns,
                started,
                on_warning: self.on_warning.clone(),
                on_frame_written: self.on_frame_written.clone(),
                incidents,
            },
            Arc::clone(&shared),
        );
        if let Some(warning) = incident_warning {
            crate::writer::emit_warning(&shared, self.on_warning.as_ref(), warning);
        }
        // A misspelt variable (`FRAMEWISE_FRAMS`) would change nothing without a word.
        if !UNKNOWN_VARIABLES_CHECKED.swap(true, Ordering::Relaxed) {
            for variable in crate::env::unknown_variables_in_env() {
                let warning = Warning::UnknownVariable(variable);
                crate::writer::emit_warning(&shared, self.on_warning.as_ref(), warning);
            }
        }

        // Forget whatever was recorded while no session ran, then open the gate.
        counters::reset_all();
        {
            let mut registry = thread::registry();
            registry.retain(|buffer| {
                buffer.discard();
                thread::keep_or_pool(buffer)
            });
            thread::clear_ring_over_half();
        }
        let writer_shared = Arc::clone(&shared);
        let handle = std::thread::Builder::new()
            .name("framewise-writer".into())
            .spawn(move || {
                // A panic in the writer (a bug, or a host callback that panics) must not leave
                // a lossless game waiting forever for room: fail the session instead.
                let run = std::panic::AssertUnwindSafe(|| writer_thread.run());
                let outcome = std::panic::catch_unwind(run).unwrap_or_else(|_| {
                    writer_shared.fail(SessionError::WriterPanicked);
                    crate::writer::WriterOutcome { closed: false }
                });
                writer_shared.writer_ended();
                outcome
            })
            .map_err(StartError::Spawn)?;
        let begin_ticks = now_ticks();
        ENABLED.store(true, Ordering::Release);

        let gate = shared.gate_line();
        Ok(Session {
            inner: Arc::new(Inner {
                closer: Mutex::new(Closer::new(current, begin_ticks)),
                shared,
                frame_limit: self.frame_limit.unwrap_or(u64::MAX),
                staging: thread::Padded(Mutex::new(Staging {
                    index: 0,
                    begin_ticks,
                    ..Staging::default()
                })),
                clock,
                level: self.level,
                gpu_wait_frames: self.gpu_wait_frames,
                usermark_window: self.usermark_window,
                path,
                queues,
                fixed_dt: self.env_fixed_dt,
                golden_frame: self.env_golden_frame,
                seed: self.env_seed,
                resolution: self.env_resolution,
                topologies: Mutex::new(HashSet::new()),
                writer: Mutex::new(Some(handle)),
                outcome: Mutex::new(None),
            }),
            entry: Entry::new(gate),
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
