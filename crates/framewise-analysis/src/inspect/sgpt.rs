//! Inspecting an `.sgpt` through the format crate's reader: its header, how it was
//! opened, intact records by type, the frame entries summarized, symbols, topologies and
//! META as the JSON states them, and every frame decoded (with progress) so that a frame
//! that does not read is a defect and is left out of the frame counts.

use std::collections::BTreeMap;

use framewise_format::container::fourcc_name;
use framewise_format::model::{
    AdapterType, CaptureLevel, CounterKind as FmtCounterKind, Meta, Symbol, SymbolKind,
};
use framewise_format::read;

use crate::load::sgpt::defect_of;
use crate::load::{Progress, Reporter, Stage};
use crate::model::{CounterKind, SourceKind};
use crate::summary::NamedMap;

use super::schema::{
    AdapterInfo, CpuClockInfo, Detail, FrameSummary, GpuClockInfo, HeaderInfo, Inspection,
    MetaInfo, OpenedBy, RecordCount, RenderInfo, SgptDetail, SymbolInfo, TopologyInfo,
    INSPECT_SCHEMA,
};

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
/// found at open, frames that do not decode, sampled counter tracks and census records that
/// do not decode, and symbols no intact record defines (a test holds the two equal); and which frames
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
    for c in reader.censuses() {
        if let Err(d) = c {
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
