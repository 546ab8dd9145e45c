//! The motion monitor: coordinate continuity of tracked points (jitter).
//!
//! The hitch rule is about time: a frame that took too long. This detector is about space: a
//! tracked point (the player's unit, the camera) that did not arrive where its own motion
//! said it would. It is fed once per rendered frame with each track's world position.
//!
//! **The test** is a one-step constant-velocity prediction: from the last two samples
//! `p0, p1` at `t0, t1`, `p̂ = p1 + (p1 − p0)/(t1 − t0)·(t2 − t1)`; the residual
//! `r = p2 − p̂` is how far the point landed off its own trajectory (½·a·dt² for smooth motion,
//! millimetres). A residual is a **candidate** when `|r| > max(floor, ratio × predicted
//! travel)`. It becomes an **event** only when the next frame **reverses** it — compared as
//! velocity anomalies (residual ÷ frame time): anti-parallel (cos ≤ −0.5) and at least half
//! its size — so a jump landing in a long stall frame is still confirmed by the short frame
//! after it. A residual the next frame does not reverse is a change of motion (a dash, a boom
//! easing out) and is never reported.
//!
//! **Bursts**: events at most [`MotionOptions::burst_gap_frames`] samples apart fold into
//! one burst; one event is a `snap`, two or more an `oscillation`. A burst becomes one
//! [`JitterEvent`] when it closes (silence, a held frame, a cut, or
//! [`MotionOptions::burst_max_ms`] of age).
//!
//! **Explanations rank ahead of the kind**: `follows-track` (the track it declares it
//! follows had an event in the same frame: this one is the passenger), `reach-change` (the
//! host's anchor distance changed by at least 0.7 of the jump: a clamp or a zoom),
//! `long-frame-catch-up` (the jump landed in a frame ≥ the host's long-frame threshold, or
//! ≥ 2× the median frame and ≥ 50 ms: the sim's dt clamp across a stall), then the kind.
//!
//! **Host contract**: the host declares **held** frames (input-driven motion, a pause: the
//! track re-seeds after them) and **cuts** (a teleport or view change on purpose: the
//! track forgets its trajectory). The detector never guesses intent.
//!
//! **Rate limits**: one record per second per track — a window whose record is the track's
//! biggest burst in it, the others counted onto it (`dropped_since_last`) — and
//! [`MotionOptions::max_records_per_session`] per session, whose drops ride on the next record.
//!
//! This follows the JavaScript reference (sloptimize's `motion.js`) with two stated
//! differences. (1) A residual that confirmed a reversal is the jump's own echo in the
//! velocity estimate and is not itself a new candidate: with one-step prediction a
//! one-frame glitch of `d` leaves residuals `d, −2d, d`, whose second reversal sits exactly
//! on the "half its size" bar, so the reference calls the same glitch a snap or a
//! two-event oscillation depending on rounding and frame-time wobble; here it is always a
//! snap, while a point alternating between two writers still reverses every other frame and
//! reads as an oscillation. An oscillation's `frames` is the frames its events span.
//! (2) Every time is the host's sample time (there is no separate wall clock): windows, burst
//! ages and a record's time are all sample times, so replaying a capture gives the records
//! the live monitor gave. Cross-track coincidence compares frame indices.

use crate::footprint::Footprint;
use crate::footprint_key::{footprint_of, JitterKey, KeyRecord};
use crate::hitch_classify::Confidence;

/// Frame times kept per track for the median (the long-frame verdict).
const DT_RING: usize = 64;
/// Recent event frames kept per track for cross-track coincidence.
const EVENT_RING: usize = 8;

/// One tracked point, as the host declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackSpec {
    /// The track's name (`unit`, `camera`).
    pub name: String,
    /// The smallest residual worth calling a jump, host units (> 0).
    pub floor: f64,
    /// The name of the anchor distance the host samples beside the point (`boom`), if any.
    pub reach: Option<String>,
    /// The track this one is attached to (the camera follows the unit), if any.
    pub follows: Option<String>,
}

impl TrackSpec {
    /// A track with this name and floor.
    pub fn new(name: impl Into<String>, floor: f64) -> Self {
        Self {
            name: name.into(),
            floor,
            reach: None,
            follows: None,
        }
    }

    /// Declares the anchor distance the host samples with each position.
    pub fn reach(mut self, name: impl Into<String>) -> Self {
        self.reach = Some(name.into());
        self
    }

    /// Declares the track this one follows.
    pub fn follows(mut self, track: impl Into<String>) -> Self {
        self.follows = Some(track.into());
        self
    }
}

/// The monitor's knobs; `Default` gives the reference's values.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionOptions {
    /// A residual must also exceed this fraction of the frame's predicted travel (0.25).
    pub ratio: f64,
    /// The unit label used in evidence (`u`; `m` for metres).
    pub unit: String,
    /// A frame at least this long cannot have its motion judged: the host sim's dt clamp
    /// (100 ms, the hitch bar, unless the host says otherwise).
    pub long_frame_ms: f64,
    /// Events at most this many samples apart fold into one burst (3).
    pub burst_gap_frames: u64,
    /// A burst closes at this age, ms (2000).
    pub burst_max_ms: f64,
    /// Records per session (200).
    pub max_records_per_session: u64,
    /// Per track, one record per this many ms (1000).
    pub min_record_gap_ms: f64,
}

impl Default for MotionOptions {
    fn default() -> Self {
        Self {
            ratio: 0.25,
            unit: "u".to_owned(),
            long_frame_ms: 100.0,
            burst_gap_frames: 3,
            burst_max_ms: 2000.0,
            max_records_per_session: 200,
            min_record_gap_ms: 1000.0,
        }
    }
}

/// Why a monitor could not be built or fed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MotionError {
    /// A track's floor is not a positive number.
    BadFloor(String),
    /// Two tracks share a name.
    DuplicateTrack(String),
    /// A track follows a track that was not declared.
    UnknownFollows {
        /// The track.
        track: String,
        /// What it says it follows.
        follows: String,
    },
    /// A sample names a track that was not declared.
    UnknownTrack(String),
    /// A META setting of a motion declaration does not parse.
    BadSetting {
        /// The setting's key.
        key: String,
        /// Its value.
        value: String,
    },
}

impl std::fmt::Display for MotionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadFloor(t) => write!(f, "motion track `{t}` needs a positive floor"),
            Self::DuplicateTrack(t) => write!(f, "motion track `{t}` is declared twice"),
            Self::UnknownFollows { track, follows } => write!(
                f,
                "motion track `{track}` follows `{follows}`, which is not a declared track"
            ),
            Self::UnknownTrack(t) => write!(f, "unknown motion track `{t}`"),
            Self::BadSetting { key, value } => {
                write!(f, "META setting {key} = {value:?} is not a number")
            }
        }
    }
}

impl std::error::Error for MotionError {}

/// One rendered frame's sample of one track.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample<'a> {
    /// World position, host units, y up.
    pub position: [f64; 3],
    /// Host time of the frame, ms (one clock for every sample).
    pub t_ms: f64,
    /// The frame's index (named by events; coincidence across tracks compares it).
    pub frame: u64,
    /// The frame's motion is not the track's own (input-driven, paused): re-seed after it.
    pub held: bool,
    /// The anchor distance, when the track declares one.
    pub reach: Option<f64>,
    /// The phase, stamped on an event.
    pub phase: Option<&'a str>,
    /// The canonical situation, stamped on an event.
    pub situation: Option<&'a str>,
}

/// `snap` or `oscillation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JitterKind {
    /// One event.
    Snap,
    /// Two or more events in one burst.
    Oscillation,
}

impl JitterKind {
    /// `snap` or `oscillation`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Snap => "snap",
            Self::Oscillation => "oscillation",
        }
    }
}

/// The closed jitter vocabulary: explanations, then the kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JitterGuessKind {
    /// The track it follows jumped in the same frame.
    FollowsTrack,
    /// Its anchor distance changed by about the jump.
    ReachChange,
    /// The jump landed in a long frame (the sim's dt clamp).
    LongFrameCatchUp,
    /// Reversals in a burst.
    Oscillation,
    /// One jump.
    Snap,
}

impl JitterGuessKind {
    /// The name (`follows-track`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::FollowsTrack => "follows-track",
            Self::ReachChange => "reach-change",
            Self::LongFrameCatchUp => "long-frame-catch-up",
            Self::Oscillation => "oscillation",
            Self::Snap => "snap",
        }
    }
}

/// One ranked guess about a jitter event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JitterGuess {
    /// The guess.
    pub guess: JitterGuessKind,
    /// How sure.
    pub confidence: Confidence,
    /// The numbers it rests on.
    pub evidence: String,
}

/// The anchor distance across a jump.
#[derive(Clone, Debug, PartialEq)]
pub struct ReachChange {
    /// The anchor's name.
    pub name: String,
    /// Before, host units (2 decimals).
    pub before: f64,
    /// After, host units (2 decimals).
    pub after: f64,
}

/// One jitter record: a burst of jumps of one track, as the reference writes it (values
/// rounded as it rounds them).
#[derive(Clone, Debug, PartialEq)]
pub struct JitterEvent {
    /// Host time of the first jump's frame, ms.
    pub t_ms: f64,
    /// The track.
    pub track: String,
    /// `snap` or `oscillation`.
    pub kind: JitterKind,
    /// The frame the (first) jump landed in.
    pub frame: u64,
    /// The off-trajectory displacement, host units (3 decimals).
    pub jump: [f64; 3],
    /// Its length (3 decimals).
    pub units: f64,
    /// The host's unit label, as the evidence prints it (`u`, or the session's
    /// `motion.unit` setting such as `m`).
    pub unit: String,
    /// The travel constant velocity predicted for the frame (3 decimals).
    pub travel_units: f64,
    /// Speed before the jump, host units per second (2 decimals).
    pub speed: f64,
    /// The jump frame's duration, ms (1 decimal).
    pub dt_ms: f64,
    /// The track's median frame duration, ms (1 decimal), when known.
    pub median_dt_ms: Option<f64>,
    /// Position before the jump (2 decimals).
    pub from: [f64; 3],
    /// Position after the jump (2 decimals).
    pub to: [f64; 3],
    /// Oscillations: the frames its events span.
    pub frames: Option<u64>,
    /// Oscillations: first to last event, ms.
    pub duration_ms: Option<f64>,
    /// Oscillations: the largest jump (3 decimals).
    pub amplitude: Option<f64>,
    /// Other tracks with an event in the same frame.
    pub coincident: Vec<String>,
    /// The anchor distance across the jump, when the track declares one.
    pub reach: Option<ReachChange>,
    /// Ranked guesses, explanations first; never empty.
    pub classification: Vec<JitterGuess>,
    /// The phase of the jump frame.
    pub phase: Option<String>,
    /// The situation of the jump frame.
    pub situation: Option<String>,
    /// Records of this track the rate limits dropped since its previous record (and the
    /// session cap's drops, riding on the next record through).
    pub dropped_since_last: Option<u64>,
}

impl JitterEvent {
    /// What of this event enters its footprint key.
    pub fn key_record(&self) -> KeyRecord<'_> {
        KeyRecord::Jitter(JitterKey {
            track: Some(&self.track),
            kind: Some(self.kind.name()),
            phase: self.phase.as_deref(),
            guess: self.classification.first().map(|g| g.guess.name()),
            jump: Some(self.jump),
        })
    }

    /// The footprint: `jitter|track|kind|phase|top guess|dominant axis[|ctx:…]`.
    pub fn footprint(&self) -> Footprint {
        let record = self.key_record();
        footprint_of(&record, self.situation.as_deref().unwrap_or(""))
            .unwrap_or_else(|| crate::footprint::footprint(crate::footprint::FOOTPRINT_VERSION, ""))
    }
}

/// Counts for probes: did the instrument see anything at all?
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MotionStats {
    /// Records minted this session.
    pub records: u64,
    /// Bursts dropped by the rate limits.
    pub dropped: u64,
    /// Per track: samples, held samples, cuts, events, bursts.
    pub tracks: Vec<TrackStats>,
}

/// One track's counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrackStats {
    /// The track.
    pub name: String,
    /// Samples fed.
    pub samples: u64,
    /// Held samples.
    pub held: u64,
    /// Cuts.
    pub cuts: u64,
    /// Confirmed events.
    pub events: u64,
    /// Bursts.
    pub bursts: u64,
}

mod feed;
mod monitor;
pub mod names;

pub use feed::{FrameMotion, MotionFeed};
pub use monitor::MotionMonitor;

/// Rounds to `places` decimals, halves away from zero.
fn round_to(x: f64, places: i32) -> f64 {
    let k = 10f64.powi(places);
    (x * k).round() / k
}
