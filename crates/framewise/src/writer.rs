//! The background writer thread: it gathers each closed frame's spans and marks from the
//! threads' rings up to the frame's end (pairing begins with ends, in pre-order), encodes and
//! writes the frame, holds frames whose GPU results are pending, and gives each batch back
//! to frame close once its frame is written. Frames reach it through [`crate::handoff`].

use framewise_detect::hitch_rule::{HitchRule, DEFAULT_BUDGET_NS};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use framewise_format::model::{
    Frame, FrameEntry, GpuPass, GpuQueueFrame, GpuTiming, Lane, SymId, SymbolTable,
};
use framewise_format::{EncodeError, Writer};

use crate::clock::SessionClock;
use crate::error::SessionError;
use crate::gpu::GpuPassTiming;
use crate::handoff::{Delivery, FrameBatch, Message, Shared, WakePlan};
use crate::intern;
use crate::report::Warning;
use crate::sink::OpenSink;
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

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section here leaves its data consistent, so a panic elsewhere while the
    // lock was held does not make it wrong to go on.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
    /// The live incident log, when on: fed each frame once it is written.
    pub(crate) incidents: Option<crate::incidents::LiveLog>,
}

/// What the writer thread reports when it ends.
pub(crate) struct WriterOutcome {
    /// The header was patched CLOSED.
    pub(crate) closed: bool,
}

/// Whether the format writer refused a frame's content (a lane its algorithm refuses, a
/// symbol not defined, a payload past 4 GiB): then it encoded the frame into its own buffer
/// and failed before a byte of the record reached the sink, its state untouched, so the
/// frame can be dropped whole while the session goes on. A failed sink is not.
fn refused_whole(error: &EncodeError) -> bool {
    matches!(
        error,
        EncodeError::BadNesting { .. }
            | EncodeError::UndefinedSymbol { .. }
            | EncodeError::PayloadTooLarge { .. }
    )
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
    /// The spans dropped that the drain of `discarded` counted, per thread: they go into the
    /// next frame gathered, never away with the discarded events (see [`carry_dropped`]).
    dropped_carried: Vec<(SymId, u64)>,
    /// Records were written into the sink since it was last flushed.
    dirty: bool,
    /// Frames the format writer refused since the last frame written ([`refused_whole`]):
    /// added to the next written frame's `dropped_frames_before`.
    refused_pending: u64,
    /// Frames written into the sink since it was last flushed: told to `on_frame_written`
    /// once flushed (a frame reported written has reached the OS).
    unflushed: Vec<FrameWritten>,
    /// When to wake when no message waits: between two frame closes.
    wake: WakePlan,
    /// Lanes the writer keeps warm in its cache: swapped into each batch it gathers
    /// and back once the frame is written, so that the spans are not written into the lanes
    /// of a batch last touched a whole queue of frames earlier (the ring rotates its batches).
    warm_lanes: Vec<Lane>,
    /// `Some` when the CPU has BMI1, BMI2 and LZCNT: frames are then encoded by the encoder
    /// built for them ([`write_frame`]).
    bmi2: Option<Bmi2>,
}

/// The sink is flushed once no message waits (so a writer that keeps up flushes every
/// frame), and at least every this many frames while a backlog is written.
const FLUSH_EVERY_FRAMES: usize = 16;

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
            dropped_carried: Vec::new(),
            dirty: false,
            refused_pending: 0,
            unflushed: Vec::with_capacity(FLUSH_EVERY_FRAMES),
            wake: WakePlan::default(),
            warm_lanes: Vec::new(),
            bmi2: Bmi2::detect(),
        }
    }

    /// Runs until told to stop.
    pub(crate) fn run(mut self) -> WriterOutcome {
        loop {
            let clock = self.config.clock;
            let message = self.shared.receive(&self.wake, || clock.now_ns());
            // Busy from a message's arrival to the writer's next wait, flush included.
            let started_ns = self.config.clock.now_ns();
            match message {
                Message::Frame(mut batch) => {
                    self.gather(&mut batch);
                    self.on_frame(batch);
                }
                Message::Topology(topology) => {
                    self.with_writer(|writer, symbols| {
                        writer.write_topology(&topology, symbols).map(|_| ())
                    });
                }
                Message::CounterTrack(track) => {
                    self.with_writer(|writer, symbols| writer.write_counter_track(&track, symbols));
                }
                Message::Census(census) => self.on_census(*census),
                Message::Stop => return self.finish(),
            }
            if self.unflushed.len() >= FLUSH_EVERY_FRAMES || !self.shared.has_messages() {
                self.flush_sink();
            }
            let busy_ns = self.config.clock.now_ns().saturating_sub(started_ns);
            self.shared
                .writer_busy_ns
                .fetch_add(busy_ns, Ordering::Relaxed);
        }
    }

    /// Hands what was written to the OS, one `write` for every record since the last flush
    /// rather than one per record, and then tells `on_frame_written` about the frames it
    /// carried. A failure loses those frames: they are counted lost, not written.
    fn flush_sink(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let result = match self.writer.as_mut() {
            Some(writer) if !self.shared.has_failed() => writer.flush(),
            _ => Ok(()),
        };
        match result {
            Ok(()) => {
                if let Some(hook) = &self.config.on_frame_written {
                    for written in &self.unflushed {
                        hook(written);
                    }
                }
                self.unflushed.clear();
            }
            Err(error) => {
                let bytes = self.shared.bytes_written.load(Ordering::Relaxed);
                self.lose_unflushed();
                self.shared.fail(session_error(error, bytes));
            }
        }
    }

    /// The frames in the sink's buffer when it failed were not written after all.
    fn lose_unflushed(&mut self) {
        let lost = self.unflushed.len() as u64;
        self.shared
            .frames_written
            .fetch_sub(lost, Ordering::Relaxed);
        self.shared
            .frames_lost_to_error
            .fetch_add(lost, Ordering::Relaxed);
        self.unflushed.clear();
    }

    /// Runs one write against the format writer, unless the session already failed.
    /// A census: serialized here, off the game thread, into a `CENS` record; then handed to
    /// the live log for `.framewise/census.json`.
    fn on_census(&mut self, census: framewise_census::Census) {
        match serde_json::to_string(&census) {
            Ok(document) => {
                self.with_writer(|writer, _| writer.write_census(&document));
            }
            Err(error) => self.shared.fail(SessionError::Encode {
                message: format!("census: {error}"),
            }),
        }
        if let Some(log) = self.config.incidents.as_mut() {
            if let Some(warning) = log.on_census(census) {
                emit_warning(&self.shared, self.config.on_warning.as_ref(), warning);
            }
        }
    }

    fn with_writer(
        &mut self,
        write: impl FnOnce(&mut Writer<OpenSink>, &SymbolTable) -> Result<(), EncodeError>,
    ) -> bool {
        if self.shared.has_failed() {
            return false;
        }
        let Some(writer) = self.writer.as_mut() else {
            return false;
        };
        intern::sync_into(&mut self.symbols, &mut self.synced);
        // Not flushed here: see `flush_sink`.
        let result = write(writer, &self.symbols);
        let bytes = writer.bytes_written();
        self.shared.bytes_written.store(bytes, Ordering::Relaxed);
        self.dirty = true;
        match result {
            Ok(()) => true,
            Err(error) => {
                // The sink's buffer may have failed on earlier records' bytes too.
                self.lose_unflushed();
                self.shared.fail(session_error(error, bytes));
                false
            }
        }
    }

    /// Fills a closed frame's lanes and marks from the threads' rings: first discarding the
    /// events of frames dropped since the last one sent, then pairing every event up to the
    /// frame's end. The host's staged marks follow the threads' marks, as they always have.
    ///
    /// The spans dropped that the discarding drain counts are not discarded with the events:
    /// a thread's count of spans its full ring dropped is read up to now, so it holds this
    /// frame's drops too (and spans lost in the frames dropped, which cannot be told apart),
    /// and each thread's count goes into this frame's lane for the thread.
    fn gather(&mut self, batch: &mut FrameBatch) {
        let clock = self.config.clock;
        self.dropped_carried.clear();
        if batch.closed.dropped_frames_before > 0 {
            let discarded = &mut self.discarded;
            let used = thread::drain_lanes(batch.closed.skip_until_ticks, &clock, discarded);
            discarded.marks.clear();
            let lanes = discarded.lanes.get(..used).unwrap_or(&[]);
            self.dropped_carried.extend(
                lanes
                    .iter()
                    .filter(|lane| lane.dropped_spans > 0)
                    .map(|lane| (lane.thread, lane.dropped_spans)),
            );
        }
        batch.open_closed(&clock);
        // The lanes the writer holds keep their last frame's spans (see `give_back_lanes`),
        // and a recycled batch's are empty: either way the drain writes the lanes over from
        // their first slot, so the swap changes where the spans go, not what they are.
        std::mem::swap(&mut batch.frame.lanes, &mut self.warm_lanes);
        batch.lanes_used = thread::drain_lanes(batch.closed.cutoff_ticks, &clock, &mut batch.frame);
        if !self.dropped_carried.is_empty() {
            batch.lanes_used = carry_dropped(
                &mut batch.frame.lanes,
                batch.lanes_used,
                &self.dropped_carried,
            );
        }
        batch.frame.marks.append(&mut batch.staged_marks);
        self.wake.frame_ended(batch.frame.cpu_end_ns);
        self.shared.frame_gathered();
    }

    fn on_frame(&mut self, batch: Box<FrameBatch>) {
        if self.shared.has_failed() {
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
            self.give_back_lanes(&mut batch);
            self.shared.recycle(batch);
        }
        if stopping {
            // Everything written reaches the OS (and the hook) before the directory.
            self.flush_sink();
        }
    }

    /// Takes the written frame's lanes back to keep them warm for the next frame gathered,
    /// and leaves the batch the lanes the writer held. The lanes taken back keep their spans:
    /// the next drain writes over them (`thread::ThreadBuffer::drain_over`), and so pads
    /// only the slots past them, where an emptied lane's every slot was padded again.
    fn give_back_lanes(&mut self, batch: &mut FrameBatch) {
        std::mem::swap(&mut batch.frame.lanes, &mut self.warm_lanes);
        for lane in &mut self.warm_lanes {
            lane.dropped_spans = 0;
        }
    }

    /// Writes a frame: `Some(true)` written, `Some(false)` refused whole with nothing
    /// written ([`refused_whole`]), `None` when the session failed (now or before).
    fn try_write(&mut self, frame: &Frame) -> Option<bool> {
        let mut refused = false;
        let bmi2 = self.bmi2;
        let ok =
            self.with_writer(
                |writer, symbols| match write_frame(writer, frame, symbols, bmi2) {
                    Err(error) if refused_whole(&error) => {
                        refused = true;
                        Ok(())
                    }
                    other => other,
                },
            );
        ok.then_some(!refused)
    }

    fn write_frame(&mut self, batch: &mut FrameBatch) {
        if self.shared.has_failed() {
            self.shared
                .frames_lost_to_error
                .fetch_add(1, Ordering::Relaxed);
            return;
        }
        // The lanes past the frame's own keep spans of an earlier frame (see
        // `give_back_lanes`): set aside while the frame is written and observed.
        let used = batch.lanes_used.min(batch.frame.lanes.len());
        let spare = batch.frame.lanes.split_off(used);
        self.write_own_lanes(&mut batch.frame);
        batch.frame.lanes.extend(spare);
    }

    /// [`WriterThread::write_frame`] on a frame holding only its own lanes: writes it, counts it,
    /// and tells the live incident log of it.
    fn write_own_lanes(&mut self, frame: &mut Frame) {
        let dropped_before = frame.dropped_frames_before;
        frame.dropped_frames_before = dropped_before.saturating_add(self.refused_pending);
        let mut outcome = self.try_write(frame);
        if outcome == Some(false) && thread::drop_unnestable_spans(&mut frame.lanes) > 0 {
            // Refused for spans the lane algorithm nests where they do not belong: written
            // without them, counted dropped.
            outcome = self.try_write(frame);
        }
        let dropped_spans: u64 = frame.lanes.iter().map(|l| l.dropped_spans).sum();
        let Some(written) = outcome else {
            self.shared
                .frames_lost_to_error
                .fetch_add(1, Ordering::Relaxed);
            return;
        };
        if !written {
            // A bug's frame, dropped whole: the session goes on, and the next frame written
            // says so as it says a frame the realtime writer dropped.
            frame.dropped_frames_before = dropped_before;
            self.refused_pending = self.refused_pending.saturating_add(1);
            self.shared.frames_dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.refused_pending = 0;
        self.shared
            .spans_dropped
            .fetch_add(dropped_spans, Ordering::Relaxed);
        let frames_written = self.shared.frames_written.fetch_add(1, Ordering::Relaxed) + 1;
        let bytes_written = self.shared.bytes_written.load(Ordering::Relaxed);
        self.unflushed.push(FrameWritten {
            index: frame.index,
            bytes_written,
            frames_written,
        });
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
            emit_warning(&self.shared, self.config.on_warning.as_ref(), warning);
        }
        if let Some(log) = self.config.incidents.as_mut() {
            if let Some(warning) = log.on_frame(frame, &self.symbols) {
                emit_warning(&self.shared, self.config.on_warning.as_ref(), warning);
            }
        }
    }

    fn finish(mut self) -> WriterOutcome {
        self.release(true);
        if let Some(log) = self.config.incidents.as_mut() {
            if let Some(warning) = log.finish(&self.symbols) {
                emit_warning(&self.shared, self.config.on_warning.as_ref(), warning);
            }
        }
        let Some(writer) = self.writer.take() else {
            return WriterOutcome { closed: false };
        };
        if self.shared.has_failed() {
            return WriterOutcome { closed: false };
        }
        let can_seek = writer.get_ref().is_some_and(OpenSink::can_seek);
        // The directory's hitch flags come from the one hitch rule (framewise-detect), the
        // same code `framewise hitches` runs, so the strip and the verdicts agree. A seekable
        // sink's directory is written in one pass, the rule judging each frame as its entry
        // goes out; a stream's is walked once for the rule and twice more to be written.
        let budget_ns = self.config.frame_budget_ns;
        let result = if can_seek {
            let mut rule = hitch_rule(budget_ns);
            writer.finish_and_close_judged(|f| is_hitch(&mut rule, f))
        } else {
            let hitches = directory_hitches(&writer, budget_ns);
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

/// Adds each thread's count of `dropped` spans to its lane among `lanes[..used]`, or to a
/// lane of its own after them (a spare lane, emptied of the spans an earlier frame left in it,
/// or a new one) for a thread with none. Returns the lanes now used.
fn carry_dropped(lanes: &mut Vec<Lane>, mut used: usize, dropped: &[(SymId, u64)]) -> usize {
    for &(thread, count) in dropped {
        let used_lanes = lanes.get_mut(..used).unwrap_or(&mut []);
        if let Some(lane) = used_lanes.iter_mut().find(|lane| lane.thread == thread) {
            lane.dropped_spans = lane.dropped_spans.saturating_add(count);
            continue;
        }
        if lanes.len() <= used {
            lanes.push(Lane::default());
        }
        if let Some(lane) = lanes.get_mut(used) {
            lane.thread = thread;
            lane.spans.clear();
            lane.dropped_spans = count;
            used += 1;
        }
    }
    used
}

/// Proof that the CPU has BMI1, BMI2 and LZCNT, which `Writer::write_frame_bmi2` is built
/// for: made only by [`Bmi2::detect`].
#[derive(Clone, Copy, Debug)]
struct Bmi2(());

impl Bmi2 {
    /// `Some` when the CPU has the three features.
    fn detect() -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
        {
            return Some(Self(()));
        }
        None
    }
}

/// Writes a frame, through the encoder built for BMI1, BMI2 and LZCNT when the CPU has them
/// (`bmi2`): the same bytes and errors, in fewer instructions.
fn write_frame(
    writer: &mut Writer<OpenSink>,
    frame: &Frame,
    symbols: &SymbolTable,
    bmi2: Option<Bmi2>,
) -> Result<(), EncodeError> {
    #[cfg(target_arch = "x86_64")]
    if let Some(Bmi2(())) = bmi2 {
        // SAFETY: a `Bmi2` is made only by `Bmi2::detect`, once it found that the CPU has
        // the three features the function is built for.
        return unsafe { writer.write_frame_bmi2(frame, symbols) };
    }
    let _ = bmi2;
    writer.write_frame(frame, symbols)
}

/// Gives a warning to the host's hook (or stderr) and keeps it for the report.
pub(crate) fn emit_warning(shared: &Shared, hook: Option<&WarningHook>, warning: Warning) {
    match hook {
        Some(hook) => hook(&warning),
        // Never `eprintln!`, which panics when stderr cannot be written (`2>/dev/full`, a
        // closed pipe): the line is lost, and the warning is still in the report.
        None => {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "framewise: warning: {warning}");
        }
    }
    lock(&shared.warnings).push(warning);
}

/// Frames the hitch rule flags, judged over the directory's periods in frame order.
fn directory_hitches<W: std::io::Write>(writer: &Writer<W>, budget_ns: Option<u64>) -> Vec<u64> {
    let mut rule = hitch_rule(budget_ns);
    writer
        .directory_frames()
        .filter(|f| is_hitch(&mut rule, f))
        .map(|f| f.index)
        .collect()
}

/// The hitch rule a session's directory is judged by.
fn hitch_rule(budget_ns: Option<u64>) -> HitchRule {
    HitchRule::new(budget_ns.unwrap_or(DEFAULT_BUDGET_NS))
}

/// Whether `rule` flags the directory's next frame `f` (frames are given in order; one with
/// no period, the last, or a paused one is never a hitch, and only a period judged enters
/// the rule's window).
fn is_hitch(rule: &mut HitchRule, f: &FrameEntry) -> bool {
    f.period_ns
        .and_then(|period_ns| rule.observe(period_ns, f.paused))
        .is_some_and(|judgement| judgement.hitch)
}

#[cfg(test)]
mod tests;
