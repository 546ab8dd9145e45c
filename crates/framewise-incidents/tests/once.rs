//! Appending once: an occurrence (session, type, frame) is written at most once, a jitter
//! event becomes the record the log carries, and what is appended after a torn line (a
//! writer crashed mid-line) reads whole.

use framewise_detect::hitch_classify::Confidence as DetectConfidence;
use framewise_detect::motion::{JitterEvent, JitterGuess, JitterGuessKind, JitterKind};
use framewise_incidents::{
    append_once, jitter_record, read_all, Appender, Common, Confidence, DropCounts,
    HeartbeatRecord, Record, SessionEndRecord, Window, WrittenCounts,
};

fn common(session: Option<&str>) -> Common {
    Common {
        at: "2026-12-01T18:00:00.000Z".to_owned(),
        session: session.map(str::to_owned),
        ..Common::default()
    }
}

fn beat(session: Option<&str>, frame: u64) -> Record {
    Record::Heartbeat(HeartbeatRecord {
        common: common(session),
        frame,
        window: Window {
            frames: 600,
            ..Window::default()
        },
        counters: Default::default(),
        hitches: 0,
    })
}

fn end(session: &str) -> Record {
    Record::SessionEnd(SessionEndRecord {
        common: common(Some(session)),
        frames: 1200,
        paused_frames: 0,
        duration_s: 20.0,
        written: WrittenCounts::default(),
        dropped: DropCounts::default(),
    })
}

const A: &str = "000102030405060708090a0b0c0d0e0f";
const B: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

#[test]
fn appending_the_same_records_twice_adds_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perf.jsonl");
    let records = vec![beat(Some(A), 599), beat(Some(A), 1199), end(A)];
    let first = append_once(&path, &records).expect("first");
    assert_eq!((first.appended, first.already), (3, 0));
    let bytes = std::fs::read(&path).expect("read");
    let second = append_once(&path, &records).expect("second");
    assert_eq!((second.appended, second.already), (0, 3));
    assert_eq!(std::fs::read(&path).expect("read again"), bytes);
}

#[test]
fn occurrences_differ_by_session_type_and_frame() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perf.jsonl");
    append_once(&path, &[beat(Some(A), 599), end(A)]).expect("first");
    // Another frame, another session, and a record with no session are all new; a repeat
    // inside the batch is not.
    let more = vec![
        beat(Some(A), 1199),
        beat(Some(B), 599),
        end(B),
        end(B),
        beat(None, 599),
    ];
    let outcome = append_once(&path, &more).expect("more");
    assert_eq!((outcome.appended, outcome.already), (4, 1));
    assert_eq!(read_all(&path).expect("read").records.len(), 6);
    // No session id names no occurrence: appended every time.
    let again = append_once(&path, &[beat(None, 599)]).expect("again");
    assert_eq!(again.appended, 1);
}

#[test]
fn a_torn_last_line_is_counted_and_its_occurrence_appended() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perf.jsonl");
    append_once(&path, &[beat(Some(A), 599)]).expect("first");
    let torn = serde_json::to_string(&beat(Some(A), 1199)).expect("json");
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.extend_from_slice(&torn.as_bytes()[..torn.len() / 2]);
    std::fs::write(&path, &bytes).expect("write");
    let outcome = append_once(&path, &[beat(Some(A), 599), beat(Some(A), 1199)]).expect("once");
    assert_eq!(outcome.skipped_lines, 1);
    assert_eq!((outcome.appended, outcome.already), (1, 1));
}

#[test]
fn a_jitter_event_keeps_its_fields_phase_situation_and_footprint() {
    let event = JitterEvent {
        t_ms: 1500.0,
        track: "unit".to_owned(),
        kind: JitterKind::Snap,
        frame: 90,
        jump: [0.0, 0.8, 0.0],
        units: 0.8,
        unit: "m".to_owned(),
        travel_units: 0.1,
        speed: 6.0,
        dt_ms: 16.7,
        median_dt_ms: None,
        from: [1.0, 0.0, 0.0],
        to: [1.1, 0.8, 0.0],
        frames: None,
        duration_ms: None,
        amplitude: None,
        coincident: vec!["camera".to_owned()],
        reach: None,
        classification: vec![JitterGuess {
            guess: JitterGuessKind::Snap,
            confidence: DetectConfidence::Medium,
            evidence: "one jump of 0.8u".to_owned(),
        }],
        phase: Some("play".to_owned()),
        situation: Some("stance=foot".to_owned()),
        dropped_since_last: None,
    };
    let base = common(Some(A));
    let record = jitter_record(&event, &base);
    assert_eq!(record.common.session.as_deref(), Some(A));
    assert_eq!(record.common.phase.as_deref(), Some("play"));
    assert_eq!(record.common.ctx.as_deref(), Some("stance=foot"));
    assert_eq!(
        (record.track.as_str(), record.kind.as_str()),
        ("unit", "snap")
    );
    assert_eq!(record.frame, 90);
    assert_eq!(record.classification[0].guess, "snap");
    assert_eq!(record.classification[0].confidence, Confidence::Medium);
    assert_eq!(record.footprint, event.footprint().into());
    assert!(record
        .footprint
        .key
        .starts_with("jitter|unit|snap|play|snap|"));
    // Not measured, so absent from the line.
    let line = serde_json::to_string(&Record::Jitter(record)).expect("json");
    assert!(!line.contains("median_dt_ms"), "{line}");
    let back = framewise_incidents::parse_line(line.as_bytes()).expect("parses");
    assert_eq!(back.occurrence().and_then(|o| o.frame), Some(90));

    // The camera jumping in the same frame is another occurrence.
    let camera = JitterEvent {
        track: "camera".to_owned(),
        ..event
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perf.jsonl");
    let both = [back, Record::Jitter(jitter_record(&camera, &base))];
    let outcome = append_once(&path, &both).expect("append");
    assert_eq!((outcome.appended, outcome.already), (2, 0));
}

/// A FIFO where the log should be is refused at once, never opened (opening it would wait
/// for a writer forever).
#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_the_log_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perf.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let fifo = path.clone();
    std::thread::spawn(move || {
        let appended = append_once(&fifo, &[beat(Some(A), 599)]).map(|o| o.appended);
        let read = read_all(&fifo).map(|r| r.records.len());
        let opened = framewise_incidents::Appender::open(&fifo).map(|_| ());
        let _ = tx.send((appended.is_err(), read.is_err(), opened.is_err()));
    });
    // Generous: the calls return at once; the limit only turns a hang into a failure.
    let outcome = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("refused without waiting for a writer");
    assert_eq!(outcome, (true, true, true));
}

#[test]
fn records_appended_after_a_torn_line_read_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perf.jsonl");
    Appender::open(&path)
        .and_then(|mut log| log.append(&beat(None, 1)))
        .expect("append");
    // A writer crashed halfway through its line.
    let whole = std::fs::read(&path).expect("read");
    let mut torn = whole.clone();
    torn.extend_from_slice(&whole[..whole.len() / 2]);
    std::fs::write(&path, &torn).expect("write");
    assert!(read_all(&path).expect("read").torn_last_line);

    // The next session appends two records.
    let mut log = Appender::open(&path).expect("reopen");
    log.append(&beat(None, 2)).expect("append");
    log.append(&beat(None, 3)).expect("append");
    let read = read_all(&path).expect("read");
    assert_eq!(read.records, [beat(None, 1), beat(None, 2), beat(None, 3)]);
    assert_eq!(read.malformed, 1, "the torn line, on its own");
    assert!(!read.torn_last_line);

    // A file that ends whole gets nothing added by opening it.
    let before = std::fs::read(&path).expect("read");
    drop(Appender::open(&path).expect("reopen"));
    assert_eq!(std::fs::read(&path).expect("read"), before);
}
