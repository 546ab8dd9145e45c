//! The environment harness drives the binary with no flags: `FRAMEWISE_CAPTURE`,
//! `FRAMEWISE_FRAMES`, `FRAMEWISE_LEVEL`, `FRAMEWISE_FIXED_DT`, `FRAMEWISE_GOLDEN_FRAME`.

use std::process::Command;

use framewise_format::model::CaptureLevel;

#[test]
fn the_environment_harness_records_the_binary() {
    let dir = tempfile::tempdir().expect("temp dir");
    let capture = dir.path().join("env.sgpt");
    let output = Command::new(env!("CARGO_BIN_EXE_framewise-demo"))
        .current_dir(dir.path())
        .env("FRAMEWISE_CAPTURE", &capture)
        .env("FRAMEWISE_FRAMES", "110")
        .env("FRAMEWISE_LEVEL", "structure")
        .env("FRAMEWISE_FIXED_DT", "0.0166")
        .env("FRAMEWISE_GOLDEN_FRAME", "60")
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read = framewise_format::read::open(&capture).expect("the capture opens");
    assert_eq!(read.frame_count(), 110);
    let meta = read.meta().expect("META");
    assert_eq!(meta.capture_level, CaptureLevel::Structure as u8);
    assert!(meta.settings.iter().any(|(k, _)| k == "FRAMEWISE_FIXED_DT"));
    assert_eq!(read.topologies().len(), 1);
    // Level 1: topology, but no per-pass workloads.
    let frame = read.read_frame(50).expect("frame 50");
    assert!(frame.workloads.is_empty());
    let png = std::fs::read(dir.path().join("env.frame-60.png")).expect("golden frame written");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // The binary installs the counting allocator: the counter is there.
    let names: Vec<&str> = frame
        .counters
        .iter()
        .filter_map(|c| read.symbols().name(c.counter))
        .collect();
    assert!(names.contains(&"allocations"), "{names:?}");
}

#[test]
fn the_binary_takes_no_flags_the_cli_verb_does() {
    // The flags are framewise-cli's (`framewise demo`); the game is driven by the harness.
    let output = Command::new(env!("CARGO_BIN_EXE_framewise-demo"))
        .arg("--frames")
        .arg("10")
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("framewise demo --help"), "{stderr}");
    assert!(output.stdout.is_empty());
}
