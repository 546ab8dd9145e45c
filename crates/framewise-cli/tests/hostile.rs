//! Hostile input to the verbs that give verdicts: absurd flag values, damaged evidence,
//! outputs nobody should name. Each must be a one-line error with the documented exit code,
//! or a verdict the evidence supports — never a pass that could not have failed.

use crate::support::{write_game, Dir, Game};

#[test]
fn a_gate_tolerance_that_could_never_fail_is_a_usage_error() {
    let dir = Dir::new();
    write_game(&dir.path("base.sgpt"), &Game::default());
    write_game(&dir.path("cand.sgpt"), &Game::regressed());
    for (arg, says) in [
        ("frame.avg=1e308", "at most 10 (11 times worse), got 1e308:"),
        ("frame.avg=inf", "finite"),
        ("frame.avg=NaN", "finite"),
        ("frame.avg=-1", ">= 0"),
        ("frame.fps=1", "below 1"),
    ] {
        let run = dir
            .run(&["gate", "base.sgpt", "cand.sgpt", "--tolerance", arg])
            .expect(4);
        let line = run.one_error_line();
        assert!(line.contains(says), "{arg}: {line}");
        assert!(run.stdout.is_empty(), "{arg}: {}", run.stdout);
    }
    // The same bound in framewise.toml, with its line.
    dir.write(
        "framewise.toml",
        "[gate.tolerances]\n\"frame.p99\" = 0.1\n\"frame.avg\" = 1e308\n",
    );
    let run = dir
        .run(&[
            "gate",
            "base.sgpt",
            "cand.sgpt",
            "--config",
            "framewise.toml",
        ])
        .expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains("framewise.toml") && line.contains("line 3") && line.contains("at most 10"),
        "{line}"
    );
    // The largest allowed still judges: the regressed candidate fails at 0.
    dir.run(&[
        "gate",
        "base.sgpt",
        "cand.sgpt",
        "--tolerance",
        "frame.avg=0",
    ])
    .expect(1);
}

#[test]
fn a_short_capture_neither_regresses_nor_vouches_for_a_p99() {
    let dir = Dir::new();
    write_game(&dir.path("long.sgpt"), &Game::default());
    let short = Game {
        frames: 40,
        long_frames: vec![],
        ..Game::default()
    };
    write_game(&dir.path("short.sgpt"), &short);
    for (base, cand, side) in [
        (
            "long.sgpt",
            "short.sgpt",
            "the candidate has too few values",
        ),
        ("short.sgpt", "long.sgpt", "the base has too few values"),
        (
            "short.sgpt",
            "short.sgpt",
            "neither capture has enough values",
        ),
    ] {
        let run = dir.run(&["gate", base, cand, "--format", "json"]);
        let json = run.json();
        assert_ne!(json["verdict"], "pass", "{base} {cand}: {}", run.stdout);
        let reasons = json["reasons"].to_string();
        if json["verdict"] == "inconclusive" {
            assert!(reasons.contains(side), "{base} {cand}: {reasons}");
            run.expect(2);
        }
    }
}

#[test]
fn a_budget_limit_that_could_never_breach_is_refused_with_its_line() {
    let dir = Dir::new();
    for (budget, says) in [
        ("\"frame.fps\" = 0", "above 0"),
        ("\"frame.low_1pct_fps\" = -1", "above 0"),
        ("\"frame.p95\" = 1e308", "= 1e308: a time limit"),
        ("\"frame.p95\" = -5", "from 0 ms"),
        ("\"frame.jank_ratio\" = 1", "below 1"),
        ("\"scope.render.calls\" = -1", "count limit"),
        ("\"counter.draw_calls.max\" = 1e19", "2^63"),
    ] {
        dir.write(
            "framewise.toml",
            format!("[budgets]\nframe_ms = 16.67\n{budget}\n"),
        );
        let run = dir.run(&["check", "--config", "framewise.toml"]).expect(4);
        let line = run.one_error_line();
        assert!(
            line.contains("framewise.toml: line 3:") && line.contains(says),
            "{budget}: {line}"
        );
    }
    // Limits a run can meet or breach are read (then nothing is measured here: exit 4 too,
    // but for that reason).
    dir.write(
        "framewise.toml",
        "[budgets]\n\"frame.fps\" = 30\n\"frame.jank_ratio\" = 0.05\n\"counter.draw_calls.max\" = 0\n\"counter.camera.min\" = -400\n",
    );
    let run = dir.run(&["check", "--config", "framewise.toml"]).expect(4);
    assert!(
        run.one_error_line().contains("nothing measured"),
        "{}",
        run.stderr
    );
}

#[test]
fn no_hitch_in_a_capture_that_lost_frames_is_inconclusive() {
    let dir = Dir::new();
    write_game(&dir.path("steady.sgpt"), &Game::steady());
    dir.run(&["hitches", "steady.sgpt"]).expect(0);
    crate::support::write_truncated_game(&dir.path("cut.sgpt"), &Game::steady(), 0.6);
    let run = dir.run(&["hitches", "cut.sgpt"]).expect(2);
    assert!(
        run.stdout
            .contains("inconclusive: no hitches in the frames read")
            && run.stdout.contains("truncated"),
        "{}",
        run.stdout
    );
    let json = dir
        .run(&["hitches", "cut.sgpt", "--format", "json"])
        .expect(2)
        .json();
    assert_eq!(json["hitches"].as_array().map(Vec::len), Some(0));
    assert!(
        json["defects"].to_string().contains("truncated-tail"),
        "{json}"
    );
    // A hitch found in what was read is still a hitch: the lost frames cannot undo it.
    crate::support::write_truncated_game(&dir.path("cut_hitchy.sgpt"), &Game::default(), 0.9);
    dir.run(&["hitches", "cut_hitchy.sgpt"]).expect(1);
}

#[test]
fn a_misspelt_bench_is_an_error_even_with_no_budget_to_check() {
    let dir = Dir::new();
    dir.write("framewise.toml", "[bench.smoke]\ncommand = [\"x\"]\n");
    let run = dir.run(&["check", "--bench", "smok"]).expect(4);
    assert!(
        run.one_error_line().contains("did you mean smoke?"),
        "{}",
        run.stderr
    );
    // The right name with nothing to judge: inconclusive, not a pass.
    dir.run(&["check", "--bench", "smoke"]).expect(2);
}

#[test]
fn a_huge_demo_frame_count_plays_rather_than_aborting() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = Dir::new();
    // It asked for 45 TB of per-frame tallies up front and aborted (SIGABRT, exit 134).
    let mut child = Command::new(env!("CARGO_BIN_EXE_framewise"))
        .args([
            "demo",
            "--frames",
            "99999999999",
            "-o",
            "huge.sgpt",
            "--quiet",
        ])
        .current_dir(dir.tmp.path())
        .env_remove("FRAMEWISE_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Frames reach the file once the game loop runs; the allocation came before it.
    let capture = dir.path("huge.sgpt");
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut grew = false;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the demo ended on its own before playing: {status}");
        }
        let len = std::fs::metadata(&capture).map_or(0, |m| m.len());
        if len > 64 * 1024 {
            grew = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let still_running = child.try_wait().unwrap().is_none();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(grew && still_running, "the demo plays its frames");
}

#[test]
fn a_trace_and_its_report_on_one_path_is_refused_as_such() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let run = dir
        .run(&[
            "trace",
            "game.sgpt",
            "-o",
            "same.json",
            "--json",
            "same.json",
        ])
        .expect(4);
    assert!(
        run.one_error_line().contains("--json same.json is also -o"),
        "{}",
        run.stderr
    );
    assert!(!dir.path("same.json").exists());
}
