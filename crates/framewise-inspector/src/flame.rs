//! `/api/flame` and `/api/flame-diff`: the call tree of any selection of frames, and two
//! ranges' call trees laid over each other, as framewise-analysis folds them
//! ([`framewise_analysis::flame`]). Nothing here adds a number: the handlers read the
//! parameters, ask the analysis crate, and serialize its answer.
//!
//! A fold reads every selected frame's spans (from the capture's file for an `.sgpt`): it
//! runs on tokio's blocking pool, so that a long range never stalls the other routes.

use std::ops::Range;
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use framewise_analysis::flame::{
    self, FlameDiff, FlameError, FlameGraph, FlameOptions, NameTotals,
};
use serde::Serialize;

use crate::api::{json_bytes, param, params, row_param, ApiError, Live, Params, Snapshot};

/// `/api/flame`'s document.
#[derive(Serialize)]
struct FlameDoc {
    schema: &'static str,
    #[serde(flatten)]
    graph: FlameGraph,
    /// Totals per scope name over the fold (as `summarize` counts them).
    names: Vec<NameTotals>,
    /// False when a scope ran in the rows (by its per-frame totals) without a span
    /// recorded: the graph, folded from spans, leaves it out.
    spans_recorded: bool,
    /// Why, when `spans_recorded` is false; else null.
    reason: Option<String>,
}

/// `/api/flame-diff`'s document.
#[derive(Serialize)]
struct FlameDiffDoc {
    schema: &'static str,
    thread: Option<String>,
    #[serde(flatten)]
    diff: FlameDiff,
    /// As `/api/flame`'s, over both ranges.
    spans_recorded: bool,
    reason: Option<String>,
}

/// Names listed in a reason before "and N more".
const NAMES_LISTED: usize = 8;

/// Why a fold of `rows` does not show every scope that ran there, or `None` when it does:
/// the scopes framewise-analysis finds ran in those rows by their per-frame totals with
/// no span recorded ([`framewise_analysis::Capture::scopes_without_spans`]; a `.litecap`
/// holds per-frame times only), or a capture served without its spans at all.
fn unrecorded(s: &Snapshot, rows: &[Range<usize>]) -> Option<String> {
    let c = s.capture();
    let mut ids: Vec<u32> = Vec::new();
    for r in rows {
        match c.scopes_without_spans(r.clone()) {
            Some(found) => ids.extend(found),
            // Spans read from the capture's file: its totals were folded from them.
            None if s.frame_source().file().is_some() => {}
            None => {
                return Some(
                    "the capture was loaded without its spans: there are none to fold (its scopes' totals are in /api/stats and /api/series)"
                        .to_owned(),
                )
            }
        }
    }
    let mut names: Vec<&str> = ids
        .iter()
        .filter_map(|&id| c.scopes().get(id as usize))
        .map(|scope| scope.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return None;
    }
    let mut list = names
        .iter()
        .take(NAMES_LISTED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMES_LISTED {
        list.push_str(&format!(" and {} more", names.len() - NAMES_LISTED));
    }
    Some(format!(
        "spans not recorded: {list} ran in these rows by their per-frame totals, which the capture holds without their spans, so the graph leaves them out (their totals are in /api/stats and /api/series)"
    ))
}

fn flame_error(error: FlameError) -> ApiError {
    match error {
        FlameError::BadRange { .. } | FlameError::NoSuchThread(_) => {
            ApiError::bad(error.to_string())
        }
        other => ApiError::internal(other.to_string()),
    }
}

/// The options for rows `{prefix}from`..`{prefix}to` (default: every row) and `thread`.
fn options(s: &Snapshot, p: &[(String, String)], prefix: &str) -> Result<FlameOptions, ApiError> {
    let n = s.capture().frame_count();
    let from = row_param(p, &format!("{prefix}from"))?.unwrap_or(0);
    let to = row_param(p, &format!("{prefix}to"))?.unwrap_or(n);
    let mut options = FlameOptions::rows(from..to);
    if let Some(thread) = param(p, "thread").filter(|t| !t.is_empty()) {
        options = options.with_thread(thread);
    }
    Ok(options)
}

fn fold(s: &Snapshot, options: &FlameOptions) -> Result<FlameGraph, ApiError> {
    flame::fold(s.capture(), s.frame_source(), options).map_err(flame_error)
}

fn to_body<T: Serialize>(doc: &T) -> Result<Vec<u8>, ApiError> {
    serde_json::to_vec(doc).map_err(|e| ApiError::internal(format!("serializing: {e}")))
}

/// Runs `work` (a document's bytes) on tokio's blocking pool and answers them as JSON:
/// every document whose work grows with the capture (a fold, a search, a ranged summary,
/// the incident log) goes through here, so that the server's one thread keeps answering
/// the others meanwhile.
pub(crate) async fn blocking<B: Into<axum::body::Bytes> + Send + 'static>(
    work: impl FnOnce() -> Result<B, ApiError> + Send + 'static,
) -> Result<Response, ApiError> {
    let body = tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("the request did not finish: {e}")))??;
    Ok(json_bytes(body))
}

async fn flame_route(State(live): State<Arc<Live>>, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let options = options(&s, &p, "")?;
    blocking(move || {
        let graph = fold(&s, &options)?;
        let reason = unrecorded(&s, std::slice::from_ref(&options.rows));
        to_body(&FlameDoc {
            schema: "framewise.inspector.flame/1",
            names: graph.name_totals(),
            graph,
            spans_recorded: reason.is_none(),
            reason,
        })
    })
    .await
}

async fn flame_diff_route(
    State(live): State<Arc<Live>>,
    query: Params,
) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    for key in ["a_from", "a_to", "b_from", "b_to"] {
        if param(&p, key).is_none() {
            return Err(ApiError::bad(format!("missing parameter {key}")));
        }
    }
    let (a, b) = (options(&s, &p, "a_")?, options(&s, &p, "b_")?);
    // A side's times are means per frame: over no frame there is no mean to compare (it
    // would read as 0, every path slower or faster by all of its time).
    for (side, options) in [("a", &a), ("b", &b)] {
        if options.rows.is_empty() {
            return Err(ApiError::bad(format!(
                "range {side} ({side}_from..{side}_to, {}..{}) holds no frame: a mean per frame of no frame is not measured",
                options.rows.start, options.rows.end
            )));
        }
    }
    blocking(move || {
        let d = flame::diff(&fold(&s, &a)?, &fold(&s, &b)?);
        let reason = unrecorded(&s, &[a.rows.clone(), b.rows.clone()]);
        to_body(&FlameDiffDoc {
            schema: "framewise.inspector.flame-diff/1",
            thread: a.thread.clone(),
            diff: d,
            spans_recorded: reason.is_none(),
            reason,
        })
    })
    .await
}

/// The routes, for [`crate::api::routes`] to serve behind its token check.
pub(crate) fn routes() -> Router<Arc<Live>> {
    Router::new()
        .route("/api/flame", get(flame_route))
        .route("/api/flame-diff", get(flame_diff_route))
}
