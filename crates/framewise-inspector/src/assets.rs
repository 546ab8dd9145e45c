//! The web app's files, embedded at compile time, and the headers every response carries.
//!
//! The files live in `crates/framewise-inspector/web/` (plain ES modules, Canvas 2D, one
//! stylesheet; nothing fetched from anywhere else). `/` is `index.html`; `/app/NAME` is
//! any other. With `--web-dir DIR` they are read from DIR on every request instead, so
//! that someone editing them sees the change on reload.

use std::path::PathBuf;

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// Every embedded file: name, content type, contents.
const ASSETS: &[(&str, &str, &str)] = &[
    ("index.html", HTML, include_str!("../web/index.html")),
    ("app.js", JS, include_str!("../web/app.js")),
    ("api.js", JS, include_str!("../web/api.js")),
    ("strip.js", JS, include_str!("../web/strip.js")),
    ("stripdata.js", JS, include_str!("../web/stripdata.js")),
    ("timeline.js", JS, include_str!("../web/timeline.js")),
    ("window.js", JS, include_str!("../web/window.js")),
    ("ticks.js", JS, include_str!("../web/ticks.js")),
    ("spandetail.js", JS, include_str!("../web/spandetail.js")),
    ("stats.js", JS, include_str!("../web/stats.js")),
    ("series.js", JS, include_str!("../web/series.js")),
    ("tables.js", JS, include_str!("../web/tables.js")),
    ("flame.js", JS, include_str!("../web/flame.js")),
    ("search.js", JS, include_str!("../web/search.js")),
    ("issues.js", JS, include_str!("../web/issues.js")),
    ("ago.js", JS, include_str!("../web/ago.js")),
    ("structure.js", JS, include_str!("../web/structure.js")),
    ("compare.js", JS, include_str!("../web/compare.js")),
    ("follow.js", JS, include_str!("../web/follow.js")),
    ("style.css", CSS, include_str!("../web/style.css")),
];

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// The policy every response carries: this server's own files and API, nothing else, and
/// never framed by another page.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; frame-ancestors 'none'";

/// A content type by file name; `None` for a kind the web app does not use.
fn content_type(name: &str) -> Option<&'static str> {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => Some(HTML),
        Some("js") => Some(JS),
        Some("css") => Some(CSS),
        Some("svg") => Some("image/svg+xml"),
        Some("png") => Some("image/png"),
        Some("json") => Some("application/json"),
        _ => None,
    }
}

pub(crate) fn routes(web_dir: Option<PathBuf>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/app/{name}", get(file))
        // Browsers ask for it unprompted; a 404 would be logged as an error on the page.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .with_state(web_dir.map(std::sync::Arc::new))
}

type WebDir = Option<std::sync::Arc<PathBuf>>;

async fn index(State(dir): State<WebDir>) -> Response {
    serve(dir.as_deref(), "index.html")
}

async fn file(State(dir): State<WebDir>, Path(name): Path<String>) -> Response {
    serve(dir.as_deref(), &name)
}

/// A refusal as every other one is: one line of JSON saying why.
fn not_found(name: &str) -> Response {
    crate::api::ApiError::not_found(format!("no such file of the page: {name}")).into_response()
}

fn serve(dir: Option<&PathBuf>, name: &str) -> Response {
    let Some(kind) = content_type(name) else {
        return not_found(name);
    };
    match dir {
        // A plain file name only: never a path out of the directory.
        Some(dir) => {
            let plain = !name.is_empty()
                && !name.starts_with('.')
                && !name.contains(['/', '\\'])
                && !name.contains("..");
            if !plain {
                return not_found(name);
            }
            match std::fs::read(dir.join(name)) {
                Ok(bytes) => ([(header::CONTENT_TYPE, kind)], bytes).into_response(),
                Err(_) => not_found(name),
            }
        }
        None => match ASSETS.iter().find(|(n, _, _)| *n == name) {
            Some((_, kind, body)) => ([(header::CONTENT_TYPE, *kind)], *body).into_response(),
            None => not_found(name),
        },
    }
}

/// Headers on every response: nothing is cached (a capture's data belongs to this run),
/// the content security policy, and no content sniffing.
pub(crate) async fn headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_file_has_its_content_type() {
        for (name, kind, body) in ASSETS {
            assert_eq!(content_type(name), Some(*kind), "{name}");
            assert!(!body.is_empty(), "{name} is empty");
        }
        assert_eq!(
            content_type("app.js"),
            Some("text/javascript; charset=utf-8")
        );
        assert_eq!(content_type("secret.sgpt"), None);
    }

    /// The screenshots docs/INSPECTOR.md shows are committed small (under 200 KB each), and
    /// every one committed is shown.
    #[test]
    fn the_documented_screenshots_are_small_and_each_is_shown() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        let doc = std::fs::read_to_string(root.join("INSPECTOR.md")).expect("docs/INSPECTOR.md");
        let dir = root.join("img/inspector");
        let mut shown = 0;
        for entry in std::fs::read_dir(&dir).expect("docs/img/inspector") {
            let entry = entry.expect("a directory entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            let bytes = entry.metadata().expect("its size").len();
            assert!(bytes < 200_000, "{name} is {bytes} bytes");
            assert!(
                doc.contains(&format!("(img/inspector/{name})")),
                "{name} is not shown"
            );
            shown += 1;
        }
        assert!(shown >= 5, "{shown} screenshots");
    }
}
