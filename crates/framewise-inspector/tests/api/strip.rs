//! `/api/strip`'s binary columns, decoded here as docs/INSPECTOR.md specifies them (not with
//! the server's code), into JSON columns the tests compare with the analysis crate's frame
//! table; and the strip served while a capture loads behind.

use std::sync::mpsc;

use axum::http::StatusCode;
use framewise_analysis::{find_hitches, load, HitchOptions, LoadOptions};
use framewise_inspector::{router_background, Background, Token};
use serde_json::{json, Value};

use super::{demo, get, get_raw, ok, with_spans, TOKEN};

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// The strip's bytes as JSON: `{"complete", "budget_ns", "first_begin_ns", column: [..]}`,
/// `null` for a none value, a column absent (width 0) as `null`.
pub fn decode(b: &[u8]) -> Value {
    assert_eq!(&b[..8], b"FWSTRIP2", "magic");
    let rows = u32_at(b, 8) as usize;
    let flags = u32_at(b, 12);
    let widths = &b[32..40];
    let phase_count = u32_at(b, 40) as usize;
    let names_bytes = u32_at(b, 44) as usize;
    let mut at = 48;
    let mut columns: Vec<Option<Vec<Option<u64>>>> = Vec::new();
    for (i, &w) in widths.iter().enumerate() {
        let w = usize::from(w);
        if w == 0 {
            columns.push(None);
            continue;
        }
        let nullable = matches!(i, 2 | 4 | 6);
        let column = (0..rows)
            .map(|r| {
                let (v, none) = match w {
                    1 => (u64::from(b[at + r]), u64::MAX),
                    4 => (u64::from(u32_at(b, at + 4 * r)), u64::from(u32::MAX)),
                    8 => (u64_at(b, at + 8 * r), u64::MAX),
                    other => panic!("column {i} is {other} bytes wide"),
                };
                (!(nullable && v == none)).then_some(v)
            })
            .collect();
        columns.push(Some(column));
        at += (rows * w).div_ceil(8) * 8;
    }
    let mut names = Vec::new();
    let names_start = at;
    for _ in 0..phase_count {
        let len = u32_at(b, at) as usize;
        names.push(String::from_utf8(b[at + 4..at + 4 + len].to_vec()).unwrap());
        at += 4 + len;
    }
    assert_eq!(at - names_start, names_bytes, "the phase names' length");
    assert_eq!(at, b.len(), "nothing after the phase names");
    let col = |i: usize| columns[i].clone();
    let flag = |bit: u64| {
        col(5)
            .unwrap()
            .iter()
            .map(|f| f.unwrap() & bit != 0)
            .collect::<Vec<_>>()
    };
    json!({
        "complete": flags & 1 != 0,
        "budget_ns": u64_at(b, 16),
        "first_begin_ns": u64_at(b, 24),
        "index": col(0),
        "begin_ns": col(1),
        "period_ns": col(2),
        "work_ns": col(3),
        "gpu_ns": col(4),
        "hitch": flag(1),
        "paused": flag(2),
        "phase": col(6).map(|c| c.iter().map(|p| p.map(|p| names[p as usize].clone())).collect::<Vec<_>>()),
        "dropped_spans": col(7),
    })
}

/// The strip's columns the capture file's directory holds (all but phase and dropped spans).
pub const DIRECTORY_COLUMNS: [&str; 7] = [
    "index",
    "begin_ns",
    "period_ns",
    "work_ns",
    "gpu_ns",
    "hitch",
    "paused",
];

/// `/api/strip` of `app`, decoded.
pub fn strip(app: &axum::Router) -> Value {
    let (status, body) = get_raw(app, &format!("/api/strip?token={TOKEN}"), None);
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    decode(&body)
}

/// The served strip, column by column, is the analysis crate's frame table (and its hitch
/// report's rows).
#[test]
fn the_strip_is_the_frame_table_column_by_column() {
    let capture = with_spans(demo());
    let f = capture.frames();
    let report = find_hitches(&capture, &HitchOptions::default());
    let hitch_rows: Vec<usize> = report
        .hitches
        .iter()
        .filter_map(|h| capture.row_of_index(h.frame))
        .collect();
    let phase = |p: &Option<u32>| p.and_then(|p| capture.phases().get(p as usize).cloned());
    let expected = json!({
        "complete": true,
        "budget_ns": capture.frame_budget_ns(),
        "first_begin_ns": f.cpu_begin_ns[0],
        "index": f.index,
        "begin_ns": f.cpu_begin_ns.iter().map(|&b| b - f.cpu_begin_ns[0]).collect::<Vec<_>>(),
        "period_ns": f.period_ns,
        "work_ns": f.rows().map(|r| r.work_ns()).collect::<Vec<_>>(),
        "gpu_ns": f.gpu_ns,
        "hitch": (0..f.len()).map(|r| hitch_rows.contains(&r)).collect::<Vec<_>>(),
        "paused": f.paused,
        "phase": f.phase.iter().map(phase).collect::<Vec<_>>(),
        "dropped_spans": (0..f.len()).map(|r| capture.dropped_spans_in(r)).collect::<Vec<_>>(),
    });
    assert!(!hitch_rows.is_empty(), "the demo injects hitches");
    assert!(f.phase.iter().any(Option::is_some), "the demo sets phases");
    assert_eq!(strip(&super::app(demo())), expected);
}

/// While the capture loads behind, the strip is the directory's (the loaded one's columns
/// but phase and dropped spans, which are absent, and it says it is not complete), every
/// other document answers 503 and `/api/loading` says it is loading; once loaded, every
/// document is served and the strip is the loaded capture's.
#[test]
fn a_capture_loading_behind_serves_its_strip_first() {
    let (release, held) = mpsc::channel::<()>();
    let background = Background::open(demo(), LoadOptions::new())
        .unwrap()
        .expect("a closed capture has a directory")
        .before_loading(move || {
            let _ = held.recv();
        });
    assert_eq!(background.frame_count(), super::FRAMES as usize);
    let app = router_background(background, Token::from_string(TOKEN), None).unwrap();

    let early = strip(&app);
    assert_eq!(early["complete"], false);
    assert_eq!(early["phase"], Value::Null);
    assert_eq!(early["dropped_spans"], Value::Null);
    let loading = ok(&app, "/api/loading");
    assert_eq!(loading["state"], "loading", "{loading}");
    assert_eq!(loading["frame_count"], super::FRAMES);
    for path in [
        "/api/capture",
        "/api/hitches",
        "/api/frame?row=0",
        "/api/stats",
    ] {
        let (status, json) = get(&app, path);
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {json}");
        let error = json["error"].as_str().unwrap();
        assert!(
            error.contains("still loading") && !error.contains('\n'),
            "{error}"
        );
    }
    // The token is still checked first.
    assert_eq!(get_raw(&app, "/api/strip", None).0, StatusCode::FORBIDDEN);

    release.send(()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ok(&app, "/api/loading")["state"] != "ready" {
        assert!(std::time::Instant::now() < deadline, "the load never ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let loaded = strip(&app);
    assert_eq!(loaded, strip(&super::app(demo())));
    for column in DIRECTORY_COLUMNS.iter().chain(&["budget_ns"]) {
        assert_eq!(
            early[column], loaded[column],
            "{column}: the directory's and the loaded capture's"
        );
    }
    let capture = load::open(demo(), &LoadOptions::new()).unwrap();
    assert_eq!(
        ok(&app, "/api/capture")["frame_count"],
        capture.frame_count()
    );
    ok(&app, "/api/hitches");
    ok(&app, "/api/frame?row=0");
}

/// The directory and the load read the file one after the other: a file replaced in between
/// (here by a copy of itself, a new file at the same path) fails the load, saying why, rather
/// than serve one file's strip beside another's frames.
#[test]
fn a_capture_replaced_while_it_loads_fails_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replaced.sgpt");
    std::fs::copy(demo(), &path).unwrap();
    let replacement = dir.path().join("replacement.sgpt");
    std::fs::copy(demo(), &replacement).unwrap();
    let (from, to) = (replacement.clone(), path.clone());
    let background = Background::open(&path, LoadOptions::new())
        .unwrap()
        .expect("a closed capture has a directory")
        .before_loading(move || std::fs::rename(&from, &to).unwrap());
    let app = router_background(background, Token::from_string(TOKEN), None).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let loading = loop {
        let loading = ok(&app, "/api/loading");
        if loading["state"] != "loading" {
            break loading;
        }
        assert!(std::time::Instant::now() < deadline, "the load never ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(loading["state"], "failed", "{loading}");
    let error = loading["error"].as_str().unwrap();
    assert!(
        error.contains("changed after its frame directory was read") && !error.contains('\n'),
        "{error}"
    );
    let (status, _) = get(&app, "/api/capture");
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
}
