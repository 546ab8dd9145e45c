//! `framewise summarize`: every format, every input kind, empty captures.

use crate::support::{chrome_trace, litecap_v4, redact, redact_text, write_game, Dir, Game};

#[test]
fn sgpt_json_console_markdown() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let run = dir
        .run(&["summarize", "game.sgpt", "--format", "json"])
        .expect(0);
    let json = run.json();
    assert_eq!(json["schema"], "framewise.summary/2");
    // 300 frames; the last has no period.
    assert_eq!(json["capture"]["frames"], 300);
    assert_eq!(json["frame"]["count"], 299);
    assert_eq!(json["counters"]["pipelines_created"]["sum"], 4);
    assert_eq!(json["counters"]["draw_calls"]["max"], 121);
    assert!(json["frame"]["p999"].is_null(), "p99.9 needs 1000 frames");
    assert!(json["frame"]["null_reasons"]["p999"].is_string());
    assert_eq!(json["scopes"]["render"]["sites"][0], "src/render.rs:42");
    insta::assert_json_snapshot!("summarize_sgpt_json", redact(&json, dir.tmp.path()));

    let run = dir.run(&["summarize", "game.sgpt"]).expect(0);
    insta::assert_snapshot!(
        "summarize_sgpt_console",
        redact_text(&run.stdout, dir.tmp.path())
    );
    assert!(
        run.stderr.is_empty(),
        "no progress when stderr is not a terminal"
    );

    let run = dir
        .run(&["summarize", "game.sgpt", "--format", "markdown"])
        .expect(0);
    insta::assert_snapshot!("summarize_sgpt_markdown", run.stdout);
}

#[test]
fn json_alongside_and_bare() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let run = dir
        .run(&["summarize", "game.sgpt", "--json", "out.json"])
        .expect(0);
    assert!(run.stdout.contains("frame time"), "console stays on stdout");
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path("out.json")).unwrap()).unwrap();
    let bare = dir
        .run(&["summarize", "game.sgpt", "--json"])
        .expect(0)
        .json();
    assert_eq!(
        written, bare,
        "--json PATH and bare --json write the same JSON"
    );
}

#[test]
fn config_budget_is_reported() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    dir.write("framewise.toml", "[budgets]\nframe_ms = 8.0\n");
    let json = dir
        .run(&[
            "summarize",
            "game.sgpt",
            "--config",
            "framewise.toml",
            "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(json["budget_ms"], 8.0);
}

#[test]
fn empty_capture_is_inconclusive() {
    let dir = Dir::new();
    write_game(&dir.path("empty.sgpt"), &Game::empty());
    let run = dir.run(&["summarize", "empty.sgpt"]).expect(2);
    assert!(run.stdout.contains("frames 0"), "{}", run.stdout);
    let run = dir
        .run(&["summarize", "empty.sgpt", "--format", "github"])
        .expect(2);
    assert!(run.stdout.starts_with("::warning"), "{}", run.stdout);
}

#[test]
fn litecap_v4_capture() {
    let dir = Dir::new();
    dir.write("run.litecap", litecap_v4(120, true));
    let run = dir
        .run(&["summarize", "run.litecap", "--format", "json"])
        .expect(0);
    let json = run.json();
    assert_eq!(json["capture"]["source"], "litecap");
    assert_eq!(json["capture"]["source_version"], 4);
    assert_eq!(
        json["frame"]["count"], 120,
        "a litecap frame time is also its period"
    );
    assert!(json["scopes"]["render"].is_object(), "phases are scopes");
    assert!(json["counters"]["drawCalls"].is_object());
    assert!(json["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("work times")));
    insta::assert_json_snapshot!("summarize_litecap_json", redact(&json, dir.tmp.path()));
    let run = dir.run(&["summarize", "run.litecap"]).expect(0);
    assert!(run.stdout.contains("notes"), "{}", run.stdout);
    // Its frame time is a work time: the table's heading does not call it a period from begin
    // to begin, in either format.
    assert!(
        run.stdout
            .contains("frame time, ms (each frame's work time, taken as its period)"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("next frame's begin"), "{}", run.stdout);
    let run = dir
        .run(&["summarize", "run.litecap", "--format", "markdown"])
        .expect(0);
    assert!(!run.stdout.contains("next frame's begin"), "{}", run.stdout);
}

#[test]
fn chrome_json() {
    let dir = Dir::new();
    dir.write("trace.json", chrome_trace(150));
    let json = dir
        .run(&["summarize", "trace.json", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["capture"]["source"], "chrome");
    assert!(json["scopes"]["render"].is_object());
    assert!(json["scopes"]["update"].is_object());
    // The importer says which span it picked as the frame.
    assert!(
        json["notes"].to_string().contains("frame"),
        "{}",
        json["notes"]
    );
    let picked = dir
        .run(&["summarize", "trace.json", "--frame-span", "frame", "--json"])
        .expect(0)
        .json();
    assert_eq!(picked["frame"]["count"], json["frame"]["count"]);
    insta::assert_json_snapshot!("summarize_chrome_json", redact(&json, dir.tmp.path()));
}

#[test]
fn gauges_are_read_by_level_never_ranked_totalled_or_gated_by_a_sum() {
    // `camera.z_mm` is a gauge (a position, about 91,000 mm each frame): its sum over 300
    // frames (27 million) ranked it first among the counters "by sum", above every count.
    let dir = Dir::new();
    let game = Game {
        run: Some(1),
        ..Game::default()
    };
    write_game(&dir.path("game.sgpt"), &game);
    let json = dir
        .run(&["summarize", "game.sgpt", "--format", "json"])
        .expect(0)
        .json();
    let gauge = &json["counters"]["camera.z_mm"];
    assert_eq!(gauge["kind"], "gauge");
    assert!(gauge["sum"].is_null(), "{gauge}");
    assert!(gauge["null_reasons"]["sum"]
        .as_str()
        .is_some_and(|r| r.contains("gauge")));
    // Its level: the mean, the median, the extremes and the last value.
    assert_eq!(gauge["p50"], 91_449.5);
    assert_eq!(gauge["max"], 91_898);
    assert_eq!(gauge["last"], 91_898);
    // A sum counter keeps its total.
    assert_eq!(json["counters"]["draw_calls"]["sum"], 36_150);

    // People see the sums ranked by sum and the gauges apart, by name.
    let console = dir
        .run(&["summarize", "game.sgpt", "--top", "1"])
        .expect(0)
        .stdout;
    let sums = console
        .split("\ncounters, sums (")
        .nth(1)
        .expect("a sums section");
    let (sums, gauges) = sums.split_once("\ngauges (").expect("a gauges section");
    assert!(sums.contains("top 1 of 3 by sum"), "{console}");
    assert!(sums.contains("particles"), "{console}");
    assert!(!sums.contains("camera.z_mm"), "{console}");
    assert!(gauges.contains("camera.z_mm"), "{console}");
    assert!(!gauges.contains(" sum "), "{console}");
    let markdown = dir
        .run(&["summarize", "game.sgpt", "--format", "markdown"])
        .expect(0)
        .stdout;
    assert!(markdown.contains("**Gauges**"), "{markdown}");
    assert!(
        !markdown.contains("counter.camera.z_mm.sum"),
        "no null reason for a column no table has: {markdown}"
    );

    // `diff` has no row for a gauge's sum; `gate` refuses to gate one, pointing at its level.
    let diff = dir
        .run(&["diff", "game.sgpt", "game.sgpt", "--format", "json"])
        .expect(0)
        .json();
    let rows = diff["rows"].as_array().expect("rows");
    assert!(rows
        .iter()
        .any(|r| r["metric"] == "counter.camera.z_mm.p50"));
    assert!(!rows
        .iter()
        .any(|r| r["metric"] == "counter.camera.z_mm.sum"));
    let run = dir
        .run(&[
            "gate",
            "game.sgpt",
            "game.sgpt",
            "--tolerance",
            "counter.camera.z_mm.sum=0",
        ])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: `counter.camera.z_mm.sum`: `camera.z_mm` is a gauge, a level sampled each frame, and has no sum; gate its level: counter.camera.z_mm.avg, .p50, .max or .last"
    );
}

/// A Chrome trace of 10 frames with one counter sample each: `bytes` (a sum, as a framewise
/// trace declares it) and `level` (a gauge) are 1e308 in the first two frames and 1 after.
fn huge_counter_trace() -> String {
    let mut events = Vec::new();
    for i in 0..10u64 {
        let ts = i * 16_000;
        let value = if i < 2 { 1e308 } else { 1.0 };
        events.push(serde_json::json!({"ph": "X", "name": "frame", "pid": 1, "tid": 1, "ts": ts, "dur": 10_000}));
        events.push(serde_json::json!({"ph": "C", "name": "bytes", "pid": 1, "tid": 1, "ts": ts + 10, "args": {"value": value}}));
        events.push(serde_json::json!({"ph": "C", "name": "level", "pid": 1, "tid": 1, "ts": ts + 10, "args": {"value": value}}));
    }
    let other = serde_json::json!({
        "generator": "framewise",
        "counters": [{"name": "bytes", "kind": "sum", "numeric": "float"}],
    });
    serde_json::json!({"traceEvents": events, "otherData": other}).to_string()
}

#[test]
fn a_counter_whose_sum_overflows_keeps_its_mean_and_reads_alike_in_json_and_console() {
    let dir = Dir::new();
    dir.write("trace.json", huge_counter_trace());
    let json = dir
        .run(&["summarize", "trace.json", "--format", "json"])
        .expect(0)
        .json();
    let bytes = &json["counters"]["bytes"];
    assert_eq!(bytes["kind"], "sum", "{bytes}");
    assert_eq!(bytes["count"], 10);
    // Two values of 1e308 add up beyond f64: the sum is null and says why; the mean (2e307)
    // is no overflow, and is given.
    assert!(bytes["sum"].is_null(), "{bytes}");
    let reason = bytes["null_reasons"]["sum"].as_str().unwrap_or_default();
    assert!(reason.contains("overflows f64"), "{bytes}");
    let avg = bytes["avg"].as_f64().expect("a mean of finite values");
    assert!((avg / 2e307 - 1.0).abs() < 1e-12, "{avg}");
    assert_eq!(bytes["max"], 1e308);
    let level = &json["counters"]["level"];
    assert_eq!(level["kind"], "gauge");
    assert_eq!(level["avg"], bytes["avg"], "{level}");
    // Every statistic is a number or null with its reason: nothing the console could print
    // as `inf` while the JSON says null.
    for counter in [bytes, level] {
        for (stat, value) in counter.as_object().expect("an object") {
            if value.is_null() {
                assert!(
                    counter["null_reasons"][stat].is_string(),
                    "{stat}: {counter}"
                );
            }
        }
    }

    let console = dir.run(&["summarize", "trace.json"]).expect(0).stdout;
    let row = |name: &str| {
        console
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no `{name}` row:\n{console}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    // counter, frames, sum, avg, min, p01, p50, p99, max, last
    assert_eq!(
        row("bytes"),
        ["bytes", "10", "—", "2e307", "1", "—", "1", "—", "1e308", "1"],
        "{console}"
    );
    // gauge, frames, avg, min, p01, p50, p99, max, last
    assert_eq!(
        row("level"),
        ["level", "10", "2e307", "1", "—", "1", "—", "1e308", "1"],
        "{console}"
    );
    assert!(
        console.contains("the sum overflows f64") && console.contains("counter.bytes.sum"),
        "the console says why the sum is missing:\n{console}"
    );
    assert!(
        !console.contains("inf") && !console.contains("0000000000"),
        "no `inf`, no 309-digit number:\n{console}"
    );
}
