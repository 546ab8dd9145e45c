//! `framewise attribute`: a ranking with call sites, never an accounting.

use crate::support::{redact, redact_text, write_game, Dir, Game};

#[test]
fn one_frame() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let run = dir
        .run(&[
            "attribute",
            "game.sgpt",
            "--frame",
            "100",
            "--format",
            "json",
        ])
        .expect(0);
    let json = run.json();
    assert_eq!(json["schema"], "framewise.attribution/1");
    assert_eq!(json["sums_to_total"], false);
    assert_eq!(json["inconclusive"], false);
    assert_eq!(json["frame"], 100);
    assert_eq!(json["ranking"][0]["scope"], "render");
    assert_eq!(json["ranking"][0]["site"], "src/render.rs:42");
    insta::assert_json_snapshot!("attribute_frame_json", redact(&json, dir.tmp.path()));
    let run = dir
        .run(&["attribute", "game.sgpt", "--frame", "100"])
        .expect(0);
    insta::assert_snapshot!(
        "attribute_frame_console",
        redact_text(&run.stdout, dir.tmp.path())
    );
    assert!(run.stdout.contains("a ranking, not an accounting"));
}

#[test]
fn p95_excess() {
    let dir = Dir::new();
    write_game(
        &dir.path("game.sgpt"),
        &Game {
            render_extra_ns: 0,
            ..Game::default()
        },
    );
    let json = dir
        .run(&["attribute", "game.sgpt", "--json"])
        .expect(0)
        .json();
    assert_eq!(json["target"], "p95-excess");
    assert!(json["frames"].as_u64().unwrap() >= 2);
}

#[test]
fn inconclusive_targets() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    // The last frame has no period.
    let json = dir
        .run(&["attribute", "game.sgpt", "--frame", "299", "--json"])
        .expect(2)
        .json();
    assert_eq!(json["inconclusive"], true);
    assert!(json["reason"].as_str().unwrap().contains("299"));
    assert_eq!(json["schema"], "framewise.attribution/1");
    assert_eq!(json["frame"], 299);
    assert_eq!(json["defects"], serde_json::json!([]));
    // Too few frames for a p95.
    write_game(
        &dir.path("short.sgpt"),
        &Game {
            frames: 10,
            long_frames: vec![],
            ..Game::default()
        },
    );
    let run = dir.run(&["attribute", "short.sgpt"]).expect(2);
    assert!(run.stdout.contains("inconclusive"), "{}", run.stdout);
}

/// A frame no slower than its baseline has nothing to attribute: the console and markdown say
/// so rather than rank contributions at 0% of no excess; the JSON keeps the ranking.
#[test]
fn a_frame_no_slower_than_its_baseline_has_nothing_to_attribute() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    // The first frame at or under its baseline.
    let frame = (10..290)
        .map(|f| f.to_string())
        .find(|f| {
            dir.run(&["attribute", "game.sgpt", "--frame", f, "--json"])
                .expect(0)
                .json()["excess_ms"]
                == 0.0
        })
        .expect("a frame no slower than its baseline");
    for format in ["console", "markdown"] {
        let run = dir
            .run(&[
                "attribute",
                "game.sgpt",
                "--frame",
                &frame,
                "--format",
                format,
            ])
            .expect(0);
        assert!(
            run.stdout.to_lowercase().contains("nothing to attribute"),
            "{format}: {}",
            run.stdout
        );
        assert!(!run.stdout.contains("0.00%"), "{format}: {}", run.stdout);
    }
}
