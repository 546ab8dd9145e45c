//! [`CaptureBuilder`]: streaming construction of a [`Capture`], one frame at a time.
//!
//! Every loader (`.sgpt`, `.litecap`, Chrome JSON) interns its names here and pushes
//! frames in order. The builder folds each frame's spans into per-scope aggregates as the
//! frame arrives (inclusive total, self time, calls), so memory grows with the number of
//! distinct scopes per frame, not with the number of spans, unless spans were asked for.

use std::collections::HashMap;

use framewise_format::derived::{self, FrameClock, QueueSpans};

use crate::model::{
    Capture, CaptureMeta, CounterEntry, CounterId, CounterInfo, CounterKind, Defect, DefectKind,
    FrameTable, GpuSpanRow, MarkNameId, MarkRow, NameColumn, Numeric, PassId, PassInfo, PerFrame,
    PhaseId, QueueId, ScopeId, ScopeInfo, SpanRow, SpanTable, SummaryColumns, ThreadId,
    TopologyDetail, TopologySummary,
};

mod fold;
mod input;

pub(crate) use fold::Folder;
pub use input::{
    float_raw, FrameInput, GpuPassInput, LaneInput, LoadOptions, MarkInput, SpanInput,
};

/// Builds a [`Capture`] from frames pushed in order.
///
/// ```
/// use framewise_analysis::{CaptureBuilder, FrameInput, LaneInput, SpanInput, SourceKind};
///
/// let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
/// let main = b.thread("main");
/// let update = b.scope("update", "src/game.rs", 10);
/// let mut f = FrameInput::default();
/// for i in 0..3u64 {
///     f.clear();
///     f.index = i;
///     f.cpu_begin_ns = i * 16_000_000;
///     f.cpu_end_ns = f.cpu_begin_ns + 10_000_000;
///     f.lanes.push(LaneInput {
///         thread: main,
///         spans: vec![SpanInput { scope: update, depth: 0, start_ns: f.cpu_begin_ns, end_ns: f.cpu_end_ns }],
///         dropped_spans: 0,
///     });
///     b.push_frame(&f);
/// }
/// let capture = b.finish();
/// assert_eq!(capture.frame_count(), 3);
/// assert_eq!(capture.frames().period_ns[0], Some(16_000_000));
/// assert_eq!(capture.frames().period_ns[2], None); // the last frame's period is unknown
/// ```
pub struct CaptureBuilder {
    cap: Capture,
    with_spans: bool,
    scope_ix: HashMap<(String, String, u32), ScopeId>,
    thread_ix: HashMap<String, ThreadId>,
    queue_ix: HashMap<String, QueueId>,
    pass_ix: HashMap<(String, QueueId), PassId>,
    phase_ix: HashMap<String, PhaseId>,
    counter_ix: HashMap<String, CounterId>,
    mark_ix: HashMap<String, MarkNameId>,
    scope_folder: Folder,
    pass_folder: Folder,
    topology_frames: HashMap<u64, u64>,
    dropped_frames: u64,
    dropped_span_frames: u64,
    gpu_missing_frames: u64,
    order_problems: u64,
    counter_scratch: Vec<(CounterId, i64)>,
    /// Summary-only: scope id → name column, pass id → name column.
    scope_groups: NameGroups,
    pass_groups: NameGroups,
    /// The queues of the frame being pushed, and one queue's timed passes (kept to reuse
    /// their allocations).
    queue_scratch: Vec<QueueId>,
    pass_scratch: Vec<(PassId, u32, u64)>,
    /// The frame's GPU span per queue, for its GPU duration.
    gpu_spans: QueueSpans<QueueId>,
}

/// Summary-only: which name column each scope (or pass) id adds to.
#[derive(Default)]
struct NameGroups {
    /// Id → column (`u32::MAX`: none).
    of_id: Vec<u32>,
    /// Per column: more than one id (call site) adds to it.
    shared: Vec<bool>,
    index: HashMap<String, u32>,
}

impl NameGroups {
    /// The name column for a new id.
    fn assign(&mut self, columns: &mut Vec<NameColumn>, id: u32, name: &str) {
        let g = match self.index.get(name) {
            Some(&g) => {
                if let Some(shared) = self.shared.get_mut(g as usize) {
                    *shared = true;
                }
                g
            }
            None => {
                columns.push(NameColumn {
                    name: name.to_owned(),
                    ..NameColumn::default()
                });
                self.shared.push(false);
                let g = u32::try_from(columns.len() - 1).unwrap_or(u32::MAX);
                self.index.insert(name.to_owned(), g);
                g
            }
        };
        let at = id as usize;
        if at >= self.of_id.len() {
            self.of_id.resize(at + 1, u32::MAX);
        }
        self.of_id[at] = g;
    }
}

fn intern<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, u32>,
    key: K,
    add: impl FnOnce() -> usize,
) -> u32 {
    *map.entry(key)
        .or_insert_with(|| u32::try_from(add()).unwrap_or(u32::MAX))
}

/// Appends one frame's spans to a span table: what a load with spans keeps of each frame
/// ([`CaptureBuilder::push_frame`]), and what a frame re-read on demand is turned into
/// ([`crate::load::FrameSource`]), so that the two can never differ.
pub(crate) fn push_frame_spans(spans: &mut SpanTable, f: &FrameInput) {
    for lane in &f.lanes {
        for s in &lane.spans {
            spans.cpu.push_item(SpanRow {
                thread: lane.thread,
                scope: s.scope,
                depth: s.depth,
                start_ns: s.start_ns,
                end_ns: s.end_ns.max(s.start_ns),
            });
        }
    }
    spans.cpu.close_frame();
    for p in &f.gpu {
        if let Some((start, end)) = p.nominal_ns {
            spans.gpu.push_item(GpuSpanRow {
                pass: p.pass,
                depth: p.depth,
                nominal_start_ns: start,
                nominal_end_ns: end.max(start),
            });
        }
    }
    spans.gpu.close_frame();
}

impl CaptureBuilder {
    /// A builder for a capture from `source`; `with_spans` keeps individual spans.
    pub fn new(source: crate::model::SourceKind, with_spans: bool) -> Self {
        Self {
            cap: Capture {
                meta: CaptureMeta::new(source),
                frames: FrameTable::default(),
                scopes: Vec::new(),
                passes: Vec::new(),
                queues: Vec::new(),
                threads: Vec::new(),
                phases: Vec::new(),
                counters: Vec::new(),
                mark_names: Vec::new(),
                scope_aggs: PerFrame::default(),
                pass_aggs: PerFrame::default(),
                counter_values: PerFrame::default(),
                marks: Vec::new(),
                topologies: Vec::new(),
                topology_details: Vec::new(),
                topology_runs: Vec::new(),
                dropped_by_row: Vec::new(),
                defects: Vec::new(),
                spans: with_spans.then(SpanTable::default),
                columns: None,
                dropped_spans: 0,
                gpu_timed: false,
            },
            with_spans,
            scope_ix: HashMap::new(),
            thread_ix: HashMap::new(),
            queue_ix: HashMap::new(),
            pass_ix: HashMap::new(),
            phase_ix: HashMap::new(),
            counter_ix: HashMap::new(),
            mark_ix: HashMap::new(),
            scope_folder: Folder::default(),
            pass_folder: Folder::default(),
            topology_frames: HashMap::new(),
            dropped_frames: 0,
            dropped_span_frames: 0,
            gpu_missing_frames: 0,
            order_problems: 0,
            counter_scratch: Vec::new(),
            scope_groups: NameGroups::default(),
            pass_groups: NameGroups::default(),
            queue_scratch: Vec::new(),
            pass_scratch: Vec::new(),
            gpu_spans: QueueSpans::new(),
        }
    }

    /// Keeps only per-name columns (see [`LoadOptions::with_summary_only`]). Call before
    /// pushing frames.
    pub fn summary_only(mut self) -> Self {
        if self.cap.frames.is_empty() {
            self.cap.columns = Some(SummaryColumns::default());
        }
        self
    }

    /// Tests: fold every lane with the stack fold, the reference the level fold is
    /// checked against.
    #[cfg(test)]
    pub(crate) fn fold_with_stack_only(&mut self) {
        self.scope_folder.stack_only = true;
        self.pass_folder.stack_only = true;
    }

    /// A builder configured from load options.
    pub fn from_options(source: crate::model::SourceKind, options: &LoadOptions) -> Self {
        let b = Self::new(source, options.with_spans);
        if options.summary_only {
            b.summary_only()
        } else {
            b
        }
    }

    /// Capture-wide facts, to fill in while loading.
    pub fn meta_mut(&mut self) -> &mut CaptureMeta {
        &mut self.cap.meta
    }

    /// Records a defect.
    pub fn defect(&mut self, defect: Defect) {
        self.cap.defects.push(defect);
    }

    /// Records an importer note.
    pub fn note(&mut self, note: impl Into<String>) {
        self.cap.meta.notes.push(note.into());
    }

    /// Records a topology the capture carries (its frame count is filled in at finish).
    pub fn topology(&mut self, summary: TopologySummary) {
        if !self.cap.topologies.iter().any(|t| t.id == summary.id) {
            self.cap.topologies.push(summary);
        }
    }

    /// Records a topology in full, its names resolved (the inspector's structure view).
    pub fn topology_detail(&mut self, detail: TopologyDetail) {
        if !self.cap.topology_details.iter().any(|t| t.id == detail.id) {
            self.cap.topology_details.push(detail);
        }
    }

    /// Interns a scope by name and call site.
    pub fn scope(&mut self, name: &str, file: &str, line: u32) -> ScopeId {
        let known = self.cap.scopes.len();
        let scopes = &mut self.cap.scopes;
        let id = intern(
            &mut self.scope_ix,
            (name.to_owned(), file.to_owned(), line),
            || {
                scopes.push(ScopeInfo {
                    name: name.to_owned(),
                    file: file.to_owned(),
                    line,
                });
                scopes.len() - 1
            },
        );
        if let (Some(cols), true) = (self.cap.columns.as_mut(), self.cap.scopes.len() > known) {
            self.scope_groups.assign(&mut cols.scopes, id, name);
        }
        id
    }

    /// Interns a thread by name.
    pub fn thread(&mut self, name: &str) -> ThreadId {
        let threads = &mut self.cap.threads;
        intern(&mut self.thread_ix, name.to_owned(), || {
            threads.push(name.to_owned());
            threads.len() - 1
        })
    }

    /// Interns a GPU queue by name.
    pub fn queue(&mut self, name: &str) -> QueueId {
        let queues = &mut self.cap.queues;
        intern(&mut self.queue_ix, name.to_owned(), || {
            queues.push(name.to_owned());
            queues.len() - 1
        })
    }

    /// Interns a GPU pass by label and queue.
    pub fn pass(&mut self, name: &str, queue: QueueId) -> PassId {
        let known = self.cap.passes.len();
        let passes = &mut self.cap.passes;
        let id = intern(&mut self.pass_ix, (name.to_owned(), queue), || {
            passes.push(PassInfo {
                name: name.to_owned(),
                queue,
            });
            passes.len() - 1
        });
        if let (Some(cols), true) = (self.cap.columns.as_mut(), self.cap.passes.len() > known) {
            self.pass_groups.assign(&mut cols.passes, id, name);
        }
        id
    }

    /// Interns a phase by name.
    pub fn phase(&mut self, name: &str) -> PhaseId {
        let phases = &mut self.cap.phases;
        intern(&mut self.phase_ix, name.to_owned(), || {
            phases.push(name.to_owned());
            phases.len() - 1
        })
    }

    /// Interns a counter by name; the first declaration's kind and representation stand.
    pub fn counter(&mut self, name: &str, kind: CounterKind, numeric: Numeric) -> CounterId {
        let counters = &mut self.cap.counters;
        intern(&mut self.counter_ix, name.to_owned(), || {
            counters.push(CounterInfo {
                name: name.to_owned(),
                kind,
                numeric,
            });
            counters.len() - 1
        })
    }

    /// Interns a mark name.
    pub fn mark_name(&mut self, name: &str) -> MarkNameId {
        let names = &mut self.cap.mark_names;
        intern(&mut self.mark_ix, name.to_owned(), || {
            names.push(name.to_owned());
            names.len() - 1
        })
    }

    /// Frames pushed so far.
    pub fn frame_count(&self) -> usize {
        self.cap.frames.len()
    }

    /// Adds one frame. Frames must come in order; a frame out of order is kept, reported
    /// as a defect, and the period before it is left unknown.
    pub fn push_frame(&mut self, f: &FrameInput) {
        let mut scopes = std::mem::take(&mut self.scope_folder);
        if f.direct_scopes.is_empty() {
            for lane in &f.lanes {
                scopes.fold_lane(
                    lane.spans
                        .iter()
                        .map(|s| (s.scope, s.depth, s.end_ns.saturating_sub(s.start_ns))),
                );
            }
        } else {
            for &(scope, total_ns) in &f.direct_scopes {
                scopes.direct(scope, total_ns);
            }
        }
        self.push_frame_folded(f, &mut scopes);
        self.scope_folder = scopes;
    }

    /// Adds one frame whose CPU instances a loader has already folded into `scopes`
    /// (with [`Folder::fold_lane`], lane by lane, as [`Self::push_frame`] would have). `f.lanes` then only
    /// carry each thread's dropped-span count and, when spans are kept, the spans for the
    /// span table; `f.direct_scopes` is not read. Leaves `scopes` empty, ready for the
    /// next frame.
    pub(crate) fn push_frame_folded(&mut self, f: &FrameInput, scopes: &mut Folder) {
        let row = self.cap.frames.len();
        let row_u32 = u32::try_from(row).unwrap_or(u32::MAX);
        let frames = &mut self.cap.frames;

        // The previous frame's period, unless its source stated one, is known now that its
        // next frame is: by the one period rule, which leaves it unknown across a gap, a
        // drop, or a clock that went backwards.
        if let (Some(&prev_index), Some(&prev_begin), Some(prev_period)) = (
            frames.index.last(),
            frames.cpu_begin_ns.last(),
            frames.period_ns.last_mut(),
        ) {
            if f.index <= prev_index || f.cpu_begin_ns < prev_begin {
                self.order_problems += 1;
            }
            if prev_period.is_none() {
                *prev_period = derived::period_ns(
                    FrameClock {
                        index: prev_index,
                        cpu_begin_ns: prev_begin,
                        dropped_frames_before: 0,
                    },
                    Some(FrameClock {
                        index: f.index,
                        cpu_begin_ns: f.cpu_begin_ns,
                        dropped_frames_before: f.dropped_frames_before,
                    }),
                );
            }
        }
        self.dropped_frames = self.dropped_frames.saturating_add(f.dropped_frames_before);

        frames.index.push(f.index);
        frames.phase.push(f.phase);
        frames.paused.push(f.paused);
        frames.cpu_begin_ns.push(f.cpu_begin_ns);
        frames.cpu_end_ns.push(f.cpu_end_ns.max(f.cpu_begin_ns));
        frames.period_ns.push(f.period_override_ns);
        if let Some(t) = f.topology {
            *self.topology_frames.entry(t).or_insert(0) += 1;
        }
        if self.cap.topology_runs.last().map(|&(_, t)| t) != Some(f.topology) {
            self.cap.topology_runs.push((row, f.topology));
        }

        // CPU scopes.
        let mut dropped = 0u64;
        for lane in &f.lanes {
            dropped = dropped.saturating_add(lane.dropped_spans);
        }
        match self.cap.columns.as_mut() {
            Some(cols) => {
                scopes.drain_grouped(&self.scope_groups, &mut cols.scopes, !f.paused);
                self.cap.scope_aggs.close_frame();
            }
            None => scopes.drain_into(&mut self.cap.scope_aggs),
        }
        if dropped > 0 {
            self.cap.dropped_by_row.push((row, dropped));
            self.cap.dropped_spans = self.cap.dropped_spans.saturating_add(dropped);
            self.dropped_span_frames += 1;
        }

        // GPU passes: fold per queue; the frame's GPU time is the longest queue's span.
        let mut queues_seen = std::mem::take(&mut self.queue_scratch);
        queues_seen.clear();
        for p in &f.gpu {
            if let Some(info) = self.cap.passes.get(p.pass as usize) {
                if !queues_seen.contains(&info.queue) {
                    queues_seen.push(info.queue);
                }
            }
        }
        let passes = &self.cap.passes;
        let mut timed = false;
        let mut queue_passes = std::mem::take(&mut self.pass_scratch);
        let spans = &mut self.gpu_spans;
        spans.clear();
        for &q in &queues_seen {
            queue_passes.clear();
            queue_passes.extend(f.gpu.iter().filter_map(|p| {
                let info = passes.get(p.pass as usize)?;
                if info.queue != q {
                    return None;
                }
                let (start, end) = p.nominal_ns?;
                let end = end.max(start);
                spans.add(q, start, end);
                timed = true;
                Some((p.pass, p.depth, end - start))
            }));
            self.pass_folder.fold_lane(queue_passes.iter().copied());
        }
        // The frame's GPU time: the longest queue's span, as the directory's.
        let gpu_ns = spans.longest_ns();
        self.pass_scratch = queue_passes;
        if timed {
            self.cap.gpu_timed = true;
        }
        self.queue_scratch = queues_seen;
        match self.cap.columns.as_mut() {
            Some(cols) => {
                self.pass_folder
                    .drain_grouped(&self.pass_groups, &mut cols.passes, !f.paused);
                self.cap.pass_aggs.close_frame();
            }
            None => self.pass_folder.drain_into(&mut self.cap.pass_aggs),
        }
        self.cap.frames.gpu_ns.push(gpu_ns);
        if f.gpu_results_missing {
            self.gpu_missing_frames += 1;
        }

        // Counters: sorted by id; a counter given twice sums (sum) or keeps the last (gauge).
        self.counter_scratch.clear();
        self.counter_scratch.extend_from_slice(&f.counters);
        self.counter_scratch.sort_by_key(|&(id, _)| id);
        let mut merged: Option<(CounterId, i64)> = None;
        for &(id, raw) in &self.counter_scratch {
            merged = match merged {
                Some((mid, mraw)) if mid == id => {
                    let info = self.cap.counters.get(id as usize);
                    let value = match info.map(|c| (c.kind, c.numeric)) {
                        Some((CounterKind::Sum, Numeric::Integer)) => mraw.saturating_add(raw),
                        Some((CounterKind::Sum, Numeric::Float)) => {
                            float_raw(f64::from_bits(mraw as u64) + f64::from_bits(raw as u64))
                        }
                        _ => raw,
                    };
                    Some((id, value))
                }
                Some((mid, mraw)) => {
                    self.cap.counter_values.push_item(CounterEntry {
                        counter: mid,
                        raw: mraw,
                    });
                    Some((id, raw))
                }
                None => Some((id, raw)),
            };
        }
        if let Some((counter, raw)) = merged {
            self.cap
                .counter_values
                .push_item(CounterEntry { counter, raw });
        }
        if let Some(cols) = self.cap.columns.as_mut() {
            // Summary-only: counter values move to per-counter columns (non-paused frames).
            let paused = f.paused;
            for e in self.cap.counter_values.drain_open() {
                if paused {
                    continue;
                }
                let at = e.counter as usize;
                if at >= cols.counters.len() {
                    cols.counters.resize_with(at + 1, Default::default);
                }
                cols.counters[at].push(e.raw);
            }
        }
        self.cap.counter_values.close_frame();

        for m in &f.marks {
            self.cap.marks.push(MarkRow {
                frame_row: row_u32,
                name: m.name,
                thread: m.thread,
                at_ns: m.at_ns,
                user: m.user.clone(),
            });
        }

        if let Some(spans) = self.cap.spans.as_mut() {
            debug_assert!(self.with_spans);
            push_frame_spans(spans, f);
        }
    }

    /// Whether no name of any kind has been interned (a builder used only to resolve a
    /// re-read frame's names, which must all be known already).
    pub(crate) fn interned_nothing(&self) -> bool {
        let c = &self.cap;
        c.scopes.is_empty()
            && c.threads.is_empty()
            && c.queues.is_empty()
            && c.passes.is_empty()
            && c.phases.is_empty()
            && c.counters.is_empty()
            && c.mark_names.is_empty()
    }

    /// Finishes: fills in topology frame counts, states defects.
    pub fn finish(mut self) -> Capture {
        for t in &mut self.cap.topologies {
            t.frames = self.topology_frames.get(&t.id).copied().unwrap_or(0);
        }
        if self.dropped_frames > 0 {
            self.cap.defects.push(Defect::new(
                DefectKind::DroppedFrames,
                self.dropped_frames,
                format!(
                    "the writer dropped {} whole frames; the periods around them are unknown",
                    self.dropped_frames
                ),
            ));
        }
        if self.cap.dropped_spans > 0 {
            self.cap.defects.push(Defect::new(
                DefectKind::DroppedSpans,
                self.cap.dropped_spans,
                format!(
                    "the recorder dropped {} spans in {} frames (buffer full); scope totals in those frames are low",
                    self.cap.dropped_spans, self.dropped_span_frames
                ),
            ));
        }
        if self.gpu_missing_frames > 0 {
            self.cap.defects.push(Defect::new(
                DefectKind::GpuResultsMissing,
                self.gpu_missing_frames,
                format!(
                    "{} frames were written without their GPU results (they never came)",
                    self.gpu_missing_frames
                ),
            ));
        }
        if self.order_problems > 0 {
            self.cap.defects.push(Defect::new(
                DefectKind::FrameOrder,
                self.order_problems,
                format!(
                    "{} frames arrived out of order or began before the previous frame; the periods before them are unknown",
                    self.order_problems
                ),
            ));
        }
        self.cap.scope_aggs.shrink();
        self.cap.pass_aggs.shrink();
        self.cap.counter_values.shrink();
        if let Some(cols) = self.cap.columns.as_mut() {
            for c in cols.scopes.iter_mut().chain(cols.passes.iter_mut()) {
                c.totals_ns.shrink();
            }
            for c in &mut cols.counters {
                c.shrink();
            }
        }
        if let Some(s) = self.cap.spans.as_mut() {
            s.cpu.shrink();
            s.gpu.shrink();
        }
        self.cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Agg, SourceKind};

    fn span(scope: ScopeId, depth: u32, start_ns: u64, end_ns: u64) -> SpanInput {
        SpanInput {
            scope,
            depth,
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn folds_inclusive_self_and_calls() {
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, true);
        let t = b.thread("main");
        let frame = b.scope("frame", "a.rs", 1);
        let update = b.scope("update", "a.rs", 2);
        let physics = b.scope("physics", "a.rs", 3);
        let mut f = FrameInput {
            cpu_end_ns: 100,
            ..FrameInput::default()
        };
        f.lanes.push(LaneInput {
            thread: t,
            spans: vec![
                span(frame, 0, 0, 100),
                span(update, 1, 0, 40),
                span(physics, 2, 0, 30),
                span(update, 1, 50, 70),
            ],
            dropped_spans: 0,
        });
        b.push_frame(&f);
        let c = b.finish();
        let aggs = c.scope_aggs().frame(0);
        assert_eq!(
            aggs,
            &[
                Agg {
                    id: frame,
                    calls: 1,
                    total_ns: 100,
                    self_ns: 40
                },
                Agg {
                    id: update,
                    calls: 2,
                    total_ns: 60,
                    self_ns: 30
                },
                Agg {
                    id: physics,
                    calls: 1,
                    total_ns: 30,
                    self_ns: 30
                },
            ]
        );
        assert_eq!(c.spans().map(|s| s.cpu.frame(0).len()), Some(4));
    }

    #[test]
    fn recursion_is_counted_once_inclusive() {
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let t = b.thread("main");
        let r = b.scope("recurse", "", 0);
        let mut f = FrameInput::default();
        f.lanes.push(LaneInput {
            thread: t,
            spans: vec![span(r, 0, 0, 100), span(r, 1, 10, 60)],
            dropped_spans: 0,
        });
        b.push_frame(&f);
        let c = b.finish();
        let a = c.scope_aggs().frame(0)[0];
        assert_eq!((a.calls, a.total_ns, a.self_ns), (2, 100, 100));
    }

    #[test]
    fn gaps_and_drops_make_periods_unknown() {
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let mut f = FrameInput::default();
        for (index, begin, dropped) in [(0u64, 0u64, 0u64), (1, 10, 0), (3, 30, 0), (4, 40, 2)] {
            f.clear();
            f.index = index;
            f.cpu_begin_ns = begin;
            f.cpu_end_ns = begin + 5;
            f.dropped_frames_before = dropped;
            b.push_frame(&f);
        }
        let c = b.finish();
        assert_eq!(c.frames().period_ns, vec![Some(10), None, None, None]);
        assert!(c
            .defects()
            .iter()
            .any(|d| d.kind == DefectKind::DroppedFrames && d.count == 2));
    }

    #[test]
    fn counters_merge_by_kind() {
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let draws = b.counter("draw_calls", CounterKind::Sum, Numeric::Integer);
        let ents = b.counter("entities", CounterKind::Gauge, Numeric::Integer);
        let f = FrameInput {
            counters: vec![(ents, 5), (draws, 3), (draws, 4), (ents, 7)],
            ..FrameInput::default()
        };
        b.push_frame(&f);
        let c = b.finish();
        let vals: Vec<(u32, i64)> = c
            .counter_values()
            .frame(0)
            .iter()
            .map(|e| (e.counter, e.raw))
            .collect();
        assert_eq!(vals, vec![(draws, 7), (ents, 7)]);
    }

    #[test]
    fn gpu_time_is_longest_queue() {
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let gfx = b.queue("graphics");
        let compute = b.queue("compute");
        let shadow = b.pass("shadow", gfx);
        let main = b.pass("main", gfx);
        let cull = b.pass("cull", compute);
        let untimed = b.pass("post", gfx);
        let f = FrameInput {
            gpu: vec![
                GpuPassInput {
                    pass: shadow,
                    depth: 0,
                    nominal_ns: Some((100, 200)),
                },
                GpuPassInput {
                    pass: main,
                    depth: 0,
                    nominal_ns: Some((200, 500)),
                },
                GpuPassInput {
                    pass: cull,
                    depth: 0,
                    nominal_ns: Some((100, 150)),
                },
                GpuPassInput {
                    pass: untimed,
                    depth: 0,
                    nominal_ns: None,
                },
            ],
            ..FrameInput::default()
        };
        b.push_frame(&f);
        let c = b.finish();
        assert_eq!(c.frames().gpu_ns[0], Some(400));
        assert_eq!(c.pass_aggs().frame(0).len(), 3, "untimed pass is absent");
        assert!(c.gpu_timed());
    }
}
