//! `/api/window?from=R0&to=R1`: consecutive frames on one time axis for the continuous
//! timeline, as framewise-analysis lays them out ([`framewise_analysis::window`]), sent as
//! binary columns (docs/INSPECTOR.md, "`/api/window`").
//!
//! A window of 200 frames holds tens of thousands of CPU spans: as JSON objects they cost
//! the server their serialization and the page a parse of megabytes and an object per span.
//! Here the spans are columns of little-endian numbers the page views as typed arrays, with
//! no parse at all, and everything small (frames, scope names, GPU passes, marks,
//! counters) is one JSON header in front of them.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use framewise_analysis::window::{
    window, ScopeName, Window, WindowCounter, WindowFrame, WindowGpuSpan, WindowMark,
};
use framewise_analysis::{Capture, FrameReadError};
use serde::Serialize;

use crate::api::{params, row_param, ApiError, Live, Params};

/// The most rows one request may ask for (a few hundred frames are drawn at once).
pub(crate) const MAX_ROWS: usize = 1000;

/// The first eight bytes of every `/api/window` body.
pub(crate) const WINDOW_MAGIC: &[u8; 8] = b"FWWINDOW";

/// `/api/window`'s schema, named in its header.
pub(crate) const WINDOW_SCHEMA: &str = "framewise.inspector.window/2";

/// One CPU lane in the header: its thread, and how many spans its columns hold.
#[derive(Serialize)]
struct LaneHead<'a> {
    thread: &'a str,
    /// The thread's id in the capture (its position in `/api/capture`'s `threads`).
    thread_id: usize,
    spans: usize,
}

/// One counter in the header, with its id in the capture (tracks keep the capture's order
/// however windows are joined).
#[derive(Serialize)]
struct CounterHead<'a> {
    id: usize,
    #[serde(flatten)]
    counter: &'a WindowCounter,
}

/// The JSON header: everything of the window but its CPU spans' columns.
#[derive(Serialize)]
struct Header<'a> {
    schema: &'static str,
    from: usize,
    to: usize,
    origin_ns: u64,
    scopes: &'a [ScopeName],
    frames: &'a [WindowFrame],
    lanes: Vec<LaneHead<'a>>,
    gpu: &'a [WindowGpuSpan],
    marks: &'a [WindowMark],
    counters: Vec<CounterHead<'a>>,
}

/// Pads `out` with zeros to a multiple of 8 bytes (every column starts 8-aligned, so that
/// the page can view it as a typed array in place).
fn align8(out: &mut Vec<u8>) {
    out.resize(out.len().next_multiple_of(8), 0);
}

/// `w` as `/api/window` sends it: [`WINDOW_MAGIC`], the header's length (u32 LE) and four
/// zero bytes, the header (UTF-8 JSON), zeros to a multiple of 8, then per lane, in the
/// header's order, its columns: `start_ns`, `dur_ns`, `self_ns` (f64 LE each), `row`,
/// `scope`, `depth` (u32 LE each), zeros to a multiple of 8 after each lane.
pub(crate) fn encode(capture: &Capture, w: &Window) -> Result<Vec<u8>, serde_json::Error> {
    let thread_id = |name: &str| capture.threads().iter().position(|t| t == name);
    let counter_id = |name: &str| capture.counters().iter().position(|c| c.name == name);
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
        gpu: &w.gpu,
        marks: &w.marks,
        counters: w
            .counters
            .iter()
            .map(|c| CounterHead {
                id: counter_id(&c.name).unwrap_or(usize::MAX),
                counter: c,
            })
            .collect(),
    };
    let json = serde_json::to_vec(&header)?;
    let spans: usize = w.lanes.iter().map(|l| l.spans.len()).sum();
    let mut out = Vec::with_capacity(16 + json.len() + 8 + spans * 36 + w.lanes.len() * 8);
    out.extend_from_slice(WINDOW_MAGIC);
    let len = u32::try_from(json.len()).map_err(serde::ser::Error::custom)?;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&json);
    align8(&mut out);
    // Nanoseconds as f64: exact below 2^53 ns (104 days), as a JavaScript number is anyway.
    #[allow(clippy::cast_precision_loss)]
    for lane in &w.lanes {
        let s = &lane.spans;
        for v in s.iter().map(|s| s.start_ns as f64) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in s.iter().map(|s| s.dur_ns as f64) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in s.iter().map(|s| s.self_ns as f64) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in s.iter().map(|s| u32::try_from(s.row).unwrap_or(u32::MAX)) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in s.iter().map(|s| s.scope) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in s.iter().map(|s| s.depth) {
            out.extend_from_slice(&v.to_le_bytes());
        }
        align8(&mut out);
    }
    Ok(out)
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
