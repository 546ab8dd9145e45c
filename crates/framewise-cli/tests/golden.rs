//! `framewise golden`: the correctness gate on the demo's real frames, run through the
//! harness (the same frame passes, a changed frame fails, no golden is exit 4).

use crate::support::Dir;

/// A framewise.toml whose bench `smoke` runs the demo with `extra` arguments.
fn project(dir: &Dir, extra: &str) {
    let exe = env!("CARGO_BIN_EXE_framewise");
    dir.write(
        "framewise.toml",
        format!(
            "[bench.smoke]\ncommand = [{exe:?}, \"demo\", \"--quiet\", \"--threads\", \"2\"{extra}]\ngolden_frame = 30\nfixed_dt = 0.016666\n\n[bench.silent]\ncommand = [\"true\"]\n"
        ),
    );
}

#[test]
fn the_same_frame_passes_and_a_changed_frame_fails() {
    let dir = Dir::new();
    project(&dir, "");

    // Nothing recorded yet: exit 4, never a pass, and the program is not even run.
    let run = dir.run(&["golden", "--check", "smoke"]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("no golden") && line.contains("framewise golden --record smoke"),
        "{line}"
    );
    // A directory where the golden should be is named as one, not as missing.
    std::fs::create_dir_all(dir.path(".framewise/goldens/smoke.png")).unwrap();
    let run = dir.run(&["golden", "--check", "smoke"]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("smoke.png: is a directory, not the golden PNG of bench `smoke`"),
        "{line}"
    );
    std::fs::remove_dir(dir.path(".framewise/goldens/smoke.png")).unwrap();

    let rec = dir
        .run(&["golden", "--record", "smoke", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(rec["schema"], "framewise.golden/1");
    assert_eq!(rec["mode"], "record");
    assert_eq!(rec["golden_frame"], 30);
    let golden = dir.path(".framewise/goldens/smoke.png");
    assert!(golden.is_file());
    let bytes = std::fs::read(&golden).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "the demo's real frame");

    // The same build, run again by the harness: the same picture.
    let check = dir
        .run(&["golden", "--check", "smoke", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(check["verdict"], "pass", "{check}");
    let ssim = check["similarity"]["ssim"].as_f64().unwrap();
    assert!(ssim >= 0.98, "{check}");
    assert_eq!(check["threshold"], 0.98);
    assert_eq!(check["notes"].as_array().map(Vec::len), Some(0), "{check}");

    // A change that alters what is drawn (another world seed): the picture changed.
    project(&dir, ", \"--seed\", \"9\"");
    let run = dir.run(&["golden", "--check", "smoke"]).expect(1);
    assert!(run.stdout.contains("FAIL (exit 1)"), "{}", run.stdout);
    let check = dir
        .run(&["golden", "--check", "smoke", "--format", "json"])
        .expect(1)
        .json();
    assert_eq!(check["verdict"], "fail");
    assert!(
        check["similarity"]["ssim"].as_f64().unwrap() < 0.98,
        "{check}"
    );
}

#[test]
fn a_stricter_threshold_is_read_from_the_bench() {
    let dir = Dir::new();
    project(&dir, "");
    let toml = std::fs::read_to_string(dir.path("framewise.toml")).unwrap();
    dir.write(
        "framewise.toml",
        toml.replace(
            "golden_frame = 30\n",
            "golden_frame = 30\ngolden_threshold = 1.5\n",
        ),
    );
    let run = dir.run(&["golden", "--check", "smoke"]).expect(4);
    assert!(
        run.one_error_line().contains("golden_threshold"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_program_that_writes_no_frame_and_unknown_benches_are_errors() {
    let dir = Dir::new();
    project(&dir, "");
    let run = dir.run(&["golden", "--record", "silent"]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("wrote no image for frame") && line.contains("FRAMEWISE_GOLDEN_FRAME"),
        "{line}"
    );
    assert!(!dir.path(".framewise/goldens/silent.png").exists());

    let run = dir.run(&["golden", "--check", "smokey"]).expect(4);
    assert!(run.one_error_line().contains("smoke"), "{}", run.stderr);
    let run = dir.run(&["golden"]).expect(4);
    assert!(run.stderr.contains("usage"), "{}", run.stderr);
}

/// Width and height from a PNG's IHDR.
fn png_size(png: &[u8]) -> (u32, u32) {
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    assert_eq!(&png[12..16], b"IHDR");
    (be(16), be(20))
}

#[test]
fn the_bench_seed_and_resolution_reach_the_demo() {
    // What the harness hands the program, the program runs: every run of a bench with a seed
    // and a resolution records them in its capture, and the golden frame is that size.
    let dir = Dir::new();
    let exe = env!("CARGO_BIN_EXE_framewise");
    dir.write(
        "framewise.toml",
        format!(
            "[bench.small]\ncommand = [{exe:?}, \"demo\", \"--quiet\", \"--threads\", \"2\"]\nframes = 5\nwarmup = 5\nruns = 3\nseed = 7\nresolution = \"320x180\"\nfixed_dt = 0.016666\ngolden_frame = 8\n"
        ),
    );
    let bench = dir
        .run(&["bench", "small", "--format", "json"])
        .expect(0)
        .json();
    for run in bench["runs"].as_array().expect("runs") {
        let capture = dir.path(run["capture"].as_str().expect("capture"));
        let read = framewise_format::read::open(&capture).expect("the run's capture");
        let meta = read.meta().expect("META");
        let setting = |key: &str| {
            meta.settings
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(setting("seed").as_deref(), Some("7"), "{capture:?}");
        assert_eq!(setting("FRAMEWISE_RESOLUTION").as_deref(), Some("320x180"));
        let render = meta.render.as_ref().expect("render settings");
        assert_eq!(render.internal_resolution, Some((320, 180)));
    }
    dir.run(&["golden", "--record", "small"]).expect(0);
    let png = std::fs::read(dir.path(".framewise/goldens/small.png")).expect("golden");
    assert_eq!(png_size(&png), (320, 180));
}
