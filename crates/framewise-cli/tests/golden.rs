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
    // In CI, the failure is an annotation first (it printed only the fenced summary).
    let run = dir
        .run(&["golden", "--check", "smoke", "--format", "github"])
        .expect(1);
    assert!(
        run.stdout.starts_with("::error title=framewise golden")
            && run
                .stdout
                .lines()
                .next()
                .is_some_and(|l| l.contains("smoke changed::frame ")),
        "{}",
        run.stdout
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

/// `golden_frame = u64::MAX` wrapped `FRAMEWISE_FRAMES` (K + 1) to 0: now one line naming the
/// key and its bound, before anything runs.
#[test]
fn a_golden_frame_past_its_bound_is_refused() {
    let dir = Dir::new();
    dir.write(
        "framewise.toml",
        "[bench.x]\ncommand = [\"true\"]\ngolden_frame = 18446744073709551615\n",
    );
    for mode in ["--record", "--check"] {
        let run = dir.run(&["golden", mode, "x"]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains(
                "[bench.x] golden_frame = 18446744073709551615: at most 18446744073709551614"
            ),
            "{line}"
        );
    }
    assert!(!dir.path(".framewise/golden").exists(), "nothing ran");
}

/// A FIFO where the golden should be is named for what it is, not as missing (and not read:
/// a pipe with no writer would block).
#[test]
fn a_fifo_golden_is_named_as_one() {
    let dir = Dir::new();
    project(&dir, "");
    std::fs::create_dir_all(dir.path(".framewise/goldens")).unwrap();
    let fifo = dir.path(".framewise/goldens/smoke.png");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let run = dir.run(&["golden", "--check", "smoke"]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("smoke.png: is a FIFO (a named pipe), not a regular file"),
        "{line}"
    );
}

/// `--json PATH` naming the golden, the config, or the frame and capture the run writes and
/// the verb reads is refused (exit 4) before anything runs; the golden is kept.
#[test]
fn json_naming_an_input_of_golden_is_refused() {
    let dir = Dir::new();
    project(&dir, "");
    dir.run(&["golden", "--record", "smoke"]).expect(0);
    let golden = dir.path(".framewise/goldens/smoke.png");
    let bytes = std::fs::read(&golden).unwrap();
    let config = std::fs::read(dir.path("framewise.toml")).unwrap();
    for mode in ["--check", "--record"] {
        for json in [
            "--json=.framewise/goldens/smoke.png",
            "--json=./.framewise/goldens/smoke.png",
            "--json=framewise.toml",
            "--json=.framewise/golden/smoke/smoke.frame-30.png",
            "--json=.framewise/golden/smoke/smoke.sgpt",
        ] {
            let run = dir.run(&["golden", mode, "smoke", json]).expect(4);
            let line = run.one_error_line();
            // The golden image and the budgets file are goalposts too: refused as such.
            assert!(
                line.contains("names an input file")
                    || line.contains("a goalpost a person reviews"),
                "{mode} {json}: {line}"
            );
        }
    }
    assert_eq!(std::fs::read(&golden).unwrap(), bytes);
    assert_eq!(std::fs::read(dir.path("framewise.toml")).unwrap(), config);
    // Another path is written as before.
    dir.run(&["golden", "--check", "smoke", "--json=out.json"])
        .expect(0);
    assert!(dir.path("out.json").is_file());
}

/// A golden run let the recorder rewrite the project's `.framewise/profile.json`: after
/// `bench smoke` (BREACHED), `golden --record` and `--check` left a 31-frame session there,
/// and `check` said INSIDE, `hook-status` nothing. A golden run's program gets a `.framewise`
/// of its own (`FRAMEWISE_DIR`), and the project's latest-session files are as the bench
/// left them whatever the program does (the demo writes where it runs).
#[test]
fn a_golden_run_never_replaces_the_profile_check_and_hook_status_read() {
    let dir = Dir::new();
    let exe = env!("CARGO_BIN_EXE_framewise");
    dir.write(
        "game.sh",
        format!(
            "env | grep '^FRAMEWISE_' | sort > env.txt\nexec {exe:?} demo --quiet --threads 2\n"
        ),
    );
    dir.write(
        "framewise.toml",
        "[budgets]\n\"counter.draw_calls.max\" = 1\n\n[bench.smoke]\ncommand = [\"sh\", \"game.sh\"]\nframes = 60\nwarmup = 10\nruns = 3\nfixed_dt = 0.016666\ngolden_frame = 30\n",
    );
    let profile = dir.path(".framewise/profile.json");
    // Before any session: a golden run leaves no profile behind.
    dir.run(&["golden", "--record", "smoke"]).expect(0);
    assert!(!profile.exists(), "the golden run's profile was left");
    let env = std::fs::read_to_string(dir.path("env.txt")).unwrap();
    let named = env
        .lines()
        .find_map(|l| l.strip_prefix("FRAMEWISE_DIR="))
        .expect("FRAMEWISE_DIR is set");
    assert_eq!(
        std::fs::canonicalize(named).unwrap(),
        std::fs::canonicalize(dir.path(".framewise/golden/smoke/.framewise")).unwrap()
    );
    assert!(env.contains("FRAMEWISE_FRAMES=31\n"), "{env}");
    assert!(env.contains("FRAMEWISE_GOLDEN_FRAME=30\n"), "{env}");

    dir.run(&["bench", "smoke"]).expect(0);
    let bench_profile = std::fs::read(&profile).expect("the bench's last run wrote it");
    let checked = dir.run(&["check", "--format", "json"]).expect(1).json();
    let hooked = dir.run(&["hook-status"]).expect(0).stdout;
    assert!(
        hooked.contains("budgets breached: counter.draw_calls.max"),
        "{hooked}"
    );
    dir.run(&["golden", "--record", "smoke"]).expect(0);
    dir.run(&["golden", "--check", "smoke"]).expect(0);
    assert!(
        std::fs::read(&profile).expect("kept") == bench_profile,
        "a golden run replaced the bench's profile.json"
    );
    let after = dir.run(&["check", "--format", "json"]).expect(1).json();
    assert_eq!(after["source"], checked["source"], "{after}");
    assert_eq!(after["budgets"], checked["budgets"], "{after}");
    let hooked_after = dir.run(&["hook-status"]).expect(0).stdout;
    let head = |text: &str| text.lines().take(2).collect::<Vec<_>>().join("\n");
    assert_eq!(head(&hooked_after), head(&hooked));

    // A game running meanwhile rewrites its own session's profile: that is not the golden
    // run's, and is left as it is. (This program plays both: it rewrites the profile under
    // the same session, and writes the golden frame as the demo did.)
    dir.write(
        "live.sh",
        "sed 's/\"frame_index\": [0-9]*/\"frame_index\": 7/' .framewise/profile.json > p.tmp && mv p.tmp .framewise/profile.json\ncp .framewise/goldens/smoke.png \"${FRAMEWISE_CAPTURE%.sgpt}.frame-$FRAMEWISE_GOLDEN_FRAME.png\"\n",
    );
    let toml = std::fs::read_to_string(dir.path("framewise.toml")).unwrap();
    dir.write("framewise.toml", toml.replace("game.sh", "live.sh"));
    dir.run(&["golden", "--check", "smoke"]).expect(0);
    let live = std::fs::read_to_string(&profile).unwrap();
    assert!(live.contains("\"frame_index\": 7"), "{live}");
}

/// An 8×8 RGB PNG of one grey level, its zlib stream stored (no compression), so each byte
/// of `IDAT` past the stream's header is a byte of the picture. With `flip`, one pixel byte
/// is changed after the stream's Adler-32 was computed, and the chunk's CRC-32 is computed
/// over the changed bytes: a PNG whose every chunk checks, whose image data does not.
fn flat_png(level: u8, flip: bool) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(
            &u32::try_from(data.len())
                .expect("a short chunk")
                .to_be_bytes(),
        );
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.finalize().to_be_bytes());
    }
    let (w, h) = (8u32, 8u32);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    let mut raw = Vec::new();
    for _ in 0..h {
        raw.push(0); // filter: none
        raw.extend(std::iter::repeat_n(level, w as usize * 3));
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    if flip {
        raw[30] ^= 0xFF;
    }
    let len = u16::try_from(raw.len()).expect("one stored block");
    let mut zlib = vec![0x78, 0x01, 1];
    zlib.extend_from_slice(&len.to_le_bytes());
    zlib.extend_from_slice(&(!len).to_le_bytes());
    zlib.extend_from_slice(&raw);
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A project whose bench `fake` runs `game.sh` for frame 3, and the pictures it can draw:
/// `white.png`, `black.png`, and `bad.png` (white, a byte of its image data flipped under a
/// recomputed chunk CRC).
fn fake_game(dir: &Dir, game: &str) {
    dir.write(
        "framewise.toml",
        "[bench.fake]\ncommand = [\"sh\", \"game.sh\"]\nframes = 10\nwarmup = 3\nruns = 3\nfixed_dt = 0.01\n",
    );
    std::fs::write(dir.path("white.png"), flat_png(255, false)).expect("write");
    std::fs::write(dir.path("black.png"), flat_png(0, false)).expect("write");
    std::fs::write(dir.path("bad.png"), flat_png(255, true)).expect("write");
    dir.write("game.sh", game);
}

/// The frame `game.sh` writes: `FRAME=...` in the script.
const FRAME: &str = "FRAME=\"${FRAMEWISE_CAPTURE%.sgpt}.frame-$FRAMEWISE_GOLDEN_FRAME.png\"\n";

/// A golden that was a symbolic link to the run's frame file passed any frame: the stale
/// frame was removed through the link before the program ran, the golden read after it, and
/// the new frame (black) was compared with itself (SSIM 1.0, exit 0) though the golden it
/// had held was white. The golden is read before the run, and a golden that is the frame's
/// file (a symbolic or a hard link) is refused before anything runs.
#[test]
fn a_golden_that_is_the_runs_frame_is_refused() {
    let dir = Dir::new();
    fake_game(&dir, &format!("{FRAME}cp \"$(cat src)\" \"$FRAME\"\n"));
    dir.write("src", "white.png");
    dir.run(&["golden", "--record", "fake"]).expect(0);
    dir.run(&["golden", "--check", "fake"]).expect(0);
    dir.write("src", "black.png");
    dir.run(&["golden", "--check", "fake"]).expect(1);

    // The golden made a link to the run's frame (white now), and the game draws black.
    dir.write("src", "white.png");
    dir.run(&["golden", "--check", "fake"]).expect(0);
    let golden = dir.path(".framewise/goldens/fake.png");
    std::fs::remove_file(&golden).unwrap();
    std::os::unix::fs::symlink("../golden/fake/fake.frame-3.png", &golden).unwrap();
    dir.write("src", "black.png");
    for mode in ["--check", "--record"] {
        let run = dir.run(&["golden", mode, "fake"]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains("fake.png and the run's frame")
                && line.contains("fake.frame-3.png are one file"),
            "{mode}: {line}"
        );
    }
    // Nothing ran: the frame the link names is the white one still.
    let frame = dir.path(".framewise/golden/fake/fake.frame-3.png");
    assert_eq!(std::fs::read(&frame).unwrap(), flat_png(255, false));

    // A hard link is the same file by another name.
    std::fs::remove_file(&golden).unwrap();
    std::fs::hard_link(&frame, &golden).unwrap();
    let run = dir.run(&["golden", "--check", "fake"]).expect(4);
    assert!(
        run.one_error_line().contains("are one file"),
        "{}",
        run.stderr
    );

    // A golden of its own (white): the black frame fails.
    std::fs::remove_file(&golden).unwrap();
    std::fs::write(&golden, flat_png(255, false)).unwrap();
    dir.run(&["golden", "--check", "fake"]).expect(1);
}

/// A program that writes its frame as a symbolic link to the golden passed (the link was
/// followed, and the golden compared with itself); one that hard-links the golden as its
/// frame is the golden too. Both are refused: the frame must be an image of the program's own.
#[test]
fn a_frame_that_is_a_link_is_no_evidence() {
    let dir = Dir::new();
    fake_game(&dir, &format!("{FRAME}cp white.png \"$FRAME\"\n"));
    dir.run(&["golden", "--record", "fake"]).expect(0);
    let golden = std::fs::canonicalize(dir.path(".framewise/goldens/fake.png")).unwrap();

    dir.write(
        "game.sh",
        format!(
            "{FRAME}ln -s {:?} \"$FRAME\"\n",
            golden.display().to_string()
        ),
    );
    for mode in ["--check", "--record"] {
        let run = dir
            .run(&["golden", mode, "fake", "--format", "json"])
            .expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains("fake.frame-3.png: is a symbolic link to")
                && line.contains("regular file of its own"),
            "{mode}: {line}"
        );
        assert!(run.stdout.is_empty(), "no report: {}", run.stdout);
    }
    // A link to another file, not the golden, is no evidence either.
    dir.write(
        "game.sh",
        format!("{FRAME}ln -s \"$PWD/white.png\" \"$FRAME\"\n"),
    );
    let run = dir.run(&["golden", "--check", "fake"]).expect(4);
    assert!(
        run.one_error_line().contains("is a symbolic link"),
        "{}",
        run.stderr
    );

    dir.write(
        "game.sh",
        format!("{FRAME}ln {:?} \"$FRAME\"\n", golden.display().to_string()),
    );
    let frame = dir.path(".framewise/golden/fake/fake.frame-3.png");
    for mode in ["--check", "--record"] {
        let _ = std::fs::remove_file(&frame);
        let run = dir.run(&["golden", mode, "fake"]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains("fake.frame-3.png and the golden") && line.contains("are one file"),
            "{mode}: {line}"
        );
    }
    // The frame that run left is the golden by another name: refused before the next run.
    let run = dir.run(&["golden", "--check", "fake"]).expect(4);
    assert!(
        run.one_error_line().contains("and the run's frame"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&golden).unwrap(), flat_png(255, false));
}

/// A PNG whose image data fails its zlib Adler-32 (a byte flipped inside `IDAT`, the chunk's
/// CRC made right) decoded as another picture and passed: as the frame or as the golden it
/// is now no readable PNG, exit 4 (the golden's before the program runs).
#[test]
fn a_png_failing_its_adler32_is_refused_as_frame_and_as_golden() {
    let dir = Dir::new();
    fake_game(
        &dir,
        &format!("{FRAME}touch ran\ncp \"$(cat src)\" \"$FRAME\"\n"),
    );
    dir.write("src", "white.png");
    dir.run(&["golden", "--record", "fake"]).expect(0);
    dir.write("src", "bad.png");
    for mode in ["--check", "--record"] {
        let run = dir.run(&["golden", mode, "fake"]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains("fake.frame-3.png: the program's frame 3")
                && line.contains("not a readable PNG"),
            "{mode}: {line}"
        );
    }
    assert_eq!(
        std::fs::read(dir.path(".framewise/goldens/fake.png")).unwrap(),
        flat_png(255, false),
        "the corrupt frame was not recorded"
    );

    std::fs::write(dir.path(".framewise/goldens/fake.png"), flat_png(255, true)).unwrap();
    std::fs::remove_file(dir.path("ran")).unwrap();
    dir.write("src", "white.png");
    let run = dir.run(&["golden", "--check", "fake"]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("fake.png: the golden") && line.contains("not a readable PNG"),
        "{line}"
    );
    assert!(!dir.path("ran").exists(), "the program ran");
}
