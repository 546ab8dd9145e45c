//! How requests are refused, as docs/INSPECTOR.md says: a parameter (the token included)
//! given twice, rows and limits that are not digits, methods other than GET, files the page
//! does not have, each refusal one line of JSON; and what search makes of blanks.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

use super::{app, demo, get, get_raw, ok, runtime, TOKEN};

/// A request through the router: status, content type, body.
fn send(app: &axum::Router, request: Request<Body>) -> (StatusCode, String, Vec<u8>) {
    runtime().block_on(async {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let kind = response
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .map(|t| t.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, kind, body.to_vec())
    })
}

/// The body is one line of JSON with an `error`.
fn one_line_error(body: &[u8]) -> String {
    let json: Value = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(body)));
    let error = json["error"].as_str().unwrap().to_owned();
    assert!(!error.contains('\n'), "{error}");
    error
}

#[test]
fn a_parameter_or_the_token_given_twice_is_refused_on_every_document() {
    let app = app(demo());
    let wrong = "0123456789abcdef0123456789abcdee";
    for path in [
        "/api/capture",
        "/api/strip",
        "/api/hitches",
        "/api/loading",
        "/api/frame?row=1",
        "/api/stats",
    ] {
        let sep = if path.contains('?') { '&' } else { '?' };
        // The token twice: the same, or a wrong one beside the right one, in either order.
        for tokens in [
            format!("token={TOKEN}&token={TOKEN}"),
            format!("token={wrong}&token={TOKEN}"),
            format!("token={TOKEN}&token={wrong}"),
        ] {
            let (status, body) = get_raw(&app, &format!("{path}{sep}{tokens}"), None);
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {tokens}");
            assert!(one_line_error(&body).contains("token given twice"));
        }
        // Any other parameter twice, whether or not the document reads it.
        let (status, body) = get_raw(&app, &format!("{path}{sep}x=1&x=2&token={TOKEN}"), None);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path} x twice");
        assert!(one_line_error(&body).contains("x given twice"));
        // One parameter the document does not read is no refusal.
        let (status, _) = get_raw(&app, &format!("{path}{sep}x=1&token={TOKEN}"), None);
        assert_eq!(status, StatusCode::OK, "{path} x once");
    }
    // The token in the header and the query: every copy must be the token.
    let (status, _) = get_raw(&app, &format!("/api/capture?token={TOKEN}"), Some(TOKEN));
    assert_eq!(status, StatusCode::OK);
    let (status, _) = get_raw(&app, &format!("/api/capture?token={wrong}"), Some(TOKEN));
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = get_raw(&app, &format!("/api/capture?token={TOKEN}"), Some(wrong));
    assert_eq!(status, StatusCode::FORBIDDEN);
    // The header twice.
    let request = Request::get("/api/capture")
        .header("X-Framewise-Token", wrong)
        .header("X-Framewise-Token", TOKEN)
        .body(Body::empty())
        .unwrap();
    let (status, _, body) = send(&app, request);
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(one_line_error(&body).contains("given twice"));
}

#[test]
fn rows_and_limits_are_written_in_digits_only() {
    let app = app(demo());
    for path in [
        "/api/frame?row=%2B5",
        "/api/frame?row=+5",
        "/api/frame?row=%205",
        "/api/frame?row=5%20",
        "/api/frame?row=",
        "/api/stats?from=%2B1&to=5",
        "/api/flame?from=0&to=%2B5",
        "/api/window?from=%2B0&to=5",
        "/api/compare?a=%2B1&b=2",
        "/api/search?q=render&limit=%2B5",
    ] {
        let (status, json) = get(&app, path);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {json}");
        assert!(json["error"].is_string(), "{json}");
    }
    assert_eq!(ok(&app, "/api/frame?row=5")["row"], 5);
    assert_eq!(ok(&app, "/api/frame?row=005")["row"], 5);
}

#[test]
fn every_refusal_is_one_line_of_json() {
    let app = app(demo());
    // A file the page does not have.
    for path in ["/app/nope.js", "/app/secret.sgpt", "/app/.hidden.js"] {
        let (status, kind, body) = send(&app, Request::get(path).body(Body::empty()).unwrap());
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(kind, "application/json", "{path}");
        assert!(one_line_error(&body).contains("no such file"));
    }
    // A method other than GET on a path that names something, token or not.
    for (method, path) in [
        (Method::POST, format!("/api/capture?token={TOKEN}")),
        (Method::POST, "/api/capture".to_owned()),
        (Method::DELETE, format!("/api/frame?row=0&token={TOKEN}")),
        (Method::PUT, "/".to_owned()),
        (Method::POST, "/app/app.js".to_owned()),
    ] {
        let request = Request::builder()
            .method(method.clone())
            .uri(path.as_str())
            .body(Body::empty())
            .unwrap();
        let (status, kind, body) = send(&app, request);
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert_eq!(kind, "application/json", "{method} {path}");
        one_line_error(&body);
    }
    // HEAD is answered as GET is.
    let request = Request::head(format!("/api/capture?token={TOKEN}"))
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, request).0, StatusCode::OK);
    // A path that names nothing is 404, whatever the method.
    let request = Request::post("/api/nope").body(Body::empty()).unwrap();
    let (status, kind, body) = send(&app, request);
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(kind, "application/json");
    one_line_error(&body);
}

#[test]
fn search_trims_its_text_and_a_blank_text_matches_nothing() {
    let app = app(demo());
    let plain = ok(&app, "/api/search?q=render&spans=0");
    let padded = ok(&app, "/api/search?q=%20render%09&spans=0");
    assert!(!plain["matches"].as_array().unwrap().is_empty());
    assert_eq!(plain["matches"], padded["matches"]);
    for blank in ["", "%20", "%20%20%09"] {
        let doc = ok(&app, &format!("/api/search?q={blank}"));
        assert_eq!(doc["matches"], serde_json::json!([]), "q={blank:?}");
    }
    let (status, _) = get(&app, "/api/search");
    assert_eq!(status, StatusCode::BAD_REQUEST, "q is required");
}
