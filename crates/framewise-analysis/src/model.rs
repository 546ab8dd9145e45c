//! The in-memory capture model: columnar, owned by this crate, independent of any file
//! format.
//!
//! A [`Capture`] keeps one row per frame (index, phase, pause, CPU begin/end, period, GPU
//! duration) and, per frame, small aggregates: each scope's inclusive total, self time and
//! calls, each GPU pass's duration, each counter's value. Individual spans are kept only
//! when a loader is asked for them ([`crate::LoadOptions::with_spans()`]): the timeline and
//! the trace exporter need them, statistics do not. Captures are built by
//! [`crate::CaptureBuilder`], which aggregates frame by frame so that a loader can stream.

use serde::{Deserialize, Serialize};

/// Index of a scope in [`Capture::scopes`].
pub type ScopeId = u32;
/// Index of a GPU pass in [`Capture::passes`].
pub type PassId = u32;
/// Index of a counter in [`Capture::counters`].
pub type CounterId = u32;
/// Index of a thread in [`Capture::threads`].
pub type ThreadId = u32;
/// Index of a GPU queue in [`Capture::queues`].
pub type QueueId = u32;
/// Index of a phase name in [`Capture::phases`].
pub type PhaseId = u32;
/// Index of a mark name in [`Capture::mark_names`].
pub type MarkNameId = u32;

/// Where a capture came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SourceKind {
    /// framewise's own `.sgpt` container.
    Sgpt,
    /// lite-profiler's `.litecap` buffer.
    Litecap,
    /// Chrome Trace Event JSON.
    Chrome,
    /// Built in code (tests, synthetic data).
    Synthetic,
}

/// The GPU adapter type the capture declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdapterKind {
    /// Not declared.
    #[default]
    Unknown,
    /// A hardware GPU.
    Hardware,
    /// A software rasteriser (lavapipe, llvmpipe, SwiftShader, WARP).
    Software,
}

/// How much a capture's timings can be trusted, and whether two captures' timings compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimingGrade {
    /// Measured on a hardware adapter, or no GPU work was timed (CPU-only).
    Hardware,
    /// A software adapter did the rendering being timed.
    Software,
    /// GPU work was timed on an adapter whose type was not declared.
    Unknown,
}

/// The truth grade every output carries: counters are exact, timing depends on the regime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grade {
    /// Always `"exact"`: counters are integers counted, not sampled.
    pub counters: CountersGrade,
    /// The timing regime.
    pub timing: TimingGrade,
}

/// The counters half of a [`Grade`]; there is only one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountersGrade {
    /// Counted exactly.
    Exact,
}

impl Grade {
    /// Whether timings of two captures with these grades may be compared.
    pub fn timing_comparable(&self, other: &Grade) -> bool {
        self.timing == other.timing
    }
}

/// Capture-wide facts: source, level, build, adapter, budget, importer notes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaptureMeta {
    /// The file kind it was loaded from.
    pub source: SourceKind,
    /// The source's own format version (`.litecap` 1–4, `.sgpt` format version).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_version: Option<u32>,
    /// Capture level name (`timing`, `structure`, `workload`, `verbose`), when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// Build id of the recorded program, when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// GPU adapter type.
    pub adapter: AdapterKind,
    /// Adapter name (vendor and device), when declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_name: Option<String>,
    /// Frame budget the capture declares, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_budget_ns: Option<u64>,
    /// Whether frame begins are measured on a clock (false: a `.litecap` without a
    /// timeline, whose frame begins are only the running sum of its durations).
    pub clock_measured: bool,
    /// What an importer decided on the reader's behalf (which span marks a frame, that a
    /// work time is taken as the period, …).
    pub notes: Vec<String>,
}

impl CaptureMeta {
    /// Meta for a source with nothing declared yet.
    pub fn new(source: SourceKind) -> Self {
        Self {
            source,
            source_version: None,
            level: None,
            build: None,
            adapter: AdapterKind::Unknown,
            adapter_name: None,
            frame_budget_ns: None,
            clock_measured: true,
            notes: Vec::new(),
        }
    }
}

/// What went wrong in a capture, reported as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DefectKind {
    /// The file ends inside a record or a value.
    TruncatedTail,
    /// A range of bytes could not be read and was skipped.
    CorruptRange,
    /// A record referred to a symbol no intact record defines.
    UnresolvedSymbol,
    /// Whole frames were dropped by the writer or lost to damage.
    DroppedFrames,
    /// Spans were dropped by the recorder (buffer full).
    DroppedSpans,
    /// GPU results were expected for a frame and never came.
    GpuResultsMissing,
    /// Frames are not in order, or a frame's times are inconsistent.
    FrameOrder,
    /// An importer met input it tolerated but could not use as given.
    Importer,
    /// The writer never reached stop; the capture was recovered by scanning.
    Unclosed,
    /// An intact record of a type the reader does not know was skipped.
    UnknownRecord,
    /// Two records define the same symbol differently; the first definition is kept.
    ConflictingSymbol,
    /// The file says it was closed but its directory could not be used; it was scanned.
    DirectoryUnusable,
    /// No intact META record: capture-wide facts (level, build, adapter, clocks) are
    /// unknown.
    MissingMeta,
    /// Anything else a reader reported.
    Other,
}

impl DefectKind {
    /// Whether the capture had to be recovered from its bytes: the file ends inside a
    /// record, bytes were skipped as corrupt, the writer never closed it, or its directory
    /// was unusable and it was scanned. (The inspector's "recovered" banner.)
    pub fn is_recovery(self) -> bool {
        matches!(
            self,
            Self::TruncatedTail | Self::CorruptRange | Self::Unclosed | Self::DirectoryUnusable
        )
    }
}

/// One defect: a kind, a sentence with the numbers, and where applicable a byte offset and
/// a count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Defect {
    /// What kind of defect.
    pub kind: DefectKind,
    /// A sentence naming the numbers.
    pub message: String,
    /// Byte offset in the file, when the defect has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// How many things it affected (records, frames, spans, events).
    pub count: u64,
}

impl Defect {
    /// A defect affecting `count` things, with no offset.
    pub fn new(kind: DefectKind, count: u64, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            offset: None,
            count,
        }
    }

    /// The same defect located at a byte offset.
    pub fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }
}

/// A CPU scope: a name and the call site that opened it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScopeInfo {
    /// The scope's name.
    pub name: String,
    /// Source file of the call site, empty when unknown.
    pub file: String,
    /// Line of the call site, 0 when unknown.
    pub line: u32,
}

impl ScopeInfo {
    /// `file:line`, or `None` when the site is unknown.
    pub fn site(&self) -> Option<String> {
        if self.file.is_empty() {
            None
        } else if self.line == 0 {
            Some(self.file.clone())
        } else {
            Some(format!("{}:{}", self.file, self.line))
        }
    }
}

/// A GPU pass label on a queue.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PassInfo {
    /// The pass label.
    pub name: String,
    /// The queue it ran on.
    pub queue: QueueId,
}

/// Whether a counter accumulates within a frame or holds a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CounterKind {
    /// Summed within a frame (`draw_calls`, `bytes_uploaded`).
    Sum,
    /// A level at frame close (`entities`, `gpu_memory_bytes`).
    Gauge,
}

/// How a counter's values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Numeric {
    /// Exact `i64` values (every framewise counter).
    Integer,
    /// `f64` values (an imported counter with fractional samples).
    Float,
}

/// A counter's name, kind and value representation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CounterInfo {
    /// The counter's name.
    pub name: String,
    /// Sum or gauge.
    pub kind: CounterKind,
    /// Integer or float.
    pub numeric: Numeric,
}

/// A topology's summary (the structure view reads the full topology from the file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologySummary {
    /// The topology's content hash.
    pub id: u64,
    /// Pass nodes.
    pub passes: u32,
    /// Passes the graph culled.
    pub culled_passes: u32,
    /// Resource nodes.
    pub resources: u32,
    /// Edges.
    pub edges: u32,
    /// Frames that ran it.
    pub frames: u64,
}

/// A frame-graph topology in full, its symbols resolved to names: what the inspector's
/// structure view draws. Loaders keep every topology a capture carries (a handful per
/// capture, a few kilobytes), and each frame's topology id as a run ([`Capture::topology_of`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyDetail {
    /// The topology's content hash.
    pub id: u64,
    /// Pass nodes in execution order.
    pub passes: Vec<TopologyPass>,
    /// Resource nodes.
    pub resources: Vec<TopologyResource>,
    /// Edges between them.
    pub edges: Vec<TopologyEdge>,
}

/// What a frame-graph pass does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopologyPassKind {
    /// Rasterisation.
    Render,
    /// Compute.
    Compute,
    /// Copies and transfers.
    Copy,
    /// Anything else.
    Other,
}

/// A pass node of a [`TopologyDetail`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyPass {
    /// The pass label (`#` and the symbol id when no intact record names it).
    pub label: String,
    /// Render, compute, copy, other.
    pub kind: TopologyPassKind,
    /// The graph culled it (declared but not executed).
    pub culled: bool,
    /// The CPU scope that records it, if declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// What a frame-graph resource is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TopologyResourceKind {
    /// A buffer.
    Buffer,
    /// A texture or render target.
    Texture,
    /// Anything else.
    Other,
}

/// A resource node of a [`TopologyDetail`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyResource {
    /// The resource label.
    pub label: String,
    /// Buffer, texture, other.
    pub kind: TopologyResourceKind,
    /// Its format label (`rgba8unorm`), if declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Declared size in bytes, if declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Lives only within the frame.
    pub transient: bool,
}

/// How a pass uses a resource version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyAccess {
    /// Reads it.
    Read,
    /// Writes it.
    Write,
    /// Reads and writes it.
    ReadWrite,
}

/// An edge of a [`TopologyDetail`]: a pass reads or writes a version of a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TopologyEdge {
    /// Position in [`TopologyDetail::passes`].
    pub pass: u32,
    /// Position in [`TopologyDetail::resources`].
    pub resource: u32,
    /// The resource version read or produced.
    pub version: u32,
    /// Read, write or both.
    pub access: TopologyAccess,
}

/// One row of the frame table, by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRow {
    /// The frame's index as the source numbered it.
    pub index: u64,
    /// The phase, if the host set one.
    pub phase: Option<PhaseId>,
    /// The host declared it paused.
    pub paused: bool,
    /// CPU begin, ns.
    pub cpu_begin_ns: u64,
    /// CPU end, ns.
    pub cpu_end_ns: u64,
    /// Period: this begin to the next frame's begin, ns; `None` when unknown (the last
    /// frame, or the next frame was lost).
    pub period_ns: Option<u64>,
    /// GPU duration (first begin to last end over timed passes, longest queue), ns.
    pub gpu_ns: Option<u64>,
}

impl FrameRow {
    /// CPU work: begin to end, ns.
    pub fn work_ns(&self) -> u64 {
        self.cpu_end_ns.saturating_sub(self.cpu_begin_ns)
    }
}

/// The frame table, one column per field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameTable {
    /// Frame indices.
    pub index: Vec<u64>,
    /// Phases.
    pub phase: Vec<Option<PhaseId>>,
    /// Pause flags.
    pub paused: Vec<bool>,
    /// CPU begins, ns.
    pub cpu_begin_ns: Vec<u64>,
    /// CPU ends, ns.
    pub cpu_end_ns: Vec<u64>,
    /// Periods, ns.
    pub period_ns: Vec<Option<u64>>,
    /// GPU durations, ns.
    pub gpu_ns: Vec<Option<u64>>,
}

impl FrameTable {
    /// Number of frames.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are no frames.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Row `row` by value, if it exists.
    pub fn row(&self, row: usize) -> Option<FrameRow> {
        Some(FrameRow {
            index: *self.index.get(row)?,
            phase: *self.phase.get(row)?,
            paused: *self.paused.get(row)?,
            cpu_begin_ns: *self.cpu_begin_ns.get(row)?,
            cpu_end_ns: *self.cpu_end_ns.get(row)?,
            period_ns: *self.period_ns.get(row)?,
            gpu_ns: *self.gpu_ns.get(row)?,
        })
    }

    /// Every row, in order.
    pub fn rows(&self) -> impl Iterator<Item = FrameRow> + '_ {
        (0..self.len()).filter_map(|r| self.row(r))
    }
}

/// Per-frame items in compressed-row form: `offsets[r]..offsets[r + 1]` are frame `r`'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerFrame<T> {
    offsets: Vec<usize>,
    items: Vec<T>,
}

impl<T> Default for PerFrame<T> {
    fn default() -> Self {
        Self {
            offsets: vec![0],
            items: Vec::new(),
        }
    }
}

impl<T> PerFrame<T> {
    /// Frame `row`'s items (empty when the row does not exist).
    pub fn frame(&self, row: usize) -> &[T] {
        match (self.offsets.get(row), self.offsets.get(row + 1)) {
            (Some(&a), Some(&b)) => self.items.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Every item of every frame.
    pub fn all(&self) -> &[T] {
        &self.items
    }

    /// Number of frames.
    pub fn frames(&self) -> usize {
        self.offsets.len() - 1
    }

    pub(crate) fn push_item(&mut self, item: T) {
        self.items.push(item);
    }

    /// Removes the items pushed since the last [`Self::close_frame`].
    pub(crate) fn drain_open(&mut self) -> std::vec::Drain<'_, T> {
        let start = self
            .offsets
            .last()
            .copied()
            .unwrap_or(0)
            .min(self.items.len());
        self.items.drain(start..)
    }

    pub(crate) fn close_frame(&mut self) {
        self.offsets.push(self.items.len());
    }

    pub(crate) fn shrink(&mut self) {
        self.offsets.shrink_to_fit();
        self.items.shrink_to_fit();
    }
}

/// A scope's or a pass's aggregate within one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Agg {
    /// The scope or pass.
    pub id: u32,
    /// Times it ran in the frame.
    pub calls: u32,
    /// Inclusive total, ns (a recursive instance inside itself is not counted twice).
    pub total_ns: u64,
    /// Self time (inclusive minus direct children), ns.
    pub self_ns: u64,
}

/// A counter's value in one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterEntry {
    /// The counter.
    pub counter: CounterId,
    /// The raw value: an `i64`, or `f64::to_bits` for a [`Numeric::Float`] counter. Read it
    /// with [`Capture::counter_value`].
    pub raw: i64,
}

/// A usermark's extra fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserMark {
    /// The trailing window the mark flags, ns.
    pub window_ns: u64,
    /// The player's note.
    pub note: String,
}

/// An instant mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkRow {
    /// Row of the frame it belongs to.
    pub frame_row: u32,
    /// The mark's name.
    pub name: MarkNameId,
    /// The thread it was made on, if known.
    pub thread: Option<ThreadId>,
    /// When, ns.
    pub at_ns: u64,
    /// Usermark fields, for a usermark.
    pub user: Option<UserMark>,
}

/// One CPU span, kept when spans were asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanRow {
    /// The thread.
    pub thread: ThreadId,
    /// The scope.
    pub scope: ScopeId,
    /// Nesting depth on its thread.
    pub depth: u32,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

/// One timed GPU pass instance, kept when spans were asked for. Its times are *nominal*:
/// the GPU duration as measured, placed on the CPU axis at the frame's anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuSpanRow {
    /// The pass.
    pub pass: PassId,
    /// Nesting depth among its queue's passes.
    pub depth: u32,
    /// Nominal start on the CPU axis, ns.
    pub nominal_start_ns: u64,
    /// Nominal end on the CPU axis, ns.
    pub nominal_end_ns: u64,
}

/// Individual spans, per frame, in pre-order per thread.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanTable {
    /// CPU spans.
    pub cpu: PerFrame<SpanRow>,
    /// Timed GPU pass instances.
    pub gpu: PerFrame<GpuSpanRow>,
}

impl SpanTable {
    /// Frame `row`'s spans (none for a row past the end).
    pub fn frame_spans(&self, row: usize) -> FrameSpans {
        FrameSpans {
            cpu: self.cpu.frame(row).to_vec(),
            gpu: self.gpu.frame(row).to_vec(),
        }
    }
}

/// One frame's spans, as a load with spans keeps them: CPU spans in pre-order per
/// thread (threads in the order the source gave them), timed GPU pass instances in
/// submission order. From [`SpanTable::frame_spans`], or read from the file on demand
/// by [`crate::load::FrameSource`]; the two are the same rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameSpans {
    /// CPU spans.
    pub cpu: Vec<SpanRow>,
    /// Timed GPU pass instances, placed nominally on the CPU axis.
    pub gpu: Vec<GpuSpanRow>,
}

/// An append-only column stored in fixed-size chunks, so that growing it never copies
/// or doubles what is already there (a one-hour capture has columns of 216,000 values).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chunked<T> {
    /// Full chunks of [`Self::CHUNK`] values.
    full: Vec<Vec<T>>,
    /// The chunk being filled.
    tail: Vec<T>,
}

impl<T: Copy> Chunked<T> {
    const CHUNK: usize = 4096;

    /// Appends a value.
    #[inline]
    pub fn push(&mut self, value: T) {
        if self.tail.len() == self.tail.capacity() {
            self.make_room();
        }
        self.tail.push(value);
    }

    /// Room for one more value in the tail: a whole chunk's, or a fresh tail when full.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        if self.tail.len() >= Self::CHUNK {
            let full = std::mem::replace(&mut self.tail, Vec::with_capacity(Self::CHUNK));
            self.full.push(full);
        } else {
            self.tail.reserve_exact(Self::CHUNK - self.tail.len());
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.full.len() * Self::CHUNK + self.tail.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.tail.is_empty() && self.full.is_empty()
    }

    fn chunks(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.full
            .iter()
            .map(Vec::as_slice)
            .chain(std::iter::once(self.tail.as_slice()))
    }

    /// Values in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.chunks().flat_map(|c| c.iter().copied())
    }

    /// A contiguous copy.
    pub fn to_vec(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        for c in self.chunks() {
            out.extend_from_slice(c);
        }
        out
    }

    pub(crate) fn shrink(&mut self) {
        self.tail.shrink_to_fit();
        self.full.shrink_to_fit();
    }
}

/// Durations in ns, in push order: four bytes a value while every value fits in 32 bits
/// (up to 4.29 s), eight from the first one that does not (the column is widened once,
/// keeping every value). A one-hour capture keeps one such column per scope name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NsColumn {
    narrow: Chunked<u32>,
    wide: Option<Chunked<u64>>,
}

impl NsColumn {
    /// Appends a value.
    #[inline]
    pub fn push(&mut self, value_ns: u64) {
        match &mut self.wide {
            Some(wide) => wide.push(value_ns),
            None => match u32::try_from(value_ns) {
                Ok(narrow) => self.narrow.push(narrow),
                Err(_) => self.widen(value_ns),
            },
        }
    }

    #[cold]
    #[inline(never)]
    fn widen(&mut self, value_ns: u64) {
        let mut wide = Chunked::default();
        for v in std::mem::take(&mut self.narrow).iter() {
            wide.push(u64::from(v));
        }
        wide.push(value_ns);
        self.wide = Some(wide);
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.wide.as_ref().map_or(self.narrow.len(), Chunked::len)
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let narrow = self
            .wide
            .is_none()
            .then(|| self.narrow.iter().map(u64::from));
        let wide = self.wide.as_ref().map(|w| w.iter());
        narrow
            .into_iter()
            .flatten()
            .chain(wide.into_iter().flatten())
    }

    /// A contiguous copy.
    pub fn to_vec(&self) -> Vec<u64> {
        match &self.wide {
            Some(wide) => wide.to_vec(),
            None => {
                let mut out = Vec::with_capacity(self.narrow.len());
                for c in self.narrow.chunks() {
                    out.extend(c.iter().map(|&v| u64::from(v)));
                }
                out
            }
        }
    }

    pub(crate) fn shrink(&mut self) {
        self.narrow.shrink();
        if let Some(w) = self.wide.as_mut() {
            w.shrink();
        }
    }
}

/// One name's per-frame totals, in frame order over non-paused frames: what a
/// summary-only load keeps instead of per-frame aggregates (4 bytes per scope per frame,
/// 8 for a name whose per-frame total ever exceeds 4.29 s).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameColumn {
    /// The scope or pass name (call sites merged).
    pub name: String,
    /// Per-frame inclusive totals, ns, in the non-paused frames in which it ran.
    pub totals_ns: NsColumn,
    /// Self time over those frames, ns.
    pub self_ns: u64,
    /// Calls over those frames.
    pub calls: u64,
}

/// What a summary-only load keeps: per-name and per-counter columns over non-paused
/// frames, enough for `summarize`, `diff` and `gate`, not for hitches or attribution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SummaryColumns {
    /// Scopes by name.
    pub scopes: Vec<NameColumn>,
    /// GPU passes by name.
    pub passes: Vec<NameColumn>,
    /// Raw counter values by [`CounterId`], in frame order over non-paused frames.
    pub counters: Vec<Chunked<i64>>,
}

/// A capture in memory. Build one with [`crate::CaptureBuilder`] or load one with
/// [`crate::load::open`].
#[derive(Clone, Debug)]
pub struct Capture {
    pub(crate) meta: CaptureMeta,
    pub(crate) frames: FrameTable,
    pub(crate) scopes: Vec<ScopeInfo>,
    pub(crate) passes: Vec<PassInfo>,
    pub(crate) queues: Vec<String>,
    pub(crate) threads: Vec<String>,
    pub(crate) phases: Vec<String>,
    pub(crate) counters: Vec<CounterInfo>,
    pub(crate) mark_names: Vec<String>,
    pub(crate) scope_aggs: PerFrame<Agg>,
    pub(crate) pass_aggs: PerFrame<Agg>,
    pub(crate) counter_values: PerFrame<CounterEntry>,
    pub(crate) marks: Vec<MarkRow>,
    pub(crate) topologies: Vec<TopologySummary>,
    pub(crate) topology_details: Vec<TopologyDetail>,
    /// `(first row, topology)` each time the frames' topology changes.
    pub(crate) topology_runs: Vec<(usize, Option<u64>)>,
    /// `(row, spans dropped)` for the frames that dropped any.
    pub(crate) dropped_by_row: Vec<(usize, u64)>,
    pub(crate) defects: Vec<Defect>,
    pub(crate) spans: Option<SpanTable>,
    pub(crate) columns: Option<SummaryColumns>,
    pub(crate) dropped_spans: u64,
    pub(crate) gpu_timed: bool,
}

impl Capture {
    /// Capture-wide facts.
    pub fn meta(&self) -> &CaptureMeta {
        &self.meta
    }

    /// The frame table.
    pub fn frames(&self) -> &FrameTable {
        &self.frames
    }

    /// Number of frames.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// The row of the frame with this index, if present.
    pub fn row_of_index(&self, index: u64) -> Option<usize> {
        // Indices are increasing in every loader; fall back to a scan if not.
        match self.frames.index.binary_search(&index) {
            Ok(row) => Some(row),
            Err(_) => self.frames.index.iter().position(|&i| i == index),
        }
    }

    /// Scopes by [`ScopeId`].
    pub fn scopes(&self) -> &[ScopeInfo] {
        &self.scopes
    }

    /// GPU passes by [`PassId`].
    pub fn passes(&self) -> &[PassInfo] {
        &self.passes
    }

    /// GPU queue names by [`QueueId`].
    pub fn queues(&self) -> &[String] {
        &self.queues
    }

    /// Thread names by [`ThreadId`].
    pub fn threads(&self) -> &[String] {
        &self.threads
    }

    /// Phase names by [`PhaseId`].
    pub fn phases(&self) -> &[String] {
        &self.phases
    }

    /// Counters by [`CounterId`].
    pub fn counters(&self) -> &[CounterInfo] {
        &self.counters
    }

    /// Mark names by [`MarkNameId`].
    pub fn mark_names(&self) -> &[String] {
        &self.mark_names
    }

    /// Per-frame scope aggregates, sorted by scope id within a frame.
    pub fn scope_aggs(&self) -> &PerFrame<Agg> {
        &self.scope_aggs
    }

    /// Per-frame GPU pass aggregates (timed passes only), sorted by pass id within a frame.
    pub fn pass_aggs(&self) -> &PerFrame<Agg> {
        &self.pass_aggs
    }

    /// Per-frame counter values, sorted by counter id within a frame.
    pub fn counter_values(&self) -> &PerFrame<CounterEntry> {
        &self.counter_values
    }

    /// A counter entry's value as `f64` (exact for integers up to 2^53).
    pub fn counter_value(&self, entry: &CounterEntry) -> f64 {
        match self.counters.get(entry.counter as usize).map(|c| c.numeric) {
            Some(Numeric::Float) => f64::from_bits(entry.raw as u64),
            _ => entry.raw as f64,
        }
    }

    /// The value of the named counter in frame `row`, if recorded there.
    pub fn counter_in_frame(&self, row: usize, counter: CounterId) -> Option<&CounterEntry> {
        let entries = self.counter_values.frame(row);
        entries
            .binary_search_by_key(&counter, |e| e.counter)
            .ok()
            .and_then(|at| entries.get(at))
    }

    /// The counter with this name, if the capture has one.
    pub fn counter_id(&self, name: &str) -> Option<CounterId> {
        self.counters
            .iter()
            .position(|c| c.name == name)
            .and_then(|p| u32::try_from(p).ok())
    }

    /// Instant marks in time order.
    pub fn marks(&self) -> &[MarkRow] {
        &self.marks
    }

    /// Topologies seen.
    pub fn topologies(&self) -> &[TopologySummary] {
        &self.topologies
    }

    /// Topologies in full, for the ones the loader could read (`.sgpt` only).
    pub fn topology_details(&self) -> &[TopologyDetail] {
        &self.topology_details
    }

    /// The full topology with this id, if the capture carries it.
    pub fn topology_detail(&self, id: u64) -> Option<&TopologyDetail> {
        self.topology_details.iter().find(|t| t.id == id)
    }

    /// The id of the topology frame `row` ran, if it declared one.
    pub fn topology_of(&self, row: usize) -> Option<u64> {
        if row >= self.frame_count() {
            return None;
        }
        let at = self
            .topology_runs
            .partition_point(|&(first, _)| first <= row);
        at.checked_sub(1)
            .and_then(|i| self.topology_runs.get(i))
            .and_then(|&(_, id)| id)
    }

    /// Spans the recorder dropped in frame `row` (0 when it dropped none).
    pub fn dropped_spans_in(&self, row: usize) -> u64 {
        match self.dropped_by_row.binary_search_by_key(&row, |&(r, _)| r) {
            Ok(i) => self.dropped_by_row.get(i).map_or(0, |&(_, n)| n),
            Err(_) => 0,
        }
    }

    /// Defects, as reported by the loader and found while building.
    pub fn defects(&self) -> &[Defect] {
        &self.defects
    }

    /// Individual spans, when the loader was asked to keep them.
    pub fn spans(&self) -> Option<&SpanTable> {
        self.spans.as_ref()
    }

    /// The per-name columns of a summary-only load (then the per-frame aggregates are
    /// empty).
    pub fn summary_columns(&self) -> Option<&SummaryColumns> {
        self.columns.as_ref()
    }

    /// Spans the recorder dropped, over the whole capture.
    pub fn dropped_spans(&self) -> u64 {
        self.dropped_spans
    }

    /// Whether any GPU work was timed.
    pub fn gpu_timed(&self) -> bool {
        self.gpu_timed
    }

    /// The truth grade: counters exact; timing `software` when a software adapter did the
    /// rendering, `hardware` when a hardware adapter did or nothing on a GPU was timed,
    /// `unknown` otherwise.
    pub fn grade(&self) -> Grade {
        let timing = match (self.meta.adapter, self.gpu_timed) {
            (AdapterKind::Software, _) => TimingGrade::Software,
            (AdapterKind::Hardware, _) => TimingGrade::Hardware,
            (AdapterKind::Unknown, false) => TimingGrade::Hardware,
            (AdapterKind::Unknown, true) => TimingGrade::Unknown,
        };
        Grade {
            counters: CountersGrade::Exact,
            timing,
        }
    }

    /// The frame budget to judge against: the declared one, or 60 Hz.
    pub fn frame_budget_ns(&self) -> u64 {
        self.meta
            .frame_budget_ns
            .unwrap_or(crate::hitch_rule::DEFAULT_BUDGET_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_frame_slices() {
        let mut pf = PerFrame::default();
        pf.push_item(1u32);
        pf.push_item(2);
        pf.close_frame();
        pf.close_frame();
        pf.push_item(3);
        pf.close_frame();
        assert_eq!(pf.frames(), 3);
        assert_eq!(pf.frame(0), &[1, 2]);
        assert_eq!(pf.frame(1), &[] as &[u32]);
        assert_eq!(pf.frame(2), &[3]);
        assert_eq!(pf.frame(3), &[] as &[u32]);
    }

    #[test]
    fn ns_columns_widen_once_and_keep_every_value() {
        let mut c = NsColumn::default();
        let values: Vec<u64> = (0..10_000u64)
            .map(|i| match i {
                5_000 => u64::from(u32::MAX) + 1,
                7_777 => u64::MAX,
                _ => i * 1_000,
            })
            .collect();
        for (n, &v) in values.iter().enumerate() {
            c.push(v);
            if n == 4_999 {
                assert!(c.wide.is_none(), "narrow while every value fits");
            }
        }
        assert!(c.wide.is_some());
        assert_eq!(c.len(), values.len());
        assert_eq!(c.to_vec(), values);
        assert_eq!(c.iter().collect::<Vec<_>>(), values);
        let mut narrow = NsColumn::default();
        narrow.push(u64::from(u32::MAX));
        assert_eq!(narrow.to_vec(), vec![u64::from(u32::MAX)]);
        assert!(narrow.wide.is_none());
    }

    #[test]
    fn sites() {
        let s = ScopeInfo {
            name: "render".into(),
            file: "src/render.rs".into(),
            line: 42,
        };
        assert_eq!(s.site().as_deref(), Some("src/render.rs:42"));
        let s = ScopeInfo {
            name: "x".into(),
            file: String::new(),
            line: 0,
        };
        assert_eq!(s.site(), None);
    }
}
