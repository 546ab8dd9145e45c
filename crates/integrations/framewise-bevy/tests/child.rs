//! What depends on the process (the environment, the global `tracing` subscriber, a panic)
//! runs in a child process: the parent test runs this test binary again with one ignored
//! `child_*` test selected and checks what it left.

use std::path::Path;
use std::process::{Command, Output};

use framewise_bevy::{FramewisePlugin, FramewiseReport, FramewiseSession};

use crate::common::{self, Script};

/// Runs the ignored test `name` in a child process with `env`.
fn child(name: &str, env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--ignored", "--exact", "--test-threads=1", name])
        .env_remove(framewise::env::CAPTURE)
        .env_remove(framewise::env::FRAMES)
        .env_remove(framewise::env::FIXED_DT);
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn passed(output: &Output) -> bool {
    output.status.success() && String::from_utf8_lossy(&output.stdout).contains("1 passed")
}

#[test]
fn without_settings_or_environment_nothing_records() {
    let output = child("child::child_without_request", &[]);
    assert!(passed(&output), "{output:?}");
}

#[test]
#[ignore = "run by without_settings_or_environment_nothing_records in a child process"]
fn child_without_request() {
    let mut app = common::game(FramewisePlugin::default(), Script::new(Some(3)));
    assert_eq!(common::run(&mut app, 10), 3);
    assert!(app.world().get_resource::<FramewiseSession>().is_none());
    assert!(app.world().get_resource::<FramewiseReport>().is_none());
    assert!(!framewise::is_recording());
    assert!(
        !tracing::dispatcher::has_been_set(),
        "no subscriber installed"
    );
}

#[test]
fn the_environment_harness_records_a_plugin_without_settings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("env.sgpt");
    let output = child(
        "child::child_recorded_by_environment",
        &[
            (framewise::env::CAPTURE, &path),
            (framewise::env::FRAMES, Path::new("4")),
            (framewise::env::FIXED_DT, Path::new("0.25")),
        ],
    );
    assert!(passed(&output), "{output:?}");
    let capture = common::open(&path);
    assert!(capture.opened_by_directory());
    assert_eq!(common::frames(&capture).len(), 4);
}

#[test]
#[ignore = "run by the_environment_harness_records_a_plugin_without_settings in a child process"]
fn child_recorded_by_environment() {
    let mut app = common::game(FramewisePlugin::default(), Script::new(None));
    assert_eq!(common::run(&mut app, 10), 10);
    // FRAMEWISE_FRAMES=4 ended the session at its fourth frame.
    let report = match &app.world().resource::<FramewiseReport>().0 {
        Ok(report) => report.clone(),
        Err(error) => panic!("{error}"),
    };
    assert_eq!(report.frames_written, 4);
    assert!(report.is_complete());
    // FRAMEWISE_FIXED_DT=0.25 pinned Bevy's real clock: ten updates, 0.25 s each after the
    // first.
    let time = app.world().resource::<bevy::time::Time<bevy::time::Real>>();
    assert_eq!(time.delta(), std::time::Duration::from_millis(250));
    assert_eq!(time.elapsed(), std::time::Duration::from_millis(9 * 250));
}

#[test]
fn a_panicking_game_leaves_a_closed_capture() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("panic.sgpt");
    let output = child(
        "child::child_panics",
        &[("FRAMEWISE_BEVY_TEST_CAPTURE", &path)],
    );
    assert!(!output.status.success(), "the child panicked: {output:?}");
    // The test harness captures the child's panic message into its stdout.
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("the game panics on purpose"),
        "{output:?}"
    );
    let capture = common::open(&path);
    assert!(capture.opened_by_directory(), "closed as the app unwound");
    // Updates 1-5 ran; the fifth panicked in `Last`, before its frame closed.
    assert_eq!(common::frames(&capture).len(), 4);
}

#[test]
#[ignore = "run by a_panicking_game_leaves_a_closed_capture in a child process"]
fn child_panics() {
    let path = std::env::var_os("FRAMEWISE_BEVY_TEST_CAPTURE").expect("set by the parent");
    let mut script = Script::new(None);
    script.panic_at = Some(5);
    let mut app = common::game(FramewisePlugin::default().capture(path), script);
    app.run();
}
