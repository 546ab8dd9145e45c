//! Ground textures: a small base texture made while loading, and the region's detail
//! texture streamed in mid-game (synthesised, mip-mapped, then uploaded: megabytes copied).

use crate::math::{hash2, value_noise};

/// A square RGBA8 texture (0xAARRGGBB texels) with its mip chain.
#[derive(Clone, Debug, Default)]
pub struct Texture {
    /// Side of mip 0, texels (a power of two).
    pub size: usize,
    /// Mip levels, largest first.
    pub levels: Vec<Vec<u32>>,
}

/// Side of the base ground texture, texels.
pub const BASE_SIZE: usize = 256;

impl Texture {
    /// Bytes in every level.
    pub fn bytes(&self) -> u64 {
        self.levels.iter().map(|l| (l.len() * 4) as u64).sum()
    }

    /// Synthesises mip 0 of a ground texture: this is the "decode" of a streamed asset. A
    /// quarter-resolution height field (value noise on a coarse lattice, interpolated) is
    /// expanded to full resolution with per-texel grain and pebbles, through a colour ramp.
    pub fn synthesize(size: usize, seed: u32, detail: bool) -> Self {
        // The noise lattice: LATTICE × LATTICE cells over the texture (it tiles).
        const LATTICE: usize = 32;
        let lattice: Vec<f32> = (0..LATTICE * LATTICE)
            .map(|i| {
                let (x, y) = ((i % LATTICE) as f32, (i / LATTICE) as f32);
                value_noise(x * 0.5, y * 0.5, seed) * 0.7
                    + value_noise(x * 2.0, y * 2.0, seed.wrapping_add(1)) * 0.3
            })
            .collect();
        let coarse_side = (size / 4).max(1);
        let inv_cell = LATTICE as f32 / coarse_side as f32;
        // Per coarse column: lattice columns and the blend between them.
        let columns: Vec<(usize, usize, f32)> = (0..coarse_side)
            .map(|x| {
                let fx = x as f32 * inv_cell;
                let x0 = fx as usize % LATTICE;
                (x0, (x0 + 1) % LATTICE, fx.fract())
            })
            .collect();
        let mut coarse = Vec::with_capacity(coarse_side * coarse_side);
        for y in 0..coarse_side {
            let fy = y as f32 * inv_cell;
            let (y0, ty) = (fy as usize % LATTICE, fy.fract());
            let y1 = (y0 + 1) % LATTICE;
            let (row0, row1) = (
                &lattice[y0 * LATTICE..][..LATTICE],
                &lattice[y1 * LATTICE..][..LATTICE],
            );
            for &(x0, x1, tx) in &columns {
                let top = row0[x0] + (row0[x1] - row0[x0]) * tx;
                let bottom = row1[x0] + (row1[x1] - row1[x0]) * tx;
                coarse.push(top + (bottom - top) * ty);
            }
        }
        // The colour ramp: grass below 0.55, dirt above.
        let ramp: Vec<u32> = (0..256)
            .map(|i| {
                let n = i as f32 / 255.0;
                let (r, g, b) = if n > 0.55 {
                    (120.0 + 60.0 * n, 100.0 + 40.0 * n, 60.0)
                } else {
                    (50.0 + 40.0 * n, 110.0 + 80.0 * n, 40.0 + 20.0 * n)
                };
                0xff00_0000 | ((r as u32) << 16) | ((g as u32) << 8) | b as u32
            })
            .collect();
        let grain_weight = if detail { 0.15 } else { 0.08 };
        let mut texels = Vec::with_capacity(size * size);
        for y in 0..size {
            // Grain and pebbles from a cheap per-row generator, seeded by a hash of the row.
            let mut grain_state = hash2(0, y as i32, seed) | 1;
            let coarse_row = &coarse[(y * coarse_side / size).min(coarse_side - 1) * coarse_side..]
                [..coarse_side];
            for x in 0..size {
                grain_state ^= grain_state << 13;
                grain_state ^= grain_state >> 17;
                grain_state ^= grain_state << 5;
                let grain = (grain_state >> 24) as f32 * (1.0 / 255.0);
                let n = coarse_row[(x * coarse_side / size).min(coarse_side - 1)] * 0.85
                    + grain * grain_weight;
                let texel = if grain_state & 0xff < 4 {
                    0xff96_918c
                } else {
                    ramp[((n * 255.0) as usize).min(255)]
                };
                texels.push(texel);
            }
        }
        Self {
            size,
            levels: vec![texels],
        }
    }

    /// Builds the mip chain below mip 0 with a 2×2 box filter.
    pub fn build_mips(&mut self) {
        self.levels.truncate(1);
        let mut side = self.size;
        while side > 1 {
            let half = side / 2;
            let Some(src) = self.levels.last() else {
                return;
            };
            let mut dst = Vec::with_capacity(half * half);
            for y in 0..half {
                for x in 0..half {
                    let t = [
                        src[2 * y * side + 2 * x],
                        src[2 * y * side + 2 * x + 1],
                        src[(2 * y + 1) * side + 2 * x],
                        src[(2 * y + 1) * side + 2 * x + 1],
                    ];
                    let avg = |shift: u32| {
                        (t.iter().map(|v| (v >> shift) & 0xff).sum::<u32>() / 4) << shift
                    };
                    dst.push(0xff00_0000 | avg(16) | avg(8) | avg(0));
                }
            }
            self.levels.push(dst);
            side = half;
        }
    }

    /// Copies `source` into this texture, reusing its storage, converting each texel from
    /// sRGB to the renderer's linear encoding on the way: the upload. Returns the bytes
    /// copied.
    pub fn upload_from(&mut self, source: &Texture) -> u64 {
        let lut = srgb_to_linear_lut();
        self.size = source.size;
        self.levels.resize_with(source.levels.len(), Vec::new);
        let mut bytes = 0;
        for (dst, src) in self.levels.iter_mut().zip(&source.levels) {
            dst.clear();
            dst.extend(src.iter().map(|&t| {
                let c = |shift: u32| u32::from(lut[((t >> shift) & 0xff) as usize]) << shift;
                (t & 0xff00_0000) | c(16) | c(8) | c(0)
            }));
            bytes += (src.len() * 4) as u64;
        }
        bytes
    }

    /// Samples (nearest, wrapping) at `uv` from mip `level` (clamped to the chain).
    #[inline]
    pub fn sample(&self, uv: [f32; 2], level: u8) -> u32 {
        let level = (level as usize).min(self.levels.len().saturating_sub(1));
        let side = (self.size >> level).max(1);
        let Some(texels) = self.levels.get(level) else {
            return 0xff80_8080;
        };
        // Truncation then masking wraps (two's complement), with no call to `floor`.
        let wrap = |v: f32| ((v * side as f32) as i32 as usize) & (side - 1);
        texels
            .get(wrap(uv[1]) * side + wrap(uv[0]))
            .copied()
            .unwrap_or(0xff80_8080)
    }

    /// The mip level for a triangle covering `texels` texels on `pixels` pixels.
    pub fn mip_for(&self, texels: f32, pixels: f32) -> u8 {
        if pixels <= 0.0 || texels <= pixels {
            return 0;
        }
        let lod = 0.5 * (texels / pixels).log2();
        (lod.max(0.0) as u8).min(self.levels.len().saturating_sub(1) as u8)
    }
}

/// sRGB-encoded byte to linear byte.
fn srgb_to_linear_lut() -> [u8; 256] {
    let mut lut = [0u8; 256];
    for (i, v) in lut.iter_mut().enumerate() {
        let c = i as f32 / 255.0;
        let linear = if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        };
        *v = (linear * 255.0 + 0.5) as u8;
    }
    lut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mips_halve_down_to_one_texel_and_upload_copies_every_byte() {
        let mut t = Texture::synthesize(64, 3, true);
        t.build_mips();
        assert_eq!(t.levels.len(), 7);
        assert_eq!(t.levels.last().map(Vec::len), Some(1));
        assert_eq!(
            t.bytes(),
            (64 * 64 + 32 * 32 + 16 * 16 + 8 * 8 + 16 + 4 + 1) * 4
        );
        let mut gpu = Texture::default();
        assert_eq!(gpu.upload_from(&t), t.bytes());
        let (a, b) = (gpu.sample([0.3, 0.7], 0), t.sample([0.3, 0.7], 0));
        assert!(
            a & 0xff <= b & 0xff && (a >> 8) & 0xff <= (b >> 8) & 0xff,
            "linear is darker"
        );
        assert_eq!(t.mip_for(4096.0, 1024.0), 1);
    }
}
