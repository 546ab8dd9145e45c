//! A game killed with SIGKILL leaves a capture that reads back up to its last whole frame,
//! and loses only the frame in flight and the frames closed that the writer (which polls
//! every millisecond when idle) had not written yet.

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use framewise::{counter, scope, Session, WriterMode};
use framewise_format::Defect;

use crate::common;

/// Child side: records frames forever, one every `FRAMEWISE_TEST_CRASH_PERIOD_US`
/// microseconds of sleep after each close, telling the parent which frames it closed and
/// which the writer wrote (and flushed), until it is killed.
#[test]
#[ignore = "run by the SIGKILL tests below in a child process"]
fn crash_child() {
    let path = std::env::var("FRAMEWISE_TEST_CRASH_CAPTURE").expect("capture path");
    let period_us: u64 = std::env::var("FRAMEWISE_TEST_CRASH_PERIOD_US")
        .expect("frame period")
        .parse()
        .expect("a frame period in microseconds");
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
        std::thread::sleep(Duration::from_micros(period_us));
    }
}

/// Starts `crash_child` writing to `path`, sleeping `period_us` after each frame close.
fn spawn_child(path: &Path, period_us: u64) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "crash::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("FRAMEWISE_TEST_CRASH_CAPTURE", path)
        .env("FRAMEWISE_TEST_CRASH_PERIOD_US", period_us.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, BufReader::new(stdout).lines())
}

/// The highest frames the child reported written (flushed) and closed, folded over its lines.
#[derive(Default)]
struct Progress {
    last_written: Option<u64>,
    last_closed: Option<u64>,
}

impl Progress {
    /// Folds one line of the child's; whether it reported a frame closed.
    fn note(&mut self, line: &str) -> bool {
        let number = |prefix: &str| line.strip_prefix(prefix)?.trim().parse::<u64>().ok();
        if let Some(n) = number("written ") {
            self.last_written = Some(self.last_written.map_or(n, |w| w.max(n)));
        }
        if let Some(n) = number("closed ") {
            self.last_closed = Some(self.last_closed.map_or(n, |c| c.max(n)));
            return true;
        }
        false
    }
}

/// Runs `crash_child` (a frame every `period_us`) until `kill_now(progress, the line reported
/// a close)` says so, SIGKILLs it (no destructor, no stop, no flush runs), then folds the
/// lines it printed before it died, which are still in the pipe.
fn record_then_kill(
    path: &Path,
    period_us: u64,
    kill_now: impl Fn(&Progress, bool) -> bool,
) -> Progress {
    let (mut child, mut lines) = spawn_child(path, period_us);
    let mut progress = Progress::default();
    for line in lines.by_ref() {
        let closed = progress.note(&line.unwrap());
        if kill_now(&progress, closed) {
            break;
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    for line in lines {
        let Ok(line) = line else { break };
        progress.note(&line);
    }
    progress
}

/// The frames read back from a killed child's capture: only its tail may be damaged, and
/// they run from frame 0 without a gap, each with the child's 21 spans.
fn recovered_frames(path: &Path) -> u64 {
    let capture = common::open(path);
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
    assert!(frames
        .iter()
        .all(|f| !f.lanes.is_empty() && f.lanes[0].spans.len() == 21));
    recovered
}

#[test]
fn a_sigkilled_game_leaves_every_completed_frame() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.sgpt");
    let progress = record_then_kill(&path, 500, |progress, _| {
        progress.last_written.is_some_and(|w| w >= 150)
    });
    let (last_written, last_closed) = (
        progress.last_written.unwrap(),
        progress.last_closed.unwrap(),
    );
    assert!(last_written >= 150);

    let recovered = recovered_frames(&path);
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
}

/// A 60 Hz game killed just after it closed frame N: frames 0..N-1 closed at least a frame
/// period (16.7 ms) before the kill, far more than the writer's 1 ms poll, so all of them
/// read back; only frame N (closed within the last millisecond, maybe not yet written) and
/// the frame in flight may be lost. The parent kills right after reading a `closed` line;
/// the child's last close is read from the pipe after the kill, so a parent that read late
/// is accounted for.
#[test]
fn a_sigkilled_60hz_game_loses_at_most_the_frame_in_flight_and_the_last_closed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash-60hz.sgpt");
    let progress = record_then_kill(&path, 16_667, |progress, closed| {
        closed && progress.last_closed.is_some_and(|c| c >= 30)
    });
    let last_closed = progress.last_closed.unwrap();

    let recovered = recovered_frames(&path);
    let closed = last_closed + 1;
    assert!(
        recovered + 1 >= closed,
        "{closed} frames closed, {recovered} read back: a 60 Hz game lost more than the \
         frame closed in the writer's last poll"
    );
    // Nothing the game had not closed: at most the frame whose close the child had not yet
    // printed when it died.
    assert!(
        recovered <= closed + 1,
        "{recovered} frames read back, {closed} were seen closed"
    );
}
