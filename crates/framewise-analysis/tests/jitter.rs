//! `find_jitter`: the motion monitor replayed over a capture's motion tracks (declared in
//! META settings, positions in gauges), with held (paused) frames and cuts honoured.

use framewise_analysis::model::{CounterKind, Numeric, SourceKind};
use framewise_analysis::motion::{JitterGuessKind, JitterKind};
use framewise_analysis::{find_jitter, CaptureBuilder, FrameInput};

const FRAME_NS: u64 = 16_666_667;

/// 300 frames of a unit walking east at 5 m/s (mm gauges), teleported 2 m north from
/// `jump_at` on; `paused` frames are paused (the unit stops, and wobbles); a cut at `cut_at`.
/// Without `declared`, the track's floor is not in META.
fn capture(
    jump_at: u64,
    paused: &[u64],
    cut_at: Option<u64>,
    declared: bool,
) -> framewise_analysis::Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    let meta = b.meta_mut();
    if declared {
        meta.settings
            .push(("motion.unit.floor_mm".into(), "300".into()));
    }
    meta.settings.push(("motion.unit".into(), "m".into()));
    meta.situation.push(("view".into(), "top".into()));
    let play = b.phase("play");
    let [x, z, cuts] = ["motion.unit.x_mm", "motion.unit.z_mm", "motion.unit.cuts"]
        .map(|name| b.counter(name, CounterKind::Gauge, Numeric::Integer));
    let mut f = FrameInput::default();
    let mut x_mm = 0i64;
    for i in 0..300u64 {
        f.clear();
        f.index = i;
        f.phase = Some(play);
        f.paused = paused.contains(&i);
        f.cpu_begin_ns = i * FRAME_NS;
        f.cpu_end_ns = f.cpu_begin_ns + FRAME_NS / 2;
        if !f.paused {
            x_mm += 83;
        }
        // While paused the point is not the game's to judge: it wobbles 3 m (a free camera).
        let z_mm = if i >= jump_at {
            2000
        } else if f.paused && i % 2 == 1 {
            3000
        } else {
            0
        };
        f.counters.push((x, x_mm));
        f.counters.push((z, z_mm));
        if cut_at == Some(i) {
            f.counters.push((cuts, 1));
        }
        b.push_frame(&f);
    }
    b.finish()
}

#[test]
fn a_teleport_in_a_capture_is_a_snap() {
    let events = find_jitter(&capture(150, &[], None, true));
    assert_eq!(events.len(), 1, "{events:#?}");
    let e = &events[0];
    assert_eq!(
        (e.track.as_str(), e.kind, e.frame),
        ("unit", JitterKind::Snap, 150)
    );
    assert_eq!(e.classification[0].guess, JitterGuessKind::Snap);
    assert_eq!(e.jump, [0.0, 0.0, 2.0]);
    assert!(e.classification[0]
        .evidence
        .contains("2m off its trajectory"));
    assert_eq!(
        e.footprint().key,
        "jitter|unit|snap|play|snap|horizontal|ctx:view=top"
    );
}

#[test]
fn paused_frames_and_cuts_are_not_judged() {
    // Paused frames are held: their wobble is not judged.
    assert!(find_jitter(&capture(1000, &[100, 101, 102, 103], None, true)).is_empty());
    // A declared cut at the teleport: no jump.
    assert!(find_jitter(&capture(150, &[], Some(150), true)).is_empty());
    // Undeclared tracks are not judged (the detector never guesses a floor).
    assert!(find_jitter(&capture(150, &[], None, false)).is_empty());
    // The control: the same paused capture with a real jump reports it.
    assert_eq!(
        find_jitter(&capture(150, &[100, 101, 102, 103], None, true)).len(),
        1
    );
}
