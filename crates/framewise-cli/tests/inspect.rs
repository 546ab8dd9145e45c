//! `framewise inspect`: the structure of a file, damaged or not.

use crate::support::{
    chrome_trace, litecap_v4, redact, redact_text, write_game, write_truncated_game, Dir, Game,
};

#[test]
fn closed_sgpt() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let json = dir
        .run(&["inspect", "game.sgpt", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["schema"], "framewise.inspect/1");
    assert_eq!(json["kind"], "sgpt");
    assert_eq!(json["opened_by"], "directory");
    assert_eq!(json["header"]["closed"], true);
    assert_eq!(json["frames"]["count"], 300);
    assert_eq!(json["defects"], serde_json::json!([]));
    let types: Vec<&str> = json["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, vec!["META", "FRAM", "DIRE"]);
    insta::assert_json_snapshot!("inspect_sgpt_json", redact(&json, dir.tmp.path()));
    let run = dir.run(&["inspect", "game.sgpt"]).expect(0);
    insta::assert_snapshot!(
        "inspect_sgpt_console",
        redact_text(&run.stdout, dir.tmp.path())
    );
}

#[test]
fn truncated_sgpt_reports_defects() {
    let dir = Dir::new();
    write_truncated_game(&dir.path("cut.sgpt"), &Game::default(), 0.6);
    let json = dir.run(&["inspect", "cut.sgpt", "--json"]).expect(0).json();
    assert_eq!(json["opened_by"], "scan");
    let kinds: Vec<&str> = json["defects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"truncated-tail"), "{kinds:?}");
    let frames = json["frames"]["count"].as_u64().unwrap();
    assert!(frames > 100 && frames < 300, "{frames}");
}

#[test]
fn imported_files() {
    let dir = Dir::new();
    dir.write("run.litecap", litecap_v4(60, true));
    let json = dir
        .run(&["inspect", "run.litecap", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["kind"], "litecap");
    assert_eq!(json["source_version"], 4);
    assert_eq!(json["frames"]["count"], 60);
    insta::assert_json_snapshot!("inspect_litecap_json", redact(&json, dir.tmp.path()));
    dir.write("trace.json", chrome_trace(20));
    let run = dir.run(&["inspect", "trace.json"]).expect(0);
    assert!(run.stdout.contains("chrome"), "{}", run.stdout);
    assert!(run.stdout.contains("render"), "{}", run.stdout);
}
