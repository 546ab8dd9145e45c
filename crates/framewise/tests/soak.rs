//! A long session's recorder memory stays flat: bounded by the threads, not by the session.
//!
//! Measured by allocation accounting (every heap byte the process holds, from the test
//! allocator), in a child process of its own so no other test's allocations are counted.
//! The bounds are on bytes, never on time.

use std::process::Command;
use std::time::Duration;

use framewise::{counter, scope, CaptureLevel, GpuPassTiming, Session, Workload, WriterMode};

use crate::common;

const FRAMES: u64 = 200_000;
const WARM_UP: u64 = 20_000;
/// What the frame directory may cost per frame while recording; nothing else may grow.
const MAX_GROWTH_BYTES_PER_FRAME: f64 = 16.0;
/// What stop may allocate on top of what the session holds: writing the directory must
/// not build or copy it (200,000 frames' entries are 16 MB as `FrameEntry`s).
const MAX_STOP_BYTES: i64 = 1024 * 1024;

fn wait_written(session: &Session, frames: u64) {
    while session.frames_written() < frames {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Child side: records `FRAMES` frames and asserts on the heap it held.
#[test]
#[ignore = "run by `recorder_memory_stays_flat_over_a_long_session` in a child process"]
fn soak_child() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(dir.path().join("soak.sgpt"))
        .unwrap();
    let mut base = 0;
    for frame in 0..FRAMES {
        {
            let _frame = scope!("frame");
            for _ in 0..2 {
                let _system = scope!("system");
                counter!("soak.count", 1);
            }
        }
        session.end_frame();
        if frame + 1 == WARM_UP {
            wait_written(&session, WARM_UP);
            base = common::live_heap_bytes();
        }
    }
    wait_written(&session, FRAMES);
    let end = common::live_heap_bytes();
    let per_frame = (end - base) as f64 / (FRAMES - WARM_UP) as f64;
    common::reset_peak_heap_bytes();
    let report = session.stop().unwrap();
    let stop_bytes = common::peak_heap_bytes() - end;
    println!(
        "soak: heap {base} B after {WARM_UP} frames, {end} B after {FRAMES} \
         ({per_frame:.2} B per frame); stop allocated {stop_bytes} B at its peak"
    );
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.frames_written, FRAMES);
    assert!(
        per_frame <= MAX_GROWTH_BYTES_PER_FRAME,
        "recorder memory grew {per_frame:.2} B per frame (at most {MAX_GROWTH_BYTES_PER_FRAME})"
    );
    assert!(
        stop_bytes <= MAX_STOP_BYTES,
        "stop allocated {stop_bytes} B on top of the session's {end} B"
    );
}

/// Runs the ignored test `child` alone in a child process (so no other test's allocations are
/// counted) and asserts it passed and printed `marker`.
fn run_child(child: &str, marker: &str) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            child,
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{child} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(marker), "{child} ran nothing: {stdout}");
}

#[test]
fn recorder_memory_stays_flat_over_a_long_session() {
    run_child("soak::soak_child", "soak: heap");
}

/// Calls a game goes on making after its session finished (at its frame limit): they hold
/// nothing, however long the game runs on.
const AFTER_FINISH_FRAMES: u64 = 100_000;

/// Child side: a session that finishes at its frame limit, then a game that goes on submitting
/// GPU work, delivering its timings and recording workloads every frame.
#[test]
#[ignore = "run by `a_finished_session_holds_nothing_for_a_game_that_runs_on` in a child process"]
fn after_finish_child() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .level(CaptureLevel::Workload)
        .gpu_queue("graphics", 1.0)
        .frame_limit(10)
        .start(dir.path().join("after-finish.sgpt"))
        .unwrap();
    let queue = session.gpu_queue("graphics").unwrap();
    let pass = session.pass_label("main");
    let frame = |session: &Session| {
        let ticket = session.gpu_submit(queue);
        session.record_workload(
            pass,
            Workload {
                draws: Some(10),
                ..Workload::default()
            },
        );
        session.gpu_deliver(
            ticket,
            &[GpuPassTiming {
                pass,
                depth: 0,
                begin_ticks: Some(0),
                end_ticks: Some(100),
            }],
        );
        session.end_frame();
    };
    for _ in 0..10 {
        frame(&session);
    }
    assert!(session.is_finished(), "the frame limit finished it");
    // Warm: whatever the first calls after finish allocate once.
    for _ in 0..1_000 {
        frame(&session);
    }
    let base = common::live_heap_bytes();
    for _ in 0..AFTER_FINISH_FRAMES {
        frame(&session);
    }
    let grown = common::live_heap_bytes() - base;
    println!("after finish: heap grew {grown} B over {AFTER_FINISH_FRAMES} frames");
    assert!(
        grown <= 4096,
        "a finished session held {grown} B over {AFTER_FINISH_FRAMES} frames"
    );
    let report = session.stop().unwrap();
    assert_eq!(report.frames_written, 10);
}

#[test]
fn a_finished_session_holds_nothing_for_a_game_that_runs_on() {
    run_child("soak::after_finish_child", "after finish: heap");
}
