//! The HUD: quads (panels, minimap dots, glyphs of a 3×5 pixel font) blended onto the
//! final image.

/// One screen-space quad, inclusive-exclusive pixel bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quad {
    /// Left, pixels.
    pub x0: i32,
    /// Top, pixels.
    pub y0: i32,
    /// Right (exclusive).
    pub x1: i32,
    /// Bottom (exclusive).
    pub y1: i32,
    /// 0xRRGGBB.
    pub colour: u32,
    /// Opacity 0..=255.
    pub alpha: u8,
    /// A glyph (index into the font) drawn in the quad instead of a solid fill.
    pub glyph: Option<u8>,
}

/// Kinds of quad, each drawn as its own batch group (one pipeline state each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuadGroup {
    /// Panels and the pause overlay.
    Panel = 0,
    /// Minimap obstacles.
    MapObstacle = 1,
    /// Minimap agents.
    MapAgent = 2,
    /// Text.
    Glyph = 3,
}

/// Glyph rows (3 bits each, left bit first) for the characters the HUD prints.
const FONT: [(char, [u8; 5]); 27] = [
    ('0', [7, 5, 5, 5, 7]),
    ('1', [2, 6, 2, 2, 7]),
    ('2', [7, 1, 7, 4, 7]),
    ('3', [7, 1, 7, 1, 7]),
    ('4', [5, 5, 7, 1, 1]),
    ('5', [7, 4, 7, 1, 7]),
    ('6', [7, 4, 7, 5, 7]),
    ('7', [7, 1, 1, 1, 1]),
    ('8', [7, 5, 7, 5, 7]),
    ('9', [7, 5, 7, 1, 7]),
    ('A', [2, 5, 7, 5, 5]),
    ('C', [7, 4, 4, 4, 7]),
    ('D', [6, 5, 5, 5, 6]),
    ('E', [7, 4, 7, 4, 7]),
    ('F', [7, 4, 7, 4, 4]),
    ('G', [7, 4, 5, 5, 7]),
    ('I', [7, 2, 2, 2, 7]),
    ('L', [4, 4, 4, 4, 7]),
    ('M', [5, 7, 7, 5, 5]),
    ('N', [6, 5, 5, 5, 5]),
    ('P', [7, 5, 7, 4, 4]),
    ('R', [6, 5, 6, 5, 5]),
    ('S', [7, 4, 7, 1, 7]),
    ('T', [7, 2, 2, 2, 2]),
    ('U', [5, 5, 5, 5, 7]),
    (':', [0, 2, 0, 2, 0]),
    (' ', [0, 0, 0, 0, 0]),
];

/// Glyph pixel scale.
const GLYPH_SCALE: i32 = 2;

/// Appends the quads for `text` at `(x, y)`; characters the font lacks are skipped.
pub fn text(out: &mut Vec<Quad>, x: i32, y: i32, text: &str, colour: u32) {
    let mut cx = x;
    for ch in text.chars() {
        if let Some(index) = FONT.iter().position(|(c, _)| *c == ch) {
            if ch != ' ' {
                out.push(Quad {
                    x0: cx,
                    y0: y,
                    x1: cx + 3 * GLYPH_SCALE,
                    y1: y + 5 * GLYPH_SCALE,
                    colour,
                    alpha: 255,
                    glyph: Some(index as u8),
                });
            }
            cx += 4 * GLYPH_SCALE;
        }
    }
}

/// Blends one quad onto `image` (`width × height`, 0xAARRGGBB). Returns pixels written.
pub fn draw(image: &mut [u32], width: usize, height: usize, q: &Quad) -> u64 {
    let x0 = q.x0.clamp(0, width as i32) as usize;
    let x1 = q.x1.clamp(0, width as i32) as usize;
    let y0 = q.y0.clamp(0, height as i32) as usize;
    let y1 = q.y1.clamp(0, height as i32) as usize;
    let a = u32::from(q.alpha);
    let mut written = 0;
    for y in y0..y1 {
        for x in x0..x1 {
            if let Some(g) = q.glyph {
                let gx = (x as i32 - q.x0) / GLYPH_SCALE;
                let gy = (y as i32 - q.y0) / GLYPH_SCALE;
                let rows = FONT.get(g as usize).map(|(_, r)| *r).unwrap_or([0; 5]);
                let row = rows.get(gy as usize).copied().unwrap_or(0);
                if (row >> (2 - gx.clamp(0, 2))) & 1 == 0 {
                    continue;
                }
            }
            let Some(px) = image.get_mut(y * width + x) else {
                continue;
            };
            let blend = |shift: u32| {
                let d = (*px >> shift) & 0xff;
                let s = (q.colour >> shift) & 0xff;
                ((s * a + d * (255 - a)) / 255) << shift
            };
            *px = 0xff00_0000 | blend(16) | blend(8) | blend(0);
            written += 1;
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_makes_a_quad_per_visible_glyph_and_draws_its_bits() {
        let mut quads = Vec::new();
        text(&mut quads, 0, 0, "FRAME 10", 0xffffff);
        assert_eq!(quads.len(), 7);
        let mut image = vec![0xff00_0000u32; 64 * 16];
        let one = quads[5];
        // '1' has 8 lit cells of 3×5, each 2×2 pixels.
        assert_eq!(draw(&mut image, 64, 16, &one), 8 * 4);
    }
}
