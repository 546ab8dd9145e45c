//! The `upload` stage: the frame's instances, particles and HUD copied into the renderer's
//! own buffers (what `bytes_uploaded` counts).

use super::*;

impl Renderer {
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
}
