//! Two processes appending to one `perf.jsonl` at once lose and tear no line.

use std::path::Path;
use std::process::Command;

use framewise_incidents::{
    read_all, Appender, Common, Confidence, Footprint, Guess, HitchRecord, Record,
};

const RECORDS_PER_WRITER: u64 = 10_000;
const CHILD_PATH_ENV: &str = "FRAMEWISE_INCIDENTS_TEST_PATH";
const CHILD_WRITER_ENV: &str = "FRAMEWISE_INCIDENTS_TEST_WRITER";

fn hitch(writer: &str, frame: u64) -> Record {
    // Lines of different lengths (a few hundred bytes to several KiB), so a torn or
    // interleaved write would leave a line that does not parse.
    let evidence = "x".repeat((frame % 37) as usize * 100);
    Record::Hitch(HitchRecord {
        common: Common {
            at: framewise_incidents::now_iso(),
            session: Some(writer.to_owned()),
            ..Common::default()
        },
        frame,
        frame_ms: 40.0,
        median_ms: Some(16.0),
        threshold_ms: 32.0,
        work_ms: None,
        gpu_ms: None,
        delta: Default::default(),
        scopes: Vec::new(),
        classification: vec![Guess {
            guess: "unknown-by-elimination".into(),
            confidence: Confidence::Low,
            evidence,
            scope: None,
            site: None,
        }],
        dropped_since_last: None,
        footprint: Footprint {
            v: 1,
            id: "00000000".into(),
            key: "hitch|?|unknown-by-elimination".into(),
        },
    })
}

/// The child: run only when the parent test spawns this test binary with the environment set.
#[test]
#[ignore = "the writer process of two_processes_append_whole_lines; it runs as a child"]
fn child_appender() {
    let (Some(path), Some(writer)) = (
        std::env::var_os(CHILD_PATH_ENV),
        std::env::var(CHILD_WRITER_ENV).ok(),
    ) else {
        panic!("{CHILD_PATH_ENV} and {CHILD_WRITER_ENV} must be set");
    };
    let mut log = Appender::open(Path::new(&path)).expect("open");
    for frame in 0..RECORDS_PER_WRITER {
        log.append(&hitch(&writer, frame)).expect("append");
    }
}

#[test]
fn two_processes_append_whole_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("perf.jsonl");
    let exe = std::env::current_exe().expect("test binary");
    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|writer| {
            Command::new(&exe)
                .args([
                    "--ignored",
                    "--exact",
                    "concurrent::child_appender",
                    "--quiet",
                ])
                .env(CHILD_PATH_ENV, &path)
                .env(CHILD_WRITER_ENV, writer)
                // The child's own test summary must not read as this run's.
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn the writer")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("wait").success(), "a writer failed");
    }
    let read = read_all(&path).expect("read");
    assert_eq!(read.malformed, 0, "no line torn or interleaved");
    assert!(!read.torn_last_line);
    assert_eq!(read.records.len() as u64, 2 * RECORDS_PER_WRITER);
    // Each writer's lines are all there, in its own order.
    for writer in ["a", "b"] {
        let frames: Vec<u64> = read
            .records
            .iter()
            .filter_map(|r| match r {
                Record::Hitch(h) if h.common.session.as_deref() == Some(writer) => Some(h.frame),
                _ => None,
            })
            .collect();
        assert_eq!(
            frames,
            (0..RECORDS_PER_WRITER).collect::<Vec<_>>(),
            "{writer}"
        );
    }
    let text = std::fs::read_to_string(&path).expect("text");
    let (empty, lines): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.is_empty());
    assert_eq!(lines.len() as u64, 2 * RECORDS_PER_WRITER);
    // A writer that opens the file while the other's first line is being written may see
    // it end mid-line (a reader sees a write's pages as they are copied in) and write the
    // newline `Appender::open` gives a torn file: an empty line, which readers skip. At
    // most one a writer.
    assert!(empty.len() <= 2, "{} empty lines", empty.len());
}
