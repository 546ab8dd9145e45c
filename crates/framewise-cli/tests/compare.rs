//! `framewise diff` and `framewise gate`: every exit code of the contract.

use crate::support::{redact, redact_text, write_game, write_truncated_game, Dir, Game};

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
    for m in [
        "frame.avg",
        "frame.p99",
        "counter.draw_calls.max",
        "counter.pipelines_created.max",
    ] {
        assert!(
            metrics.contains(&m),
            "default tolerances gate {m}: {metrics:?}"
        );
    }
}

#[test]
fn gate_fails_on_a_regression() {
    let dir = Dir::new();
    pair(&dir, &regressed());
    let run = dir
        .run(&["gate", "base.sgpt", "cand.sgpt", "--format", "json"])
        .expect(1);
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
        status("counter.pipelines_created.max").as_deref(),
        Some("pass")
    );
    assert_eq!(json["inputs"]["cand"]["file"], "cand.sgpt");
    insta::assert_json_snapshot!("gate_fail_json", redact(&json, dir.tmp.path()));

    let run = dir.run(&["gate", "base.sgpt", "cand.sgpt"]).expect(1);
    insta::assert_snapshot!(
        "gate_fail_console",
        redact_text(&run.stdout, dir.tmp.path())
    );

    let run = dir
        .run(&["gate", "base.sgpt", "cand.sgpt", "--format", "github"])
        .expect(1);
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
            &["gate", "base.sgpt", "cand.sgpt", "--format", "github"],
            &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
        )
        .expect(1);
    assert!(run.stdout.starts_with("::error"));
    assert!(!run.stdout.contains("### framewise gate"));
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("### framewise gate: FAIL (exit 1)"), "{md}");

    let run = dir
        .run(&["gate", "base.sgpt", "cand.sgpt", "--format", "markdown"])
        .expect(1);
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
    // A configured metric that neither capture has.
    dir.run(&[
        "gate",
        "base.sgpt",
        "base.sgpt",
        "--no-default-tolerances",
        "--tolerance",
        "scope.nope.p95=0.1",
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
        .run(&["gate", "base.sgpt", "cand.sgpt", "--json"])
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
    // A config whose metrics neither capture has: inconclusive, never a pass.
    dir.write(
        "absent.json",
        r#"{"tolerances": {"phase.physics.p99": 0.1}}"#,
    );
    dir.run(&["gate", "base.sgpt", "cand.sgpt", "--config", "absent.json"])
        .expect(2);
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
