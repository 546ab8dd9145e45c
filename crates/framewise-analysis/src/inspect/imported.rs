//! Inspecting a capture an importer made (a `.litecap` or a Chrome trace): the frame
//! table summarized, and the threads, phases, scopes, passes, counters, marks and notes
//! the importer named, with its defects.

use crate::model::Capture;

use super::schema::{
    CounterEntry, Detail, FrameSummary, ImportedDetail, Inspection, PassEntry, ScopeEntry,
    INSPECT_SCHEMA,
};

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
