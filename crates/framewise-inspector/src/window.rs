//! `/api/window?from=R0&to=R1`: consecutive frames on one time axis for the continuous
//! timeline, as framewise-analysis lays them out ([`framewise_analysis::window`]).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use framewise_analysis::window::{window, Window};
use framewise_analysis::FrameReadError;
use serde::Serialize;

use crate::api::{params, row_param, ApiError, Live, Params};
use crate::flame::blocking;

/// The most rows one request may ask for (a few hundred frames are drawn at once).
pub(crate) const MAX_ROWS: usize = 1000;

/// `/api/window`'s document.
#[derive(Serialize)]
struct WindowDoc {
    schema: &'static str,
    #[serde(flatten)]
    window: Window,
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
    blocking(move || {
        let w = window(s.capture(), s.frame_source(), from..to).map_err(|e| match e {
            FrameReadError::NoSuchRow { row, frames } => ApiError::bad(format!(
                "no frame at row {row}: the capture has {frames} frames"
            )),
            other => ApiError::internal(other.to_string()),
        })?;
        serde_json::to_vec(&WindowDoc {
            schema: "framewise.inspector.window/1",
            window: w,
        })
        .map_err(|e| ApiError::internal(format!("serializing: {e}")))
    })
    .await
}

/// The route, for [`crate::api::routes`] to serve behind its token check.
pub(crate) fn routes() -> Router<Arc<Live>> {
    Router::new().route("/api/window", get(window_route))
}
