//! The session: built and started by the game, closed frame by frame, stopped explicitly,
//! by `frame_limit`, or by being dropped.
//!
//! Split along its seams: `builder` configures and starts a session, `close` is frame
//! close (what the game thread pays every frame), `context` is what the host declares about
//! the open frame from any thread (phase, marks, GPU work, frame graph, workload, samples),
//! and this module holds the shared state, the accessors and stop.

mod builder;
mod close;
mod context;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use framewise_format::model::{CounterTrack, GpuQueueFrame, Mark, PassWorkload, Sample, SymId};
use parking_lot::Mutex;

use crate::clock::SessionClock;
use crate::error::{SessionError, StartError, StopError};
use crate::gpu::{GpuPassTiming, GpuQueue};
use crate::handoff::{Delivery, Message, Shared};
use crate::report::{Report, UsermarkRecord, Warning};
use crate::thread::Padded;
use crate::writer::WriterMode;
use crate::{CaptureLevel, ACTIVE, ENABLED};

pub use builder::SessionBuilder;
use close::{Closer, Entry};

/// Default `byte_budget`: 512 MiB.
pub const DEFAULT_BYTE_BUDGET: u64 = 512 * 1024 * 1024;
/// Default `gpu_wait_frames`.
pub const DEFAULT_GPU_WAIT_FRAMES: u32 = 3;
/// Default usermark window: the trailing 5 s.
pub const DEFAULT_USERMARK_WINDOW: Duration = Duration::from_secs(5);
/// Default bound of the writer queue in bytes.
pub const DEFAULT_QUEUE_BYTES: usize = 64 * 1024 * 1024;
/// Default number of frames that may be in flight to the writer (queued or held for GPU
/// results) in lossless mode, where a game thread whose writer is that far behind waits for
/// it. A queued frame holds no spans (they stay in the threads' rings until the writer
/// gathers them); each frame of the queue keeps the buffers made for it at start (the
/// writer fills one set of lanes of its own, not the batch's): about 12 KiB a frame for
/// frames of 200 spans on 4 threads.
pub const DEFAULT_QUEUE_FRAMES: usize = 128;
/// Default number of frames that may be in flight to the writer in realtime mode, where a
/// frame that finds the queue full is dropped: 512 frames ride out a writer starved of CPU
/// for half a second of a 1,000 frames/s game (8.5 s at 60 Hz) without a drop, about as long
/// as a thread's ring holds the events of 50 scopes a frame (a thread recording more loses
/// spans, counted, before the queue fills). About 4.6 MiB more than 128 frames would hold.
pub const DEFAULT_REALTIME_QUEUE_FRAMES: usize = 512;
/// How many recent frames a session remembers to place usermark windows.
const FRAME_HISTORY: usize = 4096;
/// Samples buffered per counter track before a `CNTR` record is written.
const SAMPLES_PER_TRACK: usize = 256;

/// What the host set for the open frame, from any thread.
///
/// What frame close reads and writes every frame comes first, and with the mutex's own word
/// (the `Mutex` is in a line of its own, `Inner::staging`) fits in one cache line; the rest
/// is read only when `set` says a setter put something there since the last close.
#[derive(Default)]
#[repr(C)]
struct Staging {
    /// The open frame's index.
    index: u64,
    /// The open frame's begin, clock ticks.
    begin_ticks: u64,
    /// Begin ticks of recent frames, by `index % FRAME_HISTORY`.
    history_begin_ticks: History,
    phase: Option<SymId>,
    gpu_outstanding: u32,
    paused: bool,
    /// A setter put something below since the last close (a topology, workloads, marks,
    /// GPU queues or results): close takes them only then.
    set: bool,
    topology: Option<u64>,
    workloads: Vec<PassWorkload>,
    /// Usermarks for the next frame sent: those made in frames the realtime writer dropped
    /// since the last frame sent (carried, not lost), then those made since the last close.
    marks: Vec<Mark>,
    gpu_queues: Vec<GpuQueueFrame>,
    deliveries: Vec<Delivery>,
    delivered_passes: Vec<GpuPassTiming>,
    usermarks: Vec<UsermarkRecord>,
    samples: HashMap<SymId, Vec<Sample>>,
}

/// Begin ticks of the last [`FRAME_HISTORY`] frames, by `index % FRAME_HISTORY`: an array of
/// that length, so that reading or writing a frame's entry needs no bounds check.
struct History(Box<[u64; FRAME_HISTORY]>);

impl History {
    /// The entry of frame `index`.
    #[inline(always)]
    fn slot(&mut self, index: u64) -> &mut u64 {
        &mut self.0[(index % FRAME_HISTORY as u64) as usize]
    }

    /// The begin ticks of frame `index` (0 until that entry is first written).
    fn get(&self, index: u64) -> u64 {
        self.0[(index % FRAME_HISTORY as u64) as usize]
    }
}

impl Default for History {
    fn default() -> Self {
        Self(Box::new([0; FRAME_HISTORY]))
    }
}

/// The session's state, behind the handle.
///
/// Laid out in order (`repr(C)`), from a cache line's start (`staging` aligns it to one):
/// what a close reads and writes of it every frame, the closer's lock and state, the pointer
/// to `Shared` and the frame limit, lies in its first two lines, and what it reads of
/// `Staging` in the line after; the rest is read by setters and at stop.
#[repr(C)]
struct Inner {
    closer: Mutex<Closer>,
    shared: Arc<Shared>,
    /// The frame count at which the session finishes (`u64::MAX` when no `frame_limit` was
    /// set: a count a session never reaches).
    frame_limit: u64,
    staging: Padded<Mutex<Staging>>,
    clock: SessionClock,
    level: CaptureLevel,
    gpu_wait_frames: u32,
    usermark_window: Duration,
    path: Option<PathBuf>,
    queues: Vec<(String, GpuQueue)>,
    fixed_dt: Option<Duration>,
    golden_frame: Option<u64>,
    seed: Option<u64>,
    resolution: Option<(u32, u32)>,
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
///
/// The handle also holds what a frame close reads first (whether the session finished, and
/// where the lines of the next close lie), in the two cache lines it is aligned to: found
/// with the pointer to the session's state, not behind it.
#[repr(C, align(64))]
pub struct Session {
    inner: Arc<Inner>,
    entry: Entry,
}

// The handle and its entry fill the two lines it is aligned to, no more.
const _: () = assert!(size_of::<Session>() == 2 * crate::thread::LINE);

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

    /// The index the next closed frame will have (frames count from 0).
    pub fn frame_index(&self) -> u64 {
        self.inner.staging.lock().index
    }

    /// Whether the session has ended (stopped, or `frame_limit` reached).
    pub fn is_finished(&self) -> bool {
        self.entry.finished.load(Ordering::Acquire)
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

    /// Time the writer thread has spent working so far, ns: pairing the threads' events into
    /// spans, building, encoding and writing frames (and the session's other records), and
    /// handing them to the OS; waiting for work excluded. Frames written ÷ this is the
    /// writer's throughput; this ÷ the session's length, the share of a core the recording
    /// costs off the game thread.
    pub fn writer_busy_ns(&self) -> u64 {
        self.inner.shared.writer_busy_ns.load(Ordering::Relaxed)
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

    /// How many frames a frame whose GPU results are pending is held before it is written
    /// without them (the builder's [`gpu_wait_frames`](SessionBuilder::gpu_wait_frames)):
    /// results that arrive later are counted late and ignored, so a GPU profiler need not keep
    /// more frames than this waiting.
    pub fn gpu_wait_frames(&self) -> u32 {
        self.inner.gpu_wait_frames
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

    /// The seed the harness asked the host to start its world from (`FRAMEWISE_SEED`), if
    /// any: the recorder does not use it, the host does.
    pub fn seed(&self) -> Option<u64> {
        self.inner.seed
    }

    /// The resolution the harness asked the host to render at (`FRAMEWISE_RESOLUTION`),
    /// (width, height) in pixels, if any: the recorder does not use it, the host does.
    pub fn resolution(&self) -> Option<(u32, u32)> {
        self.inner.resolution
    }

    /// Session time now, ns (the clock every `*_ns` in the capture uses).
    pub fn now_ns(&self) -> u64 {
        self.inner.clock.now_ns()
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
        let mut outcome = inner.outcome.lock();
        if let Some(done) = &*outcome {
            return done.clone();
        }
        let closer = inner.closer.lock();
        self.entry.finished.store(true, Ordering::Release);
        ENABLED.store(false, Ordering::Release);
        let tracks: Vec<(SymId, Vec<Sample>)> = inner.staging.lock().samples.drain().collect();
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
        let handle = inner.writer.lock().take();
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
            usermarks: inner.staging.lock().usermarks.clone(),
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
