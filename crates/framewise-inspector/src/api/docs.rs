//! The documents `/api/*` answers, one type per document: these types are the schema of
//! docs/INSPECTOR.md ("API"). A member that is `Option` and skipped when `None` is optional
//! (`"site"?` in the docs); one that is `Option` and not skipped is `null` when absent.
//!
//! Every document here is written by [`to_bytes`], keys sorted at every level, as the
//! CLI's `--format json` writes its documents: a document's bytes depend on its content,
//! never on the order fields are declared in (`/api/stats` is `summarize`'s document).

use framewise_analysis::hitch::Hitch;
use framewise_analysis::model::{
    AdapterKind, CounterKind, TopologyEdge, TopologyPass, TopologyResource,
};
use framewise_analysis::stats::Num;
use framewise_analysis::view::{CompareKind, CounterReading, NameTotal, SeriesKind};
use framewise_analysis::{Defect, Grade, SourceKind, Summary};
use serde::Serialize;

/// A document as the API sends it: keys sorted at every level. A document that cannot be
/// serialized (it cannot happen with these types) becomes an `{"error": …}` document.
pub(crate) fn to_bytes<T: Serialize>(doc: &T) -> Vec<u8> {
    serde_json::to_value(doc)
        .and_then(|v| serde_json::to_vec(&v))
        .unwrap_or_else(|e| {
            serde_json::to_vec(&ErrorDoc {
                error: &format!("serializing: {e}"),
            })
            .unwrap_or_default()
        })
}

/// Any error: `{"error": "one line"}`.
#[derive(Serialize)]
pub(crate) struct ErrorDoc<'a> {
    /// What went wrong, one line.
    pub error: &'a str,
}

/// `/api/capture` (`framewise.inspector.capture/1`).
#[derive(Serialize)]
pub(crate) struct CaptureDoc<'a> {
    pub schema: &'static str,
    /// The path as the user gave it.
    pub file: &'a str,
    /// Its size when it was loaded; `None` (null) when that is not known (a FIFO or a
    /// device has no size after it was read; an in-memory capture may name no file), and
    /// then `file_bytes_reason` says why.
    pub file_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_bytes_reason: Option<&'a str>,
    pub source: SourceKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_version: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<&'a str>,
    pub adapter: AdapterKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_name: Option<&'a str>,
    pub grade: Grade,
    pub frame_count: usize,
    pub frame_budget_ns: u64,
    pub gpu_timed: bool,
    pub dropped_spans: u64,
    /// The reader reported a truncated tail, corrupt or skipped ranges, or an unclosed file.
    pub recovered: bool,
    pub defects: &'a [Defect],
    pub notes: &'a [String],
    pub threads: &'a [String],
    pub queues: &'a [String],
    pub phases: &'a [String],
    pub scopes: Vec<ScopeName<'a>>,
    /// Pass names, each once, in first-seen order.
    pub passes: Vec<&'a str>,
    pub counters: Vec<CounterName<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareFile<'a>>,
    /// Where `--follow` stands; `null` when not following.
    pub follow: Option<&'a FollowStatus>,
    /// The game's `.framewise/` whose catalogue `/api/issues` serves; absent when the
    /// capture belongs to none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issues: Option<IssuesLink>,
}

/// `/api/capture`'s `issues`: where the catalogue comes from.
#[derive(Serialize)]
pub(crate) struct IssuesLink {
    /// The `.framewise/` directory.
    pub dir: String,
}

/// A scope of `/api/capture`.
#[derive(Serialize)]
pub(crate) struct ScopeName<'a> {
    pub name: &'a str,
    /// `file:line`, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

/// A counter of `/api/capture`.
#[derive(Serialize)]
pub(crate) struct CounterName<'a> {
    pub name: &'a str,
    pub kind: CounterKind,
}

/// `/api/capture`'s `compare`: the capture given with `--compare`.
#[derive(Serialize)]
pub(crate) struct CompareFile<'a> {
    pub file: &'a str,
    pub frame_count: usize,
}

/// Where `framewise view --follow` stands (`/api/capture`'s `follow`).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FollowStatus {
    /// Successful reloads so far (0: the load at startup).
    pub(crate) generation: u64,
    /// The writer closed the file: polling stopped.
    pub(crate) closed: bool,
    /// Why the latest reload failed, while the last good state is served; `None` once one
    /// succeeds.
    pub(crate) last_error: Option<String>,
}

/// `/api/frame?row=R` (`framewise.inspector.frame/1`). Span and mark times are signed
/// offsets from the frame's begin (a span on another thread may begin before it).
#[derive(Serialize)]
pub(crate) struct FrameDoc<'a> {
    pub schema: &'static str,
    pub row: usize,
    pub index: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<&'a str>,
    pub paused: bool,
    /// Absolute, on the capture's clock.
    pub begin_ns: u64,
    pub end_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_ns: Option<u64>,
    pub work_ns: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_ns: Option<u64>,
    pub dropped_spans: u64,
    /// One lane per thread, by thread id.
    pub lanes: Vec<Lane<'a>>,
    pub gpu: GpuLane<'a>,
    pub scopes: &'a [NameTotal],
    pub passes: Vec<PassTotal<'a>>,
    pub counters: &'a [CounterReading],
    pub marks: Vec<FrameMark<'a>>,
    /// The frame's entry of `/api/hitches`, `null` when it is no hitch.
    pub hitch: Option<&'a Hitch>,
}

/// One thread's CPU spans in a frame, in pre-order.
#[derive(Serialize)]
pub(crate) struct Lane<'a> {
    pub thread: &'a str,
    pub spans: Vec<CpuSpan<'a>>,
}

/// A CPU span of `/api/frame`.
#[derive(Serialize)]
pub(crate) struct CpuSpan<'a> {
    pub scope: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    pub depth: u32,
    pub start_ns: i64,
    pub dur_ns: u64,
}

/// `/api/frame`'s GPU spans: on a nominal clock (GPU-measured durations placed at the
/// frame's CPU anchor).
#[derive(Serialize)]
pub(crate) struct GpuLane<'a> {
    /// Always true.
    pub nominal: bool,
    pub spans: Vec<GpuSpan<'a>>,
}

/// A GPU span of `/api/frame`.
#[derive(Serialize)]
pub(crate) struct GpuSpan<'a> {
    pub pass: &'a str,
    pub depth: u32,
    pub start_ns: i64,
    pub dur_ns: u64,
}

/// A pass's total in `/api/frame` (its call sites merged).
#[derive(Serialize)]
pub(crate) struct PassTotal<'a> {
    pub name: &'a str,
    pub calls: u64,
    pub total_ns: u64,
}

/// A mark of `/api/frame`.
#[derive(Serialize)]
pub(crate) struct FrameMark<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<&'a str>,
    pub at_ns: i64,
    /// A usermark's note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
}

/// `/api/stats`: `framewise summarize --format json` over a range of rows, and the range.
#[derive(Serialize)]
pub(crate) struct StatsDoc<'a> {
    #[serde(flatten)]
    pub summary: &'a Summary,
    pub range: RowRange,
}

/// Rows `[from, to)`.
#[derive(Serialize)]
pub(crate) struct RowRange {
    pub from: usize,
    pub to: usize,
}

/// `/api/structure?row=R` (`framewise.inspector.structure/1`).
#[derive(Serialize)]
pub(crate) struct StructureDoc<'a> {
    pub schema: &'static str,
    pub row: usize,
    /// `null` below level 1, when the frame declared none, or when its record was lost.
    pub topology: Option<TopologyDoc<'a>>,
    /// Why `topology` is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The frame graph a frame ran.
#[derive(Serialize)]
pub(crate) struct TopologyDoc<'a> {
    /// The content hash, 16 hex digits.
    pub id: String,
    pub passes: &'a [TopologyPass],
    pub resources: &'a [TopologyResource],
    pub edges: &'a [TopologyEdge],
}

/// `/api/series?kind=K&name=N` (`framewise.inspector.series/1`).
#[derive(Serialize)]
pub(crate) struct SeriesDoc<'a> {
    pub schema: &'static str,
    pub kind: SeriesKind,
    pub name: &'a str,
    /// `ns` or `count`.
    pub unit: &'static str,
    /// One per row; `null` where it did not run.
    pub values: Vec<Option<Num>>,
}

/// `/api/compare?a=R1&b=R2` (`framewise.inspector.compare/1`).
#[derive(Serialize)]
pub(crate) struct CompareDoc {
    pub schema: &'static str,
    pub a: FrameRef,
    pub b: FrameRef,
    pub rows: Vec<CompareRow>,
}

/// A frame by row, and its capture index.
#[derive(Serialize)]
pub(crate) struct FrameRef {
    pub row: usize,
    pub index: Option<u64>,
}

/// One compared value of `/api/compare`.
#[derive(Serialize)]
pub(crate) struct CompareRow {
    pub kind: CompareKind,
    pub name: String,
    pub a: Option<Num>,
    pub b: Option<Num>,
    /// `b − a`; `null` when either is.
    pub delta: Option<Num>,
    /// Always `lower-is-better`.
    pub direction: &'static str,
}
