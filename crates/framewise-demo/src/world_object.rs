//! The demo's `world` object on incident records (`framewise::world`): agents spawned, the
//! inputs held (the unit's walk, the usermark hotkey), the camera's pose.

use framewise::world::{InputsHeld, Spawns, WorldCamera};
use framewise::SessionBuilder;

use crate::sim::Camera;

/// The inputs the demo declares, in bit order.
pub const INPUTS: [&str; 2] = ["move", "usermark"];
/// The bit of `move`: the unit walks its route (every frame that is not paused).
pub const MOVE: u64 = 1;
/// The bit of `usermark`: the hotkey, in the frame it is pressed.
pub const USERMARK: u64 = 1 << 1;

/// Declares the inputs on the session.
pub fn declare(builder: SessionBuilder) -> SessionBuilder {
    builder.world_inputs(&INPUTS)
}

/// The handles, made once per run.
#[derive(Clone, Copy, Debug)]
pub struct WorldObject {
    agents: Spawns,
    inputs: InputsHeld,
    camera: WorldCamera,
}

impl WorldObject {
    /// The demo's handles.
    pub fn new() -> Self {
        Self {
            agents: Spawns::new("agent"),
            inputs: InputsHeld::new(),
            camera: WorldCamera::new(),
        }
    }

    /// `n` agents joined the flock this frame.
    pub fn agents_spawned(&self, n: usize) {
        self.agents.spawned(n as u64);
    }

    /// This frame's inputs (a mask of [`MOVE`], [`USERMARK`]) and camera.
    pub fn record(&self, inputs: u64, camera: &Camera) {
        self.inputs.set(inputs);
        let eye = camera.eye();
        // The camera looks down at its focus from above and behind: a pitch about x.
        let pitch = -f64::from(Camera::HEIGHT_M).atan2(f64::from(Camera::BACK_M));
        let half = pitch / 2.0;
        self.camera.record_pose(
            [f64::from(eye.x), f64::from(eye.y), f64::from(eye.z)],
            [half.sin(), 0.0, 0.0, half.cos()],
        );
    }
}

impl Default for WorldObject {
    fn default() -> Self {
        Self::new()
    }
}
