//! `framewise hitches`: the rule, the classification, and the exit codes.

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
}
