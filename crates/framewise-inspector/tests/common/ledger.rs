//! A game project around a capture: the capture in `captures/`, and `.framewise/perf.jsonl`
//! holding the capture's hitches as its own session's incidents, one incident of another
//! session, and one a robot recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use framewise_analysis::{find_hitches, load, HitchOptions, LoadOptions};
use framewise_incidents::{
    iso_from_unix_ms, Appender, Common, Confidence, Guess, HitchRecord, Record,
};

/// 2026-12-01T00:00:00Z.
const DAY0_MS: i64 = 1_796_083_200_000;

fn hitch(session: &str, frame: u64, frame_ms: f64, guess: &str, automated: bool) -> Record {
    let key = format!("hitch|play|{guess}");
    Record::Hitch(HitchRecord {
        common: Common {
            at: iso_from_unix_ms(DAY0_MS + i64::try_from(frame).unwrap_or(0) * 16),
            build: Some("b1".to_owned()),
            phase: Some("play".to_owned()),
            ctx: Some("stance=foot".to_owned()),
            session: Some(session.to_owned()),
            automated,
            ..Common::default()
        },
        frame,
        frame_ms,
        median_ms: None,
        threshold_ms: 25.0,
        work_ms: None,
        gpu_ms: None,
        delta: BTreeMap::new(),
        scopes: Vec::new(),
        classification: vec![Guess {
            guess: guess.to_owned(),
            confidence: Confidence::Medium,
            evidence: format!("{guess}: the evidence"),
            scope: None,
            site: None,
        }],
        dropped_since_last: None,
        footprint: framewise_detect::footprint::footprint(1, &format!("{key}|ctx:stance=foot"))
            .into(),
    })
}

/// The project directory (kept alive by the returned guard) and the capture's copy in it.
pub fn project_around(capture: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let captures = dir.path().join("captures");
    std::fs::create_dir_all(&captures).expect("captures/");
    let copy = captures.join("game.sgpt");
    std::fs::copy(capture, &copy).expect("copy the capture");
    let loaded = load::open(&copy, &LoadOptions::new()).expect("the capture loads");
    let session = loaded
        .meta()
        .session
        .clone()
        .expect("an .sgpt has a session id");
    let fw = dir.path().join(".framewise");
    std::fs::create_dir_all(&fw).expect(".framewise/");
    let mut log = Appender::open(fw.join("perf.jsonl")).expect("perf.jsonl");
    let report = find_hitches(&loaded, &HitchOptions::default());
    assert!(!report.hitches.is_empty(), "the fixture needs hitches");
    for h in &report.hitches {
        let guess = h
            .classification
            .first()
            .map_or("unknown-by-elimination", |g| g.guess.name());
        log.append(&hitch(&session, h.frame, h.duration_ms, guess, false))
            .expect("append");
    }
    log.append(&hitch(&"f".repeat(32), 5, 99.0, "pipeline-compile", false))
        .expect("append");
    log.append(&hitch(&session, 6, 500.0, "spawn-burst", true))
        .expect("append");
    (dir, copy)
}
