//! A game killed with SIGKILL leaves a capture that reads back up to its last whole frame.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use framewise::{counter, scope, Session, WriterMode};
use framewise_format::Defect;

use crate::common;

/// Child side: records frames forever, telling the parent which frames it closed and which
/// the writer wrote (and flushed), until it is killed.
#[test]
#[ignore = "run by `a_sigkilled_game_leaves_every_completed_frame` in a child process"]
fn crash_child() {
    let path = std::env::var("FRAMEWISE_TEST_CRASH_CAPTURE").expect("capture path");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .on_frame_written(|written| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "written {}", written.index);
            let _ = out.flush();
        })
        .start(path.as_str())
        .unwrap();
    for frame in 0u64.. {
        {
            let _update = scope!("update");
            for _ in 0..20 {
                let _entity = scope!("entity");
            }
            counter!("frames", 1);
        }
        session.end_frame();
        {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "closed {frame}");
            let _ = out.flush();
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

#[test]
fn a_sigkilled_game_leaves_every_completed_frame() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.sgpt");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "crash::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FRAMEWISE_TEST_CRASH_CAPTURE", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let (mut last_written, mut last_closed) = (None::<u64>, None::<u64>);
    let note = |line: &str, written: &mut Option<u64>, closed: &mut Option<u64>| {
        if let Some(n) = line
            .strip_prefix("written ")
            .and_then(|n| n.trim().parse().ok())
        {
            *written = Some(written.map_or(n, |w: u64| w.max(n)));
        }
        if let Some(n) = line
            .strip_prefix("closed ")
            .and_then(|n| n.trim().parse().ok())
        {
            *closed = Some(closed.map_or(n, |c: u64| c.max(n)));
        }
    };
    for line in lines.by_ref() {
        let line = line.unwrap();
        note(&line, &mut last_written, &mut last_closed);
        if last_written.is_some_and(|w| w >= 150) {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no stop, no flush runs
    let status = child.wait().unwrap();
    assert!(!status.success());
    // Lines the child printed before it died are still in the pipe.
    for line in lines {
        let Ok(line) = line else { break };
        note(&line, &mut last_written, &mut last_closed);
    }
    let (last_written, last_closed) = (last_written.unwrap(), last_closed.unwrap());
    assert!(last_written >= 150);

    let capture = common::open(&path);
    assert!(!capture.opened_by_directory(), "the child never stopped");
    for defect in capture.defects() {
        assert!(
            matches!(
                defect,
                Defect::TruncatedTail { .. } | Defect::Unclosed { .. }
            ),
            "only the tail may be damaged: {defect}"
        );
    }
    let frames = common::frames(&capture);
    let indices: Vec<u64> = frames.iter().map(|f| f.index).collect();
    let recovered = indices.len() as u64;
    assert_eq!(
        indices,
        (0..recovered).collect::<Vec<_>>(),
        "contiguous from frame 0"
    );
    // Every frame reported written (flushed) before the kill reads back ...
    assert!(
        recovered > last_written,
        "recovered {recovered} frames, {last_written} was written"
    );
    // ... and the capture holds nothing the game had not closed: at most the one in flight
    // beyond the last close the parent saw.
    assert!(
        recovered <= last_closed + 2,
        "recovered {recovered}, last closed {last_closed}"
    );
    assert!(frames
        .iter()
        .all(|f| !f.lanes.is_empty() && f.lanes[0].spans.len() == 21));
}
