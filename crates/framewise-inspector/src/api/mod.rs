//! `/api/*`: the documents of docs/INSPECTOR.md, each shaped from what framewise-analysis
//! computed. Nothing here derives a number: the handlers pick rows, rename fields, convert
//! absolute times to offsets from a frame's begin, and serialize.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use framewise_analysis::hitch::Hitch;
use framewise_analysis::view::{self, SeriesKind};
use framewise_analysis::{
    diff, find_hitches, load, summarize, summarize_with, Capture, FrameReadError, FrameSource,
    HitchOptions, HitchReport, LoadError, LoadOptions, SummaryOptions,
};

mod docs;

pub(crate) use docs::FollowStatus;
use docs::{
    to_bytes, CaptureDoc, CompareDoc, CompareFile, CompareRow, CounterName, CpuSpan, ErrorDoc,
    FrameDoc, FrameMark, FrameRef, GpuLane, GpuSpan, Lane, PassTotal, RowRange, ScopeName, Seq,
    SeriesDoc, StatsDoc, StripDoc, StructureDoc, TopologyDoc,
};

use crate::Token;

/// A capture, read once through framewise-analysis, and what the API serves from it.
///
/// Memory: an `.sgpt` capture is held as its per-frame aggregates (what hitches,
/// statistics, series and comparisons read), without its spans: `/api/frame` reads the
/// one frame's spans from the file, kept open, when it is asked for
/// ([`framewise_analysis::load::open_with_frame_source`]). Other kinds are small and keep
/// their spans in memory. The documents that cover the whole capture (`/api/capture`,
/// `/api/strip`, `/api/stats` without a range, `/api/hitches`, `/api/diff`) are computed
/// once, here, and served as bytes.
pub struct Inspector {
    capture: Capture,
    /// Where `/api/frame` gets a frame's spans.
    frames: FrameSource,
    hitches: HitchReport,
    /// Capture row → position in `hitches.hitches`.
    hitch_rows: HashMap<usize, usize>,
    /// The path as the user gave it, and its size when loaded.
    file: String,
    file_bytes: u64,
    /// `--compare`'s file and frame count.
    compared: Option<(String, usize)>,
    /// Documents serialized once per load; `Bytes`, so every answer shares them instead of
    /// copying (the strip of an hour capture is 14 MB). `stats_doc` is `/api/stats` over
    /// every row.
    strip_doc: Bytes,
    stats_doc: Bytes,
    hitches_doc: Bytes,
    diff_doc: Option<Bytes>,
    /// `/api/comparison`, beside `/api/diff`.
    comparison_doc: Option<Bytes>,
}

/// A second capture to compare against (`framewise view A --compare B`).
pub struct Compared {
    /// The path as the user gave it.
    pub file: String,
    /// The capture (a summary-only load is enough).
    pub capture: Capture,
}

/// `to − from` in ns, signed: a span on another thread may begin before the frame did.
fn offset_ns(at_ns: u64, from_ns: u64) -> i64 {
    let d = i128::from(at_ns) - i128::from(from_ns);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

impl Inspector {
    /// Loads `capture` (an `.sgpt` without its spans, read a frame at a time on demand;
    /// another kind with them) and, when given, `compare` (summary only) through
    /// framewise-analysis.
    pub fn open(capture: &Path, compare: Option<&Path>) -> Result<Self, LoadError> {
        let (main, frames) = load::open_with_frame_source(capture, &LoadOptions::new(), |_| {})?;
        let compared = match compare {
            Some(path) => Some(Compared {
                file: path.display().to_string(),
                capture: load::open(path, &LoadOptions::new().with_summary_only(true))?,
            }),
            None => None,
        };
        Ok(Self::with_frames(
            main,
            frames,
            &capture.display().to_string(),
            compared,
        ))
    }

    /// Serves an already loaded capture (`file`: its path as the user gave it), its spans
    /// from its own span table: load it with spans ([`LoadOptions::with_spans`]) or
    /// `/api/frame` has no lanes to show.
    pub fn new(capture: Capture, file: &str, compare: Option<Compared>) -> Self {
        Self::with_frames(capture, FrameSource::kept(), file, compare)
    }

    /// Serves an already loaded capture whose frames' spans come from `frames` (as
    /// [`framewise_analysis::load::open_with_frame_source`] returned them with it).
    pub fn with_frames(
        capture: Capture,
        frames: FrameSource,
        file: &str,
        compare: Option<Compared>,
    ) -> Self {
        Self::build(capture, frames, file, compare.as_ref())
    }

    /// [`Self::with_frames`] with the compared capture borrowed: a followed capture is
    /// rebuilt on every reload against the same one.
    pub(crate) fn build(
        capture: Capture,
        frames: FrameSource,
        file: &str,
        compare: Option<&Compared>,
    ) -> Self {
        let hitches = find_hitches(&capture, &HitchOptions::default());
        let hitch_rows = hitches
            .hitches
            .iter()
            .enumerate()
            .filter_map(|(at, h)| capture.row_of_index(h.frame).map(|row| (row, at)))
            .collect();
        let file_bytes = std::fs::metadata(file).map_or(0, |m| m.len());
        let summary = summarize(&capture);
        let (diff_doc, comparison_doc) = compare
            .map(|other| {
                let theirs = summarize(&other.capture);
                let d = diff(&summary, &theirs);
                let doc = match diff::diff_json(&d, (file, &summary), (&other.file, &theirs)) {
                    Ok(v) => Bytes::from(to_bytes(&v)),
                    Err(e) => Bytes::from(to_bytes(&ErrorDoc {
                        error: &format!("serializing: {e}"),
                    })),
                };
                let ranked = crate::comparison::comparison_bytes(
                    &d,
                    (file, &summary),
                    (&other.file, &theirs),
                );
                (doc, ranked)
            })
            .unzip();
        let stats_doc = Bytes::from(to_bytes(&StatsDoc {
            summary: &summary,
            range: RowRange {
                from: 0,
                to: capture.frame_count(),
            },
        }));
        let mut inspector = Self {
            hitches_doc: Bytes::from(to_bytes(&hitches)),
            stats_doc,
            hitches,
            hitch_rows,
            file: file.to_owned(),
            file_bytes,
            compared: compare.map(|c| (c.file.clone(), c.capture.frame_count())),
            strip_doc: Bytes::new(),
            diff_doc,
            comparison_doc,
            capture,
            frames,
        };
        inspector.strip_doc = Bytes::from(inspector.strip_bytes());
        inspector
    }

    /// The capture it serves.
    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    /// `/api/comparison`'s bytes, when a capture is compared.
    pub(crate) fn comparison_doc(&self) -> Option<&Bytes> {
        self.comparison_doc.as_ref()
    }

    /// Where a frame's spans are read from.
    pub(crate) fn frame_source(&self) -> &FrameSource {
        &self.frames
    }

    /// `/api/capture`, with where `--follow` stands.
    fn capture_doc(&self, follow: Option<&FollowStatus>) -> Vec<u8> {
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
            file_bytes: self.file_bytes,
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
        })
    }

    /// `/api/strip`, serialized straight from the frame table's columns: one value per
    /// row and column is written, none is built first (216,000 rows for an hour at 60
    /// Hz). Its fields are declared in name order, so it is written as [`to_bytes`] would
    /// write it.
    fn strip_bytes(&self) -> Vec<u8> {
        let c = &self.capture;
        let f = c.frames();
        let first = f.cpu_begin_ns.first().copied().unwrap_or(0);
        let doc = StripDoc {
            begin_ns: Seq(|| f.cpu_begin_ns.iter().map(move |&b| b.saturating_sub(first))),
            budget_ns: self.budget_ns(),
            dropped_spans: Seq(|| (0..f.len()).map(|r| c.dropped_spans_in(r))),
            gpu_ns: &f.gpu_ns,
            hitch: Seq(|| (0..f.len()).map(|r| self.hitch_rows.contains_key(&r))),
            index: &f.index,
            paused: &f.paused,
            period_ns: &f.period_ns,
            phase: Seq(|| {
                f.phase
                    .iter()
                    .map(|p| p.and_then(|p| c.phases().get(p as usize)))
            }),
            schema: "framewise.inspector.strip/1",
            work_ns: Seq(|| f.rows().map(|r| r.work_ns())),
        };
        serde_json::to_vec(&doc)
            .unwrap_or_else(|e| format!("{{\"error\": \"serializing: {e}\"}}").into_bytes())
    }

    /// The budget the hitch rule judged against, ns (the capture's, else 60 Hz).
    fn budget_ns(&self) -> u64 {
        self.capture.frame_budget_ns()
    }

    fn hitch_of(&self, row: usize) -> Option<&Hitch> {
        self.hitch_rows
            .get(&row)
            .and_then(|&at| self.hitches.hitches.get(at))
    }

    fn frame_doc(&self, row: usize) -> Result<Vec<u8>, ApiError> {
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

    fn stats_doc(&self, from: Option<usize>, to: Option<usize>) -> Result<Bytes, ApiError> {
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

    fn structure_doc(&self, row: usize) -> Vec<u8> {
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

    fn series_doc(&self, kind: SeriesKind, name: &str) -> Option<Vec<u8>> {
        let values = view::series(&self.capture, kind, name)?;
        Some(to_bytes(&SeriesDoc {
            schema: "framewise.inspector.series/1",
            kind,
            name,
            unit: kind.unit(),
            values,
        }))
    }

    fn compare_doc(&self, a: usize, b: usize) -> Option<Vec<u8>> {
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

/// An API error: a status and `{"error": "one line"}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    /// The server could not answer (the capture's file changed under it): 500.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = to_bytes(&ErrorDoc {
            error: &self.message,
        });
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response()
    }
}

pub(crate) fn json_bytes(body: impl Into<Bytes>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body.into()).into_response()
}

pub(crate) type Params = Result<Query<Vec<(String, String)>>, QueryRejection>;

/// The query's parameters, or a 400 when the query string does not parse.
pub(crate) fn params(query: Params) -> Result<Vec<(String, String)>, ApiError> {
    match query {
        Ok(Query(p)) => Ok(p),
        Err(e) => Err(ApiError::bad(format!("bad query string: {e}"))),
    }
}

pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A row parameter: missing or not a number is 400; a number is returned as is (the
/// caller decides whether the row exists, 404).
pub(crate) fn row_param(
    params: &[(String, String)],
    name: &str,
) -> Result<Option<usize>, ApiError> {
    match param(params, name) {
        None => Ok(None),
        Some(text) => text.parse::<usize>().map(Some).map_err(|_| {
            ApiError::bad(format!(
                "{name}={text:?} is not a row (a whole number from 0)"
            ))
        }),
    }
}

fn required_row(params: &[(String, String)], name: &str) -> Result<usize, ApiError> {
    row_param(params, name)?.ok_or_else(|| ApiError::bad(format!("missing parameter {name}")))
}

fn no_such_row(inspector: &Inspector, row: usize) -> ApiError {
    ApiError::not_found(format!(
        "no frame at row {row}: the capture has {} frames (rows 0..{})",
        inspector.capture.frame_count(),
        inspector.capture.frame_count()
    ))
}

/// What one request reads: the inspector and, when following, where the follow stands.
/// Swapped whole; a request keeps the snapshot it started with.
pub(crate) struct Snapshot {
    pub(crate) inspector: Arc<Inspector>,
    pub(crate) follow: Option<FollowStatus>,
}

impl std::ops::Deref for Snapshot {
    type Target = Inspector;

    fn deref(&self) -> &Inspector {
        &self.inspector
    }
}

/// The state the routes serve: one snapshot, replaced atomically by the follow thread.
/// The lock is held only to clone or replace the pointer, never during a reload, so a
/// reader never waits for one.
pub(crate) struct Live(RwLock<Arc<Snapshot>>);

impl Live {
    pub(crate) fn new(snapshot: Snapshot) -> Self {
        Self(RwLock::new(Arc::new(snapshot)))
    }

    pub(crate) fn current(&self) -> Arc<Snapshot> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn replace(&self, snapshot: Snapshot) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
    }
}

type Shared = State<Arc<Live>>;

async fn capture(State(live): Shared) -> Response {
    let s = live.current();
    json_bytes(s.capture_doc(s.follow.as_ref()))
}

async fn strip(State(live): Shared) -> Response {
    let s = live.current();
    json_bytes(s.strip_doc.clone())
}

async fn frame(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let row = required_row(&p, "row")?;
    Ok(json_bytes(s.frame_doc(row)?))
}

async fn stats(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    Ok(json_bytes(
        s.stats_doc(row_param(&p, "from")?, row_param(&p, "to")?)?,
    ))
}

async fn hitches(State(live): Shared) -> Response {
    let s = live.current();
    json_bytes(s.hitches_doc.clone())
}

async fn structure(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let row = required_row(&p, "row")?;
    if row >= s.capture.frame_count() {
        return Err(no_such_row(&s, row));
    }
    Ok(json_bytes(s.structure_doc(row)))
}

async fn series(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let kind_text = param(&p, "kind").ok_or_else(|| ApiError::bad("missing parameter kind"))?;
    let kind = SeriesKind::from_name(kind_text).ok_or_else(|| {
        ApiError::bad(format!(
            "kind={kind_text:?} is not one of scope, pass, counter"
        ))
    })?;
    let name = param(&p, "name").ok_or_else(|| ApiError::bad("missing parameter name"))?;
    let doc = s.series_doc(kind, name).ok_or_else(|| {
        ApiError::not_found(format!("the capture has no {kind_text} named {name:?}"))
    })?;
    Ok(json_bytes(doc))
}

async fn compare(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let a = required_row(&p, "a")?;
    let b = required_row(&p, "b")?;
    for row in [a, b] {
        if row >= s.capture.frame_count() {
            return Err(no_such_row(&s, row));
        }
    }
    let doc = s.compare_doc(a, b).ok_or_else(|| no_such_row(&s, a))?;
    Ok(json_bytes(doc))
}

async fn diff_route(State(live): Shared) -> Result<Response, ApiError> {
    let s = live.current();
    match &s.diff_doc {
        Some(doc) => Ok(json_bytes(doc.clone())),
        None => Err(ApiError::not_found(
            "no capture to diff against: start the inspector with --compare OTHER",
        )),
    }
}

/// Answers 403 to a request without this run's token (query `token` or header
/// `X-Framewise-Token`).
async fn require_token(
    State(token): State<Arc<Token>>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let from_header = headers
        .get("x-framewise-token")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| token.matches(v));
    let from_query = request.uri().query().is_some_and(|q| {
        q.split('&')
            .filter_map(|pair| pair.strip_prefix("token="))
            .any(|v| token.matches(v))
    });
    if from_header || from_query {
        next.run(request).await
    } else {
        ApiError {
            status: StatusCode::FORBIDDEN,
            message: "missing or wrong token: open the address `framewise view` printed".into(),
        }
        .into_response()
    }
}

pub(crate) fn routes(live: Arc<Live>, token: Token) -> Router {
    Router::new()
        .route("/api/capture", get(capture))
        .route("/api/strip", get(strip))
        .route("/api/frame", get(frame))
        .route("/api/stats", get(stats))
        .route("/api/hitches", get(hitches))
        .route("/api/structure", get(structure))
        .route("/api/series", get(series))
        .route("/api/compare", get(compare))
        .route("/api/diff", get(diff_route))
        .merge(crate::flame::routes())
        .merge(crate::search::routes())
        .merge(crate::window::routes())
        .merge(crate::comparison::routes())
        .with_state(live)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(token),
            require_token,
        ))
}
