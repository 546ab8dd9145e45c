//! What depends on the process (the environment, the global `tracing` subscriber, a panic)
//! runs in a child process: the parent test runs this test binary again with one ignored
//! `child_*` test selected and checks what it left.

use std::path::Path;
use std::process::{Command, Output};

use framewise_bevy::{FramewisePlugin, FramewiseReport, FramewiseSession};

use crate::common::{self, Script};

/// Runs the ignored test `name` in a child process with `env`.
fn child(name: &str, env: &[(&str, &Path)]) -> Output {
    child_with(name, env, &[])
}

/// Runs the ignored test `name` in a child process with `env` and more arguments for the
/// test harness (`--nocapture`: what the child says on stderr is its own stderr).
fn child_with(name: &str, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--ignored", "--exact", "--test-threads=1", name])
        .args(args)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1");
    // The recorder's harness variables of whoever runs the tests are not the child's.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("FRAMEWISE_") {
            command.env_remove(key);
        }
    }
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

/// What the plugin says when Bevy's `LogPlugin` lost the global subscriber to it.
const LOGS_LOST: &str = "framewise: Bevy's LogPlugin shows no logs";
/// What the child game logs once.
const LOGGED: &str = "the child game logs this line";

fn log_once(mut logged: bevy::prelude::Local<bool>) {
    if !*logged {
        tracing::info!("{LOGGED}");
        *logged = true;
    }
}

/// The child's game recorded, with its system scopes.
fn recorded_with_scopes(path: &std::ffi::OsStr) {
    let capture = common::open(Path::new(path));
    let frames = common::frames(&capture);
    assert_eq!(frames.len(), 3);
    for frame in &frames {
        let names = common::scope_names(&capture, frame);
        assert!(
            names.iter().any(|n| n == "tests::common::spawn_boids"),
            "{names:?}"
        );
    }
}

#[test]
fn a_log_plugin_after_the_plugin_is_told_it_shows_no_logs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs.sgpt");
    let output = child_with(
        "child::child_with_log_plugin",
        &[("FRAMEWISE_BEVY_TEST_CAPTURE", &path)],
        &["--nocapture"],
    );
    assert!(passed(&output), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Said once, on one line, with the way to keep both.
    let said: Vec<&str> = stderr.lines().filter(|l| l.contains(LOGS_LOST)).collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("FramewisePlugin::default().install_subscriber(false)")
            && said[0].contains(
                "LogPlugin { custom_layer: |_| Some(Box::new(framewise_bevy::tracing_layer())), \
                 ..default() }"
            ),
        "{}",
        said[0]
    );
    // What it says is so: the game's log line went nowhere.
    assert!(!stderr.contains(LOGGED), "{stderr}");
}

/// The plugin's notices went through `eprintln!`, which panics when stderr cannot be
/// written: a game run with `2>/dev/full` died at the plugin's build. A full device made in the
/// test's own directory (never the machine's `/dev`).
#[test]
fn a_notice_to_an_unwritable_stderr_panics_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    let made = Command::new("mknod")
        .arg(&full)
        .args(["c", "1", "7"])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipping: mknod needs root here");
        return;
    }
    let path = dir.path().join("full-stderr.sgpt");
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            "--test-threads=1",
            "--nocapture",
            "child::child_with_log_plugin",
        ])
        .env_remove("RUST_LOG")
        .env("FRAMEWISE_BEVY_TEST_CAPTURE", &path)
        .stderr(std::fs::OpenOptions::new().write(true).open(&full).unwrap());
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("FRAMEWISE_") && key != "FRAMEWISE_BEVY_TEST_CAPTURE" {
            command.env_remove(key);
        }
    }
    let output = command.output().unwrap();
    assert!(passed(&output), "{output:?}");
}

#[test]
#[ignore = "run by a_log_plugin_after_the_plugin_is_told_it_shows_no_logs in a child process"]
fn child_with_log_plugin() {
    let path = std::env::var_os("FRAMEWISE_BEVY_TEST_CAPTURE").expect("set by the parent");
    let mut app = common::game_with_log(
        FramewisePlugin::default().capture(&path),
        bevy::log::LogPlugin::default(),
        Script::new(Some(3)),
    );
    app.add_systems(bevy::app::Update, log_once);
    assert_eq!(common::run(&mut app, 10), 3);
    recorded_with_scopes(&path);
}

#[test]
fn the_layer_in_log_plugin_keeps_the_logs_and_the_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("layer.sgpt");
    let output = child_with(
        "child::child_with_the_layer_in_log_plugin",
        &[("FRAMEWISE_BEVY_TEST_CAPTURE", &path)],
        &["--nocapture"],
    );
    assert!(passed(&output), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(LOGGED), "{stderr}");
    assert!(!stderr.contains(LOGS_LOST), "{stderr}");
    assert!(!stderr.contains("another tracing subscriber"), "{stderr}");
}

#[test]
#[ignore = "run by the_layer_in_log_plugin_keeps_the_logs_and_the_scopes in a child process"]
fn child_with_the_layer_in_log_plugin() {
    let path = std::env::var_os("FRAMEWISE_BEVY_TEST_CAPTURE").expect("set by the parent");
    let mut app = common::game_with_log(
        FramewisePlugin::default()
            .capture(&path)
            .install_subscriber(false),
        bevy::log::LogPlugin {
            custom_layer: |_| Some(Box::new(framewise_bevy::tracing_layer())),
            ..Default::default()
        },
        Script::new(Some(3)),
    );
    app.add_systems(bevy::app::Update, log_once);
    assert_eq!(common::run(&mut app, 10), 3);
    recorded_with_scopes(&path);
}
