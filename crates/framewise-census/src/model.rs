//! The census document: what a scene holds, walked once on demand (never per frame).
//!
//! An engine fills a [`SceneParts`] (entries, meshes, materials, textures, lights, views,
//! asset counts) and [`Census::new`] derives everything else — per-entry counts, the groups
//! that share one mesh and material, the totals — so every engine's census adds up the same
//! way. The JSON shape is `framewise.census/1` (docs/cli/census.md).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The census document's schema tag.
pub const CENSUS_SCHEMA: &str = "framewise.census/1";

/// One census: the scene as it stood when the engine walked it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Census {
    /// Always [`CENSUS_SCHEMA`].
    pub schema: String,
    /// The engine that took it, with its version where known (`bevy 0.19.1`).
    pub engine: String,
    /// The index of the frame open when the census was taken, when a session records.
    pub frame: Option<u64>,
    /// One per entity or entity group (an engine may group entities spawned together;
    /// `entities` says how many each holds), in the engine's order.
    pub entries: Vec<CensusEntry>,
    /// Every mesh an entry uses.
    pub meshes: Vec<MeshInfo>,
    /// Every material an entry uses.
    pub materials: Vec<MaterialInfo>,
    /// Textures (those materials sample, and any other the engine reports).
    pub textures: Vec<TextureInfo>,
    /// Lights.
    pub lights: Vec<LightInfo>,
    /// Views (cameras and the targets they render to).
    pub views: Vec<ViewInfo>,
    /// How many assets of each kind the engine holds loaded, used or not.
    pub assets: AssetCounts,
    /// Meshes and materials used together by more than one mesh instance, most instances
    /// first.
    pub shared_groups: Vec<SharedGroup>,
    /// Sums over the whole census.
    pub totals: Totals,
}

/// What an engine's walk of the scene gathers; [`Census::new`] derives the rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneParts {
    /// The engine, with its version where known.
    pub engine: String,
    /// The frame open when the walk ran, if a session records.
    pub frame: Option<u64>,
    /// Entities or entity groups, each with the mesh + material pairs it draws.
    pub entries: Vec<EntryParts>,
    /// Meshes.
    pub meshes: Vec<MeshInfo>,
    /// Materials.
    pub materials: Vec<MaterialInfo>,
    /// Textures.
    pub textures: Vec<TextureInfo>,
    /// Lights.
    pub lights: Vec<LightInfo>,
    /// Views.
    pub views: Vec<ViewInfo>,
    /// Loaded asset counts.
    pub assets: AssetCounts,
}

/// One entity or entity group as the engine saw it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EntryParts {
    /// The engine's handle for it: what bisection hides and shows (`12v1`, `group:flock`).
    pub id: String,
    /// A readable name (the entity's `Name`, else its id).
    pub name: String,
    /// Where it was spawned (`src/scene.rs:42`), when the engine knows.
    pub site: Option<String>,
    /// Entities it holds (1 for a single entity).
    pub entities: u64,
    /// Of those, visible in at least one view at the walk; `None` when the engine did not
    /// compute visibility.
    pub visible_entities: Option<u64>,
    /// What it draws: each mesh + material pair and how many instances of it.
    pub draws: Vec<Draw>,
    /// Whether the engine draws its instances batched (instanced or merged); `None` unknown.
    pub batched: Option<bool>,
}

/// A mesh drawn with a material, `instances` times, by one entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draw {
    /// The mesh's id (a [`MeshInfo::id`]).
    pub mesh: String,
    /// The material's id (a [`MaterialInfo::id`]).
    pub material: String,
    /// Mesh instances.
    pub instances: u64,
    /// Of those, instances that cast shadows.
    pub shadow_casters: u64,
}

/// One entity or entity group in the census, with its counts derived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CensusEntry {
    /// The engine's handle for it.
    pub id: String,
    /// A readable name.
    pub name: String,
    /// Where it was spawned, `null` when unknown.
    pub site: Option<String>,
    /// Entities it holds.
    pub entities: u64,
    /// Visible entities, `null` when visibility was not computed.
    pub visible_entities: Option<u64>,
    /// Mesh instances it draws (the sum of its draws' instances).
    pub mesh_instances: u64,
    /// Triangles it submits: each draw's instances × its mesh's triangles.
    pub triangles: u64,
    /// Distinct meshes it uses.
    pub unique_meshes: u64,
    /// Distinct materials it uses.
    pub unique_materials: u64,
    /// Mesh instances that cast shadows.
    pub shadow_casters: u64,
    /// Whether the engine batches it, `null` unknown.
    pub batched: Option<bool>,
    /// What it draws.
    pub draws: Vec<Draw>,
}

/// A mesh.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeshInfo {
    /// The engine's id for it.
    pub id: String,
    /// A readable name (its asset path, else the id).
    pub name: String,
    /// Triangles one instance submits.
    pub triangles: u64,
    /// Vertices.
    pub vertices: u64,
    /// Vertex and index bytes, when the engine knows them exactly.
    pub bytes: Option<u64>,
}

/// A material.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaterialInfo {
    /// The engine's id for it.
    pub id: String,
    /// A readable name.
    pub name: String,
    /// A digest of every parameter that changes how it draws (colours, textures, flags),
    /// equal for materials that draw alike; `None` when the engine cannot compare them.
    pub fingerprint: Option<String>,
    /// The textures it samples (ids).
    pub textures: Vec<String>,
}

/// A texture.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextureInfo {
    /// The engine's id for it.
    pub id: String,
    /// A readable name.
    pub name: String,
    /// Width in texels.
    pub width_px: u32,
    /// Height in texels.
    pub height_px: u32,
    /// Depth or array layers (1 for a 2D texture).
    pub layers: u32,
    /// Mip levels.
    pub mip_levels: u32,
    /// The format's name (`rgba8unorm-srgb`), if known.
    pub format: Option<String>,
    /// Bytes, when the engine knows them exactly (its data's length, all mips).
    pub bytes: Option<u64>,
    /// Bytes estimated from the size, layers, mips and bytes per texel, when `bytes` is
    /// unknown ([`estimate_texture_bytes`]).
    pub bytes_estimate: Option<u64>,
}

/// What kind of light.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LightKind {
    /// Omnidirectional: a shadow map is a cube (6 faces).
    Point,
    /// A cone: one shadow map face.
    Spot,
    /// Sun-like: cascades.
    Directional,
    /// Anything else.
    Other,
}

/// A light.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LightInfo {
    /// The engine's id for it.
    pub id: String,
    /// A readable name.
    pub name: String,
    /// Point, spot, directional or other.
    pub kind: LightKind,
    /// It casts shadows.
    pub shadows: bool,
    /// The shadow map's side in texels, when it casts shadows and the engine says.
    pub shadow_map_px: Option<u32>,
    /// Its range in world units, when it has one.
    pub range: Option<f64>,
    /// Where it was spawned, `null` when unknown.
    pub site: Option<String>,
}

/// A view: a camera and the target it renders to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewInfo {
    /// A readable name.
    pub name: String,
    /// The target's width in physical pixels.
    pub width_px: u32,
    /// The target's height in physical pixels.
    pub height_px: u32,
    /// The window's scale factor (physical over logical pixels), when it renders to one.
    pub scale_factor: Option<f64>,
    /// Whether the render resolution is capped below the window's physical size (a fixed
    /// render resolution, a render scale); `false`: it follows the window, however large;
    /// `None`: unknown (an offscreen image has no window to follow).
    pub capped: Option<bool>,
    /// Where the camera was spawned, `null` when unknown.
    pub site: Option<String>,
}

/// Loaded asset counts, used or not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssetCounts {
    /// Meshes loaded.
    pub meshes: u64,
    /// Materials loaded.
    pub materials: u64,
    /// Textures (images) loaded.
    pub textures: u64,
}

/// A mesh and a material used together by more than one mesh instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedGroup {
    /// The mesh's id.
    pub mesh: String,
    /// The material's id.
    pub material: String,
    /// Mesh instances that use the pair.
    pub instances: u64,
    /// The entries they belong to (ids).
    pub entries: Vec<String>,
    /// Whether every one of those entries is batched: `true` all, `false` at least one is
    /// not, `null` unknown for some and none known unbatched.
    pub batched: Option<bool>,
    /// The entries' spawning sites, distinct, in entry order.
    pub sites: Vec<String>,
}

/// Sums over a census. `null` where only a rendered frame can measure the value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Entities.
    pub entities: u64,
    /// Visible entities, `null` when any entry's visibility is unknown.
    pub visible_entities: Option<u64>,
    /// Mesh instances.
    pub mesh_instances: u64,
    /// Triangles submitted by all mesh instances (visible or not).
    pub triangles: u64,
    /// Distinct meshes used.
    pub unique_meshes: u64,
    /// Distinct materials used.
    pub unique_materials: u64,
    /// Mesh + material pairs used by more than one instance.
    pub shared_groups: u64,
    /// Shadow-casting mesh instances.
    pub shadow_casters: u64,
    /// Lights.
    pub lights: u64,
    /// Lights that cast shadows.
    pub shadow_casting_lights: u64,
    /// Bytes of the textures whose size is known exactly.
    pub texture_bytes: u64,
    /// Bytes of the textures whose size is only estimated.
    pub texture_bytes_estimate: u64,
    /// Always `null`: draw calls are what a rendered frame measures (the capture's
    /// counters, the bisection's frames), never a scene walk.
    pub draw_calls: Option<u64>,
}

/// Bytes of a texture estimated from its shape: each mip level is a quarter of the one
/// above (rounded up, at least one texel), times layers and bytes per texel.
pub fn estimate_texture_bytes(
    width_px: u32,
    height_px: u32,
    layers: u32,
    mip_levels: u32,
    bytes_per_texel: f64,
) -> u64 {
    let (mut w, mut h) = (u64::from(width_px.max(1)), u64::from(height_px.max(1)));
    let mut texels: u64 = 0;
    for _ in 0..mip_levels.max(1) {
        texels = texels.saturating_add(w.saturating_mul(h));
        w = w.div_ceil(2);
        h = h.div_ceil(2);
    }
    let texels = texels.saturating_mul(u64::from(layers.max(1)));
    // f64 holds every texel count below 2^53 exactly; the product is rounded once.
    (texels as f64 * bytes_per_texel).round() as u64
}

impl CensusEntry {
    fn from_parts(parts: EntryParts, triangles_of: &BTreeMap<&str, u64>) -> Self {
        // Saturating, as every sum of the census (`triangles`, the totals): a plain sum
        // wrapped (2^63 + 2^63 = 0) in a release build and panicked in a debug one.
        let mesh_instances = parts
            .draws
            .iter()
            .map(|d| d.instances)
            .fold(0u64, u64::saturating_add);
        let triangles = parts
            .draws
            .iter()
            .map(|d| {
                d.instances
                    .saturating_mul(triangles_of.get(d.mesh.as_str()).copied().unwrap_or(0))
            })
            .fold(0u64, u64::saturating_add);
        let unique_meshes = parts.draws.iter().map(|d| &d.mesh).collect::<BTreeSet<_>>();
        let unique_materials = parts
            .draws
            .iter()
            .map(|d| &d.material)
            .collect::<BTreeSet<_>>();
        Self {
            shadow_casters: parts
                .draws
                .iter()
                .map(|d| d.shadow_casters)
                .fold(0u64, u64::saturating_add),
            unique_meshes: unique_meshes.len() as u64,
            unique_materials: unique_materials.len() as u64,
            mesh_instances,
            triangles,
            id: parts.id,
            name: parts.name,
            site: parts.site,
            entities: parts.entities,
            visible_entities: parts.visible_entities,
            batched: parts.batched,
            draws: parts.draws,
        }
    }
}

impl Census {
    /// The census of what an engine's walk gathered: per-entry counts, shared groups and
    /// totals derived by one rule for every engine.
    pub fn new(parts: SceneParts) -> Self {
        let triangles_of: BTreeMap<&str, u64> = parts
            .meshes
            .iter()
            .map(|m| (m.id.as_str(), m.triangles))
            .collect();
        let entries: Vec<CensusEntry> = parts
            .entries
            .into_iter()
            .map(|e| CensusEntry::from_parts(e, &triangles_of))
            .collect();
        let shared_groups = shared_groups(&entries);
        let totals = totals(&entries, &shared_groups, &parts.lights, &parts.textures);
        Self {
            schema: CENSUS_SCHEMA.to_owned(),
            engine: parts.engine,
            frame: parts.frame,
            entries,
            meshes: parts.meshes,
            materials: parts.materials,
            textures: parts.textures,
            lights: parts.lights,
            views: parts.views,
            assets: parts.assets,
            shared_groups,
            totals,
        }
    }

    /// The mesh with this id.
    pub fn mesh(&self, id: &str) -> Option<&MeshInfo> {
        self.meshes.iter().find(|m| m.id == id)
    }

    /// The material with this id.
    pub fn material(&self, id: &str) -> Option<&MaterialInfo> {
        self.materials.iter().find(|m| m.id == id)
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&CensusEntry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The entries, most triangles first (ties: most mesh instances, then census order).
    pub fn entries_by_triangles(&self) -> Vec<&CensusEntry> {
        let mut sorted: Vec<&CensusEntry> = self.entries.iter().collect();
        sorted.sort_by(|a, b| {
            b.triangles
                .cmp(&a.triangles)
                .then(b.mesh_instances.cmp(&a.mesh_instances))
        });
        sorted
    }
}

fn shared_groups(entries: &[CensusEntry]) -> Vec<SharedGroup> {
    let mut groups: BTreeMap<(&str, &str), SharedGroup> = BTreeMap::new();
    for entry in entries {
        for draw in &entry.draws {
            let group = groups
                .entry((draw.mesh.as_str(), draw.material.as_str()))
                .or_insert_with(|| SharedGroup {
                    mesh: draw.mesh.clone(),
                    material: draw.material.clone(),
                    instances: 0,
                    entries: Vec::new(),
                    batched: Some(true),
                    sites: Vec::new(),
                });
            group.instances = group.instances.saturating_add(draw.instances);
            // Entries are walked in order, so an entry already counted here is the last one
            // (a linear search would make a large group quadratic).
            if group.entries.last() != Some(&entry.id) {
                group.entries.push(entry.id.clone());
                group.batched = match (group.batched, entry.batched) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (None, _) | (_, None) => None,
                    (Some(true), Some(true)) => Some(true),
                };
            }
            if let Some(site) = &entry.site {
                if !group.sites.contains(site) {
                    group.sites.push(site.clone());
                }
            }
        }
    }
    let mut shared: Vec<SharedGroup> = groups.into_values().filter(|g| g.instances > 1).collect();
    shared.sort_by_key(|g| std::cmp::Reverse(g.instances));
    shared
}

fn totals(
    entries: &[CensusEntry],
    shared_groups: &[SharedGroup],
    lights: &[LightInfo],
    textures: &[TextureInfo],
) -> Totals {
    let sum = |f: fn(&CensusEntry) -> u64| entries.iter().map(f).fold(0u64, u64::saturating_add);
    let visible_entities = entries
        .iter()
        .map(|e| e.visible_entities)
        .try_fold(0u64, |acc, v| v.map(|v| acc.saturating_add(v)));
    let meshes: BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| e.draws.iter().map(|d| d.mesh.as_str()))
        .collect();
    let materials: BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| e.draws.iter().map(|d| d.material.as_str()))
        .collect();
    Totals {
        entities: sum(|e| e.entities),
        visible_entities,
        mesh_instances: sum(|e| e.mesh_instances),
        triangles: sum(|e| e.triangles),
        unique_meshes: meshes.len() as u64,
        unique_materials: materials.len() as u64,
        shared_groups: shared_groups.len() as u64,
        shadow_casters: sum(|e| e.shadow_casters),
        lights: lights.len() as u64,
        shadow_casting_lights: lights.iter().filter(|l| l.shadows).count() as u64,
        texture_bytes: textures
            .iter()
            .filter_map(|t| t.bytes)
            .fold(0, u64::saturating_add),
        texture_bytes_estimate: textures
            .iter()
            .filter(|t| t.bytes.is_none())
            .filter_map(|t| t.bytes_estimate)
            .fold(0, u64::saturating_add),
        draw_calls: None,
    }
}
