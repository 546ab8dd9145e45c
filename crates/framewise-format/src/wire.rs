//! Byte-level primitives: LEB128 varints, zigzag, strings, and a bounds-checked cursor.

use crate::error::DecodeError;

/// Appends `value` as an unsigned LEB128 varint (1–10 bytes).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// `value` as an unsigned LEB128 varint in a buffer, and its length (1–10 bytes): the bytes
/// [`put_varint`] appends.
#[inline]
pub fn varint_bytes(mut value: u64) -> ([u8; 10], usize) {
    let mut bytes = [0u8; 10];
    let mut len = 0;
    while value >= 0x80 {
        bytes[len] = (value as u8) | 0x80;
        value >>= 7;
        len += 1;
    }
    bytes[len] = value as u8;
    (bytes, len + 1)
}

/// Zigzag-maps a signed value so small magnitudes stay small.
#[inline]
pub fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Appends a signed value as a zigzag varint.
#[inline]
pub fn put_svarint(out: &mut Vec<u8>, value: i64) {
    put_varint(out, zigzag(value));
}

/// Appends a length-prefixed UTF-8 string.
pub fn put_str(out: &mut Vec<u8>, value: &str) {
    put_varint(out, value.len() as u64);
    out.extend_from_slice(value.as_bytes());
}

/// Appends an optional symbol id as `id + 1`, 0 for none.
#[inline]
pub fn put_opt_sym(out: &mut Vec<u8>, value: Option<u32>) {
    put_varint(out, value.map_or(0, |v| u64::from(v) + 1));
}

/// A cursor over a payload; every read is bounds-checked.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// Current offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Fails unless every byte was consumed.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(DecodeError::TrailingBytes { extra }),
        }
    }

    /// Reads `n` raw bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or(DecodeError::UnexpectedEnd {
                offset: self.pos,
                needed: n,
                len: self.bytes.len(),
            })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.bytes(1)?[0])
    }

    /// Reads a little-endian u64.
    pub fn u64_le(&mut self) -> Result<u64, DecodeError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// Reads a little-endian f64.
    pub fn f64_le(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64_le()?))
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes that fits 64 bits.
    #[inline(always)]
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        // One byte: most symbol ids, counts, flags and small deltas.
        if let Some(&byte) = self.bytes.get(self.pos) {
            if byte < 0x80 {
                self.pos += 1;
                return Ok(u64::from(byte));
            }
        }
        self.varint_long()
    }

    /// A varint of two or more bytes (or none left): up to 8 bytes from one load when 8
    /// remain, byte by byte otherwise and for the errors.
    #[inline(always)]
    fn varint_long(&mut self) -> Result<u64, DecodeError> {
        if let Some(chunk) = self
            .bytes
            .get(self.pos..self.pos.wrapping_add(8))
            .and_then(<[u8]>::first_chunk::<8>)
        {
            let word = u64::from_le_bytes(*chunk);
            // The first byte without its continuation bit ends the varint.
            let stops = !word & 0x8080_8080_8080_8080;
            if stops != 0 {
                let len = stops.trailing_zeros() / 8 + 1; // bytes, 1..=8
                                                          // The varint's bytes without their continuation bits, then their 7-bit
                                                          // groups packed together: pairs into 14 bits, quads into 28, all into 56.
                let mut x = word & 0x7f7f_7f7f_7f7f_7f7f & (u64::MAX >> (64 - 8 * len));
                x = ((x & 0x7f00_7f00_7f00_7f00) >> 1) | (x & 0x007f_007f_007f_007f);
                x = ((x & 0x3fff_0000_3fff_0000) >> 2) | (x & 0x0000_3fff_0000_3fff);
                x = ((x & 0x0fff_ffff_0000_0000) >> 4) | (x & 0x0000_0000_0fff_ffff);
                self.pos += len as usize;
                return Ok(x);
            }
        }
        self.varint_bytewise()
    }

    #[cold]
    #[inline(never)]
    fn varint_bytewise(&mut self) -> Result<u64, DecodeError> {
        let start = self.pos;
        let mut value: u64 = 0;
        for i in 0..10u32 {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(DecodeError::UnexpectedEnd {
                    offset: start,
                    needed: 1,
                    len: self.bytes.len(),
                });
            };
            self.pos += 1;
            let low = u64::from(byte & 0x7f);
            if i == 9 && low > 1 {
                return Err(DecodeError::BadVarint { offset: start });
            }
            value |= low << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::BadVarint { offset: start })
    }

    /// Reads a varint that must fit a u32.
    #[inline]
    pub fn varint_u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        let offset = self.pos;
        let v = self.varint()?;
        u32::try_from(v).map_err(|_| DecodeError::InvalidValue {
            field,
            value: v,
            offset,
        })
    }

    /// Reads a zigzag varint.
    #[inline(always)]
    pub fn svarint(&mut self) -> Result<i64, DecodeError> {
        Ok(unzigzag(self.varint()?))
    }

    /// Reads a count of elements each at least `min_bytes_each` long, refusing counts the
    /// remaining bytes cannot hold (so nothing is allocated past what the file justifies).
    pub fn count(&mut self, min_bytes_each: usize) -> Result<usize, DecodeError> {
        let offset = self.pos;
        let count = self.varint()?;
        let remaining = self.remaining();
        let fits = (count as u128) * (min_bytes_each.max(1) as u128) <= remaining as u128;
        if !fits {
            return Err(DecodeError::ImplausibleCount {
                count,
                offset,
                remaining,
            });
        }
        Ok(count as usize)
    }

    /// Reads a length-prefixed UTF-8 string.
    pub fn string(&mut self) -> Result<String, DecodeError> {
        let offset = self.pos;
        let len = self.count(1)?;
        let bytes = self.bytes(len)?;
        std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|_| DecodeError::BadUtf8 { offset })
    }

    /// Reads an optional symbol id written by [`put_opt_sym`].
    pub fn opt_sym(&mut self) -> Result<Option<u32>, DecodeError> {
        let offset = self.pos;
        match self.varint()? {
            0 => Ok(None),
            v => u32::try_from(v - 1)
                .map(Some)
                .map_err(|_| DecodeError::InvalidValue {
                    field: "symbol id",
                    value: v,
                    offset,
                }),
        }
    }

    /// Reads a byte that must be 0 or 1.
    pub fn bool(&mut self, field: &'static str) -> Result<bool, DecodeError> {
        let offset = self.pos;
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(DecodeError::InvalidValue {
                field,
                value: u64::from(v),
                offset,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trips_edges() {
        for v in [
            0,
            1,
            127,
            128,
            16383,
            16384,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut c = Cursor::new(&out);
            assert_eq!(c.varint().unwrap(), v);
            assert_eq!(c.remaining(), 0);
        }
    }

    #[test]
    fn fast_varint_paths_match_the_bytewise_reader() {
        // xorshift64*; bytes with continuation bits set most of the time, so that every
        // length from 1 to past 10 occurs, at every distance from the end of the buffer.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        for _ in 0..200_000 {
            let len = (next() % 14) as usize;
            let more = next() % 5;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let b = next() as u8;
                    if next() % 5 < more {
                        b | 0x80
                    } else {
                        b & 0x7f
                    }
                })
                .collect();
            let mut fast = Cursor::new(&bytes);
            let mut slow = Cursor::new(&bytes);
            loop {
                let (a, b) = (fast.varint(), slow.varint_bytewise());
                assert_eq!(a, b, "{bytes:02x?}");
                assert_eq!(fast.pos(), slow.pos());
                if a.is_err() {
                    break;
                }
            }
        }
    }

    #[test]
    fn overlong_varint_is_refused() {
        let bytes = [0xffu8; 11];
        assert!(matches!(
            Cursor::new(&bytes).varint(),
            Err(DecodeError::BadVarint { .. })
        ));
        let mut ten = [0xffu8; 10];
        ten[9] = 0x02; // bit 64 set: overflow
        assert!(matches!(
            Cursor::new(&ten).varint(),
            Err(DecodeError::BadVarint { .. })
        ));
    }

    #[test]
    fn zigzag_round_trips() {
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -64, 63] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn counts_past_the_payload_are_refused() {
        let mut out = Vec::new();
        put_varint(&mut out, 1 << 40);
        assert!(matches!(
            Cursor::new(&out).count(1),
            Err(DecodeError::ImplausibleCount { .. })
        ));
    }
}
