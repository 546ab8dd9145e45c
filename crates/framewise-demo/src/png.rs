//! A minimal PNG encoder: 8-bit RGB, filter 0, zlib with stored (uncompressed) deflate
//! blocks. Enough for a golden frame that any image tool opens, with no image dependency.

use std::io::{self, Write};

/// Encodes `pixels` (0xAARRGGBB, row-major, `width × height`) as a PNG.
pub fn encode_rgb(pixels: &[u32], width: u32, height: u32) -> Vec<u8> {
    let (w, h) = (width as usize, height as usize);
    // Scanlines: a filter byte (0 = none) then RGB.
    let mut raw = Vec::with_capacity(h * (1 + 3 * w));
    for y in 0..h {
        raw.push(0);
        for x in 0..w {
            let p = pixels.get(y * w + x).copied().unwrap_or(0);
            raw.extend_from_slice(&[(p >> 16) as u8, (p >> 8) as u8, p as u8]);
        }
    }
    let mut out = Vec::with_capacity(raw.len() + raw.len() / 65535 * 5 + 64);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8 bits, RGB, deflate, filter 0, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// Writes the PNG of `pixels` to `writer`.
pub fn write_rgb(
    writer: &mut impl Write,
    pixels: &[u32],
    width: u32,
    height: u32,
) -> io::Result<()> {
    writer.write_all(&encode_rgb(pixels, width, height))
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.finalize().to_be_bytes());
}

/// A zlib stream of stored deflate blocks (at most 65 535 bytes each) with its Adler-32.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 65535 * 5 + 11);
    out.extend_from_slice(&[0x78, 0x01]); // deflate, 32 KiB window, no dictionary, check bits
    let mut blocks = data.chunks(65535).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let last = u8::from(blocks.peek().is_none());
        let len = block.len() as u16;
        out.push(last);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_structure_is_valid() {
        let pixels: Vec<u32> = (0..300 * 250).map(|i| 0xff00_0000 | i as u32).collect();
        let png = encode_rgb(&pixels, 300, 250);
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(
            u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
            300
        );
        // IHDR's CRC checks.
        let crc = crc32fast::hash(&png[12..29]);
        assert_eq!(crc.to_be_bytes(), png[29..33]);
        // IDAT holds header, blocks and Adler: 2 + raw + 5 per block + 4.
        let raw: usize = 250 * (1 + 300 * 3);
        let idat_len = u32::from_be_bytes([png[33], png[34], png[35], png[36]]) as usize;
        assert_eq!(idat_len, 2 + raw + 5 * raw.div_ceil(65535) + 4);
        assert!(png.ends_with(&[0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]));
        // zlib header check bits.
        assert_eq!((0x78u16 * 256 + 0x01) % 31, 0);
    }
}
