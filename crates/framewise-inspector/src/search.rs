//! `/api/search?q=TEXT&limit=N`: every scope, pass, counter and mark whose name holds the
//! text, each with its worst frames, and each scope and pass with its longest single runs
//! (spans), as framewise-analysis finds them ([`framewise_analysis::search`]).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use framewise_analysis::search::{longest_instances, search, Instances, Match};
use framewise_analysis::FrameReadError;
use serde::Serialize;

use crate::api::{param, params, whole_number, ApiError, Live, Params};
use crate::flame::blocking;

/// Occurrences per match when the request does not say.
const DEFAULT_LIMIT: usize = 10;
/// The most occurrences per match a request may ask for.
const MAX_LIMIT: usize = 1000;

/// Frames whose spans one request may read to find runs, over all its matches (in their
/// order): a scope that runs once a frame needs about `limit` frames, one that runs many
/// times a frame may need every frame.
const FRAME_BUDGET: usize = 20_000;

/// One match, with its longest runs when it is a scope or a pass.
#[derive(Serialize)]
struct MatchDoc {
    #[serde(flatten)]
    found: Match,
    /// `None`: a counter or a mark (no runs), or `spans=0` asked for none.
    spans: Option<Instances>,
}

/// `/api/search`'s document.
#[derive(Serialize)]
struct SearchDoc {
    schema: &'static str,
    query: String,
    limit: usize,
    matches: Vec<MatchDoc>,
}

async fn search_route(State(live): State<Arc<Live>>, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let text = param(&p, "q").ok_or_else(|| ApiError::bad("missing parameter q"))?;
    let limit = match param(&p, "limit") {
        None => DEFAULT_LIMIT,
        Some(l) => whole_number(l)
            .filter(|l| (1..=MAX_LIMIT).contains(l))
            .ok_or_else(|| {
                ApiError::bad(format!(
                    "limit={l:?} is not a whole number from 1 to {MAX_LIMIT}"
                ))
            })?,
    };
    let runs = match param(&p, "spans") {
        None | Some("1") => true,
        Some("0") => false,
        Some(other) => return Err(ApiError::bad(format!("spans={other:?} is not 0 or 1"))),
    };
    let text = text.to_owned();
    blocking(move || {
        let mut budget = FRAME_BUDGET;
        let mut matches = Vec::new();
        for found in search(s.capture(), &text, limit) {
            let spans = if runs {
                longest_instances(
                    s.capture(),
                    s.frame_source(),
                    found.kind,
                    &found.name,
                    limit,
                    budget,
                )
                .map_err(|e: FrameReadError| ApiError::internal(e.to_string()))?
            } else {
                None
            };
            budget -= spans.as_ref().map_or(0, |i| i.frames_read);
            matches.push(MatchDoc { found, spans });
        }
        serde_json::to_vec(&SearchDoc {
            schema: "framewise.inspector.search/1",
            query: text,
            limit,
            matches,
        })
        .map_err(|e| ApiError::internal(format!("serializing: {e}")))
    })
    .await
}

/// The route, for [`crate::api::routes`] to serve behind its token check.
pub(crate) fn routes() -> Router<Arc<Live>> {
    Router::new().route("/api/search", get(search_route))
}
