//! `framewise hitches CAPTURE --append`: the live log's records derived from a capture and
//! appended to `.framewise/perf.jsonl` once.

use framewise_incidents::{read_all, Record};

use crate::support::{chrome_trace, write_game, write_truncated_game, Dir, Game};

/// The records of a log, as written.
fn records(dir: &Dir, log: &str) -> Vec<Record> {
    let read = read_all(&dir.path(log)).expect("the log reads");
    assert_eq!((read.malformed, read.torn_last_line), (0, false));
    read.records
}

fn lines(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .map(|r| serde_json::to_string(r).expect("json"))
        .collect()
}

#[test]
fn the_live_log_and_append_agree_on_the_demo_capture_and_twice_adds_nothing() {
    let dir = Dir::new();
    dir.run(&[
        "demo",
        "--frames",
        "300",
        "--snap-bug",
        "--usermark-at",
        "200",
        // Positions follow a fixed step (the motion clock), so a loaded machine's long
        // frames do not move the jumps.
        "--fixed-dt",
        "0.0166667",
        "-o",
        "demo.sgpt",
    ])
    .expect(0);
    let live = records(&dir, ".framewise/perf.jsonl");
    assert!(
        live.iter().any(|r| matches!(r, Record::Hitch(_))),
        "{live:#?}"
    );
    // The demo records its motion tracks as counters; they say where things are, not what a
    // frame cost, so no hitch delta or heartbeat median carries them.
    for record in &live {
        let counters: Vec<&String> = match record {
            Record::Hitch(h) => h.delta.keys().collect(),
            Record::Heartbeat(b) => b.counters.keys().collect(),
            _ => continue,
        };
        assert!(
            counters.iter().all(|name| !name.starts_with("motion.")),
            "{record:#?}"
        );
    }

    // The snap-back bug, found while the game ran: the unit snaps, explained as a snap and
    // keyed on the horizontal axis, and the camera that follows it jumps in the same frames
    // as its passenger.
    let jitter: Vec<_> = live
        .iter()
        .filter_map(|r| match r {
            Record::Jitter(j) => Some(j),
            _ => None,
        })
        .collect();
    let unit: Vec<_> = jitter.iter().filter(|j| j.track == "unit").collect();
    assert!(!unit.is_empty(), "{live:#?}");
    for j in &unit {
        assert_eq!(j.kind, "snap", "{j:#?}");
        // The demo measures in metres, and says so.
        assert_eq!(j.unit.as_deref(), Some("m"), "{j:#?}");
        assert_eq!(j.classification[0].guess, "snap", "{j:#?}");
        assert_eq!(
            j.footprint.key,
            "jitter|unit|snap|play|snap|horizontal|ctx:squad=solo,view=top"
        );
    }
    let camera: Vec<_> = jitter.iter().filter(|j| j.track == "camera").collect();
    assert!(!camera.is_empty(), "{live:#?}");
    for j in &camera {
        assert_eq!(j.classification[0].guess, "follows-track", "{j:#?}");
        assert_eq!(j.coincident, ["unit"]);
        assert!(unit.iter().any(|u| u.frame == j.frame), "{j:#?}");
    }
    // The demo's world object: the usermark's frame has the hotkey held, and every record
    // of play has the unit walking and the camera's pose.
    let mark = live
        .iter()
        .find_map(|r| match r {
            Record::Usermark(m) => Some(m),
            _ => None,
        })
        .expect("a usermark");
    let world = mark.common.world.as_ref().expect("the mark's world");
    assert_eq!(world.inputs_held, ["move", "usermark"], "{world:?}");
    for j in &jitter {
        let world = j.common.world.as_ref().expect("the jump frame's world");
        assert_eq!(world.inputs_held, ["move"], "{world:?}");
        let camera = world.camera.as_ref().expect("a camera");
        assert_eq!(camera.position[1], 62.0);
        assert!(camera.quaternion.is_some());
    }
    // `watch` wakes on the jumps and prints their size in the host's unit.
    let run = dir.run(&["watch", "--once", "--from-start"]).expect(0);
    let jumps: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("jitter unit snap "))
        .collect();
    assert!(!jumps.is_empty(), "{}", run.stdout);
    for line in jumps {
        let size = line.split(' ').nth(3).expect("a size");
        assert!(size.ends_with('m'), "{line}");
        assert!(
            line.contains(&format!("{size} off its trajectory")),
            "{line}"
        );
    }
    let Some(Record::SessionEnd(end)) = live.last() else {
        panic!("session-end is last: {live:#?}");
    };
    assert_eq!(end.written.jitter, jitter.len() as u64);
    // Every drop a record carries is among the session's drops.
    let carried: u64 = jitter.iter().filter_map(|j| j.dropped_since_last).sum();
    assert!(
        end.dropped.jitter >= carried,
        "{} < {carried}",
        end.dropped.jitter
    );

    // Derived into a log of its own: the live log's records, line for line.
    std::fs::create_dir(dir.path("derived")).expect("mkdir");
    let run = dir
        .run(&["hitches", "demo.sgpt", "--append", "--dir", "derived"])
        .expect(1);
    assert!(
        run.stderr
            .contains("appending to derived/perf.jsonl (--dir)"),
        "{}",
        run.stderr
    );
    let derived = records(&dir, "derived/perf.jsonl");
    let (derived_lines, live_lines) = (lines(&derived), lines(&live));
    assert_eq!(
        derived_lines, live_lines,
        "same frames, kinds, guesses, explanations, footprints and times"
    );

    // Into the demo's own log (the nearest to the capture): nothing is new.
    let run = dir
        .run(&["hitches", "demo.sgpt", "--append", "--format", "json"])
        .expect(1);
    let append = &run.json()["append"];
    assert_eq!(append["chosen_by"], "nearest to the capture");
    assert_eq!(append["appended"], 0);
    assert_eq!(append["already"], live.len() as u64);
    assert_eq!(append["frames_read"], 300);
    let before = std::fs::read(dir.path("derived/perf.jsonl")).expect("read");
    let run = dir
        .run(&[
            "hitches",
            "demo.sgpt",
            "--append",
            "--dir",
            "derived",
            "--format",
            "json",
        ])
        .expect(1);
    assert_eq!(run.json()["append"]["appended"], 0);
    assert_eq!(
        std::fs::read(dir.path("derived/perf.jsonl")).expect("read again"),
        before,
        "appending the same capture twice adds nothing"
    );
}

#[test]
fn the_nearest_log_is_searched_from_the_directory_the_capture_is_really_in() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    // `proj/../game.sgpt` is in the directory above `proj`: `proj/.framewise` is not above it.
    std::fs::create_dir_all(dir.path("proj/.framewise")).expect("mkdir");
    // (A `.framewise/` above the test's temporary directory, if the machine has one, is
    // rightly found; `proj/.framewise` never is.)
    let run = dir.run(&["hitches", "proj/../game.sgpt", "--append"]);
    assert!(!run.stderr.contains("proj/.framewise"), "{}", run.stderr);
    assert!(!dir.path("proj/.framewise/perf.jsonl").exists());
    // Beside the capture, it is found, and named without `..`.
    std::fs::create_dir(dir.path(".framewise")).expect("mkdir");
    let run = dir
        .run(&["hitches", "proj/../game.sgpt", "--append"])
        .expect(1);
    assert!(
        run.stderr.contains("(nearest to the capture)") && !run.stderr.contains("/../.framewise"),
        "{}",
        run.stderr
    );
    assert!(dir.path(".framewise/perf.jsonl").exists());
}

#[test]
fn a_cut_capture_appends_what_it_can_read() {
    let dir = Dir::new();
    // Long frames at 100 and 200; the cut keeps the first one.
    write_truncated_game(&dir.path("cut.sgpt"), &Game::default(), 0.5);
    std::fs::create_dir(dir.path(".framewise")).expect("mkdir");
    let run = dir.run(&["hitches", "cut.sgpt", "--append"]).expect(1);
    assert!(
        run.stderr.contains("(nearest to the capture)"),
        "{}",
        run.stderr
    );
    let log = records(&dir, ".framewise/perf.jsonl");
    let hitch_frames: Vec<u64> = log
        .iter()
        .filter_map(|r| match r {
            Record::Hitch(h) => Some(h.frame),
            _ => None,
        })
        .collect();
    assert_eq!(hitch_frames, [100]);
    let Some(Record::SessionEnd(end)) = log.last() else {
        panic!("session-end is last: {log:#?}");
    };
    assert!(end.frames > 100 && end.frames < 300, "{}", end.frames);
    assert_eq!(
        end.common.session.as_deref(),
        Some("07070707070707070707070707070707")
    );
}

#[test]
fn append_refuses_what_it_cannot_do_with_exit_4() {
    let dir = Dir::new();
    dir.write("trace.json", chrome_trace(30));
    std::fs::create_dir(dir.path(".framewise")).expect("mkdir");
    let line = dir
        .run(&["hitches", "trace.json", "--append"])
        .expect(4)
        .one_error_line()
        .to_owned();
    assert!(line.contains(".sgpt captures only"), "{line}");
    let line = dir
        .run(&["hitches", "trace.json", "--append", "--dir", "nowhere"])
        .expect(4)
        .one_error_line()
        .to_owned();
    assert!(line.contains("nowhere: not a directory"), "{line}");
    let line = dir
        .run(&["hitches", "trace.json", "--dir", ".framewise"])
        .expect(4)
        .one_error_line()
        .to_owned();
    assert!(line.contains("--append"), "{line}");
    // Nothing was written by the refusals.
    assert!(!dir.path(".framewise/perf.jsonl").exists());
}

#[test]
fn issues_fold_a_captures_incidents_once_without_writing() {
    let dir = Dir::new();
    crate::support::write_game(&dir.path("game.sgpt"), &Game::default());
    std::fs::create_dir(dir.path(".framewise")).expect("mkdir");
    let folded = dir
        .run(&["issues", "--capture", "game.sgpt", "--format", "json"])
        .expect(0);
    assert!(
        folded
            .stderr
            .contains("folded 3 records derived from game.sgpt"),
        "two hitches and session-end: {}",
        folded.stderr
    );
    let doc = folded.json();
    assert_eq!(doc["incidents"], 2, "{doc}");
    assert!(
        !dir.path(".framewise/perf.jsonl").exists(),
        "nothing written"
    );

    // Once appended, the capture adds nothing more: the same catalogue, not twice the count.
    dir.run(&["hitches", "game.sgpt", "--append"]).expect(1);
    let again = dir
        .run(&["issues", "--capture", "game.sgpt", "--format", "json"])
        .expect(0);
    assert!(
        again.stderr.contains("folded 0 records"),
        "{}",
        again.stderr
    );
    let again = again.json();
    assert_eq!(again["incidents"], 2);
    let ids_counts = |doc: &serde_json::Value| -> Vec<(serde_json::Value, serde_json::Value)> {
        let issues = doc["issues"].as_array().expect("issues");
        issues
            .iter()
            .map(|i| (i["id"].clone(), i["count"].clone()))
            .collect()
    };
    assert_eq!(ids_counts(&again), ids_counts(&doc));
    assert_eq!(ids_counts(&doc).len(), 1, "{doc}");
}
