//! The ledger folds: the catalogue, the timeline and fix windows over hand-made ledgers.

use std::collections::BTreeMap;

use framewise_incidents::fold::{
    build_fix, catalogue, history, parse_window_spec, read_fixes, summarize_window,
    unix_ms_from_iso, CatalogueOptions, FixError, FixRequest, HistoryOptions, Ledger, Occurrences,
    WindowSpec, FUTURE_TOLERANCE_MS,
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
    // Three hitches in 59 minutes.
    assert_eq!(s.hitches_per_hour, Some(3.1));
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
    assert_eq!(all.hitches_per_hour, Some(0.0), "hitches over all of time");
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
