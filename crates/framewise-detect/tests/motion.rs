//! The motion monitor on synthetic tracks: what must be reported, and what must not.

use framewise_detect::motion::{
    JitterEvent, JitterGuessKind, JitterKind, MotionMonitor, MotionOptions, Sample, TrackSpec,
};

const DT_MS: f64 = 1000.0 / 60.0;

/// A monitor of `unit` (floor 0.3 m) and `camera` (floor 0.1 m, follows `unit`, reach `boom`).
fn monitor() -> MotionMonitor {
    MotionMonitor::new(
        vec![
            TrackSpec::new("unit", 0.3),
            TrackSpec::new("camera", 0.1).follows("unit").reach("boom"),
        ],
        MotionOptions {
            unit: "m".into(),
            ..MotionOptions::default()
        },
    )
    .expect("valid tracks")
}

/// A sample at `frame`, time `t_ms`, in phase `play`.
fn at(position: [f64; 3], frame: u64, t_ms: f64) -> Sample<'static> {
    Sample {
        position,
        t_ms,
        frame,
        phase: Some("play"),
        ..Sample::default()
    }
}

/// Feeds `unit` along `path(frame, t_s)` for `frames` frames at 60 Hz and drains.
fn run_unit(frames: u64, path: impl Fn(u64, f64) -> [f64; 3]) -> Vec<JitterEvent> {
    let mut m = monitor();
    for f in 0..frames {
        let t_ms = f as f64 * DT_MS;
        m.sample("unit", &at(path(f, t_ms / 1000.0), f, t_ms))
            .expect("declared");
    }
    m.drain(true)
}

/// Walking east at 5 m/s.
fn walk(t_s: f64) -> [f64; 3] {
    [5.0 * t_s, 0.0, 0.0]
}

fn top(e: &JitterEvent) -> JitterGuessKind {
    e.classification[0].guess
}

#[test]
fn smooth_motion_reports_nothing() {
    // A curved route at 7 m/s with frame times wobbling ±30%: positions follow the clock.
    let mut m = monitor();
    let mut t_ms: f64 = 0.0;
    for f in 0..1200u64 {
        let t_s = t_ms / 1000.0;
        let p = [30.0 * (t_s * 0.23).cos(), 0.0, 30.0 * (t_s * 0.23).sin()];
        m.sample("unit", &at(p, f, t_ms)).expect("declared");
        t_ms += DT_MS * (1.0 + 0.3 * ((f as f64) * 1.7).sin());
    }
    assert!(m.drain(true).is_empty());
    assert_eq!(m.stats().tracks[0].events, 0);
}

#[test]
fn a_teleport_is_one_snap() {
    let events = run_unit(300, |f, t| {
        let p = walk(t);
        if f >= 100 {
            [p[0] + 2.0, p[1], p[2]]
        } else {
            p
        }
    });
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(
        (e.track.as_str(), e.kind, e.frame),
        ("unit", JitterKind::Snap, 100)
    );
    assert_eq!(top(e), JitterGuessKind::Snap);
    assert_eq!(e.jump, [2.0, 0.0, 0.0]);
    assert_eq!(e.units, 2.0);
    assert_eq!(e.speed, 5.0);
    assert_eq!(e.dt_ms, 16.7);
    assert_eq!(e.median_dt_ms, Some(16.7));
    assert!(e.frames.is_none() && e.amplitude.is_none());
    assert!(e.classification[0]
        .evidence
        .contains("2m off its trajectory"));
    assert_eq!(e.footprint().key, "jitter|unit|snap|play|snap|horizontal");
}

#[test]
fn a_one_frame_snap_back_is_one_snap() {
    // The position published for one frame comes from 3 m back, then the true one again.
    let events = run_unit(300, |f, t| {
        let p = walk(t);
        if f == 150 {
            [p[0] - 3.0, p[1], p[2]]
        } else {
            p
        }
    });
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!((events[0].kind, events[0].frame), (JitterKind::Snap, 150));
    assert_eq!(events[0].jump, [-3.0, 0.0, 0.0]);
}

#[test]
fn a_vertical_snap_keys_on_its_axis() {
    let events = run_unit(300, |f, t| {
        let p = walk(t);
        if f >= 100 {
            [p[0], p[1] + 1.5, p[2]]
        } else {
            p
        }
    });
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].footprint().key,
        "jitter|unit|snap|play|snap|vertical"
    );
}

#[test]
fn two_writers_fighting_is_an_oscillation() {
    // Frames 100..=119: every odd frame is drawn 0.5 m off to the side.
    let events = run_unit(300, |f, t| {
        let p = walk(t);
        if (100..120).contains(&f) && f % 2 == 1 {
            [p[0], p[1], p[2] + 0.5]
        } else {
            p
        }
    });
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(e.kind, JitterKind::Oscillation);
    assert_eq!(top(e), JitterGuessKind::Oscillation);
    assert_eq!(e.frame, 101);
    assert!(e.frames.is_some_and(|n| n >= 15), "{e:?}");
    assert!(e.duration_ms.is_some_and(|d| d > 200.0), "{e:?}");
    assert!(e.amplitude.is_some_and(|a| a >= 0.5), "{e:?}");
    assert_eq!(
        e.footprint().key,
        "jitter|unit|oscillation|play|oscillation|horizontal"
    );
}

#[test]
fn a_dash_is_a_change_of_motion_not_a_jump() {
    // 2 m/s, then from frame 100 on 40 m/s: one residual of 0.63 m (twice the floor),
    // never reversed.
    let events = run_unit(300, |f, _| {
        let t_s = f as f64 * DT_MS / 1000.0;
        let t0 = 100.0 * DT_MS / 1000.0;
        let x = if f < 100 {
            2.0 * t_s
        } else {
            2.0 * t0 + 40.0 * (t_s - t0)
        };
        [x, 0.0, 0.0]
    });
    assert!(events.is_empty(), "{events:#?}");
}

#[test]
fn a_jump_in_a_long_frame_is_the_stall_catching_up() {
    // Frame 100 arrives 400 ms after frame 99, but the sim clamps its step to 50 ms.
    let mut m = monitor();
    let (mut t_ms, mut x) = (0.0, 0.0);
    for f in 0..300u64 {
        let step_ms = if f == 100 { 400.0 } else { DT_MS };
        if f > 0 {
            t_ms += step_ms;
            x += 5.0 * step_ms.min(50.0) / 1000.0;
        }
        m.sample("unit", &at([x, 0.0, 0.0], f, t_ms))
            .expect("declared");
    }
    let events = m.drain(true);
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!((e.kind, e.frame), (JitterKind::Snap, 100));
    assert_eq!(top(e), JitterGuessKind::LongFrameCatchUp);
    assert_eq!(e.dt_ms, 400.0);
    assert!(e.classification[0].evidence.contains("a 400ms frame"));
}

/// Feeds `unit` and `camera` per frame: `unit(f, t)` and the camera's (position, boom,
/// held) and drains.
fn run_pair(
    frames: u64,
    unit: impl Fn(u64, f64) -> [f64; 3],
    camera: impl Fn(u64, [f64; 3]) -> ([f64; 3], f64, bool),
    cut_at: Option<u64>,
) -> Vec<JitterEvent> {
    let mut m = monitor();
    for f in 0..frames {
        let t_ms = f as f64 * DT_MS;
        if cut_at == Some(f) {
            m.cut(None);
        }
        let u = unit(f, t_ms / 1000.0);
        m.sample("unit", &at(u, f, t_ms)).expect("declared");
        let (c, boom, held) = camera(f, u);
        let s = Sample {
            reach: Some(boom),
            held,
            ..at(c, f, t_ms)
        };
        m.sample("camera", &s).expect("declared");
    }
    m.drain(true)
}

fn teleported(f: u64, t: f64) -> [f64; 3] {
    let p = walk(t);
    if f >= 100 {
        [p[0], p[1], p[2] + 3.0]
    } else {
        p
    }
}

/// The camera 10 m behind and above the unit.
fn boom_camera(_: u64, u: [f64; 3]) -> ([f64; 3], f64, bool) {
    ([u[0] - 6.0, u[1] + 8.0, u[2]], 10.0, false)
}

#[test]
fn the_camera_following_a_jump_is_the_passenger() {
    let events = run_pair(300, teleported, boom_camera, None);
    assert_eq!(events.len(), 2, "{events:#?}");
    let unit = events
        .iter()
        .find(|e| e.track == "unit")
        .expect("unit record");
    let camera = events
        .iter()
        .find(|e| e.track == "camera")
        .expect("camera record");
    assert_eq!(top(unit), JitterGuessKind::Snap);
    assert_eq!(unit.coincident, vec!["camera".to_owned()]);
    assert_eq!(top(camera), JitterGuessKind::FollowsTrack);
    assert_eq!(camera.classification[1].guess, JitterGuessKind::Snap);
    assert_eq!(camera.coincident, vec!["unit".to_owned()]);
    assert_eq!(
        camera.footprint().key,
        "jitter|camera|snap|play|follows-track|horizontal"
    );
}

#[test]
fn a_boom_clamp_is_a_reach_change() {
    // At frame 100 the boom snaps from 10 m to 8 m (a wall clamp): the eye moves 2 m
    // along the boom towards the unit, which walks on undisturbed.
    let events = run_pair(
        300,
        |_, t| walk(t),
        |f, u| {
            let boom = if f >= 100 { 8.0 } else { 10.0 };
            ([u[0] - 0.6 * boom, u[1] + 0.8 * boom, u[2]], boom, false)
        },
        None,
    );
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(e.track, "camera");
    assert_eq!(top(e), JitterGuessKind::ReachChange);
    let reach = e.reach.as_ref().expect("reach sampled");
    assert_eq!(
        (reach.name.as_str(), reach.before, reach.after),
        ("boom", 10.0, 8.0)
    );
    assert!(e.coincident.is_empty());
}

#[test]
fn held_frames_and_cuts_are_respected() {
    // A mouse flick swings the camera 5 m in frame 100, declared held: nothing.
    let flick = |held: bool| {
        move |f: u64, u: [f64; 3]| {
            let swing = if f >= 100 { 5.0 } else { 0.0 };
            (
                [u[0] - 6.0, u[1] + 8.0, u[2] + swing],
                10.0,
                held && f == 100,
            )
        }
    };
    assert!(run_pair(300, |_, t| walk(t), flick(true), None).is_empty());
    // The same swing undeclared is a jump (the control).
    let undeclared = run_pair(300, |_, t| walk(t), flick(false), None);
    assert_eq!(undeclared.len(), 1, "{undeclared:#?}");
    // A teleport the host declares as a cut: nothing, on either track.
    assert!(run_pair(300, teleported, boom_camera, Some(100)).is_empty());
    // The same teleport undeclared: both tracks report (the first test's case).
    assert_eq!(run_pair(300, teleported, boom_camera, None).len(), 2);
}

#[test]
fn one_record_per_second_per_track_counting_the_rest() {
    // A one-frame glitch every 10 frames (6 a second) for 10 s, growing each time.
    let events = run_unit(600, |f, t| {
        let p = walk(t);
        if f >= 10 && f % 10 == 0 {
            [p[0], p[1], p[2] + 1.0 + f as f64 / 1000.0]
        } else {
            p
        }
    });
    // Each second's window (opened by its first burst: frames 10, 70, …, 550) keeps its
    // biggest burst — the last, they grow — and counts the others onto it.
    let frames: Vec<u64> = events.iter().map(|e| e.frame).collect();
    let expected: Vec<u64> = (1..=9).map(|w| w * 60).chain([590]).collect();
    assert_eq!(frames, expected);
    let dropped: u64 = events.iter().filter_map(|e| e.dropped_since_last).sum();
    assert_eq!(dropped + events.len() as u64, 59);
}

#[test]
fn the_session_cap_holds_and_says_what_it_dropped() {
    let mut m = MotionMonitor::new(
        vec![TrackSpec::new("unit", 0.3)],
        MotionOptions {
            max_records_per_session: 2,
            min_record_gap_ms: 0.0,
            ..MotionOptions::default()
        },
    )
    .expect("valid");
    let mut all = Vec::new();
    for f in 0..600u64 {
        let t_ms = f as f64 * DT_MS;
        let p = walk(t_ms / 1000.0);
        let p = if f >= 10 && f % 20 == 0 {
            [p[0], 0.0, 1.0]
        } else {
            p
        };
        m.sample("unit", &at(p, f, t_ms)).expect("declared");
        all.extend(m.drain(false));
    }
    all.extend(m.drain(true));
    assert_eq!(all.len(), 2, "{all:#?}");
    let stats = m.stats();
    assert_eq!(stats.records, 2);
    assert_eq!(stats.dropped, 29 - 2);
}

#[test]
fn bad_declarations_are_refused() {
    assert!(MotionMonitor::new(vec![TrackSpec::new("a", 0.0)], MotionOptions::default()).is_err());
    assert!(MotionMonitor::new(
        vec![TrackSpec::new("a", 1.0), TrackSpec::new("a", 1.0)],
        MotionOptions::default()
    )
    .is_err());
    assert!(MotionMonitor::new(
        vec![TrackSpec::new("a", 1.0).follows("b")],
        MotionOptions::default()
    )
    .is_err());
    let mut m = monitor();
    assert!(m.sample("nobody", &at([0.0; 3], 0, 0.0)).is_err());
}
