//! `framewise demo`, the main job, end to end: the game runs and records, the capture is
//! explained, every injected hitch is found and classified by its true cause, and the slow
//! variant's draw-call regression is caught by `framewise gate` with exit 1.

use crate::support::Dir;
use framewise_demo::Schedule;

const FRAMES: &str = "300";

#[test]
fn the_demo_records_explains_and_names_each_hitch_by_its_cause() {
    let dir = Dir::new();
    let run = dir
        .run(&["demo", "--frames", FRAMES, "-o", "demo.sgpt"])
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
    assert!(
        run.stdout.contains("framewise attribute demo.sgpt --frame"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.is_empty(),
        "stderr is for progress on a terminal only: {}",
        run.stderr
    );

    let hitches = dir
        .run(&["hitches", "demo.sgpt", "--format", "json"])
        .expect(1)
        .json();
    let list = hitches["hitches"].as_array().expect("hitches array");
    for (frame, cause) in Schedule::for_frames(FRAMES.parse().expect("frames")).hitches() {
        let hitch = list
            .iter()
            .find(|h| h["frame"] == frame)
            .unwrap_or_else(|| panic!("injected {} at frame {frame} not detected", cause.name()));
        let best = &hitch["classification"][0];
        assert_eq!(
            best["guess"],
            cause.expected_kind(),
            "frame {frame} ({}): best guess {best}",
            cause.name()
        );
        assert!(
            !best["evidence"].as_str().unwrap_or("").is_empty(),
            "evidence is mandatory"
        );
    }
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
        .run(&["gate", "base.sgpt", "slow.sgpt", "--format", "json"])
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
