//! Small vector maths and a seeded random generator: all the demo needs, nothing more.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

/// A 2-D vector on the ground plane, metres (`x` east, `y` is the world's `z`, south).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec2 {
    /// East.
    pub x: f32,
    /// South (world z).
    pub y: f32,
}

impl Vec2 {
    /// A vector.
    pub const fn new(x: f32, y: f32) -> Self {
        Self { x, y }
    }

    /// Dot product.
    pub fn dot(self, other: Self) -> f32 {
        self.x * other.x + self.y * other.y
    }

    /// Squared length.
    pub fn length_sq(self) -> f32 {
        self.dot(self)
    }

    /// Length.
    pub fn length(self) -> f32 {
        self.length_sq().sqrt()
    }

    /// Scaled to at most `max` long.
    pub fn clamp_length(self, max: f32) -> Self {
        let len = self.length();
        if len > max && len > 0.0 {
            self * (max / len)
        } else {
            self
        }
    }

    /// Unit length, or zero.
    pub fn normalized(self) -> Self {
        let len = self.length();
        if len > 1e-6 {
            self * (1.0 / len)
        } else {
            Self::default()
        }
    }
}

impl Add for Vec2 {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self::new(self.x + o.x, self.y + o.y)
    }
}
impl AddAssign for Vec2 {
    fn add_assign(&mut self, o: Self) {
        *self = *self + o;
    }
}
impl Sub for Vec2 {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y)
    }
}
impl SubAssign for Vec2 {
    fn sub_assign(&mut self, o: Self) {
        *self = *self - o;
    }
}
impl Mul<f32> for Vec2 {
    type Output = Self;
    fn mul(self, s: f32) -> Self {
        Self::new(self.x * s, self.y * s)
    }
}

/// A 3-D vector (world space: `y` up).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3 {
    /// x.
    pub x: f32,
    /// y (up).
    pub y: f32,
    /// z.
    pub z: f32,
}

impl Vec3 {
    /// A vector.
    pub const fn new(x: f32, y: f32, z: f32) -> Self {
        Self { x, y, z }
    }

    /// Dot product.
    pub fn dot(self, o: Self) -> f32 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    /// Cross product.
    pub fn cross(self, o: Self) -> Self {
        Self::new(
            self.y * o.z - self.z * o.y,
            self.z * o.x - self.x * o.z,
            self.x * o.y - self.y * o.x,
        )
    }

    /// Unit length, or zero.
    pub fn normalized(self) -> Self {
        let len = self.dot(self).sqrt();
        if len > 1e-9 {
            self * (1.0 / len)
        } else {
            Self::default()
        }
    }
}

impl Add for Vec3 {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self::new(self.x + o.x, self.y + o.y, self.z + o.z)
    }
}
impl Sub for Vec3 {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Self::new(self.x - o.x, self.y - o.y, self.z - o.z)
    }
}
impl Mul<f32> for Vec3 {
    type Output = Self;
    fn mul(self, s: f32) -> Self {
        Self::new(self.x * s, self.y * s, self.z * s)
    }
}
impl Neg for Vec3 {
    type Output = Self;
    fn neg(self) -> Self {
        Self::new(-self.x, -self.y, -self.z)
    }
}

/// A column-major 4×4 matrix (`m[col][row]`), right-handed, depth 0..1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mat4 {
    /// Columns.
    pub m: [[f32; 4]; 4],
}

impl Mat4 {
    /// The identity.
    pub const IDENTITY: Self = Self {
        m: [
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ],
    };

    /// `self × other`.
    pub fn mul(&self, other: &Self) -> Self {
        let mut out = [[0.0f32; 4]; 4];
        for (c, col) in out.iter_mut().enumerate() {
            for (r, cell) in col.iter_mut().enumerate() {
                *cell = (0..4).map(|k| self.m[k][r] * other.m[c][k]).sum();
            }
        }
        Self { m: out }
    }

    /// Transforms a point (w = 1) to homogeneous clip coordinates.
    pub fn transform(&self, p: Vec3) -> [f32; 4] {
        let m = &self.m;
        [
            m[0][0] * p.x + m[1][0] * p.y + m[2][0] * p.z + m[3][0],
            m[0][1] * p.x + m[1][1] * p.y + m[2][1] * p.z + m[3][1],
            m[0][2] * p.x + m[1][2] * p.y + m[2][2] * p.z + m[3][2],
            m[0][3] * p.x + m[1][3] * p.y + m[2][3] * p.z + m[3][3],
        ]
    }

    /// A view matrix looking from `eye` at `target`.
    pub fn look_at(eye: Vec3, target: Vec3, up: Vec3) -> Self {
        let f = (target - eye).normalized();
        let s = f.cross(up).normalized();
        let u = s.cross(f);
        Self {
            m: [
                [s.x, u.x, -f.x, 0.0],
                [s.y, u.y, -f.y, 0.0],
                [s.z, u.z, -f.z, 0.0],
                [-s.dot(eye), -u.dot(eye), f.dot(eye), 1.0],
            ],
        }
    }

    /// A perspective projection (vertical field of view in radians), depth mapped to 0..1.
    pub fn perspective(fov_y_rad: f32, aspect: f32, near: f32, far: f32) -> Self {
        let f = 1.0 / (fov_y_rad * 0.5).tan();
        Self {
            m: [
                [f / aspect, 0.0, 0.0, 0.0],
                [0.0, f, 0.0, 0.0],
                [0.0, 0.0, far / (near - far), -1.0],
                [0.0, 0.0, near * far / (near - far), 0.0],
            ],
        }
    }

    /// An orthographic projection of the box `[-half_w, half_w] × [-half_h, half_h] ×
    /// [near, far]` (view space looks down −z), depth mapped to 0..1.
    pub fn orthographic(half_w: f32, half_h: f32, near: f32, far: f32) -> Self {
        Self {
            m: [
                [1.0 / half_w, 0.0, 0.0, 0.0],
                [0.0, 1.0 / half_h, 0.0, 0.0],
                [0.0, 0.0, 1.0 / (near - far), 0.0],
                [0.0, 0.0, near / (near - far), 1.0],
            ],
        }
    }
}

/// `1 / sqrt(x)` for `x > 0`, to about 0.2 %: the bit-trick estimate and one Newton step.
/// All multiplies and adds, so a shading loop does not wait on `sqrtss` and `divss`.
#[inline]
pub fn fast_inv_sqrt(x: f32) -> f32 {
    let y = f32::from_bits(0x5f37_59df_u32.wrapping_sub(x.to_bits() >> 1));
    y * (1.5 - 0.5 * x * y * y)
}

/// A small, fast, seeded generator (PCG-XSH-RR 64/32): the demo's only source of chance, so
/// a seed fixes every decision.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator from a seed (any value; the stream differs per `stream`).
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Self {
            state: seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        ((u64::from(self.next_u32()) * u64::from(n.max(1))) >> 32) as u32
    }
}

/// A stateless hash of a 2-D integer lattice point: value noise and procedural textures.
pub fn hash2(x: i32, y: i32, seed: u32) -> u32 {
    let mut h = (x as u32)
        .wrapping_mul(0x27d4_eb2d)
        .wrapping_add((y as u32).wrapping_mul(0x1656_67b1))
        .wrapping_add(seed.wrapping_mul(0x9E37_79B9));
    h ^= h >> 15;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Smooth value noise in `[0, 1)` at a point, lattice spacing 1.
pub fn value_noise(x: f32, y: f32, seed: u32) -> f32 {
    let (xf, yf) = (x.floor(), y.floor());
    let (xi, yi) = (xf as i32, yf as i32);
    let (tx, ty) = (x - xf, y - yf);
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let v = |dx: i32, dy: i32| (hash2(xi + dx, yi + dy, seed) >> 8) as f32 / 16_777_216.0;
    let a = v(0, 0) + (v(1, 0) - v(0, 0)) * sx;
    let b = v(0, 1) + (v(1, 1) - v(0, 1)) * sx;
    a + (b - a) * sy
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_in_range() {
        let mut a = Rng::new(7, 1);
        let mut b = Rng::new(7, 1);
        let mut c = Rng::new(8, 1);
        let xs: Vec<u32> = (0..16).map(|_| a.next_u32()).collect();
        let ys: Vec<u32> = (0..16).map(|_| b.next_u32()).collect();
        let zs: Vec<u32> = (0..16).map(|_| c.next_u32()).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        for _ in 0..1000 {
            let u = a.unit();
            assert!((0.0..1.0).contains(&u));
            assert!(a.below(10) < 10);
        }
    }

    #[test]
    fn fast_inverse_square_root_is_close() {
        for x in [0.01f32, 0.5, 1.0, 2.0, 100.0, 12345.0] {
            let exact = 1.0 / x.sqrt();
            assert!((fast_inv_sqrt(x) - exact).abs() / exact < 0.002, "{x}");
        }
    }

    #[test]
    fn projection_maps_near_and_far_to_unit_depth() {
        let p = Mat4::perspective(1.0, 1.5, 1.0, 100.0);
        let near = p.transform(Vec3::new(0.0, 0.0, -1.0));
        let far = p.transform(Vec3::new(0.0, 0.0, -100.0));
        assert!((near[2] / near[3]).abs() < 1e-5);
        assert!((far[2] / far[3] - 1.0).abs() < 1e-5);
        let o = Mat4::orthographic(10.0, 10.0, 1.0, 50.0);
        let c = o.transform(Vec3::new(10.0, -10.0, -50.0));
        assert!((c[0] - 1.0).abs() < 1e-6 && (c[1] + 1.0).abs() < 1e-6);
        assert!((c[2] - 1.0).abs() < 1e-5);
    }
}
