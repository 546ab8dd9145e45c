//! `framewise bench`: real runs of the demo through the harness, result files, comparisons,
//! the ledger, and the usage errors.

use crate::support::Dir;

const BIN: &str = env!("CARGO_BIN_EXE_framewise");

fn config(dir: &Dir, frames: u64) {
    dir.write(
        "framewise.toml",
        format!(
            "[budgets]\nframe_ms = 16.67\n\"counter.draw_calls.max\" = 300\n\n[bench.smoke]\ncommand = [{BIN:?}, \"demo\", \"--quiet\"]\nframes = {frames}\nwarmup = 10\nruns = 3\nfixed_dt = 0.016666\n"
        ),
    );
}

fn ledger_lines(dir: &Dir) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.path(".framewise/bench-history.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a ledger line is JSON"))
        .collect()
}

#[test]
fn an_ad_hoc_bench_runs_the_program_r_times_and_writes_its_result() {
    let dir = Dir::new();
    let run = dir
        .run(&[
            "bench", "--name", "adhoc", "--frames", "60", "--warmup", "10", "--runs", "3",
            "--format", "json", "--", BIN, "demo", "--quiet",
        ])
        .expect(0);
    let json = run.json();
    assert_eq!(json["schema"], "framewise.bench/1");
    assert_eq!(json["canonical"], false);
    assert_eq!(json["runs"].as_array().expect("runs").len(), 3);
    for r in json["runs"].as_array().expect("runs") {
        assert_eq!(r["frames_discarded"], 10);
        assert!(r["frames_measured"].as_u64().expect("measured") > 0);
        assert_eq!(r["frames_lost"], 0);
        assert!(r["counters"]["draw_calls"].as_i64().expect("exact counter") > 0);
    }
    assert!(json["noise_floor"]["frame.p50"].is_number(), "{json}");
    assert_eq!(json["regime"], "hardware");
    assert_eq!(json["grade"]["counters"], "exact");
    assert_eq!(json["config_hash"].as_str().expect("hash").len(), 16);
    let file = json["file"].as_str().expect("file");
    assert!(file.starts_with(".framewise/bench/adhoc-"), "{file}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path(file)).expect("written"))
            .expect("json");
    assert_eq!(written["config_hash"], json["config_hash"]);
    // Each run's capture and log stay beside the result.
    let runs_dir = dir.path(file.trim_end_matches(".json"));
    assert!(runs_dir.join("run-3.sgpt").is_file());
    assert!(runs_dir.join("run-3.log").is_file());
    assert!(
        run.stderr.is_empty(),
        "no progress bar off a terminal: {}",
        run.stderr
    );
}

#[test]
fn compare_last_appends_the_ledger_and_a_changed_config_is_incomparable() {
    let dir = Dir::new();
    config(&dir, 60);
    let first = dir
        .run(&["bench", "smoke", "--compare", "last", "--format", "json"])
        .expect(2);
    assert_eq!(first.json()["verdict"], "inconclusive");
    assert!(ledger_lines(&dir).is_empty(), "nothing was compared yet");

    let second = dir.run(&[
        "bench",
        "smoke",
        "--compare",
        "last",
        "--change",
        "nothing",
        "--format",
        "json",
    ]);
    let json = second.json();
    let verdict = json["overall"]["verdict"]
        .as_str()
        .expect("verdict")
        .to_owned();
    let expected = match verdict.as_str() {
        "regressed" => 1,
        "improved" => 0,
        "no-detectable-change" => 2,
        other => panic!("same build twice: {other}\n{json}"),
    };
    let second = second.expect(expected);
    // Counters are exact and the workload is the same: they do not move.
    let counter = json["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["metric"] == "counter.draw_calls.sum")
        .expect("draw calls compared");
    assert_eq!(counter["verdict"], "no-detectable-change", "{counter}");
    assert_eq!(counter["kind"], "counter");
    let budgets = json["overall"]["budgets"].as_array().expect("budgets");
    assert_eq!(budgets.len(), 2, "{json}");
    let ledger = ledger_lines(&dir);
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0]["verdict"], verdict.as_str());
    assert_eq!(ledger[0]["change"], "nothing");
    assert_eq!(ledger[0]["automated"], true);
    assert_eq!(ledger[0]["schema"], "framewise.ledger/1");
    assert!(second.stdout.contains("\"result_file\""));

    // A different frame count is a different workload: incomparable, exit 3.
    let results: Vec<String> = std::fs::read_dir(dir.path(".framewise/bench"))
        .expect("results")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(results.len(), 2);
    // Judged on the counters alone, the same workload twice is no detectable change, whatever
    // the machine's timings did: no timing metric is compared.
    let counted = dir
        .run(&[
            "bench",
            "--compare",
            &results[0],
            &results[1],
            "--counters-only",
            "--format",
            "json",
        ])
        .expect(2)
        .json();
    assert_eq!(counted["overall"]["verdict"], "no-detectable-change");
    assert!(
        counted["method"]
            .as_str()
            .expect("method")
            .starts_with("counters only"),
        "{counted}"
    );
    let metrics = counted["metrics"].as_array().expect("metrics");
    assert!(!metrics.is_empty());
    assert!(metrics.iter().all(|m| m["kind"] == "counter"), "{counted}");
    assert_eq!(ledger_lines(&dir).len(), 2);
    config(&dir, 40);
    let third = dir.run(&["bench", "smoke", "--format", "json"]).expect(0);
    let third_file = third.json()["file"].as_str().expect("file").to_owned();
    let run = dir
        .run(&["bench", "--compare", &results[0], &third_file])
        .expect(3);
    assert!(
        run.stdout.contains("INCOMPARABLE (exit 3)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("config hashes differ"),
        "{}",
        run.stdout
    );
    assert_eq!(ledger_lines(&dir).len(), 3);
}

#[test]
fn usage_errors_are_one_line_and_exit_4() {
    let dir = Dir::new();
    config(&dir, 60);
    std::fs::write(dir.path("run.sgpt"), b"SGPT\x02\x00\xff\xfe").expect("a binary file");
    for (args, needle) in [
        (vec!["bench", "smokey"], "did you mean smoke?"),
        (vec!["bench", "smoke", "--runs", "2"], "at least 3 runs"),
        (
            vec!["bench", "smoke", "--runs", "1001"],
            "at most 1000 runs",
        ),
        (
            vec!["bench", "smoke", "--runs", "4294967295"],
            "at most 1000 runs",
        ),
        (vec!["bench", "smoke", "--frames", "0"], "above 0"),
        (vec!["bench"], "name a bench"),
        (vec!["bench", "--name", "x"], "add -- COMMAND"),
        (vec!["bench", "--name", "a/b", "--", "true"], "bench name"),
        // An ad-hoc result under a declared bench's name would become its `last`.
        (
            vec!["bench", "--name", "smoke", "--runs", "3", "--", "true"],
            "`smoke` is a bench framewise.toml declares: run it as `framewise bench smoke`",
        ),
        (vec!["bench", "smoke", "--compare", "first"], "`last`"),
        (vec!["bench", "smoke", "--counters-only"], "--compare"),
        (
            vec!["bench", "--compare", "missing-a.json", "missing-b.json"],
            "missing-a.json",
        ),
        // A capture where a result belongs: it said "stream did not contain valid UTF-8".
        (
            vec!["bench", "--compare", "run.sgpt", "run.sgpt"],
            "run.sgpt: not a framewise bench result: not text (bench --compare takes the .json files",
        ),
        (
            vec!["bench", "--name", "t", "--runs", "3", "--", "true"],
            "without writing a capture",
        ),
        (
            vec!["bench", "--name", "f", "--runs", "3", "--", "false"],
            "failed",
        ),
    ] {
        let run = dir.run(&args).expect(4);
        let line = run.one_error_line();
        assert!(line.contains(needle), "{args:?}: {line}");
    }
    dir.write(
        "framewise.toml",
        "[bench.x]\ncommand = [\"a\"]\nruns = 100000\n",
    );
    let run = dir.run(&["bench", "x"]).expect(4);
    assert!(
        run.one_error_line().contains("at most 1000 runs"),
        "{}",
        run.stderr
    );
    dir.write("framewise.toml", "[bench.x]\ncommand = [\"a\"]\nrun = 3\n");
    let run = dir.run(&["bench", "x"]).expect(4);
    assert!(
        run.one_error_line().contains("framewise.toml: line 3"),
        "{}",
        run.stderr
    );
}

fn profile(dir: &Dir, p95_ms: f64, breached: &[&str]) {
    let breached: Vec<String> = breached.iter().map(|b| format!("{b:?}")).collect();
    std::fs::create_dir_all(dir.path(".framewise")).expect("the .framewise directory");
    dir.write(
        ".framewise/profile.json",
        format!(
            r#"{{"schema":"framewise.profile/1","at":"2026-12-01T16:20:00.000Z","regime":"hardware","automated":false,"frame_index":900,"window":{{"frames":600,"seconds":10.0}},"frame":{{"median_ms":12.5,"p95_ms":{p95_ms},"fps":80.0}},"budgets":{{"checked":1,"breached":[{}]}},"paused":false,"written":{{"hitch":0,"heartbeat":0,"usermark":0,"jitter":0}},"dropped":{{"hitch":0,"usermark":0,"jitter":0}}}}"#,
            breached.join(",")
        ),
    );
}

/// `./framewise.toml` as a link to nothing or a FIFO was skipped for
/// `.framewise/framewise.toml` (or no config) without a word: other budgets in force.
#[test]
fn a_project_config_that_is_not_a_file_is_refused_not_skipped() {
    let dir = Dir::new();
    std::fs::create_dir_all(dir.path(".framewise")).expect("mkdir");
    dir.write(".framewise/framewise.toml", "[budgets]\nframe_ms = 1000\n");
    std::os::unix::fs::symlink("gone.toml", dir.path("framewise.toml")).expect("symlink");
    let run = dir.run(&["check"]).expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: framewise.toml: is a link to nothing, not a config file (framewise.toml is a regular file; --config names another)"
    );
    std::fs::remove_file(dir.path("framewise.toml")).expect("rm link");
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path("framewise.toml"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let run = dir.run(&["bench", "smoke"]).expect(4);
    assert!(
        run.one_error_line()
            .contains("framewise.toml: is a FIFO (a named pipe)"),
        "{}",
        run.stderr
    );
}

#[test]
fn check_judges_budgets_against_the_profile_or_a_bench() {
    let dir = Dir::new();
    // No framewise.toml at all: said so, not "none declared in framewise.toml".
    let run = dir.run(&["check"]).expect(2);
    assert!(
        run.stderr
            .contains("no framewise.toml (nor .framewise/framewise.toml) to declare budgets"),
        "{}",
        run.stderr
    );
    // No budgets: a warning, exit 2 (nothing judged is not a pass).
    dir.write("framewise.toml", "[bench.x]\ncommand = [\"x\"]\n");
    let run = dir.run(&["check"]).expect(2);
    assert!(
        run.stderr.contains("no budgets are declared"),
        "{}",
        run.stderr
    );
    // Budgets but nothing measured: exit 4, one line.
    config(&dir, 40);
    let run = dir.run(&["check"]).expect(4);
    assert!(
        run.one_error_line().contains("nothing measured"),
        "{}",
        run.stderr
    );
    // A FIFO where the profile should be: refused at once (never waited on), exit 4, one
    // line that says what is there rather than "does not exist".
    std::fs::create_dir_all(dir.path(".framewise")).expect("mkdir");
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path(".framewise/profile.json"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let run = dir.run(&["check"]).expect(4);
    let line = run.one_error_line();
    assert!(line.contains("not a regular file"), "{line}");
    std::fs::remove_file(dir.path(".framewise/profile.json")).expect("rm fifo");
    // The profile: frame_ms judged on its p95; the counter budget is not in it, so the
    // check is incomplete (exit 2), never inside: exit 0 means every budget was judged.
    profile(&dir, 12.0, &[]);
    let json = dir.run(&["check", "--format", "json"]).expect(2).json();
    assert_eq!(json["verdict"], "incomplete");
    assert_eq!(json["exit_code"], 2);
    assert_eq!(json["budgets"][0]["budget"], "frame_ms");
    assert_eq!(json["budgets"][0]["state"], "inside");
    assert_eq!(json["budgets"][1]["state"], "unmeasured");
    profile(&dir, 20.0, &["frame_ms"]);
    let run = dir.run(&["check"]).expect(1);
    assert!(run.stdout.contains("BREACHED (exit 1)"), "{}", run.stdout);
    // Counters only: the profile has no counter statistic, so nothing was measured.
    dir.run(&["check", "--counters-only"]).expect(4);
    // A bench measures every metric: 44 draw calls are inside 300.
    let json = dir
        .run(&[
            "check",
            "--bench",
            "smoke",
            "--counters-only",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(json["source"]["kind"], "bench");
    assert_eq!(json["budgets"].as_array().expect("budgets").len(), 1);
    assert_eq!(json["budgets"][0]["metric"], "counter.draw_calls.max");
    assert!(json["budgets"][0]["value"].as_f64().expect("measured") > 0.0);
    // A budget naming a counter nothing measured: exit 4 with the nearest path.
    dir.write(
        "framewise.toml",
        format!(
            "[budgets]\n\"counter.draw_call.max\" = 3\n[bench.smoke]\ncommand = [{BIN:?}, \"demo\", \"--quiet\"]\nframes = 30\nwarmup = 5\nruns = 3\n"
        ),
    );
    let run = dir.run(&["check", "--bench", "smoke"]).expect(4);
    assert!(
        run.one_error_line().contains("counter.draw_calls.max"),
        "{}",
        run.stderr
    );
}

/// A profile.json holding a figure the recorder never writes (a negative p95, an absurd
/// scope time) or of another schema is refused by `check` and `hook-status` (exit 4, one
/// line), as an edited bench result is: a p95 of -3 ms is inside every budget, so judging it
/// would pass a check on a file that was not the session's.
#[test]
fn check_refuses_a_profile_holding_what_the_recorder_never_writes() {
    let dir = Dir::new();
    config(&dir, 40);
    profile(&dir, -3.0, &[]);
    for verb in ["check", "hook-status"] {
        let run = dir.run(&[verb]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.starts_with("framewise: error: .framewise/profile.json: cannot read the profile: frame.p95 = -3: not a usable value"),
            "{verb}: {line}"
        );
        assert!(run.stdout.is_empty(), "{verb}");
    }
    profile_with_counters(&dir, 44);
    let text = std::fs::read_to_string(dir.path(".framewise/profile.json")).expect("profile");
    dir.write(
        ".framewise/profile.json",
        text.replace("\"max_ms\":9.0", "\"max_ms\":1e300"),
    );
    let line = dir.run(&["check"]).expect(4).one_error_line().to_owned();
    assert!(line.contains("scope.render.max = 1e300"), "{line}");
    dir.write(
        ".framewise/profile.json",
        text.replace("framewise.profile/1", "framewise.profile/9"),
    );
    let line = dir.run(&["check"]).expect(4).one_error_line().to_owned();
    assert!(
        line.contains("schema framewise.profile/9 is not framewise.profile/1"),
        "{line}"
    );
    // A counter may be negative (a gauge can be): read and judged.
    dir.write(
        ".framewise/profile.json",
        text.replace("\"min\":30", "\"min\":-30"),
    );
    let run = dir.run(&["check"]).expect(0);
    assert!(run.stdout.contains("INSIDE (exit 0)"), "{}", run.stdout);
}

/// A profile.json whose window carries draw calls (max `draw_calls_max`) and a `render`
/// scope.
fn profile_with_counters(dir: &Dir, draw_calls_max: i64) {
    std::fs::create_dir_all(dir.path(".framewise")).expect("the .framewise directory");
    dir.write(
        ".framewise/profile.json",
        format!(
            r#"{{"schema":"framewise.profile/1","at":"2026-12-01T16:20:00.000Z","regime":"hardware","automated":false,"frame_index":900,"window":{{"frames":600,"seconds":10.0}},"frame":{{"median_ms":12.5,"p95_ms":14.0,"fps":80.0}},"counters":{{"draw_calls":40}},"counter_stats":{{"draw_calls":{{"count":599,"min":30,"max":{draw_calls_max},"avg":40.5,"last":41}}}},"scopes":{{"render":{{"count":599,"avg_ms":5.0,"min_ms":4.0,"p50_ms":5.0,"p95_ms":6.5,"max_ms":9.0}}}},"budgets":{{"checked":1,"breached":[]}},"paused":false,"written":{{"hitch":0,"heartbeat":0,"usermark":0,"jitter":0}},"dropped":{{"hitch":0,"usermark":0,"jitter":0}}}}"#
        ),
    );
}

#[test]
fn check_judges_counter_and_scope_budgets_from_the_profile() {
    let dir = Dir::new();
    dir.write(
        "framewise.toml",
        "[budgets]\n\"counter.draw_calls.max\" = 300\n\"scope.render.p95\" = 6.0\n\"counter.draw_calls.sum\" = 1\n\"scope.physics.p95\" = 2.0\n\"scope.rendr.max\" = 9.5\n",
    );
    profile_with_counters(&dir, 44);
    let run = dir.run(&["check", "--format", "json"]).expect(1);
    let json = run.json();
    assert_eq!(json["source"]["kind"], "profile");
    let state = |metric: &str| {
        let b = json["budgets"]
            .as_array()
            .expect("budgets")
            .iter()
            .find(|b| b["metric"] == metric)
            .unwrap_or_else(|| panic!("{metric}: {json}"));
        (
            b["state"].as_str().expect("state").to_owned(),
            b["value"].as_f64(),
        )
    };
    assert_eq!(
        state("counter.draw_calls.max"),
        ("inside".into(), Some(44.0))
    );
    assert_eq!(state("scope.render.p95"), ("breached".into(), Some(6.5)));
    // A statistic the profile does not carry (a window has no meaningful sum) and a scope
    // that did not run in its window: not measured, said so, never a pass.
    assert_eq!(state("counter.draw_calls.sum").0, "unmeasured");
    assert_eq!(state("scope.physics.p95").0, "unmeasured");
    assert!(
        run.stderr
            .contains("not measured: counter.draw_calls.sum, scope.physics.p95"),
        "{}",
        run.stderr
    );
    // A scope a letter away from one the window has reads as the typo it likely is.
    assert_eq!(state("scope.rendr.max").0, "unmeasured");
    assert!(
        run.stderr.contains(
            "scope.rendr.max: no such name in profile.json's window; did you mean scope.render.max,"
        ),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("scope.physics.p95: no such name"),
        "{}",
        run.stderr
    );
    // Counters only, from the same profile: the draw-call max is measured and inside, its
    // sum is not measured: incomplete, not a pass.
    let json = dir
        .run(&["check", "--counters-only", "--format", "json"])
        .expect(2)
        .json();
    assert_eq!(json["verdict"], "incomplete");
    assert_eq!(json["budgets"].as_array().expect("budgets").len(), 2);
    profile_with_counters(&dir, 4585);
    let run = dir.run(&["check", "--counters-only"]).expect(1);
    assert!(run.stdout.contains("BREACHED (exit 1)"), "{}", run.stdout);
    // Nothing the profile carries is budgeted: exit 4, never a pass.
    dir.write(
        "framewise.toml",
        "[budgets]\n\"counter.draw_calls.sum\" = 1\n\"counter.triangles.max\" = 9\n",
    );
    let run = dir.run(&["check", "--counters-only"]).expect(4);
    assert!(
        run.one_error_line().contains("nothing measured"),
        "{}",
        run.stderr
    );
}

/// A budget that was never judged (a typo'd counter, a frame block without a p95) keeps a
/// check from passing: `incomplete`, exit 2, with a warning naming each such budget and why.
/// It passed (`inside`, exit 0) with only a warning on stderr, and an agent told "exit 0
/// means the budgets pass: stop" stopped on it. A breach still wins (exit 1).
#[test]
fn check_with_a_budget_not_measured_is_incomplete_never_inside() {
    let dir = Dir::new();
    profile_with_counters(&dir, 44);
    dir.write(
        "framewise.toml",
        "[budgets]\nframe_ms = 50\n\"counter.draw_cals.max\" = 10\n",
    );
    let run = dir.run(&["check", "--format", "json"]).expect(2);
    let json = run.json();
    assert_eq!(json["verdict"], "incomplete", "{json}");
    assert_eq!(json["exit_code"], 2);
    assert_eq!(json["budgets"][0]["state"], "inside");
    assert_eq!(json["budgets"][1]["state"], "unmeasured");
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains("not measured: counter.draw_cals.max"),
        "{warnings}"
    );
    assert!(
        warnings.contains("counter.draw_cals.max: no such name in profile.json's window; did you mean counter.draw_calls.max"),
        "{warnings}"
    );
    assert!(
        run.stderr.contains("1 of 2 budget(s) not measured"),
        "{}",
        run.stderr
    );
    let run = dir.run(&["check"]).expect(2);
    assert!(
        run.stdout.starts_with("INCOMPLETE (exit 2)"),
        "{}",
        run.stdout
    );
    let run = dir.run(&["check", "--format", "github"]).expect(2);
    assert!(
        run.stdout.starts_with("::warning")
            && run.stdout.contains("title=framewise check%3A incomplete::")
            && run.stdout.contains("counter.draw_cals.max"),
        "{}",
        run.stdout
    );
    // The same with --counters-only: the one counter budget selected was not measured... but
    // it is the only one, so nothing was measured (exit 4); with a second, measured one, the
    // check is incomplete.
    dir.run(&["check", "--counters-only"]).expect(4);
    dir.write(
        "framewise.toml",
        "[budgets]\n\"counter.draw_calls.max\" = 300\n\"counter.draw_cals.max\" = 10\n",
    );
    let json = dir
        .run(&["check", "--counters-only", "--format", "json"])
        .expect(2)
        .json();
    assert_eq!(json["verdict"], "incomplete", "{json}");
    // Spelt right, the counter breaches: a breach wins over a budget not measured.
    dir.write(
        "framewise.toml",
        "[budgets]\nframe_ms = 50\n\"counter.draw_calls.max\" = 10\n\"scope.rendr.max\" = 9.5\n",
    );
    let json = dir.run(&["check", "--format", "json"]).expect(1).json();
    assert_eq!(json["verdict"], "breached", "{json}");
    // A profile whose frame block is empty: frame_ms is not measured, and said why.
    dir.write(
        "framewise.toml",
        "[budgets]\nframe_ms = 50\n\"counter.draw_calls.max\" = 300\n",
    );
    let text = std::fs::read_to_string(dir.path(".framewise/profile.json")).expect("profile");
    dir.write(
        ".framewise/profile.json",
        text.replace(
            r#""frame":{"median_ms":12.5,"p95_ms":14.0,"fps":80.0}"#,
            r#""frame":{}"#,
        ),
    );
    let run = dir.run(&["check", "--format", "json"]).expect(2);
    let json = run.json();
    assert_eq!(json["verdict"], "incomplete", "{json}");
    assert_eq!(json["budgets"][0]["state"], "unmeasured", "{json}");
    assert!(
        run.stderr
            .contains("frame_ms: profile.json's frame block has no frame.p95"),
        "{}",
        run.stderr
    );
    // Every budget measured and inside: the only exit 0.
    profile_with_counters(&dir, 44);
    let json = dir.run(&["check", "--format", "json"]).expect(0).json();
    assert_eq!(json["verdict"], "inside", "{json}");
    assert_eq!(json["warnings"], serde_json::json!([]), "{json}");
}

/// `check --bench` on runs that lost frames (the program's capture cut short after it ran)
/// cannot pass: `incomplete`, exit 2, naming the runs — even when a budget reads breached,
/// as `bench --compare` calls a side that lost frames inconclusive whatever moved. It said
/// `inside`, exit 0, with no warning.
#[test]
fn check_on_a_bench_whose_runs_lost_frames_is_incomplete() {
    let dir = Dir::new();
    dir.write(
        "game.sh",
        format!(
            "{BIN:?} demo --quiet || exit 1\ns=$(wc -c < \"$FRAMEWISE_CAPTURE\")\ntruncate -s $((s * 2 / 3)) \"$FRAMEWISE_CAPTURE\"\n"
        ),
    );
    let config = |draw_calls: u32| {
        dir.write(
            "framewise.toml",
            format!(
                "[budgets]\nframe_ms = 1000\n\"counter.draw_calls.max\" = {draw_calls}\n\n[bench.cut]\ncommand = [\"sh\", \"game.sh\"]\nframes = 40\nwarmup = 5\nruns = 3\nfixed_dt = 0.016666\n"
            ),
        );
    };
    config(100_000);
    let run = dir
        .run(&["check", "--bench", "cut", "--format", "json"])
        .expect(2);
    let json = run.json();
    assert_eq!(json["verdict"], "incomplete", "{json}");
    assert_eq!(json["exit_code"], 2);
    for b in json["budgets"].as_array().expect("budgets") {
        assert_eq!(b["state"], "inside", "{b}");
    }
    let file = json["source"]["file"].as_str().expect("the result file");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path(file)).expect("result"))
            .expect("JSON");
    assert_eq!(result["runs_with_lost_frames"], 3, "{result}");
    let warnings = json["warnings"].to_string();
    assert!(
        warnings.contains("3 of 3 bench run(s) lost frames")
            && warnings.contains("run 1 lost ")
            && warnings.contains("truncated-tail"),
        "{warnings}"
    );
    assert!(run.stderr.contains("lost frames"), "{}", run.stderr);
    // A breach on such runs is not decided either.
    config(1);
    let json = dir
        .run(&["check", "--bench", "cut", "--format", "json"])
        .expect(2)
        .json();
    assert_eq!(json["verdict"], "incomplete", "{json}");
    assert_eq!(json["budgets"][1]["state"], "breached", "{json}");
}

/// `check --json PATH` naming what check reads is refused (exit 4) before anything is
/// written: the profile, the config, and with `--bench` the ledger and the bench's results.
/// It replaced the profile and the config with its report.
#[test]
fn check_refuses_a_json_path_naming_its_inputs() {
    let dir = Dir::new();
    config(&dir, 40);
    profile_with_counters(&dir, 44);
    std::fs::create_dir_all(dir.path(".framewise/bench")).expect("mkdir");
    let result = ".framewise/bench/smoke-20261201T162000123Z.json";
    dir.write(result, "{}");
    dir.write(".framewise/bench-history.jsonl", "");
    let before = |p: &str| std::fs::read(dir.path(p)).expect(p);
    for (path, bench) in [
        (".framewise/profile.json", false),
        ("framewise.toml", false),
        ("./framewise.toml", true),
        (result, true),
        (".framewise/bench-history.jsonl", true),
    ] {
        let kept = before(path);
        let flag = format!("--json={path}");
        let mut args = vec!["check", flag.as_str()];
        if bench {
            args.extend(["--bench", "smoke"]);
        }
        let run = dir.run(&args).expect(4);
        let line = run.one_error_line();
        assert!(line.contains("--json"), "{path}: {line}");
        assert_eq!(before(path), kept, "{path} was overwritten");
        assert!(run.stdout.is_empty(), "{path}");
    }
    let json = "out.json";
    dir.run(&["check", &format!("--json={json}")]).expect(0);
    assert!(before(json).starts_with(b"{"));
}

#[test]
fn hook_status_is_silent_unless_running_or_breached() {
    let dir = Dir::new();
    config(&dir, 40);
    let run = dir.run(&["hook-status"]).expect(0);
    assert_eq!(run.stdout, "", "no profile: nothing");
    profile(&dir, 12.0, &[]);
    // Just written: a running session.
    let run = dir.run(&["hook-status"]).expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(!lines.is_empty() && lines.len() <= 5, "{}", run.stdout);
    assert!(lines[0].contains("session running"), "{}", run.stdout);
    assert!(lines[0].contains("vs budget 16.67 ms"), "{}", run.stdout);
    assert!(lines[0].contains(" · regime hardware · "), "{}", run.stdout);
    // A profile without a regime (a host that declared no GPU adapter, as the demo) names
    // none, rather than calling it unknown.
    let text = std::fs::read_to_string(dir.path(".framewise/profile.json")).expect("profile");
    dir.write(
        ".framewise/profile.json",
        text.replace(r#""regime":"hardware","#, ""),
    );
    let run = dir.run(&["hook-status"]).expect(0);
    assert!(
        run.stdout
            .starts_with("framewise: session running · frame p95 12.00 ms"),
        "{}",
        run.stdout
    );
    // Just written, but its session has ended (a session-end record of the same session in
    // perf.jsonl): the last session, not a running one. It said "session running" for the
    // ten seconds after the demo stopped.
    let session = "0123456789abcdef0123456789abcdef";
    dir.write(
        ".framewise/profile.json",
        text.replace(
            r#""automated":false,"#,
            &format!(r#""automated":false,"session":"{session}","#),
        ),
    );
    let end = |session: &str| {
        format!(
            r#"{{"type":"session-end","at":"2026-12-01T16:20:00.000Z","automated":false,"session":"{session}","frames":900,"paused_frames":0,"duration_s":15.0,"written":{{"hitch":0,"heartbeat":0,"usermark":0,"jitter":0}},"dropped":{{"hitch":0,"usermark":0,"jitter":0}}}}"#
        )
    };
    dir.write(
        ".framewise/perf.jsonl",
        format!("{}\n", end("ffffffffffffffffffffffffffffffff")),
    );
    let run = dir.run(&["hook-status"]).expect(0);
    assert!(
        run.stdout.starts_with("framewise: session running"),
        "another session's end is not this one's: {}",
        run.stdout
    );
    dir.write(".framewise/perf.jsonl", format!("{}\n", end(session)));
    let run = dir.run(&["hook-status"]).expect(0);
    assert_eq!(run.stdout, "", "ended, nothing breached: silence");
    std::fs::remove_file(dir.path(".framewise/perf.jsonl")).expect("the log");
    // An incident log that does not read is refused, not taken for a session still running.
    std::fs::create_dir(dir.path(".framewise/perf.jsonl")).expect("a directory in its place");
    let run = dir.run(&["hook-status"]).expect(4);
    assert!(
        run.one_error_line().contains("perf.jsonl"),
        "{}",
        run.stderr
    );
    std::fs::remove_dir(dir.path(".framewise/perf.jsonl")).expect("removed");
    // An old profile with nothing breached: silence; breached: said.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let set_old = |dir: &Dir| {
        let f = std::fs::File::options()
            .write(true)
            .open(dir.path(".framewise/profile.json"))
            .expect("profile");
        f.set_modified(old).expect("mtime");
    };
    set_old(&dir);
    assert_eq!(dir.run(&["hook-status"]).expect(0).stdout, "");
    profile(&dir, 20.0, &["frame_ms"]);
    set_old(&dir);
    let run = dir.run(&["hook-status"]).expect(0);
    assert!(
        run.stdout.starts_with("framewise: last session"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("budgets breached: frame_ms"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.lines().count() <= 5);
    // framewise.toml's budgets are judged on the profile too: 4585 draw calls in a frame
    // breach the 300 of `counter.draw_calls.max`, which the recorder knows nothing of.
    profile_with_counters(&dir, 4585);
    set_old(&dir);
    let run = dir.run(&["hook-status"]).expect(0);
    assert!(
        run.stdout
            .contains("budgets breached: counter.draw_calls.max (framewise check for values)"),
        "{}",
        run.stdout
    );
    profile_with_counters(&dir, 44);
    set_old(&dir);
    assert_eq!(
        dir.run(&["hook-status"]).expect(0).stdout,
        "",
        "inside: silence"
    );
    // A profile cut mid-write: one line naming the file once, first, for both verbs.
    dir.write(".framewise/profile.json", "{\"schema\":\"framew");
    for verb in ["hook-status", "check"] {
        let run = dir.run(&[verb]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.starts_with(
                "framewise: error: .framewise/profile.json: cannot read the profile: "
            ),
            "{verb}: {line}"
        );
        assert_eq!(line.matches("profile.json").count(), 1, "{verb}: {line}");
    }
}

/// hook-status names the budgets `check` finds breached with the same config, not the
/// recorder's own: with `frame_ms = 50` a 20 ms p95 the recorder judged against its 16.67 ms
/// is inside, and hook-status said "budgets breached: frame_ms" under "vs budget 50.00 ms".
/// Without a framewise.toml, the recorder's list is all there is.
#[test]
fn hook_status_breaches_are_checks_with_the_same_config() {
    let dir = Dir::new();
    std::fs::create_dir_all(dir.path("c")).expect("mkdir");
    dir.write("c/fm50.toml", "[budgets]\nframe_ms = 50\n");
    profile(&dir, 20.0, &["frame_ms"]);
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(dir.path(".framewise/profile.json"))
        .expect("profile")
        .set_modified(old)
        .expect("mtime");
    dir.run(&["check", "--config", "c/fm50.toml"]).expect(0);
    assert_eq!(
        dir.run(&["hook-status", "--config", "c/fm50.toml"])
            .expect(0)
            .stdout,
        "",
        "inside by the config's budget: silence"
    );
    // Running: the budget line, and no breach.
    profile(&dir, 20.0, &["frame_ms"]);
    let run = dir
        .run(&["hook-status", "--config", "c/fm50.toml"])
        .expect(0);
    assert!(run.stdout.contains("vs budget 50.00 ms"), "{}", run.stdout);
    assert!(!run.stdout.contains("breached"), "{}", run.stdout);
    // The config's budget breached: said, as check says it.
    dir.write("c/fm10.toml", "[budgets]\nframe_ms = 10\n");
    dir.run(&["check", "--config", "c/fm10.toml"]).expect(1);
    let run = dir
        .run(&["hook-status", "--config", "c/fm10.toml"])
        .expect(0);
    assert!(
        run.stdout.contains("budgets breached: frame_ms"),
        "{}",
        run.stdout
    );
    // No framewise.toml anywhere: the recorder's own list, and no pointer to `check`, which
    // has no budget to judge then.
    let run = dir.run(&["hook-status"]).expect(0);
    assert!(
        run.stdout.contains(
            "budgets breached: frame_ms (the recorder's own frame budget; no framewise.toml declares budgets for framewise check)"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn check_reads_the_counters_and_scopes_a_real_session_wrote() {
    // The demo's own live log: profile.json as the recorder writes it, judged by check.
    // The limits are far from any machine's figures (no timing threshold): a scope cannot
    // take 10 minutes of a frame, and it cannot take less than a nanosecond.
    let dir = Dir::new();
    dir.run(&[
        "demo",
        "--frames",
        "60",
        "--quiet",
        "--threads",
        "2",
        "-o",
        "d.sgpt",
    ])
    .expect(0);
    let profile: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path(".framewise/profile.json")).expect("profile.json"),
    )
    .expect("JSON");
    let draw_calls = profile["counter_stats"]["draw_calls"]["max"]
        .as_f64()
        .expect("the live log's counter statistics");
    assert!(draw_calls > 0.0, "{profile}");
    assert!(
        profile["scopes"]["render"]["p95_ms"].is_number(),
        "{profile}"
    );
    dir.write(
        "framewise.toml",
        format!(
            "[budgets]\n\"counter.draw_calls.max\" = {draw_calls}\n\"scope.render.p95\" = 600000\n\"scope.simulate.max\" = 600000\n"
        ),
    );
    let json = dir.run(&["check", "--format", "json"]).expect(0).json();
    assert_eq!(json["verdict"], "inside", "{json}");
    for b in json["budgets"].as_array().expect("budgets") {
        assert_eq!(b["state"], "inside", "{b}");
    }
    dir.write(
        "framewise.toml",
        format!(
            "[budgets]\n\"counter.draw_calls.max\" = {}\n\"scope.render.min\" = 0.000001\n",
            draw_calls - 1.0
        ),
    );
    let json = dir.run(&["check", "--format", "json"]).expect(1).json();
    let states: Vec<&str> = json["budgets"]
        .as_array()
        .expect("budgets")
        .iter()
        .map(|b| b["state"].as_str().expect("state"))
        .collect();
    assert_eq!(states, ["breached", "breached"], "{json}");
}

/// Runs a short ad-hoc bench `t` of the demo in `dir`; the result file's path.
fn short_adhoc_result(dir: &Dir) -> String {
    let run = dir
        .run(&[
            "bench",
            "--name",
            "t",
            "--frames",
            "20",
            "--warmup",
            "2",
            "--runs",
            "3",
            "--format",
            "json",
            "--",
            BIN,
            "demo",
            "--quiet",
            "--fixed-dt",
            "0.016",
        ])
        .expect(0);
    run.json()["file"].as_str().expect("file").to_owned()
}

#[test]
fn compare_refuses_an_edited_result_and_never_prints_an_infinite_change() {
    let dir = Dir::new();
    let file = short_adhoc_result(&dir);
    let edited = |name: &str, p50: f64| {
        let mut result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path(&file)).expect("result"))
                .expect("json");
        for r in result["runs"].as_array_mut().expect("runs") {
            r["metrics"]["frame.p50"] = serde_json::json!(p50);
        }
        dir.write(name, result.to_string());
    };
    // A p50 of 1e308 ms overflowed the mean of the runs: "regressed by +inf%".
    edited("huge.json", 1e308);
    edited("negative.json", -5.0);
    for (edited, shown) in [("huge.json", "1e308"), ("negative.json", "-5")] {
        for args in [[file.as_str(), edited], [edited, file.as_str()]] {
            let run = dir.run(&["bench", "--compare", args[0], args[1]]).expect(4);
            let line = run.one_error_line();
            assert!(
                line.contains(&format!(
                    "{edited}: run 1: frame.p50 = {shown}: not a usable value"
                )),
                "{line}"
            );
            assert!(run.stdout.is_empty(), "{}", run.stdout);
        }
    }
    // Usable, yet so near 0 that the ratio to it overflows: no percentage, not `inf%`.
    edited("tiny.json", 1e-310);
    for args in [[file.as_str(), "tiny.json"], ["tiny.json", file.as_str()]] {
        let run = dir.run(&["bench", "--compare", args[0], args[1]]);
        assert!(matches!(run.code, 0..=2), "{}", run.stderr);
        for text in [&run.stdout, &run.stderr] {
            assert!(!text.contains("inf") && !text.contains("NaN"), "{text}");
        }
    }
}

/// A real result cut anywhere, or with a byte replaced, on either side of `--compare`: a cut
/// one is exit 4 with one line naming the file; a corrupted one is that or a comparison, never
/// a panic. A comparison appended after a torn ledger line reads whole.
#[test]
fn compare_refuses_cut_and_corrupted_results_on_either_side() {
    let dir = Dir::new();
    let file = short_adhoc_result(&dir);
    let text = std::fs::read_to_string(dir.path(&file)).expect("result");
    let n = text.len();
    let mut cuts: Vec<usize> = (0..24).map(|k| k * n / 24).collect();
    cuts.extend([1, n / 2 + 1, n - 2]);
    for cut in cuts {
        let cut_text = text.get(..cut).expect("the result is ASCII");
        dir.write("cut.json", cut_text);
        for args in [[file.as_str(), "cut.json"], ["cut.json", file.as_str()]] {
            let run = dir.run(&["bench", "--compare", args[0], args[1]]).expect(4);
            let line = run.one_error_line();
            assert!(
                line.contains("cut.json: not a framewise bench result"),
                "cut at {cut}: {line}"
            );
            assert!(run.stdout.is_empty(), "{}", run.stdout);
        }
    }
    for at in (0..20).map(|k| k * n / 20 + 3) {
        for b in ["{", "\"", ",", "9", "-"] {
            let mut doc = text.clone();
            doc.replace_range(at..=at, b);
            dir.write("bad.json", &doc);
            for args in [[file.as_str(), "bad.json"], ["bad.json", file.as_str()]] {
                let run = dir.run(&["bench", "--compare", args[0], args[1]]);
                match run.code {
                    0..=3 => {}
                    4 => assert!(
                        run.one_error_line().contains("bad.json: "),
                        "{}",
                        run.stderr
                    ),
                    _ => panic!("{b:?} at {at}: exit {}: {}", run.code, run.stderr),
                }
            }
        }
    }

    // A ledger whose last line was torn (a comparison killed mid-write) keeps the next one.
    let ledger = dir.path(".framewise/bench-history.jsonl");
    let before = std::fs::read_to_string(&ledger).unwrap_or_default();
    let whole_lines = before.lines().count();
    std::fs::write(
        &ledger,
        format!("{before}{{\"schema\":\"framewise.bench-led"),
    )
    .unwrap();
    let run = dir.run(&["bench", "--compare", &file, &file]);
    assert!(matches!(run.code, 0..=2), "{}", run.stderr);
    let after = std::fs::read_to_string(&ledger).unwrap();
    let lines: Vec<&str> = after.lines().collect();
    assert_eq!(lines.len(), whole_lines + 2, "{after}");
    let last: serde_json::Value = serde_json::from_str(lines[lines.len() - 1])
        .unwrap_or_else(|e| panic!("the comparison after the torn line is whole ({e}): {after}"));
    assert_eq!(last["name"], "t", "{last}");
}

/// A bench `early` whose program (`game.sh`) runs the demo, and after `mode.txt` says `early`
/// stops after 15 frames whatever the harness asks: a change that makes the game quit early.
fn early_project(dir: &Dir) {
    dir.write(
        "game.sh",
        format!(
            "if [ \"$(cat mode.txt)\" = early ]; then FRAMEWISE_FRAMES=15; export FRAMEWISE_FRAMES; fi\nexec {BIN:?} demo --quiet\n"
        ),
    );
    dir.write("mode.txt", "normal\n");
    dir.write(
        "framewise.toml",
        "[bench.early]\ncommand = [\"sh\", \"game.sh\"]\nframes = 60\nwarmup = 10\nruns = 3\nfixed_dt = 0.016666\n",
    );
}

/// A program that stops early measured 4 frames a run instead of 60, and its comparison read
/// "IMPROVED (exit 0)" on 95% fewer draw calls. Its runs are short: the result says so, the
/// bench warns and exits 2, and a comparison with it on either side is inconclusive.
#[test]
fn a_program_that_stops_early_is_a_short_run_never_an_improvement() {
    let dir = Dir::new();
    early_project(&dir);
    let normal = dir
        .run(&["bench", "early", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(normal["short_runs"], 0, "{normal}");
    for r in normal["runs"].as_array().expect("runs") {
        assert_eq!(r["frames_recorded"], 60, "{r}");
        assert_eq!(r["short"], false, "{r}");
    }
    let normal_file = normal["file"].as_str().expect("file").to_owned();

    dir.write("mode.txt", "early\n");
    let run = dir
        .run(&[
            "bench",
            "early",
            "--compare",
            "last",
            "--change",
            "quit early",
            "--format",
            "json",
        ])
        .expect(2);
    let json = run.json();
    assert_eq!(json["overall"]["verdict"], "inconclusive", "{json}");
    let reasons = json["overall"]["reasons"].to_string();
    assert!(
        reasons.contains(
            "the after side: 3 of 3 run(s) short: frames recorded after the warm-up 5, 5, 5 where the bench asks 60"
        ),
        "{reasons}"
    );
    let sum = json["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["metric"] == "counter.draw_calls.sum")
        .expect("the total is listed");
    assert_eq!(sum["verdict"], "inconclusive", "{sum}");
    assert!(
        run.stderr
            .contains("framewise: warning: bench early: 3 of 3 run(s) short"),
        "{}",
        run.stderr
    );
    let ledger = ledger_lines(&dir);
    assert_eq!(ledger.last().expect("a line")["verdict"], "inconclusive");

    // The short result itself: recorded per run and in total; `bench NAME` exits 2.
    let early_file = json["result_file"]
        .as_str()
        .expect("result file")
        .to_owned();
    let early: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path(&early_file)).expect("result"))
            .expect("json");
    assert_eq!(early["short_runs"], 3, "{early}");
    for r in early["runs"].as_array().expect("runs") {
        assert_eq!(r["frames_recorded"], 5, "{r}");
        assert_eq!(r["short"], true, "{r}");
    }
    let plain = dir.run(&["bench", "early"]).expect(2);
    assert!(
        plain.stdout.contains("3 of 3 run(s) short")
            && plain.stdout.contains("inconclusive (exit 2)"),
        "{}",
        plain.stdout
    );
    assert!(plain.stderr.contains("framewise: warning: bench early: "));

    // Short on the before side: inconclusive too (the game fixed to run its frames again).
    let run = dir
        .run(&[
            "bench",
            "--compare",
            &early_file,
            &normal_file,
            "--format",
            "json",
        ])
        .expect(2);
    let reasons = run.json()["overall"]["reasons"].to_string();
    assert!(
        reasons.contains("the before side: 3 of 3 run(s) short"),
        "{reasons}"
    );
}

/// The ad-hoc form: a program that stops early is short, with a warning, exit 2.
#[test]
fn an_ad_hoc_bench_that_stops_early_is_short() {
    let dir = Dir::new();
    let script = format!("FRAMEWISE_FRAMES=15 exec {BIN:?} demo --quiet");
    let run = dir
        .run(&[
            "bench", "--name", "short", "--frames", "60", "--warmup", "10", "--runs", "3",
            "--format", "json", "--", "sh", "-c", &script,
        ])
        .expect(2);
    let json = run.json();
    assert_eq!(json["short_runs"], 3, "{json}");
    assert_eq!(json["runs"][0]["frames_measured"], 4, "{json}");
    assert_eq!(json["runs"][0]["frames_recorded"], 5, "{json}");
    assert!(
        run.stderr.contains("framewise: warning: bench short: 3 of 3 run(s) short: frames recorded after the warm-up 5, 5, 5 where the bench asks 60"),
        "{}",
        run.stderr
    );
}

/// `--json PATH` naming what the bench reads — a compared result, the config, the ledger,
/// the result `--compare last` compares with — is refused (exit 4) and nothing is replaced.
#[test]
fn json_naming_an_input_of_bench_is_refused() {
    let dir = Dir::new();
    config(&dir, 20);
    let file = short_adhoc_result(&dir);
    let result_text = std::fs::read_to_string(dir.path(&file)).expect("result");
    let config_text = std::fs::read_to_string(dir.path("framewise.toml")).expect("config");
    let copy = dir.write("a.json", &result_text);
    assert!(copy.is_file());
    for json in [
        "--json=a.json".to_owned(),
        format!("--json={file}"),
        format!("--json=./{file}"),
        "--json=framewise.toml".to_owned(),
        "--json=.framewise/bench-history.jsonl".to_owned(),
        "--json=./.framewise/bench-history.jsonl".to_owned(),
    ] {
        let _ = std::fs::remove_file(dir.path(".framewise/bench-history.jsonl"));
        let run = dir
            .run(&["bench", "--compare", "a.json", &file, &json])
            .expect(4);
        let line = run.one_error_line();
        // The budgets file is a goalpost too: refused as one.
        assert!(
            line.contains("names an input file") || line.contains("a goalpost a person reviews"),
            "{json}: {line}"
        );
        assert!(
            !dir.path(".framewise/bench-history.jsonl").exists(),
            "{json}: nothing was compared"
        );
    }
    // `NAME --compare last` reads the newest earlier result of NAME.
    let first = dir
        .run(&["bench", "smoke", "--format", "json"])
        .expect(0)
        .json();
    let last = first["file"].as_str().expect("file").to_owned();
    let last_text = std::fs::read_to_string(dir.path(&last)).expect("result");
    let run = dir
        .run(&[
            "bench",
            "smoke",
            "--compare",
            "last",
            &format!("--json={last}"),
        ])
        .expect(4);
    assert!(run.one_error_line().contains("names an input file"));
    assert_eq!(
        std::fs::read_to_string(dir.path(&last)).expect("kept"),
        last_text
    );
    assert_eq!(std::fs::read_to_string(&copy).expect("kept"), result_text);
    assert_eq!(
        std::fs::read_to_string(dir.path("framewise.toml")).expect("kept"),
        config_text
    );
    // How a bench runs, given where nothing runs, is refused rather than ignored.
    let run = dir
        .run(&[
            "bench",
            "--compare",
            "a.json",
            &file,
            "--frames",
            "10",
            "--runs",
            "3",
        ])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: --frames, --runs set how a bench runs, and --compare A B runs nothing: it compares two results as they were measured"
    );
    // Another path is written as before.
    dir.run(&["bench", "--compare", "a.json", &file, "--json=out.json"]);
    assert!(dir.path("out.json").is_file());
}

/// The `FRAMEWISE_*` variables a run of `game.sh` saw (its last run's), by name.
fn program_env(dir: &Dir) -> std::collections::BTreeMap<String, String> {
    std::fs::read_to_string(dir.path("env.txt"))
        .expect("the program wrote its environment")
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// A bench whose program writes its `FRAMEWISE_*` variables to env.txt, then runs the demo.
fn env_project(dir: &Dir) {
    dir.write(
        "game.sh",
        format!("env | grep '^FRAMEWISE_' | sort > env.txt\nexec {BIN:?} demo --quiet\n"),
    );
    dir.write(
        "framewise.toml",
        "[bench.smoke]\ncommand = [\"sh\", \"game.sh\"]\nframes = 60\nwarmup = 10\nruns = 3\nfixed_dt = 0.016666\n",
    );
}

/// Every run inherited the caller's `FRAMEWISE_*` variables, none of which is in the config
/// hash: `FRAMEWISE_LEVEL=timing` left in a shell read "IMPROVED (exit 0)" on 52.7% fewer
/// allocations with nothing changed, and a bench without `seed` took the shell's
/// `FRAMEWISE_SEED`. A run gets the harness's variables and no other `FRAMEWISE_*` one.
#[test]
fn the_callers_framewise_variables_never_reach_a_run() {
    let dir = Dir::new();
    env_project(&dir);
    dir.run(&["bench", "smoke"]).expect(0);
    let leaked = [
        ("FRAMEWISE_LEVEL", "timing"),
        ("FRAMEWISE_SEED", "9"),
        ("FRAMEWISE_RESOLUTION", "320x180"),
        ("FRAMEWISE_GOLDEN_FRAME", "5"),
        ("FRAMEWISE_FIXED_DT", "0.05"),
        ("FRAMEWISE_NOTE", "from the shell"),
        ("FRAMEWISE_BUILD", "shell-build"),
        ("FRAMEWISE_BISECT_AT", "3"),
        ("FRAMEWISE_DIR", "elsewhere"),
        ("FRAMEWISE_FRAMES", "400"),
        ("FRAMEWISE_WRITER", "realtime"),
    ];
    let run = dir.run_env(
        &["bench", "smoke", "--compare", "last", "--format", "json"],
        &leaked,
    );
    let json = run.json();
    assert!(matches!(run.code, 0..=2), "{json}");
    // The exact counters are the same workload's: nothing reached the program.
    let counters: Vec<&serde_json::Value> = json["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter(|m| m["kind"] == "counter")
        .collect();
    assert!(!counters.is_empty(), "{json}");
    for m in counters {
        assert_eq!(m["verdict"], "no-detectable-change", "{m}");
    }
    let env = program_env(&dir);
    let names: Vec<&str> = env.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "FRAMEWISE_AUTOMATED",
            "FRAMEWISE_CAPTURE",
            "FRAMEWISE_DIR",
            "FRAMEWISE_FIXED_DT",
            "FRAMEWISE_FRAMES",
            "FRAMEWISE_WRITER",
        ],
        "{env:?}"
    );
    assert_eq!(env["FRAMEWISE_FRAMES"], "70");
    assert_eq!(env["FRAMEWISE_FIXED_DT"], "0.016666");
    assert_eq!(env["FRAMEWISE_WRITER"], "lossless");
    // The runs' incident log goes to the bench's directory, named absolutely.
    let named = std::path::Path::new(&env["FRAMEWISE_DIR"]);
    assert!(named.is_absolute(), "{named:?}");
    assert_eq!(
        std::fs::canonicalize(named).expect("exists"),
        std::fs::canonicalize(dir.path(".framewise")).expect("exists")
    );
}

/// A run that recorded more frames than the bench asks (the program ran past
/// `FRAMEWISE_FRAMES`) was neither flagged nor warned: "recorded 390", exit 0. It ran another
/// workload: long, as a short run is short — warned, exit 2.
#[test]
fn an_ad_hoc_bench_that_runs_past_its_frames_is_long() {
    let dir = Dir::new();
    let script = format!("FRAMEWISE_FRAMES=100 exec {BIN:?} demo --quiet");
    let run = dir
        .run(&[
            "bench", "--name", "long", "--frames", "30", "--warmup", "10", "--runs", "3",
            "--format", "json", "--", "sh", "-c", &script,
        ])
        .expect(2);
    let json = run.json();
    assert_eq!(json["long_runs"], 3, "{json}");
    assert_eq!(json["short_runs"], 0, "{json}");
    for r in json["runs"].as_array().expect("runs") {
        assert_eq!(r["frames_recorded"], 90, "{r}");
        assert_eq!(r["long"], true, "{r}");
        assert_eq!(r["short"], false, "{r}");
    }
    assert!(
        run.stderr.contains("framewise: warning: bench long: 3 of 3 run(s) long: frames recorded after the warm-up 90, 90, 90 where the bench asks 30"),
        "{}",
        run.stderr
    );
    // Compared with itself, it is still another workload than the bench's: inconclusive.
    let file = json["file"].as_str().expect("file");
    let run = dir
        .run(&["bench", "--compare", file, file, "--format", "json"])
        .expect(2);
    let reasons = run.json()["overall"]["reasons"].to_string();
    assert!(
        reasons.contains("the after side: 3 of 3 run(s) long"),
        "{reasons}"
    );
}

/// `config_hash` was trusted as stored: a result whose command or CPU model was edited
/// compared as the same configuration. It is recomputed from the fingerprint on read, and a
/// result whose stored hash disagrees is refused (exit 4, one line), as any value framewise
/// never writes.
#[test]
fn compare_refuses_a_result_whose_config_hash_is_not_its_fingerprints() {
    let dir = Dir::new();
    let file = short_adhoc_result(&dir);
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path(&file)).expect("result"))
                .expect("json");
        edit(&mut result);
        dir.write(name, result.to_string());
    };
    edited("command.json", &|r| {
        r["fingerprint"]["command"] = serde_json::json!(["other-game"]);
        r["settings"]["command"] = serde_json::json!(["other-game"]);
    });
    edited("cpu.json", &|r| {
        r["fingerprint"]["cpu_model"] = serde_json::json!("another cpu");
    });
    edited("hash.json", &|r| {
        r["config_hash"] = serde_json::json!("0123456789abcdef");
    });
    edited("settings.json", &|r| {
        r["settings"]["frames"] = serde_json::json!(21);
    });
    let ledger = dir.path(".framewise/bench-history.jsonl");
    for (name, why) in [
        ("command.json", "is not the hash of its fingerprint"),
        ("cpu.json", "is not the hash of its fingerprint"),
        (
            "hash.json",
            "config_hash \"0123456789abcdef\" is not the hash of its fingerprint",
        ),
        (
            "settings.json",
            "settings that differ from its fingerprint's",
        ),
    ] {
        for args in [[file.as_str(), name], [name, file.as_str()]] {
            let run = dir.run(&["bench", "--compare", args[0], args[1]]).expect(4);
            let line = run.one_error_line();
            assert!(
                line.contains(&format!("{name}: ")) && line.contains(why),
                "{line}"
            );
            assert!(line.contains("framewise writes no such value"), "{line}");
            assert!(run.stdout.is_empty(), "{}", run.stdout);
        }
    }
    assert!(!ledger.exists(), "nothing was compared");
}

/// The ledger followed a link into another log: with `--dir lg` and
/// `lg/bench-history.jsonl -> ../.framewise/perf.jsonl`, a comparison was appended to the
/// incident log. A ledger path that resolves to another file, or to nothing, is refused
/// (exit 4, one line) and nothing is written; a link to a bench ledger is followed.
#[test]
fn the_ledger_is_never_appended_through_a_link_to_another_file() {
    let dir = Dir::new();
    let file = short_adhoc_result(&dir);
    let perf = dir.path(".framewise/perf.jsonl");
    std::fs::write(&perf, "{\"kind\":\"heartbeat\"}\n").expect("the incident log");
    std::fs::create_dir_all(dir.path("lg")).expect("lg");
    std::os::unix::fs::symlink(
        "../.framewise/perf.jsonl",
        dir.path("lg/bench-history.jsonl"),
    )
    .expect("symlink");
    let run = dir
        .run(&["bench", "--compare", &file, &file, "--dir", "lg"])
        .expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("lg/bench-history.jsonl: a link to ")
            && line.contains("perf.jsonl, which is not a bench ledger"),
        "{line}"
    );
    assert_eq!(
        std::fs::read_to_string(&perf).expect("kept"),
        "{\"kind\":\"heartbeat\"}\n"
    );
    // A link to nothing would create whatever it names.
    std::fs::create_dir_all(dir.path("lg2")).expect("lg2");
    std::os::unix::fs::symlink("../nowhere/notes.txt", dir.path("lg2/bench-history.jsonl"))
        .expect("symlink");
    let run = dir
        .run(&["bench", "--compare", &file, &file, "--dir", "lg2"])
        .expect(4);
    assert!(
        run.one_error_line()
            .contains("a link that does not resolve"),
        "{}",
        run.stderr
    );
    assert!(!dir.path("nowhere").exists());
    // A link to a bench ledger is a ledger.
    let run = dir.run(&["bench", "--compare", &file, &file]);
    assert!(matches!(run.code, 0..=2), "{}", run.stderr);
    std::fs::create_dir_all(dir.path("lg3")).expect("lg3");
    std::os::unix::fs::symlink(
        "../.framewise/bench-history.jsonl",
        dir.path("lg3/bench-history.jsonl"),
    )
    .expect("symlink");
    let run = dir.run(&["bench", "--compare", &file, &file, "--dir", "lg3"]);
    assert!(matches!(run.code, 0..=2), "{}", run.stderr);
    assert_eq!(ledger_lines(&dir).len(), 2);
}
