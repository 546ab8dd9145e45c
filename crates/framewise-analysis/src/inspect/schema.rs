//! The types of `inspect --format json`: the [`Inspection`] with the parts every file has
//! (kind, bytes, frames, defects) and, flattened beside them, the [`Detail`] only one kind
//! has: an `.sgpt`'s header, META, records, symbols and topologies, or what an importer
//! named and noted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{CounterKind, Defect, Numeric, SourceKind};
use crate::summary::NamedMap;

/// The schema name every inspection carries.
pub const INSPECT_SCHEMA: &str = "framewise.inspect/1";

/// A file's structure: `inspect --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inspection {
    /// [`INSPECT_SCHEMA`].
    pub schema: String,
    /// The path as given.
    pub file: String,
    /// The file kind, decided by content.
    pub kind: SourceKind,
    /// File length, bytes.
    pub bytes: u64,
    /// The source's own format version (`.sgpt` format version, `.litecap` 1–4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_version: Option<u32>,
    /// The frames, summarized.
    pub frames: FrameSummary,
    /// What only one kind of file has.
    #[serde(flatten)]
    pub detail: Detail,
    /// Everything wrong with the file, as data.
    pub defects: Vec<Defect>,
}

/// The kind-specific part of an [`Inspection`]; its fields sit beside the common ones in
/// the JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Detail {
    /// An `.sgpt`, read by the format crate's reader.
    Sgpt(Box<SgptDetail>),
    /// A `.litecap` or Chrome trace, as the importer read it.
    Imported(ImportedDetail),
}

/// The frames of a file, from the `.sgpt` directory's frame entries (or the importer's
/// frame table): enough to know what a frame strip would show without decoding a frame.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameSummary {
    /// Frames that read: frame records that decode (what every verb loads), or frames the
    /// importer made.
    pub count: u64,
    /// Frame records the reader located (by the directory, or by a record's intact head)
    /// that do not read: each is also a defect naming the frame it held. Not in `count`
    /// nor in any other field here.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable: u64,
    /// The first frame's index, as the source numbers it.
    pub first_index: Option<u64>,
    /// The last frame's index.
    pub last_index: Option<u64>,
    /// Frames the host declared paused.
    pub paused: u64,
    /// Frames whose period is known.
    pub with_period: u64,
    /// Frames whose GPU duration is known.
    pub with_gpu: u64,
    /// Frames the writer's own hitch rule flagged (`.sgpt` with an intact directory only:
    /// the flags live there; absent when no directory survives, never 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hitch_flagged: Option<u64>,
    /// The first frame's CPU begin, ns on the capture's clock.
    pub first_cpu_begin_ns: Option<u64>,
    /// The last frame's CPU begin, ns.
    pub last_cpu_begin_ns: Option<u64>,
    /// Bytes of the frame records, framing included (`.sgpt` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_bytes: Option<u64>,
}

/// How an `.sgpt` was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpenedBy {
    /// By its directory (the file was closed): one read finds every frame.
    Directory,
    /// By scanning records (not closed, or the directory was unusable).
    Scan,
}

/// The 32-byte `.sgpt` header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderInfo {
    /// Format version of the writer.
    pub format_version: u16,
    /// Oldest reader version that may read the file.
    pub min_reader_version: u16,
    /// Flags; bit 0 is CLOSED.
    pub flags: u32,
    /// Whether the writer reached stop.
    pub closed: bool,
    /// Byte offset of the directory, 0 when never closed.
    pub directory_offset: u64,
    /// Length of the directory record.
    pub directory_byte_length: u64,
}

/// Intact records of one type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordCount {
    /// The FourCC (`META`, `FRAM`, …) or `0x…` for an unprintable one.
    #[serde(rename = "type")]
    pub record_type: String,
    /// How many.
    pub count: u64,
    /// Their bytes, framing included.
    pub bytes: u64,
}

/// One symbol an intact record defines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolInfo {
    /// The id records use.
    pub id: u32,
    /// `scope`, `thread`, `pass`, `pipeline`, `counter`, `resource`, `phase`, `mark`,
    /// `queue`, `label`, `unknown`.
    pub kind: String,
    /// The name.
    pub name: String,
    /// A scope's call site file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// A scope's call site line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// A counter's kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_kind: Option<CounterKind>,
    /// An unknown kind's byte, as found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind_byte: Option<u8>,
}

/// A frame-graph topology's shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyInfo {
    /// The content hash, 16 hex digits.
    pub id: String,
    /// Pass nodes.
    pub passes: u64,
    /// Passes the graph culled.
    pub culled_passes: u64,
    /// Resource nodes.
    pub resources: u64,
    /// Edges.
    pub edges: u64,
}

/// The CPU clock META declares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuClockInfo {
    /// Where timestamps come from; empty when not declared.
    pub source: String,
    /// Declared resolution, ns; `None` when not declared (never a zero resolution).
    pub resolution_ns: Option<f64>,
}

/// A GPU queue's declared tick length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuClockInfo {
    /// The queue's symbol.
    pub queue: u32,
    /// Nanoseconds per tick, as the API declares it.
    pub timestamp_period_ns: f64,
}

/// The adapter META declares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterInfo {
    /// Vendor.
    pub vendor: String,
    /// Device.
    pub device: String,
    /// Driver.
    pub driver: String,
    /// Graphics API backend.
    pub backend: String,
    /// `hardware`, `software` or `unknown`.
    #[serde(rename = "type")]
    pub adapter_type: String,
}

/// Render settings META declares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderInfo {
    /// Internal resolution, `[width, height]`.
    pub internal_resolution: Option<(u32, u32)>,
    /// Output resolution, `[width, height]`.
    pub output_resolution: Option<(u32, u32)>,
    /// Upscaler, empty when none.
    pub upscaler: String,
}

/// META, as declared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaInfo {
    /// Session id, hex.
    pub session_id: String,
    /// Wall-clock start, ns since the Unix epoch.
    pub wall_clock_start_unix_ns: u64,
    /// Capture level name (`timing`, …), or `unknown (N)`.
    pub capture_level: String,
    /// Build id, empty when none.
    pub build_id: String,
    /// The program that wrote the file.
    pub writer: String,
    /// The CPU clock.
    pub cpu_clock: CpuClockInfo,
    /// GPU queues with timestamps.
    pub gpu_clocks: Vec<GpuClockInfo>,
    /// Host facts.
    pub host: NamedMap<String>,
    /// The adapter, when declared.
    pub adapter: Option<AdapterInfo>,
    /// Features and limits.
    pub features: NamedMap<String>,
    /// Render settings, when declared.
    pub render: Option<RenderInfo>,
    /// Scene scale, free text.
    pub scene_scale: String,
    /// The recorder's measured cost per scope, ns.
    pub recorder_overhead_ns_per_scope: Option<f64>,
    /// Declared frame budget, ns.
    pub frame_budget_ns: Option<u64>,
    /// Situation facets.
    pub situation: NamedMap<String>,
    /// User note.
    pub note: String,
    /// Key–value settings.
    pub settings: NamedMap<String>,
}

/// What only an `.sgpt` has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SgptDetail {
    /// The header.
    pub header: HeaderInfo,
    /// How the file was opened.
    pub opened_by: OpenedBy,
    /// META, when an intact one was found.
    pub meta: Option<MetaInfo>,
    /// Intact records by type, in order of first appearance.
    pub records: Vec<RecordCount>,
    /// Every symbol, by id.
    pub symbols: Vec<SymbolInfo>,
    /// Symbols counted by kind.
    pub symbol_kinds: BTreeMap<String, u64>,
    /// Topologies, in file order.
    pub topologies: Vec<TopologyInfo>,
}

/// A scope the importer made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeEntry {
    /// Name.
    pub name: String,
    /// Call site, when known.
    pub site: Option<String>,
}

/// A GPU pass the importer made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassEntry {
    /// Label.
    pub name: String,
    /// Its queue.
    pub queue: Option<String>,
}

/// A counter the importer made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterEntry {
    /// Name.
    pub name: String,
    /// Sum or gauge.
    pub kind: CounterKind,
    /// Integer or float.
    pub numeric: Numeric,
}

/// What an importer made of a `.litecap` or a Chrome trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedDetail {
    /// Whether frame begins are on a measured clock.
    pub clock_measured: bool,
    /// Threads.
    pub threads: Vec<String>,
    /// Phases.
    pub phases: Vec<String>,
    /// Scopes.
    pub scopes: Vec<ScopeEntry>,
    /// GPU passes.
    pub passes: Vec<PassEntry>,
    /// Counters.
    pub counters: Vec<CounterEntry>,
    /// Mark names.
    pub marks: Vec<String>,
    /// What the importer decided on the reader's behalf.
    pub notes: Vec<String>,
}

impl Inspection {
    /// The `.sgpt` part, for an `.sgpt`.
    pub fn sgpt(&self) -> Option<&SgptDetail> {
        match &self.detail {
            Detail::Sgpt(d) => Some(d),
            Detail::Imported(_) => None,
        }
    }

    /// The importer's part, for a `.litecap` or Chrome trace.
    pub fn imported(&self) -> Option<&ImportedDetail> {
        match &self.detail {
            Detail::Imported(d) => Some(d),
            Detail::Sgpt(_) => None,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
