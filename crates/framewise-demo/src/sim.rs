//! The simulation: a flock on a spatial hash (neighbour search, steering on the worker
//! threads, integration), the player unit with its optional snap-back bug, the camera that
//! follows it, and a particle system.

use rayon::prelude::*;

use crate::math::{Rng, Vec2, Vec3};
use crate::world::{FlowFields, NavGrid, GOALS, WORLD_M};

/// Neighbour radius, metres (also the hash cell size).
const PERCEPTION_M: f32 = 2.5;
const SEPARATION_M: f32 = 1.0;
const MAX_SPEED_M_S: f32 = 4.0;
const MAX_ACCEL_M_S2: f32 = 12.0;
const HASH_CELLS: usize = (WORLD_M / PERCEPTION_M) as usize + 1;
/// Agents per steering job.
const STEER_CHUNK: usize = 512;

/// The flock, as structure-of-arrays.
#[derive(Debug, Default)]
pub struct Flock {
    /// Positions, metres.
    pub pos: Vec<Vec2>,
    /// Velocities, m/s.
    pub vel: Vec<Vec2>,
    /// Which waypoint each agent walks to.
    pub goal: Vec<u8>,
    /// Whether the agent came with the spawn wave (drawn in another colour).
    pub wave: Vec<bool>,
    accel: Vec<Vec2>,
    cell_start: Vec<u32>,
    cell_items: Vec<u32>,
    cell_of: Vec<u32>,
}

impl Flock {
    /// Agents alive.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// No agents.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Adds agents at the given points, heading to deterministic waypoints.
    pub fn spawn(&mut self, points: &[Vec2], wave: bool, rng: &mut Rng) {
        for &p in points {
            self.pos.push(p);
            let angle = rng.range(0.0, std::f32::consts::TAU);
            self.vel.push(Vec2::new(angle.cos(), angle.sin()) * 1.5);
            self.goal.push(rng.below(GOALS as u32) as u8);
            self.wave.push(wave);
        }
    }

    /// Rebuilds the spatial hash: a counting sort of agents by cell.
    pub fn build_hash(&mut self) {
        let _scope = framewise::scope!("spatial_hash");
        let cells = HASH_CELLS * HASH_CELLS;
        self.cell_start.clear();
        self.cell_start.resize(cells + 1, 0);
        self.cell_of.clear();
        for p in &self.pos {
            let c = hash_cell(*p);
            self.cell_of.push(c as u32);
            self.cell_start[c + 1] += 1;
        }
        for i in 0..cells {
            self.cell_start[i + 1] += self.cell_start[i];
        }
        self.cell_items.clear();
        self.cell_items.resize(self.pos.len(), 0);
        let mut fill = self.cell_start.clone();
        for (i, &c) in self.cell_of.iter().enumerate() {
            let slot = &mut fill[c as usize];
            self.cell_items[*slot as usize] = i as u32;
            *slot += 1;
        }
    }

    /// Computes every agent's steering on the worker threads: separation, alignment and
    /// cohesion among neighbours from the hash, plus the flow field to its waypoint.
    pub fn steer(&mut self, fields: &FlowFields, pool: &rayon::ThreadPool) {
        let _scope = framewise::scope!("steering");
        self.accel.clear();
        self.accel.resize(self.pos.len(), Vec2::default());
        let (pos, vel, goal) = (&self.pos, &self.vel, &self.goal);
        let (cell_start, cell_items) = (&self.cell_start, &self.cell_items);
        pool.install(|| {
            self.accel
                .par_chunks_mut(STEER_CHUNK)
                .enumerate()
                .for_each(|(chunk, out)| {
                    let _scope = framewise::scope!("steer_chunk");
                    for (k, a) in out.iter_mut().enumerate() {
                        let i = chunk * STEER_CHUNK + k;
                        *a = steer_one(i, pos, vel, goal, cell_start, cell_items, fields);
                    }
                });
        });
    }

    /// Advances positions by `dt_s`, keeps agents out of obstacles and inside the world, and
    /// moves agents that reached their waypoint on to the next.
    pub fn integrate(&mut self, dt_s: f32, nav: &NavGrid) {
        let _scope = framewise::scope!("integrate");
        for i in 0..self.pos.len() {
            let v = (self.vel[i] + self.accel[i] * dt_s).clamp_length(MAX_SPEED_M_S);
            let next = self.pos[i] + v * dt_s;
            if nav.is_blocked(next)
                || next.x < 0.5
                || next.y < 0.5
                || next.x > WORLD_M - 0.5
                || next.y > WORLD_M - 0.5
            {
                self.vel[i] = v * -0.5;
            } else {
                self.pos[i] = next;
                self.vel[i] = v;
            }
            let g = self.goal[i] as usize % GOALS;
            if (self.pos[i] - nav.goals[g]).length_sq() < 64.0 {
                self.goal[i] = ((g + 1) % GOALS) as u8;
            }
        }
    }
}

fn hash_cell(p: Vec2) -> usize {
    let clamp = |v: f32| ((v / PERCEPTION_M).max(0.0) as usize).min(HASH_CELLS - 1);
    clamp(p.y) * HASH_CELLS + clamp(p.x)
}

fn steer_one(
    i: usize,
    pos: &[Vec2],
    vel: &[Vec2],
    goal: &[u8],
    cell_start: &[u32],
    cell_items: &[u32],
    fields: &FlowFields,
) -> Vec2 {
    let p = pos[i];
    let (cx, cy) = (
        ((p.x / PERCEPTION_M).max(0.0) as usize).min(HASH_CELLS - 1),
        ((p.y / PERCEPTION_M).max(0.0) as usize).min(HASH_CELLS - 1),
    );
    let mut separation = Vec2::default();
    let mut sum_vel = Vec2::default();
    let mut sum_pos = Vec2::default();
    let mut neighbours = 0u32;
    for y in cy.saturating_sub(1)..=(cy + 1).min(HASH_CELLS - 1) {
        for x in cx.saturating_sub(1)..=(cx + 1).min(HASH_CELLS - 1) {
            let c = y * HASH_CELLS + x;
            let (a, b) = (cell_start[c] as usize, cell_start[c + 1] as usize);
            for &j in &cell_items[a..b] {
                let j = j as usize;
                if j == i {
                    continue;
                }
                let d = p - pos[j];
                let d2 = d.length_sq();
                if d2 > PERCEPTION_M * PERCEPTION_M {
                    continue;
                }
                neighbours += 1;
                sum_vel += vel[j];
                sum_pos += pos[j];
                if d2 < SEPARATION_M * SEPARATION_M && d2 > 1e-6 {
                    separation += d * (1.0 / d2);
                }
            }
        }
    }
    let desired = fields.direction(goal[i] as usize, p) * MAX_SPEED_M_S;
    let mut accel = (desired - vel[i]) * 1.5 + separation * 2.0;
    if neighbours > 0 {
        let inv = 1.0 / neighbours as f32;
        accel += (sum_vel * inv - vel[i]) * 0.6;
        accel += (sum_pos * inv - p) * 0.4;
    }
    accel.clamp_length(MAX_ACCEL_M_S2)
}

/// The player's unit: walks a fixed route; with the snap-back bug on, the position the game
/// publishes (to the camera, the renderer and the motion track) occasionally comes from a
/// stale buffer slot a few metres back, for one frame.
#[derive(Debug)]
pub struct Player {
    /// Route time, seconds.
    route_s: f32,
    /// The true position.
    pub pos: Vec2,
    /// Recent true positions, newest last (the buffer the bug reads a stale slot of).
    history: Vec<Vec2>,
}

/// Frames of true positions the unit keeps.
const HISTORY_FRAMES: usize = 120;

/// Snap-back distance the bug produces, at least, metres.
pub const SNAP_BACK_M: f32 = 3.0;

impl Player {
    /// A unit at the start of its route.
    pub fn new() -> Self {
        let mut player = Self {
            route_s: 0.0,
            pos: Vec2::default(),
            history: Vec::with_capacity(HISTORY_FRAMES),
        };
        player.pos = player.route(0.0);
        player
    }

    fn route(&self, t_s: f32) -> Vec2 {
        let c = WORLD_M * 0.5;
        Vec2::new(c + 34.0 * (t_s * 0.2).cos(), c + 28.0 * (t_s * 0.16).sin())
    }

    /// Walks `dt_s` along the route.
    pub fn advance(&mut self, dt_s: f32) {
        self.route_s += dt_s;
        self.pos = self.route(self.route_s);
        if self.history.len() >= HISTORY_FRAMES {
            self.history.remove(0);
        }
        self.history.push(self.pos);
    }

    /// The position published this frame: the true one, or with `snap` the newest stale slot
    /// at least [`SNAP_BACK_M`] behind (the bug), or the oldest slot when none is that far.
    pub fn published(&self, snap: bool) -> Vec2 {
        if snap {
            let stale = self
                .history
                .iter()
                .rev()
                .find(|p| (**p - self.pos).length() >= SNAP_BACK_M)
                .or(self.history.first());
            if let Some(stale) = stale {
                return *stale;
            }
        }
        self.pos
    }
}

impl Default for Player {
    fn default() -> Self {
        Self::new()
    }
}

/// The camera: looks down at the published unit position from above and behind, following
/// it with exponential smoothing.
#[derive(Clone, Copy, Debug)]
pub struct Camera {
    /// The point on the ground it looks at.
    pub focus: Vec2,
}

impl Camera {
    /// Height of the eye above the focus, metres.
    pub const HEIGHT_M: f32 = 62.0;
    /// Distance behind (south of) the focus, metres.
    pub const BACK_M: f32 = 34.0;

    /// Follows `target` over `dt_s`.
    pub fn follow(&mut self, target: Vec2, dt_s: f32) {
        let k = 1.0 - (-dt_s * 4.0).exp();
        self.focus += (target - self.focus) * k;
    }

    /// The eye position.
    pub fn eye(&self) -> Vec3 {
        Vec3::new(self.focus.x, Self::HEIGHT_M, self.focus.y + Self::BACK_M)
    }

    /// The look-at point.
    pub fn target(&self) -> Vec3 {
        Vec3::new(self.focus.x, 0.0, self.focus.y)
    }
}

/// A particle pool of fixed capacity: emission past it is refused, never reallocated.
#[derive(Debug)]
pub struct Particles {
    /// Positions, metres (world space, y up).
    pub pos: Vec<Vec3>,
    /// Velocities, m/s.
    pub vel: Vec<Vec3>,
    /// Remaining life, seconds.
    pub life_s: Vec<f32>,
    /// Colour (packed 0xRRGGBB) per particle.
    pub colour: Vec<u32>,
    capacity: usize,
}

impl Particles {
    /// An empty pool.
    pub fn new(capacity: usize) -> Self {
        Self {
            pos: Vec::with_capacity(capacity),
            vel: Vec::with_capacity(capacity),
            life_s: Vec::with_capacity(capacity),
            colour: Vec::with_capacity(capacity),
            capacity,
        }
    }

    /// Live particles.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// No live particles.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Emits up to `count` particles around `at` (dust kicked up, sparks).
    pub fn emit(&mut self, at: Vec2, count: usize, speed_m_s: f32, colour: u32, rng: &mut Rng) {
        for _ in 0..count {
            if self.pos.len() >= self.capacity {
                return;
            }
            let angle = rng.range(0.0, std::f32::consts::TAU);
            let s = rng.range(0.3, 1.0) * speed_m_s;
            self.pos.push(Vec3::new(at.x, 0.2, at.y));
            self.vel.push(Vec3::new(
                angle.cos() * s,
                rng.range(1.0, 3.0) * speed_m_s * 0.5,
                angle.sin() * s,
            ));
            self.life_s.push(rng.range(0.8, 1.6));
            self.colour.push(colour);
        }
    }

    /// Ages, moves and retires particles.
    pub fn update(&mut self, dt_s: f32) {
        let _scope = framewise::scope!("particle_update");
        let mut i = 0;
        while i < self.pos.len() {
            self.life_s[i] -= dt_s;
            if self.life_s[i] <= 0.0 {
                self.pos.swap_remove(i);
                self.vel.swap_remove(i);
                self.life_s.swap_remove(i);
                self.colour.swap_remove(i);
                continue;
            }
            let v = &mut self.vel[i];
            v.y -= 9.8 * dt_s;
            let p = &mut self.pos[i];
            *p = *p + *v * dt_s;
            if p.y < 0.0 {
                p.y = 0.0;
                v.y = -v.y * 0.4;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flock_moves_and_stays_in_the_world() {
        let nav = NavGrid::generate(1);
        let mut fields = FlowFields::new();
        fields.begin_rebuild();
        fields.step(&nav, u64::MAX);
        let mut rng = Rng::new(1, 1);
        let mut points = Vec::new();
        crate::world::place_spawns(&nav, Vec2::new(64.0, 64.0), 300, 4, &mut rng, &mut points);
        let mut flock = Flock::default();
        flock.spawn(&points, false, &mut rng);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        let start = flock.pos.clone();
        for _ in 0..30 {
            flock.build_hash();
            flock.steer(&fields, &pool);
            flock.integrate(1.0 / 60.0, &nav);
        }
        assert_eq!(flock.len(), 300);
        assert!(flock.pos.iter().zip(&start).any(|(a, b)| a != b));
        assert!(flock
            .pos
            .iter()
            .all(|p| p.x >= 0.0 && p.y >= 0.0 && p.x <= WORLD_M && p.y <= WORLD_M));
    }

    #[test]
    fn the_snap_bug_publishes_a_stale_position_a_few_metres_back() {
        let mut player = Player::new();
        for _ in 0..120 {
            player.advance(1.0 / 60.0);
        }
        assert_eq!(player.published(false), player.pos);
        let snapped = player.published(true);
        assert!((snapped - player.pos).length() >= SNAP_BACK_M);
    }

    #[test]
    fn particles_never_exceed_capacity_and_die() {
        let mut p = Particles::new(100);
        let mut rng = Rng::new(2, 2);
        p.emit(Vec2::new(1.0, 1.0), 500, 2.0, 0xffffff, &mut rng);
        assert_eq!(p.len(), 100);
        for _ in 0..200 {
            p.update(1.0 / 60.0);
        }
        assert!(p.is_empty());
    }
}
