//! The correctness gate's comparison: a frame a program wrote against its golden, by SSIM.
//!
//! Both images are PNG files, decoded with the `png` crate to 8-bit RGB (grey, palette,
//! 16-bit and alpha images are expanded and stripped to RGB; alpha is dropped, not blended).
//! The score is `image-compare`'s mean SSIM (`MSSIMSimple`: 8×8 windows, each RGB channel
//! compared alone, the **lowest** channel's mean kept), from −1 to 1, 1 for identical
//! images. A frame whose size differs from the golden's is a different picture: it fails
//! without a score.

use serde::{Deserialize, Serialize};

/// The SSIM a frame must reach to pass when the bench does not say otherwise.
pub const DEFAULT_THRESHOLD: f64 = 0.98;

/// The schema name of `framewise golden --format json` (whose `similarity` is a [`Similarity`]).
pub const GOLDEN_SCHEMA: &str = "framewise.golden/1";

/// The most bytes a decoded image may take: 512 MiB, past an 8K frame of 16-bit RGBA
/// (7680 × 4320 × 8 bytes, 253 MiB). A larger one is refused before it is decoded.
pub const MAX_DECODED_BYTES: usize = 512 << 20;

/// An image decoded to 8-bit RGB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RgbImage {
    /// Width, pixels.
    pub width_px: u32,
    /// Height, pixels.
    pub height_px: u32,
    /// Row-major RGB bytes, 3 a pixel.
    pub rgb: Vec<u8>,
}

/// Why a PNG could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    /// The bytes are not a PNG the decoder accepts.
    #[error("not a readable PNG: {0}")]
    Decode(String),
    /// A PNG with no pixels.
    #[error("an empty image (0 pixels)")]
    Empty,
    /// The comparison itself failed.
    #[error("cannot compare the images: {0}")]
    Compare(String),
}

/// Refuses a palette the `png` crate (0.18) would panic expanding, before it is decoded: a
/// `PLTE` whose length is no multiple of 3 (PNG's holds whole RGB triples).
fn check_palette(bytes: &[u8]) -> Result<(), GoldenError> {
    let mut at = 8usize; // past the signature
    while let Some(&[l0, l1, l2, l3, t0, t1, t2, t3]) = bytes.get(at..at.saturating_add(8)) {
        let len = u32::from_be_bytes([l0, l1, l2, l3]) as usize;
        if &[t0, t1, t2, t3] == b"PLTE" && !len.is_multiple_of(3) {
            return Err(GoldenError::Decode(format!(
                "a palette of {len} bytes, not whole RGB triples (3 bytes each)"
            )));
        }
        at = at.saturating_add(12).saturating_add(len);
    }
    Ok(())
}

/// Decodes PNG bytes to 8-bit RGB.
pub fn decode_png(bytes: &[u8]) -> Result<RgbImage, GoldenError> {
    check_palette(bytes)?;
    // Every checksum is verified: the chunks' CRC-32 and the zlib stream's Adler-32, which the
    // `png` crate skips by default (a byte flipped inside `IDAT` under a recomputed CRC decoded
    // to another picture, and was compared as the frame or the golden).
    let mut options = png::DecodeOptions::default();
    options.set_ignore_checksums(false);
    options.set_skip_ancillary_crc_failures(false);
    let mut decoder = png::Decoder::new_with_options(std::io::Cursor::new(bytes), options);
    // Palette to RGB, grey to 8 bits, 16-bit to 8-bit.
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder
        .read_info()
        .map_err(|e| GoldenError::Decode(e.to_string()))?;
    // The header's size is checked before the buffer is made: a PNG of a hundred bytes can
    // claim 80,000 × 80,000 pixels, and the allocation aborted the process.
    let size = reader
        .output_buffer_size()
        .filter(|&size| size <= MAX_DECODED_BYTES)
        .ok_or_else(|| {
            let (w, h) = reader.info().size();
            GoldenError::Decode(format!(
                "a {w}x{h} image is too large to decode (over {} MiB of pixels)",
                MAX_DECODED_BYTES >> 20
            ))
        })?;
    let mut buf = vec![0u8; size];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| GoldenError::Decode(e.to_string()))?;
    // The rest of the file, to `IEND`, each chunk's CRC checked: a file cut or damaged after
    // its last row is no whole PNG either.
    reader
        .finish()
        .map_err(|e| GoldenError::Decode(e.to_string()))?;
    let (width_px, height_px) = (info.width, info.height);
    if width_px == 0 || height_px == 0 {
        return Err(GoldenError::Empty);
    }
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Indexed => {
            return Err(GoldenError::Decode("an unexpanded palette image".into()))
        }
    };
    let pixels = width_px as usize * height_px as usize;
    let mut rgb = Vec::with_capacity(pixels * 3);
    for y in 0..height_px as usize {
        let row = buf
            .get(y * info.line_size..(y + 1) * info.line_size)
            .ok_or_else(|| GoldenError::Decode("truncated image data".into()))?;
        for px in row.chunks_exact(channels).take(width_px as usize) {
            match channels {
                1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                _ => rgb.extend_from_slice(&px[..3]),
            }
        }
    }
    if rgb.len() != pixels * 3 {
        return Err(GoldenError::Decode("truncated image data".into()));
    }
    Ok(RgbImage {
        width_px,
        height_px,
        rgb,
    })
}

/// What a comparison found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Similarity {
    /// Mean SSIM of the lowest channel (−1..1; 1 identical); `None` when the sizes differ.
    pub ssim: Option<f64>,
    /// The golden's size, `WIDTHxHEIGHT`.
    pub golden_size: String,
    /// The frame's size, `WIDTHxHEIGHT`.
    pub frame_size: String,
    /// Whether the frame passes the threshold.
    pub pass: bool,
    /// Why, in words.
    pub reason: String,
}

/// Compares `frame` with `golden`: passes when their sizes agree and the SSIM is at least
/// `threshold`.
pub fn compare(
    golden: &RgbImage,
    frame: &RgbImage,
    threshold: f64,
) -> Result<Similarity, GoldenError> {
    let size = |i: &RgbImage| format!("{}x{}", i.width_px, i.height_px);
    let (golden_size, frame_size) = (size(golden), size(frame));
    if golden_size != frame_size {
        return Ok(Similarity {
            ssim: None,
            reason: format!(
                "the frame is {frame_size}, the golden {golden_size}: a different picture"
            ),
            golden_size,
            frame_size,
            pass: false,
        });
    }
    let to_image = |i: &RgbImage| {
        image_compare::prelude::RgbImage::from_raw(i.width_px, i.height_px, i.rgb.clone())
            .ok_or_else(|| GoldenError::Compare("pixel data does not match the size".into()))
    };
    let score = image_compare::rgb_similarity_structure(
        &image_compare::Algorithm::MSSIMSimple,
        &to_image(golden)?,
        &to_image(frame)?,
    )
    .map_err(|e| GoldenError::Compare(e.to_string()))?
    .score;
    let pass = score >= threshold;
    Ok(Similarity {
        ssim: Some(score),
        reason: format!(
            "SSIM {score:.4} {} the threshold {threshold}",
            if pass { "reaches" } else { "is below" }
        ),
        golden_size,
        frame_size,
        pass,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(width: u32, height: u32, color: png::ColorType, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = png::Encoder::new(&mut out, width, height);
        e.set_color(color);
        e.set_depth(png::BitDepth::Eight);
        let mut w = e.write_header().expect("header");
        w.write_image_data(data).expect("data");
        drop(w);
        out
    }

    /// A 32×32 pattern with structure (a gradient and a square), so SSIM has something
    /// to compare.
    fn pattern(shift: u8) -> Vec<u8> {
        let mut rgb = Vec::new();
        for y in 0..32u8 {
            for x in 0..32u8 {
                let inside = (8..24).contains(&x) && (8..24).contains(&y);
                let v = if inside { 220 } else { x * 4 + y * 2 };
                rgb.extend_from_slice(&[v.wrapping_add(shift), v, 255 - v]);
            }
        }
        rgb
    }

    /// A PNG of 102 bytes whose header claims 8,201 × 536,870,921 pixels (found by the
    /// `golden` fuzz target, its checksums made right): refused by its size, where allocating
    /// its buffer aborted the process.
    #[test]
    fn a_png_claiming_a_huge_size_is_refused_before_decoding() {
        let bytes = [
            0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
            0x44, 0x52, 0x00, 0x00, 0x20, 0x09, 0x20, 0x00, 0x00, 0x09, 0x08, 0x02, 0x00, 0x00,
            0x00, 0x6b, 0x9e, 0x9c, 0x33, 0x00, 0x00, 0x00, 0x29, 0x49, 0x44, 0x41, 0x54, 0x78,
            0x9c, 0x63, 0x60, 0x50, 0xf5, 0xca, 0x9f, 0xb2, 0xf3, 0x1e, 0x77, 0xb3, 0x86, 0x6f,
            0xd1, 0xf4, 0x3d, 0x0f, 0xd9, 0xb4, 0x03, 0x4a, 0x67, 0xed, 0x7f, 0xc2, 0xa9, 0x17,
            0x5c, 0x31, 0xf7, 0x10, 0xc3, 0x30, 0x97, 0x03, 0x00, 0x87, 0xa5, 0x69, 0xf6, 0xf7,
            0x89, 0x50, 0x68, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x39, 0x78, 0x33, 0x4e, 0x44,
            0xae, 0x42, 0x60, 0x82,
        ];
        let e = decode_png(&bytes).expect_err("too large");
        let message = e.to_string();
        assert!(
            message.contains("8201x536870921") && message.contains("too large"),
            "{message}"
        );
        // A header that claims more than it holds, at a size that is allowed, is truncated.
        let mut small = encode(32, 32, png::ColorType::Rgb, &pattern(0));
        small.truncate(small.len() / 2);
        assert!(decode_png(&small).is_err());
    }

    /// A PNG chunk: length, type, data, CRC-32 of type and data.
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in kind.iter().chain(data) {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&(!crc).to_be_bytes());
    }

    /// A 4×4 palette image with this palette and transparency (its pixels index 0).
    fn indexed(palette: &[u8], trns: Option<&[u8]>) -> Vec<u8> {
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        chunk(&mut out, b"IHDR", &[0, 0, 0, 4, 0, 0, 0, 4, 8, 3, 0, 0, 0]);
        chunk(&mut out, b"PLTE", palette);
        if let Some(trns) = trns {
            chunk(&mut out, b"tRNS", trns);
        }
        // Four rows of filter 0 and four zero bytes, stored (deflate without compression).
        let raw = [0u8; 20];
        let mut zlib = vec![0x78, 0x01, 1, 20, 0, !20, 0xFF];
        zlib.extend_from_slice(&raw);
        // Their Adler-32: a = 1 + the bytes' sum = 1, b = the sum of a after each byte = 20.
        zlib.extend_from_slice(&((20u32 << 16) | 1).to_be_bytes());
        chunk(&mut out, b"IDAT", &zlib);
        chunk(&mut out, b"IEND", &[]);
        out
    }

    /// A `w`×`h` RGB image of these pixels, its zlib stream stored (no compression), so a
    /// byte of it is a byte of the picture; with `flip`, that pixel byte is changed after its
    /// Adler-32 was computed, and the chunk's CRC is computed over the changed bytes.
    fn stored_rgb(w: u32, h: u32, rgb: &[u8], flip: Option<usize>) -> Vec<u8> {
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&w.to_be_bytes());
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        chunk(&mut out, b"IHDR", &ihdr);
        let row = w as usize * 3;
        let mut raw = Vec::new();
        for line in rgb.chunks_exact(row) {
            raw.push(0); // filter: none
            raw.extend_from_slice(line);
        }
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in &raw {
            a = (a + u32::from(byte)) % 65521;
            b = (b + a) % 65521;
        }
        if let Some(at) = flip {
            let at = 1 + at / row * (row + 1) + at % row;
            raw[at] ^= 0xFF;
        }
        let len = raw.len() as u16;
        let mut zlib = vec![0x78, 0x01, 1];
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(&raw);
        zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
        chunk(&mut out, b"IDAT", &zlib);
        chunk(&mut out, b"IEND", &[]);
        out
    }

    /// A byte flipped inside `IDAT` with the chunk's CRC made right: the zlib stream's
    /// Adler-32 no longer holds. The `png` crate skips that checksum by default, and the
    /// flipped picture decoded (and compared); it is refused as a PNG that is not readable.
    #[test]
    fn a_png_whose_image_data_fails_its_adler32_is_refused() {
        let white = vec![255u8; 4 * 4 * 3];
        let good = decode_png(&stored_rgb(4, 4, &white, None)).expect("valid");
        assert_eq!(good.rgb, white);
        for at in [0, 17, white.len() - 1] {
            let e = decode_png(&stored_rgb(4, 4, &white, Some(at))).expect_err("corrupt");
            assert!(matches!(e, GoldenError::Decode(_)), "{e}");
        }
        // The same from a real encoder's (compressed) stream: the checksum's own bytes changed.
        let mut png = encode(32, 32, png::ColorType::Rgb, &pattern(0));
        let idat = png.windows(4).position(|w| w == b"IDAT").expect("IDAT");
        let len = u32::from_be_bytes(png[idat - 4..idat].try_into().expect("4 bytes")) as usize;
        let last = idat + 4 + len - 1; // the Adler-32's last byte
        png[last] ^= 0x01;
        let mut fixed = png[..idat - 4].to_vec();
        chunk(&mut fixed, b"IDAT", &png[idat + 4..idat + 4 + len]);
        fixed.extend_from_slice(&png[idat + 4 + len + 4..]);
        assert!(decode_png(&fixed).is_err(), "a wrong Adler-32 decoded");
    }

    /// A palette of 49 bytes (16 colours and a byte): `png` panicked expanding it (found by
    /// the `golden` fuzz target); it is refused before decoding, and a well-formed palette
    /// image (with transparency) still decodes.
    #[test]
    fn a_palette_the_decoder_would_panic_on_is_refused() {
        let palette: Vec<u8> = (0..49).collect();
        let e = decode_png(&indexed(&palette, None)).expect_err("49 bytes");
        assert!(e.to_string().contains("palette of 49 bytes"), "{e}");
        let image = decode_png(&indexed(&[9, 8, 7, 1, 2, 3], Some(&[0, 0]))).expect("valid");
        assert_eq!(image.rgb[..3], [9, 8, 7]);
    }

    #[test]
    fn the_same_image_passes_and_a_changed_one_fails() {
        let golden = decode_png(&encode(32, 32, png::ColorType::Rgb, &pattern(0))).expect("png");
        assert_eq!((golden.width_px, golden.height_px), (32, 32));
        let same = compare(&golden, &golden, DEFAULT_THRESHOLD).expect("compare");
        assert!(same.pass, "{same:?}");
        assert!((same.ssim.expect("score") - 1.0).abs() < 1e-9);

        let mut changed = golden.clone();
        // Blank the square: a structural change.
        for y in 8..24 {
            for x in 8..24 {
                let i = (y * 32 + x) * 3;
                changed.rgb[i..i + 3].copy_from_slice(&[0, 0, 0]);
            }
        }
        let r = compare(&golden, &changed, DEFAULT_THRESHOLD).expect("compare");
        assert!(!r.pass, "{r:?}");
        assert!(r.ssim.expect("score") < 0.9, "{r:?}");
    }

    #[test]
    fn other_sizes_fail_without_a_score_and_grey_expands() {
        let golden = decode_png(&encode(32, 32, png::ColorType::Rgb, &pattern(0))).expect("png");
        let grey = decode_png(&encode(16, 8, png::ColorType::Grayscale, &[7u8; 128])).expect("png");
        assert_eq!(&grey.rgb[..3], &[7, 7, 7]);
        let r = compare(&golden, &grey, DEFAULT_THRESHOLD).expect("compare");
        assert!(!r.pass && r.ssim.is_none(), "{r:?}");
        assert!(r.reason.contains("16x8"), "{r:?}");
        let rgba = decode_png(&encode(
            2,
            1,
            png::ColorType::Rgba,
            &[1, 2, 3, 4, 5, 6, 7, 8],
        ))
        .expect("png");
        assert_eq!(rgba.rgb, [1, 2, 3, 5, 6, 7]);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(matches!(
            decode_png(b"not a png"),
            Err(GoldenError::Decode(_))
        ));
        assert!(decode_png(&[]).is_err());
    }
}
