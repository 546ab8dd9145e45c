//! A small demo run shared by the capture checks, and helpers to read a capture by name.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use framewise_demo::{DemoConfig, DemoOutcome, Scale, Schedule};
use framewise_format::model::Frame;
use framewise_format::read::Capture;

/// Frames in the shared recorded run.
pub const FRAMES: u64 = 300;
/// The usermark frame of the shared run.
pub const USERMARK_AT: u64 = 200;

/// A process records one session at a time: runs that record take this lock.
static SESSION: Mutex<()> = Mutex::new(());

pub fn session_lock() -> MutexGuard<'static, ()> {
    SESSION.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A small world and image, a pinned step, no environment: quick and deterministic.
pub fn small_config(frames: u64) -> DemoConfig {
    let scale = Scale {
        agents: 600,
        wave_agents: 1000,
        particles: 4096,
        width_px: 320,
        height_px: 180,
        detail_texture_px: 512,
    };
    DemoConfig {
        seed: 7,
        frames,
        threads: 2,
        schedule: Schedule::for_run(frames, scale.agents),
        scale,
        fixed_dt: Some(Duration::from_secs_f64(1.0 / 60.0)),
        output: None,
        use_env: false,
        ..DemoConfig::default()
    }
}

pub struct Recorded {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub outcome: DemoOutcome,
}

/// The shared recorded run: 300 frames, every hitch, the pause, the snap bug and a
/// usermark, recorded at the workload level.
pub fn recorded() -> &'static Recorded {
    static RUN: OnceLock<Recorded> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("demo.sgpt");
        let config = DemoConfig {
            output: Some(path.clone()),
            snap_bug: true,
            usermark_at: Some(USERMARK_AT),
            ..small_config(FRAMES)
        };
        let outcome = {
            let _lock = session_lock();
            framewise_demo::run(config).expect("the demo runs")
        };
        Recorded {
            _dir: dir,
            path,
            outcome,
        }
    })
}

/// Opens the shared run's capture (each test its own reader).
pub fn open(recorded: &Recorded) -> Capture {
    framewise_format::read::open(&recorded.path).expect("the capture opens")
}

/// Every frame of a capture, in order.
pub fn frames(capture: &Capture) -> Vec<Frame> {
    capture
        .frames()
        .collect::<Result<Vec<_>, _>>()
        .expect("every frame decodes")
}

/// A frame's counter values by name.
pub fn counters(capture: &Capture, frame: &Frame) -> HashMap<String, i64> {
    frame
        .counters
        .iter()
        .map(|c| {
            let name = capture
                .symbols()
                .name(c.counter)
                .expect("counter named")
                .to_owned();
            (name, c.value)
        })
        .collect()
}

/// Names of every scope that ran in a frame, on any thread.
pub fn scopes(capture: &Capture, frame: &Frame) -> Vec<String> {
    let mut out: Vec<String> = frame
        .lanes
        .iter()
        .flat_map(|lane| lane.spans.iter())
        .map(|s| {
            capture
                .symbols()
                .name(s.scope)
                .expect("scope named")
                .to_owned()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}
