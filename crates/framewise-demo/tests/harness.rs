//! The environment harness drives the binary with no flags: `FRAMEWISE_CAPTURE`,
//! `FRAMEWISE_FRAMES`, `FRAMEWISE_LEVEL`, `FRAMEWISE_FIXED_DT`, `FRAMEWISE_GOLDEN_FRAME`,
//! `FRAMEWISE_SEED`, `FRAMEWISE_RESOLUTION`.

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

/// Runs the binary for 40 frames with `vars` and a golden frame 30; returns the capture's
/// META and the golden PNG's bytes.
fn harness_run(vars: &[(&str, &str)]) -> (framewise_format::model::Meta, Vec<u8>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let capture = dir.path().join("run.sgpt");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_framewise-demo"));
    cmd.current_dir(dir.path())
        .env("FRAMEWISE_CAPTURE", &capture)
        .env("FRAMEWISE_FRAMES", "40")
        .env("FRAMEWISE_FIXED_DT", "0.016666")
        .env("FRAMEWISE_GOLDEN_FRAME", "30");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let output = cmd.output().expect("the binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read = framewise_format::read::open(&capture).expect("the capture opens");
    let meta = read.meta().expect("META").clone();
    let png = std::fs::read(dir.path().join("run.frame-30.png")).expect("golden frame written");
    (meta, png)
}

/// Width and height from a PNG's IHDR.
fn png_size(png: &[u8]) -> (u32, u32) {
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    assert_eq!(&png[12..16], b"IHDR");
    (be(16), be(20))
}

fn setting<'a>(meta: &'a framewise_format::model::Meta, key: &str) -> Option<&'a str> {
    meta.settings
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[test]
fn the_harness_seed_and_resolution_are_the_ones_the_game_runs() {
    let (plain, plain_png) = harness_run(&[]);
    assert_eq!(setting(&plain, "seed"), Some("1"));
    assert_eq!(png_size(&plain_png), (640, 360));
    assert_eq!(setting(&plain, "FRAMEWISE_SEED"), None);

    let (meta, png) = harness_run(&[("FRAMEWISE_SEED", "7"), ("FRAMEWISE_RESOLUTION", "320x180")]);
    // The game's own settings say what it ran, beside what the harness asked for.
    assert_eq!(setting(&meta, "seed"), Some("7"));
    assert_eq!(setting(&meta, "FRAMEWISE_SEED"), Some("7"));
    assert_eq!(setting(&meta, "FRAMEWISE_RESOLUTION"), Some("320x180"));
    let render = meta.render.as_ref().expect("render settings");
    assert_eq!(render.internal_resolution, Some((320, 180)));
    assert_eq!(png_size(&png), (320, 180));

    // The seed changes the world, so the picture: same size, other pixels.
    let (_, seeded_png) = harness_run(&[("FRAMEWISE_SEED", "7")]);
    assert_eq!(png_size(&seeded_png), (640, 360));
    assert_ne!(seeded_png, plain_png, "another seed draws another world");
    let (_, again) = harness_run(&[("FRAMEWISE_SEED", "7")]);
    assert_eq!(
        again, seeded_png,
        "the same seed and fixed step draw the same frame"
    );
}

#[test]
fn a_bad_seed_or_resolution_is_refused_with_its_variable() {
    for (var, value) in [
        ("FRAMEWISE_SEED", "minus one"),
        ("FRAMEWISE_RESOLUTION", "1280"),
        ("FRAMEWISE_RESOLUTION", "32x18"),
    ] {
        let dir = tempfile::tempdir().expect("temp dir");
        let output = Command::new(env!("CARGO_BIN_EXE_framewise-demo"))
            .current_dir(dir.path())
            .env("FRAMEWISE_CAPTURE", dir.path().join("x.sgpt"))
            .env("FRAMEWISE_FRAMES", "5")
            .env(var, value)
            .output()
            .expect("the binary runs");
        assert_eq!(output.status.code(), Some(4), "{var}={value}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let named = if value == "32x18" { "32x18" } else { var };
        assert!(stderr.contains(named), "{var}={value}: {stderr}");
    }
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

/// The binary under the harness records where the recorder lets it: a capture path that is
/// one of the incident log's files is refused at start, one line, nothing written (the
/// recorder's rolling `profile.json` replaced the capture), and a FIFO is refused without
/// waiting for a reader.
#[test]
fn the_binary_refuses_a_capture_the_recorder_refuses() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join(".framewise")).expect("dir");
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo");
    for (capture, reason) in [
        (
            ".framewise/profile.json",
            "framewise-demo: cannot start recording: cannot record into .framewise/profile.json: \
             it is the incident log's profile.json, the rolling summary the recorder rewrites \
             while it records: the capture would be lost; name another file",
        ),
        (
            "fifo",
            "framewise-demo: cannot start recording: cannot record into fifo: it is a FIFO with no \
             reader yet",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_framewise-demo"))
            .current_dir(dir.path())
            .env("FRAMEWISE_CAPTURE", capture)
            .env("FRAMEWISE_FRAMES", "5")
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{capture}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{stderr}");
        assert!(lines[0].starts_with(reason), "{stderr}");
    }
    assert!(!dir.path().join(".framewise/profile.json").exists());
}

/// `eprintln!` and `println!` panic when their stream cannot be written: the binary exited
/// 101 with `2>/dev/full` instead of its own code.
#[test]
fn the_binary_never_panics_on_a_stream_it_cannot_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(full) = full_device(dir.path()) else {
        return;
    };
    let usage = Command::new(env!("CARGO_BIN_EXE_framewise-demo"))
        .arg("--frames")
        .stderr(full.try_clone().expect("a second handle"))
        .status()
        .expect("the binary runs");
    assert_eq!(usage.code(), Some(4), "the usage error's own code");
    let version = Command::new(env!("CARGO_BIN_EXE_framewise-demo"))
        .arg("--version")
        .stdout(full)
        .status()
        .expect("the binary runs");
    assert_eq!(version.code(), Some(0));
}

/// A device like `/dev/full` (1, 7: every write fails with ENOSPC), made in `dir` rather than
/// taken from the machine's `/dev`; `None`, said on stderr, where `mknod` needs more rights.
fn full_device(dir: &std::path::Path) -> Option<std::fs::File> {
    let path = dir.join("full");
    let made = std::process::Command::new("mknod")
        .arg(&path)
        .args(["c", "1", "7"])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipping: mknod needs root here");
        return None;
    }
    std::fs::OpenOptions::new().write(true).open(&path).ok()
}
