//! `framewise hitches`: the rule, the classification, and the exit codes.

use std::collections::BTreeSet;
use std::time::Duration;

use framewise_demo::{DemoConfig, Schedule};

use crate::support::{redact, redact_text, write_game, Dir, Game};

#[test]
fn hitches_found_with_evidence() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let run = dir
        .run(&["hitches", "game.sgpt", "--format", "json"])
        .expect(1);
    let json = run.json();
    assert_eq!(json["schema"], "framewise.hitches/1");
    assert_eq!(
        (&json["verdict"], &json["exit_code"]),
        (&"fail".into(), &1.into())
    );
    let hitches = json["hitches"].as_array().unwrap();
    let frames: Vec<u64> = hitches
        .iter()
        .map(|h| h["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(frames, vec![100, 200]);
    for h in hitches {
        let best = &h["classification"][0];
        assert_eq!(best["guess"], "pipeline-compile");
        assert!(best["evidence"]
            .as_str()
            .unwrap()
            .contains("pipelines_created"));
        assert!(h["duration_ms"].as_f64().unwrap() > h["threshold_ms"].as_f64().unwrap());
    }
    assert_eq!(json["defects"], serde_json::json!([]));
    insta::assert_json_snapshot!("hitches_json", redact(&json, dir.tmp.path()));
    let run = dir.run(&["hitches", "game.sgpt"]).expect(1);
    insta::assert_snapshot!("hitches_console", redact_text(&run.stdout, dir.tmp.path()));
    let run = dir
        .run(&["hitches", "game.sgpt", "--format", "github"])
        .expect(1);
    assert_eq!(
        run.stdout
            .matches("::warning title=framewise hitch")
            .count(),
        2,
        "{}",
        run.stdout
    );
}

#[test]
fn no_hitch_passes_and_budget_comes_from_config() {
    let dir = Dir::new();
    write_game(&dir.path("steady.sgpt"), &Game::steady());
    let run = dir.run(&["hitches", "steady.sgpt"]).expect(0);
    assert!(run.stdout.contains("no hitches"), "{}", run.stdout);
    // A 40 ms budget puts the bar at 60 ms: the 45 ms frames are no longer hitches.
    write_game(&dir.path("game.sgpt"), &Game::default());
    dir.write("framewise.toml", "[budgets]\nframe_ms = 40\n");
    let json = dir
        .run(&[
            "hitches",
            "game.sgpt",
            "--config",
            "framewise.toml",
            "--json",
        ])
        .expect(0)
        .json();
    assert_eq!(json["rule"]["budget_ms"], 40.0);
}

#[test]
fn nothing_to_judge_is_inconclusive() {
    let dir = Dir::new();
    write_game(&dir.path("empty.sgpt"), &Game::empty());
    let run = dir.run(&["hitches", "empty.sgpt"]).expect(2);
    assert!(run.stdout.contains("inconclusive"), "{}", run.stdout);
    // The JSON says it too: an agent reads the verdict, not an empty list of hitches.
    let json = dir
        .run(&["hitches", "empty.sgpt", "--json"])
        .expect(2)
        .json();
    assert_eq!(
        (&json["verdict"], &json["exit_code"]),
        (&"inconclusive".into(), &2.into())
    );
    assert_eq!(json["hitches"], serde_json::json!([]));
}

/// Frames of the recorded demo run.
const DEMO_FRAMES: u64 = 300;

/// The directory's hitch flags, which the recorder sets while the game runs, are the
/// hitches `framewise hitches` lists afterwards, frame by frame: one rule over one period.
#[test]
fn the_directory_hitch_flags_are_the_hitches_framewise_hitches_lists() {
    let dir = Dir::new();
    // The demo as `framewise demo --frames 300` runs it, with a pinned step.
    let config = DemoConfig {
        frames: DEMO_FRAMES,
        threads: 2,
        schedule: Schedule::for_frames(DEMO_FRAMES),
        fixed_dt: Some(Duration::from_secs_f64(1.0 / 60.0)),
        output: Some(dir.path("demo.sgpt")),
        use_env: false,
        ..DemoConfig::default()
    };
    framewise_demo::run(config).expect("the demo runs and records");

    let capture = framewise_format::read::open(dir.path("demo.sgpt")).expect("the capture opens");
    assert!(capture.opened_by_directory(), "{:?}", capture.defects());
    let entries: Vec<_> = capture.frame_entries().collect();
    assert_eq!(entries.len() as u64, DEMO_FRAMES);

    let run = dir
        .run(&["hitches", "demo.sgpt", "--format", "json"])
        .expect(1);
    let listed: BTreeSet<u64> = run.json()["hitches"]
        .as_array()
        .expect("a hitch list")
        .iter()
        .map(|h| h["frame"].as_u64().expect("a frame index"))
        .collect();
    assert!(
        !listed.is_empty(),
        "the demo injects hitches; an empty list would make the comparison vacuous"
    );
    for e in &entries {
        assert_eq!(
            e.hitch,
            listed.contains(&e.index),
            "frame {}: directory hitch flag {} but `framewise hitches` {} it (period {:?} ns, paused {})",
            e.index,
            e.hitch,
            if listed.contains(&e.index) { "lists" } else { "does not list" },
            e.period_ns,
            e.paused,
        );
    }
    let flagged: BTreeSet<u64> = entries
        .iter()
        .filter(|e| e.hitch)
        .map(|e| e.index)
        .collect();
    assert_eq!(flagged, listed);
}
