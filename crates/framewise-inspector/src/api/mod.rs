//! `/api/*`: the documents of docs/INSPECTOR.md, each shaped from what framewise-analysis
//! computed. Nothing here derives a number: the handlers pick rows, rename fields, convert
//! absolute times to offsets from a frame's begin, and serialize.
//!
//! `inspector` loads a capture and holds what every request reads; `documents` builds each
//! answer, whose types (the schema) are in `docs`; `request` parses parameters and shapes
//! errors; this module routes, checks the token, and swaps the state a `--follow` reload
//! replaces.

use std::sync::{Arc, PoisonError, RwLock};

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use framewise_analysis::view::SeriesKind;

mod docs;
mod documents;
mod inspector;
mod loading;
mod request;

pub(crate) use docs::FollowStatus;
pub use inspector::{Compared, Inspector};
pub(crate) use loading::Loading;
use loading::LoadingDoc;
pub(crate) use request::{json_bytes, param, params, row_param, whole_number, ApiError, Params};
use request::{no_such_row, required_row};

use crate::Token;

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

/// The state the routes serve: one snapshot, replaced atomically by the follow thread or
/// the background load. The lock is held only to clone or replace the pointer, never
/// during a load, so a reader never waits for one.
///
/// While a background load runs ([`crate::Background`]), `loading` holds the strip the
/// file's directory gave and how far the load is, and the snapshot is a stand-in with no
/// frames that no request reads: [`require_loaded`] answers every document but
/// `/api/strip` and `/api/loading` with 503 until the loaded snapshot replaced it. The
/// load stores the snapshot first and clears `loading` after, so a request that finds
/// `loading` cleared finds the loaded snapshot.
pub(crate) struct Live {
    snapshot: RwLock<Arc<Snapshot>>,
    loading: RwLock<Option<Arc<Loading>>>,
}

impl Live {
    pub(crate) fn new(snapshot: Snapshot) -> Self {
        Self {
            snapshot: RwLock::new(Arc::new(snapshot)),
            loading: RwLock::new(None),
        }
    }

    /// A state whose capture is still loading: `placeholder` stands in (never read, see
    /// above) until [`Self::loaded`].
    pub(crate) fn loading(placeholder: Snapshot, loading: Arc<Loading>) -> Self {
        Self {
            snapshot: RwLock::new(Arc::new(placeholder)),
            loading: RwLock::new(Some(loading)),
        }
    }

    pub(crate) fn current(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn replace(&self, snapshot: Snapshot) {
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
    }

    /// The background load, while it runs or after it failed; `None` once loaded.
    pub(crate) fn pending(&self) -> Option<Arc<Loading>> {
        self.loading
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The background load finished: serves `snapshot` from now on.
    pub(crate) fn loaded(&self, snapshot: Snapshot) {
        self.replace(snapshot);
        *self.loading.write().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

type Shared = State<Arc<Live>>;

async fn capture(State(live): Shared) -> Response {
    let s = live.current();
    json_bytes(s.capture_doc(s.follow.as_ref()))
}

/// `/api/strip`: the loaded capture's, else the directory's while the load runs.
async fn strip(State(live): Shared) -> Response {
    let bytes = match live.pending() {
        Some(loading) => loading.strip.clone(),
        None => live.current().strip_doc.clone(),
    };
    (
        [(axum::http::header::CONTENT_TYPE, "application/octet-stream")],
        bytes,
    )
        .into_response()
}

/// `/api/loading`: how far the background load is.
async fn loading_route(State(live): Shared) -> Response {
    let doc = match live.pending() {
        Some(loading) => loading.doc(),
        None => LoadingDoc::ready(live.current().capture.frame_count()),
    };
    json_bytes(docs::to_bytes(&doc))
}

/// Answers 503 (still loading) or 500 (the load failed) to every document but the strip
/// and the load's progress while a background load has not finished.
async fn require_loaded(State(live): Shared, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if path == "/api/strip" || path == "/api/loading" {
        return next.run(request).await;
    }
    match live.pending() {
        None => next.run(request).await,
        Some(loading) => loading.refusal().into_response(),
    }
}

async fn frame(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let row = required_row(&p, "row")?;
    Ok(json_bytes(s.frame_doc(row)?))
}

/// `/api/stats`: the whole capture's, computed once per load; a range's is summarized per
/// request (linear in its frames), on the blocking pool.
async fn stats(State(live): Shared, query: Params) -> Result<Response, ApiError> {
    let s = live.current();
    let p = params(query)?;
    let (from, to) = (row_param(&p, "from")?, row_param(&p, "to")?);
    if from.is_none() && to.is_none() {
        return Ok(json_bytes(s.stats_doc.clone()));
    }
    crate::flame::blocking(move || s.stats_doc(from, to)).await
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

/// Answers 400 to a request that names a query parameter twice (the token included: which
/// of two values was meant is not for the server to guess, whether or not the document
/// reads any parameter) or carries `X-Framewise-Token` twice, then 403 to one without this
/// run's token: the query's `token` and the header, each given at most once, and every
/// copy given must be the token.
async fn require_token(
    State(token): State<Arc<Token>>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    // Decoded as every other parameter is: `%61` is `a`, as a client that encodes every
    // character sends it.
    let pairs: Vec<(String, String)> = request
        .uri()
        .query()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default();
    // A set, not a scan of the names before each: a 64 KiB query holds thousands.
    let mut seen = std::collections::HashSet::with_capacity(pairs.len());
    for (name, _) in &pairs {
        if !seen.insert(name.as_str()) {
            return ApiError::bad(format!(
                "parameter {name} given twice: give each parameter once"
            ))
            .into_response();
        }
    }
    let from_header: Vec<bool> = headers
        .get_all("x-framewise-token")
        .iter()
        .map(|v| v.to_str().is_ok_and(|v| token.matches(v)))
        .collect();
    if from_header.len() > 1 {
        return ApiError::bad("header X-Framewise-Token given twice: give the token once")
            .into_response();
    }
    let from_query = pairs
        .iter()
        .filter(|(name, _)| name == "token")
        .map(|(_, v)| token.matches(v));
    let copies: Vec<bool> = from_header.into_iter().chain(from_query).collect();
    if !copies.is_empty() && copies.iter().all(|&ok| ok) {
        next.run(request).await
    } else {
        ApiError::forbidden("missing or wrong token: open the address `framewise view` printed")
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
        .merge(crate::issues::routes())
        .route("/api/loading", get(loading_route))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&live),
            require_loaded,
        ))
        .with_state(live)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(token),
            require_token,
        ))
}
