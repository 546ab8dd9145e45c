//! The profiler: query pools that grow and are reused, asynchronous readback, delivery to the
//! session frames later.
//!
//! Each frame in flight owns its pools (a query set, a resolve buffer and a mappable readback
//! buffer) from its first timed pass until its results are read back; then the pools go back
//! to a free list. A frame that needs more queries than its pool holds chains another pool, and
//! raises the capacity of every pool made afterwards, so after a few frames each frame fits in
//! one pool and no pool is made again: the pool count settles at the number of frames in
//! flight.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use framewise::{CaptureLevel, GpuPassTiming, GpuQueue, GpuTicket, PassLabel, Session, Workload};

use crate::error::{FlushError, ProfilerError};
use crate::pass::{EncoderScope, TimedComputePass, TimedRenderPass};
use crate::setup::GpuSetup;

/// Bytes per timestamp in a resolved query buffer.
const QUERY_BYTES: u64 = wgpu::QUERY_SIZE as u64;

/// How a [`GpuProfiler`] manages its queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProfilerSettings {
    /// Frames whose results may be outstanding at once (default 8), at most the session's
    /// [`gpu_wait_frames`](framewise::Session::gpu_wait_frames) + 1: with that many waiting,
    /// the oldest was recorded more frames ago than the session holds a frame for its results,
    /// so it was written without them and its results will be ignored. A frame recorded while
    /// this many wait is recorded with its passes and workload but without timestamps (and
    /// counted in [`ProfilerStats::frames_untimed`]), so a GPU that falls behind costs no
    /// queries whose results would be ignored, and a stalled one cannot make the pools grow
    /// without bound.
    pub max_pending_frames: usize,
    /// Queries in the first pool (default 64, 32 passes); pools made later are as large as
    /// the largest frame needed, rounded up to a power of two (at most
    /// `wgpu::QUERY_SET_MAX_QUERIES`).
    pub initial_query_capacity: u32,
}

impl Default for ProfilerSettings {
    fn default() -> Self {
        Self {
            max_pending_frames: 8,
            initial_query_capacity: 64,
        }
    }
}

/// What the profiler has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProfilerStats {
    /// Frames that recorded at least one pass.
    pub frames_recorded: u64,
    /// Frames whose passes were handed to the session (timed or not).
    pub frames_delivered: u64,
    /// Frames recorded without timestamps although the device has them: too many frames
    /// were waiting (`max_pending_frames`), or a pass or scope guard was leaked
    /// (`mem::forget`) so its end timestamp was never written.
    pub frames_untimed: u64,
    /// Frames whose readback failed (wgpu reported a failed map: the buffer or its device
    /// was gone); delivered without times.
    pub readback_failures: u64,
    /// Frames whose queries [`GpuProfiler::end_frame`] had to resolve itself (one extra
    /// submission) because [`GpuProfiler::resolve`] was not called after their last pass.
    pub resolve_fallbacks: u64,
    /// Query pools made since the profiler was.
    pub pools_created: u64,
    /// Query pools dropped (outgrown, or after a failed readback).
    pub pools_destroyed: u64,
    /// Query pools alive now.
    pub pools_live: u32,
    /// Queries the live pools hold together.
    pub query_capacity: u32,
    /// Frames whose results are outstanding now.
    pub frames_pending: usize,
    /// The most frames that passed between a frame and the delivery of its results
    /// (0: delivered in the frame that recorded them).
    pub max_latency_frames: u64,
    /// The session frame index of the newest frame delivered.
    pub last_delivered_frame: Option<u64>,
    /// Non-blocking polls wgpu answered with an error (the next poll tries again). wgpu 30's
    /// poll errors are a timeout and a wrong submission index, which a non-blocking poll of
    /// every submission does not meet, so this stays 0 with it; a device lost while polling is
    /// fatal in wgpu itself (it panics in the poll, as on any call that meets a lost device).
    pub poll_errors: u64,
}

/// Which feature a timestamp needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimestampKind {
    /// Written by wgpu at a pass's beginning and end (`TIMESTAMP_QUERY`).
    Pass,
    /// Written on a command encoder (`TIMESTAMP_QUERY_INSIDE_ENCODERS`).
    Encoder,
    /// Written inside a pass (`TIMESTAMP_QUERY_INSIDE_PASSES`).
    InPass,
}

/// A query pair in the open frame: `index` (begin) and `index + 1` (end) of the frame's
/// `slot`-th pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueryRef {
    slot: u32,
    pub(crate) index: u32,
}

struct QueryPool {
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    capacity: u32,
}

impl QueryPool {
    fn new(device: &wgpu::Device, capacity: u32) -> Self {
        let bytes = u64::from(capacity) * QUERY_BYTES;
        Self {
            query_set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("framewise-wgpu timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: capacity,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("framewise-wgpu resolve"),
                size: bytes,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            readback: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("framewise-wgpu readback"),
                size: bytes,
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                mapped_at_creation: false,
            }),
            capacity,
        }
    }
}

/// A pool used by a frame: which one, how many queries it used and resolved.
#[derive(Clone, Copy, Debug)]
struct PoolUse {
    pool: u32,
    used: u32,
    resolved: u32,
}

#[derive(Clone, Copy, Debug)]
struct PassRecord {
    label: PassLabel,
    depth: u32,
    query: Option<QueryRef>,
}

/// Counts a frame's readback mappings as their callbacks fire.
#[derive(Default)]
struct MapState {
    mapped: AtomicU32,
    failed: AtomicU32,
}

/// One frame's passes and queries, from its first pass until its results are delivered.
/// Recycled, with the capacity of its vectors, so steady state allocates nothing here.
struct FrameRecord {
    ticket: Option<GpuTicket>,
    passes: Vec<PassRecord>,
    pools: Vec<PoolUse>,
    workloads: Vec<(PassLabel, Workload)>,
    /// Whether this frame may allocate queries, decided at its first timed pass.
    timing_decided: bool,
    untimed: bool,
    /// A timestamp the frame allocated could not be written: never resolve it.
    broken: bool,
    map: Arc<MapState>,
}

impl FrameRecord {
    fn new() -> Self {
        Self {
            ticket: None,
            passes: Vec::with_capacity(64),
            pools: Vec::with_capacity(4),
            workloads: Vec::with_capacity(64),
            timing_decided: false,
            untimed: false,
            broken: false,
            map: Arc::new(MapState::default()),
        }
    }

    fn clear(&mut self) {
        self.ticket = None;
        self.passes.clear();
        self.pools.clear();
        self.workloads.clear();
        self.timing_decided = false;
        self.untimed = false;
        self.broken = false;
        self.map.mapped.store(0, Ordering::Relaxed);
        self.map.failed.store(0, Ordering::Relaxed);
    }

    fn queries_used(&self) -> u32 {
        self.pools.iter().map(|pool| pool.used).sum()
    }
}

/// Times a wgpu program's passes and records their workload into a framewise session.
///
/// Make it after the session started, from the [`GpuSetup`] declared on the session's builder.
/// Each frame: record passes through it ([`compute_pass`](Self::compute_pass),
/// [`render_pass`](Self::render_pass), [`scope`](Self::scope)), [`resolve`](Self::resolve) into
/// the frame's last encoder, [`submit`](Self::submit), then [`end_frame`](Self::end_frame)
/// before the session's frame closes. Results are delivered to the session frames later,
/// from `end_frame` (or [`collect`](Self::collect)), which never blocks.
///
/// Recording is single-threaded: the pass guards borrow the profiler mutably.
pub struct GpuProfiler {
    device: wgpu::Device,
    queue: wgpu::Queue,
    gpu_queue: GpuQueue,
    pass_timestamps: bool,
    encoder_timestamps: bool,
    in_pass_timestamps: bool,
    record_workload: bool,
    settings: ProfilerSettings,
    pools: Vec<Option<QueryPool>>,
    free_pools: Vec<u32>,
    target_capacity: u32,
    open: FrameRecord,
    pending: VecDeque<FrameRecord>,
    spare: Vec<FrameRecord>,
    timings: Vec<GpuPassTiming>,
    depth: u32,
    open_scopes: u32,
    stats: ProfilerStats,
}

impl std::fmt::Debug for GpuProfiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuProfiler")
            .field("pass_timestamps", &self.pass_timestamps)
            .field("encoder_timestamps", &self.encoder_timestamps)
            .field("in_pass_timestamps", &self.in_pass_timestamps)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl GpuProfiler {
    /// A profiler for the device and queue of `setup`, delivering into `session`, whose
    /// builder `setup` must have been declared on.
    pub fn new(session: &Session, setup: &GpuSetup) -> Result<Self, ProfilerError> {
        Self::with_settings(session, setup, ProfilerSettings::default())
    }

    /// As [`new`](Self::new), with settings.
    pub fn with_settings(
        session: &Session,
        setup: &GpuSetup,
        settings: ProfilerSettings,
    ) -> Result<Self, ProfilerError> {
        let gpu_queue = session.gpu_queue(&setup.queue_name).ok_or_else(|| {
            ProfilerError::QueueNotDeclared {
                name: setup.queue_name.clone(),
            }
        })?;
        // More frames waiting than the session holds a frame for: their results come late.
        let held = usize::try_from(session.gpu_wait_frames())
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        let max_pending_frames = settings.max_pending_frames.clamp(1, held);
        let settings = ProfilerSettings {
            max_pending_frames,
            initial_query_capacity: settings
                .initial_query_capacity
                .clamp(2, wgpu::QUERY_SET_MAX_QUERIES)
                .next_multiple_of(2),
        };
        Ok(Self {
            device: setup.device.clone(),
            queue: setup.queue.clone(),
            gpu_queue,
            pass_timestamps: setup.passes.is_enabled(),
            encoder_timestamps: setup.inside_encoders.is_enabled(),
            in_pass_timestamps: setup.inside_passes.is_enabled(),
            record_workload: session.level() >= CaptureLevel::Workload,
            settings,
            pools: Vec::with_capacity(max_pending_frames + 2),
            free_pools: Vec::with_capacity(max_pending_frames + 2),
            target_capacity: settings.initial_query_capacity,
            open: FrameRecord::new(),
            pending: VecDeque::with_capacity(max_pending_frames + 1),
            spare: (0..=max_pending_frames)
                .map(|_| FrameRecord::new())
                .collect(),
            timings: Vec::with_capacity(64),
            depth: 0,
            open_scopes: 0,
            stats: ProfilerStats::default(),
        })
    }

    /// Opens a scope on a command encoder: timed when the device has
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS`, else recorded untimed. Passes and scopes begun
    /// through it nest inside it. It ends when dropped.
    pub fn scope<'a>(
        &'a mut self,
        encoder: &'a mut wgpu::CommandEncoder,
        label: PassLabel,
    ) -> EncoderScope<'a> {
        EncoderScope::begin(self, encoder, label)
    }

    /// Begins a compute pass timed with pass timestamp writes (`TIMESTAMP_QUERY`), counting
    /// its dispatches. Any `timestamp_writes` in `desc` are replaced by the profiler's.
    pub fn compute_pass<'a>(
        &'a mut self,
        encoder: &'a mut wgpu::CommandEncoder,
        label: PassLabel,
        desc: &wgpu::ComputePassDescriptor<'_>,
    ) -> TimedComputePass<'a> {
        TimedComputePass::begin(self, encoder, label, desc)
    }

    /// Begins a render pass timed with pass timestamp writes (`TIMESTAMP_QUERY`), counting
    /// its draws. Any `timestamp_writes` in `desc` are replaced by the profiler's.
    pub fn render_pass<'a>(
        &'a mut self,
        encoder: &'a mut wgpu::CommandEncoder,
        label: PassLabel,
        desc: wgpu::RenderPassDescriptor<'_>,
    ) -> TimedRenderPass<'a> {
        TimedRenderPass::begin(self, encoder, label, desc)
    }

    /// Records the commands that copy this frame's timestamps to its readback buffers. Call
    /// it on the frame's last encoder, after every timed pass and scope of the frame has been
    /// recorded (submitted encoders run in submission order). Without it,
    /// [`end_frame`](Self::end_frame) resolves in an extra submission of its own.
    pub fn resolve(&mut self, encoder: &mut wgpu::CommandEncoder) {
        if self.open_scopes > 0 || self.open.broken {
            // A leaked guard left an end timestamp unwritten; resolving would wait forever
            // for it on some drivers. `end_frame` delivers the frame untimed.
            return;
        }
        for pool_use in &mut self.open.pools {
            if pool_use.resolved >= pool_use.used {
                continue;
            }
            let Some(pool) = self
                .pools
                .get(pool_use.pool as usize)
                .and_then(Option::as_ref)
            else {
                continue;
            };
            // Resolve to offset 0 (resolve offsets must be 256-byte aligned), then copy next to
            // the queries resolved earlier.
            encoder.resolve_query_set(
                &pool.query_set,
                pool_use.resolved..pool_use.used,
                &pool.resolve,
                0,
            );
            encoder.copy_buffer_to_buffer(
                &pool.resolve,
                0,
                &pool.readback,
                u64::from(pool_use.resolved) * QUERY_BYTES,
                u64::from(pool_use.used - pool_use.resolved) * QUERY_BYTES,
            );
            pool_use.resolved = pool_use.used;
        }
    }

    /// Submits command buffers on the profiled queue, noting the frame's CPU submit anchor
    /// just before the first submission of a frame with passes. Using it (rather than
    /// `queue.submit`) keeps the anchor before the GPU can start the frame's work.
    pub fn submit<I: IntoIterator<Item = wgpu::CommandBuffer>>(
        &mut self,
        session: &Session,
        command_buffers: I,
    ) -> wgpu::SubmissionIndex {
        self.take_ticket(session);
        self.queue.submit(command_buffers)
    }

    /// Ends the GPU part of the open frame, after its last submission and before the
    /// session's frame closes: records the passes' workload in the frame, starts the
    /// asynchronous readback of its timestamps (or delivers its passes at once when they are
    /// untimed), then delivers every earlier frame whose readback has arrived. Never blocks.
    /// Returns how many frames it delivered.
    pub fn end_frame(&mut self, session: &Session) -> usize {
        if self.record_workload {
            for (label, workload) in self.open.workloads.drain(..) {
                session.record_workload(label, workload);
            }
        } else {
            self.open.workloads.clear();
        }
        if self.open.passes.is_empty() {
            self.open.clear();
            return self.collect(session);
        }
        self.stats.frames_recorded += 1;
        let queries_used = self.open.queries_used();
        if queries_used > 0 {
            self.target_capacity = self
                .target_capacity
                .max(queries_used.next_power_of_two())
                .min(wgpu::QUERY_SET_MAX_QUERIES);
        }
        if self.open_scopes > 0 || self.open.broken {
            self.drop_open_queries();
            self.open_scopes = 0;
            self.depth = 0;
        }
        if self
            .open
            .pools
            .iter()
            .any(|pool_use| pool_use.resolved < pool_use.used)
        {
            let mut encoder = self
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("framewise-wgpu resolve"),
                });
            self.resolve(&mut encoder);
            self.take_ticket(session);
            self.queue.submit([encoder.finish()]);
            self.stats.resolve_fallbacks += 1;
        }
        self.take_ticket(session);

        let mut frame = std::mem::replace(
            &mut self.open,
            self.spare.pop().unwrap_or_else(FrameRecord::new),
        );
        if frame.pools.is_empty() {
            self.deliver(session, &mut frame, true);
            self.recycle(frame);
        } else {
            for pool_use in &frame.pools {
                let Some(pool) = self
                    .pools
                    .get(pool_use.pool as usize)
                    .and_then(Option::as_ref)
                else {
                    frame.map.failed.fetch_add(1, Ordering::Release);
                    continue;
                };
                let map = Arc::clone(&frame.map);
                pool.readback
                    .slice(..u64::from(pool_use.used) * QUERY_BYTES)
                    .map_async(wgpu::MapMode::Read, move |result| {
                        let counter = if result.is_ok() {
                            &map.mapped
                        } else {
                            &map.failed
                        };
                        counter.fetch_add(1, Ordering::Release);
                    });
            }
            self.pending.push_back(frame);
        }
        self.stats.frames_pending = self.pending.len();
        self.collect(session)
    }

    /// Delivers every frame whose readback has arrived, oldest first, after one
    /// non-blocking poll of the device. [`end_frame`](Self::end_frame) calls it; call it
    /// yourself to deliver between frames. Returns how many frames it delivered.
    pub fn collect(&mut self, session: &Session) -> usize {
        if self.pending.is_empty() {
            return 0;
        }
        if self.device.poll(wgpu::PollType::Poll).is_err() {
            self.stats.poll_errors += 1;
        }
        let mut delivered = 0;
        while let Some(front) = self.pending.front() {
            let pools = u32::try_from(front.pools.len()).unwrap_or(u32::MAX);
            let mapped = front.map.mapped.load(Ordering::Acquire);
            let failed = front.map.failed.load(Ordering::Acquire);
            if mapped + failed < pools {
                break;
            }
            let Some(mut frame) = self.pending.pop_front() else {
                break;
            };
            self.deliver(session, &mut frame, failed == 0);
            self.recycle(frame);
            delivered += 1;
        }
        self.stats.frames_pending = self.pending.len();
        delivered
    }

    /// Waits (blocking, up to `timeout`) for every outstanding frame's results and delivers
    /// them. For shutdown: call it in the session's last frame, before that frame closes, so
    /// the deliveries land in the capture. Returns how many frames it delivered.
    pub fn flush(&mut self, session: &Session, timeout: Duration) -> Result<usize, FlushError> {
        if self.pending.is_empty() {
            return Ok(0);
        }
        match self.device.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(timeout),
        }) {
            Ok(_) | Err(wgpu::PollError::Timeout) => {}
            Err(error) => return Err(FlushError::Poll(error)),
        }
        let delivered = self.collect(session);
        if self.pending.is_empty() {
            Ok(delivered)
        } else {
            Err(FlushError::Timeout {
                timeout,
                frames_pending: self.pending.len(),
            })
        }
    }

    /// The settings in effect: those given, within their bounds (`max_pending_frames` 1 to the
    /// session's `gpu_wait_frames` + 1; the first pool's queries an even count from 2 to
    /// `wgpu::QUERY_SET_MAX_QUERIES`).
    pub fn settings(&self) -> ProfilerSettings {
        self.settings
    }

    /// What the profiler has done so far.
    pub fn stats(&self) -> ProfilerStats {
        self.stats
    }

    /// Whether passes are timed on this device.
    pub fn timestamps_enabled(&self) -> bool {
        self.pass_timestamps
    }

    fn take_ticket(&mut self, session: &Session) {
        if self.open.ticket.is_none() && !self.open.passes.is_empty() {
            self.open.ticket = Some(session.gpu_submit(self.gpu_queue));
        }
    }

    /// Hands a frame's passes to the session, with their timestamps when `mapped`.
    fn deliver(&mut self, session: &Session, frame: &mut FrameRecord, mapped: bool) {
        self.timings.clear();
        self.timings
            .extend(frame.passes.iter().map(|pass| GpuPassTiming {
                pass: pass.label,
                depth: pass.depth,
                begin_ticks: None,
                end_ticks: None,
            }));
        if mapped {
            for (slot, pool_use) in frame.pools.iter().enumerate() {
                let Some(pool) = self
                    .pools
                    .get(pool_use.pool as usize)
                    .and_then(Option::as_ref)
                else {
                    continue;
                };
                let slice = pool
                    .readback
                    .slice(..u64::from(pool_use.used) * QUERY_BYTES);
                if let Ok(view) = slice.get_mapped_range() {
                    for (timing, pass) in self.timings.iter_mut().zip(&frame.passes) {
                        let Some(query) = pass.query.filter(|q| q.slot as usize == slot) else {
                            continue;
                        };
                        timing.begin_ticks = read_ticks(&view, query.index);
                        timing.end_ticks = read_ticks(&view, query.index + 1);
                    }
                }
                pool.readback.unmap();
            }
        } else {
            self.stats.readback_failures += 1;
            // Some of the frame's buffers may have mapped: do not reuse any of them.
            for pool_use in frame.pools.drain(..) {
                self.destroy_pool(pool_use.pool);
            }
        }
        if let Some(ticket) = frame.ticket.take() {
            let recorded_in = ticket.frame_index();
            let latency = session.frame_index().saturating_sub(recorded_in);
            self.stats.max_latency_frames = self.stats.max_latency_frames.max(latency);
            self.stats.last_delivered_frame = Some(recorded_in);
            session.gpu_deliver(ticket, &self.timings);
            self.stats.frames_delivered += 1;
        }
    }

    fn recycle(&mut self, mut frame: FrameRecord) {
        for pool_use in frame.pools.drain(..) {
            self.release_pool(pool_use.pool);
        }
        frame.clear();
        self.spare.push(frame);
    }

    /// Forgets the open frame's queries (they cannot all be resolved), keeping its passes.
    fn drop_open_queries(&mut self) {
        for pass in &mut self.open.passes {
            pass.query = None;
        }
        let mut pools = std::mem::take(&mut self.open.pools);
        for pool_use in pools.drain(..) {
            self.release_pool(pool_use.pool);
        }
        self.open.pools = pools;
        self.stats.frames_untimed += 1;
    }

    /// Allocates a begin/end query pair in the open frame, or `None` when this kind of
    /// timestamp is unavailable or the frame is untimed.
    fn allocate_pair(&mut self, kind: TimestampKind) -> Option<QueryRef> {
        let supported = match kind {
            TimestampKind::Pass => self.pass_timestamps,
            TimestampKind::Encoder => self.encoder_timestamps,
            TimestampKind::InPass => self.in_pass_timestamps,
        };
        if !supported || self.open.broken {
            return None;
        }
        if !self.open.timing_decided {
            self.open.timing_decided = true;
            self.open.untimed = self.pending.len() >= self.settings.max_pending_frames;
            if self.open.untimed {
                self.stats.frames_untimed += 1;
            }
        }
        if self.open.untimed {
            return None;
        }
        let full = match self.open.pools.last() {
            Some(pool_use) => pool_use.used + 2 > self.capacity_of(pool_use.pool),
            None => true,
        };
        if full {
            let pool = self.acquire_pool();
            self.open.pools.push(PoolUse {
                pool,
                used: 0,
                resolved: 0,
            });
        }
        let slot = u32::try_from(self.open.pools.len().checked_sub(1)?).ok()?;
        let pool_use = self.open.pools.last_mut()?;
        let index = pool_use.used;
        pool_use.used += 2;
        Some(QueryRef { slot, index })
    }

    fn capacity_of(&self, pool: u32) -> u32 {
        self.pools
            .get(pool as usize)
            .and_then(Option::as_ref)
            .map_or(0, |pool| pool.capacity)
    }

    fn acquire_pool(&mut self) -> u32 {
        while let Some(pool) = self.free_pools.pop() {
            if self.capacity_of(pool) >= self.target_capacity {
                return pool;
            }
            self.destroy_pool(pool);
        }
        let pool = QueryPool::new(&self.device, self.target_capacity);
        self.stats.pools_created += 1;
        self.stats.pools_live += 1;
        self.stats.query_capacity += pool.capacity;
        match self.pools.iter().position(Option::is_none) {
            Some(index) => {
                if let Some(slot) = self.pools.get_mut(index) {
                    *slot = Some(pool);
                }
                u32::try_from(index).unwrap_or(u32::MAX)
            }
            None => {
                self.pools.push(Some(pool));
                u32::try_from(self.pools.len() - 1).unwrap_or(u32::MAX)
            }
        }
    }

    /// Gives a pool back for reuse, or drops it when it has been outgrown.
    fn release_pool(&mut self, pool: u32) {
        if self.capacity_of(pool) >= self.target_capacity {
            self.free_pools.push(pool);
        } else {
            self.destroy_pool(pool);
        }
    }

    fn destroy_pool(&mut self, pool: u32) {
        if let Some(dropped) = self.pools.get_mut(pool as usize).and_then(Option::take) {
            self.stats.pools_destroyed += 1;
            self.stats.pools_live = self.stats.pools_live.saturating_sub(1);
            self.stats.query_capacity = self.stats.query_capacity.saturating_sub(dropped.capacity);
        }
    }

    // The pass guards' side: begin and end a pass or scope in the open frame.

    /// Records a pass or scope at the current depth and allocates its queries when `kind`
    /// is timed; the returned query set and index are where its begin timestamp goes.
    pub(crate) fn begin(
        &mut self,
        label: PassLabel,
        kind: TimestampKind,
    ) -> Option<(QueryRef, &wgpu::QuerySet)> {
        let query = self.allocate_pair(kind);
        self.open.passes.push(PassRecord {
            label,
            depth: self.depth,
            query,
        });
        self.depth += 1;
        self.open_scopes += 1;
        let query = query?;
        if self.query_set(query).is_none() {
            // Cannot happen (the pool was just acquired), but a query allocated and never
            // written must never be resolved.
            self.open.broken = true;
            return None;
        }
        self.query_set(query).map(|query_set| (query, query_set))
    }

    /// The query set a query of the open frame lives in.
    pub(crate) fn query_set(&self, query: QueryRef) -> Option<&wgpu::QuerySet> {
        let pool_use = self.open.pools.get(query.slot as usize)?;
        self.pools
            .get(pool_use.pool as usize)
            .and_then(Option::as_ref)
            .map(|pool| &pool.query_set)
    }

    /// Marks the open frame's queries unresolvable (an end timestamp could not be written).
    pub(crate) fn mark_broken(&mut self) {
        self.open.broken = true;
    }

    /// Closes the innermost open pass or scope, recording a wgpu pass's workload.
    pub(crate) fn end(&mut self, workload: Option<(PassLabel, Workload)>) {
        self.depth = self.depth.saturating_sub(1);
        self.open_scopes = self.open_scopes.saturating_sub(1);
        if let (true, Some(workload)) = (self.record_workload, workload) {
            self.open.workloads.push(workload);
        }
    }
}

fn read_ticks(bytes: &[u8], query: u32) -> Option<u64> {
    let start = usize::try_from(u64::from(query) * QUERY_BYTES).ok()?;
    let raw = bytes.get(start..start.checked_add(8)?)?;
    let raw: [u8; 8] = raw.try_into().ok()?;
    // Query results are in the host's byte order.
    Some(u64::from_ne_bytes(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_read_in_host_order_and_out_of_range_is_absent() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&7u64.to_ne_bytes());
        bytes.extend_from_slice(&u64::MAX.to_ne_bytes());
        assert_eq!(read_ticks(&bytes, 0), Some(7));
        assert_eq!(read_ticks(&bytes, 1), Some(u64::MAX));
        assert_eq!(read_ticks(&bytes, 2), None);
        assert_eq!(read_ticks(&bytes, u32::MAX), None);
    }
}
