//! The ledger folds: the catalogue, the timeline and fix windows over hand-made ledgers.

use std::collections::BTreeMap;

use framewise_incidents::fold::{
    build_fix, catalogue, history, latest_builds, parse_window_spec, read_fixes, summarize_build,
    summarize_window, unix_ms_from_iso, CatalogueOptions, FixError, FixRecord, FixRequest,
    HistoryOptions, Ledger, Misdated, Occurrences, WindowSpec, EARLIEST_MS, FUTURE_TOLERANCE_MS,
};
use framewise_incidents::{
    iso_from_unix_ms, Common, Confidence, Footprint, Guess, HeartbeatRecord, HitchRecord,
    JitterRecord, Record, Window,
};

/// 2026-12-01T00:00:00Z.
const DAY0_MS: i64 = 1_796_083_200_000;
const MINUTE_MS: i64 = 60_000;

fn common(minute: i64, build: &str) -> Common {
    Common {
        at: iso_from_unix_ms(DAY0_MS + minute * MINUTE_MS),
        build: Some(build.to_owned()),
        phase: Some("play".to_owned()),
        ctx: Some("stance=foot".to_owned()),
        session: Some(format!("{:032x}", minute / 100)),
        ..Common::default()
    }
}

fn footprint(key: &str) -> Footprint {
    framewise_detect::footprint::footprint(1, key).into()
}

fn guess(name: &str) -> Guess {
    Guess {
        guess: name.to_owned(),
        confidence: Confidence::High,
        evidence: format!("{name} evidence"),
        scope: None,
        site: None,
    }
}

const COMPILE: &str = "hitch|play|pipeline-compile|ctx:stance=foot";
const PHYSICS: &str = "hitch|play|long-cpu-scope|section:physics|ctx:stance=foot";

fn hitch(minute: i64, build: &str, frame_ms: f64, key: &str) -> Record {
    let verdict = key.split('|').nth(2).unwrap_or("?");
    Record::Hitch(HitchRecord {
        common: common(minute, build),
        frame: u64::try_from(minute).unwrap_or(0) * 10,
        frame_ms,
        median_ms: Some(16.6),
        threshold_ms: 33.2,
        work_ms: None,
        gpu_ms: None,
        delta: BTreeMap::new(),
        scopes: Vec::new(),
        classification: vec![guess(verdict)],
        dropped_since_last: None,
        footprint: footprint(key),
    })
}

fn beat(minute: i64, build: &str, median_ms: f64, p95_ms: f64) -> Record {
    Record::Heartbeat(HeartbeatRecord {
        common: Common {
            regime: Some("hardware".to_owned()),
            ..common(minute, build)
        },
        frame: u64::try_from(minute).unwrap_or(0) * 10,
        window: Window {
            frames: 600,
            seconds: Some(10.0),
            median_ms: Some(median_ms),
            p95_ms: Some(p95_ms),
            ..Window::default()
        },
        counters: BTreeMap::from([("draw_calls".to_owned(), 120)]),
        hitches: 0,
    })
}

fn jitter(minute: i64, build: &str, kind: &str, units: f64, amplitude: Option<f64>) -> Record {
    Record::Jitter(JitterRecord {
        common: common(minute, build),
        track: "unit".to_owned(),
        kind: kind.to_owned(),
        frame: 7,
        jump: [0.0, units, 0.0],
        units,
        unit: None,
        travel_units: 0.1,
        speed: 6.0,
        dt_ms: 16.7,
        median_dt_ms: Some(16.7),
        from: [0.0; 3],
        to: [0.0, units, 0.0],
        frames: None,
        duration_ms: None,
        amplitude,
        coincident: Vec::new(),
        reach: None,
        classification: vec![guess(kind)],
        dropped_since_last: None,
        footprint: footprint(&format!("jitter|unit|{kind}|play|{kind}|vertical")),
    })
}

/// Two builds: `a` (minutes 0–59) with compile hitches, `b` (minutes 120–179) without.
fn two_builds() -> Vec<Record> {
    let mut records = Vec::new();
    for m in (0..60).step_by(10) {
        records.push(beat(m, "a", 16.6, 30.0));
    }
    records.push(hitch(5, "a", 120.0, COMPILE));
    records.push(hitch(25, "a", 80.0, COMPILE));
    records.push(hitch(26, "a", 45.0, PHYSICS));
    for m in (120..180).step_by(10) {
        records.push(beat(m, "b", 16.5, 18.0));
    }
    records.push(hitch(150, "b", 40.0, PHYSICS));
    records
}

#[test]
fn the_catalogue_groups_occurrences_by_footprint() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let options = CatalogueOptions {
        now_ms: DAY0_MS + 200 * MINUTE_MS,
        ..CatalogueOptions::default()
    };
    let cat = catalogue(&ledger, &[], &options);
    assert_eq!(cat.incidents, 4);
    assert_eq!(cat.issues.len(), 2);
    // Two each: the tie goes to the most recent last occurrence (physics, on build b).
    let physics = &cat.issues[0];
    assert_eq!(physics.key, PHYSICS);
    assert_eq!(physics.count, 2);
    assert_eq!(physics.builds, ["a", "b"]);
    assert_eq!(physics.label, "hitch · long-cpu-scope · physics");
    assert_eq!(
        physics.situation,
        [["stance".to_owned(), "foot".to_owned()]]
    );
    assert_eq!(physics.last_ago_ms, 50 * MINUTE_MS);
    let compile = &cat.issues[1];
    assert_eq!(compile.count, 2);
    assert_eq!(compile.first, iso_from_unix_ms(DAY0_MS + 5 * MINUTE_MS));
    assert_eq!(compile.last, iso_from_unix_ms(DAY0_MS + 25 * MINUTE_MS));
    let worst = compile.worst.as_ref().expect("a hitch measures its frame");
    assert_eq!((worst.value, worst.unit.as_str()), (120.0, "ms"));
    assert_eq!(
        compile.last_guess.as_ref().map(|g| g.guess.as_str()),
        Some("pipeline-compile")
    );
    assert!(compile.occurrences.is_empty(), "not asked for");
}

#[test]
fn robots_are_left_out_unless_asked() {
    let mut records = two_builds();
    let mut robot = hitch(30, "a", 300.0, COMPILE);
    if let Record::Hitch(h) = &mut robot {
        h.common.automated = true;
    }
    records.push(robot);
    let ledger = Ledger::new(&records);
    let cat = catalogue(&ledger, &[], &CatalogueOptions::default());
    assert_eq!(cat.automated_left_out, 1);
    let compile = cat.issues.iter().find(|i| i.key == COMPILE).expect("row");
    assert_eq!(compile.count, 2);
    let all = catalogue(
        &ledger,
        &[],
        &CatalogueOptions {
            include_automated: true,
            ..CatalogueOptions::default()
        },
    );
    assert_eq!(all.automated_left_out, 0);
    let compile = all.issues.iter().find(|i| i.key == COMPILE).expect("row");
    assert_eq!(compile.count, 3);
    assert_eq!(compile.worst.as_ref().map(|w| w.value), Some(300.0));
}

#[test]
fn occurrences_of_one_session_are_listed() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    // Minutes 100–199 are session 1 (see `common`).
    let session = format!("{:032x}", 1);
    let cat = catalogue(
        &ledger,
        &[],
        &CatalogueOptions {
            occurrences: Occurrences::Session(session.clone()),
            ..CatalogueOptions::default()
        },
    );
    let listed: Vec<_> = cat
        .issues
        .iter()
        .flat_map(|i| i.occurrences.iter())
        .collect();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].session.as_deref(), Some(session.as_str()));
    assert_eq!(listed[0].frame, 1500);
    assert_eq!(listed[0].value, Some(40.0));
}

#[test]
fn jitter_worst_is_the_jump_or_the_amplitude() {
    let records = vec![
        jitter(1, "a", "snap", 0.7, None),
        jitter(2, "a", "snap", 1.2, None),
        jitter(3, "a", "oscillation", 0.9, Some(0.3)),
    ];
    let cat = catalogue(&Ledger::new(&records), &[], &CatalogueOptions::default());
    let snap = cat.issues.iter().find(|i| i.count == 2).expect("snap row");
    assert_eq!(snap.glyph, "↯");
    assert_eq!(
        snap.worst.as_ref().map(|w| (w.value, w.unit.as_str())),
        Some((1.2, "units"))
    );
    let osc = cat
        .issues
        .iter()
        .find(|i| i.count == 1)
        .expect("oscillation row");
    assert_eq!(osc.worst.as_ref().map(|w| w.value), Some(0.3));

    // A host that declares its unit (`motion.unit = m`) is measured in it.
    let metres: Vec<Record> = records
        .into_iter()
        .map(|mut r| {
            if let Record::Jitter(j) = &mut r {
                j.unit = Some("m".to_owned());
            }
            r
        })
        .collect();
    let cat = catalogue(&Ledger::new(&metres), &[], &CatalogueOptions::default());
    let snap = cat.issues.iter().find(|i| i.count == 2).expect("snap row");
    assert_eq!(
        snap.worst.as_ref().map(|w| (w.value, w.unit.as_str())),
        Some((1.2, "m"))
    );
}

#[test]
fn a_window_summarises_its_heartbeats_and_hitches() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let s = summarize_window(&ledger, DAY0_MS, DAY0_MS + 59 * MINUTE_MS);
    assert_eq!(s.beats, 6);
    assert_eq!(s.hitches, 3);
    assert_eq!(s.p95_ms, Some(30.0));
    assert_eq!(s.median_ms, Some(16.6));
    assert_eq!(s.counters.get("draw_calls"), Some(&120.0));
    assert_eq!(s.worst_ms, Some(120.0));
    assert_eq!(s.worst_guess.as_deref(), Some("pipeline-compile"));
    assert_eq!(s.top_guess.as_deref(), Some("pipeline-compile"));
    assert_eq!(s.regime.as_deref(), Some("hardware"));
    // Three hitches in the minute of play its six heartbeats (10 s each) say was played: a
    // rate per hour of play, not per hour of the 59-minute span.
    assert_eq!(s.play_s, Some(60.0));
    assert_eq!(s.hitches_per_hour, Some(180.0));
    assert_eq!(s.rate_unknown, None);
    assert_eq!(s.jitters, None, "no jitter: absent, not 0");

    let empty = summarize_window(&ledger, DAY0_MS + 60 * MINUTE_MS, DAY0_MS + 119 * MINUTE_MS);
    assert_eq!((empty.beats, empty.hitches), (0, 0));
    assert_eq!((empty.p95_ms, empty.median_ms), (None, None));
    let json = serde_json::to_string(&empty).expect("json");
    assert!(
        !json.contains("p95_ms") && !json.contains("counters"),
        "{json}"
    );
}

/// The widest window, every instant there is: its span overflows an i64 (the subtraction
/// panicked in a debug build, found by the `incidents` fuzz target); it holds every record.
#[test]
fn the_widest_window_summarises_every_record() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let all = summarize_window(&ledger, i64::MIN, i64::MAX);
    let stamped = summarize_window(&ledger, DAY0_MS - 1, DAY0_MS + 100_000 * MINUTE_MS);
    assert_eq!((all.beats, all.hitches), (stamped.beats, stamped.hitches));
    assert!(all.beats > 0);
    // Four hitches in the two minutes of play twelve heartbeats say: however wide the window,
    // the rate is per hour of play.
    assert_eq!(all.hitches_per_hour, Some(120.0));
    assert_eq!(all.hitches_per_hour, stamped.hitches_per_hour);
}

/// A window nothing ran in (no heartbeat, hitch or jitter) has no hitch rate: 0 an hour would
/// read as a measured one, and a fix whose before-window is empty as a regression to any rate.
#[test]
fn a_window_with_no_evidence_has_no_hitch_rate() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let empty = summarize_window(&ledger, DAY0_MS - 10 * MINUTE_MS, DAY0_MS - MINUTE_MS);
    assert_eq!((empty.beats, empty.hitches), (0, 0));
    assert_eq!(empty.hitches_per_hour, None);
    let json = serde_json::to_string(&empty).expect("serializes");
    assert!(!json.contains("hitches_per_hour"), "{json}");
}

#[test]
fn history_draws_a_gap_where_there_is_no_evidence() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let h = history(
        &ledger,
        &[],
        &HistoryOptions {
            buckets: 3,
            ..HistoryOptions::default()
        },
    );
    let span = h.span.as_ref().expect("evidence");
    assert_eq!(span.from, iso_from_unix_ms(DAY0_MS));
    assert_eq!(span.to, iso_from_unix_ms(DAY0_MS + 170 * MINUTE_MS));
    assert_eq!(h.buckets.len(), 3);
    let [first, middle, last] = [&h.buckets[0], &h.buckets[1], &h.buckets[2]];
    assert_eq!(first.p95_ms, Some(30.0));
    assert_eq!(first.build.as_deref(), Some("a"));
    assert_eq!(first.hitches, 3);
    assert_eq!(
        first.hitches_per_hour, None,
        "a bucket is a slice, not a rate"
    );
    assert_eq!(
        (middle.p95_ms, middle.median_ms, middle.build.as_deref()),
        (None, None, None)
    );
    assert_eq!(middle.hitches, 0);
    assert_eq!(last.p95_ms, Some(18.0));
    assert_eq!(last.build.as_deref(), Some("b"));
    let builds: Vec<_> = h
        .builds
        .iter()
        .map(|b| b.summary.build.as_deref())
        .collect();
    assert_eq!(builds, [Some("a"), Some("b")]);
    assert_eq!(h.builds[1].summary.hitches, 1);

    let none = history(&Ledger::new(&[]), &[], &HistoryOptions::default());
    assert!(none.span.is_none() && none.buckets.is_empty());
}

#[test]
fn a_record_dated_after_now_is_left_out_of_the_timeline_and_counted() {
    let mut records = two_builds();
    // A heartbeat and a hitch from a clock set 64 years ahead: readable times, no evidence.
    records.push(beat(64 * 525_960, "a", 16.6, 30.0));
    records.push(hitch(64 * 525_960 + 1, "b", 90.0, COMPILE));
    let ledger = Ledger::new(&records);
    let now_ms = DAY0_MS + 24 * 60 * MINUTE_MS;
    let options = HistoryOptions {
        buckets: 3,
        now_ms: Some(now_ms),
        ..HistoryOptions::default()
    };
    let h = history(&ledger, &[], &options);
    let span = h.span.as_ref().expect("evidence");
    assert_eq!(
        span.to,
        iso_from_unix_ms(DAY0_MS + 170 * MINUTE_MS),
        "the span ends at the last real evidence"
    );
    let future = h.future.as_ref().expect("the future records are counted");
    assert_eq!(future.records, 2);
    assert_eq!(
        future.latest,
        iso_from_unix_ms(DAY0_MS + (64 * 525_960 + 1) * MINUTE_MS)
    );
    // The buckets are those of the ledger without the future records: build a first, a
    // gap, build b last — not every real record in the first bucket.
    let builds: Vec<_> = h.buckets.iter().map(|b| b.build.as_deref()).collect();
    assert_eq!(builds, [Some("a"), None, Some("b")]);
    assert_eq!(h.buckets[2].hitches, 1, "b's own hitch, not the future one");

    // Within the tolerance a record is drawn; without a clock, every record is.
    let near = history(
        &ledger,
        &[],
        &HistoryOptions {
            now_ms: Some(DAY0_MS + 170 * MINUTE_MS - FUTURE_TOLERANCE_MS / 2),
            ..options.clone()
        },
    );
    assert!(near.future.as_ref().is_some_and(|f| f.records == 2));
    assert_eq!(near.span, h.span);
    let unclocked = history(
        &ledger,
        &[],
        &HistoryOptions {
            buckets: 3,
            ..HistoryOptions::default()
        },
    );
    assert!(unclocked.future.is_none());
    let json = serde_json::to_value(&unclocked).expect("json");
    assert!(json.get("future").is_none(), "absent when none: {json}");
}

#[test]
fn a_fix_measures_the_previous_build_against_the_latest() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let request = FixRequest {
        title: "warm the pipeline cache".to_owned(),
        footprints: vec![footprint(COMPILE).id],
        ..FixRequest::default()
    };
    let fix = build_fix(
        &ledger,
        request,
        iso_from_unix_ms(DAY0_MS + 200 * MINUTE_MS),
    )
    .expect("fix");
    assert_eq!(fix.before.summary.build.as_deref(), Some("a"));
    assert_eq!(fix.after.summary.build.as_deref(), Some("b"));
    assert_eq!(fix.before.summary.p95_ms, Some(30.0));
    assert_eq!(fix.after.summary.p95_ms, Some(18.0));
    assert_eq!(fix.before.series.len(), 24);
    assert!(fix.before.series.iter().flatten().all(|p| *p == 30.0));
    assert!(
        fix.before.series.iter().any(Option::is_none),
        "slices without a beat are gaps"
    );

    // The catalogue lists the fix under the footprint it names.
    let cat = catalogue(
        &ledger,
        std::slice::from_ref(&fix),
        &CatalogueOptions::default(),
    );
    let compile = cat.issues.iter().find(|i| i.key == COMPILE).expect("row");
    assert_eq!(compile.fixes.len(), 1);
    assert_eq!(compile.fixes[0].title, "warm the pipeline cache");
    assert_eq!(compile.fixes[0].p95_ms, Some([30.0, 18.0]));
    let physics = cat.issues.iter().find(|i| i.key == PHYSICS).expect("row");
    assert!(physics.fixes.is_empty());

    // A fix line reads back as written.
    let line = serde_json::to_string(&fix).expect("json");
    assert!(line.starts_with(r#"{"type":"fix","#), "{line}");
    let back: framewise_incidents::fold::FixRecord = serde_json::from_str(&line).expect("parse");
    assert_eq!(back, fix);
}

#[test]
fn fix_windows_by_range_and_refusals() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let before =
        parse_window_spec("2026-12-01T00:00:00Z..2026-12-01T00:30:00Z", "before").expect("range");
    assert_eq!(
        before,
        WindowSpec::Range {
            from_ms: DAY0_MS,
            to_ms: DAY0_MS + 30 * MINUTE_MS
        }
    );
    let fix = build_fix(
        &ledger,
        FixRequest {
            title: "t".to_owned(),
            before: Some(before),
            after: Some(WindowSpec::Build("b".to_owned())),
            ..FixRequest::default()
        },
        "2026-12-02T00:00:00.000Z".to_owned(),
    )
    .expect("fix");
    assert_eq!(fix.before.summary.build, None);
    assert_eq!(fix.before.summary.beats, 4);

    for bad in ["2026-12-01..yesterday", "2026-12-02..2026-12-01", ""] {
        assert!(matches!(
            parse_window_spec(bad, "after"),
            Err(FixError::BadWindow { .. })
        ));
    }
    let err = build_fix(
        &ledger,
        FixRequest {
            before: Some(WindowSpec::Build("zzz".to_owned())),
            ..FixRequest::default()
        },
        String::new(),
    )
    .expect_err("no such build");
    assert_eq!(
        err.to_string(),
        "no evidence for before window \"zzz\": builds with evidence: a, b"
    );
    let one_build: Vec<Record> = records
        .into_iter()
        .filter(|r| r.common().build.as_deref() == Some("a"))
        .collect();
    let err = build_fix(
        &Ledger::new(&one_build),
        FixRequest::default(),
        String::new(),
    )
    .expect_err("one build");
    assert!(matches!(err, FixError::NotEnoughBuilds { ref builds } if builds == &["a"]));
}

#[test]
fn fixes_file_tolerates_torn_and_bad_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fixes.jsonl");
    assert_eq!(read_fixes(&path).expect("missing is empty").fixes.len(), 0);
    let records = two_builds();
    let fix = build_fix(
        &Ledger::new(&records),
        FixRequest {
            title: "x".to_owned(),
            ..FixRequest::default()
        },
        "2026-12-02T00:00:00.000Z".to_owned(),
    )
    .expect("fix");
    let line = serde_json::to_string(&fix).expect("json");
    let text = format!(
        "{line}\nnot json\n{{\"type\":\"fix\"}}\n\n{line}\n{}",
        &line[..20]
    );
    std::fs::write(&path, text).expect("write");
    let read = read_fixes(&path).expect("read");
    assert_eq!(read.fixes.len(), 2);
    assert_eq!(read.malformed, 2);
    assert!(read.torn_last_line);
}

#[test]
fn records_without_a_readable_time_are_left_out() {
    let mut records = two_builds();
    if let Some(Record::Hitch(h)) = records.last_mut() {
        h.common.at = "not a time".to_owned();
    }
    let ledger = Ledger::new(&records);
    assert_eq!(ledger.unstamped(), 1);
    assert_eq!(
        catalogue(&ledger, &[], &CatalogueOptions::default()).incidents,
        3
    );
    assert!(unix_ms_from_iso("not a time").is_none());
}

/// Builds A, B, A: A ran at minutes 0 and 120 (p95 10 ms), B in between (p95 50 ms). Every
/// record of A says 10 ms.
fn interleaved() -> Vec<Record> {
    vec![
        beat(0, "a", 8.0, 10.0),
        beat(30, "b", 40.0, 50.0),
        beat(60, "b", 40.0, 50.0),
        hitch(61, "b", 90.0, COMPILE),
        beat(90, "b", 40.0, 50.0),
        beat(120, "a", 8.0, 10.0),
    ]
}

/// A build's window spans other builds' records when they ran in between: its figures count
/// its own records only, and the latest build is the one that ran last, not the one that
/// appeared last.
#[test]
fn a_build_is_measured_by_its_own_records_and_the_latest_is_the_one_that_ran_last() {
    let records = interleaved();
    let ledger = Ledger::new(&records);
    let h = history(&ledger, &[], &HistoryOptions::default());
    let rows: Vec<_> = h
        .builds
        .iter()
        .map(|b| {
            let s = &b.summary;
            (s.build.as_deref(), s.beats, s.hitches, s.p95_ms)
        })
        .collect();
    assert_eq!(
        rows,
        [(Some("b"), 3, 1, Some(50.0)), (Some("a"), 2, 0, Some(10.0)),],
        "in order of last evidence, each build's own records"
    );
    let a = &h.builds[1].summary;
    assert_eq!(
        (a.from.as_str(), a.to.as_str()),
        (
            iso_from_unix_ms(DAY0_MS).as_str(),
            iso_from_unix_ms(DAY0_MS + 120 * MINUTE_MS).as_str()
        ),
        "the window still runs from A's first evidence to its last"
    );
    assert_eq!(latest_builds(&ledger), ["b", "a"]);
    let only_a = summarize_build(&ledger, "a", DAY0_MS, DAY0_MS + 120 * MINUTE_MS);
    assert_eq!((only_a.beats, only_a.p95_ms), (2, Some(10.0)));
    let everything = summarize_window(&ledger, DAY0_MS, DAY0_MS + 120 * MINUTE_MS);
    assert_eq!(everything.beats, 5, "a time range counts every build");

    // Recording the revert of B: before is B (it ran before A's latest stretch), after is A.
    let fix = build_fix(
        &ledger,
        FixRequest {
            title: "revert b".to_owned(),
            ..FixRequest::default()
        },
        iso_from_unix_ms(DAY0_MS + 200 * MINUTE_MS),
    )
    .expect("fix");
    assert_eq!(fix.before.summary.build.as_deref(), Some("b"));
    assert_eq!(fix.after.summary.build.as_deref(), Some("a"));
    assert_eq!(fix.before.summary.p95_ms, Some(50.0));
    assert_eq!(
        (fix.after.summary.beats, fix.after.summary.p95_ms),
        (2, Some(10.0))
    );
    assert_eq!(fix.after.summary.hitches, 0, "b's hitch is not a's");
    assert!(
        fix.after.series.iter().flatten().all(|p| *p == 10.0),
        "a's series holds a's heartbeats only: {:?}",
        fix.after.series
    );

    // An after build given: the before window defaults to the build that ran before it.
    let fix = build_fix(
        &ledger,
        FixRequest {
            title: "t".to_owned(),
            after: Some(WindowSpec::Build("b".to_owned())),
            ..FixRequest::default()
        },
        String::new(),
    )
    .expect("fix");
    assert_eq!(fix.before.summary.build.as_deref(), Some("a"));
}

/// `n` heartbeats of `seconds` of play each, a minute apart from `minute` on.
fn beats(minute: i64, build: &str, n: i64, seconds: f64) -> Vec<Record> {
    (0..n)
        .map(|i| {
            let mut b = beat(minute + i, build, 16.6, 20.0);
            if let Record::Heartbeat(h) = &mut b {
                h.window.seconds = Some(seconds);
            }
            b
        })
        .collect()
}

/// Builds A and B both hitch once every 10 s of play; A ran two one-minute sessions a day
/// apart, B one: both rates are 360 an hour of play, whatever the idle time between sessions.
#[test]
fn a_hitch_rate_is_per_hour_of_play_not_of_the_wall_clock() {
    let day = 24 * 60;
    let mut records = Vec::new();
    for (start, build) in [(0, "a"), (day, "a"), (day + 60, "b")] {
        records.extend(beats(start, build, 6, 10.0));
        records.extend((0..6).map(|i| hitch(start + i, build, 40.0, PHYSICS)));
    }
    let ledger = Ledger::new(&records);
    let fix = build_fix(
        &ledger,
        FixRequest {
            title: "t".to_owned(),
            ..FixRequest::default()
        },
        String::new(),
    )
    .expect("fix");
    let (before, after) = (&fix.before.summary, &fix.after.summary);
    assert_eq!((before.hitches, before.play_s), (12, Some(120.0)));
    assert_eq!((after.hitches, after.play_s), (6, Some(60.0)));
    assert_eq!(before.hitches_per_hour, Some(360.0));
    assert_eq!(after.hitches_per_hour, Some(360.0));

    // Without heartbeats the log does not say how long the game was played: no rate, and why.
    let hitches_only: Vec<Record> = records
        .iter()
        .filter(|r| matches!(r, Record::Hitch(_)))
        .cloned()
        .collect();
    let s = summarize_build(
        &Ledger::new(&hitches_only),
        "a",
        DAY0_MS,
        DAY0_MS + 2 * day * MINUTE_MS,
    );
    assert_eq!(s.hitches, 12);
    assert_eq!((s.hitches_per_hour, s.play_s), (None, None));
    assert!(
        s.rate_unknown
            .as_deref()
            .is_some_and(|why| why.starts_with("no heartbeat in the window")),
        "{:?}",
        s.rate_unknown
    );
    let json = serde_json::to_value(&s).expect("json");
    assert!(json.get("hitches_per_hour").is_none(), "{json}");
    assert!(json["rate_unknown"].is_string(), "{json}");

    // Under a minute of play is too little for a rate (3 hitches in 20 s is no 540 an hour).
    let short: Vec<Record> = beats(0, "a", 2, 10.0)
        .into_iter()
        .chain((0..3).map(|i| hitch(i, "a", 40.0, PHYSICS)))
        .collect();
    let s = summarize_window(&Ledger::new(&short), DAY0_MS, DAY0_MS + 10 * MINUTE_MS);
    assert_eq!((s.hitches_per_hour, s.play_s), (None, Some(20.0)));
    assert!(
        s.rate_unknown
            .as_deref()
            .is_some_and(|w| w.contains("under a minute")),
        "{:?}",
        s.rate_unknown
    );
}

fn range(from_minute: i64, to_minute: i64) -> WindowSpec {
    WindowSpec::Range {
        from_ms: DAY0_MS + from_minute * MINUTE_MS,
        to_ms: DAY0_MS + to_minute * MINUTE_MS,
    }
}

fn fix_between(
    records: &[Record],
    before: WindowSpec,
    after: WindowSpec,
) -> Result<FixRecord, FixError> {
    build_fix(
        &Ledger::new(records),
        FixRequest {
            title: "t".to_owned(),
            before: Some(before),
            after: Some(after),
            ..FixRequest::default()
        },
        String::new(),
    )
}

/// A fix that measured nothing, or the same thing on both sides, is refused rather than
/// recorded as measured.
#[test]
fn a_fix_without_evidence_or_with_overlapping_windows_is_refused() {
    let err = fix_between(&[], range(0, 60), range(60, 120)).expect_err("an empty ledger");
    assert!(
        matches!(
            err,
            FixError::EmptyWindow {
                label: "before",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "the before window 2026-12-01T00:00:00.000Z..2026-12-01T01:00:00.000Z holds no \
         evidence (no heartbeat, hitch or jitter): a fix measured against nothing is not \
         recorded"
    );
    let records = two_builds();
    // Build a is minutes 0–59, b 120–179: the gap between holds nothing.
    let err = fix_between(&records, range(60, 110), WindowSpec::Build("b".to_owned()))
        .expect_err("an empty before");
    assert!(
        matches!(
            err,
            FixError::EmptyWindow {
                label: "before",
                ..
            }
        ),
        "{err}"
    );
    let err = fix_between(&records, WindowSpec::Build("a".to_owned()), range(60, 110))
        .expect_err("an empty after");
    assert!(
        matches!(err, FixError::EmptyWindow { label: "after", .. }),
        "{err}"
    );

    let err = fix_between(
        &records,
        WindowSpec::Build("b".to_owned()),
        WindowSpec::Build("b".to_owned()),
    )
    .expect_err("the same build");
    assert_eq!(
        err.to_string(),
        "the before and after windows are the same (build \"b\"): a fix compares two windows"
    );
    let err = fix_between(&records, range(0, 60), range(0, 60)).expect_err("the same range");
    assert!(matches!(err, FixError::SameWindows { .. }), "{err}");
    let err = fix_between(&records, range(0, 150), range(120, 180)).expect_err("ranges overlap");
    assert!(
        matches!(err, FixError::Overlapping { ref why, .. } if why == "their ranges share time"),
        "{err}"
    );
    // A range and a build that share records.
    let err = fix_between(&records, range(0, 130), WindowSpec::Build("b".to_owned()))
        .expect_err("a range holding b's records");
    assert!(
        matches!(err, FixError::Overlapping { ref why, .. } if why == "2 records would be measured on both sides"),
        "{err}"
    );
    // Ranges that touch at an instant are apart, unless a record lies on it.
    let touching = fix_between(&records, range(0, 60), range(60, 180)).expect("apart");
    assert_eq!(touching.before.summary.beats, 6);
    let err = fix_between(&records, range(0, 50), range(50, 180)).expect_err("the beat at 50");
    assert!(
        matches!(err, FixError::Overlapping { ref why, .. } if why == "1 record would be measured on both sides"),
        "{err}"
    );
    // Two builds whose spans interleave share no record: B against A is a fix.
    let interleaved = interleaved();
    fix_between(
        &interleaved,
        WindowSpec::Build("b".to_owned()),
        WindowSpec::Build("a".to_owned()),
    )
    .expect("interleaved builds are apart");
    // No build ran before the after range: nothing to default the before window to.
    let err = build_fix(
        &Ledger::new(&records),
        FixRequest {
            after: Some(range(-10, 30)),
            ..FixRequest::default()
        },
        String::new(),
    )
    .expect_err("nothing before minute -10");
    assert!(matches!(err, FixError::NoBuildBefore { .. }), "{err}");
}

#[test]
fn a_fix_repeats_another_with_the_same_title_footprints_and_windows() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let make = |title: &str, footprints: &[&str], before: Option<WindowSpec>| {
        build_fix(
            &ledger,
            FixRequest {
                title: title.to_owned(),
                footprints: footprints.iter().map(|f| (*f).to_owned()).collect(),
                before,
                ..FixRequest::default()
            },
            iso_from_unix_ms(DAY0_MS + 300 * MINUTE_MS),
        )
        .expect("fix")
    };
    let first = make("warm the cache", &["0a0b0c0d", "11111111"], None);
    assert!(make("warm the cache ", &["11111111", "0A0B0C0D"], None).repeats(&first));
    assert!(!make("warm the cache", &["11111111"], None).repeats(&first));
    assert!(!make("cool the cache", &["0a0b0c0d", "11111111"], None).repeats(&first));
    let ranged = make(
        "warm the cache",
        &["0a0b0c0d", "11111111"],
        Some(range(0, 30)),
    );
    assert!(!ranged.repeats(&first), "another before window");
    assert!(make(
        "warm the cache",
        &["0a0b0c0d", "11111111"],
        Some(range(0, 30))
    )
    .repeats(&ranged));
}

/// A record dated 1970 (a device whose clock was reset) is set aside and counted, as one
/// dated after now is: drawn, it would squeeze every real record into the last bucket.
#[test]
fn a_record_dated_before_2020_is_left_out_of_the_timeline_and_counted() {
    let mut records = two_builds();
    let mut reset = beat(0, "a", 16.6, 30.0);
    if let Record::Heartbeat(h) = &mut reset {
        h.common.at = "1970-01-01T00:00:00.000Z".to_owned();
    }
    records.push(reset);
    let ledger = Ledger::new(&records);
    let h = history(
        &ledger,
        &[],
        &HistoryOptions {
            buckets: 3,
            ..HistoryOptions::default()
        },
    );
    let past = h.past.as_ref().expect("counted");
    assert_eq!(past.records, 1);
    assert_eq!(past.earliest, "1970-01-01T00:00:00.000Z");
    let span = h.span.as_ref().expect("evidence");
    assert_eq!(span.from, iso_from_unix_ms(DAY0_MS));
    let beats: Vec<u64> = h.buckets.iter().map(|b| b.beats).collect();
    assert_eq!(beats, [6, 0, 6], "a's and b's heartbeats where they ran");
    assert_eq!(h.builds[0].summary.beats, 6, "a's window starts in 2026");
    let json = serde_json::to_value(&h).expect("json");
    assert_eq!(json["past"]["records"], 1);

    let (kept, misdated) = ledger.plausibly_dated(Some(DAY0_MS));
    assert_eq!(
        misdated,
        Misdated { future: 7, past: 1 },
        "b's seven are ahead"
    );
    assert_eq!(kept.len(), records.len() - 8);
    let (kept, misdated) = ledger.plausibly_dated(None);
    assert_eq!((kept.len(), misdated.past), (records.len() - 1, 1));
    assert_eq!(EARLIEST_MS, unix_ms_from_iso("2020-01-01").expect("a date"));
    // The fix's default windows are a against b, a starting in 2026.
    let fix = build_fix(&kept, FixRequest::default(), String::new()).expect("fix");
    assert_eq!(fix.before.summary.from, iso_from_unix_ms(DAY0_MS));
}

/// A jitter size too large to round (made in code: the reader sets such a line aside) is a
/// number in the catalogue, never infinity or `null`.
#[test]
fn a_huge_jitter_size_stays_a_number() {
    let records = vec![jitter(1, "a", "snap", 1e306, None)];
    let cat = catalogue(&Ledger::new(&records), &[], &CatalogueOptions::default());
    let worst = cat.issues[0].worst.as_ref().expect("measured");
    assert_eq!(worst.value, 1e306);
    let json = serde_json::to_value(&cat).expect("json");
    assert_eq!(json["issues"][0]["worst"]["value"], 1e306);
}

/// A fix line written by hand with the id in capitals is listed under its issue; a fixes file
/// saved with a byte-order mark reads.
#[test]
fn fixes_name_ids_in_any_case_and_a_bom_is_skipped() {
    let records = two_builds();
    let ledger = Ledger::new(&records);
    let mut fix = build_fix(
        &ledger,
        FixRequest {
            title: "x".to_owned(),
            ..FixRequest::default()
        },
        "2026-12-02T00:00:00.000Z".to_owned(),
    )
    .expect("fix");
    fix.footprints = vec![footprint(COMPILE).id.to_uppercase()];
    let cat = catalogue(
        &ledger,
        std::slice::from_ref(&fix),
        &CatalogueOptions::default(),
    );
    let compile = cat.issues.iter().find(|i| i.key == COMPILE).expect("row");
    assert_eq!(compile.fixes.len(), 1);

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fixes.jsonl");
    let line = serde_json::to_string(&fix).expect("json");
    std::fs::write(&path, format!("\u{feff}{line}\n")).expect("write");
    let read = read_fixes(&path).expect("read");
    assert_eq!((read.fixes.len(), read.malformed), (1, 0));
}
