//! Any bytes, as the path and query of a request to the inspector's API (the first byte picks
//! the endpoint): answering never panics; every refusal (4xx) is JSON saying why in one line,
//! an answer labelled JSON is JSON, and no request is answered 500 (the capture does not
//! change under it here).
#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use framewise_inspector::{router, Inspector, Token};
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

const PATHS: [&str; 15] = [
    "/api/capture",
    "/api/strip",
    "/api/frame",
    "/api/stats",
    "/api/hitches",
    "/api/structure",
    "/api/series",
    "/api/compare",
    "/api/diff",
    "/api/flame",
    "/api/search",
    "/api/window",
    "/api/comparison",
    "/api/issues",
    "/api/loading",
];

/// The committed sample captures: v2 inspected, v1 compared with it.
fn app() -> &'static (tokio::runtime::Runtime, axum::Router) {
    static APP: OnceLock<(tokio::runtime::Runtime, axum::Router)> = OnceLock::new();
    APP.get_or_init(|| {
        let data = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../crates/framewise-format/tests/data"
        );
        let inspector = Inspector::open(
            std::path::Path::new(&format!("{data}/sample-v2.sgpt")),
            Some(std::path::Path::new(&format!("{data}/sample-v1.sgpt"))),
        )
        .expect("the sample captures load");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        (runtime, router(inspector, Token::from_string(TOKEN), None))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, query)) = data.split_first() else {
        return;
    };
    let Ok(query) = std::str::from_utf8(query) else {
        return;
    };
    let path = PATHS[usize::from(pick) % PATHS.len()];
    let uri = format!("{path}?{query}&token={TOKEN}");
    let Ok(request) = Request::get(uri.as_str()).body(Body::empty()) else {
        return; // Not a URI: the HTTP layer refuses it before any handler.
    };
    let (runtime, app) = app();
    let (status, json_type, body) = runtime.block_on(async {
        let response = app.clone().oneshot(request).await.expect("infallible");
        let status = response.status();
        let json_type = response
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .is_some_and(|t| t == "application/json");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        (status, json_type, body)
    });
    assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{uri}");
    // `/api/window` and the frame strip answer in binary (application/octet-stream); every
    // refusal is JSON.
    assert!(
        json_type || status.is_success(),
        "{uri}: {status} without JSON"
    );
    if !json_type {
        return;
    }
    let json: serde_json::Value = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{uri}: {status} is not JSON ({e})"));
    if status.is_client_error() {
        let error = json["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{uri}: {json}"));
        assert!(
            !error.contains('\n'),
            "{uri}: a multi-line error: {error:?}"
        );
    }
});
