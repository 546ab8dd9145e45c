//! What a loader hands the builder: the load options and one frame's input.

use crate::model::{CounterId, MarkNameId, PassId, PhaseId, ScopeId, ThreadId, UserMark};

/// How a loader should build the capture.
///
/// Build one from the default and the `with_*` methods; the type is `#[non_exhaustive]`
/// so that an option added later is not a breaking change:
///
/// ```
/// use framewise_analysis::LoadOptions;
///
/// let options = LoadOptions::default()
///     .with_spans(true)
///     .with_frame_span(Some("frame".to_owned()));
/// assert!(options.with_spans);
/// assert!(!options.summary_only);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Keep every span (the timeline and the trace exporter need them; statistics do not).
    pub with_spans: bool,
    /// Chrome JSON only: the span that marks a frame (auto-picked when `None`).
    pub frame_span: Option<String>,
    /// Keep only what `summarize`, `diff` and `gate` need: per-name columns instead of
    /// per-frame aggregates (a third of the memory). Hitches and attribution need the
    /// default.
    pub summary_only: bool,
}

impl LoadOptions {
    /// The defaults: per-frame aggregates, no spans, the Chrome frame span auto-picked.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keep every span: the timeline and the trace exporter need them, statistics do not.
    pub fn with_spans(mut self, keep: bool) -> Self {
        self.with_spans = keep;
        self
    }

    /// Chrome JSON only: the span that marks a frame (`None`: auto-picked).
    pub fn with_frame_span(mut self, name: Option<String>) -> Self {
        self.frame_span = name;
        self
    }

    /// Keep only what `summarize`, `diff` and `gate` need: per-name columns instead of
    /// per-frame aggregates. Hitches and attribution need the default.
    pub fn with_summary_only(mut self, only: bool) -> Self {
        self.summary_only = only;
        self
    }
}

/// One CPU span as a loader hands it over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanInput {
    /// The scope (from [`CaptureBuilder::scope`](super::CaptureBuilder::scope)).
    pub scope: ScopeId,
    /// Nesting depth on its thread, 0 for outermost.
    pub depth: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

/// One thread's spans in a frame, in pre-order (parents before children).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneInput {
    /// The thread (from [`CaptureBuilder::thread`](super::CaptureBuilder::thread)).
    pub thread: ThreadId,
    /// Spans in pre-order.
    pub spans: Vec<SpanInput>,
    /// Spans the recorder dropped on this thread in this frame.
    pub dropped_spans: u64,
}

/// One GPU pass instance in a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuPassInput {
    /// The pass (from [`CaptureBuilder::pass`](super::CaptureBuilder::pass)); its queue is on the pass.
    pub pass: PassId,
    /// Nesting depth among its queue's passes.
    pub depth: u32,
    /// Nominal start and end on the CPU axis, ns: the GPU-measured duration placed at the
    /// frame's anchor. `None` when the pass was not timed.
    pub nominal_ns: Option<(u64, u64)>,
}

/// One instant mark in a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkInput {
    /// The mark's name (from [`CaptureBuilder::mark_name`](super::CaptureBuilder::mark_name)).
    pub name: MarkNameId,
    /// The thread it was made on.
    pub thread: Option<ThreadId>,
    /// When, ns.
    pub at_ns: u64,
    /// Usermark fields.
    pub user: Option<UserMark>,
}

/// One frame as a loader hands it over. Reuse one value across frames with
/// [`FrameInput::clear`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameInput {
    /// Frame index as the source numbers it (increasing).
    pub index: u64,
    /// Phase (from [`CaptureBuilder::phase`](super::CaptureBuilder::phase)).
    pub phase: Option<PhaseId>,
    /// The host declared it paused.
    pub paused: bool,
    /// CPU begin, ns.
    pub cpu_begin_ns: u64,
    /// CPU end, ns.
    pub cpu_end_ns: u64,
    /// A period the source states itself (a `.litecap` frame time); `None` lets the builder
    /// compute begin-to-next-begin.
    pub period_override_ns: Option<u64>,
    /// Whole frames dropped immediately before this one.
    pub dropped_frames_before: u64,
    /// The topology this frame ran.
    pub topology: Option<u64>,
    /// CPU lanes.
    pub lanes: Vec<LaneInput>,
    /// Per-scope totals the source gives directly (a `.litecap` phase time). When
    /// non-empty, scope aggregates come from here and `lanes` only feed the span table.
    pub direct_scopes: Vec<(ScopeId, u64)>,
    /// GPU pass instances, in submission order.
    pub gpu: Vec<GpuPassInput>,
    /// GPU results were expected and never came.
    pub gpu_results_missing: bool,
    /// Counter values: an `i64`, or [`float_raw`] for a float counter.
    pub counters: Vec<(CounterId, i64)>,
    /// Instant marks.
    pub marks: Vec<MarkInput>,
}

impl FrameInput {
    /// Resets to an empty frame, keeping allocations.
    pub fn clear(&mut self) {
        self.index = 0;
        self.phase = None;
        self.paused = false;
        self.cpu_begin_ns = 0;
        self.cpu_end_ns = 0;
        self.period_override_ns = None;
        self.dropped_frames_before = 0;
        self.topology = None;
        self.lanes.clear();
        self.direct_scopes.clear();
        self.gpu.clear();
        self.gpu_results_missing = false;
        self.counters.clear();
        self.marks.clear();
    }
}

/// The raw form of a float counter value (see [`crate::model::CounterEntry::raw`]).
pub fn float_raw(value: f64) -> i64 {
    value.to_bits() as i64
}
