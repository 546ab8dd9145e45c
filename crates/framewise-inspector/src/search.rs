//! `/api/search?q=TEXT&limit=N`: every scope, pass, counter and mark whose name holds the
//! text, each with its worst frames, as framewise-analysis finds them
//! ([`framewise_analysis::search`]).

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use framewise_analysis::search::{search, Match};
use serde::Serialize;

use crate::api::{json_bytes, param, params, ApiError, Live, Params};

/// Occurrences per match when the request does not say.
const DEFAULT_LIMIT: usize = 10;
/// The most occurrences per match a request may ask for.
const MAX_LIMIT: usize = 1000;

/// `/api/search`'s document.
#[derive(Serialize)]
struct SearchDoc<'a> {
    schema: &'static str,
    query: &'a str,
    limit: usize,
    matches: Vec<Match>,
}

async fn search_route(State(live): State<Arc<Live>>, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let text = param(&p, "q").ok_or_else(|| ApiError::bad("missing parameter q"))?;
    let limit = match param(&p, "limit") {
        None => DEFAULT_LIMIT,
        Some(l) => l
            .parse::<usize>()
            .ok()
            .filter(|l| (1..=MAX_LIMIT).contains(l))
            .ok_or_else(|| {
                ApiError::bad(format!(
                    "limit={l:?} is not a whole number from 1 to {MAX_LIMIT}"
                ))
            })?,
    };
    let doc = SearchDoc {
        schema: "framewise.inspector.search/1",
        query: text,
        limit,
        matches: search(s.capture(), text, limit),
    };
    serde_json::to_vec(&doc)
        .map(json_bytes)
        .map_err(|e| ApiError::internal(format!("serializing: {e}")))
}

/// The route, for [`crate::api::routes`] to serve behind its token check.
pub(crate) fn routes() -> Router<Arc<Live>> {
    Router::new().route("/api/search", get(search_route))
}
