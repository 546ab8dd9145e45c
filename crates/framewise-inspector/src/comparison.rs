//! `/api/comparison`: the capture comparison as the page leads with it — `framewise gate`'s
//! verdict under its default tolerances, the headline metrics, then every row of
//! `framewise diff` ranked by significance, run-length artefacts told apart
//! ([`framewise_analysis::significance`]). Built once per load, beside `/api/diff`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use framewise_analysis::diff::Change;
use framewise_analysis::significance::{rank, RankedRow, HEADLINE};
use framewise_analysis::{gate, Diff, GateConfig, GateResult, Summary};
use serde::Serialize;

use crate::api::{json_bytes, ApiError, Live};

/// One side of the comparison.
#[derive(Serialize)]
struct SideDoc<'a> {
    file: &'a str,
    frames: u64,
    /// Frames its statistics judged (paused frames excluded).
    frames_judged: u64,
}

/// How many rows fall in each group, in the order they are listed.
#[derive(Serialize, Default)]
struct Counts {
    judged: usize,
    not_judged: usize,
    one_sided: usize,
    unchanged: usize,
}

/// `/api/comparison`'s document.
#[derive(Serialize)]
struct ComparisonDoc<'a> {
    schema: &'static str,
    base: SideDoc<'a>,
    cand: SideDoc<'a>,
    timing_comparable: bool,
    frame_times_comparable: bool,
    /// `framewise gate BASE CAND --format json` with the default tolerances; `None` (with
    /// `gate_error`) when the gate could not run.
    verdict: Option<GateResult>,
    gate_error: Option<String>,
    headline: Vec<RankedRow>,
    counts: Counts,
    rows: Vec<RankedRow>,
}

fn side<'a>(file: &'a str, s: &Summary) -> SideDoc<'a> {
    SideDoc {
        file,
        frames: s.capture.frames,
        frames_judged: s.capture.frames.saturating_sub(s.capture.frames_paused),
    }
}

/// The document's bytes for `diff` of `base` (this capture) against `cand` (the compared one).
pub(crate) fn comparison_bytes(
    diff: &Diff,
    (base_file, base): (&str, &Summary),
    (cand_file, cand): (&str, &Summary),
) -> Bytes {
    let rows = rank(diff, base, cand);
    let (verdict, gate_error) = match gate(base, cand, &GateConfig::default()) {
        Ok(g) => (Some(g), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let mut counts = Counts::default();
    for r in &rows {
        match r.row.change {
            Change::Better | Change::Worse if r.coloured => counts.judged += 1,
            Change::OnlyBase | Change::OnlyCandidate => counts.one_sided += 1,
            _ if r.row.delta.is_some_and(|d| d != 0.0) => counts.not_judged += 1,
            _ => counts.unchanged += 1,
        }
    }
    let headline = HEADLINE
        .iter()
        .filter_map(|m| rows.iter().find(|r| r.row.metric == *m).cloned())
        .collect();
    let doc = ComparisonDoc {
        schema: "framewise.inspector.comparison/1",
        base: side(base_file, base),
        cand: side(cand_file, cand),
        timing_comparable: diff.timing_comparable,
        frame_times_comparable: diff.frame_times_comparable,
        verdict,
        gate_error,
        headline,
        counts,
        rows,
    };
    Bytes::from(
        serde_json::to_vec(&doc)
            .unwrap_or_else(|e| format!("{{\"error\": \"serializing: {e}\"}}").into_bytes()),
    )
}

async fn comparison_route(State(live): State<Arc<Live>>) -> Result<Response, ApiError> {
    let s = live.current();
    match s.comparison_doc() {
        Some(doc) => Ok(json_bytes(doc.clone())),
        None => Err(ApiError::not_found(
            "no capture to compare with: start the inspector with --compare OTHER",
        )),
    }
}

/// The route, for [`crate::api::routes`] to serve behind its token check.
pub(crate) fn routes() -> Router<Arc<Live>> {
    Router::new().route("/api/comparison", get(comparison_route))
}
