//! Motion tracks: the host feeds each named point's world position once per frame (and
//! declares held frames, cuts and which track follows which), so the jitter detector
//! (`framewise_detect::motion`) can replay the session after the fact.
//!
//! Nothing here is a new record kind: a track is a handful of counters and META settings
//! with fixed names (docs/CONCEPTS.md, "Motion tracks and jitter"), which every reader
//! already carries. For a track `NAME`:
//!
//! | name | kind | what |
//! |---|---|---|
//! | `motion.NAME.x_mm`, `.y_mm`, `.z_mm` | gauge | the position in thousandths of the host's unit (mm when the unit is the metre), y up |
//! | `motion.NAME.reach_mm` | gauge | the anchor distance, when the track declares one |
//! | `motion.NAME.held` | sum | 1 in a frame whose motion the host declared not the track's own (input-driven) |
//! | `motion.NAME.cuts` | sum | cuts (a teleport or view change on purpose) declared in the frame |
//! | `motion.clock_us` | gauge | the host's clock for motion (its simulation time), µs; without it, the frame's start |
//! | META `motion.NAME.floor_mm` | setting | the smallest jump worth reporting |
//! | META `motion.NAME.follows`, `motion.NAME.reach` | settings | the track it follows; the anchor's name |
//! | META `motion.long_frame_ms`, `motion.unit` | settings | the host's dt clamp; the unit label |
//!
//! Declare the tracks on the builder ([`SessionBuilder::motion_track`]), make one
//! [`MotionTrack`] handle per track once, and call [`MotionTrack::record`] once per frame
//! before the frame ends. Recording is three gauge stores; nothing is judged on the game
//! thread.

use std::time::Duration;

use framewise_detect::motion::names::{
    track_settings, TrackNames, CLOCK_GAUGE, LONG_FRAME_SETTING, MILLI, UNIT_SETTING,
};

use crate::{Counter, Gauge, SessionBuilder};

pub use framewise_detect::motion::TrackSpec;

/// A value in thousandths, rounded; non-finite values read 0.
fn milli(v: f64) -> i64 {
    if v.is_finite() {
        (v * MILLI).round() as i64
    } else {
        0
    }
}

/// A handle to one motion track's counters: make it once, record every frame.
#[derive(Clone, Copy, Debug)]
pub struct MotionTrack {
    position: [Gauge; 3],
    reach: Gauge,
    held: Counter,
    cuts: Counter,
}

impl MotionTrack {
    /// The track named `name` (declare it on the builder with [`SessionBuilder::motion_track`]).
    pub fn new(name: &str) -> Self {
        let n = TrackNames::of(name);
        Self {
            position: n.position.map(|p| Gauge::new(&p)),
            reach: Gauge::new(&n.reach),
            held: Counter::sum(&n.held),
            cuts: Counter::sum(&n.cuts),
        }
    }

    /// This frame's world position, host units (y up).
    #[inline]
    pub fn record(&self, position: [f64; 3]) {
        for (gauge, v) in self.position.iter().zip(position) {
            gauge.set(milli(v));
        }
    }

    /// This frame's anchor distance (the camera's boom), host units.
    #[inline]
    pub fn record_reach(&self, reach: f64) {
        self.reach.set(milli(reach));
    }

    /// This frame's motion is not the track's own (look input swung it, the game is
    /// paused): it is not judged, and the track re-seeds after it. Paused frames are held
    /// without being declared.
    #[inline]
    pub fn held(&self) {
        self.held.add(1);
    }

    /// The track moved on purpose this frame (a teleport, a respawn, a view change): it
    /// forgets its trajectory before this frame's position.
    #[inline]
    pub fn cut(&self) {
        self.cuts.add(1);
    }
}

/// The host's clock for motion: set it each frame to the time its positions follow (its
/// simulation time) when that is not the frame's start, e.g. a fixed-step simulation.
#[derive(Clone, Copy, Debug)]
pub struct MotionClock(Gauge);

impl MotionClock {
    /// The clock's gauge (`motion.clock_us`).
    pub fn new() -> Self {
        Self(Gauge::new(CLOCK_GAUGE))
    }

    /// This frame's time on the host's clock.
    #[inline]
    pub fn set(&self, t: Duration) {
        self.0.set(i64::try_from(t.as_micros()).unwrap_or(i64::MAX));
    }
}

impl Default for MotionClock {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionBuilder {
    /// Declares a motion track in META: its floor, and what it follows and its anchor's
    /// name when the spec says so.
    pub fn motion_track(self, spec: &TrackSpec) -> Self {
        track_settings(spec)
            .into_iter()
            .fold(self, |b, (key, value)| b.setting(key, value))
    }

    /// The longest frame the host's simulation integrates whole (its dt clamp): a jump in a
    /// frame at least this long is explained as the stall catching up. Default 100 ms.
    pub fn motion_long_frame(self, long_frame: Duration) -> Self {
        self.setting(
            LONG_FRAME_SETTING,
            format!("{}", long_frame.as_secs_f64() * 1000.0),
        )
    }

    /// The label of the host's position unit in jitter evidence (`m`). Default `u`.
    pub fn motion_unit(self, unit: impl Into<String>) -> Self {
        self.setting(UNIT_SETTING, unit)
    }
}
