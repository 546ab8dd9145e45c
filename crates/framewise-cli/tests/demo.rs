//! `framewise demo`, the main job, end to end: the game runs and records, the capture is
//! explained, every injected hitch is found and classified by its true cause, and the slow
//! variant's draw-call regression is caught by `framewise gate` with exit 1.

use crate::support::Dir;
use framewise_demo::Schedule;

const FRAMES: &str = "300";

/// The hitches are held (`--hold-hitches`): each injected hitch's frame lasts, on the
/// recorder's own clock, 4× a bound of the rule's rolling median, so the hitch rule flags it
/// on every run however loaded the machine is (the real work of a hitch alone can fall under
/// the bar when the frames around it stretch), and the frame's evidence keeps its true cause.
#[test]
fn the_demo_records_explains_and_names_each_hitch_by_its_cause() {
    let dir = Dir::new();
    the_demo_records_and_explains(&dir);
    the_incident_log_names_the_injected_hitches(&dir);
    hitches_names(&dir);
}

/// What holds in every run, however loaded the machine: the capture is recorded and
/// explained, and stderr says where the incident log went.
fn the_demo_records_and_explains(dir: &Dir) {
    let run = dir
        .run(&[
            "demo",
            "--frames",
            FRAMES,
            "--hold-hitches",
            "-o",
            "demo.sgpt",
        ])
        .expect(0);
    for section in [
        "── framewise summarize demo.sgpt",
        "── framewise hitches demo.sgpt",
        "── next",
    ] {
        assert!(
            run.stdout.contains(section),
            "missing {section:?}:\n{}",
            run.stdout
        );
    }
    // The attribute step names the frame it suggests and why: the first hitch injected.
    let (frame, cause) = Schedule::for_frames(FRAMES.parse().expect("frames")).hitches()[0];
    let step = format!(
        "  framewise attribute demo.sgpt --frame {frame}\n      which scopes (and call sites) made frame {frame} slow: the {} injected there\n",
        cause.name()
    );
    assert!(
        run.stdout.contains(&step),
        "missing {step:?}:\n{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("  framewise view demo.sgpt\n"),
        "the next steps name the inspector:\n{}",
        run.stdout
    );
    assert!(!run.stdout.contains("not built yet"), "{}", run.stdout);
    // stderr says where the incident log went (and that `.framewise/` was made), nothing
    // else: progress goes there on a terminal only.
    assert_eq!(
        run.stderr,
        "framewise demo: created .framewise/ (.gitignore, framewise.toml, agent-guide.md) for the incident log\n\
         framewise demo: incident log → .framewise/perf.jsonl\n"
    );
}

/// `framewise hitches` finds every injected hitch and names its true cause first; a failure
/// says what it missed or misnamed, with the frame's period against the rule's bar.
fn hitches_names(dir: &Dir) {
    let hitches = dir
        .run(&["hitches", "demo.sgpt", "--format", "json"])
        .expect(1)
        .json();
    let list = hitches["hitches"].as_array().expect("hitches array");
    let mut misses = Vec::new();
    for (frame, cause) in Schedule::for_frames(FRAMES.parse().expect("frames")).hitches() {
        let Some(hitch) = list.iter().find(|h| h["frame"] == frame) else {
            misses.push(format!(
                "injected {} at frame {frame} not detected",
                cause.name()
            ));
            continue;
        };
        let best = &hitch["classification"][0];
        assert!(
            !best["evidence"].as_str().unwrap_or("").is_empty(),
            "evidence is mandatory"
        );
        if best["guess"] != cause.expected_kind() {
            misses.push(format!(
                "frame {frame} ({}, period {} ms against {} ms): best guess {best}",
                cause.name(),
                hitch["duration_ms"],
                hitch["threshold_ms"]
            ));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("; "));
}

/// The live log the demo wrote into `.framewise/` of its working directory: every injected
/// hitch was judged one, and each that kept its record names its true cause.
fn the_incident_log_names_the_injected_hitches(dir: &Dir) {
    let read = framewise_incidents::read_all(&dir.path(".framewise/perf.jsonl"))
        .expect("the demo writes its incident log");
    assert_eq!((read.malformed, read.torn_last_line), (0, false));
    let injected = Schedule::for_frames(FRAMES.parse().expect("frames")).hitches();
    let Some(framewise_incidents::Record::SessionEnd(end)) = read.records.last() else {
        panic!("session-end is last: {:#?}", read.records);
    };
    assert_eq!(end.frames, FRAMES.parse::<u64>().expect("frames"));
    assert!(dir.path(".framewise/profile.json").is_file());
    // The rate limit keeps the worst hitch of each second: two held hitches can share one,
    // and a frame the scheduler stretched past a held hitch would take its place, so the
    // injected hitches that kept their record are checked, each for its true cause; at least
    // one of them must keep it (every injected hitch losing its place would mean the log
    // names none of them).
    let mut named = 0;
    let mut misnamed = Vec::new();
    for record in &read.records {
        if let framewise_incidents::Record::Hitch(h) = record {
            assert_eq!(h.footprint.id.len(), 8);
            assert_eq!(h.common.ctx.as_deref(), Some("squad=solo,view=top"));
            if let Some((_, cause)) = injected.iter().find(|(frame, _)| *frame == h.frame) {
                if h.classification[0].guess == cause.expected_kind() {
                    named += 1;
                } else {
                    misnamed.push(format!(
                        "the live log names frame {} ({}) {:?}",
                        h.frame,
                        cause.name(),
                        h.classification
                    ));
                }
            }
        }
    }
    assert!(misnamed.is_empty(), "{}", misnamed.join("; "));
    assert!(
        named > 0,
        "no injected hitch kept its record in the live log: {:#?}",
        read.records
    );
    assert!(
        end.written.hitch + end.dropped.hitch >= injected.len() as u64,
        "the live log judged {} frames hitches, fewer than the {} injected",
        end.written.hitch + end.dropped.hitch,
        injected.len()
    );
}

#[test]
fn demo_frames_1_to_57_runs_without_hitches_and_says_why() {
    let dir = Dir::new();
    for frames in ["1", "57"] {
        let run = dir
            .run(&["demo", "--frames", frames, "-o", "short.sgpt"])
            .expect(0);
        assert!(
            run.stdout.contains(&format!(
                "no hitches injected: {frames} frames is too short for them (they need at least 59)"
            )),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains("── framewise summarize short.sgpt"));
    }
}

/// Runs the demo with `args`, expecting a refusal: exit 4, one stderr line containing
/// `reason`, and nothing on stdout.
fn refused(dir: &Dir, args: &[&str], reason: &str) {
    let run = dir.run(args).expect(4);
    let line = run.one_error_line();
    assert!(line.contains(reason), "{line}");
    assert!(
        run.stdout.is_empty(),
        "stdout stays empty on exit 4: {}",
        run.stdout
    );
}

#[test]
fn demo_threads_absurd_is_refused_with_exit_4_and_empty_stdout() {
    let dir = Dir::new();
    refused(
        &dir,
        &["demo", "--threads", "100000", "-o", "t.sgpt"],
        "100000 worker threads is more than this machine can run usefully: at most",
    );
    assert!(!dir.path("t.sgpt").exists());
}

#[test]
fn demo_arguments_are_refused_before_the_game_runs() {
    let dir = Dir::new();
    // Without a recording too: it said "the demo game failed: invalid demo configuration".
    for output in [&["--no-record"][..], &["-o", "u.sgpt"]] {
        let mut args = vec!["demo", "--frames", "8", "--usermark-at", "99"];
        args.extend(output);
        let run = dir.run(&args).expect(4);
        assert_eq!(
            run.one_error_line(),
            "framewise: error: invalid demo configuration: usermark at frame 99 is past the last frame (7)",
            "{args:?}"
        );
    }
    assert!(!dir.path(".framewise").exists());
    // A step of 0, and a number written as a person reads it, not as 301 digits.
    for (dt, reason) in [
        (
            "1e-300",
            "--fixed-dt 1e-300: less than a nanosecond, a step of 0",
        ),
        ("1e300", "--fixed-dt 1e300: expected seconds in (0, 1)"),
        // A negative step is the value refused, not taken for a flag.
        ("-1", "--fixed-dt -1: expected seconds in (0, 1)"),
    ] {
        let args = ["demo", "--frames", "8", "--fixed-dt", dt, "--no-record"];
        refused(&dir, &args, reason);
    }
}

#[test]
fn demo_golden_path_on_the_capture_is_refused_and_the_capture_kept() {
    let dir = Dir::new();
    dir.write("d.sgpt", b"an earlier capture");
    for golden in ["d.sgpt", "./d.sgpt"] {
        refused(
            &dir,
            &[
                "demo",
                "--frames",
                "8",
                "-o",
                "d.sgpt",
                "--golden-frame",
                "5",
                "--golden-path",
                golden,
            ],
            "is also -o: the golden frame would overwrite the capture",
        );
    }
    assert_eq!(
        std::fs::read(dir.path("d.sgpt")).expect("kept"),
        b"an earlier capture"
    );
    assert!(!dir.path(".framewise").exists());
    // Nor does the capture or the PNG replace the game's incident log.
    std::fs::create_dir(dir.path(".framewise")).expect("dir");
    dir.write(".framewise/perf.jsonl", b"{}\n");
    for args in [
        &["-o", ".framewise/perf.jsonl"][..],
        &[
            "--golden-frame",
            "5",
            "--golden-path",
            ".framewise/perf.jsonl",
        ],
    ] {
        let mut argv = vec!["demo", "--frames", "8"];
        argv.extend(args);
        refused(&dir, &argv, "is the append-only perf.jsonl");
    }
    assert_eq!(
        std::fs::read(dir.path(".framewise/perf.jsonl")).expect("kept"),
        b"{}\n"
    );
}

#[test]
fn demo_zero_frames_is_a_usage_error_naming_the_flag() {
    let dir = Dir::new();
    refused(
        &dir,
        &["demo", "--frames", "0", "-o", "z.sgpt"],
        "invalid value '0' for '--frames <FRAMES>'",
    );
    assert!(!dir.path("z.sgpt").exists());
}

/// A recorder variable that does not read is refused with the arguments: one line, exit 4,
/// and no `.framewise/` scaffolded (it scaffolded the directory, said so, then failed).
#[test]
fn demo_with_a_bad_recorder_variable_is_refused_before_anything_is_scaffolded() {
    let dir = Dir::new();
    let run = dir
        .run_env(
            &["demo", "--frames", "5", "-o", "x.sgpt"],
            &[("FRAMEWISE_SEED", "abc")],
        )
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: cannot start recording: environment variable FRAMEWISE_SEED=\"abc\": expected an unsigned 64-bit integer"
    );
    assert!(!dir.path(".framewise").exists());
    assert!(!dir.path("x.sgpt").exists());
}

/// A `FRAMEWISE_RESOLUTION` that reads but that the demo cannot render is refused the same
/// way, naming the variable and the sizes allowed (it scaffolded `.framewise/`, said so, then
/// failed with three lines on stderr and "framebuffer 10x10 is outside …").
#[test]
fn demo_with_a_resolution_it_cannot_render_is_refused_before_anything_is_scaffolded() {
    for resolution in ["10x10", "4097x100"] {
        let dir = Dir::new();
        let run = dir
            .run_env(
                &["demo", "--frames", "3", "-o", "x.sgpt"],
                &[("FRAMEWISE_RESOLUTION", resolution)],
            )
            .expect(4);
        assert_eq!(
            run.one_error_line(),
            format!(
                "framewise: error: invalid demo configuration: FRAMEWISE_RESOLUTION={resolution} \
                 is outside the demo's framebuffer sizes, 64x36..4096x4096"
            )
        );
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        assert!(!dir.path(".framewise").exists(), "{resolution}");
        assert!(!dir.path("x.sgpt").exists(), "{resolution}");
    }
}

/// `--golden-path` with no golden frame asked for wrote nothing, exit 0, without a word.
#[test]
fn a_golden_path_without_a_golden_frame_is_refused() {
    let dir = Dir::new();
    let run = dir
        .run(&[
            "demo",
            "--frames",
            "3",
            "--golden-path",
            "g.png",
            "-o",
            "x.sgpt",
        ])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: invalid demo configuration: a golden path is given but no golden frame (--golden-frame or FRAMEWISE_GOLDEN_FRAME): no image would be written there"
    );
    assert!(!dir.path(".framewise").exists());
    // With the frame from the environment, it is written.
    let run = dir
        .run_env(
            &[
                "demo",
                "--frames",
                "3",
                "--golden-path",
                "g.png",
                "-o",
                "x.sgpt",
                "--quiet",
            ],
            &[("FRAMEWISE_GOLDEN_FRAME", "1")],
        )
        .expect(0);
    assert!(dir.path("g.png").exists(), "{}", run.stderr);
}

#[test]
fn demo_capture_in_a_missing_directory_is_refused_before_anything_is_scaffolded() {
    // It used to scaffold .framewise/, say so on stderr, then fail to create the capture:
    // exit 4 with three lines on stderr and a .framewise/ left behind.
    let dir = Dir::new();
    refused(
        &dir,
        &["demo", "--frames", "5", "-o", "missing/x.sgpt"],
        "missing/x.sgpt: cannot create the capture: missing does not exist",
    );
    assert!(!dir.path(".framewise").exists());
    assert!(!dir.path("missing").exists());
    refused(
        &dir,
        &[
            "demo",
            "--frames",
            "10",
            "--golden-frame",
            "5",
            "--golden-path",
            "missing/g.png",
            "-o",
            "x.sgpt",
        ],
        "missing/g.png: cannot create the golden frame: missing does not exist",
    );
    assert!(!dir.path(".framewise").exists());
    assert!(!dir.path("x.sgpt").exists());
}

#[test]
fn demo_golden_frame_past_the_end_is_refused() {
    let dir = Dir::new();
    refused(
        &dir,
        &[
            "demo",
            "--frames",
            "60",
            "--golden-frame",
            "60",
            "-o",
            "g.sgpt",
        ],
        "golden frame 60 is past the last frame (59)",
    );
    assert!(!dir.path("g.sgpt").exists());
    assert!(!dir.path("g.frame-60.png").exists());
}

#[test]
fn demo_capture_to_a_device_is_refused_with_empty_stdout_and_the_device_kept() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Dir::new();
    let made = std::process::Command::new("mknod")
        .arg(dir.path("null"))
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipping: mknod needs root here");
        return;
    }
    // It used to record into the device, print the report's head, then fail to read the
    // capture back: exit 4 with lines on stdout.
    refused(
        &dir,
        &["demo", "--frames", "60", "-o", "null"],
        "null: not a regular file (a FIFO or a device); the demo reads its capture back",
    );
    let kind = std::fs::symlink_metadata(dir.path("null"))
        .unwrap()
        .file_type();
    assert!(kind.is_char_device(), "the device was replaced");
    // The golden PNG is written through to a device, which stays one.
    dir.run(&[
        "demo",
        "--frames",
        "60",
        "--golden-frame",
        "30",
        "--golden-path",
        "null",
        "-o",
        "g.sgpt",
    ])
    .expect(0);
    let kind = std::fs::symlink_metadata(dir.path("null"))
        .unwrap()
        .file_type();
    assert!(kind.is_char_device(), "the device was replaced");
}

#[test]
fn the_slow_variant_is_caught_by_the_gate() {
    let dir = Dir::new();
    let common = ["--frames", "150", "--quiet", "--fixed-dt", "0.016"];
    let mut base = vec!["demo", "-o", "base.sgpt"];
    base.extend(common);
    dir.run(&base).expect(0);
    let mut slow = vec!["demo", "-o", "slow.sgpt", "--variant", "slow"];
    slow.extend(common);
    dir.run(&slow).expect(0);
    let gate = dir
        .run(&[
            "gate",
            "base.sgpt",
            "slow.sgpt",
            "--tolerance",
            "counter.draw_calls.max=0",
            "--format",
            "json",
        ])
        .expect(1)
        .json();
    let failed: Vec<String> = gate["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["status"] == "regressed")
        .filter_map(|c| c["metric"].as_str().map(str::to_owned))
        .collect();
    assert!(
        failed.iter().any(|m| m.starts_with("counter.draw_calls.")),
        "draw calls must be among the regressions: {failed:?}\n{gate}"
    );
}

/// Mesa's lavapipe ICD, when installed: the test points the Vulkan loader at it alone, so
/// the adapter (and so the truth grade) is the same on every machine that has it.
fn lavapipe_icd() -> Option<String> {
    let dir = std::fs::read_dir("/usr/share/vulkan/icd.d").ok()?;
    dir.filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("lvp_icd"))
        })
        .map(|path| path.display().to_string())
}

#[test]
fn the_gpu_demo_records_a_software_gpu_track_in_the_frame_graph() {
    let dir = Dir::new();
    let icd = lavapipe_icd();
    let env: Vec<(&str, &str)> = icd
        .as_deref()
        .map(|icd| vec![("VK_DRIVER_FILES", icd), ("VK_ICD_FILENAMES", icd)])
        .unwrap_or_default();
    let run = dir.run_env(
        &[
            "demo",
            "--gpu",
            "--frames",
            "150",
            "--quiet",
            "--fixed-dt",
            "0.016",
            "-o",
            "gpu.sgpt",
        ],
        &env,
    );
    if !cfg!(feature = "gpu") {
        // No GPU support compiled in: refused, saying how to build it (the GPU run itself is
        // tested with `--features gpu`, as scripts/check builds the tests).
        let run = run.expect(4);
        assert!(
            run.stderr.contains("compiled without the `gpu` feature"),
            "{}",
            run.stderr
        );
        return;
    }
    if run.code == 4 && run.stderr.contains("no GPU to time") {
        assert!(
            !framewise_wgpu::adapter_required(),
            "FRAMEWISE_REQUIRE_GPU or CI is set and there is no GPU adapter; \
             scripts/install-test-deps installs Mesa's lavapipe (mesa-vulkan-drivers, \
             libvulkan1):\n{}",
            run.stderr
        );
        eprintln!(
            "skipping: {} (install mesa-vulkan-drivers and libvulkan1 for lavapipe, or set \
             FRAMEWISE_REQUIRE_GPU=1 to make this a failure)",
            run.stderr.trim()
        );
        return;
    }
    let run = run.expect(0);
    assert!(
        run.stdout.contains("GPU track: 150 frames of wgpu passes"),
        "{}",
        run.stdout
    );

    // Every frame has its GPU passes, timed, and they are nodes of the frame graph beside
    // the CPU renderer's own passes.
    let capture = framewise_format::read::open(dir.path("gpu.sgpt")).expect("the capture opens");
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    let name = |id| capture.symbols().name(id).unwrap_or("?").to_owned();
    let meta = capture.meta().expect("META");
    let [graph] = capture.topologies() else {
        panic!("one topology expected, got {}", capture.topologies().len());
    };
    let nodes: Vec<String> = graph.passes.iter().map(|p| name(p.label)).collect();
    for pass in framewise_demo::PASSES
        .iter()
        .copied()
        .chain(["particles.update", "particles.draw"])
    {
        assert!(nodes.iter().any(|n| n == pass), "{pass} not in {nodes:?}");
    }
    let mut frames = 0;
    for frame in capture.frames() {
        let frame = frame.expect("every frame decodes");
        frames += 1;
        assert_eq!(frame.topology, Some(graph.id));
        assert!(
            frame.gpu.expected && !frame.gpu.results_missing,
            "frame {}",
            frame.index
        );
        let timed: Vec<String> = frame
            .gpu
            .passes
            .iter()
            .filter(|p| p.timing.is_some() && nodes.contains(&name(p.pass)))
            .map(|p| name(p.pass))
            .collect();
        assert_eq!(
            timed,
            ["particles.update", "particles.draw"],
            "frame {}",
            frame.index
        );
    }
    assert_eq!(frames, 150);

    // The adapter's type is in META and decides the truth grade.
    let summary = dir
        .run(&["summarize", "gpu.sgpt", "--format", "json"])
        .expect(0)
        .json();
    let adapter_type = match meta.adapter.as_ref().map(|a| a.adapter_type) {
        Some(framewise_format::model::AdapterType::Software) => "software",
        Some(framewise_format::model::AdapterType::Hardware) => "hardware",
        other => panic!("META declares no adapter type: {other:?}"),
    };
    if icd.is_some() || framewise_wgpu::adapter_required() {
        assert_eq!(adapter_type, "software", "lavapipe is a software adapter");
    }
    assert_eq!(
        summary["grade"]["timing"], adapter_type,
        "{}",
        summary["grade"]
    );
    for pass in ["particles.update", "particles.draw"] {
        assert_eq!(
            summary["passes"][pass]["count"], 150,
            "{pass}: {}",
            summary["passes"]
        );
    }
}

#[test]
fn the_settings_file_is_the_games_and_is_read_strictly() {
    let dir = Dir::new();
    let meta_of = |capture: &str| {
        let read = framewise_format::read::open(dir.path(capture)).expect("the capture");
        let meta = read.meta().expect("META");
        let get = |key: &str| {
            meta.settings
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        (get("variant"), get("shadows"), get("snap_bug"))
    };
    // What the file says is what runs: the slow variant, no shadow pass, the snap bug.
    dir.write(
        "game.toml",
        "# the game's settings\nvariant = \"slow\"\nshadows = false\nsnap_bug = true\n",
    );
    dir.run(&[
        "demo",
        "-o",
        "a.sgpt",
        "--frames",
        "8",
        "--settings",
        "game.toml",
    ])
    .expect(0);
    assert_eq!(
        meta_of("a.sgpt"),
        (
            Some("slow".into()),
            Some("false".into()),
            Some("true".into())
        )
    );
    // Without the file: the defaults.
    dir.run(&["demo", "-o", "b.sgpt", "--frames", "8"])
        .expect(0);
    assert_eq!(
        meta_of("b.sgpt"),
        (
            Some("normal".into()),
            Some("true".into()),
            Some("false".into())
        )
    );
    // A key the command line also sets is refused, not silently overridden; so are an
    // unknown key, a bad value and a path that is not a file. One line each, exit 4.
    let refused = |args: &[&str], needle: &str| {
        let mut all = vec!["demo", "--frames", "8", "--no-record"];
        all.extend_from_slice(args);
        let run = dir.run(&all).expect(4);
        let line = run.one_error_line();
        assert!(line.contains(needle), "{args:?}: {line}");
        assert!(run.stdout.is_empty());
    };
    refused(
        &["--settings", "game.toml", "--variant", "normal"],
        "--variant and `variant`",
    );
    refused(
        &["--settings", "game.toml", "--no-shadows"],
        "--no-shadows and `shadows`",
    );
    dir.write("typo.toml", "variant = \"slow\"\nshadow = false\n");
    refused(
        &["--settings", "typo.toml"],
        "typo.toml: line 2: unknown field `shadow`",
    );
    dir.write("bad.toml", "\nvariant = \"fast\"\n");
    refused(
        &["--settings", "bad.toml"],
        "bad.toml: line 2: variant = \"fast\"",
    );
    refused(&["--settings", "."], "not a regular file");
    refused(&["--settings", "missing.toml"], "missing.toml");

    // Cut anywhere, the file runs only where the cut leaves whole lines (a last line without
    // its newline is whole); elsewhere it is one line naming it: never a panic, never a
    // setting half read.
    let whole = "variant = \"slow\"\nshadows = false\nsnap_bug = true\n";
    for cut in 0..whole.len() {
        dir.write("cut.toml", &whole[..cut]);
        let run = dir.run(&[
            "demo",
            "--frames",
            "8",
            "--no-record",
            "--settings",
            "cut.toml",
        ]);
        let ends_a_line = cut == 0 || whole.as_bytes()[cut - 1] == b'\n';
        match run.code {
            0 => assert!(
                ends_a_line || whole[cut..].starts_with('\n'),
                "cut at {cut} ran: {:?}",
                &whole[..cut]
            ),
            4 => assert!(
                run.one_error_line().contains("cut.toml"),
                "cut at {cut}: {}",
                run.stderr
            ),
            code => panic!("cut at {cut}: exit {code}: {}", run.stderr),
        }
    }
}

/// `FRAMEWISE_CAPTURE` went straight to the game, past every check `-o` gets: it replaced
/// the incident log (exit 0), waited forever on a FIFO, ran the whole game into
/// `/dev/null`, and refused a directory or a missing parent only after `.framewise/` was
/// scaffolded (several stderr lines on exit 4).
#[test]
fn framewise_capture_gets_every_check_o_gets_before_anything_runs() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path(".framewise")).expect("dir");
    dir.write(".framewise/perf.jsonl", b"{}\n");
    std::os::unix::fs::symlink(".framewise/perf.jsonl", dir.path("link.sgpt")).expect("link");
    std::fs::create_dir(dir.path("d")).expect("dir");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path("f"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo");
    for (capture, reason) in [
        (
            ".framewise/perf.jsonl",
            "FRAMEWISE_CAPTURE .framewise/perf.jsonl is the append-only perf.jsonl",
        ),
        (
            "link.sgpt",
            "FRAMEWISE_CAPTURE link.sgpt is the append-only perf.jsonl",
        ),
        (
            "f",
            "FRAMEWISE_CAPTURE=f: not a regular file (a FIFO or a device); the demo reads its capture back",
        ),
        (
            "/dev/null",
            "FRAMEWISE_CAPTURE=/dev/null: not a regular file (a FIFO or a device)",
        ),
        ("d", "FRAMEWISE_CAPTURE: d: is a directory"),
        (
            "missing/x.sgpt",
            "FRAMEWISE_CAPTURE=missing/x.sgpt: cannot create the capture: missing does not exist",
        ),
    ] {
        let run = dir
            .run_env(
                &["demo", "--frames", "60", "-o", "o.sgpt"],
                &[("FRAMEWISE_CAPTURE", capture)],
            )
            .expect(4);
        let line = run.one_error_line();
        assert!(line.contains(reason), "{capture}: {line}");
        assert!(run.stdout.is_empty(), "{capture}: {}", run.stdout);
    }
    assert_eq!(
        std::fs::read(dir.path(".framewise/perf.jsonl")).expect("kept"),
        b"{}\n"
    );
    // Nothing scaffolded, nothing recorded, the FIFO still one.
    let entries: Vec<String> = std::fs::read_dir(dir.path(".framewise"))
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["perf.jsonl"]);
    assert!(!dir.path("o.sgpt").exists() && !dir.path("missing").exists());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(dir.path("f"))
        .expect("fifo")
        .file_type()
        .is_fifo());
    // `--no-record` with the variable set: a usage conflict, not a recording.
    let run = dir
        .run_env(
            &["demo", "--frames", "8", "--no-record"],
            &[("FRAMEWISE_CAPTURE", "e.sgpt")],
        )
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: --no-record conflicts with FRAMEWISE_CAPTURE=e.sgpt, which asks for a \
         recording: unset the variable or drop --no-record"
    );
    assert!(!dir.path("e.sgpt").exists());
}

/// `-o .framewise/profile.json` was recorded, then replaced by the recorder's rolling
/// summary: exit 4 with "chrome trace: expected an array of events".
#[test]
fn the_incident_logs_files_are_refused_as_a_capture_before_running() {
    let dir = Dir::new();
    let refusal = "it is the incident log's profile.json, the rolling summary the recorder \
                   rewrites while it records: the capture would be lost; name another file";
    let run = dir
        .run(&["demo", "--frames", "8", "-o", ".framewise/profile.json"])
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        format!("framewise: error: .framewise/profile.json: {refusal}")
    );
    let run = dir
        .run_env(
            &["demo", "--frames", "8"],
            &[("FRAMEWISE_CAPTURE", "./.framewise/profile.json")],
        )
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        format!("framewise: error: FRAMEWISE_CAPTURE=./.framewise/profile.json: {refusal}")
    );
    assert!(!dir.path(".framewise").exists());
    // The log directory FRAMEWISE_DIR names, whatever its name, and its other logs.
    for capture in ["logs/profile.json", "logs/perf.jsonl", "logs/fixes.jsonl"] {
        let run = dir
            .run_env(
                &["demo", "--frames", "8", "-o", capture],
                &[("FRAMEWISE_DIR", "logs")],
            )
            .expect(4);
        assert!(
            run.one_error_line().starts_with(&format!(
                "framewise: error: {capture}: it is the incident log's"
            )),
            "{}",
            run.stderr
        );
    }
    assert!(!dir.path("logs").exists());
}

/// A capture's META and its frame count.
fn recorded(dir: &Dir, capture: &str) -> (framewise_format::model::Meta, usize) {
    let read = framewise_format::read::open(dir.path(capture)).expect("the capture opens");
    (read.meta().expect("META").clone(), read.frame_count())
}

/// A META setting's value (the last of its key).
fn setting(meta: &framewise_format::model::Meta, key: &str) -> Option<String> {
    meta.settings
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
}

/// `FRAMEWISE_LEVEL`, `FRAMEWISE_FRAMES`, `FRAMEWISE_WRITER` and `FRAMEWISE_NOTE` were
/// ignored unless `FRAMEWISE_CAPTURE` was set too (60 frames at workload, an empty note),
/// while the fixed step and the golden frame of a flag won over their variables.
#[test]
fn every_recorder_variable_is_honoured_without_framewise_capture_and_wins_over_its_flag() {
    let dir = Dir::new();
    let run = dir
        .run_env(
            &[
                "demo",
                "--frames",
                "60",
                "--level",
                "verbose",
                "--fixed-dt",
                "0.01",
                "--golden-frame",
                "3",
                "--quiet",
                "-o",
                "c.sgpt",
            ],
            &[
                ("FRAMEWISE_LEVEL", "timing"),
                ("FRAMEWISE_FRAMES", "30"),
                ("FRAMEWISE_NOTE", "from the harness"),
                ("FRAMEWISE_WRITER", "realtime"),
                ("FRAMEWISE_FIXED_DT", "0.02"),
                ("FRAMEWISE_GOLDEN_FRAME", "5"),
            ],
        )
        .expect(0);
    let (meta, frames) = recorded(&dir, "c.sgpt");
    assert_eq!(frames, 30);
    assert_eq!(meta.capture_level, 0, "timing");
    assert_eq!(meta.note, "from the harness");
    assert_eq!(setting(&meta, "writer_mode").as_deref(), Some("realtime"));
    assert_eq!(setting(&meta, "fixed_dt_s").as_deref(), Some("0.02"));
    assert!(dir.path("c.frame-5.png").exists(), "{}", run.stderr);
    assert!(!dir.path("c.frame-3.png").exists());
    assert!(run.stdout.contains("recorded 30 frames"), "{}", run.stdout);
    // Each disagreement said once, on one line, naming both.
    for note in [
        "framewise demo: FRAMEWISE_FRAMES=30 wins over --frames 60",
        "framewise demo: FRAMEWISE_LEVEL=timing wins over --level verbose",
        "framewise demo: FRAMEWISE_FIXED_DT=0.02 wins over --fixed-dt 0.01",
        "framewise demo: FRAMEWISE_GOLDEN_FRAME=5 wins over --golden-frame 3",
    ] {
        assert_eq!(
            run.stderr.lines().filter(|l| l.starts_with(note)).count(),
            1,
            "{note}:\n{}",
            run.stderr
        );
    }
    // A variable that agrees with its flag, or a flag left at its default, says nothing.
    let run = dir
        .run_env(
            &["demo", "--frames", "20", "--quiet", "-o", "d.sgpt"],
            &[("FRAMEWISE_FRAMES", "20"), ("FRAMEWISE_SEED", "7")],
        )
        .expect(0);
    assert!(!run.stderr.contains("wins over"), "{}", run.stderr);
    let (meta, frames) = recorded(&dir, "d.sgpt");
    assert_eq!((frames, setting(&meta, "seed").as_deref()), (20, Some("7")));
    // With no recording, the run's length is still the variable's.
    let run = dir
        .run_env(
            &["demo", "--no-record", "--quiet"],
            &[("FRAMEWISE_FRAMES", "12")],
        )
        .expect(0);
    assert!(run.stdout.starts_with("ran 12 frames"), "{}", run.stdout);
}

/// The demo wrote `./.framewise/` whatever `FRAMEWISE_DIR` said, while the recorder,
/// `doctor` and `history` follow it.
#[test]
fn the_demo_follows_framewise_dir() {
    let dir = Dir::new();
    let run = dir
        .run_env(
            &["demo", "--frames", "20", "--quiet", "-o", "x.sgpt"],
            &[("FRAMEWISE_DIR", "game-logs")],
        )
        .expect(0);
    assert!(dir.path("game-logs/perf.jsonl").is_file(), "{}", run.stderr);
    assert!(dir.path("game-logs/profile.json").is_file());
    assert!(!dir.path(".framewise").exists());
    assert_eq!(
        run.stderr.lines().collect::<Vec<_>>(),
        [
            "framewise demo: created game-logs/ (.gitignore, framewise.toml, agent-guide.md) for the incident log",
            "framewise demo: incident log → game-logs/perf.jsonl"
        ]
    );
    // A directory that exists is taken as it is, as the recorder takes it (a harness's own).
    std::fs::create_dir(dir.path("harness")).expect("dir");
    let run = dir
        .run_env(
            &["demo", "--frames", "20", "--quiet", "-o", "h.sgpt"],
            &[("FRAMEWISE_DIR", "harness")],
        )
        .expect(0);
    assert_eq!(
        run.stderr.lines().collect::<Vec<_>>(),
        ["framewise demo: incident log → harness/perf.jsonl"]
    );
    assert!(dir.path("harness/perf.jsonl").is_file());
    assert!(!dir.path("harness/.gitignore").exists());
    // A directory that cannot be one: refused before the game runs, on one line.
    let run = dir
        .run_env(
            &["demo", "--frames", "20", "-o", "y.sgpt"],
            &[("FRAMEWISE_DIR", "x.sgpt")],
        )
        .expect(4);
    assert!(
        run.one_error_line().contains(
            "the incident log's directory (FRAMEWISE_DIR) cannot be used: x.sgpt: exists and is not a directory"
        ),
        "{}",
        run.stderr
    );
    assert!(!dir.path("y.sgpt").exists());
}

/// `FRAMEWISE_FIXED_DT` took steps up to an hour (a capture recorded `fixed_dt_s=100`)
/// where `--fixed-dt` and a bench's `fixed_dt` take (0, 1); a misspelt variable changed
/// nothing without a word.
#[test]
fn a_fixed_step_past_a_second_is_refused_and_a_misspelt_variable_named() {
    let dir = Dir::new();
    let run = dir
        .run_env(
            &["demo", "--frames", "8", "-o", "x.sgpt"],
            &[("FRAMEWISE_FIXED_DT", "100")],
        )
        .expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: cannot start recording: environment variable FRAMEWISE_FIXED_DT=\"100\": \
         expected a step in seconds from 1 ns to under 1 s, e.g. 0.016666 (as demo --fixed-dt and \
         a bench's fixed_dt)"
    );
    assert!(!dir.path(".framewise").exists());
    let run = dir
        .run_env(
            &["demo", "--frames", "8", "--quiet", "-o", "x.sgpt"],
            &[("FRAMEWISE_FRAMS", "30")],
        )
        .expect(0);
    assert_eq!(
        run.stderr
            .lines()
            .filter(|l| l.contains("FRAMEWISE_FRAMS"))
            .collect::<Vec<_>>(),
        ["framewise: warning: FRAMEWISE_FRAMS is no variable framewise reads (did you mean FRAMEWISE_FRAMES?)"]
    );
}
