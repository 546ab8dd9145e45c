//! The inspector's API against a real capture: the demo game recorded for a few hundred
//! frames, read back through framewise-analysis, and each endpoint checked against what the
//! analysis crate itself says (the CLI prints the same serializations). The router is driven
//! in-process, and once over a real TCP socket with a hand-written HTTP/1.1 request.

#![expect(
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use framewise_analysis::view::{self, SeriesKind};
use framewise_analysis::{
    diff, find_hitches, load, summarize, summarize_with, Capture, HitchOptions, LoadOptions,
    SummaryOptions,
};
use framewise_inspector::{router, Inspector, Server, Token};
use serde_json::Value;
use tower::ServiceExt;

#[path = "api/comparison.rs"]
mod comparison;
#[path = "api/flame.rs"]
mod flame;
#[path = "common/gpu.rs"]
mod gpu;
#[path = "api/honest.rs"]
mod honest;
#[path = "api/issues.rs"]
mod issues;
#[path = "api/refusals.rs"]
mod refusals;
#[path = "api/search.rs"]
mod search;
#[path = "api/strip.rs"]
mod strip;
#[path = "api/window.rs"]
mod window;

const FRAMES: u64 = 240;
const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// A process records one session at a time: every test that records holds this.
static SESSION: Mutex<()> = Mutex::new(());

fn recording() -> MutexGuard<'static, ()> {
    SESSION.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Two demo captures (normal and slow), recorded once for every test.
fn captures() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    DIR.get_or_init(|| {
        let _recording = recording();
        let dir = tempfile::tempdir().unwrap();
        let record = |name: &str, variant| {
            let path = dir.path().join(name);
            let mut config = framewise_demo::DemoConfig::with_frames(FRAMES);
            config.output = Some(path.clone());
            config.use_env = false;
            config.threads = 2;
            config.variant = variant;
            config.fixed_dt = Some(std::time::Duration::from_millis(16));
            framewise_demo::run(config).unwrap();
            path
        };
        let normal = record("demo.sgpt", framewise_demo::Variant::Normal);
        let slow = record("slow.sgpt", framewise_demo::Variant::Slow);
        (dir, normal, slow)
    })
}

fn demo() -> &'static Path {
    &captures().1
}

fn with_spans(path: &Path) -> Capture {
    load::open(path, &LoadOptions::new().with_spans(true)).unwrap()
}

/// The router over `path`, serving no issues catalogue: the nearest `.framewise/` above a
/// temp dir is whatever the machine holds (another program's `/tmp/.framewise`). The tests
/// of that search make their own project and call [`app_found`].
fn app(path: &Path) -> axum::Router {
    let inspector = Inspector::open(path, None).unwrap().with_project(None);
    router(inspector, Token::from_string(TOKEN), None)
}

/// The router over `path` with the catalogue of the nearest `.framewise/`, as `view` finds it.
fn app_found(path: &Path) -> axum::Router {
    let inspector = Inspector::open(path, None).unwrap();
    router(inspector, Token::from_string(TOKEN), None)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// One GET through the router: the status and the body.
fn get_raw(app: &axum::Router, uri: &str, header_token: Option<&str>) -> (StatusCode, Vec<u8>) {
    let mut request = Request::get(uri);
    if let Some(t) = header_token {
        request = request.header("X-Framewise-Token", t);
    }
    let request = request.body(Body::empty()).unwrap();
    runtime().block_on(async {
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, body.to_vec())
    })
}

/// A GET with the token in the query; the body as JSON.
fn get(app: &axum::Router, path: &str) -> (StatusCode, Value) {
    let sep = if path.contains('?') { '&' } else { '?' };
    let (status, body) = get_raw(app, &format!("{path}{sep}token={TOKEN}"), None);
    let json = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {}", String::from_utf8_lossy(&body)));
    (status, json)
}

/// Each path is answered 400 with a one-line error.
fn all_bad(app: &axum::Router, paths: &[&str]) {
    for path in paths {
        let (got, json) = get(app, path);
        assert_eq!(got, StatusCode::BAD_REQUEST, "{path}: {json}");
        assert!(
            json["error"].as_str().is_some_and(|e| !e.contains('\n')),
            "{json}"
        );
    }
}

fn ok(app: &axum::Router, path: &str) -> Value {
    let (status, json) = get(app, path);
    assert_eq!(status, StatusCode::OK, "{path}: {json}");
    json
}

#[test]
fn every_api_request_needs_the_token() {
    let app = app(demo());
    for path in [
        "/api/capture",
        "/api/strip",
        "/api/frame?row=0",
        "/api/diff",
    ] {
        let (status, body) = get_raw(&app, path, None);
        assert_eq!(status, StatusCode::FORBIDDEN, "{path} without a token");
        let json: Value = serde_json::from_slice(&body).unwrap();
        assert!(json["error"].is_string(), "{json}");
        let wrong = format!(
            "{path}{}token=0123456789abcdef0123456789abcdee",
            if path.contains('?') { '&' } else { '?' }
        );
        assert_eq!(
            get_raw(&app, &wrong, None).0,
            StatusCode::FORBIDDEN,
            "{path}, wrong token"
        );
        assert_eq!(
            get_raw(&app, path, Some("nope")).0,
            StatusCode::FORBIDDEN,
            "{path}, wrong header"
        );
    }
    assert_eq!(get_raw(&app, "/api/capture", Some(TOKEN)).0, StatusCode::OK);
    assert_eq!(get(&app, "/api/capture").0, StatusCode::OK);
    // The token is a query parameter like any other: percent-encoded, it is the same token
    // (a client that encodes every character); a wrong one encoded is still wrong.
    let encoded: String = TOKEN.bytes().map(|b| format!("%{b:02X}")).collect();
    assert_eq!(
        get_raw(&app, &format!("/api/capture?token={encoded}"), None).0,
        StatusCode::OK
    );
    assert_eq!(
        get_raw(&app, &format!("/api/capture?%74oken={encoded}"), None).0,
        StatusCode::OK
    );
    assert_eq!(
        get_raw(&app, &format!("/api/capture?token={encoded}%30"), None).0,
        StatusCode::FORBIDDEN
    );
    // The page's own files hold no capture data and need no token.
    let (status, body) = get_raw(&app, "/", None);
    assert_eq!(status, StatusCode::OK);
    assert!(String::from_utf8_lossy(&body).contains("/app/app.js"));
    assert_eq!(get_raw(&app, "/app/app.js", None).0, StatusCode::OK);
    assert_eq!(get_raw(&app, "/app/nope.js", None).0, StatusCode::NOT_FOUND);
    assert_eq!(
        get_raw(&app, "/favicon.ico", None).0,
        StatusCode::NO_CONTENT
    );
}

#[test]
fn capture_and_strip_match_the_analysis_crates_reading() {
    let app = app(demo());
    let capture = with_spans(demo());
    let doc = ok(&app, "/api/capture");
    assert_eq!(doc["schema"], "framewise.inspector.capture/1");
    assert_eq!(doc["frame_count"], capture.frame_count());
    assert_eq!(doc["frame_count"], FRAMES);
    assert_eq!(doc["threads"], serde_json::json!(capture.threads()));
    assert_eq!(doc["recovered"], false);
    assert_eq!(doc["level"], "workload");
    assert_eq!(doc["file_bytes"], std::fs::metadata(demo()).unwrap().len());
    assert!(doc.get("compare").is_none());

    let strip = strip::strip(&app);
    for column in strip::DIRECTORY_COLUMNS
        .iter()
        .chain(&["phase", "dropped_spans"])
    {
        assert_eq!(
            strip[column].as_array().map(Vec::len),
            Some(capture.frame_count()),
            "{column}"
        );
    }
    // The last frame has no period: null, never 0.
    assert_eq!(strip["period_ns"][capture.frame_count() - 1], Value::Null);
    assert_eq!(strip["begin_ns"][0], 0);
    let report = find_hitches(&capture, &HitchOptions::default());
    assert!(!report.hitches.is_empty(), "the demo injects hitches");
    let flagged: Vec<u64> = strip["hitch"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, h)| h.as_bool() == Some(true))
        .map(|(row, _)| strip["index"][row].as_u64().unwrap())
        .collect();
    let found: Vec<u64> = report.hitches.iter().map(|h| h.frame).collect();
    assert_eq!(flagged, found);
}

#[test]
fn a_frame_holds_the_capture_spans_of_its_row() {
    let app = app(demo());
    let capture = with_spans(demo());
    let spans = capture.spans().unwrap();
    let report = find_hitches(&capture, &HitchOptions::default());
    let hitch_row = capture.row_of_index(report.hitches[0].frame).unwrap();
    for row in [0, 57, hitch_row, capture.frame_count() - 1] {
        let doc = ok(&app, &format!("/api/frame?row={row}"));
        let r = capture.frames().row(row).unwrap();
        assert_eq!(doc["row"], row);
        assert_eq!(doc["index"], r.index);
        assert_eq!(doc["begin_ns"], r.cpu_begin_ns);
        assert_eq!(doc["work_ns"], r.work_ns());
        // Every span of the row, in order per thread, at its offset from the frame's begin.
        let mut expected: Vec<(String, String, u64, i64, u64)> = spans
            .cpu
            .frame(row)
            .iter()
            .map(|s| {
                (
                    capture.threads()[s.thread as usize].clone(),
                    capture.scopes()[s.scope as usize].name.clone(),
                    u64::from(s.depth),
                    s.start_ns as i64 - r.cpu_begin_ns as i64,
                    s.end_ns - s.start_ns,
                )
            })
            .collect();
        let mut served: Vec<(String, String, u64, i64, u64)> = Vec::new();
        for lane in doc["lanes"].as_array().unwrap() {
            for s in lane["spans"].as_array().unwrap() {
                served.push((
                    lane["thread"].as_str().unwrap().to_owned(),
                    s["scope"].as_str().unwrap().to_owned(),
                    s["depth"].as_u64().unwrap(),
                    s["start_ns"].as_i64().unwrap(),
                    s["dur_ns"].as_u64().unwrap(),
                ));
            }
        }
        assert!(!served.is_empty(), "row {row} has spans");
        expected.sort();
        served.sort();
        assert_eq!(served, expected, "row {row}");
        assert_eq!(doc["gpu"]["nominal"], true);
        let totals = view::frame_totals(&capture, row);
        assert_eq!(doc["scopes"], serde_json::to_value(&totals.scopes).unwrap());
        assert_eq!(
            doc["counters"],
            serde_json::to_value(&totals.counters).unwrap()
        );
        if row == hitch_row {
            assert_eq!(
                doc["hitch"],
                serde_json::to_value(&report.hitches[0]).unwrap()
            );
        }
    }
    let plain = ok(&app, "/api/frame?row=1");
    assert_eq!(plain["hitch"], Value::Null);
}

/// The demo capture cut in the middle of a frame record, well past the start (in a
/// temporary directory, removed when it is dropped).
fn cut_demo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(demo()).unwrap();
    let path = dir.path().join("cut.sgpt");
    std::fs::write(&path, &bytes[..bytes.len() * 2 / 3 + 7]).unwrap();
    (dir, path)
}

/// The inspector as it was before frames were read on demand: the capture loaded with
/// every span kept, each frame's spans from its span table.
fn app_with_spans(path: &Path) -> axum::Router {
    let inspector = Inspector::new(with_spans(path), &path.display().to_string(), None);
    router(inspector, Token::from_string(TOKEN), None)
}

#[test]
fn frames_read_on_demand_are_the_frames_loaded_with_spans() {
    let (_dir, cut) = cut_demo();
    for path in [demo(), cut.as_path()] {
        let capture = with_spans(path);
        let report = find_hitches(&capture, &HitchOptions::default());
        let hitch_rows: Vec<usize> = report
            .hitches
            .iter()
            .filter_map(|h| capture.row_of_index(h.frame))
            .take(2)
            .collect();
        assert!(
            !hitch_rows.is_empty(),
            "{}: the demo injects hitches",
            path.display()
        );
        let n = capture.frame_count();
        let (on_demand, kept) = (app(path), app_with_spans(path));
        let mut rows = vec![0, 1, n / 2, n - 1];
        rows.extend(hitch_rows);
        for row in rows {
            let uri = format!("/api/frame?row={row}");
            let served = ok_text(&on_demand, &uri);
            assert!(served.contains("\"scope\""), "row {row} has spans");
            assert_eq!(
                served,
                ok_text(&kept, &uri),
                "{}: row {row}",
                path.display()
            );
        }
        for uri in ["/api/capture", "/api/hitches", "/api/stats"] {
            assert_eq!(ok_text(&on_demand, uri), ok_text(&kept, uri), "{uri}");
        }
        assert_eq!(strip::strip(&on_demand), strip::strip(&kept));
    }
}

#[test]
fn a_capture_that_changes_under_the_server_is_a_500_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(demo()).unwrap();
    let path = dir.path().join("changing.sgpt");
    std::fs::write(&path, &bytes).unwrap();
    let on_demand = app(&path);
    let kept = app_with_spans(demo());
    let last = format!("/api/frame?row={}", FRAMES - 1);
    assert_eq!(ok_text(&on_demand, &last), ok_text(&kept, &last));
    // Overwritten in place, cut short: the frames past the cut are gone.
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let (status, json) = get(&on_demand, &last);
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{json}");
    let error = json["error"].as_str().unwrap();
    assert!(
        error.contains("changed after it was loaded") && !error.contains('\n'),
        "{error}"
    );
    // The frames still there are served as they were; other documents are unaffected.
    assert_eq!(
        ok_text(&on_demand, "/api/frame?row=0"),
        ok_text(&kept, "/api/frame?row=0")
    );
    strip::strip(&on_demand);
    // Replaced by another capture, then deleted: the file that was loaded stays open, so
    // its frames are still its own.
    let other = dir.path().join("other.sgpt");
    std::fs::write(&path, &bytes).unwrap();
    std::fs::copy(&captures().2, &other).unwrap();
    std::fs::rename(&other, &path).unwrap();
    assert_eq!(ok_text(&on_demand, &last), ok_text(&kept, &last));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(ok_text(&on_demand, &last), ok_text(&kept, &last));
}

/// The served body as text, asserting a 200. (Compare documents as text: serde_json's
/// default parser may read a float back one ulp off, so a parsed document is not the
/// document that was served.)
fn ok_text(app: &axum::Router, path: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    let (status, body) = get_raw(app, &format!("{path}{sep}token={TOKEN}"), None);
    let text = String::from_utf8(body).unwrap();
    assert_eq!(status, StatusCode::OK, "{path}: {text}");
    text
}

/// `document` with `"range"` added, as the inspector serializes it.
fn with_range<T: serde::Serialize>(document: &T, from: usize, to: usize) -> String {
    let mut v = serde_json::to_value(document).unwrap();
    v.as_object_mut()
        .unwrap()
        .insert("range".into(), serde_json::json!({"from": from, "to": to}));
    serde_json::to_string(&v).unwrap()
}

#[test]
fn statistics_are_summarize_over_the_range() {
    let app = app(demo());
    let capture = with_spans(demo());
    // What `framewise summarize --format json` computes, read as the CLI reads it
    // (summary-only), plus the range: byte for byte.
    let cli = load::open(demo(), &LoadOptions::new().with_summary_only(true)).unwrap();
    let frames = FRAMES as usize;
    assert_eq!(
        ok_text(&app, "/api/stats"),
        with_range(&summarize(&cli), 0, frames)
    );
    assert_eq!(
        ok_text(&app, &format!("/api/stats?from=0&to={frames}")),
        with_range(&summarize(&cli), 0, frames)
    );

    let range = summarize_with(&capture, &SummaryOptions::new().with_rows(40..120));
    assert_eq!(
        ok_text(&app, "/api/stats?from=40&to=120"),
        with_range(&range, 40, 120)
    );
    let part = ok(&app, "/api/stats?from=40&to=120");
    assert_eq!(part["capture"]["frames"], 80);
    assert_ne!(
        part["frame"]["count"],
        ok(&app, "/api/stats")["frame"]["count"]
    );

    for bad in ["from=5&to=4", "to=100000", "from=x"] {
        let (status, json) = get(&app, &format!("/api/stats?{bad}"));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {json}");
        assert!(json["error"].is_string());
    }
}

#[test]
fn hitches_are_the_hitches_verb() {
    let app = app(demo());
    let cli = load::open(demo(), &LoadOptions::new()).unwrap();
    // The CLI prints the report through `serde_json::to_value` (keys in order).
    let report = find_hitches(&cli, &HitchOptions::default());
    let doc = serde_json::to_value(framewise_analysis::HitchesDoc::new(&report)).unwrap();
    let expected = serde_json::to_string(&doc).unwrap();
    assert_eq!(ok_text(&app, "/api/hitches"), expected);
}

#[test]
fn structure_lists_the_frame_graphs_passes() {
    let app = app(demo());
    let doc = ok(&app, "/api/structure?row=100");
    let topology = &doc["topology"];
    assert!(topology.is_object(), "{doc}");
    assert_eq!(topology["id"].as_str().map(str::len), Some(16));
    let labels: Vec<&str> = topology["passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    for pass in framewise_demo::PASSES {
        assert!(labels.contains(&pass), "{pass} not in {labels:?}");
    }
    let resources = topology["resources"].as_array().unwrap().len();
    for e in topology["edges"].as_array().unwrap() {
        assert!(e["pass"].as_u64().unwrap() < labels.len() as u64);
        assert!(e["resource"].as_u64().unwrap() < resources as u64);
        assert!(["read", "write", "read-write"].contains(&e["access"].as_str().unwrap()));
    }
    assert_eq!(
        get(&app, "/api/structure?row=99999").0,
        StatusCode::NOT_FOUND
    );
}

#[test]
fn a_timing_level_capture_has_no_structure_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("timing.sgpt");
    let mut config = framewise_demo::DemoConfig::with_frames(120);
    config.output = Some(path.clone());
    config.use_env = false;
    config.threads = 1;
    config.level = framewise_demo::CaptureLevel::Timing;
    {
        let _recording = recording();
        framewise_demo::run(config).unwrap();
    }
    let doc = ok(&app(&path), "/api/structure?row=10");
    assert_eq!(doc["topology"], Value::Null);
    assert!(doc["reason"].as_str().unwrap().contains("level"), "{doc}");
}

#[test]
fn series_have_one_value_per_row_and_null_where_absent() {
    let app = app(demo());
    let capture = with_spans(demo());
    let doc = ok(&app, "/api/series?kind=scope&name=build_shading_table");
    assert_eq!(doc["unit"], "ns");
    let values = doc["values"].as_array().unwrap();
    assert_eq!(values.len(), capture.frame_count());
    assert!(
        values.iter().any(Value::is_null),
        "it runs on first use only"
    );
    assert!(values.iter().any(Value::is_u64));
    let expected = view::series(&capture, SeriesKind::Scope, "build_shading_table").unwrap();
    assert_eq!(doc["values"], serde_json::to_value(expected).unwrap());
    let draws = ok(&app, "/api/series?kind=counter&name=draw_calls");
    assert_eq!(draws["unit"], "count");
    assert_eq!(
        draws["values"].as_array().unwrap().len(),
        capture.frame_count()
    );

    let (status, json) = get(&app, "/api/series?kind=scope&name=no_such_scope");
    assert_eq!(status, StatusCode::NOT_FOUND, "{json}");
    assert_eq!(
        get(&app, "/api/series?kind=wat&name=render").0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        get(&app, "/api/series?kind=scope").0,
        StatusCode::BAD_REQUEST
    );
}

#[test]
fn compare_rows_carry_b_minus_a() {
    let app = app(demo());
    let capture = with_spans(demo());
    let doc = ok(&app, "/api/compare?a=30&b=31");
    assert_eq!(doc["a"]["row"], 30);
    assert_eq!(doc["b"]["index"], capture.frames().index[31]);
    let rows = doc["rows"].as_array().unwrap();
    let frame = rows.iter().find(|r| r["kind"] == "frame").unwrap();
    let (a, b) = (
        capture.frames().period_ns[30].unwrap() as i64,
        capture.frames().period_ns[31].unwrap() as i64,
    );
    assert_eq!(
        (frame["a"].as_i64(), frame["b"].as_i64()),
        (Some(a), Some(b))
    );
    assert_eq!(frame["delta"].as_i64(), Some(b - a));
    for r in rows {
        assert_eq!(r["direction"], "lower-is-better");
        if r["a"].is_null() || r["b"].is_null() {
            assert!(r["delta"].is_null(), "{r}");
        }
    }
    assert!(rows.iter().any(|r| r["kind"] == "scope"));
    assert!(rows.iter().any(|r| r["kind"] == "counter"));
}

#[test]
fn bad_rows_are_400_and_missing_ones_404() {
    let app = app(demo());
    for (path, status) in [
        ("/api/frame", StatusCode::BAD_REQUEST),
        ("/api/frame?row=-1", StatusCode::BAD_REQUEST),
        ("/api/frame?row=abc", StatusCode::BAD_REQUEST),
        ("/api/frame?row=240", StatusCode::NOT_FOUND),
        ("/api/compare?a=0", StatusCode::BAD_REQUEST),
        ("/api/compare?a=0&b=9999", StatusCode::NOT_FOUND),
        ("/api/diff", StatusCode::NOT_FOUND),
    ] {
        let (got, json) = get(&app, path);
        assert_eq!(got, status, "{path}: {json}");
        assert!(
            json["error"].as_str().is_some_and(|e| !e.contains('\n')),
            "{json}"
        );
    }
}

#[test]
fn with_a_second_capture_diff_is_the_diff_verb() {
    let (_, normal, slow) = captures();
    let inspector = Inspector::open(normal, Some(slow)).unwrap();
    let app = router(inspector, Token::from_string(TOKEN), None);
    let text = ok_text(&app, "/api/diff");
    let summary_only = LoadOptions::new().with_summary_only(true);
    let a = summarize(&load::open(normal, &summary_only).unwrap());
    let b = summarize(&load::open(slow, &summary_only).unwrap());
    let expected = diff::diff_json(
        &diff(&a, &b),
        (&normal.display().to_string(), &a),
        (&slow.display().to_string(), &b),
        false,
    )
    .unwrap();
    assert_eq!(text, serde_json::to_string(&expected).unwrap());
    let doc: Value = serde_json::from_str(&text).unwrap();
    let draw_calls = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "counter.draw_calls.max")
        .unwrap();
    assert_eq!(draw_calls["change"], "worse", "the slow variant draws more");
    let capture = ok(&app, "/api/capture");
    assert_eq!(capture["compare"]["frame_count"], FRAMES);
}

#[test]
fn a_truncated_capture_is_served_as_recovered() {
    let (_dir, path) = cut_demo();
    let app = app(&path);
    let doc = ok(&app, "/api/capture");
    assert_eq!(doc["recovered"], true, "{doc}");
    let kinds: Vec<&str> = doc["defects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"truncated-tail"), "{kinds:?}");
    let frames = doc["frame_count"].as_u64().unwrap();
    assert!(frames > 0 && frames < FRAMES, "{frames}");
    let strip = strip::strip(&app);
    assert_eq!(strip["index"].as_array().unwrap().len() as u64, frames);
    ok(&app, &format!("/api/frame?row={}", frames - 1));
    ok(&app, "/api/stats");
}

#[test]
fn a_file_that_is_not_a_capture_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "not a capture\n").unwrap();
    let err = Server::bind(&path, None, 0).unwrap_err();
    assert!(err.to_string().contains("not a capture"), "{err}");
}

/// One raw HTTP/1.1 GET over TCP with the given `Host` line (none when `None`): the status
/// line and the whole response.
fn raw_get(addr: std::net::SocketAddr, path: &str, host: Option<&str>) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let host_line = host.map(|h| format!("Host: {h}\r\n")).unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\n{host_line}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    String::from_utf8_lossy(&response).into_owned()
}

/// Waits until a server started with [`Server::bind`] (which loads behind) has loaded.
fn wait_loaded(addr: std::net::SocketAddr, token: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !raw_get(
        addr,
        &format!("/api/loading?token={token}"),
        Some(&addr.to_string()),
    )
    .contains(r#""state":"ready""#)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the capture never loaded"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_foreign_host_header_is_refused_on_every_route() {
    let server = Server::bind(demo(), None, 0).unwrap();
    let addr = server.addr();
    let port = addr.port();
    let token = server.token().to_owned();
    server.spawn().unwrap();

    let routes = [
        "/".to_owned(),
        "/app/app.js".to_owned(),
        "/app/style.css".to_owned(),
        "/favicon.ico".to_owned(),
        "/no/such/path".to_owned(),
        format!("/api/capture?token={token}"),
        format!("/api/strip?token={token}"),
        format!("/api/frame?row=0&token={token}"),
    ];
    let own = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    let other_port = port.wrapping_add(1).max(1);
    let foreign = [
        Some("evil.example".to_owned()),
        Some(format!("evil.example:{port}")),
        Some(format!("127.0.0.1:{other_port}")),
        Some(format!("localhost:{other_port}")),
        Some("127.0.0.1".to_owned()),
        None,
    ];
    for path in &routes {
        for host in &own {
            let response = raw_get(addr, path, Some(host));
            assert!(
                !response.starts_with("HTTP/1.1 403"),
                "{path} with Host {host} refused: {response}"
            );
        }
        for host in &foreign {
            let response = raw_get(addr, path, host.as_deref());
            assert!(
                response.starts_with("HTTP/1.1 403"),
                "{path} with Host {host:?} not refused: {response}"
            );
            assert!(
                response.contains("Host header"),
                "{path}, {host:?}: {response}"
            );
            assert!(
                !response.contains("\"frame_count\""),
                "{path}, {host:?} leaked data: {response}"
            );
        }
    }
    let page = raw_get(addr, "/", Some(&format!("localhost:{port}")));
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let refused = raw_get(addr, "/", Some("evil.example"));
    assert!(
        refused
            .to_ascii_lowercase()
            .contains("cache-control: no-store"),
        "{refused}"
    );
}

#[test]
fn it_serves_over_a_real_socket_on_loopback() {
    let server = Server::bind(demo(), None, 0).unwrap();
    let addr = server.addr();
    assert!(addr.ip().is_loopback());
    let token = server.token().to_owned();
    assert_eq!(token.len(), 32);
    assert_eq!(server.url(), format!("http://{addr}/?token={token}"));
    server.spawn().unwrap();
    wait_loaded(addr, &token);

    let host = addr.to_string();
    let request = |path: &str| raw_get(addr, path, Some(&host));
    let response = request(&format!("/api/capture?token={token}"));
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("content-type: application/json"), "{head}");
    assert!(lower.contains("cache-control: no-store"), "{head}");
    assert!(
        lower.contains("content-security-policy: default-src 'self'"),
        "{head}"
    );
    let doc: Value = serde_json::from_str(body).unwrap();
    assert_eq!(doc["frame_count"], FRAMES);

    let forbidden = request("/api/capture");
    assert!(forbidden.starts_with("HTTP/1.1 403"), "{forbidden}");
    let page = request("/app/app.js");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page
        .to_ascii_lowercase()
        .contains("content-type: text/javascript"));
}

#[test]
fn a_port_in_use_is_an_error_not_a_panic() {
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let inspector = Inspector::open(demo(), None).unwrap();
    let err = Server::new(inspector, port).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("cannot listen on 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn a_web_dir_is_read_from_disk_and_never_left() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.js"), "// edited\n").unwrap();
    let inspector = Inspector::open(demo(), None).unwrap();
    let app = router(
        inspector,
        Token::from_string(TOKEN),
        Some(dir.path().to_owned()),
    );
    let (status, body) = get_raw(&app, "/app/app.js", None);
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, b"// edited\n");
    for path in ["/app/..%2Fsecret.js", "/app/.hidden.js", "/app/style.css"] {
        assert_eq!(get_raw(&app, path, None).0, StatusCode::NOT_FOUND, "{path}");
    }
}

#[test]
fn without_follow_the_capture_says_follow_null() {
    let doc = ok(&app(demo()), "/api/capture");
    assert!(doc.get("follow").is_some_and(Value::is_null), "{doc}");
}

/// A game still writing its capture, for `--follow`: a recorder session writes `game.sgpt`,
/// and the test copies its bytes into the followed file `live.sgpt` as a writer's would
/// land there (appended; the header patched in place at close), so that it also controls
/// where a record is cut.
struct Game {
    session: Option<framewise::Session>,
    _recording: MutexGuard<'static, ()>,
    written: u64,
    game: PathBuf,
    live: PathBuf,
    /// How many of game.sgpt's bytes live.sgpt holds.
    copied: usize,
}

impl Game {
    fn start(dir: &Path) -> Self {
        let recording = recording();
        let game = dir.join("game.sgpt");
        let session = framewise::Session::builder()
            .writer_mode(framewise::WriterMode::Lossless)
            .build_id("follow-test")
            .start(game.as_path())
            .unwrap();
        Self {
            session: Some(session),
            _recording: recording,
            written: 0,
            game,
            live: dir.join("live.sgpt"),
            copied: 0,
        }
    }

    /// Runs `frames` frames and waits until the recorder wrote (and flushed) them all.
    fn frames(&mut self, frames: u64) {
        let session = self.session.as_ref().unwrap();
        for _ in 0..frames {
            let _frame = session.frame();
            let _update = framewise::scope!("update");
        }
        self.written += frames;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while session.frames_written() < self.written {
            assert!(
                std::time::Instant::now() < deadline,
                "the recorder wrote {} of {} frames",
                session.frames_written(),
                self.written
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    /// Appends what the recorder wrote since the last copy; with `cut`, only the first
    /// half of it (a record caught mid-write).
    fn copy(&mut self, cut: bool) {
        let bytes = std::fs::read(&self.game).unwrap();
        let mut end = bytes.len();
        if cut {
            end = self.copied + (end - self.copied) / 2;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.live)
            .unwrap();
        file.write_all(&bytes[self.copied..end]).unwrap();
        self.copied = end;
    }

    /// Stops the recorder (its header patched CLOSED) and writes the finished file over
    /// live.sgpt in place, as the writer itself does.
    fn finish(&mut self) {
        self.session.take().unwrap().stop().unwrap();
        let bytes = std::fs::read(&self.game).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.live)
            .unwrap();
        file.write_all(&bytes).unwrap();
        self.copied = bytes.len();
    }
}

/// Polls `/api/capture` until `done` holds (a generous deadline, never a timing
/// threshold), and returns that document.
fn capture_until(app: &axum::Router, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let doc = ok(app, "/api/capture");
        if done(&doc) {
            return doc;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "waited 20 s for {what}; /api/capture's follow is {} with {} frames",
            doc["follow"],
            doc["frame_count"]
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn defect_kinds(doc: &Value) -> Vec<String> {
    doc["defects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_followed_capture_grows_until_its_writer_closes_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut game = Game::start(dir.path());
    game.frames(5);
    game.copy(false);

    let follow = framewise_inspector::Follow::open(&game.live, None)
        .unwrap()
        .with_interval(std::time::Duration::from_millis(25));
    let app =
        framewise_inspector::router_following(follow, Token::from_string(TOKEN), None).unwrap();
    let first = ok(&app, "/api/capture");
    assert_eq!(first["frame_count"], 5, "{first}");
    assert_eq!(
        first["follow"],
        serde_json::json!({"generation": 0, "closed": false, "last_error": null})
    );
    // Still being written: the reader says so, and the page is told it is live.
    assert!(
        defect_kinds(&first).contains(&"unclosed".to_owned()),
        "{first}"
    );
    assert_eq!(first["recovered"], true);

    // Frames appended: a reload picks them up, under a new generation.
    game.frames(10);
    game.copy(false);
    let grown = capture_until(&app, "15 frames", |d| d["frame_count"] == 15);
    let generation = grown["follow"]["generation"].as_u64().unwrap();
    assert!(generation >= 1, "{grown}");
    assert_eq!(grown["follow"]["closed"], false);
    assert!(grown["follow"]["last_error"].is_null(), "{grown}");
    assert_eq!(strip::strip(&app)["index"].as_array().unwrap().len(), 15);
    assert_eq!(ok(&app, "/api/stats")["range"]["to"], 15);
    assert_eq!(ok(&app, "/api/frame?row=14")["row"], 14);

    // A record caught half-written: a successful reload of the frames complete so far.
    game.frames(1);
    game.copy(true);
    let cut = capture_until(&app, "a reload of the cut file", |d| {
        d["follow"]["generation"].as_u64().unwrap() > generation
    });
    assert_eq!(cut["frame_count"], 15, "{cut}");
    assert!(cut["follow"]["last_error"].is_null(), "{cut}");
    assert!(
        defect_kinds(&cut).contains(&"truncated-tail".to_owned()),
        "{cut}"
    );
    game.copy(false);
    let whole = capture_until(&app, "16 frames", |d| d["frame_count"] == 16);
    let generation = whole["follow"]["generation"].as_u64().unwrap();
    assert_eq!(ok(&app, "/api/frame?row=15")["row"], 15);

    // The file replaced by something that is not a capture: the error is reported and the
    // last good state keeps serving, its frames' spans included.
    let good = std::fs::read(&game.live).unwrap();
    let garbage = dir.path().join("garbage.txt");
    std::fs::write(&garbage, "not a capture at all\n").unwrap();
    std::fs::rename(&garbage, &game.live).unwrap();
    let failed = capture_until(&app, "last_error", |d| !d["follow"]["last_error"].is_null());
    let error = failed["follow"]["last_error"].as_str().unwrap();
    assert!(error.contains("not a capture"), "{error}");
    assert_eq!(failed["frame_count"], 16);
    assert_eq!(failed["follow"]["generation"].as_u64().unwrap(), generation);
    assert_eq!(failed["follow"]["closed"], false);
    assert_eq!(strip::strip(&app)["index"].as_array().unwrap().len(), 16);
    assert_eq!(ok(&app, "/api/frame?row=15")["row"], 15);

    // The capture back, and the writer finishing it: closed, and no longer unclosed.
    std::fs::write(&game.live, good).unwrap();
    game.frames(4);
    game.finish();
    let closed = capture_until(&app, "closed", |d| d["follow"]["closed"] == true);
    assert_eq!(closed["frame_count"], 20, "{closed}");
    assert!(closed["follow"]["last_error"].is_null(), "{closed}");
    assert!(closed["follow"]["generation"].as_u64().unwrap() > generation);
    assert!(
        !defect_kinds(&closed).contains(&"unclosed".to_owned()),
        "{closed}"
    );
    assert_eq!(closed["recovered"], false, "{closed}");
    let finished = summarize(&load::open(&game.game, &LoadOptions::new()).unwrap());
    assert_eq!(
        ok_text(&app, "/api/stats"),
        with_range(&finished, 0, 20),
        "the last reload serves what the analysis crate reads from the finished file"
    );

    // Closed: nothing looks at the file any more (a still-running poller would report this
    // within one 25 ms interval; a second is forty of them).
    std::fs::write(&game.live, "not a capture either\n").unwrap();
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert_eq!(ok(&app, "/api/capture")["follow"], closed["follow"]);
}

/// A small Chrome trace, the same on every run (the demo's timings are real): three frames
/// on `main` with nested scopes and source sites, a worker's B/E span, a counter and a mark.
fn fixed_trace() -> String {
    let mut events = vec![
        r#"{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"game"}}"#.to_owned(),
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}}"#.to_owned(),
        r#"{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}}"#.to_owned(),
    ];
    for (i, work_us) in [12_000, 9_500, 31_250].into_iter().enumerate() {
        let t = 1_000 + i * 16_667;
        events.push(format!(
            r#"{{"ph":"X","name":"frame","ts":{t},"dur":{work_us},"pid":1,"tid":1}}"#
        ));
        events.push(format!(
            r#"{{"ph":"X","name":"update","ts":{},"dur":{},"pid":1,"tid":1,"args":{{".file":"src/update.rs",".line":12}}}}"#,
            t + 100,
            work_us / 3
        ));
        events.push(format!(
            r#"{{"ph":"X","name":"physics","ts":{},"dur":{},"pid":1,"tid":1}}"#,
            t + 200,
            work_us / 6
        ));
        events.push(format!(
            r#"{{"ph":"B","name":"stream","ts":{},"pid":1,"tid":2}}"#,
            t + 50
        ));
        events.push(format!(
            r#"{{"ph":"E","ts":{},"pid":1,"tid":2}}"#,
            t + 2_050
        ));
        events.push(format!(
            r#"{{"ph":"C","name":"entities","ts":{},"pid":1,"args":{{"value":{}}}}}"#,
            t + 10,
            100 + i * 7
        ));
    }
    events.push(r#"{"ph":"i","name":"checkpoint","ts":17800,"pid":1,"tid":1,"s":"t"}"#.to_owned());
    format!("[{}]", events.join(",\n"))
}

fn fixed_app() -> axum::Router {
    let options = LoadOptions::new().with_spans(true);
    let capture =
        framewise_analysis::import::chrome::import(fixed_trace().as_bytes(), &options).unwrap();
    let mut slower = fixed_trace().replace("\"dur\":31250", "\"dur\":41250");
    slower = slower.replace("\"dur\":9500", "\"dur\":10500");
    let other = framewise_analysis::import::chrome::import(slower.as_bytes(), &options).unwrap();
    let compared = framewise_inspector::Compared {
        file: "slower.json".into(),
        capture: other,
    };
    router(
        Inspector::new(capture, "game.json", Some(compared)),
        Token::from_string(TOKEN),
        None,
    )
}

/// The body as served, whatever the status.
fn served(app: &axum::Router, path: &str) -> String {
    let sep = if path.contains('?') { '&' } else { '?' };
    let (status, body) = get_raw(app, &format!("{path}{sep}token={TOKEN}"), None);
    format!("{status}\n{}", String::from_utf8(body).unwrap())
}

#[test]
fn every_document_is_served_as_its_snapshot() {
    // Each endpoint's bytes exactly, status first: a change of key, order or number shows.
    let app = fixed_app();
    for (name, path) in [
        ("capture", "/api/capture"),
        ("frame", "/api/frame?row=1"),
        ("frame_with_mark", "/api/frame?row=0"),
        ("stats_range", "/api/stats?from=1&to=3"),
        ("hitches", "/api/hitches"),
        ("structure", "/api/structure?row=2"),
        ("series", "/api/series?kind=scope&name=update"),
        ("compare", "/api/compare?a=0&b=2"),
        ("diff", "/api/diff"),
        ("no_such_row", "/api/frame?row=9"),
        ("bad_parameter", "/api/series?kind=bogus&name=x"),
    ] {
        insta::assert_snapshot!(name, served(&app, path));
    }
    // Binary: its bytes in hex, 16 a line.
    let (status, bytes) = get_raw(&app, &format!("/api/strip?token={TOKEN}"), None);
    let hex: Vec<String> = bytes
        .chunks(16)
        .map(|line| {
            line.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    insta::assert_snapshot!("strip", format!("{status}\n{}", hex.join("\n")));
}

/// A followed file replaced by another recording's capture (moved or copied over it) is not
/// the followed capture grown: the last reading keeps serving, the error says what happened,
/// and the file is not reported closed (the game still records elsewhere).
#[test]
fn a_followed_capture_replaced_by_another_recording_is_said_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).unwrap();
    let mut other = Game::start(&other_dir);
    other.frames(7);
    other.copy(false);
    other.finish();
    let other_bytes = std::fs::read(&other.live).unwrap();
    drop(other);

    let mut game = Game::start(dir.path());
    game.frames(5);
    game.copy(false);
    let follow = framewise_inspector::Follow::open(&game.live, None)
        .unwrap()
        .with_interval(std::time::Duration::from_millis(25));
    let app =
        framewise_inspector::router_following(follow, Token::from_string(TOKEN), None).unwrap();
    assert_eq!(ok(&app, "/api/capture")["frame_count"], 5);
    let swapped = dir.path().join("swap.sgpt");
    std::fs::write(&swapped, &other_bytes).unwrap();
    std::fs::rename(&swapped, &game.live).unwrap();
    let failed = capture_until(&app, "last_error", |d| !d["follow"]["last_error"].is_null());
    let error = failed["follow"]["last_error"].as_str().unwrap();
    assert!(
        error.contains("is now another recording's capture"),
        "{error}"
    );
    assert_eq!(failed["frame_count"], 5, "the followed capture's reading");
    assert_eq!(failed["follow"]["closed"], false);
    game.finish();
}
