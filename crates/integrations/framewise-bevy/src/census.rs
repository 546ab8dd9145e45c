//! The census walk: what the world holds and what it costs, read once on demand (never per
//! frame) from the main world's components and assets.
//!
//! - **Entries** are entity groups: every entity drawing a mesh (`Mesh3d`) belongs to the
//!   entry of its root ancestor (the top of its `ChildOf` chain), so a model spawned as a
//!   hierarchy is one entry and a lone mesh entity is its own. An entry's id is the root's
//!   (`12v1`); `entities` counts its mesh entities; `visible_entities` those whose
//!   `ViewVisibility` says a view saw them at the last frame; `batched` is `false` when any
//!   carries `NoAutomaticBatching`, else `true` (Bevy batches instances of one mesh +
//!   material by itself).
//! - **Meshes**: triangles and vertices from the mesh's indices and positions (a triangle
//!   list: indices ÷ 3, else vertices ÷ 3; a strip: n − 2; lines and points: 0), bytes from
//!   its vertex and index buffers. A mesh whose data went to the GPU only
//!   (`RenderAssetUsages::RENDER_WORLD`) is counted from what [`MeshStats`] saw when it was
//!   added.
//! - **Materials**: `StandardMaterial`s, fingerprinted by every parameter (two materials with
//!   equal fingerprints draw alike, so separate handles only break batching); a mesh drawn
//!   with another material type counts under the material `other` (no fingerprint).
//! - **Textures**: every loaded `Image` (named by its asset path when it has one): bytes
//!   exactly from its data when it has some, else estimated from its size, layers, mips and
//!   format (`bytes_estimate`).
//! - **Lights**: point, spot and directional lights, their shadows and shadow-map size
//!   (`PointLightShadowMap` for point lights, `DirectionalLightShadowMap` for the others).
//! - **Views**: cameras with a known target size.
//! - **Sites**: where an entity was spawned, when Bevy tracks it (its `track_location`
//!   feature, this crate's `spawn-sites`); else `null`, and hints say `site: unknown`.

use std::collections::{BTreeMap, HashMap};

use bevy::asset::{AssetEvent, AssetId, AssetServer, Assets, Handle};
use bevy::camera::visibility::{ViewVisibility, Visibility};
use bevy::camera::Camera;
use bevy::ecs::entity::Entity;
use bevy::ecs::hierarchy::ChildOf;
use bevy::ecs::message::{MessageCursor, Messages};
use bevy::ecs::name::Name;
use bevy::ecs::query::Has;
use bevy::ecs::resource::Resource;
use bevy::ecs::system::{Local, Res, ResMut};
use bevy::ecs::world::World;
use bevy::image::Image;
use bevy::light::{
    DirectionalLight, DirectionalLightShadowMap, NotShadowCaster, PointLight, PointLightShadowMap,
    SpotLight,
};
use bevy::mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology};
use bevy::pbr::{MeshMaterial3d, StandardMaterial};
use bevy::reflect::{PartialReflect, ReflectRef};
use bevy::render::batching::NoAutomaticBatching;
use framewise_census::{
    estimate_texture_bytes, AssetCounts, Census, Draw, EntryParts, LightInfo, LightKind,
    MaterialInfo, MeshInfo, SceneParts, TextureInfo, ViewInfo,
};

use crate::BEVY_VERSION;

/// The material id of a mesh drawn with a material other than `StandardMaterial`.
pub const OTHER_MATERIAL: &str = "other";

/// Triangles and vertices of every mesh, noted when it is added or changed, for meshes whose
/// data later leaves the main world (the census reads the data itself when it is there).
#[derive(Debug, Default, Resource)]
pub struct MeshStats(HashMap<AssetId<Mesh>, MeshCounts>);

/// One mesh's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MeshCounts {
    triangles: u64,
    vertices: u64,
    bytes: u64,
}

/// Notes the counts of meshes added or changed this frame (only those: no per-frame walk).
/// Every parameter is optional: an app without Bevy's mesh assets runs it as a no-op.
pub(crate) fn note_mesh_stats(
    events: Option<Res<Messages<AssetEvent<Mesh>>>>,
    mut cursor: Local<MessageCursor<AssetEvent<Mesh>>>,
    meshes: Option<Res<Assets<Mesh>>>,
    mut stats: ResMut<MeshStats>,
) {
    let (Some(events), Some(meshes)) = (events, meshes) else {
        return;
    };
    for event in cursor.read(&events) {
        match event {
            AssetEvent::Added { id } | AssetEvent::Modified { id } => {
                if let Some(counts) = meshes.get(*id).and_then(mesh_counts) {
                    stats.0.insert(*id, counts);
                }
            }
            AssetEvent::Removed { id } => {
                stats.0.remove(id);
            }
            AssetEvent::Unused { .. } | AssetEvent::LoadedWithDependencies { .. } => {}
        }
    }
}

/// A mesh's counts from its data; `None` when the data is no longer in the main world.
fn mesh_counts(mesh: &Mesh) -> Option<MeshCounts> {
    let attributes = mesh.try_attributes().ok()?;
    let mut vertices: Option<usize> = None;
    let mut vertex_bytes: u64 = 0;
    for (attribute, values) in attributes {
        let n = values.len();
        vertices = Some(vertices.map_or(n, |v| v.min(n)));
        vertex_bytes += attribute.format.size();
    }
    let vertices = vertices.unwrap_or(0) as u64;
    let indices = mesh.try_indices_option().ok()?;
    let (elements, index_bytes) = match indices {
        Some(Indices::U16(i)) => (i.len() as u64, 2 * i.len() as u64),
        Some(Indices::U32(i)) => (i.len() as u64, 4 * i.len() as u64),
        None => (vertices, 0),
    };
    let triangles = match mesh.primitive_topology() {
        PrimitiveTopology::TriangleList => elements / 3,
        PrimitiveTopology::TriangleStrip => elements.saturating_sub(2),
        _ => 0,
    };
    Some(MeshCounts {
        triangles,
        vertices,
        bytes: vertex_bytes * vertices + index_bytes,
    })
}

/// An asset's id in the census: `mesh:3v0` (index and generation), `image:<uuid>`.
fn asset_id<A: bevy::asset::Asset>(kind: &str, id: AssetId<A>) -> String {
    match id {
        AssetId::Index { index, .. } => {
            let bits = index.to_bits();
            format!("{kind}:{}v{}", bits & 0xffff_ffff, bits >> 32)
        }
        AssetId::Uuid { uuid } => format!("{kind}:{uuid}"),
    }
}

/// An asset's readable name: its path when loaded from one, else its id.
fn asset_name<A: bevy::asset::Asset>(kind: &str, handle: &Handle<A>) -> String {
    handle
        .path()
        .map_or_else(|| asset_id(kind, handle.id()), |p| p.to_string())
}

/// FNV-1a, 64 bits: a digest stable across runs and builds (std's hasher is neither
/// promised).
fn fnv1a(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The textures a material samples: every `Option<Handle<Image>>` field it has.
fn material_textures(material: &StandardMaterial) -> Vec<Handle<Image>> {
    let ReflectRef::Struct(fields) = material.reflect_ref() else {
        return Vec::new();
    };
    fields
        .iter_fields()
        .filter_map(|(_, f)| f.try_downcast_ref::<Option<Handle<Image>>>())
        .filter_map(Clone::clone)
        .collect()
}

/// Where an entity was spawned, when Bevy tracks it.
pub(crate) fn spawn_site(world: &World, entity: Entity) -> Option<String> {
    let location = world.get_entity(entity).ok()?.spawned_by().into_option()?;
    Some(format!("{}:{}", location.file(), location.line()))
}

/// The top of an entity's `ChildOf` chain.
fn root_of(world: &World, mut entity: Entity) -> Entity {
    // A chain longer than the world is a cycle: stop rather than loop.
    for _ in 0..=world.entities().len() {
        match world.get::<ChildOf>(entity) {
            Some(parent) => entity = parent.parent(),
            None => break,
        }
    }
    entity
}

/// One mesh entity as the walk reads it.
struct MeshEntity {
    entity: Entity,
    mesh: Handle<Mesh>,
    material: Option<Handle<StandardMaterial>>,
    visible: Option<bool>,
    casts_shadows: bool,
    unbatched: bool,
}

/// The entries' mesh entities, by entry id (what bisection hides together).
pub(crate) type Groups = BTreeMap<String, Vec<Entity>>;

/// Every mesh entity, with what the walk needs of it.
fn mesh_entities(world: &mut World) -> Vec<MeshEntity> {
    let mut query = world.query::<(
        Entity,
        &Mesh3d,
        Option<&MeshMaterial3d<StandardMaterial>>,
        Option<&ViewVisibility>,
        Has<NotShadowCaster>,
        Has<NoAutomaticBatching>,
    )>();
    query
        .iter(world)
        .map(
            |(entity, mesh, material, view, not_caster, unbatched)| MeshEntity {
                entity,
                mesh: mesh.0.clone(),
                material: material.map(|m| m.0.clone()),
                visible: view.map(|v| v.get()),
                casts_shadows: !not_caster,
                unbatched,
            },
        )
        .collect()
}

/// The mesh entities grouped into entries (by root), in the order of their roots' ids.
fn group_by_root(world: &World, meshes: Vec<MeshEntity>) -> BTreeMap<Entity, Vec<MeshEntity>> {
    let mut groups: BTreeMap<Entity, Vec<MeshEntity>> = BTreeMap::new();
    for m in meshes {
        groups.entry(root_of(world, m.entity)).or_default().push(m);
    }
    groups
}

/// The mesh entities of every entry, by entry id.
pub(crate) fn groups(world: &mut World) -> Groups {
    let meshes = mesh_entities(world);
    group_by_root(world, meshes)
        .into_iter()
        .map(|(root, ms)| (root.to_string(), ms.iter().map(|m| m.entity).collect()))
        .collect()
}

/// Triangles of each mesh: from its data, else from what [`MeshStats`] noted.
fn mesh_info(world: &World, handle: &Handle<Mesh>) -> MeshInfo {
    let counts = world
        .get_resource::<Assets<Mesh>>()
        .and_then(|a| a.get(handle.id()))
        .and_then(mesh_counts)
        .or_else(|| {
            world
                .get_resource::<MeshStats>()
                .and_then(|s| s.0.get(&handle.id()).copied())
        });
    MeshInfo {
        id: asset_id("mesh", handle.id()),
        name: asset_name("mesh", handle),
        triangles: counts.map_or(0, |c| c.triangles),
        vertices: counts.map_or(0, |c| c.vertices),
        bytes: counts.map(|c| c.bytes),
    }
}

/// Walks the world into a census (see the module documentation).
pub fn take_census(world: &mut World) -> Census {
    let meshes = mesh_entities(world);
    let by_root = group_by_root(world, meshes);
    let mut mesh_handles: BTreeMap<String, Handle<Mesh>> = BTreeMap::new();
    let mut material_handles: BTreeMap<String, Handle<StandardMaterial>> = BTreeMap::new();
    let mut entries = Vec::with_capacity(by_root.len());
    for (root, members) in &by_root {
        let mut draws: BTreeMap<(String, String), Draw> = BTreeMap::new();
        for m in members {
            let mesh = asset_id("mesh", m.mesh.id());
            mesh_handles.entry(mesh.clone()).or_insert(m.mesh.clone());
            let material = match &m.material {
                Some(handle) => {
                    let id = asset_id("material", handle.id());
                    material_handles.entry(id.clone()).or_insert(handle.clone());
                    id
                }
                None => OTHER_MATERIAL.to_owned(),
            };
            let draw = draws
                .entry((mesh.clone(), material.clone()))
                .or_insert(Draw {
                    mesh,
                    material,
                    instances: 0,
                    shadow_casters: 0,
                });
            draw.instances += 1;
            draw.shadow_casters += u64::from(m.casts_shadows);
        }
        let visible_entities = members
            .iter()
            .map(|m| m.visible)
            .try_fold(0u64, |n, v| v.map(|v| n + u64::from(v)));
        let name = world
            .get::<Name>(*root)
            .or_else(|| match members.as_slice() {
                [only] => world.get::<Name>(only.entity),
                _ => None,
            })
            .map_or_else(|| root.to_string(), |n| n.as_str().to_owned());
        entries.push(EntryParts {
            id: root.to_string(),
            name,
            site: spawn_site(world, *root),
            entities: members.len() as u64,
            visible_entities,
            draws: draws.into_values().collect(),
            batched: Some(!members.iter().any(|m| m.unbatched)),
        });
    }
    let meshes = mesh_handles.values().map(|h| mesh_info(world, h)).collect();
    let materials = materials(world, &material_handles, by_root.values().flatten());
    Census::new(SceneParts {
        engine: format!("bevy {BEVY_VERSION}"),
        frame: None,
        entries,
        meshes,
        materials,
        textures: textures(world),
        lights: lights(world),
        views: views(world),
        assets: AssetCounts {
            meshes: world
                .get_resource::<Assets<Mesh>>()
                .map_or(0, |a| a.len() as u64),
            materials: world
                .get_resource::<Assets<StandardMaterial>>()
                .map_or(0, |a| a.len() as u64),
            textures: world
                .get_resource::<Assets<Image>>()
                .map_or(0, |a| a.len() as u64),
        },
    })
}

fn materials<'a>(
    world: &World,
    handles: &BTreeMap<String, Handle<StandardMaterial>>,
    mut members: impl Iterator<Item = &'a MeshEntity>,
) -> Vec<MaterialInfo> {
    let assets = world.get_resource::<Assets<StandardMaterial>>();
    let mut out: Vec<MaterialInfo> = handles
        .iter()
        .map(|(id, handle)| {
            let material = assets.and_then(|a| a.get(handle.id()));
            MaterialInfo {
                id: id.clone(),
                name: asset_name("material", handle),
                // Debug prints every field, texture handles included: equal text, equal
                // drawing.
                fingerprint: material.map(|m| fnv1a(&format!("{m:?}"))),
                textures: material
                    .map(|m| {
                        material_textures(m)
                            .iter()
                            .map(|t| asset_id("image", t.id()))
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect();
    if members.any(|m| m.material.is_none()) {
        out.push(MaterialInfo {
            id: OTHER_MATERIAL.to_owned(),
            name: "a material other than StandardMaterial".to_owned(),
            fingerprint: None,
            textures: Vec::new(),
        });
    }
    out
}

fn textures(world: &World) -> Vec<TextureInfo> {
    let Some(images) = world.get_resource::<Assets<Image>>() else {
        return Vec::new();
    };
    let server = world.get_resource::<AssetServer>();
    let mut out: Vec<TextureInfo> = images
        .iter()
        .map(|(id, image)| {
            let d = &image.texture_descriptor;
            let format = d.format;
            let (block_w, block_h) = format.block_dimensions();
            let bytes = image.data.as_ref().map(|data| data.len() as u64);
            let per_texel = format
                .block_copy_size(None)
                .map(|b| f64::from(b) / f64::from((block_w * block_h).max(1)));
            TextureInfo {
                id: asset_id("image", id),
                name: server
                    .and_then(|s| s.get_path(id))
                    .map_or_else(|| asset_id("image", id), |p| p.to_string()),
                width_px: d.size.width,
                height_px: d.size.height,
                layers: d.size.depth_or_array_layers,
                mip_levels: d.mip_level_count,
                format: Some(format!("{format:?}").to_lowercase()),
                bytes,
                bytes_estimate: match (bytes, per_texel) {
                    (None, Some(per_texel)) => Some(estimate_texture_bytes(
                        d.size.width,
                        d.size.height,
                        d.size.depth_or_array_layers,
                        d.mip_level_count,
                        per_texel,
                    )),
                    _ => None,
                },
            }
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

fn light_name(world: &World, entity: Entity, kind: &str) -> String {
    world.get::<Name>(entity).map_or_else(
        || format!("{kind} light {entity}"),
        |n| n.as_str().to_owned(),
    )
}

fn lights(world: &mut World) -> Vec<LightInfo> {
    let point_px = world
        .get_resource::<PointLightShadowMap>()
        .map(|m| u32::try_from(m.size).unwrap_or(u32::MAX));
    let other_px = world
        .get_resource::<DirectionalLightShadowMap>()
        .map(|m| u32::try_from(m.size).unwrap_or(u32::MAX));
    let mut found: Vec<(Entity, LightKind, bool, Option<f64>)> = Vec::new();
    let mut q = world.query::<(Entity, &PointLight)>();
    found.extend(q.iter(world).map(|(e, l)| {
        (
            e,
            LightKind::Point,
            l.shadow_maps_enabled,
            Some(f64::from(l.range)),
        )
    }));
    let mut q = world.query::<(Entity, &SpotLight)>();
    found.extend(q.iter(world).map(|(e, l)| {
        (
            e,
            LightKind::Spot,
            l.shadow_maps_enabled,
            Some(f64::from(l.range)),
        )
    }));
    let mut q = world.query::<(Entity, &DirectionalLight)>();
    found.extend(
        q.iter(world)
            .map(|(e, l)| (e, LightKind::Directional, l.shadow_maps_enabled, None)),
    );
    found
        .into_iter()
        .map(|(entity, kind, shadows, range)| {
            let (word, px) = match kind {
                LightKind::Point => ("point", point_px),
                LightKind::Spot => ("spot", other_px),
                _ => ("directional", other_px),
            };
            LightInfo {
                id: entity.to_string(),
                name: light_name(world, entity, word),
                kind,
                shadows,
                shadow_map_px: if shadows { px } else { None },
                range,
                site: spawn_site(world, entity),
            }
        })
        .collect()
}

fn views(world: &mut World) -> Vec<ViewInfo> {
    let mut q = world.query::<(Entity, &Camera)>();
    let cameras: Vec<(Entity, Option<(u32, u32)>)> = q
        .iter(world)
        .map(|(e, c)| (e, c.physical_target_size().map(|s| (s.x, s.y))))
        .collect();
    cameras
        .into_iter()
        .filter_map(|(entity, size)| {
            let (width_px, height_px) = size?;
            Some(ViewInfo {
                name: world
                    .get::<Name>(entity)
                    .map_or_else(|| format!("camera {entity}"), |n| n.as_str().to_owned()),
                width_px,
                height_px,
                scale_factor: None,
                capped: None,
                site: spawn_site(world, entity),
            })
        })
        .collect()
}

/// Every entity's `Visibility`, by entity: what bisection must leave as it found it.
pub(crate) fn visibilities(world: &mut World) -> BTreeMap<String, String> {
    let mut q = world.query::<(Entity, &Visibility)>();
    q.iter(world)
        .map(|(e, v)| (format!("{e} visibility"), format!("{v:?}")))
        .collect()
}

/// Triangles the frame's views saw: every mesh entity Bevy's visibility pass marked visible
/// in a view, times its mesh's triangles.
pub(crate) fn visible_triangles(world: &mut World) -> u64 {
    let mut per_mesh: HashMap<AssetId<Mesh>, u64> = HashMap::new();
    let mut q = world.query::<(&Mesh3d, &ViewVisibility)>();
    let visible: Vec<AssetId<Mesh>> = q
        .iter(world)
        .filter(|(_, v)| v.get())
        .map(|(m, _)| m.0.id())
        .collect();
    let mut total = 0u64;
    for id in visible {
        let triangles = *per_mesh.entry(id).or_insert_with(|| {
            world
                .get_resource::<Assets<Mesh>>()
                .and_then(|a| a.get(id))
                .and_then(mesh_counts)
                .or_else(|| {
                    world
                        .get_resource::<MeshStats>()
                        .and_then(|s| s.0.get(&id).copied())
                })
                .map_or(0, |c| c.triangles)
        });
        total = total.saturating_add(triangles);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_stable_digests() {
        assert_eq!(fnv1a(""), "cbf29ce484222325");
        assert_eq!(fnv1a("a"), "af63dc4c8601ec8c");
        assert_ne!(fnv1a("material a"), fnv1a("material b"));
    }
}
