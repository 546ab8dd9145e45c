//! The host's `world` object on incident records: entities spawned and removed, inputs held,
//! the camera — what the host knows of the moment, attached to every record of
//! `.framewise/perf.jsonl` (docs/INCIDENTS.md, "The `world` object").
//!
//! Like motion tracks, the world is counters and one META setting with fixed names
//! (`framewise_incidents::world` lists them), so it rides in the capture and a capture read
//! back (`framewise hitches --append`) gives the records the live log wrote. Its cost on the
//! game thread is a counter's: make the handles once, then each call is a relaxed load and
//! a store or add into the frame's counter slot — no allocation, no lock, no string. Its size
//! is bounded by what the host declares: one counter per entity kind, at most 64 inputs,
//! seven camera gauges; a record lists at most 32 kinds per list.
//!
//! ```
//! use framewise::world::{InputsHeld, Spawns, WorldCamera};
//!
//! let builder = framewise::Session::builder().world_inputs(&["move", "fire"]);
//! let goblins = Spawns::new("goblin");
//! let (inputs, camera) = (InputsHeld::new(), WorldCamera::new());
//! // Once per frame, before it ends:
//! goblins.spawned(3);
//! inputs.set(0b01); // `move` held
//! camera.record([0.0, 12.0, -30.0]);
//! # drop(builder);
//! ```

use framewise_incidents::world::{
    inputs_setting, CAMERA_POSITION, CAMERA_QUATERNION, INPUTS_GAUGE, INPUTS_SETTING, MAX_INPUTS,
    REMOVED_PREFIX, SPAWNED_PREFIX,
};

use crate::{Counter, Gauge, SessionBuilder};

/// A value scaled by `k` and rounded; non-finite values read 0.
fn scaled(v: f64, k: f64) -> i64 {
    if v.is_finite() {
        (v * k).round() as i64
    } else {
        0
    }
}

/// Entities of one kind spawned and removed: make it once per kind, count every frame.
#[derive(Clone, Copy, Debug)]
pub struct Spawns {
    spawned: Counter,
    removed: Counter,
}

impl Spawns {
    /// The counters of entity kind `kind` (`goblin`, `particle`): keep kinds few, each is a
    /// counter of the capture.
    pub fn new(kind: &str) -> Self {
        Self {
            spawned: Counter::sum(&format!("{SPAWNED_PREFIX}{kind}")),
            removed: Counter::sum(&format!("{REMOVED_PREFIX}{kind}")),
        }
    }

    /// `n` entities of this kind appeared in this frame.
    #[inline]
    pub fn spawned(&self, n: u64) {
        self.spawned.add(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// `n` entities of this kind went away in this frame.
    #[inline]
    pub fn removed(&self, n: u64) {
        self.removed.add(i64::try_from(n).unwrap_or(i64::MAX));
    }
}

/// The inputs held, a bit per input the builder declared
/// ([`SessionBuilder::world_inputs`]): bit `i` is the `i`-th name.
#[derive(Clone, Copy, Debug)]
pub struct InputsHeld(Gauge);

impl InputsHeld {
    /// The inputs' gauge.
    pub fn new() -> Self {
        Self(Gauge::new(INPUTS_GAUGE))
    }

    /// The inputs held from this frame on (a level: it stays until set again).
    #[inline]
    pub fn set(&self, held: u64) {
        self.0.set(held as i64);
    }
}

impl Default for InputsHeld {
    fn default() -> Self {
        Self::new()
    }
}

/// The camera's pose, in the host's world units.
#[derive(Clone, Copy, Debug)]
pub struct WorldCamera {
    position: [Gauge; 3],
    rotation: [Gauge; 4],
}

impl WorldCamera {
    /// The camera's gauges.
    pub fn new() -> Self {
        Self {
            position: CAMERA_POSITION.map(Gauge::new),
            rotation: CAMERA_QUATERNION.map(Gauge::new),
        }
    }

    /// The camera's position this frame (kept to thousandths of a unit).
    #[inline]
    pub fn record(&self, position: [f64; 3]) {
        for (gauge, v) in self.position.iter().zip(position) {
            gauge.set(scaled(v, 1e3));
        }
    }

    /// Its position and orientation (a quaternion `[x, y, z, w]`, kept to millionths).
    #[inline]
    pub fn record_pose(&self, position: [f64; 3], quaternion: [f64; 4]) {
        self.record(position);
        for (gauge, v) in self.rotation.iter().zip(quaternion) {
            gauge.set(scaled(v, 1e6));
        }
    }
}

impl Default for WorldCamera {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionBuilder {
    /// Names the inputs [`InputsHeld`] reports, in bit order (META `world.inputs`); past 64
    /// names, the first 64 are kept.
    pub fn world_inputs<S: AsRef<str>>(self, names: &[S]) -> Self {
        let names = &names[..names.len().min(MAX_INPUTS)];
        match inputs_setting(names) {
            Some(value) => self.setting(INPUTS_SETTING, value),
            None => self,
        }
    }
}
