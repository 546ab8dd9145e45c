//! `/api/issues`: the issues catalogue of the game the capture belongs to — its
//! `.framewise/` incident log folded by footprint, the document `framewise issues --format
//! json` prints ([`framewise_incidents::fold::IssuesDoc`]), read afresh on every request
//! (the game may still be appending), with each issue's occurrences that this capture's
//! session recorded, so that the page can select their frames.
//!
//! Which `.framewise/`: the one given (`framewise view --project DIR`), else the nearest one
//! from the capture's directory up. Without one the route answers 404 and the page shows no
//! Issues panel.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use framewise_incidents::fold::{CatalogueOptions, LedgerFiles, Occurrences};
use framewise_incidents::DIR_NAME;

use crate::api::{ApiError, Live};
use crate::flame::blocking;

/// The `.framewise/` directory that `project` names: `project/.framewise/` when it has one,
/// else `project` itself when it is a directory named `.framewise`. `None` otherwise.
pub fn project_dir(project: &Path) -> Option<PathBuf> {
    let inside = project.join(DIR_NAME);
    if inside.is_dir() {
        return Some(inside);
    }
    (project.file_name().is_some_and(|n| n == DIR_NAME) && project.is_dir())
        .then(|| project.to_owned())
}

/// The nearest `.framewise/` from the directory `capture` is in, up to the root.
pub fn find_project(capture: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(capture).ok()?;
    // The directory the capture is really in: `proj/../x.sgpt` is in the directory above
    // `proj`, and `proj/.framewise` is not its nearest (a lexical walk would find it).
    let parent = absolute.parent()?;
    let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_owned());
    parent.ancestors().find_map(|dir| {
        let candidate = dir.join(DIR_NAME);
        candidate.is_dir().then_some(candidate)
    })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The catalogue of `dir` with `session`'s occurrences, as `/api/issues` serves it. Reads
/// and folds the whole incident log: call it on the blocking pool.
fn issues_body(dir: &Path, session: Option<String>) -> Result<Vec<u8>, ApiError> {
    let files = LedgerFiles::read(dir).map_err(|e| ApiError::internal(e.to_string()))?;
    let options = CatalogueOptions {
        now_ms: now_ms(),
        occurrences: session.map_or(Occurrences::None, Occurrences::Session),
        ..CatalogueOptions::default()
    };
    serde_json::to_vec(&files.issues(&options))
        .map_err(|e| ApiError::internal(format!("serializing: {e}")))
}

/// Reads and folds `.framewise/` on tokio's blocking pool, as a flame graph's fold runs
/// ([`crate::flame::blocking`]): the log may be hundreds of megabytes, and the server's
/// one thread keeps answering every other request meanwhile.
async fn issues_route(State(live): State<Arc<Live>>) -> Result<Response, ApiError> {
    let s = live.current();
    let Some(dir) = s.project().map(Path::to_owned) else {
        return Err(ApiError::not_found(format!(
            "no {DIR_NAME}/ for this capture: none in its directory or above (framewise view --project DIR names one)"
        )));
    };
    let session = s.capture().meta().session.clone();
    drop(s);
    blocking(move || issues_body(&dir, session)).await
}

/// The route.
pub(crate) fn routes() -> Router<Arc<Live>> {
    Router::new().route("/api/issues", get(issues_route))
}
