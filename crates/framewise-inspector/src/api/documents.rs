//! The documents an [`Inspector`] answers per request (and `/api/capture`, built from its
//! fields): rows picked, fields renamed, absolute times turned into offsets
//! from a frame's begin; every number as framewise-analysis computed it.

use axum::body::Bytes;
use framewise_analysis::hitch::Hitch;
use framewise_analysis::view::{self, SeriesKind};
use framewise_analysis::{summarize_with, FrameReadError, SummaryOptions};

use super::docs::{
    to_bytes, CaptureDoc, CompareDoc, CompareFile, CompareRow, CounterName, CpuSpan, FollowStatus,
    FrameDoc, FrameMark, FrameRef, GpuLane, GpuSpan, IssuesLink, Lane, PassTotal, RowRange,
    ScopeName, SeriesDoc, StatsDoc, StructureDoc, TopologyDoc,
};
use super::request::{no_such_row, ApiError};
use super::Inspector;

/// `to − from` in ns, signed: a span on another thread may begin before the frame did.
fn offset_ns(at_ns: u64, from_ns: u64) -> i64 {
    let d = i128::from(at_ns) - i128::from(from_ns);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

impl Inspector {
    /// `/api/capture`, with where `--follow` stands.
    pub(super) fn capture_doc(&self, follow: Option<&FollowStatus>) -> Vec<u8> {
        let c = &self.capture;
        let meta = c.meta();
        let mut passes: Vec<&str> = Vec::new();
        for p in c.passes() {
            if !passes.contains(&p.name.as_str()) {
                passes.push(&p.name);
            }
        }
        to_bytes(&CaptureDoc {
            schema: "framewise.inspector.capture/1",
            file: &self.file,
            file_bytes: self.file_bytes.as_ref().ok().copied(),
            file_bytes_reason: self.file_bytes.as_ref().err().map(String::as_str),
            source: meta.source,
            source_version: meta.source_version,
            level: meta.level.as_deref(),
            build: meta.build.as_deref(),
            adapter: meta.adapter,
            adapter_name: meta.adapter_name.as_deref(),
            grade: c.grade(),
            frame_count: c.frame_count(),
            frame_budget_ns: c.frame_budget_ns(),
            gpu_timed: c.gpu_timed(),
            dropped_spans: c.dropped_spans(),
            recovered: c.defects().iter().any(|d| d.kind.is_recovery()),
            defects: c.defects(),
            notes: &meta.notes,
            threads: c.threads(),
            queues: c.queues(),
            phases: c.phases(),
            scopes: c
                .scopes()
                .iter()
                .map(|s| ScopeName {
                    name: &s.name,
                    site: s.site(),
                })
                .collect(),
            passes,
            counters: c
                .counters()
                .iter()
                .map(|k| CounterName {
                    name: &k.name,
                    kind: k.kind,
                })
                .collect(),
            compare: self
                .compared
                .as_ref()
                .map(|(file, frame_count)| CompareFile {
                    file,
                    frame_count: *frame_count,
                }),
            follow,
            issues: self.project.as_ref().map(|dir| IssuesLink {
                dir: dir.display().to_string(),
            }),
        })
    }

    pub(super) fn hitch_of(&self, row: usize) -> Option<&Hitch> {
        self.hitch_rows
            .get(&row)
            .and_then(|&at| self.hitches.hitches.get(at))
    }

    pub(super) fn frame_doc(&self, row: usize) -> Result<Vec<u8>, ApiError> {
        let c = &self.capture;
        let r = c.frames().row(row).ok_or_else(|| no_such_row(self, row))?;
        let spans = self.frames.frame_spans(c, row).map_err(|e| match e {
            FrameReadError::NoSuchRow { .. } => no_such_row(self, row),
            other => ApiError::internal(other.to_string()),
        })?;
        let begin = r.cpu_begin_ns;
        let mut lanes: Vec<(u32, Vec<CpuSpan<'_>>)> = Vec::new();
        for s in &spans.cpu {
            let scope = c.scopes().get(s.scope as usize);
            let span = CpuSpan {
                scope: scope.map_or("?", |s| s.name.as_str()),
                site: scope.and_then(|s| s.site()),
                depth: s.depth,
                start_ns: offset_ns(s.start_ns, begin),
                dur_ns: s.end_ns.saturating_sub(s.start_ns),
            };
            match lanes.iter_mut().find(|(t, _)| *t == s.thread) {
                Some((_, v)) => v.push(span),
                None => lanes.push((s.thread, vec![span])),
            }
        }
        lanes.sort_by_key(|(t, _)| *t);
        let gpu = spans
            .gpu
            .iter()
            .map(|g| GpuSpan {
                pass: c
                    .passes()
                    .get(g.pass as usize)
                    .map_or("?", |p| p.name.as_str()),
                depth: g.depth,
                start_ns: offset_ns(g.nominal_start_ns, begin),
                dur_ns: g.nominal_end_ns.saturating_sub(g.nominal_start_ns),
            })
            .collect();
        let totals = view::frame_totals(c, row);
        let marks = c
            .marks()
            .iter()
            .filter(|m| m.frame_row as usize == row)
            .map(|m| FrameMark {
                name: c
                    .mark_names()
                    .get(m.name as usize)
                    .map_or("?", String::as_str),
                thread: m
                    .thread
                    .and_then(|t| c.threads().get(t as usize))
                    .map(String::as_str),
                at_ns: offset_ns(m.at_ns, begin),
                note: m.user.as_ref().map(|u| u.note.as_str()),
            })
            .collect();
        Ok(to_bytes(&FrameDoc {
            schema: "framewise.inspector.frame/1",
            row,
            index: r.index,
            phase: r
                .phase
                .and_then(|p| c.phases().get(p as usize))
                .map(String::as_str),
            paused: r.paused,
            begin_ns: r.cpu_begin_ns,
            end_ns: r.cpu_end_ns,
            period_ns: r.period_ns,
            work_ns: r.work_ns(),
            gpu_ns: r.gpu_ns,
            dropped_spans: c.dropped_spans_in(row),
            lanes: lanes
                .into_iter()
                .map(|(t, spans)| Lane {
                    thread: c.threads().get(t as usize).map_or("?", String::as_str),
                    spans,
                })
                .collect(),
            gpu: GpuLane {
                nominal: true,
                spans: gpu,
            },
            scopes: &totals.scopes,
            passes: totals
                .passes
                .iter()
                .map(|p| PassTotal {
                    name: &p.name,
                    calls: p.calls,
                    total_ns: p.total_ns,
                })
                .collect(),
            counters: &totals.counters,
            marks,
            hitch: self.hitch_of(row),
        }))
    }

    pub(super) fn stats_doc(
        &self,
        from: Option<usize>,
        to: Option<usize>,
    ) -> Result<Bytes, ApiError> {
        let n = self.capture.frame_count();
        let (from_row, to_row) = (from.unwrap_or(0), to.unwrap_or(n));
        if from_row > to_row || to_row > n {
            return Err(ApiError::bad(format!(
                "rows {from_row}..{to_row} are not a range of this capture's {n} frames (0 ≤ from ≤ to ≤ {n})"
            )));
        }
        if from.is_none() && to.is_none() {
            return Ok(self.stats_doc.clone());
        }
        let summary = summarize_with(
            &self.capture,
            &SummaryOptions::new().with_rows(from_row..to_row),
        );
        Ok(Bytes::from(to_bytes(&StatsDoc {
            summary: &summary,
            range: RowRange {
                from: from_row,
                to: to_row,
            },
        })))
    }

    pub(super) fn structure_doc(&self, row: usize) -> Vec<u8> {
        let c = &self.capture;
        let level_below_1 = matches!(c.meta().level.as_deref(), Some("timing"));
        let found = c.topology_of(row).map(|id| (id, c.topology_detail(id)));
        let (topology, reason) = match found {
            Some((id, Some(t))) => (
                Some(TopologyDoc {
                    id: format!("{id:016x}"),
                    passes: &t.passes,
                    resources: &t.resources,
                    edges: &t.edges,
                }),
                None,
            ),
            Some((id, None)) => (None, Some(format!(
                "the frame ran topology {id:016x}, whose record was not found intact in the file"
            ))),
            None if level_below_1 => (None, Some(
                "the capture level is timing (0): frame graphs are recorded from level 1 (structure)".to_owned()
            )),
            None => (None, Some("this frame declared no frame-graph topology".to_owned())),
        };
        to_bytes(&StructureDoc {
            schema: "framewise.inspector.structure/1",
            row,
            topology,
            reason,
        })
    }

    pub(super) fn series_doc(&self, kind: SeriesKind, name: &str) -> Option<Vec<u8>> {
        let values = view::series(&self.capture, kind, name)?;
        Some(to_bytes(&SeriesDoc {
            schema: "framewise.inspector.series/1",
            kind,
            name,
            unit: kind.unit(),
            values,
        }))
    }

    pub(super) fn compare_doc(&self, a: usize, b: usize) -> Option<Vec<u8>> {
        let c = &self.capture;
        let rows = view::compare_frames(c, a, b)?;
        let frame = |row: usize| FrameRef {
            row,
            index: c.frames().index.get(row).copied(),
        };
        Some(to_bytes(&CompareDoc {
            schema: "framewise.inspector.compare/1",
            a: frame(a),
            b: frame(b),
            rows: rows
                .into_iter()
                .map(|r| CompareRow {
                    kind: r.kind,
                    name: r.name,
                    a: r.a,
                    b: r.b,
                    delta: r.delta,
                    direction: "lower-is-better",
                })
                .collect(),
        }))
    }
}
