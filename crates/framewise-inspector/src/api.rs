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
use serde_json::{json, Map, Value};

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
    /// `/api/capture` without its `follow` member (added per request: it changes between
    /// reloads).
    capture_doc: Map<String, Value>,
    /// Documents serialized once per load; `Bytes`, so every answer shares them instead of
    /// copying (the strip of an hour capture is 14 MB).
    strip_doc: Bytes,
    stats_doc: Value,
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

fn to_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value)
        .unwrap_or_else(|e| format!("{{\"error\": \"serializing: {e}\"}}").into_bytes())
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_else(|e| json!({"error": format!("serializing: {e}")}))
}

/// `Some(v)` as `v`, `None` as absent: the object gets the key only when there is a value.
fn put_opt<T: serde::Serialize>(obj: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(v) = value {
        obj.insert(key.to_owned(), to_json(&v));
    }
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
                    Err(e) => Bytes::from(to_bytes(&json!({"error": format!("serializing: {e}")}))),
                };
                let ranked = crate::comparison::comparison_bytes(
                    &d,
                    (file, &summary),
                    (&other.file, &theirs),
                );
                (doc, ranked)
            })
            .unzip();
        let mut inspector = Self {
            hitches_doc: Bytes::from(to_bytes(&to_json(&hitches))),
            stats_doc: to_json(&summary),
            hitches,
            hitch_rows,
            capture_doc: Map::new(),
            strip_doc: Bytes::new(),
            diff_doc,
            comparison_doc,
            capture,
            frames,
        };
        inspector.strip_doc = Bytes::from(inspector.strip_bytes());
        inspector.capture_doc = inspector.capture_json(file, file_bytes, compare);
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

    fn capture_json(
        &self,
        file: &str,
        file_bytes: u64,
        compare: Option<&Compared>,
    ) -> Map<String, Value> {
        let c = &self.capture;
        let meta = c.meta();
        let mut obj = Map::new();
        obj.insert("schema".into(), json!("framewise.inspector.capture/1"));
        obj.insert("file".into(), json!(file));
        obj.insert("file_bytes".into(), json!(file_bytes));
        obj.insert("source".into(), to_json(&meta.source));
        put_opt(&mut obj, "source_version", meta.source_version);
        put_opt(&mut obj, "level", meta.level.as_ref());
        put_opt(&mut obj, "build", meta.build.as_ref());
        obj.insert("adapter".into(), to_json(&meta.adapter));
        put_opt(&mut obj, "adapter_name", meta.adapter_name.as_ref());
        obj.insert("grade".into(), to_json(&c.grade()));
        obj.insert("frame_count".into(), json!(c.frame_count()));
        obj.insert("frame_budget_ns".into(), json!(c.frame_budget_ns()));
        obj.insert("gpu_timed".into(), json!(c.gpu_timed()));
        obj.insert("dropped_spans".into(), json!(c.dropped_spans()));
        obj.insert(
            "recovered".into(),
            json!(c.defects().iter().any(|d| d.kind.is_recovery())),
        );
        obj.insert("defects".into(), to_json(&c.defects()));
        obj.insert("notes".into(), to_json(&meta.notes));
        obj.insert("threads".into(), to_json(&c.threads()));
        obj.insert("queues".into(), to_json(&c.queues()));
        obj.insert("phases".into(), to_json(&c.phases()));
        let scopes: Vec<Value> = c
            .scopes()
            .iter()
            .map(|s| {
                let mut o = Map::new();
                o.insert("name".into(), json!(s.name));
                put_opt(&mut o, "site", s.site());
                Value::Object(o)
            })
            .collect();
        obj.insert("scopes".into(), Value::Array(scopes));
        let mut passes: Vec<&str> = Vec::new();
        for p in c.passes() {
            if !passes.contains(&p.name.as_str()) {
                passes.push(&p.name);
            }
        }
        obj.insert("passes".into(), to_json(&passes));
        let counters: Vec<Value> = c
            .counters()
            .iter()
            .map(|k| json!({"name": k.name, "kind": k.kind}))
            .collect();
        obj.insert("counters".into(), Value::Array(counters));
        if let Some(other) = compare {
            obj.insert(
                "compare".into(),
                json!({"file": other.file, "frame_count": other.capture.frame_count()}),
            );
        }
        obj
    }

    /// `/api/strip`, serialized straight from the frame table's columns: one value per
    /// row and column is written, none is built first (216,000 rows for an hour at 60
    /// Hz). The keys are in the order a `serde_json::Map` keeps them (sorted), as they
    /// always were.
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

    fn frame_json(&self, row: usize) -> Result<Value, ApiError> {
        let c = &self.capture;
        let r = c.frames().row(row).ok_or_else(|| no_such_row(self, row))?;
        let spans = self.frames.frame_spans(c, row).map_err(|e| match e {
            FrameReadError::NoSuchRow { .. } => no_such_row(self, row),
            other => ApiError::internal(other.to_string()),
        })?;
        let begin = r.cpu_begin_ns;
        let mut obj = Map::new();
        obj.insert("schema".into(), json!("framewise.inspector.frame/1"));
        obj.insert("row".into(), json!(row));
        obj.insert("index".into(), json!(r.index));
        put_opt(
            &mut obj,
            "phase",
            r.phase.and_then(|p| c.phases().get(p as usize)),
        );
        obj.insert("paused".into(), json!(r.paused));
        obj.insert("begin_ns".into(), json!(r.cpu_begin_ns));
        obj.insert("end_ns".into(), json!(r.cpu_end_ns));
        put_opt(&mut obj, "period_ns", r.period_ns);
        obj.insert("work_ns".into(), json!(r.work_ns()));
        put_opt(&mut obj, "gpu_ns", r.gpu_ns);
        obj.insert("dropped_spans".into(), json!(c.dropped_spans_in(row)));

        let mut lanes: Vec<(u32, Vec<Value>)> = Vec::new();
        let mut gpu: Vec<Value> = Vec::new();
        {
            for s in &spans.cpu {
                let mut o = Map::new();
                let scope = c.scopes().get(s.scope as usize);
                o.insert(
                    "scope".into(),
                    json!(scope.map_or("?", |s| s.name.as_str())),
                );
                put_opt(&mut o, "site", scope.and_then(|s| s.site()));
                o.insert("depth".into(), json!(s.depth));
                o.insert("start_ns".into(), json!(offset_ns(s.start_ns, begin)));
                o.insert("dur_ns".into(), json!(s.end_ns.saturating_sub(s.start_ns)));
                match lanes.iter_mut().find(|(t, _)| *t == s.thread) {
                    Some((_, v)) => v.push(Value::Object(o)),
                    None => lanes.push((s.thread, vec![Value::Object(o)])),
                }
            }
            for g in &spans.gpu {
                gpu.push(json!({
                    "pass": c.passes().get(g.pass as usize).map_or("?", |p| p.name.as_str()),
                    "depth": g.depth,
                    "start_ns": offset_ns(g.nominal_start_ns, begin),
                    "dur_ns": g.nominal_end_ns.saturating_sub(g.nominal_start_ns),
                }));
            }
        }
        lanes.sort_by_key(|(t, _)| *t);
        let lanes: Vec<Value> = lanes
            .into_iter()
            .map(|(t, spans)| {
                json!({
                    "thread": c.threads().get(t as usize).map_or("?", String::as_str),
                    "spans": spans,
                })
            })
            .collect();
        obj.insert("lanes".into(), Value::Array(lanes));
        obj.insert("gpu".into(), json!({"nominal": true, "spans": gpu}));

        let totals = view::frame_totals(c, row);
        obj.insert("scopes".into(), to_json(&totals.scopes));
        let passes: Vec<Value> = totals
            .passes
            .iter()
            .map(|p| json!({"name": p.name, "calls": p.calls, "total_ns": p.total_ns}))
            .collect();
        obj.insert("passes".into(), Value::Array(passes));
        obj.insert("counters".into(), to_json(&totals.counters));
        let marks: Vec<Value> = c
            .marks()
            .iter()
            .filter(|m| m.frame_row as usize == row)
            .map(|m| {
                let mut o = Map::new();
                o.insert(
                    "name".into(),
                    json!(c
                        .mark_names()
                        .get(m.name as usize)
                        .map_or("?", String::as_str)),
                );
                put_opt(
                    &mut o,
                    "thread",
                    m.thread.and_then(|t| c.threads().get(t as usize)),
                );
                o.insert("at_ns".into(), json!(offset_ns(m.at_ns, begin)));
                put_opt(&mut o, "note", m.user.as_ref().map(|u| &u.note));
                Value::Object(o)
            })
            .collect();
        obj.insert("marks".into(), Value::Array(marks));
        obj.insert(
            "hitch".into(),
            self.hitch_of(row).map_or(Value::Null, to_json),
        );
        Ok(Value::Object(obj))
    }

    fn stats_json(&self, from: Option<usize>, to: Option<usize>) -> Result<Value, ApiError> {
        let n = self.capture.frame_count();
        let (from_row, to_row) = (from.unwrap_or(0), to.unwrap_or(n));
        if from_row > to_row || to_row > n {
            return Err(ApiError::bad(format!(
                "rows {from_row}..{to_row} are not a range of this capture's {n} frames (0 ≤ from ≤ to ≤ {n})"
            )));
        }
        let mut doc = if from.is_none() && to.is_none() {
            self.stats_doc.clone()
        } else {
            to_json(&summarize_with(
                &self.capture,
                &SummaryOptions::new().with_rows(from_row..to_row),
            ))
        };
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("range".into(), json!({"from": from_row, "to": to_row}));
        }
        Ok(doc)
    }

    fn structure_json(&self, row: usize) -> Value {
        let c = &self.capture;
        let mut obj = Map::new();
        obj.insert("schema".into(), json!("framewise.inspector.structure/1"));
        obj.insert("row".into(), json!(row));
        let level_below_1 = matches!(c.meta().level.as_deref(), Some("timing"));
        let found = c.topology_of(row).map(|id| (id, c.topology_detail(id)));
        let reason = match found {
            Some((id, Some(t))) => {
                let mut topo = to_json(t);
                if let Some(o) = topo.as_object_mut() {
                    o.insert("id".into(), json!(format!("{id:016x}")));
                }
                obj.insert("topology".into(), topo);
                return Value::Object(obj);
            }
            Some((id, None)) => format!(
                "the frame ran topology {id:016x}, whose record was not found intact in the file"
            ),
            None if level_below_1 => {
                "the capture level is timing (0): frame graphs are recorded from level 1 (structure)".to_owned()
            }
            None => "this frame declared no frame-graph topology".to_owned(),
        };
        obj.insert("topology".into(), Value::Null);
        obj.insert("reason".into(), json!(reason));
        Value::Object(obj)
    }

    fn series_json(&self, kind: SeriesKind, name: &str) -> Option<Value> {
        let values = view::series(&self.capture, kind, name)?;
        Some(json!({
            "schema": "framewise.inspector.series/1",
            "kind": kind,
            "name": name,
            "unit": kind.unit(),
            "values": values,
        }))
    }

    fn compare_json(&self, a: usize, b: usize) -> Option<Value> {
        let c = &self.capture;
        let rows = view::compare_frames(c, a, b)?;
        let index = |r: usize| c.frames().index.get(r).copied();
        let rows: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({
                    "kind": r.kind, "name": r.name, "a": r.a, "b": r.b, "delta": r.delta,
                    "direction": "lower-is-better",
                })
            })
            .collect();
        Some(json!({
            "schema": "framewise.inspector.compare/1",
            "a": {"row": a, "index": index(a)},
            "b": {"row": b, "index": index(b)},
            "rows": rows,
        }))
    }
}

/// `/api/strip`'s document, its fields in the order serde_json's map sorts them.
#[derive(serde::Serialize)]
struct StripDoc<'a, B, D, H, P, W> {
    begin_ns: B,
    budget_ns: u64,
    dropped_spans: D,
    gpu_ns: &'a [Option<u64>],
    hitch: H,
    index: &'a [u64],
    paused: &'a [bool],
    period_ns: &'a [Option<u64>],
    phase: P,
    schema: &'a str,
    work_ns: W,
}

/// A JSON array of the items an iterator yields, serialized as they come.
struct Seq<F>(F);

impl<F, I> serde::Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: serde::Serialize,
{
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
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
        let body = to_bytes(&json!({"error": self.message}));
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

fn json_value(value: &Value) -> Response {
    json_bytes(to_bytes(value))
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

/// Where `framewise view --follow` stands (`/api/capture`'s `follow`).
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct FollowStatus {
    /// Successful reloads so far (0: the load at startup).
    pub(crate) generation: u64,
    /// The writer closed the file: polling stopped.
    pub(crate) closed: bool,
    /// Why the latest reload failed, while the last good state is served; `None` once one
    /// succeeds.
    pub(crate) last_error: Option<String>,
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
    let mut doc = s.capture_doc.clone();
    doc.insert(
        "follow".into(),
        s.follow.as_ref().map_or(Value::Null, to_json),
    );
    json_value(&Value::Object(doc))
}

async fn strip(State(live): Shared) -> Response {
    let s = live.current();
    json_bytes(s.strip_doc.clone())
}

async fn frame(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let row = required_row(&p, "row")?;
    let doc = s.frame_json(row)?;
    Ok(json_value(&doc))
}

async fn stats(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let doc = s.stats_json(row_param(&p, "from")?, row_param(&p, "to")?)?;
    Ok(json_value(&doc))
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
    Ok(json_value(&s.structure_json(row)))
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
    let doc = s.series_json(kind, name).ok_or_else(|| {
        ApiError::not_found(format!("the capture has no {kind_text} named {name:?}"))
    })?;
    Ok(json_value(&doc))
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
    let doc = s.compare_json(a, b).ok_or_else(|| no_such_row(&s, a))?;
    Ok(json_value(&doc))
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
