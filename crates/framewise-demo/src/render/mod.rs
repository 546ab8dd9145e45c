//! The CPU software renderer: a frame graph of six passes (shadow, geometry, lighting,
//! particles, post, ui) drawing the scene into an offscreen framebuffer. Rasterization,
//! lighting and post-processing run in horizontal bands on the worker threads.
//!
//! The renderer reads only its own copies of the scene (instances, particles, textures):
//! the game copies them in during `upload`, which is what `bytes_uploaded` counts.

pub mod graph;
pub mod materials;
pub mod raster;
pub mod texture;
pub mod ui;

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

/// Which mesh an instance draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MeshId {
    /// A unit box standing on the ground.
    Cube = 0,
    /// The agents' dart.
    Dart = 1,
    /// The crystals' octahedron.
    Octahedron = 2,
}

/// One drawable instance, as uploaded.
#[derive(Clone, Copy, Debug)]
pub struct Instance {
    /// Position of the mesh origin, metres.
    pub pos: Vec3,
    /// Rotation about the vertical, radians.
    pub yaw: f32,
    /// Per-axis scale.
    pub scale: Vec3,
    /// 0xRRGGBB.
    pub colour: u32,
    /// Material.
    pub material: Material,
    /// Mesh.
    pub mesh: MeshId,
}

/// One particle, as uploaded.
#[derive(Clone, Copy, Debug)]
pub struct ParticleVertex {
    /// Position, metres.
    pub pos: Vec3,
    /// 0xRRGGBB.
    pub colour: u32,
}

struct Mesh {
    verts: Vec<Vec3>,
    tris: Vec<[usize; 3]>,
    normals: Vec<Vec3>,
}

impl Mesh {
    /// Orients every triangle outward (counter-clockwise seen from outside) from `centre`.
    fn new(verts: Vec<Vec3>, mut tris: Vec<[usize; 3]>, centre: Vec3) -> Self {
        let mut normals = Vec::with_capacity(tris.len());
        for t in &mut tris {
            let (a, b, c) = (verts[t[0]], verts[t[1]], verts[t[2]]);
            let mut n = (b - a).cross(c - a).normalized();
            let centroid = (a + b + c) * (1.0 / 3.0);
            if n.dot(centroid - centre) < 0.0 {
                t.swap(1, 2);
                n = -n;
            }
            normals.push(n);
        }
        Self {
            verts,
            tris,
            normals,
        }
    }

    fn cube() -> Self {
        let v = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
        let verts = vec![
            v(-0.5, 0.0, -0.5),
            v(0.5, 0.0, -0.5),
            v(0.5, 0.0, 0.5),
            v(-0.5, 0.0, 0.5),
            v(-0.5, 1.0, -0.5),
            v(0.5, 1.0, -0.5),
            v(0.5, 1.0, 0.5),
            v(-0.5, 1.0, 0.5),
        ];
        // No bottom face: boxes stand on the ground.
        let tris = vec![
            [4, 5, 6],
            [4, 6, 7],
            [0, 1, 5],
            [0, 5, 4],
            [1, 2, 6],
            [1, 6, 5],
            [2, 3, 7],
            [2, 7, 6],
            [3, 0, 4],
            [3, 4, 7],
        ];
        Self::new(verts, tris, v(0.0, 0.5, 0.0))
    }

    fn dart() -> Self {
        let verts = vec![
            Vec3::new(0.7, 0.25, 0.0),
            Vec3::new(-0.45, 0.0, -0.4),
            Vec3::new(-0.45, 0.0, 0.4),
            Vec3::new(-0.45, 0.6, 0.0),
        ];
        let tris = vec![[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2]];
        Self::new(verts, tris, Vec3::new(-0.1, 0.2, 0.0))
    }

    fn octahedron() -> Self {
        let verts = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
            Vec3::new(0.5, 1.0, 0.0),
            Vec3::new(-0.5, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.5),
            Vec3::new(0.0, 1.0, -0.5),
        ];
        let tris = vec![
            [1, 2, 4],
            [1, 4, 3],
            [1, 3, 5],
            [1, 5, 2],
            [0, 4, 2],
            [0, 3, 4],
            [0, 5, 3],
            [0, 2, 5],
        ];
        Self::new(verts, tris, Vec3::new(0.0, 1.0, 0.0))
    }
}

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

    /// The final image, 0xAARRGGBB, row-major.
    pub fn image(&self) -> &[u32] {
        &self.ldr
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Copies the frame's instances and particles into the renderer's buffers. Returns the
    /// bytes copied.
    pub fn upload_scene(&mut self, scene: &SceneUpload<'_>) -> u64 {
        self.instances.clear();
        self.groups.clear();
        let group = |instances: &mut Vec<Instance>,
                     mesh,
                     material,
                     f: &mut dyn FnMut(&mut Vec<Instance>)| {
            let start = instances.len();
            f(instances);
            (mesh, material, start, instances.len())
        };
        let g = group(
            &mut self.instances,
            MeshId::Cube,
            Material::Obstacle,
            &mut |out| {
                for o in scene.obstacles.iter().filter(|o| o.standing) {
                    let c = (o.min + o.max) * 0.5;
                    out.push(Instance {
                        pos: Vec3::new(c.x, 0.0, c.y),
                        yaw: 0.0,
                        scale: Vec3::new(o.max.x - o.min.x, o.height_m, o.max.y - o.min.y),
                        colour: 0x8a8278,
                        material: Material::Obstacle,
                        mesh: MeshId::Cube,
                    });
                }
            },
        );
        self.groups.push(g);
        let flock = scene.flock;
        let g = group(
            &mut self.instances,
            MeshId::Dart,
            Material::Agent,
            &mut |out| {
                for i in 0..flock.len() {
                    let p = flock.pos[i];
                    let v = flock.vel[i];
                    out.push(Instance {
                        pos: Vec3::new(p.x, 0.0, p.y),
                        yaw: v.y.atan2(v.x),
                        scale: Vec3::new(1.0, 1.0, 1.0),
                        colour: if flock.wave[i] { 0xd04030 } else { 0x3070d0 },
                        material: Material::Agent,
                        mesh: MeshId::Dart,
                    });
                }
            },
        );
        self.groups.push(g);
        let g = group(
            &mut self.instances,
            MeshId::Cube,
            Material::Player,
            &mut |out| {
                out.push(Instance {
                    pos: Vec3::new(scene.player.x, 0.0, scene.player.y),
                    yaw: 0.0,
                    scale: Vec3::new(1.6, 2.2, 1.6),
                    colour: 0xf0d040,
                    material: Material::Player,
                    mesh: MeshId::Cube,
                });
            },
        );
        self.groups.push(g);
        let g = group(
            &mut self.instances,
            MeshId::Octahedron,
            Material::Crystal,
            &mut |out| {
                for (k, c) in scene.crystals.iter().enumerate() {
                    out.push(Instance {
                        pos: Vec3::new(c.x, 0.0, c.y),
                        yaw: k as f32 * 0.7,
                        scale: Vec3::new(1.2, 1.5 + (k % 3) as f32 * 0.5, 1.2),
                        colour: 0x60e0f0,
                        material: Material::Crystal,
                        mesh: MeshId::Octahedron,
                    });
                }
            },
        );
        self.groups.push(g);
        self.groups.retain(|g| g.3 > g.2);
        self.particles.clear();
        let p = scene.particles;
        self.particles.extend((0..p.len()).map(|i| ParticleVertex {
            pos: p.pos[i],
            colour: p.colour[i],
        }));
        (self.instances.len() * std::mem::size_of::<Instance>()
            + self.particles.len() * std::mem::size_of::<ParticleVertex>()) as u64
    }

    /// Copies the HUD quads in (built by [`Renderer::build_hud`]). Returns the bytes copied.
    fn quad_bytes(&self) -> u64 {
        (self.quads.len() * std::mem::size_of::<Quad>()) as u64
    }

    /// Lays out the HUD for the frame: panel, minimap, text. Returns the bytes uploaded.
    pub fn build_hud(&mut self, view: &FrameView, flock: &Flock, obstacles: &[Obstacle]) -> u64 {
        self.quads.clear();
        self.quad_groups.clear();
        let (w, _) = (self.width as i32, self.height as i32);
        let map = 96;
        let (mx, my) = (w - map - 8, 8);
        let to_map = |p: Vec2| {
            (
                mx + (p.x / WORLD_M * map as f32) as i32,
                my + (p.y / WORLD_M * map as f32) as i32,
            )
        };
        let start = self.quads.len();
        self.quads.push(Quad {
            x0: mx - 2,
            y0: my - 2,
            x1: mx + map + 2,
            y1: my + map + 2,
            colour: 0x101418,
            alpha: 190,
            glyph: None,
        });
        self.quads.push(Quad {
            x0: 4,
            y0: 4,
            x1: 150,
            y1: 8 + 14 * view.hud.len() as i32,
            colour: 0x101418,
            alpha: 160,
            glyph: None,
        });
        if view.paused {
            self.quads.push(Quad {
                x0: 0,
                y0: 0,
                x1: w,
                y1: self.height as i32,
                colour: 0x000000,
                alpha: 110,
                glyph: None,
            });
        }
        self.quad_groups
            .push((QuadGroup::Panel, start, self.quads.len()));
        let start = self.quads.len();
        for o in obstacles.iter().filter(|o| o.standing) {
            let (x0, y0) = to_map(o.min);
            let (x1, y1) = to_map(o.max);
            self.quads.push(Quad {
                x0,
                y0,
                x1: x1.max(x0 + 1),
                y1: y1.max(y0 + 1),
                colour: 0x9a9288,
                alpha: 255,
                glyph: None,
            });
        }
        self.quad_groups
            .push((QuadGroup::MapObstacle, start, self.quads.len()));
        let start = self.quads.len();
        for i in 0..flock.len() {
            let (x, y) = to_map(flock.pos[i]);
            let colour = if flock.wave[i] { 0xff5040 } else { 0x50a0ff };
            self.quads.push(Quad {
                x0: x,
                y0: y,
                x1: x + 1,
                y1: y + 1,
                colour,
                alpha: 255,
                glyph: None,
            });
        }
        let (px, py) = to_map(view.player);
        self.quads.push(Quad {
            x0: px - 1,
            y0: py - 1,
            x1: px + 2,
            y1: py + 2,
            colour: 0xffe040,
            alpha: 255,
            glyph: None,
        });
        self.quad_groups
            .push((QuadGroup::MapAgent, start, self.quads.len()));
        let start = self.quads.len();
        for (line, s) in view.hud.iter().enumerate() {
            ui::text(&mut self.quads, 8, 8 + 14 * line as i32, s, 0xe8e8e8);
        }
        self.quad_groups
            .push((QuadGroup::Glyph, start, self.quads.len()));
        self.quad_groups.retain(|g| g.2 > g.1);
        self.quad_bytes()
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

    /// Renders the frame through every pass. `pool` runs the band jobs.
    pub fn render(&mut self, view: &FrameView, pool: &rayon::ThreadPool) -> RenderStats {
        let mut stats = RenderStats::default();
        let aspect = self.width as f32 / self.height as f32;
        let cam_vp = Mat4::perspective(0.85, aspect, 1.0, 220.0).mul(&Mat4::look_at(
            view.camera.eye(),
            view.camera.target(),
            Vec3::new(0.0, 1.0, 0.0),
        ));
        let sun = sun_direction();
        let focus = view.camera.target();
        let light_vp = Mat4::orthographic(64.0, 64.0, 1.0, 260.0).mul(&Mat4::look_at(
            focus + sun * 120.0,
            focus,
            Vec3::new(0.0, 1.0, 0.0),
        ));
        {
            let _scope = framewise::scope!("shadow");
            stats.passes[Pass::Shadow as usize] = self.shadow_pass(&light_vp, pool);
        }
        {
            let _scope = framewise::scope!("geometry");
            let (pass, created) = self.geometry_pass(&cam_vp, pool);
            stats.passes[Pass::Geometry as usize] = pass;
            stats.pipelines_created += created;
        }
        {
            let _scope = framewise::scope!("lighting");
            stats.passes[Pass::Lighting as usize] = self.lighting_pass(view, &light_vp, pool);
        }
        {
            let _scope = framewise::scope!("particles");
            stats.passes[Pass::Particles as usize] = self.particle_pass(&cam_vp);
        }
        {
            let _scope = framewise::scope!("post");
            stats.passes[Pass::Post as usize] = self.post_pass(pool);
        }
        {
            let _scope = framewise::scope!("ui");
            stats.passes[Pass::Ui as usize] = self.ui_pass();
        }
        stats
    }

    /// Vertex stage and triangle setup for every visible instance of every group; counts
    /// draws as it binds them. Triangles go to `self.tris`.
    fn submit_instances(
        &mut self,
        view_proj: &Mat4,
        cull_margin_per_m: f32,
        target: (u32, u32),
        stats: &mut PassStats,
    ) {
        self.tris.clear();
        let groups = std::mem::take(&mut self.groups);
        for &(mesh_id, material, start, end) in &groups {
            let mut visible_in_batch = 0usize;
            for i in start..end {
                let inst = self.instances[i];
                let radius = inst.scale.x.max(inst.scale.y).max(inst.scale.z);
                let c = view_proj.transform(inst.pos + Vec3::new(0.0, inst.scale.y * 0.5, 0.0));
                let margin = radius * cull_margin_per_m;
                if c[3] <= 0.0 || c[0].abs() > c[3] + margin || c[1].abs() > c[3] + margin {
                    continue;
                }
                let per_draw = match self.variant {
                    Variant::Normal => BATCH_INSTANCES,
                    Variant::Slow => 1,
                };
                if visible_in_batch.is_multiple_of(per_draw) {
                    self.bind_draw(material, view_proj, &inst);
                    stats.draws += 1;
                }
                visible_in_batch += 1;
                stats.instances += 1;
                let mesh = &self.meshes[mesh_id as usize];
                stats.vertices += mesh.verts.len() as u64;
                stats.triangles += mesh.tris.len() as u64;
                let (s, co) = inst.yaw.sin_cos();
                let to_world = |v: Vec3| {
                    let (x, y, z) = (v.x * inst.scale.x, v.y * inst.scale.y, v.z * inst.scale.z);
                    Vec3::new(x * co - z * s, y, x * s + z * co) + inst.pos
                };
                let albedo = inst.colour | (u32::from(material.id()) << 24);
                for (t, n) in mesh.tris.iter().zip(&mesh.normals) {
                    let v = [
                        ClipVertex::from_world(view_proj, to_world(mesh.verts[t[0]]), [0.0; 2]),
                        ClipVertex::from_world(view_proj, to_world(mesh.verts[t[1]]), [0.0; 2]),
                        ClipVertex::from_world(view_proj, to_world(mesh.verts[t[2]]), [0.0; 2]),
                    ];
                    if let Some(mut tri) = setup(&v, target.0, target.1, true) {
                        let wn = Vec3::new(n.x * co - n.z * s, n.y, n.x * s + n.z * co);
                        tri.normal = pack_normal(wn);
                        tri.albedo = albedo;
                        self.tris.push(tri);
                    }
                }
            }
        }
        self.groups = groups;
    }

    fn shadow_pass(&mut self, light_vp: &Mat4, pool: &rayon::ThreadPool) -> PassStats {
        let mut stats = PassStats::default();
        self.submit_instances(
            light_vp,
            2.5 / 64.0,
            (SHADOW_SIZE as u32, SHADOW_SIZE as u32),
            &mut stats,
        );
        let tris = &self.tris;
        let pixels: u64 = pool.install(|| {
            self.shadow
                .par_chunks_mut(SHADOW_BAND_ROWS * SHADOW_SIZE)
                .enumerate()
                .map(|(band, depth)| shadow_band(tris, band * SHADOW_BAND_ROWS, depth))
                .sum()
        });
        stats.pixels_shaded = pixels;
        stats
    }

    /// Returns the pass's counts and the shading tables it had to build.
    fn geometry_pass(&mut self, cam_vp: &Mat4, pool: &rayon::ThreadPool) -> (PassStats, u64) {
        let mut stats = PassStats::default();
        // A material drawn for the first time needs its shading table: built right here,
        // in the middle of the frame, as a pipeline compiled on first use would be.
        let mut created = 0;
        let groups = std::mem::take(&mut self.groups);
        for &(_, material, _, _) in &groups {
            if self.pipelines.ensure(material) {
                created += 1;
            }
        }
        self.groups = groups;
        if self.pipelines.ensure(Material::Ground) {
            created += 1;
        }
        self.submit_instances(
            cam_vp,
            2.5,
            (self.width as u32, self.height as u32),
            &mut stats,
        );
        // The ground: a grid of textured tiles, culled per tile.
        let tile_m = WORLD_M / GROUND_TILES as f32;
        let mut visible_tiles = 0usize;
        let ground_albedo = 0xffffff | (u32::from(Material::Ground.id()) << 24);
        let up = pack_normal(Vec3::new(0.0, 1.0, 0.0));
        for ty in 0..GROUND_TILES {
            for tx in 0..GROUND_TILES {
                let (x0, z0) = (tx as f32 * tile_m, ty as f32 * tile_m);
                let (x1, z1) = (x0 + tile_m, z0 + tile_m);
                let c = cam_vp.transform(Vec3::new(x0 + tile_m * 0.5, 0.0, z0 + tile_m * 0.5));
                let margin = tile_m * 2.5;
                if c[3] <= 0.0 || c[0].abs() > c[3] + margin || c[1].abs() > c[3] + margin {
                    continue;
                }
                let per_draw = match self.variant {
                    Variant::Normal => BATCH_INSTANCES,
                    Variant::Slow => 1,
                };
                if visible_tiles.is_multiple_of(per_draw) {
                    let tile = Instance {
                        pos: Vec3::new(x0, 0.0, z0),
                        yaw: 0.0,
                        scale: Vec3::new(tile_m, 0.0, tile_m),
                        colour: 0,
                        material: Material::Ground,
                        mesh: MeshId::Cube,
                    };
                    self.bind_draw(Material::Ground, cam_vp, &tile);
                    stats.draws += 1;
                }
                visible_tiles += 1;
                stats.instances += 1;
                stats.vertices += 4;
                stats.triangles += 2;
                let corner = |x: f32, z: f32| {
                    ClipVertex::from_world(
                        cam_vp,
                        Vec3::new(x, 0.0, z),
                        [x / GROUND_UV_M, z / GROUND_UV_M],
                    )
                };
                let quads = [
                    [corner(x0, z0), corner(x0, z1), corner(x1, z0)],
                    [corner(x1, z0), corner(x0, z1), corner(x1, z1)],
                ];
                for v in &quads {
                    if let Some(mut tri) = setup(v, self.width as u32, self.height as u32, true) {
                        tri.normal = up;
                        tri.albedo = ground_albedo;
                        tri.textured = true;
                        let texels = (tile_m / GROUND_UV_M).powi(2)
                            * 0.5
                            * (self.ground.size * self.ground.size) as f32;
                        tri.mip = self.ground.mip_for(texels, tri.area_px());
                        self.tris.push(tri);
                    }
                }
            }
        }
        let width = self.width;
        let band_px = BAND_ROWS * width;
        let tris = &self.tris;
        let ground = &self.ground;
        let pixels: u64 = pool.install(|| {
            self.depth
                .par_chunks_mut(band_px)
                .zip(self.albedo.par_chunks_mut(band_px))
                .zip(self.normal.par_chunks_mut(band_px))
                .zip(self.position.par_chunks_mut(band_px))
                .enumerate()
                .map(|(band, (((depth, albedo), normal), position))| {
                    geometry_band(
                        tris,
                        ground,
                        width,
                        band * BAND_ROWS,
                        depth,
                        albedo,
                        normal,
                        position,
                    )
                })
                .sum()
        });
        stats.pixels_shaded = pixels;
        (stats, created)
    }

    fn lighting_pass(
        &mut self,
        view: &FrameView,
        light_vp: &Mat4,
        pool: &rayon::ThreadPool,
    ) -> PassStats {
        let width = self.width;
        let height = self.height;
        let band_px = BAND_ROWS * width;
        let (depth, albedo, normal, position) =
            (&self.depth, &self.albedo, &self.normal, &self.position);
        let (shadow, pipelines) = (&self.shadow, &self.pipelines);
        let sun = sun_direction();
        let eye = view.camera.eye();
        let torch = Vec3::new(view.player.x, 2.0, view.player.y);
        let light_vp = *light_vp;
        let tables: [Option<&materials::ShadingTable>; 6] =
            std::array::from_fn(|m| pipelines.table(m as u8));
        let (lit, bands): (u64, u64) = pool.install(|| {
            self.hdr
                .par_chunks_mut(band_px)
                .enumerate()
                .map(|(band, out)| {
                    let _scope = framewise::scope!("lighting_band");
                    let mut lit = 0;
                    for (row, pixels) in out.chunks_mut(width).enumerate() {
                        let y = band * BAND_ROWS + row;
                        let base = y * width;
                        let fy = y as f32 / height as f32;
                        let sky = [0.35 + 0.2 * fy, 0.45 + 0.2 * fy, 0.65 + 0.1 * fy];
                        for (x, px) in pixels.iter_mut().enumerate() {
                            let i = base + x;
                            if depth[i] >= 1.0 {
                                *px = sky;
                                continue;
                            }
                            lit += 1;
                            *px = shade(
                                albedo[i],
                                normal[i],
                                position[i],
                                sun,
                                eye,
                                torch,
                                &light_vp,
                                shadow,
                                &tables,
                            );
                        }
                    }
                    (lit, 1)
                })
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        });
        PassStats {
            pixels_shaded: lit,
            dispatches: bands,
            ..PassStats::default()
        }
    }

    fn particle_pass(&mut self, cam_vp: &Mat4) -> PassStats {
        let mut stats = PassStats {
            draws: (self.particles.len().div_ceil(PARTICLES_PER_DRAW)) as u64,
            instances: self.particles.len() as u64,
            vertices: 4 * self.particles.len() as u64,
            triangles: 2 * self.particles.len() as u64,
            ..PassStats::default()
        };
        let (w, h) = (self.width as i32, self.height as i32);
        for p in &self.particles {
            let c = cam_vp.transform(p.pos);
            if c[3] <= 0.05 {
                continue;
            }
            let inv = 1.0 / c[3];
            let (sx, sy, sz) = (
                ((c[0] * inv * 0.5 + 0.5) * w as f32) as i32,
                ((0.5 - c[1] * inv * 0.5) * h as f32) as i32,
                c[2] * inv,
            );
            let rgb = unpack_rgb(p.colour);
            for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                let (x, y) = (sx + dx, sy + dy);
                if x < 0 || y < 0 || x >= w || y >= h {
                    continue;
                }
                let i = (y * w + x) as usize;
                if sz > self.depth[i] {
                    continue;
                }
                let px = &mut self.hdr[i];
                px[0] += rgb[0] * 0.35;
                px[1] += rgb[1] * 0.35;
                px[2] += rgb[2] * 0.35;
                stats.pixels_shaded += 1;
            }
        }
        stats
    }

    fn post_pass(&mut self, pool: &rayon::ThreadPool) -> PassStats {
        let (w, h) = (self.width, self.height);
        let (bw, bh) = (w / 4, h / 4);
        // Bright pass at quarter resolution, then a separable box blur.
        for by in 0..bh {
            for bx in 0..bw {
                let mut sum = [0.0f32; 3];
                for y in 0..4 {
                    for x in 0..4 {
                        let p = self.hdr[(by * 4 + y) * w + bx * 4 + x];
                        for c in 0..3 {
                            sum[c] += (p[c] - 0.9).max(0.0);
                        }
                    }
                }
                self.bloom[by * bw + bx] = [sum[0] / 16.0, sum[1] / 16.0, sum[2] / 16.0];
            }
        }
        for pass in 0..2 {
            let (src, dst) = if pass == 0 {
                (&self.bloom, &mut self.bloom_tmp)
            } else {
                (&self.bloom_tmp, &mut self.bloom)
            };
            for y in 0..bh {
                for x in 0..bw {
                    let mut sum = [0.0f32; 3];
                    for d in -2i32..=2 {
                        let (sx, sy) = if pass == 0 {
                            ((x as i32 + d).clamp(0, bw as i32 - 1) as usize, y)
                        } else {
                            (x, (y as i32 + d).clamp(0, bh as i32 - 1) as usize)
                        };
                        let p = src[sy * bw + sx];
                        for c in 0..3 {
                            sum[c] += p[c] * 0.2;
                        }
                    }
                    dst[y * bw + x] = sum;
                }
            }
        }
        let band_px = BAND_ROWS * w;
        let (hdr, bloom, tonemap) = (&self.hdr, &self.bloom, &self.tonemap);
        let inv_w = 1.0 / w as f32;
        let bands: u64 = pool.install(|| {
            self.ldr
                .par_chunks_mut(band_px)
                .enumerate()
                .map(|(band, out)| {
                    let _scope = framewise::scope!("post_band");
                    for (row, pixels) in out.chunks_mut(w).enumerate() {
                        let y = band * BAND_ROWS + row;
                        let bloom_row = &bloom[(y / 4).min(bh.saturating_sub(1)) * bw..];
                        let hdr_row = &hdr[y * w..(y + 1) * w];
                        let fy = y as f32 / h as f32 - 0.5;
                        for (x, px) in pixels.iter_mut().enumerate() {
                            let b = bloom_row[(x / 4).min(bw.saturating_sub(1))];
                            let fx = x as f32 * inv_w - 0.5;
                            let vignette = 1.0 - 0.6 * (fx * fx + fy * fy);
                            let mut rgb = 0xff00_0000u32;
                            for c in 0..3 {
                                let v = (hdr_row[x][c] + b[c] * 0.8) * vignette;
                                let at = ((v * TONEMAP_STEPS_PER_UNIT) as usize)
                                    .min(TONEMAP_ENTRIES - 1);
                                rgb |= u32::from(tonemap[at]) << (16 - 8 * c);
                            }
                            *px = rgb;
                        }
                    }
                    1
                })
                .sum()
        });
        PassStats {
            pixels_shaded: (w * h) as u64,
            dispatches: bands,
            ..PassStats::default()
        }
    }

    fn ui_pass(&mut self) -> PassStats {
        let mut stats = PassStats::default();
        let groups = std::mem::take(&mut self.quad_groups);
        for &(_, start, end) in &groups {
            stats.draws += draws_for(self.variant, end - start, BATCH_INSTANCES);
            stats.instances += (end - start) as u64;
            stats.vertices += 4 * (end - start) as u64;
            stats.triangles += 2 * (end - start) as u64;
            for q in &self.quads[start..end] {
                stats.pixels_shaded += ui::draw(&mut self.ldr, self.width, self.height, q);
            }
        }
        self.quad_groups = groups;
        stats
    }
}

/// Rasterizes every triangle into one band of the G-buffer (a job on a worker thread).
#[expect(
    clippy::too_many_arguments,
    reason = "one band of each of the four G-buffer targets, split for the worker threads"
)]
#[inline(never)]
fn geometry_band(
    tris: &[Tri],
    ground: &Texture,
    width: usize,
    y0: usize,
    depth: &mut [f32],
    albedo: &mut [u32],
    normal: &mut [u32],
    position: &mut [Vec3],
) -> u64 {
    let _scope = framewise::scope!("geometry_band");
    depth.iter_mut().for_each(|d| *d = 1.0);
    albedo.iter_mut().for_each(|a| *a = 0);
    let y1 = y0 + depth.len() / width;
    let mut written = 0;
    for t in tris {
        written += raster_band(t, width, y0, y1, depth, |i, w| {
            albedo[i] = if t.textured {
                let uv = [
                    t.uv[0][0] * w[0] + t.uv[1][0] * w[1] + t.uv[2][0] * w[2],
                    t.uv[0][1] * w[0] + t.uv[1][1] * w[1] + t.uv[2][1] * w[2],
                ];
                (ground.sample(uv, t.mip) & 0x00ff_ffff) | (t.albedo & 0xff00_0000)
            } else {
                t.albedo
            };
            normal[i] = t.normal;
            position[i] = t.world[0] * w[0] + t.world[1] * w[1] + t.world[2] * w[2];
        });
    }
    written
}

/// Rasterizes every triangle into one band of the shadow map (depth only).
#[inline(never)]
fn shadow_band(tris: &[Tri], y0: usize, depth: &mut [f32]) -> u64 {
    let _scope = framewise::scope!("shadow_band");
    depth.iter_mut().for_each(|d| *d = 1.0);
    let y1 = y0 + depth.len() / SHADOW_SIZE;
    tris.iter()
        .map(|t| raster_band(t, SHADOW_SIZE, y0, y1, depth, |_, _| {}))
        .sum()
}

/// Shades one G-buffer pixel: sun with a 2×2 PCF shadow, ambient, the player's torch, and
/// the material's specular response from its shading table.
#[expect(
    clippy::too_many_arguments,
    reason = "the per-pixel inputs of a hot loop, passed by value rather than bundled"
)]
#[inline]
fn shade(
    albedo: u32,
    normal: u32,
    p: Vec3,
    sun: Vec3,
    eye: Vec3,
    torch: Vec3,
    light_vp: &Mat4,
    shadow: &[f32],
    tables: &[Option<&materials::ShadingTable>; 6],
) -> [f32; 3] {
    let n = unpack_normal(normal);
    let to_eye = eye - p;
    let v = to_eye * fast_inv_sqrt(to_eye.dot(to_eye));
    let half = sun + v;
    let h = half * fast_inv_sqrt(half.dot(half).max(1e-6));
    let ndl = n.dot(sun).max(0.0);
    let ndh = n.dot(h).max(0.0);
    let ndv = n.dot(v).max(0.0);
    let lc = light_vp.transform(p);
    let sx = (lc[0] * 0.5 + 0.5) * SHADOW_SIZE as f32 - 0.5;
    let sy = (0.5 - lc[1] * 0.5) * SHADOW_SIZE as f32 - 0.5;
    let (x, y) = (sx as i64, sy as i64);
    let lit = if sx < 0.0 || sy < 0.0 || x + 1 >= SHADOW_SIZE as i64 || y + 1 >= SHADOW_SIZE as i64
    {
        1.0
    } else {
        // 2×2 percentage-closer filtering.
        let at = y as usize * SHADOW_SIZE + x as usize;
        let z = lc[2] - 0.004;
        let taps = [at, at + 1, at + SHADOW_SIZE, at + SHADOW_SIZE + 1];
        taps.iter()
            .map(|&t| {
                if z <= shadow.get(t).copied().unwrap_or(1.0) {
                    0.25
                } else {
                    0.0
                }
            })
            .sum()
    };
    let material = (albedo >> 24) as u8;
    let spec = tables
        .get(material as usize)
        .copied()
        .flatten()
        .map_or(0.0, |t| t.lookup(ndl, ndh, ndv));
    let d = torch - p;
    let d2 = d.dot(d);
    let torch_light = 3.0 * n.dot(d).max(0.0) * fast_inv_sqrt(d2.max(1e-6)) / (1.0 + d2 * 0.08);
    let base = unpack_rgb(albedo);
    let sun_rgb = [1.0, 0.95, 0.85];
    let mut out = [0.0f32; 3];
    for c in 0..3 {
        out[c] = base[c] * (sun_rgb[c] * ndl * lit * 1.4 + 0.25 + torch_light * [1.0, 0.8, 0.5][c])
            + spec * lit * sun_rgb[c] * 0.35;
    }
    if material == Material::Crystal.id() {
        out[1] += 0.3 * (1.0 - ndv);
        out[2] += 0.5 * (1.0 - ndv);
    }
    out
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
