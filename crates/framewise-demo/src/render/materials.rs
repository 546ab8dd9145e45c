//! Materials and their shading tables: the demo's "pipelines".
//!
//! A material cannot be drawn until its shading table is built: a lookup table of its
//! specular response, integrated numerically over many sample directions. Building it is
//! what compiling a pipeline is to a GPU game: expensive, done once, and done on first use
//! unless someone warms it up at load. Every table built counts one `pipelines_created`.

use crate::math::Rng;

/// Material ids (stored in the top byte of the G-buffer albedo).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Material {
    /// Nothing drawn (sky).
    Sky = 0,
    /// The ground.
    Ground = 1,
    /// Flock agents.
    Agent = 2,
    /// Obstacles and walls.
    Obstacle = 3,
    /// The player unit.
    Player = 4,
    /// Crystals: first drawn when they emerge, mid-game.
    Crystal = 5,
}

/// Materials by id.
pub const MATERIALS: [Material; 6] = [
    Material::Sky,
    Material::Ground,
    Material::Agent,
    Material::Obstacle,
    Material::Player,
    Material::Crystal,
];

impl Material {
    /// The pipeline name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sky => "sky",
            Self::Ground => "ground",
            Self::Agent => "agent",
            Self::Obstacle => "obstacle",
            Self::Player => "player",
            Self::Crystal => "crystal",
        }
    }

    /// The id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// Table resolution per axis, axes, and samples per entry: the crystal's table is a
    /// large 3-D one (refraction depends on the view angle too).
    fn table_shape(self) -> (usize, usize, usize) {
        match self {
            Self::Crystal => (64, 3, 64),
            _ => (32, 2, 16),
        }
    }

    fn roughness(self) -> f32 {
        match self {
            Self::Sky => 1.0,
            Self::Ground => 0.9,
            Self::Agent => 0.5,
            Self::Obstacle => 0.8,
            Self::Player => 0.3,
            Self::Crystal => 0.08,
        }
    }
}

/// A built shading table: specular response over (n·l, n·h[, n·v]).
#[derive(Clone, Debug)]
pub struct ShadingTable {
    size: usize,
    axes: usize,
    values: Vec<f32>,
}

impl ShadingTable {
    /// Integrates the table for `material` (the expensive part).
    pub fn build(material: Material) -> Self {
        let (size, axes, samples) = material.table_shape();
        let alpha = material.roughness() * material.roughness();
        let entries = size.pow(axes as u32);
        let mut values = Vec::with_capacity(entries);
        let mut rng = Rng::new(u64::from(material.id()), 0x7ab1e);
        // Fixed jitter per sample index, so every entry integrates over the same set.
        let jitter: Vec<(f32, f32)> = (0..samples).map(|_| (rng.unit(), rng.unit())).collect();
        let step = 1.0 / (size - 1) as f32;
        for e in 0..entries {
            let ndl = (e % size) as f32 * step;
            let ndh = ((e / size) % size) as f32 * step;
            let ndv = if axes == 3 {
                (e / (size * size)) as f32 * step
            } else {
                1.0
            };
            let mut sum = 0.0f32;
            for &(u, v) in &jitter {
                // Perturb the half vector around n·h by the lobe width, evaluate GGX D·G·F.
                let h = (ndh + (u - 0.5) * alpha * 0.5).clamp(0.0, 1.0);
                let d = {
                    let a2 = alpha * alpha;
                    let t = h * h * (a2 - 1.0) + 1.0;
                    a2 / (std::f32::consts::PI * t * t).max(1e-6)
                };
                let k = alpha * 0.5;
                let g = |x: f32| x / (x * (1.0 - k) + k).max(1e-6);
                let fresnel = 0.04 + 0.96 * (1.0 - (ndv * (0.5 + v))).clamp(0.0, 1.0).powi(5);
                sum += d * g(ndl) * g(ndv.max(0.05)) * fresnel / (4.0 * ndv.max(0.05));
            }
            values.push((sum / samples as f32).min(8.0));
        }
        Self { size, axes, values }
    }

    /// Looks the response up (nearest entry).
    #[inline]
    pub fn lookup(&self, ndl: f32, ndh: f32, ndv: f32) -> f32 {
        let q = |v: f32| ((v.clamp(0.0, 1.0) * (self.size - 1) as f32) + 0.5) as usize;
        let mut i = q(ndl) + q(ndh) * self.size;
        if self.axes == 3 {
            i += q(ndv) * self.size * self.size;
        }
        self.values.get(i).copied().unwrap_or(0.0)
    }
}

/// The pipeline cache: a shading table per material, built on first use.
#[derive(Debug, Default)]
pub struct Pipelines {
    tables: Vec<Option<ShadingTable>>,
}

impl Pipelines {
    /// An empty cache.
    pub fn new() -> Self {
        Self {
            tables: vec![None; MATERIALS.len()],
        }
    }

    /// Whether `material`'s table is built.
    pub fn is_built(&self, material: Material) -> bool {
        self.tables
            .get(material as usize)
            .is_some_and(Option::is_some)
    }

    /// Builds `material`'s table if it is missing; returns whether it built one.
    pub fn ensure(&mut self, material: Material) -> bool {
        if self.is_built(material) {
            return false;
        }
        let _scope = framewise::scope!("build_shading_table");
        if let Some(slot) = self.tables.get_mut(material as usize) {
            *slot = Some(ShadingTable::build(material));
        }
        true
    }

    /// The table for a material id, if built.
    #[inline]
    pub fn table(&self, id: u8) -> Option<&ShadingTable> {
        self.tables.get(id as usize).and_then(Option::as_ref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_build_once_and_respond_to_the_half_vector() {
        let mut p = Pipelines::new();
        assert!(p.ensure(Material::Player));
        assert!(!p.ensure(Material::Player));
        let t = p.table(Material::Player.id()).expect("built");
        assert!(t.lookup(1.0, 1.0, 1.0) > t.lookup(1.0, 0.2, 1.0));
        assert!(p.table(Material::Crystal.id()).is_none());
    }
}
