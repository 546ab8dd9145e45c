//! The frame loop: the session starts at the first update, each update is a frame, and the
//! update that sends `AppExit` stops it.

use std::path::PathBuf;
use std::sync::Arc;

use bevy::app::AppExit;
use bevy::ecs::message::Messages;
use bevy::ecs::resource::Resource;
use bevy::ecs::system::Local;
use bevy::ecs::world::World;
use bevy::time::TimeUpdateStrategy;
use framewise::{Gauge, SessionBuilder};

use crate::{FramewiseReport, FramewiseSession};

/// The session the settings asked for, until the first update starts it.
#[derive(Resource)]
pub(crate) struct Pending {
    pub(crate) builder: SessionBuilder,
    pub(crate) path: PathBuf,
}

/// Runs first in every update: starts the session at the first, closes the previous frame
/// at the others (so a frame is one whole update, its sub-apps included).
pub(crate) fn frame_boundary(world: &mut World) {
    if let Some(Pending { builder, path }) = world.remove_resource::<Pending>() {
        #[cfg(feature = "render")]
        let builder = crate::render::declare(world, builder);
        match builder.start(path.as_path()) {
            Ok(session) => {
                // The harness pins the simulation step (`FRAMEWISE_FIXED_DT`): Bevy's clock
                // then advances by exactly that much per update.
                if let Some(step) = session.fixed_dt() {
                    world.insert_resource(TimeUpdateStrategy::ManualDuration(step));
                }
                let session = Arc::new(session);
                #[cfg(feature = "render")]
                crate::render::link(world, Some(&session));
                world.insert_resource(FramewiseSession(session));
            }
            Err(error) => say!("framewise: not recording to {}: {error}", path.display()),
        }
        return;
    }
    let finished = match world.get_resource::<FramewiseSession>() {
        Some(FramewiseSession(session)) => {
            session.end_frame();
            session.is_finished()
        }
        None => return,
    };
    if finished {
        stop(world);
    }
}

/// The counters this crate measures.
pub(crate) struct Gauges {
    entities: Gauge,
    archetypes: Gauge,
}

/// Runs last in every update's main schedule: sets the frame's counters, and stops the
/// session when the update sent `AppExit`.
pub(crate) fn after_main(world: &mut World, mut gauges: Local<Option<Gauges>>) {
    if !world.contains_resource::<FramewiseSession>() {
        return;
    }
    let gauges = gauges.get_or_insert_with(|| Gauges {
        entities: Gauge::new("entities"),
        archetypes: Gauge::new("archetypes"),
    });
    let archetypes = world.archetypes();
    // Every spawned entity has a row in exactly one archetype: O(archetypes), exact.
    let entities: u64 = archetypes.iter().map(|a| u64::from(a.len())).sum();
    gauges.entities.set(saturating(entities));
    gauges.archetypes.set(saturating(archetypes.len() as u64));
    let exiting = world
        .get_resource::<Messages<AppExit>>()
        .is_some_and(|messages| !messages.is_empty());
    if exiting {
        if let Some(FramewiseSession(session)) = world.get_resource::<FramewiseSession>() {
            session.end_frame();
        }
        stop(world);
    }
}

/// Stops the session and keeps its report as a resource.
fn stop(world: &mut World) {
    // The render world reaches the session through the link only while it holds the link's
    // lock, so once unlinked this resource holds the last reference.
    #[cfg(feature = "render")]
    crate::render::link(world, None);
    if let Some(FramewiseSession(session)) = world.remove_resource::<FramewiseSession>() {
        match Arc::try_unwrap(session) {
            Ok(session) => world.insert_resource(FramewiseReport(session.stop())),
            // Someone else kept a reference: the capture closes when the last one drops.
            Err(_) => say!("framewise: the session is still shared; it stops when dropped"),
        }
    }
}

fn saturating(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
