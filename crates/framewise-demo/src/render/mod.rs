//! The CPU software renderer: a frame graph of six passes (shadow, geometry, lighting,
//! particles, post, ui) drawing the scene into an offscreen framebuffer. Rasterization,
//! lighting and post-processing run in horizontal bands on the worker threads.
//!
//! The renderer reads only its own copies of the scene (instances, particles, textures):
//! the game copies them in during `upload`, which is what `bytes_uploaded` counts.
//!
//! This file holds the renderer's state, its targets and the per-draw state setup; `mesh`
//! the meshes, instances and particles; `upload` the upload stage and the HUD; `passes` the
//! six passes and the band jobs they run; `graph` the frame graph they form.

pub mod graph;
pub mod materials;
mod mesh;
mod passes;
pub mod raster;
pub mod texture;
pub mod ui;
mod upload;

use mesh::Mesh;
pub use mesh::{Instance, MeshId, ParticleVertex};

use rayon::prelude::*;

use crate::config::Variant;
use crate::math::{fast_inv_sqrt, Mat4, Vec2, Vec3};
use crate::sim::{Camera, Flock, Particles};
use crate::world::{Obstacle, WORLD_M};
use graph::{Pass, SHADOW_SIZE};
use materials::{Material, Pipelines};
use raster::{pack_normal, raster_band, setup, unpack_normal, ClipVertex, Tri};
use texture::Texture;
use ui::{Quad, QuadGroup};

/// Instances one draw call can carry when batching (one uniform block's worth).
pub const BATCH_INSTANCES: usize = 256;
/// Particles one draw call can carry (one vertex buffer).
pub const PARTICLES_PER_DRAW: usize = 4096;
/// Rows per raster/lighting band (one job each).
const BAND_ROWS: usize = 24;
/// Rows per shadow-map band.
const SHADOW_BAND_ROWS: usize = 64;
/// Ground tiles per side.
const GROUND_TILES: usize = 32;
/// Metres per repetition of the ground texture.
const GROUND_UV_M: f32 = 16.0;

/// Counts of one pass in one frame: what its workload record and the counters carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Draw calls.
    pub draws: u64,
    /// Instances drawn.
    pub instances: u64,
    /// Vertices submitted.
    pub vertices: u64,
    /// Triangles submitted.
    pub triangles: u64,
    /// Pixels shaded (fragments written, or pixels computed by a compute pass).
    pub pixels_shaded: u64,
    /// Compute dispatches (one per band job).
    pub dispatches: u64,
}

/// What one frame's rendering did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderStats {
    /// Per pass, in [`graph::PASSES`] order.
    pub passes: [PassStats; 6],
    /// Shading tables built during the frame.
    pub pipelines_created: u64,
}

/// What the renderer needs to know about the frame besides the uploaded buffers.
#[derive(Clone, Debug)]
pub struct FrameView {
    /// The camera.
    pub camera: Camera,
    /// Where the player unit is drawn (its published position).
    pub player: Vec2,
    /// The pause menu is up.
    pub paused: bool,
    /// HUD lines.
    pub hud: Vec<String>,
}

/// Uploads one frame's instances and particles from the game's state into the renderer's
/// own buffers. Returns the bytes copied.
pub struct SceneUpload<'a> {
    /// The flock.
    pub flock: &'a Flock,
    /// The player unit's published position.
    pub player: Vec2,
    /// Obstacles (only standing ones are drawn).
    pub obstacles: &'a [Obstacle],
    /// Crystals that have emerged.
    pub crystals: &'a [Vec2],
    /// Particles.
    pub particles: &'a Particles,
}

/// The renderer and every target it owns.
pub struct Renderer {
    width: usize,
    height: usize,
    variant: Variant,
    /// Draw the shadow pass; off, the shadow map stays clear (nothing is in shadow).
    shadows: bool,
    depth: Vec<f32>,
    albedo: Vec<u32>,
    normal: Vec<u32>,
    position: Vec<Vec3>,
    shadow: Vec<f32>,
    hdr: Vec<[f32; 3]>,
    bloom: Vec<[f32; 3]>,
    bloom_tmp: Vec<[f32; 3]>,
    ldr: Vec<u32>,
    /// The ground texture as the renderer holds it (base, then the streamed detail).
    pub ground: Texture,
    /// The shading-table cache.
    pub pipelines: Pipelines,
    instances: Vec<Instance>,
    /// `(mesh, material, start, end)` runs of `instances`.
    groups: Vec<(MeshId, Material, usize, usize)>,
    particles: Vec<ParticleVertex>,
    quads: Vec<Quad>,
    quad_groups: Vec<(QuadGroup, usize, usize)>,
    tris: Vec<Tri>,
    meshes: [Mesh; 3],
    /// A constant block per draw: what binding state costs.
    draw_constants: [f32; 64],
    /// Tone-mapping curve (Reinhard, then gamma 2), by HDR value in 1/256 steps.
    tonemap: Vec<u8>,
}

/// Entries of the tone-mapping table, and its resolution: HDR values up to 16.
const TONEMAP_ENTRIES: usize = 4096;
const TONEMAP_STEPS_PER_UNIT: f32 = 256.0;

fn tonemap_table() -> Vec<u8> {
    (0..TONEMAP_ENTRIES)
        .map(|i| {
            let v = (i as f32 + 0.5) / TONEMAP_STEPS_PER_UNIT;
            ((v / (1.0 + v)).sqrt() * 255.0).min(255.0) as u8
        })
        .collect()
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("variant", &self.variant)
            .finish_non_exhaustive()
    }
}

fn sun_direction() -> Vec3 {
    Vec3::new(-0.45, 1.0, 0.35).normalized()
}

fn unpack_rgb(c: u32) -> [f32; 3] {
    // A multiplication: dividing by a constant that has no exact reciprocal stays a division.
    const INV_255: f32 = 1.0 / 255.0;
    [
        ((c >> 16) & 0xff) as f32 * INV_255,
        ((c >> 8) & 0xff) as f32 * INV_255,
        (c & 0xff) as f32 * INV_255,
    ]
}

/// Draw calls for `n` instances: batched, or one each in the slow variant.
pub fn draws_for(variant: Variant, n: usize, per_draw: usize) -> u64 {
    match variant {
        Variant::Normal => n.div_ceil(per_draw) as u64,
        Variant::Slow => n as u64,
    }
}

impl Renderer {
    /// A renderer for a `width × height` framebuffer.
    pub fn new(width: u32, height: u32, variant: Variant) -> Self {
        let (w, h) = (width as usize, height as usize);
        let pixels = w * h;
        let bloom_pixels = (w / 4) * (h / 4);
        Self {
            width: w,
            height: h,
            variant,
            shadows: true,
            depth: vec![1.0; pixels],
            albedo: vec![0; pixels],
            normal: vec![0; pixels],
            position: vec![Vec3::default(); pixels],
            shadow: vec![1.0; SHADOW_SIZE * SHADOW_SIZE],
            hdr: vec![[0.0; 3]; pixels],
            bloom: vec![[0.0; 3]; bloom_pixels],
            bloom_tmp: vec![[0.0; 3]; bloom_pixels],
            ldr: vec![0; pixels],
            ground: Texture::default(),
            pipelines: Pipelines::new(),
            instances: Vec::new(),
            groups: Vec::new(),
            particles: Vec::new(),
            quads: Vec::new(),
            quad_groups: Vec::new(),
            tris: Vec::new(),
            meshes: [Mesh::cube(), Mesh::dart(), Mesh::octahedron()],
            draw_constants: [0.0; 64],
            tonemap: tonemap_table(),
        }
    }

    /// Draws the shadow pass (`true`, the default) or skips it: the shadow map stays clear,
    /// so nothing is in shadow and the pass records no draws.
    pub fn with_shadows(mut self, shadows: bool) -> Self {
        self.shadows = shadows;
        self
    }

    /// The final image, 0xAARRGGBB, row-major.
    pub fn image(&self) -> &[u32] {
        &self.ldr
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Builds the shading tables of the given materials now (the load-time warm-up).
    /// Returns how many were built.
    pub fn warm_up(&mut self, materials: &[Material]) -> u64 {
        materials
            .iter()
            .filter(|&&m| self.pipelines.ensure(m))
            .count() as u64
    }

    /// Binds a draw's state: finds the pipeline and fills the constant block. Its cost is
    /// paid per draw call, which is what batching saves.
    #[inline(never)]
    fn bind_draw(&mut self, material: Material, view_proj: &Mat4, first: &Instance) {
        let id = materials::MATERIALS
            .iter()
            .position(|m| m.name() == material.name())
            .unwrap_or(0);
        let built = self.pipelines.table(id as u8).is_some();
        for (k, c) in self.draw_constants.iter_mut().enumerate() {
            let m = view_proj.m[k % 4][(k / 4) % 4];
            *c =
                m * if built { 1.0 } else { 0.5 } + first.pos.x * (k as f32 * 1e-3) + first.scale.y;
        }
        std::hint::black_box(&self.draw_constants);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Obstacle;

    #[test]
    fn a_box_casts_a_shadow_and_is_drawn() {
        let mut r = Renderer::new(160, 90, Variant::Normal);
        r.warm_up(&[
            Material::Ground,
            Material::Obstacle,
            Material::Player,
            Material::Agent,
        ]);
        let obstacles = [Obstacle {
            min: Vec2::new(60.0, 60.0),
            max: Vec2::new(68.0, 68.0),
            height_m: 6.0,
            standing: true,
        }];
        let flock = Flock::default();
        let particles = Particles::new(4);
        r.upload_scene(&SceneUpload {
            flock: &flock,
            player: Vec2::new(20.0, 20.0),
            obstacles: &obstacles,
            crystals: &[],
            particles: &particles,
        });
        let view = FrameView {
            camera: Camera {
                focus: Vec2::new(64.0, 64.0),
            },
            player: Vec2::new(20.0, 20.0),
            paused: false,
            hud: Vec::new(),
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        let stats = r.render(&view, &pool);
        let obstacle_px = r
            .albedo
            .iter()
            .filter(|a| *a >> 24 == u32::from(Material::Obstacle.id()))
            .count();
        assert!(obstacle_px > 50, "the box covers {obstacle_px} pixels");
        assert!(stats.passes[Pass::Shadow as usize].pixels_shaded > 100);
        // Ground pixels in shadow: lit by ambient only, much darker than the sunlit ground.
        let ground: Vec<f32> = (0..r.hdr.len())
            .filter(|&i| r.albedo[i] >> 24 == u32::from(Material::Ground.id()))
            .map(|i| r.hdr[i][1])
            .collect();
        let max = ground.iter().copied().fold(0.0f32, f32::max);
        let dark = ground.iter().filter(|g| **g < max * 0.4).count();
        assert!(
            dark > 20,
            "{dark} shadowed ground pixels of {}",
            ground.len()
        );
    }
}
