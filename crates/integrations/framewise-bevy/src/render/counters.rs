//! The render counters, read in the main world at the end of each update's main schedule
//! (after visibility was computed in `PostUpdate`).

use std::collections::HashMap;

use bevy::asset::Assets;
use bevy::camera::visibility::VisibleEntities;
use bevy::camera::Camera;
use bevy::ecs::entity::Entity;
use bevy::ecs::name::Name;
use bevy::ecs::system::Local;
use bevy::ecs::world::World;
use bevy::image::Image;
use bevy::mesh::Mesh;
use bevy::pbr::StandardMaterial;
use framewise::Gauge;

/// The counters every frame carries with the `render` feature: meshes, standard materials
/// and images in the asset collections (loaded or added). Each camera adds one
/// ([`visible_entities_counter`]). Bevy 0.19 counts no draw calls and no triangles a frame
/// drew, so neither is a counter (absent, never 0).
pub const RENDER_COUNTERS: [&str; 3] = ["meshes", "materials", "images"];

/// The counter of entities a camera's view sees (`VisibleEntities`, every visibility class):
/// named by the camera's `Name`, else by its entity. An inactive camera sees nothing (it
/// draws nothing; Bevy leaves its last `VisibleEntities` in place): 0. A camera despawned (or
/// no longer a camera with `VisibleEntities`, or renamed, under its old name) reads 0 from
/// the frame it is gone: a gauge keeps its last level in later frames and cannot be
/// withdrawn, and 0 is what the camera draws. When cameras share a name, an active one's
/// count wins over an inactive or gone one's 0.
pub fn visible_entities_counter(camera: Entity, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("visible entities: {name}"),
        None => format!("visible entities: camera {camera}"),
    }
}

/// The counters' gauges, made once (a camera's when it is first seen, forgotten once it
/// read 0 for being gone).
pub(super) struct Gauges {
    assets: [Gauge; 3],
    views: HashMap<Entity, (String, Gauge)>,
}

/// Sets the render counters of the frame open now.
pub(super) fn render_counters(world: &mut World, mut gauges: Local<Option<Gauges>>) {
    if !world.contains_resource::<crate::FramewiseSession>() {
        return;
    }
    let gauges = gauges.get_or_insert_with(|| Gauges {
        assets: RENDER_COUNTERS.map(Gauge::new),
        views: HashMap::new(),
    });
    let assets = [
        world.get_resource::<Assets<Mesh>>().map(Assets::len),
        world
            .get_resource::<Assets<StandardMaterial>>()
            .map(Assets::len),
        world.get_resource::<Assets<Image>>().map(Assets::len),
    ];
    for (gauge, count) in gauges.assets.iter().zip(assets) {
        if let Some(count) = count {
            gauge.set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }
    let mut cameras = world.query::<(Entity, &Camera, &VisibleEntities, Option<&Name>)>();
    let mut levels = Vec::new();
    for (entity, camera, visible, name) in cameras.iter(world) {
        let count: usize = if camera.is_active {
            visible.entities.values().map(Vec::len).sum()
        } else {
            0
        };
        let counter = visible_entities_counter(entity, name.map(Name::as_str));
        levels.push((entity, counter, i64::try_from(count).unwrap_or(i64::MAX)));
    }
    // Gone since the last frame (or renamed: the old name's gauge): 0, then forgotten.
    gauges.views.retain(|entity, (counter, gauge)| {
        let here = levels.iter().any(|(e, c, _)| e == entity && c == counter);
        if !here {
            gauge.set(0);
        }
        here
    });
    // Zeros first, so an active camera's count wins over a namesake's 0.
    levels.sort_by_key(|&(_, _, level)| level > 0);
    for (entity, counter, level) in levels {
        let (_, gauge) = gauges
            .views
            .entry(entity)
            .or_insert_with(|| (counter.clone(), Gauge::new(&counter)));
        gauge.set(level);
    }
}
