//! The `.framewise/` verbs: `init`, `issues`, `report`, `fix`, `history`, `watch`, over
//! ledgers written with framewise-incidents' appender.

use std::collections::BTreeMap;
use std::io::Write;

use framewise_incidents::{
    iso_from_unix_ms, Appender, Common, Confidence, Footprint, Guess, HeartbeatRecord, HitchRecord,
    Record, UsermarkRecord, Window, WorstFrame,
};
use serde_json::Value;

use crate::support::{write_game, Dir, Game};

/// 2026-12-01T00:00:00Z.
const DAY0_MS: i64 = 1_796_083_200_000;
const MINUTE_MS: i64 = 60_000;
const SESSION_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

pub(crate) const COMPILE: &str = "hitch|play|pipeline-compile|ctx:stance=foot";
const PHYSICS: &str = "hitch|play|long-cpu-scope|section:physics";

fn footprint(key: &str) -> Footprint {
    framewise_detect::footprint::footprint(1, key).into()
}

pub(crate) fn id(key: &str) -> String {
    footprint(key).id
}

fn common(minute: i64, build: &str) -> Common {
    Common {
        at: iso_from_unix_ms(DAY0_MS + minute * MINUTE_MS),
        build: Some(build.to_owned()),
        phase: Some("play".to_owned()),
        session: Some(SESSION_A.to_owned()),
        ..Common::default()
    }
}

fn guess(name: &str) -> Guess {
    Guess {
        guess: name.to_owned(),
        confidence: Confidence::High,
        evidence: format!("{name}: the evidence"),
        scope: None,
        site: None,
    }
}

fn hitch(minute: i64, build: &str, frame_ms: f64, key: &str) -> Record {
    Record::Hitch(HitchRecord {
        common: Common {
            ctx: key.contains("ctx:").then(|| "stance=foot".to_owned()),
            ..common(minute, build)
        },
        frame: u64::try_from(minute).expect("minute") * 100,
        frame_ms,
        median_ms: Some(16.6),
        threshold_ms: 33.2,
        work_ms: None,
        gpu_ms: None,
        delta: BTreeMap::new(),
        scopes: Vec::new(),
        classification: vec![guess(key.split('|').nth(2).unwrap_or("?"))],
        dropped_since_last: None,
        footprint: footprint(key),
    })
}

fn beat(minute: i64, build: &str, p95_ms: f64) -> Record {
    Record::Heartbeat(HeartbeatRecord {
        common: common(minute, build),
        frame: u64::try_from(minute).expect("minute") * 100,
        window: Window {
            frames: 600,
            median_ms: Some(16.6),
            p95_ms: Some(p95_ms),
            ..Window::default()
        },
        counters: BTreeMap::from([("draw_calls".to_owned(), 120)]),
        hitches: 0,
    })
}

/// `.framewise/perf.jsonl` with two builds: `a` (minutes 0–50: heartbeats at p95 30 ms,
/// three compile hitches and a physics hitch), `b` (minutes 120–170: p95 18 ms, a physics
/// hitch, and a robot's compile hitch).
pub(crate) fn ledger(dir: &Dir) -> std::path::PathBuf {
    let fw = dir.path(".framewise");
    std::fs::create_dir_all(&fw).expect("dir");
    let mut log = Appender::open(fw.join("perf.jsonl")).expect("open");
    let mut records = Vec::new();
    for m in (0..=50).step_by(10) {
        records.push(beat(m, "a", 30.0));
    }
    records.extend([
        hitch(5, "a", 120.0, COMPILE),
        hitch(15, "a", 150.0, COMPILE),
        hitch(25, "a", 90.0, COMPILE),
        hitch(26, "a", 45.0, PHYSICS),
    ]);
    for m in (120..=170).step_by(10) {
        records.push(beat(m, "b", 18.0));
    }
    records.push(hitch(150, "b", 40.0, PHYSICS));
    let mut robot = hitch(151, "b", 400.0, COMPILE);
    if let Record::Hitch(h) = &mut robot {
        h.common.automated = true;
    }
    records.push(robot);
    for r in &records {
        log.append(r).expect("append");
    }
    fw
}

/// Appends raw bytes (bad lines, a torn last line).
fn append_raw(path: &std::path::Path, bytes: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(bytes.as_bytes()).expect("write");
}

#[test]
fn init_scaffolds_once_and_keeps_what_exists() {
    let dir = Dir::new();
    let run = dir.run(&["init", "--format", "json"]).expect(0);
    let json = run.json();
    assert_eq!(json["schema"], "framewise.init/1");
    assert_eq!(json["created_dir"], true);
    assert_eq!(
        json["created"],
        serde_json::json!([".gitignore", "framewise.toml", "agent-guide.md"])
    );
    let toml = dir.path(".framewise/framewise.toml");
    assert!(std::fs::read_to_string(&toml)
        .expect("toml")
        .contains("frame_ms = 16.67"));
    let gitignore = std::fs::read_to_string(dir.path(".framewise/.gitignore")).expect("gitignore");
    for machine_local in ["bench/", "golden/", "goldens/", "mcp/", "profile.json"] {
        assert!(
            gitignore.lines().any(|l| l.trim() == machine_local),
            "{machine_local}: {gitignore}"
        );
    }
    assert!(!gitignore
        .lines()
        .any(|l| l.trim() == "perf.jsonl" || l.trim() == "fixes.jsonl"));

    std::fs::write(&toml, "[budgets]\nframe_ms = 8.33\n").expect("edit");
    std::fs::remove_file(dir.path(".framewise/agent-guide.md")).expect("remove");
    let run = dir.run(&["init"]).expect(0);
    assert!(
        run.stdout.contains("created .framewise/agent-guide.md"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("kept    .framewise/framewise.toml"),
        "{}",
        run.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&toml).expect("toml"),
        "[budgets]\nframe_ms = 8.33\n"
    );
    let run = dir.run(&["init"]).expect(0);
    assert!(
        run.stdout.contains("already set up: nothing to do"),
        "{}",
        run.stdout
    );

    let run = dir.run(&["init", "no-such-dir"]).expect(4);
    assert!(run.one_error_line().contains("not a directory"));
}

#[test]
fn issues_skip_an_absurd_frame_time_and_say_a_future_time_is_in_the_future() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    // 1e308 ms is no frame: the line is malformed, never a worst of `inf ms`.
    let absurd = serde_json::to_string(&hitch(40, "a", 1e308, COMPILE)).expect("json");
    // Ten years after the fixtures' day: a clock set wrong.
    let future =
        serde_json::to_string(&hitch(10 * 365 * 24 * 60, "b", 60.0, PHYSICS)).expect("json");
    append_raw(&fw.join("perf.jsonl"), &format!("{absurd}\n{future}\n"));
    let json = dir.run(&["issues", "--format", "json"]).expect(0).json();
    assert_eq!(json["ledger"]["malformed"], 1);
    let compile = json["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .find(|i| i["id"] == id(COMPILE).as_str())
        .expect("the compile issue");
    assert_eq!(
        compile["worst"],
        serde_json::json!({"value": 150.0, "unit": "ms"})
    );
    let run = dir.run(&["issues"]).expect(0);
    assert!(!run.stdout.contains("inf"), "{}", run.stdout);
    assert!(
        run.stdout.contains("skipped in perf.jsonl: 1 malformed"),
        "{}",
        run.stdout
    );
    let physics = run
        .stdout
        .lines()
        .find(|l| l.contains(&id(PHYSICS)))
        .expect("the physics row");
    assert!(physics.contains("in the future"), "{physics}");
}

#[test]
fn issues_fold_the_ledger_by_footprint() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    append_raw(
        &fw.join("perf.jsonl"),
        "not json\n{\"type\":\"future\"}\n{\"type\":\"hitch\",\"at\":",
    );
    let json = dir.run(&["issues", "--format", "json"]).expect(0).json();
    assert_eq!(json["schema"], "framewise.issues/1");
    assert_eq!(json["incidents"], 5);
    assert_eq!(json["automated_left_out"], 1);
    assert_eq!(json["ledger"]["malformed"], 1);
    assert_eq!(json["ledger"]["unknown_type"], 1);
    assert_eq!(json["ledger"]["torn_last_line"], true);
    let issues = json["issues"].as_array().expect("issues");
    assert_eq!(issues.len(), 2);
    let compile = &issues[0];
    assert_eq!(compile["id"], id(COMPILE).as_str());
    assert_eq!(compile["count"], 3);
    assert_eq!(compile["type"], "hitch");
    assert_eq!(compile["label"], "hitch · pipeline-compile");
    assert_eq!(
        compile["situation"],
        serde_json::json!([["stance", "foot"]])
    );
    assert_eq!(
        compile["worst"],
        serde_json::json!({"value": 150.0, "unit": "ms"})
    );
    assert_eq!(compile["builds"], serde_json::json!(["a"]));
    assert_eq!(compile["last_guess"]["guess"], "pipeline-compile");
    assert!(compile.get("occurrences").is_none());
    let physics = &issues[1];
    assert_eq!(physics["count"], 2);
    assert_eq!(physics["builds"], serde_json::json!(["a", "b"]));

    let all = dir
        .run(&["issues", "--include-automated", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(all["automated_left_out"], 0);
    assert_eq!(all["issues"][0]["count"], 4);

    let run = dir.run(&["issues"]).expect(0);
    assert!(
        run.stdout
            .contains("2 issues from 5 incidents (1 automated left out"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("skipped in perf.jsonl: 1 malformed, 1 of unknown type, a torn last line"),
        "{}",
        run.stdout
    );
    assert!(run
        .stdout
        .contains(&format!("next: framewise issues --fp {}", id(COMPILE))));

    let one = dir
        .run(&[
            "issues",
            "--fp",
            &id(PHYSICS).to_uppercase(),
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    let occ = one["issues"][0]["occurrences"]
        .as_array()
        .expect("occurrences");
    assert_eq!(occ.len(), 2);
    assert_eq!(occ[1]["frame"], 15000);
    assert_eq!(occ[1]["session"], SESSION_A);
    let run = dir.run(&["issues", "--fp", &id(PHYSICS)]).expect(0);
    assert!(run.stdout.contains("occurrences (2)"), "{}", run.stdout);

    let run = dir.run(&["issues", "--fp", "00000000"]).expect(4);
    assert!(run
        .one_error_line()
        .contains("no incident with footprint 00000000"));
    let run = dir.run(&["issues", "--fp", "xyz"]).expect(4);
    assert!(run.one_error_line().contains("not a footprint id"));

    let report = dir.run(&["report", "--format", "json"]).expect(0).json();
    assert_eq!(report["total_issues"], 2);
    assert_eq!(report["issues"].as_array().map(Vec::len), Some(2));
}

#[test]
fn no_framewise_directory_is_exit_4() {
    let dir = Dir::new();
    for verb in ["issues", "report", "history", "watch"] {
        let run = dir.run(&[verb, "--dir", "missing"]).expect(4);
        assert!(run.one_error_line().contains("not a directory"), "{verb}");
        assert!(run.stdout.is_empty());
    }
    let run = dir
        .run(&["view", "game.sgpt", "--project", "missing"])
        .expect(4);
    assert!(run.one_error_line().contains("no .framewise/ there"));
    // An empty directory is an empty ledger, not an error.
    std::fs::create_dir(dir.path(".framewise")).expect("dir");
    let run = dir.run(&["issues"]).expect(0);
    assert!(
        run.stdout.contains("no incidents recorded yet"),
        "{}",
        run.stdout
    );
    let json = dir.run(&["history", "--format", "json"]).expect(0).json();
    assert!(json.get("span").is_none());
    assert_eq!(json["buckets"], serde_json::json!([]));
}

#[test]
fn a_fix_is_measured_appended_and_listed() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let compile = id(COMPILE);
    let run = dir
        .run(&[
            "fix",
            "--title",
            "warm the cache",
            "--footprints",
            &compile,
            "--commit",
            "abc123",
            "--format",
            "json",
        ])
        .expect(0);
    let json = run.json();
    assert_eq!(json["schema"], "framewise.fix/1");
    assert_eq!(json["appended"], true);
    let fix = &json["fix"];
    assert_eq!(fix["type"], "fix");
    assert_eq!(fix["before"]["build"], "a");
    assert_eq!(fix["after"]["build"], "b");
    assert_eq!(fix["before"]["p95_ms"], 30.0);
    assert_eq!(fix["after"]["p95_ms"], 18.0);
    let series = fix["before"]["series"].as_array().expect("series");
    assert_eq!(series.len(), 24);
    assert!(
        series.iter().any(Value::is_null),
        "slices without heartbeats are gaps"
    );
    let lines = std::fs::read_to_string(fw.join("fixes.jsonl")).expect("fixes");
    assert_eq!(lines.lines().count(), 1);
    let appended: Value = serde_json::from_str(lines.trim()).expect("a fix line");
    assert_eq!(&appended, fix, "the JSON shows exactly the line appended");

    let issues = dir.run(&["issues", "--format", "json"]).expect(0).json();
    let fixes = &issues["issues"][0]["fixes"];
    assert_eq!(fixes[0]["title"], "warm the cache");
    assert_eq!(fixes[0]["p95_ms"], serde_json::json!([30.0, 18.0]));
    assert_eq!(issues["issues"][1]["fixes"], serde_json::json!([]));

    // Dry run: measured, not appended.
    let run = dir.run(&["fix", "--title", "t", "--dry-run"]).expect(0);
    assert!(
        run.stdout.contains("dry run, not recorded"),
        "{}",
        run.stdout
    );
    assert_eq!(
        std::fs::read_to_string(fw.join("fixes.jsonl"))
            .expect("fixes")
            .lines()
            .count(),
        1
    );

    let run = dir
        .run(&["fix", "--title", "t", "--footprints", "0badc0de"])
        .expect(4);
    assert!(run.one_error_line().contains("footprint 0badc0de not in"));
    let run = dir
        .run(&["fix", "--title", "t", "--before", "nope"])
        .expect(4);
    assert!(run
        .one_error_line()
        .contains("no evidence for before window \"nope\": builds with evidence: a, b"));
    let run = dir
        .run(&[
            "fix",
            "--title",
            "t",
            "--before",
            "2026-12-01T00:00Z..2026-11-30",
        ])
        .expect(4);
    assert!(run.one_error_line().contains("bad before window"));
    let run = dir
        .run(&[
            "fix",
            "--title",
            "range",
            "--before",
            "2026-12-01T00:00Z..2026-12-01T00:30Z",
            "--after",
            "b",
            "--format",
            "json",
        ])
        .expect(0);
    assert_eq!(run.json()["fix"]["before"]["beats"], 4);

    // A ledger with one build has no default pair.
    let one = Dir::new();
    std::fs::create_dir(one.path(".framewise")).expect("dir");
    let mut log = Appender::open(one.path(".framewise/perf.jsonl")).expect("open");
    log.append(&beat(0, "only", 20.0)).expect("append");
    let run = one.run(&["fix", "--title", "t"]).expect(4);
    assert!(run
        .one_error_line()
        .contains("a fix's default windows are the ledger's last two builds with evidence"));
    // A heartbeat of no build the day before: evidence for a range, no build's.
    let mut unnamed = beat(0, "only", 25.0);
    if let Record::Heartbeat(h) = &mut unnamed {
        h.common.build = None;
        h.common.at = iso_from_unix_ms(DAY0_MS - 24 * 60 * MINUTE_MS + 30 * MINUTE_MS);
    }
    log.append(&unnamed).expect("append");
    // A before window given: the after window is the latest build, which one build has.
    let run = one
        .run(&[
            "fix",
            "--title",
            "t",
            "--before",
            "2026-11-30T00:00Z..2026-11-30T01:00Z",
            "--dry-run",
            "--format",
            "json",
        ])
        .expect(0);
    let json = run.json();
    assert_eq!(json["fix"]["after"]["build"], "only", "{json}");
    assert_eq!(json["fix"]["before"]["beats"], 1, "{json}");
    // Its heartbeat does not say how long the game was played: no rate, not 0 an hour.
    assert!(
        json["fix"]["before"]["hitches_per_hour"].is_null(),
        "{json}"
    );
    assert!(json["fix"]["before"]["rate_unknown"].is_string(), "{json}");
    // An after window given, the before one left out: the build that ran before it, which a
    // ledger of one build does not have.
    let run = one
        .run(&["fix", "--title", "t", "--after", "only", "--dry-run"])
        .expect(4);
    assert!(
        run.one_error_line()
            .contains("the before window defaults to the build that ran before the after window (build \"only\")"),
        "{}",
        run.stderr
    );
}

/// Writes `lines` as `.framewise/perf.jsonl` of a new directory.
fn raw_ledger(lines: &[String]) -> Dir {
    let dir = Dir::new();
    std::fs::create_dir(dir.path(".framewise")).expect("dir");
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(dir.path(".framewise/perf.jsonl"), text).expect("write");
    dir
}

/// A hand-written heartbeat line: `at` is `2026-12-01T10:MM:SS`.
fn beat_line(at: &str, build: &str, p95_ms: f64) -> String {
    format!(
        "{{\"type\":\"heartbeat\",\"at\":\"2026-12-01T10:{at}.000Z\",\"build\":\"{build}\",\"automated\":false,\"frame\":1,\"window\":{{\"frames\":600,\"seconds\":10,\"median_ms\":{p95_ms},\"p95_ms\":{p95_ms}}},\"counters\":{{}},\"hitches\":0}}"
    )
}

/// Builds A, B, A: A's figures are A's records only, and A, which ran last, is the latest —
/// the default after of a fix, with B, which ran before it, the default before.
#[test]
fn a_build_is_measured_by_its_own_records_and_the_latest_ran_last() {
    let dir = raw_ledger(&[
        beat_line("00:00", "A", 10.0),
        beat_line("00:30", "B", 50.0),
        beat_line("01:00", "B", 50.0),
        beat_line("01:30", "B", 50.0),
        beat_line("02:00", "A", 10.0),
    ]);
    let json = dir
        .run(&[
            "fix",
            "--title",
            "revert B",
            "--dry-run",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    let fix = &json["fix"];
    assert_eq!(fix["before"]["build"], "B", "{fix}");
    assert_eq!(fix["after"]["build"], "A", "{fix}");
    assert_eq!(fix["before"]["p95_ms"], 50.0);
    assert_eq!(fix["after"]["p95_ms"], 10.0);
    assert_eq!(fix["after"]["beats"], 2);
    let history = dir.run(&["history", "--format", "json"]).expect(0).json();
    let builds: Vec<(&str, u64, f64)> = history["builds"]
        .as_array()
        .expect("builds")
        .iter()
        .map(|b| {
            (
                b["build"].as_str().unwrap_or("?"),
                b["beats"].as_u64().unwrap_or(0),
                b["p95_ms"].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect();
    assert_eq!(builds, [("B", 3, 50.0), ("A", 2, 10.0)]);
}

/// A hand-written hitch line of footprint `id`.
fn hitch_line(at: &str, build: &str, id: &str) -> String {
    format!(
        "{{\"type\":\"hitch\",\"at\":\"{at}.000Z\",\"build\":\"{build}\",\"automated\":false,\"frame\":1,\"frame_ms\":40,\"threshold_ms\":30,\"classification\":[],\"footprint\":{{\"v\":1,\"id\":\"{id}\",\"key\":\"hitch|play|long-cpu-scope\"}}}}"
    )
}

/// A and B both hitch once every 10 s; A ran two one-minute sessions a day apart, B one. With
/// no heartbeat the log does not say how long either was played: no rate, rather than 0.5 an
/// hour against 360 (the night between A's sessions counted as play).
#[test]
fn a_hitch_rate_is_not_taken_over_idle_time() {
    let mut lines = Vec::new();
    for (day, hour, build) in [("03", "10", "A"), ("04", "10", "A"), ("04", "11", "B")] {
        for s in ["00", "10", "20", "30", "40", "50"] {
            lines.push(hitch_line(
                &format!("2026-12-{day}T{hour}:00:{s}"),
                build,
                "d70719ea",
            ));
        }
    }
    let dir = raw_ledger(&lines);
    let json = dir
        .run(&[
            "fix",
            "--title",
            "t",
            "--footprints",
            "d70719ea",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    for side in ["before", "after"] {
        let w = &json["fix"][side];
        assert!(w["hitches_per_hour"].is_null(), "{w}");
        assert!(
            w["rate_unknown"]
                .as_str()
                .is_some_and(|why| why.starts_with("no heartbeat in the window")),
            "{w}"
        );
    }
    let run = dir.run(&["issues"]).expect(0);
    assert!(!run.stdout.contains("hitches/h"), "{}", run.stdout);
}

/// A fix that measured nothing, the same window twice, overlapping windows, a fix recorded
/// again, and an empty file name are refused (exit 4, one line), and nothing is appended.
#[test]
fn a_fix_that_measures_nothing_or_repeats_one_is_refused() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let empty = Dir::new();
    std::fs::create_dir(empty.path(".framewise")).expect("dir");
    std::fs::write(empty.path(".framewise/perf.jsonl"), "").expect("write");
    let run = empty
        .run(&[
            "fix",
            "--title",
            "x",
            "--before",
            "2020-01-01..2020-01-02",
            "--after",
            "2020-01-02..2020-01-03",
        ])
        .expect(4);
    assert!(
        run.one_error_line().contains(
            "the before window 2020-01-01T00:00:00.000Z..2020-01-02T00:00:00.000Z holds no evidence"
        ),
        "{}",
        run.stderr
    );
    assert!(!empty.path(".framewise/fixes.jsonl").exists());
    for (args, says) in [
        (
            &["--before", "b", "--after", "b"][..],
            "the before and after windows are the same (build \"b\")",
        ),
        (
            &[
                "--before",
                "2026-12-01T00:00Z..2026-12-01T02:10Z",
                "--after",
                "2026-12-01T02:00Z..2026-12-01T03:00Z",
            ][..],
            "overlap (their ranges share time)",
        ),
        (
            &[
                "--before",
                "2026-12-01T00:00Z..2026-12-01T02:10Z",
                "--after",
                "b",
            ][..],
            "overlap (2 records would be measured on both sides)",
        ),
        (
            &["--before", "2026-12-01T01:00Z..2026-12-01T01:30Z"][..],
            "holds no evidence",
        ),
        (&["--files", ""][..], "--files holds an empty name"),
        (
            &["--files", "a.rs,,b.rs"][..],
            "--files holds an empty name",
        ),
    ] {
        let mut argv = vec!["fix", "--title", "t"];
        argv.extend_from_slice(args);
        let run = dir.run(&argv).expect(4);
        assert!(
            run.one_error_line().contains(says),
            "{args:?}: {}",
            run.stderr
        );
        // A dry run refuses what the recording would.
        argv.push("--dry-run");
        dir.run(&argv).expect(4);
    }
    assert!(!fw.join("fixes.jsonl").exists(), "nothing appended");

    let record = [
        "fix",
        "--title",
        "warm the cache",
        "--footprints",
        &id(COMPILE),
    ];
    dir.run(&record).expect(0);
    let run = dir.run(&record).expect(4);
    assert!(
        run.one_error_line()
            .contains("fix \"warm the cache\" is already recorded in ")
            && run
                .stderr
                .contains("with the same footprints and windows: not recorded twice"),
        "{}",
        run.stderr
    );
    // Another title, or other windows, is another fix.
    dir.run(&[
        "fix",
        "--title",
        "warm the cache",
        "--before",
        "2026-12-01T00:00Z..2026-12-01T00:30Z",
    ])
    .expect(0);
    let lines = std::fs::read_to_string(fw.join("fixes.jsonl")).expect("fixes");
    assert_eq!(lines.lines().count(), 2, "{lines}");
}

/// One heartbeat dated 1970 (a device clock reset) is left out of the timeline and counted,
/// as one dated after now is, not drawn as a first bucket forty years before the rest.
#[test]
fn history_leaves_out_a_record_dated_before_2020_and_says_so() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let reset = serde_json::to_string(&beat(0, "a", 30.0))
        .expect("json")
        .replace(&iso_from_unix_ms(DAY0_MS), "1970-01-01T00:00:00.000Z");
    append_raw(&fw.join("perf.jsonl"), &format!("{reset}\n"));
    let json = dir
        .run(&["history", "--buckets", "3", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(
        json["past"],
        serde_json::json!({"records": 1, "earliest": "1970-01-01T00:00:00.000Z"})
    );
    assert_eq!(json["span"]["from"], iso_from_unix_ms(DAY0_MS).as_str());
    let beats: Vec<&Value> = json["buckets"]
        .as_array()
        .expect("buckets")
        .iter()
        .map(|b| &b["beats"])
        .collect();
    assert_eq!(
        beats,
        [
            &serde_json::json!(6),
            &serde_json::json!(0),
            &serde_json::json!(6)
        ]
    );
    let run = dir.run(&["history", "--buckets", "3"]).expect(0);
    assert!(
        run.stdout.contains(
            "left out: 1 record dated before 2020 (the earliest 1970-01-01T00:00:00.000Z)"
        ),
        "{}",
        run.stdout
    );
    let run = dir.run(&["fix", "--title", "t", "--dry-run"]).expect(0);
    assert!(
        run.stderr
            .contains("left out 1 record(s) dated before 2020"),
        "{}",
        run.stderr
    );
}

/// A footprint id written in capitals is the same id (selected by `--fp` in any case, linked
/// by `fix`); one that is no id, a jitter size that is no measurement, are set aside as
/// malformed; a byte-order mark opening the file is skipped.
#[test]
fn issues_read_ids_in_any_case_and_set_aside_what_is_no_measurement() {
    let jitter = |units: &str, id: &str| {
        format!(
            "{{\"type\":\"jitter\",\"at\":\"2026-12-01T10:00:00.000Z\",\"build\":\"A\",\"automated\":false,\"track\":\"unit\",\"kind\":\"snap\",\"frame\":7,\"jump\":[0,1,0],\"units\":{units},\"unit\":\"m\",\"travel_units\":0.1,\"speed\":6,\"dt_ms\":16.7,\"from\":[0,0,0],\"to\":[0,1,0],\"classification\":[],\"footprint\":{{\"v\":1,\"id\":\"{id}\",\"key\":\"jitter|unit|snap|play|snap|vertical\"}}}}"
        )
    };
    let dir = raw_ledger(&[
        format!(
            "\u{feff}{}",
            hitch_line("2026-12-01T10:00:01", "A", "209E7A17")
        ),
        hitch_line("2026-12-01T10:00:02", "A", "NOT-HEX!"),
        jitter("1e306", "d52db37a"),
        jitter("0.5", "d52db37a"),
    ]);
    let json = dir.run(&["issues", "--format", "json"]).expect(0).json();
    assert_eq!(json["ledger"]["malformed"], 2, "{json}");
    let ids: Vec<&str> = json["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .filter_map(|i| i["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(
        ids.contains(&"209e7a17") && ids.contains(&"d52db37a"),
        "{ids:?}"
    );
    let snap = json["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .find(|i| i["id"] == "d52db37a")
        .expect("the snap");
    assert_eq!(
        snap["worst"],
        serde_json::json!({"value": 0.5, "unit": "m"})
    );
    let run = dir.run(&["issues"]).expect(0);
    assert!(!run.stdout.contains("inf"), "{}", run.stdout);
    for typed in ["209E7A17", "209e7a17"] {
        let one = dir
            .run(&["issues", "--fp", typed, "--format", "json"])
            .expect(0)
            .json();
        assert_eq!(one["issues"][0]["count"], 1, "{typed}: {one}");
    }
    let json = dir
        .run(&[
            "fix",
            "--title",
            "t",
            "--footprints",
            "209E7A17",
            "--before",
            "2026-12-01T09:00Z..2026-12-01T10:00:00.500Z",
            "--after",
            "2026-12-01T10:00:00.600Z..2026-12-01T11:00Z",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(json["fix"]["footprints"], serde_json::json!(["209e7a17"]));
    let issues = dir.run(&["issues", "--format", "json"]).expect(0).json();
    let row = issues["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .find(|i| i["id"] == "209e7a17")
        .expect("the row");
    assert_eq!(row["fixes"].as_array().map(Vec::len), Some(1), "{row}");
}

#[test]
fn history_leaves_a_record_dated_after_now_out_of_its_buckets_and_says_so() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    // Ten years after the fixtures' day: a clock set wrong. Drawn, it would stretch the span
    // to 2036 and put both builds in the first bucket.
    let future = serde_json::to_string(&beat(10 * 365 * 24 * 60, "b", 18.0)).expect("json");
    append_raw(&fw.join("perf.jsonl"), &format!("{future}\n"));
    let json = dir
        .run(&["history", "--buckets", "3", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["future"]["records"], 1, "{json}");
    assert!(json["future"]["latest"]
        .as_str()
        .is_some_and(|t| t.starts_with("2036-")));
    assert!(json["span"]["to"]
        .as_str()
        .is_some_and(|t| t.starts_with("2026-12-01T")));
    let builds: Vec<&Value> = json["buckets"]
        .as_array()
        .expect("buckets")
        .iter()
        .map(|b| &b["build"])
        .collect();
    assert_eq!(
        builds,
        [
            &serde_json::json!("a"),
            &Value::Null,
            &serde_json::json!("b")
        ],
        "{json}"
    );
    let run = dir.run(&["history", "--buckets", "3"]).expect(0);
    assert!(
        run.stdout
            .contains("left out: 1 record dated after now (the latest 2036-"),
        "{}",
        run.stdout
    );
    let run = dir
        .run(&["history", "--buckets", "3", "--format", "markdown"])
        .expect(0);
    assert!(run.stdout.contains("left out: 1 record"), "{}", run.stdout);
}

/// Evidence dated ten years ahead (a clock set wrong) was taken for the latest build, the
/// default after window of a fix, where `history` leaves it out as not yet happened.
#[test]
fn a_fix_does_not_take_a_build_dated_after_now_for_the_latest() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let future = serde_json::to_string(&beat(10 * 365 * 24 * 60, "z", 99.0)).expect("json");
    append_raw(&fw.join("perf.jsonl"), &format!("{future}\n"));
    let run = dir
        .run(&["fix", "--title", "t", "--dry-run", "--format", "json"])
        .expect(0);
    let json = run.json();
    assert_eq!(json["fix"]["before"]["build"], "a", "{json}");
    assert_eq!(json["fix"]["after"]["build"], "b", "{json}");
    assert!(
        run.stderr.contains("left out 1 record(s) dated after now"),
        "{}",
        run.stderr
    );
    // An empty --commit (`$(git rev-parse HEAD)` outside a repository) links to nothing.
    let run = dir.run(&["fix", "--title", "t", "--commit", " "]).expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: --commit is empty: give the fix's commit, or leave --commit out"
    );
}

#[test]
fn a_range_with_no_incident_says_so_not_that_none_was_recorded() {
    let dir = Dir::new();
    ledger(&dir);
    for verb in ["issues", "report"] {
        let run = dir.run(&[verb, "--from", "2030-01-01"]).expect(0);
        assert!(
            run.stdout
                .contains("no incidents recorded in the --from/--to range"),
            "{verb}: {}",
            run.stdout
        );
    }
}

#[test]
fn a_framewise_file_is_named_when_no_directory_is_found() {
    let dir = Dir::new();
    dir.write(".framewise", "not a directory");
    let run = dir.run(&["issues"]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.contains(".framewise is there, but not a directory): run `framewise init`"),
        "{line}"
    );
}

#[test]
fn no_report_replaces_the_incident_log() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let log = std::fs::read(fw.join("perf.jsonl")).expect("log");
    write_game(&dir.path("game.sgpt"), &Game::default());
    for args in [
        &["issues", "--json=.framewise/perf.jsonl"][..],
        &[
            "history",
            "--format",
            "json",
            "--json",
            ".framewise/perf.jsonl",
        ],
        &["summarize", "game.sgpt", "--json=.framewise/perf.jsonl"],
        &["trace", "game.sgpt", "-o", ".framewise/perf.jsonl"],
    ] {
        let run = dir.run(args).expect(4);
        assert!(
            run.one_error_line()
                .contains(".framewise/perf.jsonl is the append-only perf.jsonl"),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(std::fs::read(fw.join("perf.jsonl")).expect("log"), log);
}

#[test]
fn history_draws_gaps_not_zeros() {
    let dir = Dir::new();
    ledger(&dir);
    let json = dir
        .run(&["history", "--buckets", "3", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(json["schema"], "framewise.history/1");
    let buckets = json["buckets"].as_array().expect("buckets");
    assert_eq!(buckets.len(), 3);
    assert_eq!(buckets[0]["p95_ms"], 30.0);
    assert_eq!(buckets[0]["build"], "a");
    let gap = &buckets[1];
    for absent in [
        "p95_ms",
        "median_ms",
        "build",
        "counters",
        "hitches_per_hour",
    ] {
        assert!(gap.get(absent).is_none(), "{absent} in {gap}");
    }
    assert_eq!(gap["beats"], 0);
    assert_eq!(buckets[2]["p95_ms"], 18.0);
    assert_eq!(json["builds"].as_array().map(Vec::len), Some(2));
    let run = dir.run(&["history", "--buckets", "3"]).expect(0);
    assert!(run.stdout.contains("(a gap, not 0)"), "{}", run.stdout);
    assert!(
        run.stdout.contains(" · 3 buckets · 2 builds · "),
        "{}",
        run.stdout
    );
    // One bucket is one bucket, not `1 buckets`.
    let run = dir.run(&["history", "--buckets", "1"]).expect(0);
    assert!(
        run.stdout.contains(" · 1 bucket · 2 builds · "),
        "{}",
        run.stdout
    );
    let run = dir.run(&["history", "--buckets", "0"]).expect(4);
    run.one_error_line();
}

/// A `--from` after its `--to` is a range with no time in it: refused (exit 4, one line), not
/// folded into an empty catalogue that reads as `no incidents recorded`.
#[test]
fn a_range_that_ends_before_it_starts_is_refused() {
    let dir = Dir::new();
    ledger(&dir);
    for verb in ["issues", "report", "history"] {
        let run = dir
            .run(&[verb, "--from", "2026-12-02", "--to", "2026-12-01"])
            .expect(4);
        assert_eq!(
            run.one_error_line(),
            "framewise: error: --from 2026-12-02T00:00:00.000Z is after --to \
             2026-12-01T00:00:00.000Z: the range holds no time (swap them?)",
            "{verb}"
        );
        assert!(run.stdout.is_empty(), "{verb}");
        // The same day as both bounds is a range (its first instant).
        dir.run(&[verb, "--from", "2026-12-01", "--to", "2026-12-01"])
            .expect(0);
    }
}

fn usermark(minute: i64) -> Record {
    Record::Usermark(UsermarkRecord {
        common: common(minute, "b"),
        frame: 777,
        window: Window {
            frames: 300,
            ..Window::default()
        },
        worst_frames: vec![WorstFrame {
            frame: 770,
            ago_ms: 100.0,
            frame_ms: 48.0,
            delta: BTreeMap::new(),
            classification: vec![guess("long-cpu-scope")],
        }],
        note: Some("stutter\non the bridge".to_owned()),
        footprint: footprint("usermark|play|long-cpu-scope"),
    })
}

#[test]
fn watch_wakes_on_meaningful_records_only() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let run = dir.run(&["watch", "--once", "--from-start"]).expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    // Hitches of 100 ms and more (the robot's is left out), in file order, counted.
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert!(
        lines[0].starts_with(&format!(
            "hitch 120ms pipeline-compile fp={} ×1 frame=500",
            id(COMPILE)
        )),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(&format!(
            "hitch 150ms pipeline-compile fp={} ×2",
            id(COMPILE)
        )),
        "{}",
        lines[1]
    );
    assert!(
        run.stderr.contains("the whole ledger (--from-start)"),
        "{}",
        run.stderr
    );
    let run = dir
        .run(&["watch", "--once", "--from-start", "--min-hitch-ms", "40"])
        .expect(0);
    assert_eq!(run.stdout.lines().count(), 5, "{}", run.stdout);

    // Armed at the end: nothing old wakes; a new record does, counted with the old ones.
    std::fs::remove_file(fw.join("watch-cursor.json")).expect("the --once runs saved one");
    let run = dir.run(&["watch", "--once"]).expect(0);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("first look"), "{}", run.stderr);
    let mut child = spawn_watch(&dir, &WATCH_JSON);
    let mut log = Appender::open(fw.join("perf.jsonl")).expect("open");
    log.append(&usermark(160)).expect("append");
    // A line in two writes: the watch holds the first half until its newline lands.
    let line = serde_json::to_string(&hitch(161, "b", 130.0, COMPILE)).expect("json");
    let (head, tail) = line.split_at(40);
    append_raw(&fw.join("perf.jsonl"), head);
    std::thread::sleep(std::time::Duration::from_millis(100));
    append_raw(&fw.join("perf.jsonl"), &format!("{tail}\n"));
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut wakes = Vec::new();
    for _ in 0..2 {
        let mut text = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut text).expect("a wake line");
        wakes.push(serde_json::from_str::<Value>(&text).expect("json wake"));
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert_eq!(wakes[0]["schema"], "framewise.wake/1");
    assert_eq!(wakes[0]["record"]["type"], "usermark");
    let line0 = wakes[0]["line"].as_str().expect("line");
    assert!(
        line0.starts_with("usermark \"stutter\\non the bridge\" worst 48ms long-cpu-scope"),
        "{line0}"
    );
    assert!(!line0.contains('\n'));
    assert_eq!(wakes[1]["record"]["frame_ms"], 130.0);
    assert_eq!(wakes[1]["count"], 4, "three before the watch, this one");
    assert_eq!(wakes[1]["fp"], id(COMPILE).as_str());
}

/// `watch --once` is a poll: each prints what was appended since the one before (a cursor in
/// `.framewise/`), counted with everything before it; the first arms at the end; a line still
/// being written waits for its newline; a replaced ledger is read from its start; a cursor
/// that does not read is an error, not a replay.
#[test]
fn watch_once_prints_what_is_new_since_the_last_once() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let log_path = fw.join("perf.jsonl");
    let once = |dir: &Dir| dir.run(&["watch", "--once"]).expect(0);
    assert_eq!(once(&dir).stdout, "", "the first look arms at the end");
    assert_eq!(once(&dir).stdout, "", "nothing appended since");
    let mut log = Appender::open(&log_path).expect("open");
    log.append(&hitch(170, "b", 130.0, COMPILE))
        .expect("append");
    drop(log);
    // Half of the next line: not news until its newline lands.
    let line = serde_json::to_string(&hitch(171, "b", 140.0, COMPILE)).expect("json");
    let (head, tail) = line.split_at(40);
    append_raw(&log_path, head);
    let run = once(&dir);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    assert!(
        lines[0].starts_with(&format!(
            "hitch 130ms pipeline-compile fp={} ×4",
            id(COMPILE)
        )),
        "counted with the three before: {}",
        lines[0]
    );
    assert!(
        run.stderr.contains("since the last --once"),
        "{}",
        run.stderr
    );
    append_raw(&log_path, &format!("{tail}\n"));
    let run = once(&dir);
    assert!(
        run.stdout.starts_with("hitch 140ms") && run.stdout.lines().count() == 1,
        "the line that landed, once: {}",
        run.stdout
    );
    assert_eq!(once(&dir).stdout, "");

    // A replaced ledger (shorter, or another of the same length) is read from its start.
    let replacement = fw.join("perf.jsonl.new");
    let mut log = Appender::open(&replacement).expect("open");
    log.append(&hitch(1, "c", 150.0, COMPILE)).expect("append");
    drop(log);
    std::fs::rename(&replacement, &log_path).expect("replaced");
    let run = once(&dir);
    assert!(
        run.stdout.starts_with(&format!(
            "hitch 150ms pipeline-compile fp={} ×1",
            id(COMPILE)
        )),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("replaced"), "{}", run.stderr);

    // A cursor framewise did not write is said, with the way out.
    std::fs::write(fw.join("watch-cursor.json"), "{\"offset\": \"x\"}").expect("write");
    let run = dir.run(&["watch", "--once"]).expect(4);
    assert!(
        run.stderr.contains("not a watch cursor") && run.stderr.lines().count() == 1,
        "{}",
        run.stderr
    );
}

/// A ledger replaced by a shorter one (rotated, rewritten) is read from its start, and its
/// footprints are counted afresh: `×N` is the count in the ledger, not in the watch's memory.
#[test]
fn watch_counts_a_replaced_ledger_afresh() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    let mut child = spawn_watch(&dir, &WATCH_JSON);
    let replacement = fw.join("perf.jsonl.new");
    let mut log = Appender::open(&replacement).expect("open");
    log.append(&hitch(1, "c", 140.0, COMPILE)).expect("append");
    drop(log);
    std::fs::rename(&replacement, fw.join("perf.jsonl")).expect("replaced");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut text = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut text).expect("a wake line");
    child.kill().expect("kill");
    child.wait().expect("wait");
    let wake: Value = serde_json::from_str(&text).expect("json wake");
    assert_eq!(wake["record"]["frame_ms"], 140.0, "{wake}");
    assert_eq!(
        wake["count"], 1,
        "the one occurrence the new ledger holds: {wake}"
    );
}

/// A watch that polls every 20 ms for 5 minutes and prints JSON wakes.
const WATCH_JSON: [&str; 6] = [
    "--timeout",
    "300",
    "--interval-ms",
    "20",
    "--format",
    "json",
];

/// Starts `framewise watch ARGS` in `dir` and returns once it is armed (its stderr line).
fn spawn_watch(dir: &Dir, args: &[&str]) -> std::process::Child {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_framewise"))
        .arg("watch")
        .args(args)
        .current_dir(dir.tmp.path())
        .env_remove("FRAMEWISE_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut armed = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stderr), &mut armed)
        .expect("armed line");
    assert!(armed.starts_with("framewise watch: armed on"), "{armed}");
    child
}

#[test]
fn watch_exits_cleanly_when_the_reader_closes_the_pipe() {
    let dir = Dir::new();
    let fw = ledger(&dir);
    // No --once: only the closed pipe can end it before its (generous) timeout.
    let mut child = spawn_watch(
        &dir,
        &["--from-start", "--interval-ms", "20", "--timeout", "300"],
    );
    let mut stdout = child.stdout.take().expect("stdout");
    let mut head = [0u8; 10];
    std::io::Read::read_exact(&mut stdout, &mut head).expect("the first wake");
    drop(stdout);
    // The watch learns the reader is gone on its next write: give it records to write.
    let mut log = Appender::open(fw.join("perf.jsonl")).expect("open");
    let status = (0..2000)
        .find_map(|i| {
            log.append(&hitch(200 + i, "b", 500.0, COMPILE))
                .expect("append");
            std::thread::sleep(std::time::Duration::from_millis(50));
            child.try_wait().expect("try_wait")
        })
        .expect("the watch ends once its reader is gone");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn watch_refuses_a_log_that_is_not_a_regular_file_at_once() {
    let dir = Dir::new();
    std::fs::create_dir(dir.path(".framewise")).expect("mkdir");
    // A FIFO would never grow a length to tail: refused, never waited on.
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path(".framewise/perf.jsonl"))
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let run = dir.run(&["watch", "--timeout", "60"]).expect(4);
    assert!(
        run.one_error_line()
            .contains("perf.jsonl: not a regular file"),
        "{}",
        run.stderr
    );
    std::fs::remove_file(dir.path(".framewise/perf.jsonl")).expect("rm fifo");
    std::fs::create_dir(dir.path(".framewise/perf.jsonl")).expect("mkdir");
    let run = dir.run(&["watch", "--timeout", "60"]).expect(4);
    assert!(
        run.one_error_line().contains("not a regular file"),
        "{}",
        run.stderr
    );
}
