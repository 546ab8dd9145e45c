//! The records of `perf.jsonl`: one JSON object per line, tagged by `type`.
//!
//! Every record is self-sufficient: it carries [`Common`] (when, which build, which phase,
//! the situation, the timing regime, whether a robot ran it, the host's `world`). A field
//! that was not measured is absent from the line, never written as `0` or `null`: every
//! optional field is an `Option` skipped when `None`, and every list or map is skipped when
//! empty.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The `type` values this crate reads and writes.
pub const RECORD_TYPES: [&str; 5] = ["hitch", "heartbeat", "session-end", "usermark", "jitter"];

/// One line of `perf.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    /// A frame the hitch rule flagged.
    Hitch(HitchRecord),
    /// A periodic summary of non-paused play (every 10 s).
    Heartbeat(HeartbeatRecord),
    /// The session ended: frames, duration, and what the rate limits dropped.
    SessionEnd(SessionEndRecord),
    /// The host's "it felt wrong here": the trailing window frozen.
    Usermark(UsermarkRecord),
    /// A coordinate jump of a tracked point (the motion monitor).
    Jitter(JitterRecord),
}

impl Record {
    /// The record's `type` as written.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Hitch(_) => "hitch",
            Self::Heartbeat(_) => "heartbeat",
            Self::SessionEnd(_) => "session-end",
            Self::Usermark(_) => "usermark",
            Self::Jitter(_) => "jitter",
        }
    }

    /// The fields every record carries.
    pub fn common(&self) -> &Common {
        match self {
            Self::Hitch(r) => &r.common,
            Self::Heartbeat(r) => &r.common,
            Self::SessionEnd(r) => &r.common,
            Self::Usermark(r) => &r.common,
            Self::Jitter(r) => &r.common,
        }
    }

    /// The footprint, for incident records (hitch, usermark, jitter).
    pub fn footprint(&self) -> Option<&Footprint> {
        match self {
            Self::Hitch(r) => Some(&r.footprint),
            Self::Usermark(r) => Some(&r.footprint),
            Self::Jitter(r) => Some(&r.footprint),
            Self::Heartbeat(_) | Self::SessionEnd(_) => None,
        }
    }

    /// The footprint, for incident records, to change.
    pub(crate) fn footprint_mut(&mut self) -> Option<&mut Footprint> {
        match self {
            Self::Hitch(r) => Some(&mut r.footprint),
            Self::Usermark(r) => Some(&mut r.footprint),
            Self::Jitter(r) => Some(&mut r.footprint),
            Self::Heartbeat(_) | Self::SessionEnd(_) => None,
        }
    }

    /// Whether a frame time the record holds is no measurement: not finite, negative, or
    /// longer than [`MAX_FRAME_MS`] (`"frame_ms": 1e308`); a heartbeat's or usermark's
    /// `window.seconds` counts as a time. The reader counts such a line malformed, as it does
    /// one that does not parse.
    pub fn has_implausible_time(&self) -> bool {
        let window = |w: &Window| [w.ms, w.median_ms, w.p95_ms, w.seconds.map(|s| s * 1000.0)];
        let times: Vec<Option<f64>> = match self {
            Self::Hitch(r) => [
                Some(r.frame_ms),
                r.median_ms,
                Some(r.threshold_ms),
                r.work_ms,
                r.gpu_ms,
            ]
            .into_iter()
            .chain(r.scopes.iter().map(|s| Some(s.ms)))
            .collect(),
            Self::Heartbeat(r) => window(&r.window).to_vec(),
            Self::Usermark(r) => window(&r.window)
                .into_iter()
                .chain(r.worst_frames.iter().map(|w| Some(w.frame_ms)))
                .collect(),
            Self::Jitter(r) => vec![Some(r.dt_ms), r.median_dt_ms, r.duration_ms],
            Self::SessionEnd(_) => Vec::new(),
        };
        times
            .into_iter()
            .flatten()
            .any(|ms| !(0.0..=MAX_FRAME_MS).contains(&ms))
    }

    /// Whether a size a jitter record holds is no measurement: a length (`units`,
    /// `travel_units`, `amplitude`, the reach's `before` and `after`) or a speed that is not
    /// finite or is negative, or a length or coordinate (`jump`, `from`, `to`) beyond
    /// [`MAX_UNITS`] (`"units": 1e306`). The reader counts such a line malformed, as it does
    /// one holding an implausible time.
    pub fn has_implausible_size(&self) -> bool {
        let Self::Jitter(r) = self else {
            return false;
        };
        let lengths = [Some(r.units), Some(r.travel_units), r.amplitude]
            .into_iter()
            .chain(
                r.reach
                    .iter()
                    .flat_map(|reach| [Some(reach.before), Some(reach.after)]),
            )
            .flatten();
        let coordinates = r.jump.iter().chain(&r.from).chain(&r.to);
        let bad_length = |v: f64| !(0.0..=MAX_UNITS).contains(&v);
        let bad_coordinate = |v: &f64| !(-MAX_UNITS..=MAX_UNITS).contains(v);
        lengths.into_iter().any(bad_length)
            || coordinates.into_iter().any(bad_coordinate)
            || !(r.speed.is_finite() && r.speed >= 0.0)
    }

    /// Whether an incident record's footprint id is not 8 hex digits (`"id": "NOT-HEX!"`):
    /// no `--fp` or `--footprints` could name it. The reader counts such a line malformed.
    pub fn has_bad_footprint_id(&self) -> bool {
        self.footprint().is_some_and(|fp| !is_footprint_id(&fp.id))
    }
}

/// Whether `id` is 8 hex digits, in either case.
fn is_footprint_id(id: &str) -> bool {
    id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The largest length or coordinate a jitter record can hold, host units. The motion monitor
/// reads positions from gauges in thousandths of the host unit (an `i64`: within ±9.3e15
/// units), so no two of them are 1e17 units apart; a size beyond it is no measurement.
pub const MAX_UNITS: f64 = 1e17;

/// The longest frame time a record can hold, ms: a week (a machine asleep over a weekend
/// mid-frame stays inside it). A longer one is no measurement.
pub const MAX_FRAME_MS: f64 = 7.0 * 24.0 * 3_600_000.0;

/// The fields every record carries, flattened into the record's object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Common {
    /// When the record was made: UTC, ISO 8601 with milliseconds (`2026-12-01T16:20:00.000Z`).
    pub at: String,
    /// The build id (`FRAMEWISE_BUILD` or set in code), when one was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The host's phase (`boot`, `load`, `play`…) at the record's frame, when one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The situation: the host's facets in canonical form (`stance=foot,view=fp`), when any
    /// were declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctx: Option<String>,
    /// The timing regime: `hardware`, `software` (a software rasterizer) or `unknown`, from the
    /// GPU adapter the host declared; absent when none was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regime: Option<String>,
    /// True under the bench harness or CI (`FRAMEWISE_AUTOMATED=1` or `CI` set): the issues
    /// catalogue leaves such records out unless asked.
    pub automated: bool,
    /// The capture's session id (32 hex digits), when the record came from a recorded session:
    /// with the frame, it names an occurrence, so appending the same capture twice adds
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// A small object the host attached (entities spawned and removed, inputs held, camera).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<World>,
}

/// What the host says about its world at a record's frame: small, and only what it knows
/// (the recorder's `framewise::world` handles; `crate::world` reads it back).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct World {
    /// Entities that appeared in the frame: how many of each kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub spawned: BTreeMap<String, u64>,
    /// Entities that went away in the frame: how many of each kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub removed: BTreeMap<String, u64>,
    /// Inputs held (keys, buttons).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs_held: Vec<String>,
    /// The camera, when the host gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<Camera>,
}

/// A camera pose in the host's world units.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Camera {
    /// Position `[x, y, z]`.
    pub position: [f64; 3],
    /// Orientation as a quaternion `[x, y, z, w]`, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quaternion: Option<[f64; 4]>,
}

/// The identity of an incident's cause, apart from its occurrence.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Footprint {
    /// The derivation's version.
    pub v: u32,
    /// FNV-1a 32 of `v<v>:<key>`, 8 lowercase hex digits (the reader lowercases an id
    /// written in capitals, and counts a line whose id is not 8 hex digits malformed).
    pub id: String,
    /// Exactly what was hashed: type, phase, verdict, site, situation.
    pub key: String,
}

impl From<framewise_detect::footprint::Footprint> for Footprint {
    fn from(fp: framewise_detect::footprint::Footprint) -> Self {
        Self {
            v: fp.v,
            id: fp.id,
            key: fp.key,
        }
    }
}

/// How sure a guess is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Weak.
    Low,
    /// Plausible.
    Medium,
    /// Strong.
    High,
}

/// One ranked guess of a classification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Guess {
    /// The verdict, in the closed vocabulary of its detector (`pipeline-compile`,
    /// `long-cpu-scope`, `snap`, `follows-track`…).
    pub guess: String,
    /// How sure.
    pub confidence: Confidence,
    /// The numbers the guess rests on, in a sentence. Never empty.
    pub evidence: String,
    /// The scope named, for `long-cpu-scope`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The scope's call site (`file:line`), for `long-cpu-scope`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

/// One of a frame's longest scopes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScopeTime {
    /// The scope's name.
    pub name: String,
    /// Its call site (`file:line`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Its total time in the frame (all threads, inclusive), ms.
    pub ms: f64,
}

/// A frame the hitch rule flagged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HitchRecord {
    /// The common fields.
    #[serde(flatten)]
    pub common: Common,
    /// The frame's index in its session.
    pub frame: u64,
    /// The frame's period, ms.
    pub frame_ms: f64,
    /// The rolling median behind the threshold, ms (absent when there was no history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<f64>,
    /// `max(2 × median, 1.5 × budget)`, ms.
    pub threshold_ms: f64,
    /// CPU work of the frame (begin to end), ms, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_ms: Option<f64>,
    /// GPU frame time, ms, when measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_ms: Option<f64>,
    /// Each counter's value in the frame minus its median over the recent frames (sum
    /// counters), or its change in the frame (gauges). Counters not recorded are absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub delta: BTreeMap<String, i64>,
    /// The frame's longest scopes, longest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<ScopeTime>,
    /// Ranked guesses, best first.
    pub classification: Vec<Guess>,
    /// Hitches the rate limits dropped since the previous hitch record was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_since_last: Option<u64>,
    /// The cause's identity.
    pub footprint: Footprint,
}

/// A window of frames summarised.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// The window's length asked for, ms (usermarks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    /// Frames in the window.
    pub frames: u64,
    /// Seconds the window spans, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// Median frame period over the window's non-paused frames, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<f64>,
    /// 95th percentile of the same, ms (absent under 20 frames: too few to have one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<f64>,
}

/// A periodic summary of non-paused play: evidence between incidents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeartbeatRecord {
    /// The common fields.
    #[serde(flatten)]
    pub common: Common,
    /// The newest frame the log had received when it wrote the heartbeat: not judged yet,
    /// so the window ends before it.
    pub frame: u64,
    /// The window since the previous heartbeat.
    pub window: Window,
    /// Each counter's median per frame over the window.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, i64>,
    /// Hitches the rule flagged in the window (written or not).
    pub hitches: u64,
}

/// Records each rate limit dropped, by record type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCounts {
    /// Hitch records dropped (1 per second, 500 per session).
    pub hitch: u64,
    /// Usermark records dropped (the 500 per session cap).
    pub usermark: u64,
    /// Jitter records dropped (1 per second per track, 200 per session).
    pub jitter: u64,
}

impl DropCounts {
    /// All dropped records.
    pub fn total(&self) -> u64 {
        self.hitch + self.usermark + self.jitter
    }
}

/// Records written, by record type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WrittenCounts {
    /// Hitch records.
    pub hitch: u64,
    /// Heartbeat records.
    pub heartbeat: u64,
    /// Usermark records.
    pub usermark: u64,
    /// Jitter records.
    pub jitter: u64,
}

/// The session ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionEndRecord {
    /// The common fields.
    #[serde(flatten)]
    pub common: Common,
    /// Frames the incident log saw.
    pub frames: u64,
    /// Frames among them that were paused.
    pub paused_frames: u64,
    /// Session time from the first frame's begin to the last frame's end, seconds.
    pub duration_s: f64,
    /// Records written, by type (this record not counted).
    pub written: WrittenCounts,
    /// Records the rate limits dropped, by type: all zero means nothing was dropped.
    pub dropped: DropCounts,
}

/// One of a usermark window's worst frames.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorstFrame {
    /// The frame's index.
    pub frame: u64,
    /// How long before the mark the frame ended, ms.
    pub ago_ms: f64,
    /// The frame's period, ms.
    pub frame_ms: f64,
    /// Counter deltas, as a hitch record's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub delta: BTreeMap<String, i64>,
    /// Ranked guesses, as a hitch gets.
    pub classification: Vec<Guess>,
}

/// The host's "it felt wrong here": the trailing window frozen into one record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsermarkRecord {
    /// The common fields.
    #[serde(flatten)]
    pub common: Common,
    /// The frame open when the mark was made.
    pub frame: u64,
    /// The trailing window.
    pub window: Window,
    /// The five worst non-paused frames of the window, worst first.
    pub worst_frames: Vec<WorstFrame>,
    /// The host's note, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The cause's identity (keyed on the worst frame's verdict).
    pub footprint: Footprint,
}

/// A tracked point's distance to its anchor before and after a jump.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reach {
    /// The reach's name (`boom`).
    pub name: String,
    /// Before the jump, host units.
    pub before: f64,
    /// After the jump, host units.
    pub after: f64,
}

/// A coordinate jump of a tracked point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JitterRecord {
    /// The common fields.
    #[serde(flatten)]
    pub common: Common,
    /// The track (`unit`, `camera`).
    pub track: String,
    /// `snap` (one event) or `oscillation` (a burst of them).
    pub kind: String,
    /// The frame the jump landed in (the burst's first).
    pub frame: u64,
    /// The off-trajectory displacement, host units.
    pub jump: [f64; 3],
    /// Its length, host units.
    pub units: f64,
    /// The host's unit label (`motion.unit`, e.g. `m`); absent when the host set none (`u`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// What constant velocity predicted for the frame, host units.
    pub travel_units: f64,
    /// Speed before the jump, host units per second.
    pub speed: f64,
    /// The jump frame's period, ms.
    pub dt_ms: f64,
    /// The track's median period, ms, once the track has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_dt_ms: Option<f64>,
    /// Position before the jump.
    pub from: [f64; 3],
    /// Position after the jump.
    pub to: [f64; 3],
    /// Frames the oscillation spans.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<u64>,
    /// How long the oscillation lasted, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// The oscillation's largest excursion, host units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amplitude: Option<f64>,
    /// Other tracks that jumped in the same frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coincident: Vec<String>,
    /// The track's reach to its anchor, when the host samples one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reach: Option<Reach>,
    /// Ranked guesses (explanations ahead of the kind), best first.
    pub classification: Vec<Guess>,
    /// Jitter records of this track the rate limits dropped since its previous record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_since_last: Option<u64>,
    /// The cause's identity (track, kind, verdict, dominant axis).
    pub footprint: Footprint,
}
