//! `framewise doctor`: stated limits, never silently degraded.

use crate::support::Dir;

#[test]
fn doctor_states_its_limits() {
    let dir = Dir::new();
    let mut json = dir.run(&["doctor", "--format", "json"]).expect(0).json();
    assert_eq!(json["schema"], "framewise.doctor/1");
    let clock = &json["cpu_clock"];
    assert!(
        clock["error"].is_null(),
        "the recorder's clock was read: {clock}"
    );
    assert!(!clock["source"].as_str().unwrap().is_empty());
    // Built with the `gpu` feature (scripts/check passes it), doctor really opened the GPU:
    // lavapipe in CI. What it found must hang together. Without it, doctor says so.
    let gpu = json["gpu_timestamps"].clone();
    assert_eq!(gpu["built"], cfg!(feature = "gpu"), "{gpu}");
    let degraded: Vec<&str> = json["degraded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["feature"].as_str().unwrap())
        .collect();
    assert!(!degraded.contains(&"incident-log"), "{degraded:?}");
    // No .framewise/ here: a session started here keeps no incident log.
    assert_eq!(
        json["incident_log"]["state"], "off",
        "{}",
        json["incident_log"]
    );
    assert!(json["incident_log"]["dir"].is_null());
    let keys: Vec<&str> = gpu
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "adapter",
            "built",
            "kinds",
            "reason",
            "supported",
            "timestamp_period_ns"
        ],
        "the documented gpu_timestamps schema"
    );
    let regime = json["timing_regime"]["grade"].as_str().unwrap();
    if !cfg!(feature = "gpu") {
        let reason = gpu["reason"].as_str().unwrap();
        assert!(
            reason.contains("GPU support is not compiled into this build"),
            "{reason}"
        );
        assert!(reason.contains("--features gpu"), "{reason}");
        assert!(degraded.contains(&"gpu-timestamps"), "{degraded:?}");
        assert_eq!(regime, "hardware", "CPU-only");
    } else if gpu["supported"] == true {
        let kind = gpu["adapter"]["type"].as_str().unwrap();
        assert!(["hardware", "software", "unknown"].contains(&kind), "{gpu}");
        assert_eq!(
            regime, kind,
            "GPU-timed captures here get the adapter's regime"
        );
        assert_eq!(gpu["kinds"]["passes"]["enabled"], true, "{gpu}");
        assert!(gpu["timestamp_period_ns"].as_f64().unwrap() > 0.0, "{gpu}");
        assert!(gpu["reason"].is_null(), "{gpu}");
        assert!(!degraded.contains(&"gpu-timestamps"), "{degraded:?}");
        assert_eq!(degraded.contains(&"gpu-timing-regime"), kind != "hardware");
    } else {
        assert!(gpu["reason"].is_string(), "{gpu}");
        assert!(degraded.contains(&"gpu-timestamps"), "{degraded:?}");
        assert_eq!(regime, "hardware", "CPU-only");
        assert!(
            !framewise_wgpu::adapter_required(),
            "FRAMEWISE_REQUIRE_GPU or CI is set: lavapipe is installed \
             (scripts/install-test-deps), so a GPU must be found: {gpu}"
        );
    }
    // Machine-dependent facts are redacted; the rest is the schema.
    json["cpu_clock"] = serde_json::json!("[machine]");
    json["build"] = serde_json::json!("[build]");
    json["environment"] = serde_json::json!("[environment]");
    json["gpu_timestamps"] = serde_json::json!("[machine]");
    json["timing_regime"] = serde_json::json!("[machine]");
    json["degraded"] = serde_json::json!(json["degraded"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| {
            ![
                "cpu-clock-resolution",
                "gpu-timestamps",
                "gpu-timing-regime",
            ]
            .contains(&d["feature"].as_str().unwrap_or(""))
        })
        .cloned()
        .collect::<Vec<_>>());
    insta::assert_json_snapshot!("doctor_json", json);

    let run = dir.run(&["doctor"]).expect(0);
    // Lines that describe this machine are redacted (the resolution's degraded entry exists
    // only where the platform declares none); the rest is pinned.
    let machine = [
        "  build ",
        "  cpu clock ",
        "  cpu clock resolution ",
        "  gpu ",
        "  gpu timestamps ",
        "  timing regime ",
        "  FRAMEWISE_* harness ",
    ];
    let pinned: String = run
        .stdout
        .lines()
        .filter(|l| {
            ![
                "  cpu-clock-resolution:",
                "  gpu-timestamps:",
                "  gpu-timing-regime:",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .map(|l| {
            if machine.iter().any(|m| l.starts_with(m)) {
                "[machine]"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("doctor_console", pinned);
    assert!(run.stdout.contains("gpu timestamps"), "{}", run.stdout);
    let adapter = gpu["adapter"]["name"].as_str();
    if let Some(name) = adapter {
        assert!(run.stdout.contains(name), "{}", run.stdout);
    }
    assert!(run.stdout.contains("degraded"));
    let run = dir.run(&["doctor", "--format", "markdown"]).expect(0);
    assert!(run.stdout.starts_with("### framewise doctor"));
}

#[test]
fn doctor_in_a_game_repository_leaves_its_incident_log_alone() {
    // Doctor's probe session once kept the live log like any session: in a game's repository
    // it rewrote profile.json as an empty session (so `check` measured nothing) and appended
    // a 0-frame session-end to perf.jsonl.
    let dir = Dir::new();
    dir.run(&["init"]).expect(0);
    let profile = dir.write(
        ".framewise/profile.json",
        "{\"schema\": \"framewise.profile/1\"}\n",
    );
    let perf = dir.write(".framewise/perf.jsonl", "");
    let json = dir.run(&["doctor", "--json"]).expect(0).json();
    assert_eq!(
        std::fs::read_to_string(&profile).unwrap(),
        "{\"schema\": \"framewise.profile/1\"}\n"
    );
    assert_eq!(std::fs::read_to_string(&perf).unwrap(), "");
    let log = &json["incident_log"];
    assert_eq!(log["state"], "on", "{log}");
    assert!(
        log["dir"].as_str().unwrap().ends_with(".framewise"),
        "{log}"
    );
}

#[test]
fn doctor_reports_a_bad_harness_environment() {
    let dir = Dir::new();
    let json = dir
        .run_env(&["doctor", "--json"], &[("FRAMEWISE_FRAMES", "many")])
        .expect(0)
        .json();
    assert_eq!(json["environment"]["set"]["FRAMEWISE_FRAMES"], "many");
    assert!(
        json["environment"]["error"].is_string(),
        "{}",
        json["environment"]
    );
}

#[test]
fn the_check_script_tests_the_cli_with_gpu_support() {
    // The GPU tests of this crate (doctor's probe, `demo --gpu`) run only in a build with the
    // `gpu` feature: scripts/check must build its lints, tests and docs with it, or they
    // would pass without ever opening the GPU.
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/check"),
    )
    .expect("scripts/check");
    for step in [
        "cargo clippy --workspace",
        "cargo test --workspace",
        "cargo doc --workspace",
    ] {
        let line = script
            .lines()
            .find(|l| l.contains(step))
            .unwrap_or_else(|| panic!("scripts/check has no `{step}` step"));
        assert!(
            line.contains("--features framewise-cli/gpu"),
            "scripts/check's `{step}` step must pass --features framewise-cli/gpu: {line}"
        );
    }
}

/// Doctor reported only the first variable that did not parse, left `FRAMEWISE_DIR` and
/// `FRAMEWISE_AUTOMATED` out of `environment.set`, and never named a misspelt variable.
#[test]
fn doctor_reports_every_bad_variable_and_those_it_does_not_know() {
    let dir = Dir::new();
    let run = dir
        .run_env(
            &["doctor", "--json"],
            &[
                ("FRAMEWISE_SEED", "abc"),
                ("FRAMEWISE_FRAMES", "0"),
                ("FRAMEWISE_FRAMS", "30"),
                ("FRAMEWISE_DIR", "logs"),
                ("FRAMEWISE_AUTOMATED", "yes"),
            ],
        )
        .expect(0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let env = &run.json()["environment"];
    assert_eq!(
        env["errors"],
        serde_json::json!([
            "environment variable FRAMEWISE_FRAMES=\"0\": expected a frame count above 0",
            "environment variable FRAMEWISE_SEED=\"abc\": expected an unsigned 64-bit integer"
        ]),
        "{env}"
    );
    let error = env["error"].as_str().expect("error");
    assert!(
        error.contains("FRAMEWISE_FRAMES") && error.contains("FRAMEWISE_SEED"),
        "{error}"
    );
    assert_eq!(env["set"]["FRAMEWISE_DIR"], "logs", "{env}");
    assert_eq!(env["set"]["FRAMEWISE_AUTOMATED"], "yes", "{env}");
    assert_eq!(
        env["unknown"],
        serde_json::json!([{"name": "FRAMEWISE_FRAMS", "nearest": "FRAMEWISE_FRAMES"}]),
        "{env}"
    );
    let run = dir
        .run_env(&["doctor"], &[("FRAMEWISE_FRAMS", "30")])
        .expect(0);
    assert!(
        run.stdout.contains(
            "FRAMEWISE_* unknown   not read by framewise: FRAMEWISE_FRAMS (did you mean FRAMEWISE_FRAMES?)"
        ),
        "{}",
        run.stdout
    );
}

/// `FRAMEWISE_DIR=/dev/null` was reported as an incident log `on` in /dev/null.
#[test]
fn doctor_says_an_incident_log_directory_that_cannot_be_used() {
    let dir = Dir::new();
    dir.write("a-file", "");
    for (named, why) in [
        ("/dev/null", "it is a device, not a directory"),
        ("a-file", "it is a file, not a directory"),
        (
            "a-file/logs",
            "it cannot be made: a-file is a file, not a directory",
        ),
    ] {
        let json = dir
            .run_env(&["doctor", "--json"], &[("FRAMEWISE_DIR", named)])
            .expect(0)
            .json();
        let log = &json["incident_log"];
        assert_eq!(log["state"], "unusable", "{named}: {log}");
        assert_eq!(log["dir"], named, "{log}");
        let reason = log["reason"].as_str().expect("reason");
        assert!(
            reason.starts_with(&format!(
                "FRAMEWISE_DIR names {named}, which cannot be used: {why};"
            )),
            "{reason}"
        );
        assert!(
            json["degraded"]
                .as_array()
                .expect("degraded")
                .iter()
                .any(|d| d["feature"] == "incident-log" && d["reason"] == log["reason"]),
            "{json}"
        );
    }
    // A directory not made yet is made at a session's start: on.
    let json = dir
        .run_env(&["doctor", "--json"], &[("FRAMEWISE_DIR", "new/logs")])
        .expect(0)
        .json();
    assert_eq!(
        json["incident_log"]["state"], "on",
        "{}",
        json["incident_log"]
    );
}

/// `FRAMEWISE_BISECT_AT=abc` (framewise-bevy refuses it, and runs no bisection) was listed
/// under `set` with no error: every variable framewise reads that is set and does not parse
/// is in `errors`.
#[test]
fn doctor_reports_a_bisect_at_framewise_bevy_refuses() {
    let dir = Dir::new();
    for bad in ["abc", "0", "-3"] {
        let run = dir
            .run_env(
                &["doctor", "--format", "json"],
                &[("FRAMEWISE_BISECT_AT", bad)],
            )
            .expect(0);
        let env = &run.json()["environment"];
        assert_eq!(env["set"]["FRAMEWISE_BISECT_AT"], bad, "{env}");
        assert_eq!(
            env["errors"],
            serde_json::json!([format!(
                "environment variable FRAMEWISE_BISECT_AT={bad:?}: expected a number of updates (1 or more); framewise-bevy runs no bisection"
            )]),
            "{env}"
        );
        assert!(env["error"]
            .as_str()
            .is_some_and(|e| e.contains("FRAMEWISE_BISECT_AT")));
        let out = dir
            .run_env(&["doctor"], &[("FRAMEWISE_BISECT_AT", bad)])
            .expect(0)
            .stdout;
        assert!(
            out.contains("invalid: environment variable FRAMEWISE_BISECT_AT"),
            "{out}"
        );
    }
    // After the harness's own, in that order; a good value is no error.
    let env = &dir
        .run_env(
            &["doctor", "--json"],
            &[("FRAMEWISE_BISECT_AT", "x"), ("FRAMEWISE_SEED", "y")],
        )
        .expect(0)
        .json()["environment"];
    let errors = env["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{env}");
    assert!(
        errors[0].as_str().unwrap().contains("FRAMEWISE_SEED"),
        "{env}"
    );
    assert!(
        errors[1].as_str().unwrap().contains("FRAMEWISE_BISECT_AT"),
        "{env}"
    );
    let env = &dir
        .run_env(&["doctor", "--json"], &[("FRAMEWISE_BISECT_AT", " 30 ")])
        .expect(0)
        .json()["environment"];
    assert_eq!(env["errors"], serde_json::json!([]), "{env}");
    assert!(env["error"].is_null(), "{env}");
}
