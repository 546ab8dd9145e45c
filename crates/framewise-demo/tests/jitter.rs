//! The snap-back bug, found from the capture alone: the motion tracks the demo records are
//! replayed through the jitter detector (`framewise_analysis::find_jitter`), which must name
//! the unit's snaps, and the camera's as the passenger of them, and nothing else.

use framewise_analysis::motion::{JitterEvent, JitterGuessKind, JitterKind};

use crate::common::recorded;

fn jitter() -> Vec<JitterEvent> {
    let run = recorded();
    let capture = framewise_analysis::open(&run.path, &framewise_analysis::LoadOptions::default())
        .expect("the capture loads");
    framewise_analysis::find_jitter(&capture)
}

#[test]
fn the_snap_bug_is_found_as_unit_snaps_the_camera_follows() {
    let run = recorded();
    let snaps = &run.outcome.snaps;
    assert!(!snaps.is_empty(), "the shared run has the bug firing");
    let events = jitter();
    let unit: Vec<&JitterEvent> = events.iter().filter(|e| e.track == "unit").collect();
    let camera: Vec<&JitterEvent> = events.iter().filter(|e| e.track == "camera").collect();
    assert_eq!(unit.len() + camera.len(), events.len(), "{events:#?}");
    // Every unit record is a snap at a frame where the bug fired, and every firing is a
    // record or counted onto one by the rate limit (one record per second per track).
    for e in &unit {
        assert_eq!(e.kind, JitterKind::Snap, "{e:#?}");
        assert_eq!(e.classification[0].guess, JitterGuessKind::Snap, "{e:#?}");
        assert!(
            snaps.contains(&e.frame),
            "frame {} is not a snap: {e:#?}",
            e.frame
        );
        assert!(e.units >= 2.5, "{e:#?}");
        assert_eq!(e.phase.as_deref(), Some("play"));
        assert_eq!(
            e.footprint().key,
            "jitter|unit|snap|play|snap|horizontal|ctx:squad=solo,view=top"
        );
    }
    let found = unit.len() as u64
        + unit
            .iter()
            .filter_map(|e| e.dropped_since_last)
            .sum::<u64>();
    assert_eq!(found, snaps.len() as u64, "snaps at {snaps:?}; {events:#?}");
    // The camera smooths the jump but still jumps in the same frame: it is the passenger.
    assert!(!camera.is_empty(), "{events:#?}");
    for e in &camera {
        assert!(snaps.contains(&e.frame), "{e:#?}");
        assert_eq!(
            e.classification[0].guess,
            JitterGuessKind::FollowsTrack,
            "{e:#?}"
        );
        assert_eq!(e.coincident, vec!["unit".to_owned()]);
    }
}
