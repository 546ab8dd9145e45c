//! The host's `world` object: how the recorder carries it in a capture, and reading it back
//! for a record.
//!
//! Like motion tracks, the world is no new record kind: it is counters and one META setting
//! with fixed names, so it rides in every capture, costs the game thread what a counter
//! costs (no allocation), and a capture read back gives the records the live log wrote.
//!
//! | name | kind | what |
//! |---|---|---|
//! | `world.spawned.KIND`, `world.removed.KIND` | sum | entities of that kind spawned, removed in the frame |
//! | `world.inputs_held` | gauge | the inputs held, a bit per input: bit `i` is the `i`-th name of the setting below |
//! | META `world.inputs` | setting | the inputs' names, `,`-separated, at most [`MAX_INPUTS`] |
//! | `world.camera.x_mm`, `.y_mm`, `.z_mm` | gauge | the camera's position, thousandths of the host unit |
//! | `world.camera.qx_millionths`, `.qy_…`, `.qz_…`, `.qw_…` | gauge | its orientation quaternion, millionths |
//!
//! The record's `world` holds what the frame carried: the kinds spawned and removed in it with
//! their counts, the inputs held in it, the camera's last pose; `None` when the host gave
//! none of these.

use std::collections::BTreeMap;

use crate::record::{Camera, World};

/// Every counter and setting of the world object starts with this.
pub const WORLD_PREFIX: &str = "world.";
/// Sums of entities spawned in the frame, `world.spawned.KIND`.
pub const SPAWNED_PREFIX: &str = "world.spawned.";
/// Sums of entities removed in the frame, `world.removed.KIND`.
pub const REMOVED_PREFIX: &str = "world.removed.";
/// The gauge of the inputs held (a bit per declared input).
pub const INPUTS_GAUGE: &str = "world.inputs_held";
/// The META setting naming the inputs, `,`-separated.
pub const INPUTS_SETTING: &str = "world.inputs";
/// Inputs a session can name (the bits of the gauge).
pub const MAX_INPUTS: usize = 64;
/// The camera position gauges, x y z, thousandths of the host unit.
pub const CAMERA_POSITION: [&str; 3] = [
    "world.camera.x_mm",
    "world.camera.y_mm",
    "world.camera.z_mm",
];
/// The camera quaternion gauges, x y z w, millionths.
pub const CAMERA_QUATERNION: [&str; 4] = [
    "world.camera.qx_millionths",
    "world.camera.qy_millionths",
    "world.camera.qz_millionths",
    "world.camera.qw_millionths",
];
/// Kinds a record lists per list, at most (the rest are left out).
pub const MAX_KINDS: usize = 32;

/// Whether a counter carries the world object rather than the game's work: such counters
/// are kept out of incident records' counter deltas and medians.
pub fn is_world_counter(name: &str) -> bool {
    name.starts_with(WORLD_PREFIX)
}

/// The input names a `world.inputs` setting declares, in bit order (at most
/// [`MAX_INPUTS`]; empty names kept, so the bits stay in place).
pub fn input_names(setting: &str) -> Vec<String> {
    setting
        .split(',')
        .take(MAX_INPUTS)
        .map(|s| s.trim().to_owned())
        .collect()
}

/// The `world.inputs` setting for these names (a `,` in a name becomes `_`); `None` past
/// [`MAX_INPUTS`] names.
pub fn inputs_setting<S: AsRef<str>>(names: &[S]) -> Option<String> {
    (names.len() <= MAX_INPUTS).then(|| {
        names
            .iter()
            .map(|n| n.as_ref().trim().replace(',', "_"))
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// The world object of a frame whose world counters are `counters` (name, value), with the
/// session's input names; `None` when the frame carries none of it.
pub fn world_of<'a>(
    counters: impl IntoIterator<Item = (&'a str, i64)>,
    inputs: &[String],
) -> Option<World> {
    let mut world = World::default();
    let mut position = [None; 3];
    let mut rotation = [None; 4];
    for (name, value) in counters {
        if let Some(kind) = name.strip_prefix(SPAWNED_PREFIX) {
            add_kind(&mut world.spawned, kind, value);
        } else if let Some(kind) = name.strip_prefix(REMOVED_PREFIX) {
            add_kind(&mut world.removed, kind, value);
        } else if name == INPUTS_GAUGE {
            let bits = value as u64;
            world.inputs_held = (0..inputs.len().min(MAX_INPUTS))
                .filter(|&i| bits & (1 << i) != 0)
                .map(|i| inputs[i].clone())
                .filter(|n| !n.is_empty())
                .collect();
        } else if let Some(axis) = CAMERA_POSITION.iter().position(|&n| n == name) {
            position[axis] = Some(value as f64 / 1e3);
        } else if let Some(axis) = CAMERA_QUATERNION.iter().position(|&n| n == name) {
            rotation[axis] = Some(value as f64 / 1e6);
        }
    }
    if position.iter().any(Option::is_some) {
        world.camera = Some(Camera {
            position: position.map(|v| v.unwrap_or(0.0)),
            quaternion: rotation
                .iter()
                .all(Option::is_some)
                .then(|| rotation.map(|v| v.unwrap_or(0.0))),
        });
    }
    let empty = world.spawned.is_empty()
        && world.removed.is_empty()
        && world.inputs_held.is_empty()
        && world.camera.is_none();
    (!empty).then_some(world)
}

fn add_kind(list: &mut BTreeMap<String, u64>, kind: &str, count: i64) {
    let Ok(count) = u64::try_from(count) else {
        return;
    };
    if count == 0 || kind.is_empty() || (list.len() >= MAX_KINDS && !list.contains_key(kind)) {
        return;
    }
    *list.entry(kind.to_owned()).or_default() += count;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frames_world_reads_back() {
        let inputs = input_names(&inputs_setting(&["move", "fire,alt", "mark"]).unwrap());
        assert_eq!(inputs, ["move", "fire_alt", "mark"]);
        let world = world_of(
            [
                ("world.spawned.agent", 1000),
                ("world.removed.particle", 12),
                ("world.spawned.ghost", 0),
                ("world.inputs_held", 0b101),
                ("world.camera.x_mm", 1500),
                ("world.camera.y_mm", 30_000),
                ("world.camera.z_mm", -250),
                ("world.camera.qx_millionths", -600_000),
                ("world.camera.qy_millionths", 0),
                ("world.camera.qz_millionths", 0),
                ("world.camera.qw_millionths", 800_000),
                ("entities", 7),
            ],
            &inputs,
        )
        .expect("a world");
        assert_eq!(world.spawned, BTreeMap::from([("agent".to_owned(), 1000)]));
        assert_eq!(world.removed, BTreeMap::from([("particle".to_owned(), 12)]));
        assert_eq!(world.inputs_held, ["move", "mark"]);
        let camera = world.camera.clone().expect("a camera");
        assert_eq!(camera.position, [1.5, 30.0, -0.25]);
        assert_eq!(camera.quaternion, Some([-0.6, 0.0, 0.0, 0.8]));
        let json = serde_json::to_string(&world).unwrap();
        assert_eq!(
            json,
            r#"{"spawned":{"agent":1000},"removed":{"particle":12},"inputs_held":["move","mark"],"camera":{"position":[1.5,30.0,-0.25],"quaternion":[-0.6,0.0,0.0,0.8]}}"#
        );
    }

    #[test]
    fn nothing_given_is_no_world() {
        assert_eq!(world_of([("world.inputs_held", 0)], &[]), None);
        assert_eq!(world_of([("world.spawned.agent", 0)], &[]), None);
        // A camera without all four quaternion parts has no orientation.
        let world = world_of([("world.camera.y_mm", 2000)], &[]).expect("a world");
        assert_eq!(
            world.camera,
            Some(Camera {
                position: [0.0, 2.0, 0.0],
                quaternion: None
            })
        );
        assert!(inputs_setting(&vec!["k"; MAX_INPUTS + 1]).is_none());
    }
}
