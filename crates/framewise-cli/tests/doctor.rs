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
    assert_eq!(json["gpu_timestamps"]["supported"], false);
    let degraded: Vec<&str> = json["degraded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["feature"].as_str().unwrap())
        .collect();
    assert!(degraded.contains(&"gpu-timestamps"));
    assert!(degraded.contains(&"incident-log"));
    // Machine-dependent facts are redacted; the rest is the schema.
    json["cpu_clock"] = serde_json::json!("[machine]");
    json["build"] = serde_json::json!("[build]");
    json["environment"] = serde_json::json!("[environment]");
    json["degraded"] = serde_json::json!(json["degraded"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["feature"] != "cpu-clock-resolution")
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
        "  FRAMEWISE_* harness ",
    ];
    let pinned: String = run
        .stdout
        .lines()
        .filter(|l| !l.starts_with("  cpu-clock-resolution:"))
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
    assert!(run.stdout.contains("none in this build"), "{}", run.stdout);
    assert!(run.stdout.contains("degraded"));
    let run = dir.run(&["doctor", "--format", "markdown"]).expect(0);
    assert!(run.stdout.starts_with("### framewise doctor"));
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
