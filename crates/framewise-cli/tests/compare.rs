//! `framewise diff` and `framewise gate`: every exit code of the contract.

use crate::support::{
    litecap_v4, redact, redact_text, write_game, write_truncated_game, Dir, Game,
};

fn regressed() -> Game {
    Game {
        render_extra_ns: 4_000_000,
        draw_calls_extra: 30,
        ..Game::default()
    }
}

fn pair(dir: &Dir, cand: &Game) {
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_game(&dir.path("cand.sgpt"), cand);
}

#[test]
fn gate_passes_on_the_same_workload() {
    let dir = Dir::new();
    pair(&dir, &Game::default());
    let run = dir.run(&["gate", "base.sgpt", "cand.sgpt"]).expect(0);
    assert!(run.stdout.contains("PASS (exit 0)"), "{}", run.stdout);
    let json = dir
        .run(&["gate", "base.sgpt", "cand.sgpt", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["verdict"], "pass");
    assert_eq!(json["exit_code"], 0);
    let metrics: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        metrics,
        ["frame.avg", "frame.p99"],
        "the default tolerances"
    );
}

#[test]
fn two_runs_of_the_same_workload_pass_the_default_gate() {
    // Particles alive and the camera's position differ between two runs of one workload;
    // the default gate (frame.avg and frame.p99 at +10%) must not call that a regression.
    let dir = Dir::new();
    let run = |n| Game {
        run: Some(n),
        ..Game::default()
    };
    write_game(&dir.path("run1.sgpt"), &run(1));
    write_game(&dir.path("run2.sgpt"), &run(2));
    let json = dir
        .run(&["gate", "run1.sgpt", "run2.sgpt", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["verdict"], "pass", "{json}");
    let diff = dir
        .run(&["diff", "run1.sgpt", "run2.sgpt", "--json"])
        .expect(0)
        .json();
    let worse: Vec<&str> = diff["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["change"] == "worse")
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert!(
        worse.contains(&"counter.particles.max") && worse.contains(&"counter.camera.z_mm.max"),
        "the runs differ where the demo's do: {worse:?}"
    );
    // Named, a counter gates exactly; a counter wildcard covers sum counters, not gauges.
    dir.run(&[
        "gate",
        "run1.sgpt",
        "run2.sgpt",
        "--tolerance",
        "counter.camera.z_mm.max=0",
    ])
    .expect(1);
    let json = dir
        .run(&[
            "gate",
            "run1.sgpt",
            "run2.sgpt",
            "--tolerance",
            "counter.*.max=0",
            "--json",
        ])
        .expect(1)
        .json();
    let gated: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["metric"].as_str().unwrap())
        .collect();
    assert!(gated.contains(&"counter.particles.max"), "{gated:?}");
    assert!(!gated.contains(&"counter.camera.z_mm.max"), "{gated:?}");
}

/// A sum counter the base counts and the candidate has as a gauge (a Chrome trace that does
/// not declare its counters' kinds: a Chrome counter is a sample) has no sum there:
/// inconclusive, and the reason says the candidate has no value for it, not "too few values".
/// The trace `framewise trace` writes declares them, and gates as its capture does.
#[test]
fn a_sum_the_candidate_has_as_a_gauge_is_no_value_not_too_few() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    dir.run(&["trace", "base.sgpt", "-o", "cand.json"])
        .expect(0);
    let gate = [
        "gate",
        "base.sgpt",
        "cand.json",
        "--no-default-tolerances",
        "--tolerance",
        "counter.draw_calls.sum=0",
        "--format",
        "json",
    ];
    // Declared (`otherData.counters`): the sum reads back a sum, equal to the capture's.
    let json = dir.run(&gate).expect(0).json();
    assert_eq!(json["checks"][0]["status"], "pass", "{json}");
    // Undeclared, as another program's trace: a gauge.
    let mut trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("cand.json")).unwrap()).unwrap();
    trace["otherData"]
        .as_object_mut()
        .expect("otherData")
        .remove("counters")
        .expect("declared");
    std::fs::write(dir.path("cand.json"), trace.to_string()).unwrap();
    let json = dir.run(&gate).expect(2).json();
    let reason = json["reasons"][0].as_str().expect("a reason");
    assert!(
        reason.starts_with("counter.draw_calls.sum: the candidate has no value for it (a gauge is"),
        "{reason}"
    );
    assert_eq!(json["checks"][0]["status"], "too_few_values");
}

/// `gate` of a regressed pair with `--tolerance first --tolerance second`: refused (exit 4)
/// with `error` as its one line, and no verdict.
fn two_tolerances_are_refused(first: &str, second: &str, error: &str) {
    let dir = Dir::new();
    pair(&dir, &regressed());
    let run = dir
        .run(&[
            "gate",
            "base.sgpt",
            "cand.sgpt",
            "--tolerance",
            first,
            "--tolerance",
            second,
        ])
        .expect(4);
    assert_eq!(run.one_error_line(), error);
    assert!(run.stdout.is_empty(), "no verdict: {}", run.stdout);
}

/// One `--tolerance` per metric: `frame.avg=0.1 … frame.avg=0.5` is ambiguous (the last one
/// used to win, so the gate passed at 50% under a command line that also says 10%), and is
/// refused with one line and no verdict, as a JSON config naming a metric twice is.
#[test]
fn a_metric_given_two_tolerances_exits_4() {
    two_tolerances_are_refused(
        "frame.avg=0.1",
        "frame.avg =0.5",
        "framewise: error: --tolerance frame.avg is given twice: which tolerance was meant? give it once",
    );
}

/// The same metric under its alias is the same metric: `frame.P99` beside `frame.p99` was
/// accepted as two checks, the stricter deciding.
#[test]
fn a_metric_given_two_tolerances_under_two_spellings_exits_4() {
    two_tolerances_are_refused(
        "frame.p99=0.1",
        "frame.P99=0.5",
        "framewise: error: --tolerance frame.P99 names the metric --tolerance frame.p99 already names: which tolerance was meant? give it once",
    );
}

#[test]
fn a_typo_in_a_counter_path_exits_4_with_a_suggestion() {
    let dir = Dir::new();
    pair(&dir, &regressed());
    let run = dir
        .run(&[
            "gate",
            "base.sgpt",
            "cand.sgpt",
            "--no-default-tolerances",
            "--tolerance",
            "frame.avg=0.5",
            "--tolerance",
            "counter.draw_call.max=0",
        ])
        .expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("`counter.draw_call.max` is in neither capture")
            && line.contains("did you mean counter.draw_calls.max"),
        "{line}"
    );
    assert!(run.stdout.is_empty(), "no verdict: {}", run.stdout);
    // The same from a config file, for a scope.
    let line = config_error(
        &dir,
        "framewise.toml",
        "[gate.tolerances]\n\"scope.no_such_scope.p95\" = 0.1\n",
    );
    assert!(
        line.contains("no scope named `no_such_scope`") && line.contains("render, update"),
        "{line}"
    );
}

/// Writes config `name` and gates base.sgpt and cand.sgpt with it: exit 4, the error line.
fn config_error(dir: &Dir, name: &str, text: &str) -> String {
    dir.write(name, text);
    dir.run(&["gate", "base.sgpt", "cand.sgpt", "--config", name])
        .expect(4)
        .one_error_line()
        .to_owned()
}

#[test]
fn an_unknown_statistic_exits_4_with_the_nearest_ones() {
    let dir = Dir::new();
    pair(&dir, &Game::default());
    for (path, near) in [
        (
            "frame.p98=0.1",
            "did you mean frame.p90, frame.p95, frame.p99?",
        ),
        (
            "frame.nonexistent_stat=0.1",
            "its statistics: avg, count, fps",
        ),
    ] {
        let run = dir
            .run(&["gate", "base.sgpt", "cand.sgpt", "--tolerance", path])
            .expect(4);
        let line = run.one_error_line();
        assert!(line.contains(near), "{path}: {line}");
    }
}

#[test]
fn a_misspelt_config_section_is_an_error_not_the_defaults() {
    let dir = Dir::new();
    pair(&dir, &regressed());
    let line = config_error(
        &dir,
        "framewise.toml",
        "[budgets]\nframe_ms = 16.67\n\n[gaet.tolerances]\n\"counter.draw_calls.max\" = 0\n",
    );
    assert!(
        line.contains("framewise.toml: line 4:") && line.contains("`gaet`"),
        "{line}"
    );
    let line = config_error(
        &dir,
        "gate.json",
        "{\n  \"tolerances\": {\"frame.avg\": 0.1},\n  \"tolerence\": 0.5\n}\n",
    );
    assert!(
        line.contains("gate.json") && line.contains("line 3") && line.contains("`tolerence`"),
        "{line}"
    );
}

#[test]
fn a_candidate_that_lost_frames_is_inconclusive_unless_allowed() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_truncated_game(&dir.path("cut.sgpt"), &Game::default(), 0.9);
    let run = dir.run(&["gate", "base.sgpt", "cut.sgpt"]).expect(2);
    assert!(
        run.stdout.contains("INCONCLUSIVE (exit 2)")
            && run.stdout.contains("the candidate lost frames")
            && run.stdout.contains("truncated tail"),
        "{}",
        run.stdout
    );
    dir.run(&["gate", "cut.sgpt", "base.sgpt"]).expect(2);
    let json = dir
        .run(&["gate", "base.sgpt", "cut.sgpt", "--allow-damaged", "--json"])
        .json();
    assert_ne!(json["verdict"], "inconclusive", "{json}");
    let run = dir.run(&["diff", "base.sgpt", "cut.sgpt"]).expect(2);
    assert!(
        run.stdout
            .contains("inconclusive: the candidate lost frames"),
        "{}",
        run.stdout
    );
    dir.run(&["diff", "base.sgpt", "cut.sgpt", "--allow-damaged"])
        .expect(0);
    // The JSON says what the exit code says, and honours --allow-damaged as it does.
    let json = dir
        .run(&["diff", "base.sgpt", "cut.sgpt", "--json"])
        .expect(2)
        .json();
    assert_eq!(json["verdict"], "inconclusive");
    assert!(json["status"]
        .as_str()
        .is_some_and(|s| s.starts_with("inconclusive: the candidate lost frames")));
    let json = dir
        .run(&["diff", "base.sgpt", "cut.sgpt", "--allow-damaged", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["verdict"], "pass");
}

#[test]
fn a_trace_exported_from_a_capture_that_lost_frames_still_lost_them() {
    // The trace of a cut capture used to read back clean: gating it against the whole
    // capture's trace passed (exit 0) on half a run.
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_truncated_game(&dir.path("cut.sgpt"), &Game::default(), 0.5);
    dir.run(&["trace", "base.sgpt", "-o", "base.json"])
        .expect(0);
    dir.run(&["trace", "cut.sgpt", "-o", "cut.json"]).expect(0);
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path("cut.json")).unwrap()).unwrap();
    let kinds = |defects: &serde_json::Value| -> Vec<String> {
        defects
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| d["kind"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(
        kinds(&trace["otherData"]["defects"]).contains(&"truncated-tail".to_owned()),
        "{}",
        trace["otherData"]
    );
    let clean: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path("base.json")).unwrap()).unwrap();
    assert!(
        clean["otherData"].get("defects").is_none(),
        "{}",
        clean["otherData"]
    );
    let json = dir
        .run(&["gate", "base.json", "cut.json", "--json"])
        .expect(2)
        .json();
    assert_eq!(json["verdict"], "inconclusive", "{json}");
    assert!(
        json["reasons"][0]
            .as_str()
            .unwrap()
            .starts_with("the candidate lost frames"),
        "{json}"
    );
    let defect = json["defects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["kind"] == "truncated-tail")
        .unwrap_or_else(|| panic!("{json}"));
    assert_eq!(defect["side"], "cand", "{json}");
    // Both sides cut: the reason speaks of both runs.
    let json = dir
        .run(&["gate", "cut.json", "cut.json", "--json"])
        .expect(2)
        .json();
    let reason = json["reasons"][0].as_str().unwrap();
    assert!(
        reason.starts_with(
            "the base and the candidate lost frames, so their statistics describe part of runs"
        ),
        "{reason}"
    );
    // The offset was into the capture, not the trace: it is not carried.
    assert!(defect.get("offset").is_none(), "{defect}");
    assert!(
        defect["message"]
            .as_str()
            .unwrap()
            .starts_with("in the capture this trace was exported from: "),
        "{defect}"
    );
    dir.run(&["gate", "base.json", "base.json"]).expect(0);
}

/// `gate base.sgpt cand.sgpt` with the defaults and draw calls gated exactly, then `more`.
fn gate_draws<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "gate",
        "base.sgpt",
        "cand.sgpt",
        "--tolerance",
        "counter.draw_calls.max=0",
    ];
    args.extend_from_slice(more);
    args
}

#[test]
fn gate_fails_on_a_regression() {
    let dir = Dir::new();
    pair(&dir, &regressed());
    let run = dir.run(&gate_draws(&["--format", "json"])).expect(1);
    let json = run.json();
    assert_eq!(json["verdict"], "fail");
    let status = |metric: &str| {
        json["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["metric"] == metric)
            .map(|c| c["status"].as_str().unwrap().to_owned())
    };
    assert_eq!(status("frame.avg").as_deref(), Some("regressed"));
    assert_eq!(
        status("counter.draw_calls.max").as_deref(),
        Some("regressed")
    );
    assert_eq!(
        status("counter.pipelines_created.max"),
        None,
        "a counter gates only when named"
    );
    assert_eq!(json["inputs"]["cand"]["file"], "cand.sgpt");
    insta::assert_json_snapshot!("gate_fail_json", redact(&json, dir.tmp.path()));

    let run = dir.run(&gate_draws(&[])).expect(1);
    insta::assert_snapshot!(
        "gate_fail_console",
        redact_text(&run.stdout, dir.tmp.path())
    );

    let run = dir.run(&gate_draws(&["--format", "github"])).expect(1);
    assert!(
        run.stdout
            .contains("::error title=framewise gate%3A frame.avg::frame.avg regressed"),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains("::error title=framewise gate%3A counter.draw_calls.max::"));
    assert!(run.stdout.contains("### framewise gate: FAIL (exit 1)"));
    insta::assert_snapshot!("gate_fail_github", run.stdout);

    // With $GITHUB_STEP_SUMMARY set, the markdown goes there and the annotations stay.
    let summary = dir.path("summary.md");
    let run = dir
        .run_env(
            &gate_draws(&["--format", "github"]),
            &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
        )
        .expect(1);
    assert!(run.stdout.starts_with("::error"));
    assert!(!run.stdout.contains("### framewise gate"));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("### framewise gate: FAIL (exit 1)"), "{md}");

    let run = dir.run(&gate_draws(&["--format", "markdown"])).expect(1);
    assert!(run.stdout.contains("| frame.avg |"), "{}", run.stdout);
}

#[test]
fn tolerances_decide() {
    let dir = Dir::new();
    pair(&dir, &regressed());
    // Loose enough for the frame time, and draw calls not gated: pass.
    dir.run(&[
        "gate",
        "base.sgpt",
        "cand.sgpt",
        "--no-default-tolerances",
        "--tolerance",
        "frame.avg=0.5",
        "--tolerance",
        "frame.p99=0.5",
    ])
    .expect(0);
    // Draw calls gated exactly: fail.
    dir.run(&[
        "gate",
        "base.sgpt",
        "cand.sgpt",
        "--no-default-tolerances",
        "--tolerance",
        "frame.avg=0.5",
        "--tolerance",
        "counter.draw_calls.max=0",
    ])
    .expect(1);
    // fps falls: higher-is-better metrics gate in the opposite direction.
    let json = dir
        .run(&[
            "gate",
            "base.sgpt",
            "cand.sgpt",
            "--no-default-tolerances",
            "--tolerance",
            "frame.fps=0.05",
            "--json",
        ])
        .expect(1)
        .json();
    assert_eq!(json["checks"][0]["direction"], "higher_is_better");
    assert_eq!(json["checks"][0]["status"], "regressed");
    // The reverse comparison is an improvement: pass.
    dir.run(&[
        "gate",
        "cand.sgpt",
        "base.sgpt",
        "--no-default-tolerances",
        "--tolerance",
        "frame.fps=0.05",
    ])
    .expect(0);
}

#[test]
fn gate_inconclusive() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_game(&dir.path("empty.sgpt"), &Game::empty());
    let run = dir.run(&["gate", "base.sgpt", "empty.sgpt"]).expect(2);
    assert!(
        run.stdout.contains("INCONCLUSIVE (exit 2)"),
        "{}",
        run.stdout
    );
    let run = dir
        .run(&["gate", "base.sgpt", "empty.sgpt", "--format", "github"])
        .expect(2);
    assert!(
        run.stdout
            .starts_with("::warning title=framewise gate%3A INCONCLUSIVE::"),
        "{}",
        run.stdout
    );
    // A configured metric null in both (p99.9 of 300 frames): nothing compared.
    dir.run(&[
        "gate",
        "base.sgpt",
        "base.sgpt",
        "--no-default-tolerances",
        "--tolerance",
        "frame.p999=0.1",
    ])
    .expect(2);
}

#[test]
fn gate_missing_metric_is_a_regression() {
    let dir = Dir::new();
    pair(
        &dir,
        &Game {
            without_pipelines_counter: true,
            ..Game::default()
        },
    );
    let json = dir
        .run(&[
            "gate",
            "base.sgpt",
            "cand.sgpt",
            "--tolerance",
            "counter.pipelines_created.max=0",
            "--json",
        ])
        .expect(1)
        .json();
    let check = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "counter.pipelines_created.max")
        .unwrap()
        .clone();
    assert_eq!(check["status"], "missing_in_candidate");
}

#[test]
fn gate_incomparable_timing_regimes() {
    let dir = Dir::new();
    pair(
        &dir,
        &Game {
            software_adapter: true,
            ..Game::default()
        },
    );
    let run = dir.run(&["gate", "base.sgpt", "cand.sgpt"]).expect(3);
    assert!(
        run.stdout.contains("INCOMPARABLE (exit 3)"),
        "{}",
        run.stdout
    );
    // Counters compare anywhere.
    dir.run(&[
        "gate",
        "base.sgpt",
        "cand.sgpt",
        "--no-default-tolerances",
        "--tolerance",
        "counter.draw_calls.max=0",
    ])
    .expect(0);
    dir.run(&["diff", "base.sgpt", "cand.sgpt"]).expect(3);
}

/// A `.litecap`'s frame time is a work time also taken as its period: `diff` against a
/// capture of periods shows its `frame.*` rows marked and exits 3, as `gate` does, and the MCP
/// tool's diff lists no such row as worse.
#[test]
fn diff_of_a_litecap_and_a_capture_of_periods_is_incomparable() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    dir.write("run.litecap", litecap_v4(120, true));
    for (base, cand) in [("game.sgpt", "run.litecap"), ("run.litecap", "game.sgpt")] {
        let run = dir.run(&["diff", base, cand, "--all"]).expect(3);
        assert!(
            run.stdout.contains("incomparable frame times"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout
                .lines()
                .filter(|l| l.trim_start().starts_with("frame.p99 "))
                .all(|l| l.contains("(frame times differ in kind)")),
            "{}",
            run.stdout
        );
        assert!(
            !run.stdout
                .lines()
                .any(|l| l.trim_start().starts_with("work.") && l.contains("differ in kind")),
            "{}",
            run.stdout
        );
        let json = dir.run(&["diff", base, cand, "--json"]).expect(3).json();
        assert_eq!(json["frame_times_comparable"], false);
        assert_eq!(json["timing_comparable"], true);
        assert_eq!(
            (&json["verdict"], &json["exit_code"]),
            (&"incomparable".into(), &3.into())
        );
        assert!(json["status"]
            .as_str()
            .is_some_and(|s| s.starts_with("incomparable frame times")));
    }
    dir.run(&["diff", "run.litecap", "run.litecap"]).expect(0);
    let json = dir
        .run(&["diff", "game.sgpt", "game.sgpt", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["frame_times_comparable"], true);
    assert_eq!(
        (&json["verdict"], &json["exit_code"], &json["status"]),
        (&"pass".into(), &0.into(), &serde_json::Value::Null)
    );
}

#[test]
fn gate_configs() {
    let dir = Dir::new();
    pair(&dir, &regressed());
    // lite-profiler's gate config: phase. for scope., camelCase names.
    dir.write(
        "gate.json",
        r#"{"tolerances": {"frame.avg": 0.5, "phase.render.p99": 2.0, "counter.drawCalls.max": 0}}"#,
    );
    let json = dir
        .run(&[
            "gate",
            "base.sgpt",
            "cand.sgpt",
            "--config",
            "gate.json",
            "--json",
        ])
        .expect(1)
        .json();
    let checks = json["checks"].as_array().unwrap();
    assert_eq!(
        checks.len(),
        3,
        "the config replaces the defaults: {checks:?}"
    );
    let render = checks
        .iter()
        .find(|c| c["metric"] == "scope.render.p99")
        .unwrap();
    assert_eq!(render["configured"], "phase.render.p99");
    assert_eq!(render["status"], "pass");
    let draws = checks
        .iter()
        .find(|c| c["metric"] == "counter.draw_calls.max")
        .unwrap();
    assert_eq!(draws["status"], "regressed");
    // A config whose only metric is null in both (p99.9 of 300 frames): inconclusive,
    // never a pass.
    dir.write("absent.json", r#"{"tolerances": {"frame.p999": 0.1}}"#);
    dir.run(&["gate", "base.sgpt", "cand.sgpt", "--config", "absent.json"])
        .expect(2);
    // One naming a scope neither capture has: a usage error, never a pass.
    dir.write(
        "nothing.json",
        r#"{"tolerances": {"phase.physics.p99": 0.1}}"#,
    );
    dir.run(&["gate", "base.sgpt", "cand.sgpt", "--config", "nothing.json"])
        .expect(4)
        .one_error_line();
    // framewise.toml.
    dir.write(
        "framewise.toml",
        "[gate.tolerances]\n\"frame.avg\" = 0.5\n\"frame.p99\" = 0.5\n",
    );
    dir.run(&[
        "gate",
        "base.sgpt",
        "cand.sgpt",
        "--config",
        "framewise.toml",
    ])
    .expect(0);
    dir.write(
        "strict.toml",
        "[gate]\ndefaults = true\n[gate.tolerances]\n\"frame.p50\" = 0.5\n",
    );
    dir.run(&["gate", "base.sgpt", "cand.sgpt", "--config", "strict.toml"])
        .expect(1);
    // Broken configs are usage errors.
    dir.write("broken.json", r#"{"tolerances": {"frame.avg": "lots"}}"#);
    dir.run(&["gate", "base.sgpt", "cand.sgpt", "--config", "broken.json"])
        .expect(4)
        .one_error_line();
    dir.write("broken.toml", "[gate.tolerances\n");
    dir.run(&["gate", "base.sgpt", "cand.sgpt", "--config", "broken.toml"])
        .expect(4)
        .one_error_line();
    // A JSON gate config means nothing to other verbs: refused, not ignored.
    dir.run(&["hitches", "base.sgpt", "--config", "gate.json"])
        .expect(4)
        .one_error_line();
}

#[test]
fn diff_reports() {
    let dir = Dir::new();
    pair(&dir, &regressed());
    let json = dir
        .run(&["diff", "base.sgpt", "cand.sgpt", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["schema"], "framewise.diff/1");
    assert_eq!(json["timing_comparable"], true);
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "counter.draw_calls.max")
        .unwrap()
        .clone();
    assert_eq!(row["base"], 121.0);
    assert_eq!(row["cand"], 151.0);
    assert_eq!(row["change"], "worse");
    insta::assert_json_snapshot!("diff_json", redact(&json, dir.tmp.path()));
    let run = dir.run(&["diff", "base.sgpt", "cand.sgpt"]).expect(0);
    insta::assert_snapshot!("diff_console", redact_text(&run.stdout, dir.tmp.path()));
    let run = dir.run(&["diff", "base.sgpt", "base.sgpt"]).expect(0);
    assert!(run.stdout.contains("no metric differs"), "{}", run.stdout);
    let run = dir
        .run(&["diff", "base.sgpt", "base.sgpt", "--all"])
        .expect(0);
    assert!(run.stdout.contains("frame.p50"), "{}", run.stdout);
    write_game(&dir.path("empty.sgpt"), &Game::empty());
    dir.run(&["diff", "base.sgpt", "empty.sgpt"]).expect(2);
}

#[test]
fn defects_are_tagged_with_their_side() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_truncated_game(&dir.path("cut.sgpt"), &Game::default(), 0.8);
    for verb in ["diff", "gate"] {
        let run = dir.run(&[verb, "base.sgpt", "cut.sgpt", "--format", "json"]);
        let json = run.json();
        let defects = json["defects"].as_array().expect("defects array");
        assert!(!defects.is_empty(), "{verb}: {json}");
        assert!(
            defects
                .iter()
                .all(|d| d["side"] == "cand" && d["kind"].is_string()),
            "{verb}: {defects:?}"
        );
        assert!(
            defects.iter().any(|d| d["kind"] == "truncated-tail"),
            "{verb}: {defects:?}"
        );
        // Defects are said once: in the result, not again in `inputs`.
        assert!(json["inputs"]["cand"].get("defects").is_none(), "{verb}");
        let console = dir.run(&[verb, "base.sgpt", "cut.sgpt"]);
        assert!(
            console.stdout.contains("candidate defects ("),
            "{verb}: {}",
            console.stdout
        );
    }
}

/// `litecap_v4`'s frames (12 to 13.5 ms of work) declaring `budget_ms` (four characters, as
/// the fixture's `16.7`, so the meta keeps its length).
fn litecap_with_budget(with_timeline: bool, budget_ms: &str) -> Vec<u8> {
    assert_eq!(budget_ms.len(), 4);
    let mut bytes = litecap_v4(120, with_timeline);
    let at = bytes
        .windows(13)
        .position(|w| w == b"\"budgetMs\":16")
        .expect("the fixture declares budgetMs 16.7")
        + 11;
    bytes[at..at + 4].copy_from_slice(budget_ms.as_bytes());
    bytes
}

/// The frame budget each input was judged against (`inputs.*.budget_ms`), from a gate's or a
/// diff's JSON.
fn budgets_of(json: &serde_json::Value) -> (f64, f64) {
    (
        json["inputs"]["base"]["budget_ms"]
            .as_f64()
            .expect("inputs.base.budget_ms"),
        json["inputs"]["cand"]["budget_ms"]
            .as_f64()
            .expect("inputs.cand.budget_ms"),
    )
}

const JANK_EXACT: [&str; 5] = [
    "--no-default-tolerances",
    "--tolerance",
    "work.jank_ratio=0",
    "--tolerance",
    "frame.jank_ratio=0",
];

/// The same frames in two captures that declare different frame budgets (12.5 ms: every
/// frame is jank; 16.7 ms: none is) are no change: `gate` and `diff` judge both against the
/// base's budget and say so, never a jank ratio moved by the budgets alone.
#[test]
fn declared_budgets_that_differ_are_no_change() {
    let dir = Dir::new();
    dir.write("b16.litecap", litecap_with_budget(false, "16.7"));
    dir.write("b12.litecap", litecap_with_budget(false, "12.5"));
    for (base, cand, budget, jank) in [
        ("b16.litecap", "b12.litecap", 16.7, 0.0),
        ("b12.litecap", "b16.litecap", 12.5, 1.0),
    ] {
        let mut args = vec!["gate", base, cand];
        args.extend(JANK_EXACT);
        let run = dir.run(&args).expect(0);
        assert!(
            run.stdout
                .contains("note: the captures declare different frame budgets"),
            "{}",
            run.stdout
        );
        args.push("--json");
        let json = dir.run(&args).expect(0).json();
        assert_eq!(json["verdict"], "pass", "{json}");
        assert_eq!(budgets_of(&json), (budget, budget));
        for check in json["checks"].as_array().unwrap() {
            assert_eq!(
                (&check["base"], &check["cand"]),
                (&jank.into(), &jank.into())
            );
        }
        let notes = json["inputs"]["cand"]["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n
                .as_str()
                .is_some_and(|n| n.contains("12.5 ms") && n.contains("16.7 ms"))),
            "{notes:?}"
        );

        let json = dir.run(&["diff", base, cand, "--json"]).expect(0).json();
        assert_eq!(budgets_of(&json), (budget, budget));
        let moved: Vec<&serde_json::Value> = json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["change"] != "same")
            .collect();
        assert!(moved.is_empty(), "the same frames: {moved:?}");
        let run = dir.run(&["diff", base, cand]).expect(0);
        assert!(run.stdout.contains("no metric differs"), "{}", run.stdout);
        assert!(
            run.stdout
                .contains("note: the captures declare different frame budgets"),
            "{}",
            run.stdout
        );
    }
    // One budget declared on both: no note.
    let run = dir.run(&["diff", "b12.litecap", "b12.litecap"]).expect(0);
    assert!(!run.stdout.contains("note:"), "{}", run.stdout);
}

/// `--config`'s `[budgets] frame_ms` is the budget `gate` and `diff` judge both inputs
/// against, as `summarize` does, whatever either declares.
#[test]
fn gate_and_diff_judge_against_the_configured_budget() {
    let dir = Dir::new();
    dir.write("b16.litecap", litecap_with_budget(false, "16.7"));
    dir.write("b12.litecap", litecap_with_budget(false, "12.5"));
    dir.write("fw12.toml", "[budgets]\nframe_ms = 12.5\n");
    dir.write("fw30.toml", "[budgets]\nframe_ms = 33.33\n");
    for (config, budget, jank) in [("fw12.toml", 12.5, 1.0), ("fw30.toml", 33.33, 0.0)] {
        let summary = dir
            .run(&["summarize", "b16.litecap", "--config", config, "--json"])
            .expect(0)
            .json();
        assert_eq!(summary["budget_ms"], budget);
        for (base, cand) in [
            ("b16.litecap", "b12.litecap"),
            ("b12.litecap", "b16.litecap"),
            ("b16.litecap", "b16.litecap"),
        ] {
            let mut args = vec!["gate", base, cand, "--config", config, "--json"];
            args.extend(JANK_EXACT);
            let json = dir.run(&args).expect(0).json();
            assert_eq!(
                budgets_of(&json),
                (budget, budget),
                "{base} {cand} {config}"
            );
            for check in json["checks"].as_array().unwrap() {
                assert_eq!(check["status"], "pass", "{check}");
                assert_eq!(
                    (&check["base"], &check["cand"]),
                    (&jank.into(), &jank.into())
                );
            }
            assert!(
                json["inputs"]["cand"]["notes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|n| !n.as_str().unwrap().contains("frame budgets")),
                "{json}"
            );
            let json = dir
                .run(&["diff", base, cand, "--config", config, "--json"])
                .expect(0)
                .json();
            assert_eq!(budgets_of(&json), (budget, budget));
            let row = json["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["metric"] == "work.jank_ratio")
                .unwrap();
            assert_eq!((&row["base"], &row["cand"]), (&jank.into(), &jank.into()));
        }
    }
}

/// `framewise trace` carries the capture's frame budget, so a capture gated against its own
/// trace (either way round) is no change on its jank ratio, with no note on budgets.
#[test]
fn a_capture_gated_against_its_own_trace_keeps_its_budget() {
    let dir = Dir::new();
    dir.write("v.litecap", litecap_with_budget(true, "12.5"));
    dir.run(&["trace", "v.litecap", "-o", "v.json"]).expect(0);
    let summary = dir.run(&["summarize", "v.json", "--json"]).expect(0).json();
    assert_eq!(summary["budget_ms"], 12.5);
    for (base, cand) in [("v.litecap", "v.json"), ("v.json", "v.litecap")] {
        let json = dir
            .run(&[
                "gate",
                base,
                cand,
                "--no-default-tolerances",
                "--tolerance",
                "work.jank_ratio=0",
                "--json",
            ])
            .expect(0)
            .json();
        assert_eq!(json["verdict"], "pass", "{json}");
        assert_eq!(budgets_of(&json), (12.5, 12.5));
        assert_eq!(json["checks"][0]["cand"], 1.0);
        assert!(
            json["inputs"]["cand"]["notes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|n| !n.as_str().unwrap().contains("frame budgets")),
            "{json}"
        );
    }
}
