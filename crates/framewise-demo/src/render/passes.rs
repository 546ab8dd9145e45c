//! The six passes of the frame graph (shadow, geometry, lighting, particles, post, ui) and
//! the band jobs they run on the worker threads.

use super::*;

impl Renderer {
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
            if self.shadows {
                stats.passes[Pass::Shadow as usize] = self.shadow_pass(&light_vp, pool);
            }
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
