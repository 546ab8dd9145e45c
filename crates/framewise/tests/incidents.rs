//! The live incident log: written on the writer thread into `.framewise/`, the same
//! records a capture's frames give after the fact.

use std::path::Path;
use std::time::Duration;

use framewise::motion::{MotionClock, MotionTrack, TrackSpec};
use framewise::world::{InputsHeld, Spawns, WorldCamera};
use framewise::{scope, Session, WriterMode};
use framewise_incidents::derive::{automated_from_env, Deriver, SessionFacts, HITCH_WINDOW_NS};
use framewise_incidents::{read_all, read_profile, Record, PROFILE_SCHEMA};

use crate::common;

const HITCH_FRAME: u64 = 40;
const MARK_FRAME: u64 = HITCH_FRAME + 1;
const SNAP_FRAME: u64 = 20;
const FRAMES: u64 = 60;
/// How long the paused frames on either side of the hitch frame last: past the hitch
/// record's window, so that the hitch frame has its window to itself.
const ISOLATION: Duration = Duration::from_nanos(HITCH_WINDOW_NS + 10_000_000);

/// Records a short session whose frame 40 sleeps 80 ms inside `stall`, whose frame 41
/// carries a usermark over the time since frame 40 began, and whose `unit` track (moving 1
/// unit per 10 ms step of its motion clock) lands 3 units off its line in frame 20 and is
/// back on it the frame after. The world object: `move` held throughout, `fire` from frame
/// 30, three goblins spawned in the stall's frame, the camera above the unit.
///
/// Frames 39 and 41 are paused and last longer than the hitch window: on a loaded machine
/// any frame can be stretched past the stall (a first frame took 327 ms at nice 19 beside a
/// busy core), and the window keeps only its longest hitch; with no other frame judged in
/// the stall's window nor in the usermark's, which frame they name is not the machine's
/// timing.
fn record(capture: &Path, dir: Option<&Path>, on: Option<bool>) -> framewise::Report {
    let mut builder = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .build_id("test-build")
        .situation("view", "top")
        .motion_track(&TrackSpec::new("unit", 0.5))
        .world_inputs(&["move", "fire"]);
    if let Some(dir) = dir {
        builder = builder.incident_dir(dir);
    }
    if let Some(on) = on {
        builder = builder.incident_log(on);
    }
    let session = builder.start(capture).unwrap();
    session.set_phase("play");
    let (unit, clock) = (MotionTrack::new("unit"), MotionClock::new());
    let (goblins, inputs, camera) = (Spawns::new("goblin"), InputsHeld::new(), WorldCamera::new());
    let mut stall_begin_ns = 0;
    for frame in 0..FRAMES {
        let isolating = frame == HITCH_FRAME - 1 || frame == HITCH_FRAME + 1;
        session.set_paused(isolating);
        if frame == HITCH_FRAME {
            stall_begin_ns = session.now_ns();
        }
        inputs.set(if frame >= 30 { 0b11 } else { 0b01 });
        camera.record_pose([frame as f64, 10.0, 0.0], [0.0, 0.0, 0.0, 1.0]);
        let off = if frame == SNAP_FRAME { 3.0 } else { 0.0 };
        unit.record([frame as f64 + off, 0.0, 0.0]);
        clock.set(Duration::from_millis(10 * frame));
        {
            let _update = scope!("update");
            std::thread::sleep(Duration::from_millis(1));
            if frame == HITCH_FRAME {
                let _stall = scope!("stall");
                goblins.spawned(3);
                std::thread::sleep(Duration::from_millis(80));
            }
        }
        if frame == MARK_FRAME {
            let window = Duration::from_nanos(session.now_ns() - stall_begin_ns);
            session.usermark_with_window("felt it", window);
        }
        if isolating {
            std::thread::sleep(ISOLATION);
        }
        session.end_frame();
    }
    session.stop().unwrap()
}

#[test]
fn the_live_log_writes_records_and_profile_into_the_directory() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("incidents");
    let dir = tmp.path().join("project").join(".framewise");
    let report = record(&capture, Some(&dir), None);

    for scaffolded in [".gitignore", "framewise.toml", "agent-guide.md"] {
        assert!(dir.join(scaffolded).is_file(), "{scaffolded} scaffolded");
    }
    let read = read_all(&dir.join("perf.jsonl")).unwrap();
    assert_eq!((read.malformed, read.unknown_type), (0, 0));
    assert!(!read.torn_last_line);
    let hitch = read
        .records
        .iter()
        .find_map(|r| match r {
            Record::Hitch(h) if h.frame == HITCH_FRAME => Some(h),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no hitch at frame {HITCH_FRAME}: {:#?}", read.records));
    assert!(hitch.frame_ms >= 80.0);
    assert_eq!(hitch.common.build.as_deref(), Some("test-build"));
    assert_eq!(hitch.common.phase.as_deref(), Some("play"));
    assert_eq!(hitch.common.ctx.as_deref(), Some("view=top"));
    assert_eq!(hitch.scopes[0].name, "update");
    assert!(hitch.scopes.iter().any(|s| s.name == "stall"));
    assert!(!hitch.classification.is_empty());
    let world = hitch
        .common
        .world
        .as_ref()
        .expect("the hitch frame's world");
    assert_eq!(world.spawned.get("goblin"), Some(&3));
    assert!(world.removed.is_empty());
    assert_eq!(world.inputs_held, ["move", "fire"]);
    let camera = world.camera.as_ref().expect("the camera");
    assert_eq!(camera.position, [HITCH_FRAME as f64, 10.0, 0.0]);
    assert_eq!(camera.quaternion, Some([0.0, 0.0, 0.0, 1.0]));
    assert!(
        hitch.delta.keys().all(|k| !k.starts_with("world.")),
        "{:?}",
        hitch.delta
    );
    assert_eq!(hitch.footprint.id.len(), 8);
    let mark = read
        .records
        .iter()
        .find_map(|r| match r {
            Record::Usermark(m) => Some(m),
            _ => None,
        })
        .expect("a usermark record");
    assert_eq!(mark.note.as_deref(), Some("felt it"));
    assert_eq!(mark.frame, MARK_FRAME);
    assert_eq!(mark.worst_frames[0].frame, HITCH_FRAME);
    let jitter: Vec<_> = read
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Jitter(j) => Some(j),
            _ => None,
        })
        .collect();
    let [snap] = jitter.as_slice() else {
        panic!("one jitter record: {:#?}", read.records);
    };
    assert_eq!((snap.track.as_str(), snap.kind.as_str()), ("unit", "snap"));
    assert_eq!(snap.frame, SNAP_FRAME);
    assert_eq!(snap.jump, [3.0, 0.0, 0.0]);
    assert_eq!(snap.classification[0].guess, "snap");
    let world = snap.common.world.as_ref().expect("the jump frame's world");
    assert_eq!(world.inputs_held, ["move"]);
    assert!(world.spawned.is_empty());
    assert_eq!(
        world.camera.as_ref().map(|c| c.position),
        Some([SNAP_FRAME as f64, 10.0, 0.0])
    );
    assert_eq!(
        snap.footprint.key,
        "jitter|unit|snap|play|snap|horizontal|ctx:view=top"
    );
    let Some(Record::SessionEnd(end)) = read.records.last() else {
        panic!("session-end is the last record: {:#?}", read.records);
    };
    assert_eq!(end.frames, report.frames_written);
    assert_eq!(end.written.usermark, 1);
    assert_eq!((end.written.jitter, end.dropped.jitter), (1, 0));
    assert!(end.written.hitch >= 1);

    let profile = read_profile(&dir.join("profile.json")).unwrap();
    assert_eq!(profile.schema, PROFILE_SCHEMA);
    assert_eq!(profile.frame_index, FRAMES - 1);
    assert_eq!(profile.written, end.written);
    assert!(profile.frame.median_ms.is_some());
}

#[test]
fn the_log_is_the_same_when_derived_from_the_capture_afterwards() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("same");
    let dir = tmp.path().join(".framewise");
    record(&capture, Some(&dir), Some(true));
    let live = std::fs::read_to_string(dir.join("perf.jsonl")).unwrap();

    let opened = common::open(&capture);
    let meta = opened.meta().expect("META");
    let mut deriver = Deriver::new(SessionFacts::from_meta(meta, automated_from_env()));
    let mut derived = Vec::new();
    for frame in common::frames(&opened) {
        deriver.observe(&frame, opened.symbols(), &mut derived);
    }
    deriver.finish(opened.symbols(), &mut derived);
    let derived: String = derived
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    assert!(derived.contains("\"type\":\"hitch\""), "{derived}");
    assert!(derived.contains("\"type\":\"jitter\""), "{derived}");
    assert_eq!(
        derived, live,
        "same frames, guesses, footprints and times, byte for byte"
    );
}

#[test]
fn turned_off_it_touches_nothing() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("off");
    let dir = tmp.path().join(".framewise");
    let report = record(&capture, Some(&dir), Some(false));
    assert_eq!(report.frames_written, FRAMES);
    assert!(!dir.exists());
    assert!(report.warnings.is_empty());
}

#[test]
fn a_log_that_cannot_be_opened_warns_and_the_capture_goes_on() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("blocked");
    // A file where the directory should be.
    let dir = tmp.path().join("not-a-dir");
    std::fs::write(&dir, b"").unwrap();
    let report = record(&capture, Some(&dir), None);
    assert_eq!(report.frames_written, FRAMES);
    assert!(
        matches!(
            report.warnings.as_slice(),
            [framewise::Warning::IncidentLog { .. }]
        ),
        "{:?}",
        report.warnings
    );
    // One line that names the path once and says what is wrong with it.
    let line = report.warnings[0].to_string();
    assert_eq!(
        line,
        format!(
            "incident log stopped: {}: exists and is not a directory (remove it or point the \
             incident log elsewhere); the capture goes on",
            dir.display()
        )
    );
}

#[test]
fn a_log_file_that_is_a_fifo_warns_once_naming_it_once() {
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("fifo");
    let dir = tmp.path().join(".framewise");
    std::fs::create_dir(&dir).unwrap();
    let perf = dir.join("perf.jsonl");
    let status = std::process::Command::new("mkfifo")
        .arg(&perf)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let report = record(&capture, Some(&dir), None);
    assert_eq!(report.frames_written, FRAMES);
    let lines: Vec<String> = report.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [format!(
            "incident log stopped: {}: not a regular file; the capture goes on",
            perf.display()
        )]
    );
}

/// A thread that records in some frames only, registered before the thread that records in
/// every frame: in a frame where it recorded nothing, the other thread's spans go into its
/// lane, and the lane after them is one the writer kept from an earlier frame. The live log
/// must see only the frame's own lanes, as the capture holds them: `worker` ran in the even
/// frames alone.
#[test]
fn the_live_log_sees_only_the_lanes_of_the_frame_it_is_told_of() {
    use std::sync::mpsc;
    let _serial = common::serial();
    let (tmp, capture) = common::temp_capture("lanes");
    let dir = tmp.path().join(".framewise");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .incident_dir(&dir)
        .start(capture.as_path())
        .unwrap();
    let (to_worker, frames) = mpsc::channel::<Option<u64>>();
    let (done, acks) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        while let Ok(Some(frame)) = frames.recv() {
            if frame % 2 == 0 {
                let _worker = scope!("worker");
                std::thread::sleep(Duration::from_micros(200));
            }
            done.send(()).unwrap();
        }
    });
    const FRAMES: u64 = 40;
    for frame in 0..FRAMES {
        // The worker records first, so its buffer is registered before this thread's.
        to_worker.send(Some(frame)).unwrap();
        acks.recv().unwrap();
        {
            let _main = scope!("main");
            std::thread::sleep(Duration::from_micros(200));
        }
        session.end_frame();
    }
    to_worker.send(None).unwrap();
    worker.join().unwrap();
    session.stop().unwrap();

    let opened = common::open(&capture);
    let meta = opened.meta().expect("META");
    let mut deriver = Deriver::new(SessionFacts::from_meta(meta, automated_from_env()));
    let mut derived = Vec::new();
    let mut worker_frames = 0;
    for frame in common::frames(&opened) {
        let worker_ran = frame
            .lanes
            .iter()
            .flat_map(|l| &l.spans)
            .any(|s| opened.symbols().name(s.scope) == Some("worker"));
        worker_frames += u64::from(worker_ran);
        deriver.observe(&frame, opened.symbols(), &mut derived);
    }
    deriver.finish(opened.symbols(), &mut derived);
    assert_eq!(
        worker_frames,
        FRAMES / 2,
        "the capture holds the worker's spans once"
    );

    let live = read_profile(&dir.join(framewise_incidents::PROFILE_FILE)).unwrap();
    let worker_count = live.scopes.get("worker").map(|s| s.count);
    assert_eq!(worker_count, Some(FRAMES / 2), "{:#?}", live.scopes);
    let from_capture = deriver.profile(opened.symbols());
    assert_eq!(live.scopes, from_capture.scopes);
}
