//! The demo's motion tracks, for the jitter detector: the player unit, and the camera
//! following it. Both are points on the ground plane (x, z; y is 0), in metres.
//!
//! The unit's floor is well under the snap-back bug's jump (at least [`SNAP_BACK_M`]); the
//! camera's is under what the camera's smoothing passes on of such a jump in one frame
//! (about 6% of it at 60 Hz), and far above a millimetre's rounding.
//!
//! [`SNAP_BACK_M`]: crate::sim::SNAP_BACK_M

use std::time::Duration;

use framewise::motion::{MotionClock, MotionTrack, TrackSpec};
use framewise::SessionBuilder;

use crate::math::Vec2;

/// The unit's floor, metres.
pub const UNIT_FLOOR_M: f64 = 0.5;
/// The camera's floor, metres.
pub const CAMERA_FLOOR_M: f64 = 0.03;

/// The tracks the demo declares: `unit`, and `camera` following it.
pub fn track_specs() -> [TrackSpec; 2] {
    [
        TrackSpec::new("unit", UNIT_FLOOR_M),
        TrackSpec::new("camera", CAMERA_FLOOR_M).follows("unit"),
    ]
}

/// Declares the tracks, the unit label and the sim's dt clamp on the session.
pub fn declare(builder: SessionBuilder, max_dt: Duration) -> SessionBuilder {
    track_specs()
        .iter()
        .fold(builder, |b, spec| b.motion_track(spec))
        .motion_unit("m")
        .motion_long_frame(max_dt)
}

/// The handles, made once per run.
#[derive(Clone, Copy, Debug)]
pub struct Tracks {
    unit: MotionTrack,
    camera: MotionTrack,
    clock: MotionClock,
}

impl Tracks {
    /// The demo's tracks.
    pub fn new() -> Self {
        Self {
            unit: MotionTrack::new("unit"),
            camera: MotionTrack::new("camera"),
            clock: MotionClock::new(),
        }
    }

    /// This frame's positions; `sim_clock` when the positions follow a fixed step rather
    /// than the frame clock.
    pub fn record(&self, unit: Vec2, camera: Vec2, sim_clock: Option<Duration>) {
        let ground = |p: Vec2| [f64::from(p.x), 0.0, f64::from(p.y)];
        self.unit.record(ground(unit));
        self.camera.record(ground(camera));
        if let Some(t) = sim_clock {
            self.clock.set(t);
        }
    }
}

impl Default for Tracks {
    fn default() -> Self {
        Self::new()
    }
}
