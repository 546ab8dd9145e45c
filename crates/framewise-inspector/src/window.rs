//! `/api/window?from=R0&to=R1`: consecutive frames on one time axis for the continuous
//! timeline, as framewise-analysis lays them out ([`framewise_analysis::window`]), sent as
//! binary columns (docs/INSPECTOR.md, "`/api/window`").
//!
//! A window of 200 frames holds tens of thousands of CPU spans: as JSON objects they cost
//! the server their serialization and the page a parse of megabytes and an object per span.
//! Here the spans are columns of little-endian numbers the page views as typed arrays, with
//! no parse at all; so are the GPU spans and the counters' values (a frame of a game holds
//! tens of passes and counters: as JSON they were most of a window's header). What is
//! small (frames, scope and pass names, marks, which counters) is one JSON header in front
//! of the columns.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use framewise_analysis::model::CounterKind;
use framewise_analysis::window::{window, ScopeName, Window, WindowFrame, WindowMark};
use framewise_analysis::{Capture, FrameReadError};
use serde::Serialize;

use crate::api::{params, row_param, ApiError, Live, Params};

/// The most rows one request may ask for (a few hundred frames are drawn at once).
pub(crate) const MAX_ROWS: usize = 1000;

/// The first eight bytes of every `/api/window` body.
pub(crate) const WINDOW_MAGIC: &[u8; 8] = b"FWWINDOW";

/// `/api/window`'s schema, named in its header.
pub(crate) const WINDOW_SCHEMA: &str = "framewise.inspector.window/3";

/// One CPU lane in the header: its thread, and how many spans its columns hold.
#[derive(Serialize)]
struct LaneHead<'a> {
    thread: &'a str,
    /// The thread's id in the capture (its position in `/api/capture`'s `threads`).
    thread_id: usize,
    spans: usize,
}

/// One counter in the header: its id in the capture (tracks keep the capture's order however
/// windows are joined), and how many values its columns hold.
#[derive(Serialize)]
struct CounterHead<'a> {
    id: usize,
    name: &'a str,
    kind: CounterKind,
    samples: usize,
}

/// The JSON header: everything of the window but its spans' and counters' columns.
#[derive(Serialize)]
struct Header<'a> {
    schema: &'static str,
    from: usize,
    to: usize,
    origin_ns: u64,
    scopes: &'a [ScopeName],
    frames: &'a [WindowFrame],
    lanes: Vec<LaneHead<'a>>,
    passes: Vec<&'a str>,
    gpu_spans: usize,
    marks: &'a [WindowMark],
    counters: Vec<CounterHead<'a>>,
}

/// Columns of little-endian numbers, each starting on a multiple of 8 bytes.
struct Columns(Vec<u8>);

impl Columns {
    /// Pads with zeros to a multiple of 8 bytes (every column group starts 8-aligned, so
    /// that the page can view it as a typed array in place).
    fn align8(&mut self) {
        self.0.resize(self.0.len().next_multiple_of(8), 0);
    }

    fn f64s(&mut self, values: impl Iterator<Item = f64>) {
        for v in values {
            self.0.extend_from_slice(&v.to_le_bytes());
        }
    }

    fn u32s(&mut self, values: impl Iterator<Item = u32>) {
        for v in values {
            self.0.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// A row as its u32 column holds it (a window's rows are below 2^32).
fn row32(row: usize) -> u32 {
    u32::try_from(row).unwrap_or(u32::MAX)
}

/// Nanoseconds as f64: exact below 2^53 ns (104 days), as a JavaScript number is anyway.
#[allow(clippy::cast_precision_loss)]
fn ns(v: impl Into<i128>) -> f64 {
    v.into() as f64
}

/// `w` as `/api/window` sends it: [`WINDOW_MAGIC`], the header's length (u32 LE) and four
/// zero bytes, the header (UTF-8 JSON), zeros to a multiple of 8; then per lane, in the
/// header's order, its columns `start_ns`, `dur_ns`, `self_ns` (f64 LE each), `row`, `scope`,
/// `depth` (u32 LE each); then the GPU spans' columns `start_ns`, `dur_ns` (f64), `row`,
/// `pass` (an index into the header's `passes`), `depth` (u32); then per counter, in the
/// header's order, `value` (f64) and `row` (u32): zeros to a multiple of 8 after each group.
pub(crate) fn encode(capture: &Capture, w: &Window) -> Result<Vec<u8>, serde_json::Error> {
    let thread_id = |name: &str| capture.threads().iter().position(|t| t == name);
    let counter_id = |name: &str| capture.counters().iter().position(|c| c.name == name);
    // The passes named in the window, in first-seen order: the `pass` column's ids.
    let mut passes: Vec<&str> = Vec::new();
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let pass_ids: Vec<u32> = w
        .gpu
        .iter()
        .map(|g| {
            *ids.entry(&g.pass).or_insert_with(|| {
                passes.push(&g.pass);
                u32::try_from(passes.len() - 1).unwrap_or(u32::MAX)
            })
        })
        .collect();
    let header = Header {
        schema: WINDOW_SCHEMA,
        from: w.from,
        to: w.to,
        origin_ns: w.origin_ns,
        scopes: &w.scopes,
        frames: &w.frames,
        lanes: w
            .lanes
            .iter()
            .map(|l| LaneHead {
                thread: &l.thread,
                thread_id: thread_id(&l.thread).unwrap_or(usize::MAX),
                spans: l.spans.len(),
            })
            .collect(),
        passes,
        gpu_spans: w.gpu.len(),
        marks: &w.marks,
        counters: w
            .counters
            .iter()
            .map(|c| CounterHead {
                id: counter_id(&c.name).unwrap_or(usize::MAX),
                name: &c.name,
                kind: c.kind,
                samples: c.values.len(),
            })
            .collect(),
    };
    let json = serde_json::to_vec(&header)?;
    let spans: usize = w.lanes.iter().map(|l| l.spans.len()).sum();
    let values: usize = w.counters.iter().map(|c| c.values.len()).sum();
    let mut out = Columns(Vec::with_capacity(
        16 + json.len()
            + spans * 36
            + w.gpu.len() * 28
            + values * 12
            + (w.lanes.len() + w.counters.len() + 2) * 8,
    ));
    out.0.extend_from_slice(WINDOW_MAGIC);
    let len = u32::try_from(json.len()).map_err(serde::ser::Error::custom)?;
    out.0.extend_from_slice(&len.to_le_bytes());
    out.0.extend_from_slice(&[0; 4]);
    out.0.extend_from_slice(&json);
    out.align8();
    for lane in &w.lanes {
        let s = &lane.spans;
        out.f64s(s.iter().map(|s| ns(s.start_ns)));
        out.f64s(s.iter().map(|s| ns(s.dur_ns)));
        out.f64s(s.iter().map(|s| ns(s.self_ns)));
        out.u32s(s.iter().map(|s| row32(s.row)));
        out.u32s(s.iter().map(|s| s.scope));
        out.u32s(s.iter().map(|s| s.depth));
        out.align8();
    }
    let g = &w.gpu;
    out.f64s(g.iter().map(|g| ns(g.start_ns)));
    out.f64s(g.iter().map(|g| ns(g.dur_ns)));
    out.u32s(g.iter().map(|g| row32(g.row)));
    out.u32s(pass_ids.into_iter());
    out.u32s(g.iter().map(|g| g.depth));
    out.align8();
    for c in &w.counters {
        out.f64s(c.values.iter().map(|v| v.value.as_f64()));
        out.u32s(c.values.iter().map(|v| row32(v.row)));
        out.align8();
    }
    Ok(out.0)
}

async fn window_route(State(live): State<Arc<Live>>, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let n = s.capture().frame_count();
    let from = row_param(&p, "from")?.ok_or_else(|| ApiError::bad("missing parameter from"))?;
    let to = row_param(&p, "to")?.ok_or_else(|| ApiError::bad("missing parameter to"))?;
    if from > to || to > n {
        return Err(ApiError::bad(format!(
            "rows {from}..{to} are not a range of this capture's {n} frames (0 ≤ from ≤ to ≤ {n})"
        )));
    }
    if to - from > MAX_ROWS {
        return Err(ApiError::bad(format!(
            "rows {from}..{to} are {} frames; a window holds at most {MAX_ROWS}",
            to - from
        )));
    }
    let body = tokio::task::spawn_blocking(move || {
        let w = window(s.capture(), s.frame_source(), from..to).map_err(|e| match e {
            FrameReadError::NoSuchRow { row, frames } => ApiError::bad(format!(
                "no frame at row {row}: the capture has {frames} frames"
            )),
            other => ApiError::internal(other.to_string()),
        })?;
        encode(s.capture(), &w).map_err(|e| ApiError::internal(format!("serializing: {e}")))
    })
    .await
    .map_err(|e| ApiError::internal(format!("the request did not finish: {e}")))??;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], body).into_response())
}

/// The route, for [`crate::api::routes`] to serve behind its token check.
pub(crate) fn routes() -> Router<Arc<Live>> {
    Router::new().route("/api/window", get(window_route))
}
