//! Documents that say what they do not know: spans a capture did not record, a range's own
//! dropped spans, hitches on the rows they were found on when frame indices repeat, and the
//! size of a file that has none.

use axum::http::StatusCode;
use framewise_analysis::hitch::judge_frames;
use framewise_analysis::{
    find_hitches, load, summarize_with, HitchOptions, LoadOptions, SummaryOptions,
};
use framewise_inspector::{router, Inspector, Token};
use serde_json::Value;

use super::{app, captures, demo, get, ok, ok_text, with_range, FRAMES, TOKEN};

/// A `.litecap` v3 buffer in lite-profiler's layout: `frames` frames, phases `update` and
/// `render` (per-frame times only: the format records no spans before v4's timeline), a
/// `drawCalls` counter.
fn litecap_v3(frames: usize) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"LCAP");
    out.push(3);
    out.extend_from_slice(&(frames as u32).to_le_bytes());
    out.push(2);
    let frame_ms: Vec<f32> = (0..frames).map(|i| 12.0 + (i % 4) as f32 * 0.5).collect();
    let update_ms: Vec<f32> = (0..frames).map(|i| 3.0 + (i % 3) as f32 * 0.25).collect();
    let render_ms: Vec<f32> = (0..frames).map(|i| 6.0 + (i % 2) as f32 * 0.5).collect();
    for v in frame_ms.iter().chain(&update_ms).chain(&render_ms) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let tag = |out: &mut Vec<u8>, t: &str| {
        out.push(t.len() as u8);
        out.extend_from_slice(t.as_bytes());
    };
    tag(&mut out, "update");
    tag(&mut out, "render");
    let meta = br#"{"label":"fixture","budgetMs":16.7}"#;
    out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    out.extend_from_slice(meta);
    out.push(1);
    for i in 0..frames {
        out.extend_from_slice(&(100.0f32 + (i % 3) as f32).to_le_bytes());
    }
    tag(&mut out, "drawCalls");
    out
}

#[test]
fn a_capture_without_spans_says_so_rather_than_draw_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.litecap");
    std::fs::write(&path, litecap_v3(150)).unwrap();
    let app = app(&path);
    // Its scopes ran: the statistics and series have them.
    let stats = ok(&app, "/api/stats");
    assert!(stats["scopes"]["render"]["calls"].as_u64().unwrap() == 150);

    // The flame graph, folded from spans, has none: it says why instead of being empty.
    let flame = ok(&app, "/api/flame");
    assert_eq!(flame["total_ns"], 0);
    assert_eq!(flame["spans_recorded"], false, "{flame}");
    let reason = flame["reason"].as_str().unwrap();
    assert!(
        reason.contains("render") && reason.contains("update"),
        "{reason}"
    );
    let one = ok(&app, "/api/flame?from=3&to=4");
    assert_eq!(one["spans_recorded"], false);
    let diff = ok(&app, "/api/flame-diff?a_from=0&a_to=1&b_from=1&b_to=2");
    assert_eq!(diff["spans_recorded"], false, "{diff}");

    // Search lists no runs and says they are unknown: never an empty list called complete.
    let found = ok(&app, "/api/search?q=render");
    let spans = &found["matches"][0]["spans"];
    assert_eq!(found["matches"][0]["name"], "render");
    assert_eq!(spans["total"], 150);
    assert_eq!(spans["longest"], serde_json::json!([]));
    assert_eq!(spans["complete"], false, "{spans}");
    assert_eq!(spans["spans_recorded"], false);
    assert!(spans["reason"].as_str().unwrap().contains("render"));
    // Its frames by value are still there.
    assert_eq!(
        found["matches"][0]["occurrences"].as_array().unwrap().len(),
        10
    );

    // A capture with its spans says they were recorded.
    let demo_app = super::app(demo());
    let flame = ok(&demo_app, "/api/flame?from=0&to=5");
    assert_eq!(flame["spans_recorded"], true);
    assert_eq!(flame["reason"], Value::Null);
    let found = ok(&demo_app, "/api/search?q=render");
    let spans = &found["matches"][0]["spans"];
    assert_eq!(spans["spans_recorded"], true, "{found}");
    assert_eq!(spans["reason"], Value::Null);
}

#[test]
fn a_ranges_statistics_are_the_ranges_own() {
    // sample-v2 dropped 12 spans, all in row 5.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../framewise-format/tests/data/sample-v2.sgpt");
    let app = app(&path);
    let whole = ok(&app, "/api/stats");
    assert_eq!(whole["capture"]["dropped_spans"], 12);
    let kinds = |doc: &Value| -> Vec<String> {
        doc["defects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(kinds(&whole).contains(&"dropped-spans".to_owned()));

    let before = ok(&app, "/api/stats?from=0&to=5");
    assert_eq!(before["capture"]["frames"], 5);
    assert_eq!(
        before["capture"]["dropped_spans"], 0,
        "{}",
        before["capture"]
    );
    assert!(!kinds(&before).contains(&"dropped-spans".to_owned()));
    let with = ok(&app, "/api/stats?from=5&to=6");
    assert_eq!(with["capture"]["dropped_spans"], 12);
    assert!(kinds(&with).contains(&"dropped-spans".to_owned()));
    // As framewise-analysis summarizes the range, byte for byte.
    let capture = load::open(&path, &LoadOptions::new()).unwrap();
    assert_eq!(
        ok_text(&app, "/api/stats?from=0&to=5"),
        with_range(
            &summarize_with(&capture, &SummaryOptions::new().with_rows(0..5)),
            0,
            5
        )
    );
}

/// Two recordings in one file, as a damaged or concatenated capture holds them: the first
/// capture's records (its directory left out) followed by the second's (its header and
/// directory left out). Frame indices 0.. come twice.
fn two_recordings(dir: &std::path::Path) -> std::path::PathBuf {
    let (_, normal, slow) = captures();
    let records = |path: &std::path::Path| {
        let bytes = std::fs::read(path).unwrap();
        let directory = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
        assert!(directory > 32 && directory <= bytes.len());
        bytes[..directory].to_vec()
    };
    let mut joined = records(normal);
    joined.extend_from_slice(&records(slow)[32..]);
    let path = dir.join("joined.sgpt");
    std::fs::write(&path, joined).unwrap();
    path
}

#[test]
fn hitches_land_on_the_rows_they_were_found_on_when_indices_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_recordings(dir.path());
    let capture = load::open(&path, &LoadOptions::new()).unwrap();
    let index = &capture.frames().index;
    assert!(
        capture.frame_count() > FRAMES as usize,
        "both recordings read"
    );
    let second = (1..index.len())
        .find(|&r| index[r] <= index[r - 1])
        .unwrap();
    assert_eq!(index[second], 0, "the second recording starts again at 0");

    // The rows the hitch rule flags, in row order: one hitch each.
    let flagged: Vec<usize> = judge_frames(&capture, capture.frame_budget_ns())
        .iter()
        .enumerate()
        .filter(|(_, j)| j.as_ref().is_some_and(|j| j.hitch))
        .map(|(row, _)| row)
        .collect();
    let report = find_hitches(&capture, &HitchOptions::default());
    assert_eq!(flagged.len(), report.hitches.len());
    assert!(
        flagged.iter().any(|&r| r >= second),
        "the fixture needs a hitch in the second recording: {flagged:?}"
    );
    assert!(
        flagged
            .iter()
            .any(|&r| r >= second && index[..second].contains(&index[r])),
        "the fixture needs a hitch at an index the first recording holds too"
    );

    let app = app(&path);
    let strip = super::strip::strip(&app);
    let marked: Vec<usize> = strip["hitch"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, h)| h.as_bool().unwrap())
        .map(|(r, _)| r)
        .collect();
    assert_eq!(
        marked, flagged,
        "the strip marks the rows the hitches were found on"
    );
    let hitches = ok(&app, "/api/hitches");
    for (k, &row) in flagged.iter().enumerate() {
        let frame = ok(&app, &format!("/api/frame?row={row}"));
        assert_eq!(frame["hitch"], hitches["hitches"][k], "row {row}");
        assert_eq!(frame["hitch"]["frame"], index[row]);
    }
    // A row of the same index that broke no rule carries no hitch.
    for row in 0..capture.frame_count() {
        if flagged.contains(&row) {
            continue;
        }
        if flagged.iter().any(|&f| index[f] == index[row]) {
            let frame = ok(&app, &format!("/api/frame?row={row}"));
            assert_eq!(frame["hitch"], Value::Null, "row {row}");
        }
    }
}

#[cfg(unix)]
#[test]
fn a_capture_read_through_a_fifo_has_no_size_it_could_state() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("capture.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let bytes = std::fs::read(demo()).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
    };
    let inspector = Inspector::open(&fifo, None).unwrap().with_project(None);
    writer.join().unwrap();
    let app = router(inspector, Token::from_string(TOKEN), None);
    let (status, doc) = get(&app, "/api/capture");
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["frame_count"], FRAMES);
    assert_eq!(doc["file_bytes"], Value::Null, "never an unmeasured 0");
    let reason = doc["file_bytes_reason"].as_str().unwrap();
    assert!(reason.contains("FIFO"), "{reason}");
    // A regular file states its size, and no reason.
    let doc = ok(&super::app(demo()), "/api/capture");
    assert_eq!(doc["file_bytes"], std::fs::metadata(demo()).unwrap().len());
    assert!(doc.get("file_bytes_reason").is_none());
}
