//! `framewise trace`: a file Perfetto and chrome://tracing load, checked structurally.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{chrome_trace, litecap_v4, redact, write_game, Dir, Game};

/// Checks what a trace viewer relies on: every event has `ph`, `pid`, `tid` and `ts`
/// (metadata too: the exporter writes `"ts":0` on `M` events, since some consumers reject
/// an event without one); `X` events have `dur >= 0`; on each track, no child outlasts its
/// parent.
fn validate(trace: &Value) -> usize {
    let events = trace["traceEvents"].as_array().expect("traceEvents array");
    assert!(!events.is_empty());
    let mut tracks: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for e in events {
        let ph = e["ph"].as_str().unwrap_or_else(|| panic!("no ph: {e}"));
        assert!(e["pid"].is_u64(), "pid: {e}");
        assert!(e["tid"].is_u64(), "tid: {e}");
        assert!(e["ts"].is_number(), "ts: {e}");
        if ph == "M" {
            assert_eq!(e["ts"], 0, "metadata at ts 0: {e}");
        }
        assert!(
            ["X", "i", "I", "C", "M", "B", "E"].contains(&ph),
            "known phase: {e}"
        );
        if ph == "X" {
            let ts = e["ts"].as_f64().expect("checked above");
            let dur = e["dur"]
                .as_f64()
                .unwrap_or_else(|| panic!("X without dur: {e}"));
            assert!(dur >= 0.0, "dur >= 0: {e}");
            tracks
                .entry((
                    e["pid"].as_u64().expect("checked above"),
                    e["tid"].as_u64().expect("checked above"),
                ))
                .or_default()
                .push((ts, ts + dur));
        }
    }
    let mut nested = 0;
    for spans in tracks.values_mut() {
        // Parents first: by start, then longest first.
        spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut stack: Vec<(f64, f64)> = Vec::new();
        for &(start, end) in spans.iter() {
            while stack.last().is_some_and(|&(_, pend)| pend <= start) {
                stack.pop();
            }
            if let Some(&(pstart, pend)) = stack.last() {
                assert!(
                    end <= pend + 1e-6,
                    "child [{start}, {end}] outlasts its parent [{pstart}, {pend}]"
                );
                nested += 1;
            }
            stack.push((start, end));
        }
    }
    nested
}

#[test]
fn sgpt_trace_loads() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let run = dir.run(&["trace", "game.sgpt", "-o", "out.json"]).expect(0);
    assert!(run.stdout.starts_with("wrote "), "{}", run.stdout);
    // A capture without GPU timings has no GPU track whose clock needs a word.
    assert!(!run.stdout.contains("GPU"), "{}", run.stdout);
    let trace: Value =
        serde_json::from_slice(&std::fs::read(dir.path("out.json")).unwrap()).unwrap();
    validate(&trace);
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert!(names.contains(&"render") && names.contains(&"update"));
    assert_eq!(
        dir.partials(),
        Vec::<String>::new(),
        "no temporary file is left"
    );
    // The report as JSON.
    let json = dir
        .run(&[
            "trace",
            "game.sgpt",
            "-o",
            "out2.json",
            "--normalize",
            "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(json["schema"], "framewise.trace-export/1");
    assert!(json["events"].as_u64().unwrap() > 600);
    let mut report = redact(&json, dir.tmp.path());
    // The byte count follows the exporter's formatting, not this verb.
    report["bytes"] = serde_json::json!("[bytes]");
    insta::assert_json_snapshot!("trace_report_json", report);
    let normalized: Value =
        serde_json::from_slice(&std::fs::read(dir.path("out2.json")).unwrap()).unwrap();
    validate(&normalized);
    // To stdout: the trace and nothing else.
    let run = dir.run(&["trace", "game.sgpt", "-o", "-"]).expect(0);
    validate(&run.json());
    dir.run(&["trace", "game.sgpt", "-o", "-", "--format", "json"])
        .expect(4)
        .one_error_line();
}

#[test]
fn a_full_device_is_named_once_in_one_line() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let run = dir
        .run(&["trace", "game.sgpt", "-o", "/dev/full"])
        .expect(4);
    let line = run.one_error_line();
    assert!(
        line.starts_with("framewise: error: /dev/full: writing the trace failed")
            && line.contains("No space left on device"),
        "{line}"
    );
    assert_eq!(line.matches("writing the trace").count(), 1, "{line}");
}

#[test]
fn frame_span_on_a_capture_that_records_its_frames_is_a_warning() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let plain = dir.run(&["summarize", "game.sgpt", "--json"]).expect(0);
    let run = dir
        .run(&["summarize", "game.sgpt", "--json", "--frame-span", "frame"])
        .expect(0);
    assert_eq!(run.stdout, plain.stdout, "the flag changes nothing");
    assert_eq!(
        run.stderr,
        "framewise: warning: --frame-span frame is for Chrome JSON traces; game.sgpt is a .sgpt capture, which records its frames itself, and is read without it\n"
    );
    // A Chrome trace takes it without a word.
    dir.write("in.json", chrome_trace(30));
    let run = dir
        .run(&["summarize", "in.json", "--frame-span", "frame"])
        .expect(0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[test]
fn imported_traces() {
    let dir = Dir::new();
    dir.write("run.litecap", litecap_v4(60, true));
    dir.run(&["trace", "run.litecap", "-o", "lc.json"])
        .expect(0);
    validate(&serde_json::from_slice(&std::fs::read(dir.path("lc.json")).unwrap()).unwrap());
    dir.write("in.json", chrome_trace(30));
    dir.run(&["trace", "in.json", "-o", "chrome.json"])
        .expect(0);
    let exported: Value =
        serde_json::from_slice(&std::fs::read(dir.path("chrome.json")).unwrap()).unwrap();
    validate(&exported);
    // The trace's frame span became the frames (a frame track), not a scope: update and
    // render are the frame's top-level CPU spans.
    let events = exported["traceEvents"].as_array().expect("events");
    let of = |cat: &str| -> Vec<&str> {
        events
            .iter()
            .filter(|e| e["cat"] == cat)
            .filter_map(|e| e["name"].as_str())
            .collect()
    };
    assert_eq!(of("frame").len(), 30);
    let cpu = of("cpu");
    assert!(
        cpu.contains(&"update") && cpu.contains(&"render"),
        "{cpu:?}"
    );
    assert!(!cpu.contains(&"frame"), "{cpu:?}");
}

#[test]
fn litecap_without_timeline_is_refused() {
    let dir = Dir::new();
    dir.write("v3.litecap", litecap_v4(60, false));
    let run = dir
        .run(&["trace", "v3.litecap", "-o", "out.json"])
        .expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("v3.litecap") && line.contains("timeline"),
        "{line}"
    );
    assert!(!dir.path("out.json").exists());
    assert_eq!(
        dir.partials(),
        Vec::<String>::new(),
        "no temporary file is left"
    );
    // Refusing to overwrite the input.
    dir.run(&["trace", "v3.litecap", "-o", "v3.litecap"])
        .expect(4)
        .one_error_line();
}
