//! The level: a navigation grid with box obstacles, the flow fields the flock follows to
//! its waypoints, and spawn placement (out of the player's sight).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::math::{Rng, Vec2};

/// World extent, metres: the ground is `[0, WORLD_M) × [0, WORLD_M)`.
pub const WORLD_M: f32 = 128.0;
/// Navigation grid cells per side.
pub const NAV_CELLS: usize = 384;
/// Navigation cell size, metres.
pub const NAV_CELL_M: f32 = WORLD_M / NAV_CELLS as f32;
/// Waypoints the flock circulates between; one flow field each.
pub const GOALS: usize = 6;

/// Flow-field step costs (integer, so the fields are exact and deterministic).
const STRAIGHT: u32 = 10;
const DIAGONAL: u32 = 14;
/// Distance of a cell that cannot reach the goal.
pub const UNREACHABLE: u32 = u32::MAX;

/// An axis-aligned box obstacle on the ground.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obstacle {
    /// Minimum corner, metres.
    pub min: Vec2,
    /// Maximum corner, metres.
    pub max: Vec2,
    /// Height, metres.
    pub height_m: f32,
    /// Still standing (a collapsed wall is gone from the grid and the scene).
    pub standing: bool,
}

/// The level's walkable grid and its obstacles.
#[derive(Clone, Debug)]
pub struct NavGrid {
    /// `NAV_CELLS²` cells, row-major (y, then x): true when blocked.
    pub blocked: Vec<bool>,
    /// Every obstacle, standing or not.
    pub obstacles: Vec<Obstacle>,
    /// The waypoints.
    pub goals: [Vec2; GOALS],
}

/// The nav cell containing a point, clamped to the grid.
pub fn cell_of(p: Vec2) -> (usize, usize) {
    let clamp = |v: f32| ((v / NAV_CELL_M).max(0.0) as usize).min(NAV_CELLS - 1);
    (clamp(p.x), clamp(p.y))
}

impl NavGrid {
    /// A level generated from `seed`: boxes and walls scattered away from the waypoints.
    pub fn generate(seed: u64) -> Self {
        let mut rng = Rng::new(seed, 0x4e41_5600);
        let goals = [
            Vec2::new(20.0, 20.0),
            Vec2::new(108.0, 22.0),
            Vec2::new(64.0, 40.0),
            Vec2::new(104.0, 106.0),
            Vec2::new(24.0, 104.0),
            Vec2::new(64.0, 88.0),
        ];
        let mut obstacles = Vec::new();
        while obstacles.len() < 48 {
            let wall = obstacles.len() % 3 == 0;
            let (w, h) = if wall {
                if rng.unit() < 0.5 {
                    (rng.range(10.0, 22.0), rng.range(1.0, 1.6))
                } else {
                    (rng.range(1.0, 1.6), rng.range(10.0, 22.0))
                }
            } else {
                (rng.range(2.0, 6.0), rng.range(2.0, 6.0))
            };
            let min = Vec2::new(
                rng.range(4.0, WORLD_M - 4.0 - w),
                rng.range(4.0, WORLD_M - 4.0 - h),
            );
            let max = min + Vec2::new(w, h);
            let centre = (min + max) * 0.5;
            if goals.iter().any(|g| (*g - centre).length() < 12.0) {
                continue;
            }
            obstacles.push(Obstacle {
                min,
                max,
                height_m: if wall {
                    rng.range(2.5, 4.0)
                } else {
                    rng.range(1.5, 6.0)
                },
                standing: true,
            });
        }
        let mut grid = Self {
            blocked: vec![false; NAV_CELLS * NAV_CELLS],
            obstacles,
            goals,
        };
        grid.rasterize();
        grid
    }

    /// Rebuilds `blocked` from the standing obstacles.
    fn rasterize(&mut self) {
        self.blocked.iter_mut().for_each(|b| *b = false);
        for o in self.obstacles.iter().filter(|o| o.standing) {
            let (x0, y0) = cell_of(o.min);
            let (x1, y1) = cell_of(o.max);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    self.blocked[y * NAV_CELLS + x] = true;
                }
            }
        }
    }

    /// Whether the point is inside a blocked cell.
    pub fn is_blocked(&self, p: Vec2) -> bool {
        let (x, y) = cell_of(p);
        self.blocked[y * NAV_CELLS + x]
    }

    /// Collapses the longest standing wall (the level changes: every flow field is stale).
    /// Returns its index.
    pub fn collapse_a_wall(&mut self) -> Option<usize> {
        let longest = self
            .obstacles
            .iter()
            .enumerate()
            .filter(|(_, o)| o.standing)
            .max_by(|(_, a), (_, b)| {
                let la = (a.max - a.min).x.max((a.max - a.min).y);
                let lb = (b.max - b.min).x.max((b.max - b.min).y);
                la.total_cmp(&lb)
            })
            .map(|(i, _)| i)?;
        self.obstacles[longest].standing = false;
        self.rasterize();
        Some(longest)
    }

    /// Whether the segment from `a` to `b` is free of blocked cells (a DDA walk over the
    /// grid): line of sight.
    pub fn line_of_sight(&self, a: Vec2, b: Vec2) -> bool {
        let d = b - a;
        let steps = ((d.x.abs().max(d.y.abs())) / (NAV_CELL_M * 0.75))
            .ceil()
            .max(1.0) as usize;
        let step = d * (1.0 / steps as f32);
        let mut p = a;
        for _ in 0..=steps {
            if self.is_blocked(p) {
                return false;
            }
            p += step;
        }
        true
    }
}

/// The flow fields: per waypoint, each cell's integer distance to it and the direction of
/// the steepest descent. Built time-sliced while loading, or all at once on a rebuild.
#[derive(Debug)]
pub struct FlowFields {
    /// Per goal: distance per cell.
    pub dist: Vec<Vec<u32>>,
    /// Per goal: the neighbour to step to (0–7), or 8 at the goal / when unreachable.
    pub dir: Vec<Vec<u8>>,
    heap: BinaryHeap<Reverse<(u32, u32)>>,
    /// The goal being built and whether its Dijkstra has been seeded.
    building: Option<(usize, bool)>,
}

/// Neighbour offsets, in the order `dir` indexes them.
pub const NEIGHBOURS: [(i32, i32); 8] = [
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
];

impl Default for FlowFields {
    fn default() -> Self {
        Self::new()
    }
}

impl FlowFields {
    /// Empty fields (every cell unreachable, no direction) until built.
    pub fn new() -> Self {
        Self {
            dist: vec![vec![UNREACHABLE; NAV_CELLS * NAV_CELLS]; GOALS],
            dir: vec![vec![8; NAV_CELLS * NAV_CELLS]; GOALS],
            heap: BinaryHeap::new(),
            building: None,
        }
    }

    /// Starts rebuilding every field from scratch.
    pub fn begin_rebuild(&mut self) {
        self.building = Some((0, false));
    }

    /// Whether every field is built.
    pub fn is_built(&self) -> bool {
        self.building.is_none()
    }

    /// Cells settled per field, for spreading a build over frames.
    pub const fn cells_per_field() -> u64 {
        (NAV_CELLS * NAV_CELLS) as u64
    }

    /// Advances the build by up to `budget` heap pops. Returns the pops made.
    pub fn step(&mut self, nav: &NavGrid, mut budget: u64) -> u64 {
        let mut done = 0;
        while budget > 0 {
            let Some((goal, seeded)) = self.building else {
                break;
            };
            if !seeded {
                let dist = &mut self.dist[goal];
                dist.iter_mut().for_each(|d| *d = UNREACHABLE);
                self.heap.clear();
                let (gx, gy) = cell_of(nav.goals[goal]);
                let g = gy * NAV_CELLS + gx;
                dist[g] = 0;
                self.heap.push(Reverse((0, g as u32)));
                self.building = Some((goal, true));
            }
            let dist = &mut self.dist[goal];
            while budget > 0 {
                let Some(Reverse((d, cell))) = self.heap.pop() else {
                    break;
                };
                budget -= 1;
                done += 1;
                let cell = cell as usize;
                if d > dist[cell] {
                    continue;
                }
                let (x, y) = ((cell % NAV_CELLS) as i32, (cell / NAV_CELLS) as i32);
                for (k, &(dx, dy)) in NEIGHBOURS.iter().enumerate() {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= NAV_CELLS as i32 || ny >= NAV_CELLS as i32 {
                        continue;
                    }
                    let n = ny as usize * NAV_CELLS + nx as usize;
                    if nav.blocked[n] {
                        continue;
                    }
                    // No corner cutting past a blocked cell.
                    if k % 2 == 1
                        && (nav.blocked[y as usize * NAV_CELLS + nx as usize]
                            || nav.blocked[ny as usize * NAV_CELLS + x as usize])
                    {
                        continue;
                    }
                    let nd = d + if k % 2 == 1 { DIAGONAL } else { STRAIGHT };
                    if nd < dist[n] {
                        dist[n] = nd;
                        self.heap.push(Reverse((nd, n as u32)));
                    }
                }
            }
            if self.heap.is_empty() {
                self.finish_directions(goal);
                self.building = if goal + 1 < GOALS {
                    Some((goal + 1, false))
                } else {
                    None
                };
            }
        }
        done
    }

    /// Derives each cell's direction from the finished distances of `goal`.
    fn finish_directions(&mut self, goal: usize) {
        let dist = &self.dist[goal];
        let dir = &mut self.dir[goal];
        for y in 0..NAV_CELLS as i32 {
            for x in 0..NAV_CELLS as i32 {
                let here = dist[y as usize * NAV_CELLS + x as usize];
                let mut best = (here, 8u8);
                for (k, &(dx, dy)) in NEIGHBOURS.iter().enumerate() {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= NAV_CELLS as i32 || ny >= NAV_CELLS as i32 {
                        continue;
                    }
                    let d = dist[ny as usize * NAV_CELLS + nx as usize];
                    if d < best.0 {
                        best = (d, k as u8);
                    }
                }
                dir[y as usize * NAV_CELLS + x as usize] = best.1;
            }
        }
    }

    /// The unit direction to walk from `p` towards `goal`, or zero at the goal or when
    /// unreachable.
    pub fn direction(&self, goal: usize, p: Vec2) -> Vec2 {
        let (x, y) = cell_of(p);
        let k = self.dir[goal % GOALS][y * NAV_CELLS + x];
        match NEIGHBOURS.get(k as usize) {
            Some(&(dx, dy)) => Vec2::new(dx as f32, dy as f32).normalized(),
            None => Vec2::default(),
        }
    }
}

/// Picks a spawn point for each of `count` new agents: for each, `candidates` random points
/// are scored, and the best one that is walkable, out of the player's line of sight and far
/// from the agents already placed in this wave wins.
pub fn place_spawns(
    nav: &NavGrid,
    player: Vec2,
    count: usize,
    candidates: usize,
    rng: &mut Rng,
    out: &mut Vec<Vec2>,
) {
    let first = out.len();
    for _ in 0..count {
        let mut best = (f32::MIN, Vec2::new(WORLD_M * 0.5, WORLD_M * 0.5));
        for _ in 0..candidates {
            let p = Vec2::new(rng.range(2.0, WORLD_M - 2.0), rng.range(2.0, WORLD_M - 2.0));
            if nav.is_blocked(p) {
                continue;
            }
            let distance = (p - player).length();
            let hidden = !nav.line_of_sight(player, p);
            // Crowding against the last few placed: spread the wave out.
            let crowd = out[first..]
                .iter()
                .rev()
                .take(16)
                .map(|q| 1.0 / (0.5 + (*q - p).length_sq()))
                .sum::<f32>();
            let score = distance * 0.05 + if hidden { 10.0 } else { 0.0 } - crowd * 20.0;
            if score > best.0 {
                best = (score, p);
            }
        }
        out.push(best.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_lead_to_their_goals_and_time_slicing_matches_a_full_build() {
        let nav = NavGrid::generate(3);
        let mut full = FlowFields::new();
        full.begin_rebuild();
        full.step(&nav, u64::MAX);
        assert!(full.is_built());
        let mut sliced = FlowFields::new();
        sliced.begin_rebuild();
        let mut steps = 0;
        while !sliced.is_built() {
            sliced.step(&nav, 5000);
            steps += 1;
        }
        assert!(steps > 10);
        assert_eq!(full.dist, sliced.dist);
        assert_eq!(full.dir, sliced.dir);
        // Walking the field from a free cell reaches the goal.
        let mut p = Vec2::new(60.0, 120.0);
        for _ in 0..4000 {
            p += full.direction(0, p) * (NAV_CELL_M * 0.5);
        }
        assert!((p - nav.goals[0]).length() < 2.0, "ended at {p:?}");
    }

    #[test]
    fn spawns_are_walkable_and_deterministic() {
        let nav = NavGrid::generate(5);
        let mut a = Vec::new();
        let mut b = Vec::new();
        place_spawns(
            &nav,
            Vec2::new(64.0, 64.0),
            50,
            16,
            &mut Rng::new(1, 2),
            &mut a,
        );
        place_spawns(
            &nav,
            Vec2::new(64.0, 64.0),
            50,
            16,
            &mut Rng::new(1, 2),
            &mut b,
        );
        assert_eq!(a, b);
        assert!(a.iter().all(|p| !nav.is_blocked(*p)));
        let mut nav2 = nav.clone();
        assert!(nav2.collapse_a_wall().is_some());
        assert_ne!(nav.blocked, nav2.blocked);
    }
}
