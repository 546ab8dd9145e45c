//! The triangle rasterizer: setup in screen space once per triangle, then rasterization
//! of one horizontal band of rows at a time, so bands can run on different threads.

use crate::math::{Mat4, Vec3};

/// A vertex after the vertex stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClipVertex {
    /// Homogeneous clip coordinates.
    pub clip: [f32; 4],
    /// World position, metres.
    pub world: Vec3,
    /// Texture coordinates.
    pub uv: [f32; 2],
}

impl ClipVertex {
    /// Transforms a world-space point.
    pub fn from_world(view_proj: &Mat4, world: Vec3, uv: [f32; 2]) -> Self {
        Self {
            clip: view_proj.transform(world),
            world,
            uv,
        }
    }
}

/// A triangle set up in screen space: edge functions' inputs, depth, attributes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tri {
    /// Screen x of each vertex, pixels.
    pub x: [f32; 3],
    /// Screen y of each vertex, pixels (down).
    pub y: [f32; 3],
    /// Depth 0..1 of each vertex (linear in screen space).
    pub z: [f32; 3],
    /// 1/w of each vertex (perspective-correct interpolation).
    pub inv_w: [f32; 3],
    /// World position of each vertex.
    pub world: [Vec3; 3],
    /// Texture coordinates of each vertex.
    pub uv: [[f32; 2]; 3],
    /// Flat normal, packed (see [`pack_normal`]).
    pub normal: u32,
    /// Albedo 0xRRGGBB with the material id in the top byte.
    pub albedo: u32,
    /// Sample the ground texture instead of the flat albedo.
    pub textured: bool,
    /// Mip level to sample.
    pub mip: u8,
    /// Inclusive pixel bounds, clipped to the target: x0, y0, x1, y1.
    pub bounds: [i32; 4],
    /// 1 / twice the signed area.
    pub inv_area: f32,
}

/// Packs a unit normal into 3 × 8 bits.
pub fn pack_normal(n: Vec3) -> u32 {
    let q = |v: f32| (((v.clamp(-1.0, 1.0) * 0.5 + 0.5) * 255.0).round() as u32) & 0xff;
    q(n.x) | (q(n.y) << 8) | (q(n.z) << 16)
}

/// Unpacks [`pack_normal`].
pub fn unpack_normal(p: u32) -> Vec3 {
    let u = |v: u32| (v & 0xff) as f32 * (2.0 / 255.0) - 1.0;
    Vec3::new(u(p), u(p >> 8), u(p >> 16))
}

/// Sets up a triangle for a `width × height` target. `None` when it is behind the eye,
/// back-facing (with `cull_back`), degenerate or off screen.
pub fn setup(v: &[ClipVertex; 3], width: u32, height: u32, cull_back: bool) -> Option<Tri> {
    let mut t = Tri::default();
    for (k, vert) in v.iter().enumerate() {
        let w = vert.clip[3];
        if w < 0.05 {
            return None;
        }
        let inv_w = 1.0 / w;
        let (nx, ny, nz) = (
            vert.clip[0] * inv_w,
            vert.clip[1] * inv_w,
            vert.clip[2] * inv_w,
        );
        if !(-0.001..=1.001).contains(&nz) {
            return None;
        }
        t.x[k] = (nx * 0.5 + 0.5) * width as f32;
        t.y[k] = (0.5 - ny * 0.5) * height as f32;
        t.z[k] = nz;
        t.inv_w[k] = inv_w;
        t.world[k] = vert.world;
        t.uv[k] = vert.uv;
    }
    // With y pointing down, a triangle wound counter-clockwise as seen from outside has a
    // negative area here.
    let area = (t.x[1] - t.x[0]) * (t.y[2] - t.y[0]) - (t.x[2] - t.x[0]) * (t.y[1] - t.y[0]);
    if area.abs() < 1e-6 {
        return None;
    }
    if area > 0.0 {
        if cull_back {
            return None;
        }
        t.x.swap(1, 2);
        t.y.swap(1, 2);
        t.z.swap(1, 2);
        t.inv_w.swap(1, 2);
        t.world.swap(1, 2);
        t.uv.swap(1, 2);
    }
    t.inv_area = 1.0 / area.abs();
    let min = |a: [f32; 3]| a[0].min(a[1]).min(a[2]);
    let max = |a: [f32; 3]| a[0].max(a[1]).max(a[2]);
    let x0 = (min(t.x).floor() as i32).max(0);
    let y0 = (min(t.y).floor() as i32).max(0);
    let x1 = (max(t.x).ceil() as i32).min(width as i32 - 1);
    let y1 = (max(t.y).ceil() as i32).min(height as i32 - 1);
    if x0 > x1 || y0 > y1 {
        return None;
    }
    t.bounds = [x0, y0, x1, y1];
    Some(t)
}

impl Tri {
    /// Screen area in pixels (for mip selection).
    pub fn area_px(&self) -> f32 {
        0.5 / self.inv_area
    }
}

/// Rasterizes the rows `band_y0..band_y1` of `tri`, depth-tested against `depth` (the
/// band's rows only, `width` wide, less-than test, written on pass). For each pixel that
/// passes, `fragment(index_in_band, perspective_weights)` runs. Returns pixels written.
#[inline]
pub fn raster_band(
    tri: &Tri,
    width: usize,
    band_y0: usize,
    band_y1: usize,
    depth: &mut [f32],
    mut fragment: impl FnMut(usize, [f32; 3]),
) -> u64 {
    let [x0, y0, x1, y1] = tri.bounds;
    let ys = (y0 as usize).max(band_y0);
    let ye = (y1 as usize + 1).min(band_y1);
    if ys >= ye {
        return 0;
    }
    let (xs, ys_, zs) = (tri.x, tri.y, tri.z);
    // Edge i is opposite vertex i: from vertex (i+1) to (i+2).
    let edge = |a: usize, b: usize, px: f32, py: f32| {
        (xs[b] - xs[a]) * (py - ys_[a]) - (ys_[b] - ys_[a]) * (px - xs[a])
    };
    let step_x = [-(ys_[2] - ys_[1]), -(ys_[0] - ys_[2]), -(ys_[1] - ys_[0])];
    let mut written = 0;
    for y in ys..ye {
        let py = y as f32 + 0.5;
        let px0 = x0 as f32 + 0.5;
        // Signs are flipped so inside is positive (the area is negative after setup).
        let mut w = [
            -edge(1, 2, px0, py),
            -edge(2, 0, px0, py),
            -edge(0, 1, px0, py),
        ];
        let row = (y - band_y0) * width;
        for x in x0..=x1 {
            if w[0] >= 0.0 && w[1] >= 0.0 && w[2] >= 0.0 {
                let l = [
                    w[0] * tri.inv_area,
                    w[1] * tri.inv_area,
                    w[2] * tri.inv_area,
                ];
                let z = l[0] * zs[0] + l[1] * zs[1] + l[2] * zs[2];
                let i = row + x as usize;
                if let Some(d) = depth.get_mut(i) {
                    if z < *d {
                        *d = z;
                        let p = [
                            l[0] * tri.inv_w[0],
                            l[1] * tri.inv_w[1],
                            l[2] * tri.inv_w[2],
                        ];
                        let s = 1.0 / (p[0] + p[1] + p[2]);
                        fragment(i, [p[0] * s, p[1] * s, p[2] * s]);
                        written += 1;
                    }
                }
            }
            w[0] -= step_x[0];
            w[1] -= step_x[1];
            w[2] -= step_x[2];
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vert(x: f32, y: f32) -> ClipVertex {
        ClipVertex {
            clip: [x, y, 0.5, 1.0],
            ..ClipVertex::default()
        }
    }

    #[test]
    fn a_front_facing_triangle_covers_about_its_area() {
        // Counter-clockwise in NDC (y up) is front-facing.
        let tri = [vert(-1.0, -1.0), vert(1.0, -1.0), vert(-1.0, 1.0)];
        let t = setup(&tri, 64, 64, true).expect("front-facing");
        let mut depth = vec![1.0f32; 64 * 64];
        let mut count = 0;
        let written = raster_band(&t, 64, 0, 64, &mut depth, |_, w| {
            assert!((w[0] + w[1] + w[2] - 1.0).abs() < 1e-4);
            count += 1;
        });
        assert_eq!(written, count);
        assert!(
            (2000..=2150).contains(&written),
            "{written} pixels for a 2048-pixel triangle"
        );
        // The same triangle wound the other way is culled, or drawn when culling is off.
        let back = [tri[0], tri[2], tri[1]];
        assert!(setup(&back, 64, 64, true).is_none());
        assert!(setup(&back, 64, 64, false).is_some());
        // Depth test: drawing it again at the same depth writes nothing.
        assert_eq!(raster_band(&t, 64, 0, 64, &mut depth, |_, _| {}), 0);
    }

    #[test]
    fn bands_partition_the_pixels() {
        let tri = [vert(-0.9, -0.8), vert(0.7, -0.9), vert(0.1, 0.95)];
        let t = setup(&tri, 100, 60, true).expect("visible");
        let mut whole = vec![1.0f32; 100 * 60];
        let all = raster_band(&t, 100, 0, 60, &mut whole, |_, _| {});
        let mut sum = 0;
        for band in 0..6 {
            let mut d = vec![1.0f32; 100 * 10];
            sum += raster_band(&t, 100, band * 10, band * 10 + 10, &mut d, |_, _| {});
        }
        assert_eq!(all, sum);
        assert_eq!(
            unpack_normal(pack_normal(Vec3::new(0.0, 1.0, 0.0)))
                .y
                .round(),
            1.0
        );
    }
}
