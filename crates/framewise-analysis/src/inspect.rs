//! [`Inspection`]: what a capture file holds, structurally — `inspect --format json`, and
//! the model the web inspector's file view reads, so the two never disagree.
//!
//! For an `.sgpt`, read through framewise-format's reader: the header, how the file was
//! opened (by its directory, or by scanning), META, intact records by type with counts and
//! bytes, symbols (each, and counted by kind), topologies, the frame entries summarized,
//! and every defect — each frame is decoded to find damage, so a file that opens cleanly
//! but holds a frame that does not decode says so. For a `.litecap` or a Chrome trace:
//! what the importer made of it (names, counts, notes, defects).
//!
//! An inspection states what is in the file; it computes no statistic. Defects are data:
//! a damaged file inspects, and [`Inspection::defects`] lists what was lost.

use std::collections::BTreeMap;
use std::path::Path;

use framewise_format::container::fourcc_name;
use framewise_format::model::{
    AdapterType, CaptureLevel, CounterKind as FmtCounterKind, Meta, Symbol, SymbolKind,
};
use framewise_format::read;
use serde::{Deserialize, Serialize};

use crate::build::LoadOptions;
use crate::load::sgpt::{defect_of, open_reader};
use crate::load::{self, no_progress, FileKind, LoadError, Progress, Reporter, Stage};
use crate::model::{Capture, CounterKind, Defect, Numeric, SourceKind};
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

/// Inspects a file of any supported kind with the default [`LoadOptions`].
pub fn inspect(path: impl AsRef<Path>) -> Result<Inspection, LoadError> {
    inspect_with(path, &LoadOptions::default(), no_progress)
}

/// Inspects a file, reporting progress (an `.sgpt` is verified frame by frame, counted in
/// [`Stage::Verifying`]; other kinds load as [`load::open_with_progress`] does). `options`
/// matter only to importers (a Chrome trace's frame span).
pub fn inspect_with(
    path: impl AsRef<Path>,
    options: &LoadOptions,
    mut on_progress: impl FnMut(Progress),
) -> Result<Inspection, LoadError> {
    let path = path.as_ref();
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(LoadError::IsDirectory {
            path: path.to_owned(),
        });
    }
    load::refuse_special(path, &meta)?;
    let file = path.display().to_string();
    if load::is_stream(path) {
        // A pipe or a FIFO is read once, whole (a peek would consume its first bytes); a
        // stream whose first bytes are no capture's is refused before it is read on.
        let bytes = load::read_stream(path, &mut |_| {})?;
        if load::detect(&bytes) == Some(FileKind::Sgpt) {
            let reader = read::from_bytes(bytes).map_err(|e| LoadError::Sgpt {
                message: format!("{file}: {e}"),
            })?;
            return Ok(of_sgpt(file, &reader, &mut on_progress));
        }
        let len = bytes.len() as u64;
        let options = options.clone().with_spans(false).with_summary_only(false);
        return Ok(of_imported(file, len, &load::from_bytes(bytes, &options)?));
    }
    let mut head = [0u8; 4];
    let n = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(io)?;
        f.read(&mut head).map_err(io)?
    };
    if load::detect(head.get(..n).unwrap_or(&[])) == Some(FileKind::Sgpt) {
        let reader = open_reader(path)?;
        return Ok(of_sgpt(file, &reader, &mut on_progress));
    }
    let options = options.clone().with_spans(false).with_summary_only(false);
    let capture = load::open_with_progress(path, &options, &mut on_progress)?;
    Ok(of_imported(file, meta.len(), &capture))
}

/// An inspection of an `.sgpt` already open in the format crate's reader. Every frame is
/// decoded to find damage.
pub fn of_sgpt(
    file: String,
    reader: &read::Capture,
    progress: &mut dyn FnMut(Progress),
) -> Inspection {
    let h = reader.header();
    let mut records: Vec<RecordCount> = Vec::new();
    for r in reader.records() {
        let name = fourcc_name(r.record_type);
        match records.iter_mut().find(|c| c.record_type == name) {
            Some(c) => {
                c.count += 1;
                c.bytes += r.length();
            }
            None => records.push(RecordCount {
                record_type: name,
                count: 1,
                bytes: r.length(),
            }),
        }
    }
    let verified = verify(reader, progress);
    // A record that is not intact (`Corrupt`, not a `BadPayload` with a good checksum) is
    // not counted among the intact records, however the directory listed it.
    for d in &verified.defects {
        if let read::Defect::FrameUnreadable { length, cause, .. } = d {
            if matches!(**cause, read::Defect::Corrupt { .. }) {
                if let Some(c) = records.iter_mut().find(|c| c.record_type == "FRAM") {
                    c.count = c.count.saturating_sub(1);
                    c.bytes = c.bytes.saturating_sub(*length);
                }
            }
        }
    }
    records.retain(|c| c.count > 0);
    let mut frames = FrameSummary {
        hitch_flagged: Some(0),
        record_bytes: Some(0),
        ..FrameSummary::default()
    };
    for (i, e) in reader.frame_entries().enumerate() {
        if verified.unreadable.get(i).copied().unwrap_or(false) {
            frames.unreadable += 1;
            continue;
        }
        frames.count += 1;
        frames.first_index.get_or_insert(e.index);
        frames.last_index = Some(e.index);
        frames.first_cpu_begin_ns.get_or_insert(e.cpu_begin_ns);
        frames.last_cpu_begin_ns = Some(e.cpu_begin_ns);
        frames.paused += u64::from(e.paused);
        frames.with_period += u64::from(e.period_ns.is_some());
        frames.with_gpu += u64::from(e.gpu_ns.is_some());
        if let Some(n) = frames.hitch_flagged.as_mut() {
            *n += u64::from(e.hitch);
        }
        if let Some(n) = frames.record_bytes.as_mut() {
            *n = n.saturating_add(e.length);
        }
    }
    // The hitch flags live in the directory: without an intact DIRE record they were
    // not recorded, which is not the same as no frame being flagged.
    if !records.iter().any(|r| r.record_type == "DIRE") {
        frames.hitch_flagged = None;
    }
    let symbols: Vec<SymbolInfo> = reader
        .symbols()
        .iter_sorted()
        .into_iter()
        .map(symbol_info)
        .collect();
    let mut symbol_kinds: BTreeMap<String, u64> = BTreeMap::new();
    for s in &symbols {
        *symbol_kinds.entry(s.kind.clone()).or_insert(0) += 1;
    }
    let topologies = reader
        .topologies()
        .iter()
        .map(|t| TopologyInfo {
            id: format!("{:016x}", t.id),
            passes: t.passes.len() as u64,
            culled_passes: t.passes.iter().filter(|p| p.culled).count() as u64,
            resources: t.resources.len() as u64,
            edges: t.edges.len() as u64,
        })
        .collect();
    let defects = verified.defects.iter().map(defect_of).collect::<Vec<_>>();
    Inspection {
        schema: INSPECT_SCHEMA.into(),
        file,
        kind: SourceKind::Sgpt,
        bytes: reader.file_len(),
        source_version: Some(u32::from(h.format_version)),
        frames,
        detail: Detail::Sgpt(Box::new(SgptDetail {
            header: HeaderInfo {
                format_version: h.format_version,
                min_reader_version: h.min_reader_version,
                flags: h.flags,
                closed: h.is_closed(),
                directory_offset: h.directory_offset,
                directory_byte_length: h.directory_byte_length,
            },
            opened_by: if reader.opened_by_directory() {
                OpenedBy::Directory
            } else {
                OpenedBy::Scan
            },
            meta: reader.meta().map(meta_info),
            records,
            symbols,
            symbol_kinds,
            topologies,
        })),
        defects,
    }
}

/// What [`verify`] found.
struct Verified {
    /// Every defect.
    defects: Vec<read::Defect>,
    /// Per located frame (file order): whether its record does not read.
    unreadable: Vec<bool>,
}

/// `read::Capture::verify`, frame by frame so that progress can be reported: the defects
/// found at open, frames that do not decode, sampled counter tracks that do not decode,
/// and symbols no intact record defines (a test holds the two equal); and which frames
/// did not read (the frames a load leaves out).
fn verify(reader: &read::Capture, progress: &mut dyn FnMut(Progress)) -> Verified {
    let mut defects = reader.defects().to_vec();
    let mut unresolved: Vec<(u32, u64)> = Vec::new();
    let total = reader.frame_count();
    let mut unreadable = vec![false; total];
    let mut reporter = Reporter::start(progress, Stage::Verifying, total as u64);
    for (i, lost) in unreadable.iter_mut().enumerate() {
        reporter.update(i as u64);
        match reader.read_frame(i) {
            Ok(frame) => {
                for id in reader.unresolved(&frame) {
                    if !unresolved.iter().any(|(u, _)| *u == id) {
                        let offset = reader.frame_entry(i).map_or(0, |e| e.offset);
                        unresolved.push((id, offset));
                    }
                }
            }
            Err(d) => {
                *lost = true;
                defects.push(d);
            }
        }
    }
    reporter.finish();
    for t in reader.counter_tracks() {
        if let Err(d) = t {
            defects.push(d);
        }
    }
    defects.extend(
        unresolved
            .into_iter()
            .map(|(id, first_offset)| read::Defect::UnresolvedSymbol { id, first_offset }),
    );
    Verified {
        defects,
        unreadable,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An inspection of a capture an importer made (a `.litecap` or a Chrome trace).
pub fn of_imported(file: String, bytes: u64, capture: &Capture) -> Inspection {
    let meta = capture.meta();
    let f = capture.frames();
    let frames = FrameSummary {
        count: capture.frame_count() as u64,
        unreadable: 0,
        first_index: f.index.first().copied(),
        last_index: f.index.last().copied(),
        paused: f.paused.iter().filter(|&&p| p).count() as u64,
        with_period: f.period_ns.iter().filter(|p| p.is_some()).count() as u64,
        with_gpu: f.gpu_ns.iter().filter(|g| g.is_some()).count() as u64,
        hitch_flagged: None,
        first_cpu_begin_ns: f.cpu_begin_ns.first().copied(),
        last_cpu_begin_ns: f.cpu_begin_ns.last().copied(),
        record_bytes: None,
    };
    Inspection {
        schema: INSPECT_SCHEMA.into(),
        file,
        kind: meta.source,
        bytes,
        source_version: meta.source_version,
        frames,
        detail: Detail::Imported(ImportedDetail {
            clock_measured: meta.clock_measured,
            threads: capture.threads().to_vec(),
            phases: capture.phases().to_vec(),
            scopes: capture
                .scopes()
                .iter()
                .map(|s| ScopeEntry {
                    name: s.name.clone(),
                    site: s.site(),
                })
                .collect(),
            passes: capture
                .passes()
                .iter()
                .map(|p| PassEntry {
                    name: p.name.clone(),
                    queue: capture.queues().get(p.queue as usize).cloned(),
                })
                .collect(),
            counters: capture
                .counters()
                .iter()
                .map(|c| CounterEntry {
                    name: c.name.clone(),
                    kind: c.kind,
                    numeric: c.numeric,
                })
                .collect(),
            marks: capture.mark_names().to_vec(),
            notes: meta.notes.clone(),
        }),
        defects: capture.defects().to_vec(),
    }
}

fn pairs(kv: &[(String, String)]) -> NamedMap<String> {
    NamedMap(kv.to_vec())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn meta_info(m: &Meta) -> MetaInfo {
    MetaInfo {
        session_id: hex(&m.session_id),
        wall_clock_start_unix_ns: m.wall_clock_start_unix_ns,
        capture_level: CaptureLevel::from_u8(m.capture_level).map_or_else(
            || format!("unknown ({})", m.capture_level),
            |l| l.name().to_owned(),
        ),
        build_id: m.build_id.clone(),
        writer: m.writer.clone(),
        // 0.0 is META's "not declared": absent, never a zero resolution.
        cpu_clock: CpuClockInfo {
            source: m.cpu_clock.source.clone(),
            resolution_ns: (m.cpu_clock.resolution_ns > 0.0).then_some(m.cpu_clock.resolution_ns),
        },
        gpu_clocks: m
            .gpu_clocks
            .iter()
            .map(|c| GpuClockInfo {
                queue: c.queue,
                timestamp_period_ns: c.timestamp_period_ns,
            })
            .collect(),
        host: pairs(&m.host),
        adapter: m.adapter.as_ref().map(|a| AdapterInfo {
            vendor: a.vendor.clone(),
            device: a.device.clone(),
            driver: a.driver.clone(),
            backend: a.backend.clone(),
            adapter_type: match a.adapter_type {
                AdapterType::Hardware => "hardware",
                AdapterType::Software => "software",
                AdapterType::Unknown => "unknown",
            }
            .to_owned(),
        }),
        features: pairs(&m.features),
        render: m.render.as_ref().map(|r| RenderInfo {
            internal_resolution: r.internal_resolution,
            output_resolution: r.output_resolution,
            upscaler: r.upscaler.clone(),
        }),
        scene_scale: m.scene_scale.clone(),
        recorder_overhead_ns_per_scope: m.recorder_overhead_ns_per_scope,
        frame_budget_ns: m.frame_budget_ns,
        situation: pairs(&m.situation),
        note: m.note.clone(),
        settings: pairs(&m.settings),
    }
}

fn symbol_info(s: &Symbol) -> SymbolInfo {
    let mut out = SymbolInfo {
        id: s.id,
        kind: String::new(),
        name: s.name.clone(),
        file: None,
        line: None,
        counter_kind: None,
        kind_byte: None,
    };
    out.kind = match &s.kind {
        SymbolKind::Scope { file, line } => {
            // An unknown call site (a topology pass's scope, an imported span) is absent, not
            // `:0`: the same rule as `ScopeInfo::site`.
            if !file.is_empty() {
                out.file = Some(file.clone());
                out.line = (*line != 0).then_some(*line);
            }
            "scope"
        }
        SymbolKind::Thread => "thread",
        SymbolKind::Pass => "pass",
        SymbolKind::Pipeline => "pipeline",
        SymbolKind::Counter(k) => {
            out.counter_kind = Some(match k {
                FmtCounterKind::Sum => CounterKind::Sum,
                FmtCounterKind::Gauge => CounterKind::Gauge,
            });
            "counter"
        }
        SymbolKind::Resource => "resource",
        SymbolKind::Phase => "phase",
        SymbolKind::Mark => "mark",
        SymbolKind::Queue => "queue",
        SymbolKind::Label => "label",
        SymbolKind::Unknown { kind, .. } => {
            out.kind_byte = Some(*kind);
            "unknown"
        }
        _ => "other",
    }
    .to_owned();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_specific_fields_sit_beside_the_common_ones() {
        let i = Inspection {
            schema: INSPECT_SCHEMA.into(),
            file: "x.litecap".into(),
            kind: SourceKind::Litecap,
            bytes: 10,
            source_version: Some(4),
            frames: FrameSummary::default(),
            detail: Detail::Imported(ImportedDetail {
                clock_measured: true,
                threads: vec![],
                phases: vec![],
                scopes: vec![ScopeEntry {
                    name: "update".into(),
                    site: None,
                }],
                passes: vec![],
                counters: vec![],
                marks: vec![],
                notes: vec![],
            }),
            defects: vec![],
        };
        let v = serde_json::to_value(&i).expect("serializes");
        assert_eq!(v["clock_measured"], true);
        assert_eq!(v["scopes"][0]["site"], serde_json::Value::Null);
        assert!(v.get("detail").is_none());
        let back: Inspection = serde_json::from_value(v).expect("parses");
        assert_eq!(back, i);
    }
}
