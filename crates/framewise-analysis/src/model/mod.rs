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

mod columns;
mod frames;
mod spans;
mod topology;

pub use columns::*;
pub use frames::*;
pub use spans::*;
pub use topology::*;

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
    /// The host's situation facets (`.sgpt` META), in the order declared. Not part of any
    /// JSON output.
    #[serde(skip)]
    pub situation: Vec<(String, String)>,
    /// The host's free-form settings (`.sgpt` META; motion tracks are declared here), in
    /// the order declared. Not part of any JSON output.
    #[serde(skip)]
    pub settings: Vec<(String, String)>,
    /// The recording session's id (`.sgpt`: 32 hex digits), which the incident log stamps on
    /// the records of that session. Not serialized: it names a recording, not a statistic,
    /// and would make every document of two recordings of the same run differ.
    #[serde(skip)]
    pub session: Option<String>,
}

impl CaptureMeta {
    /// The situation as incident records carry it (`ctx`) and footprint keys end with it:
    /// framewise-detect's canonical form of [`Self::situation`] (`""` for none).
    pub fn canonical_situation(&self) -> String {
        framewise_detect::situation::canonical_situation(
            self.situation.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )
    }

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
            situation: Vec::new(),
            settings: Vec::new(),
            session: None,
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
    /// Spans were dropped by the recorder (buffer full), or lost on import (a Chrome `X`
    /// event without a duration).
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
    /// The file's header failed its check; the capture was recovered by scanning.
    HeaderDamaged,
    /// Bytes after the directory record, which ends a closed capture, were ignored.
    TrailingBytes,
    /// Anything else a reader reported.
    Other,
}

impl DefectKind {
    /// Whether the capture had to be recovered from its bytes: the file ends inside a
    /// record, bytes were skipped as corrupt, the writer never closed it, or its header or
    /// directory was unusable and it was scanned. (The inspector's "recovered" banner.)
    pub fn is_recovery(self) -> bool {
        matches!(
            self,
            Self::TruncatedTail
                | Self::CorruptRange
                | Self::Unclosed
                | Self::DirectoryUnusable
                | Self::HeaderDamaged
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
    /// The frame (by the index the capture records) it took, when it took one whole: a
    /// frame record located but unreadable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<u64>,
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
            frame: None,
            count,
        }
    }

    /// The same defect naming the frame it took.
    pub fn of_frame(mut self, index: u64) -> Self {
        self.frame = Some(index);
        self
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
    ///
    /// A capture's indices increase in every loader unless the file is damaged: frames out
    /// of order, or two recordings in one file (a `frame-order` defect), where an index
    /// may be held by more than one row. Then this is one of those rows, not necessarily
    /// the one meant: whatever is found on a row (a hitch, a search result) should carry
    /// its row rather than be looked up again by index.
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

    /// Spans the recorder dropped in rows `rows`, and in how many of those frames (a range
    /// past the end is cut at the last frame).
    pub fn dropped_spans_in_rows(&self, rows: std::ops::Range<usize>) -> (u64, usize) {
        let from = self
            .dropped_by_row
            .partition_point(|&(r, _)| r < rows.start);
        let to = self.dropped_by_row.partition_point(|&(r, _)| r < rows.end);
        let within = self.dropped_by_row.get(from..to).unwrap_or(&[]);
        (
            within
                .iter()
                .fold(0u64, |sum, &(_, n)| sum.saturating_add(n)),
            within.len(),
        )
    }

    /// The scopes that ran in some frame of `rows` by that frame's totals (calls) while
    /// the span table holds none of their spans in that frame: their totals were recorded
    /// without their spans (a `.litecap`'s phases: the format keeps per-frame times only),
    /// so what reads spans (a flame graph, a timeline, a scope's single runs) cannot show
    /// them. In id order, each once. `None` when the capture holds no span table (it was
    /// loaded without spans: an `.sgpt`'s are read from its file, and its totals were
    /// folded from them).
    pub fn scopes_without_spans(&self, rows: std::ops::Range<usize>) -> Option<Vec<ScopeId>> {
        let spans = self.spans.as_ref()?;
        let mut missing = vec![false; self.scopes.len()];
        // Per scope, the last row (plus one) a span of it was seen in: no clearing per frame.
        let mut seen_in = vec![0usize; self.scopes.len()];
        for row in rows.start..rows.end.min(self.frame_count()) {
            for s in spans.cpu.frame(row) {
                if let Some(seen) = seen_in.get_mut(s.scope as usize) {
                    *seen = row + 1;
                }
            }
            for a in self.scope_aggs.frame(row) {
                let id = a.id as usize;
                if a.calls > 0 && seen_in.get(id) != Some(&(row + 1)) {
                    if let Some(m) = missing.get_mut(id) {
                        *m = true;
                    }
                }
            }
        }
        Some(
            missing
                .iter()
                .enumerate()
                .filter(|(_, &m)| m)
                .filter_map(|(id, _)| ScopeId::try_from(id).ok())
                .collect(),
        )
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
