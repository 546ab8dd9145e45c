//! A headless app with the plugin: system scopes, exact counters, a clean stop on `AppExit`.

use std::collections::BTreeSet;

use framewise_analysis::{find_hitches, summarize, HitchOptions, LoadOptions};
use framewise_bevy::{FramewisePlugin, FramewiseReport, FramewiseSession};

use crate::common::{self, Script, Truth, SPAWN_PER_FRAME};

const UPDATES: u32 = 12;
const SPAWN: &str = "tests::common::spawn_boids";
const MOVE: &str = "tests::common::move_boids";

#[test]
fn a_headless_app_records_system_scopes_and_exact_counters() {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.sgpt");
    let mut app = common::game(
        FramewisePlugin::default().capture(&path),
        Script::new(Some(UPDATES)),
    );
    assert_eq!(common::run(&mut app, 100), UPDATES);

    // AppExit stopped the session in the update that sent it.
    assert!(app.world().get_resource::<FramewiseSession>().is_none());
    let report = match &app.world().resource::<FramewiseReport>().0 {
        Ok(report) => report.clone(),
        Err(error) => panic!("the session failed: {error}"),
    };
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.frames_written, u64::from(UPDATES));
    assert_eq!(report.spans_dropped, 0);

    let capture = common::open(&path);
    assert!(capture.opened_by_directory(), "the capture is closed");
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), UPDATES as usize);

    // Counters: exactly what Bevy counts at the end of each update's main schedule.
    let truth = app.world().resource::<Truth>();
    assert_eq!(truth.entities.len(), frames.len());
    let tag_at = app.world().resource::<Script>().tag_at as usize;
    for (i, frame) in frames.iter().enumerate() {
        let counters = common::counters(&capture, frame);
        assert_eq!(
            counters["entities"],
            i64::from(truth.entities[i]),
            "frame {i}"
        );
        assert_eq!(
            counters["archetypes"], truth.archetypes[i] as i64,
            "frame {i}"
        );
        assert_eq!(counters.len(), 2, "only what is measured: {counters:?}");
        if i > 0 {
            let spawned = counters["entities"] - i64::from(truth.entities[i - 1]);
            assert_eq!(spawned, i64::from(SPAWN_PER_FRAME), "frame {i}");
        }
    }
    assert_eq!(truth.archetypes[tag_at], truth.archetypes[tag_at - 1] + 1);

    // Scopes: every system run, named by the system, once per frame.
    for frame in &frames {
        let names = common::scope_names(&capture, frame);
        for system in [SPAWN, MOVE, "schedule Update", "schedule Last"] {
            let runs = names.iter().filter(|name| *name == system).count();
            assert_eq!(runs, 1, "{system} in frame {}: {names:?}", frame.index);
        }
        for skipped in ["bevy_app", "update", "main app", "schedule Main", "system"] {
            assert!(!names.iter().any(|n| n == skipped), "{skipped}: {names:?}");
        }
        assert!(
            !names.iter().any(|n| n.starts_with("framewise_bevy::")),
            "{names:?}"
        );
    }
    let all: BTreeSet<String> = frames
        .iter()
        .flat_map(|frame| &frame.lanes)
        .flat_map(|lane| &lane.spans)
        .map(|span| common::name(&capture, span.scope))
        .collect();
    assert!(all.contains(&format!("{SPAWN} commands")), "{all:?}");

    // What `framewise summarize` and `hitches` compute from it.
    let loaded = framewise_analysis::open(&path, &LoadOptions::default()).unwrap();
    let summary = summarize(&loaded);
    assert_eq!(summary.scopes.get(SPAWN).map(|s| s.count), Some(12));
    assert_eq!(summary.scopes.get(MOVE).map(|s| s.count), Some(12));
    let entities = summary.counters.get("entities").expect("entities counter");
    assert_eq!(entities.count, u64::from(UPDATES));
    assert!(
        summary.counters.get("meshes").is_none(),
        "not measured: absent"
    );
    let hitches = find_hitches(&loaded, &HitchOptions::default());
    assert_eq!(hitches.frames_judged + 1, u64::from(UPDATES));
    assert!(hitches.defects.is_empty(), "{:?}", hitches.defects);
}

#[test]
fn app_run_stops_the_session_on_app_exit() {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.sgpt");
    let mut app = common::game(
        FramewisePlugin::default().capture(&path),
        Script::new(Some(5)),
    );
    assert!(app.run().is_success());
    let capture = common::open(&path);
    assert!(capture.opened_by_directory(), "the capture is closed");
    assert_eq!(common::frames(&capture).len(), 5);
}

#[test]
fn an_unwritable_capture_path_leaves_the_game_running_unrecorded() {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("game.sgpt");
    let mut app = common::game(
        FramewisePlugin::default().capture(&path),
        Script::new(Some(3)),
    );
    assert_eq!(common::run(&mut app, 10), 3);
    assert!(app.world().get_resource::<FramewiseSession>().is_none());
    assert!(app.world().get_resource::<FramewiseReport>().is_none());
    assert!(!path.exists());
}

#[test]
fn scripts_check_builds_and_tests_the_render_side() {
    // The lavapipe tests of the render side exist only with the `render` feature: CI must
    // lint, test and document with it, or they would pass without ever rendering.
    let script = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../scripts/check"),
    )
    .unwrap();
    for step in [
        "cargo clippy --workspace",
        "cargo test --workspace",
        "cargo doc --workspace",
    ] {
        let line = script.lines().find(|l| l.contains(step)).unwrap();
        assert!(line.contains("framewise-bevy/render"), "{step}: {line}");
    }
}
