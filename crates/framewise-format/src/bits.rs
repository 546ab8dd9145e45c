//! Bit-level coding for CPU lanes: an MSB-first bit stream and adaptive Golomb–Rice codes.
//!
//! A context tracks the running mean of the values coded with it (JPEG-LS style: a sum
//! `a`, saturating at `u64::MAX`, and a count `n`, halved together when `n` reaches
//! [`RESET`]); the Rice parameter is
//! the smallest `k` with `n · 2^k ≥ a`. A value `v` is coded as `q = v >> k` one-bits, a
//! zero-bit, then the low `k` bits of `v`; when `q ≥` [`UNARY_LIMIT`] it is escaped as
//! [`UNARY_LIMIT`] one-bits, a 7-bit bit length `L`, then `v`'s `L` bits. docs/FORMAT.md
//! specifies this normatively.

use crate::error::DecodeError;

/// Count at which a context's sum and count are halved.
pub const RESET: u32 = 64;
/// Quotients at or above this are escaped.
pub const UNARY_LIMIT: u64 = 24;

/// An adaptive Rice context.
#[derive(Clone, Copy, Debug)]
pub struct RiceContext {
    /// Running sum of coded values, saturating at `u64::MAX` (then halved like any sum).
    a: u64,
    n: u32,
}

impl RiceContext {
    /// A context whose first Rice parameter is the bit length of `initial_mean - 1`.
    pub const fn new(initial_mean: u64) -> Self {
        Self {
            a: initial_mean,
            n: 1,
        }
    }

    /// The current Rice parameter: the smallest `k ≤ 63` with `n · 2^k ≥ a`.
    #[inline]
    pub fn k(&self) -> u32 {
        let n = u64::from(self.n);
        if self.a <= n {
            return 0;
        }
        // n << (bitlen(a) - bitlen(n)) has a's bit length: it is either ≥ a (and one less
        // would be shorter than a), or one more shift is needed. No division.
        let mut k = n.leading_zeros() - self.a.leading_zeros();
        if (n << k) < self.a {
            k += 1;
        }
        k.min(63)
    }

    #[inline]
    fn update(&mut self, value: u64) {
        self.a = self.a.saturating_add(value);
        self.n += 1;
        if self.n >= RESET {
            self.a >>= 1;
            self.n >>= 1;
        }
    }
}

/// Writes bits MSB-first into a byte vector; the last byte is zero-padded by [`finish`].
///
/// [`finish`]: BitWriter::finish
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    nbits: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self {
            out,
            acc: 0,
            nbits: 0,
        }
    }

    /// Writes the low `n` bits of `value`, most significant first.
    #[inline]
    pub fn put(&mut self, value: u64, n: u32) {
        if n > 56 {
            self.put(value >> 32, n - 32);
            self.put(value & 0xffff_ffff, 32);
            return;
        }
        if n == 0 {
            return;
        }
        let masked = value & ((1u64 << n) - 1);
        self.acc = (self.acc << n) | masked;
        self.nbits += n;
        while self.nbits >= 8 {
            self.nbits -= 8;
            self.out.push((self.acc >> self.nbits) as u8);
        }
        self.acc &= (1u64 << self.nbits) - 1;
    }

    /// Writes `count` one-bits.
    #[inline]
    fn ones(&mut self, mut count: u64) {
        while count > 0 {
            let chunk = count.min(32) as u32;
            self.put((1u64 << chunk) - 1, chunk);
            count -= u64::from(chunk);
        }
    }

    /// Codes `value` with the context and updates it.
    #[inline]
    pub fn rice(&mut self, ctx: &mut RiceContext, value: u64) {
        let k = ctx.k();
        let q = value >> k;
        if q < UNARY_LIMIT {
            self.ones(q);
            self.put(0, 1);
            self.put(value, k);
        } else {
            self.ones(UNARY_LIMIT);
            let len = 64 - value.leading_zeros();
            self.put(u64::from(len), 7);
            self.put(value, len);
        }
        ctx.update(value);
    }

    /// Pads the last byte with zero bits.
    pub fn finish(mut self) {
        if self.nbits > 0 {
            let pad = 8 - self.nbits;
            self.put(0, pad);
        }
    }
}

/// Reads bits MSB-first through a 64-bit cache; every read is bounds-checked.
pub struct BitReader<'a> {
    bytes: &'a [u8],
    /// Next byte to load into the cache.
    pos: usize,
    /// Unread bits, left-aligned; bits below `avail` are zero.
    cache: u64,
    avail: u32,
}

impl<'a> BitReader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            cache: 0,
            avail: 0,
        }
    }

    fn end(&self, needed: u32) -> DecodeError {
        DecodeError::UnexpectedEnd {
            offset: self.pos,
            needed: (needed as usize).div_ceil(8).max(1),
            len: self.bytes.len(),
        }
    }

    /// Bits not yet read.
    pub fn remaining_bits(&self) -> usize {
        (self.bytes.len() - self.pos) * 8 + self.avail as usize
    }

    #[inline(always)]
    fn refill(&mut self) {
        if self.avail <= 56 {
            if let Some(chunk) = self.bytes.get(self.pos..self.pos + 8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(chunk);
                let word = u64::from_be_bytes(word);
                let take = (64 - self.avail) / 8; // whole bytes that fit
                let new_avail = self.avail + take * 8;
                let mut bits = word >> self.avail;
                if new_avail < 64 {
                    bits &= !(u64::MAX >> new_avail); // keep the invariant: unread bits only
                }
                self.cache |= bits;
                self.avail = new_avail;
                self.pos += take as usize;
                return;
            }
        }
        while self.avail <= 56 {
            let Some(&byte) = self.bytes.get(self.pos) else {
                break;
            };
            self.cache |= u64::from(byte) << (56 - self.avail);
            self.avail += 8;
            self.pos += 1;
        }
    }

    #[inline]
    fn consume(&mut self, n: u32) {
        // n <= avail <= 64
        self.cache = if n >= 64 { 0 } else { self.cache << n };
        self.avail -= n;
    }

    /// Reads `n ≤ 64` bits as an unsigned value.
    #[inline]
    pub fn get(&mut self, n: u32) -> Result<u64, DecodeError> {
        if n == 0 {
            return Ok(0);
        }
        if n > 56 {
            let high = self.get(n - 32)?;
            let low = self.get(32)?;
            return Ok((high << 32) | low);
        }
        if self.avail < n {
            self.refill();
            if self.avail < n {
                return Err(self.end(n));
            }
        }
        let value = self.cache >> (64 - n);
        self.consume(n);
        Ok(value)
    }

    /// Reads one Rice-coded value with the context and updates it.
    #[inline(always)]
    pub fn rice(&mut self, ctx: &mut RiceContext) -> Result<u64, DecodeError> {
        let k = ctx.k();
        self.refill();
        let ones = self.cache.leading_ones().min(self.avail);
        let value = if u64::from(ones) >= UNARY_LIMIT {
            self.consume(UNARY_LIMIT as u32);
            let len = self.get(7)? as u32;
            if len > 64 {
                return Err(DecodeError::InvalidValue {
                    field: "escaped bit length",
                    value: u64::from(len),
                    offset: self.pos,
                });
            }
            self.get(len)?
        } else {
            if ones == self.avail {
                // Every remaining bit is a one: the terminating zero is missing.
                return Err(self.end(ones + 1));
            }
            self.consume(ones + 1);
            let low = self.get(k)?;
            (u64::from(ones) << k) | low
        };
        ctx.update(value);
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rice_round_trips_mixed_magnitudes() {
        let values: Vec<u64> = vec![0, 1, 5, 1000, 3, 0, 1 << 40, u64::MAX, 7, 250_000, 12, 12];
        let mut out = Vec::new();
        let mut w = BitWriter::new(&mut out);
        let mut ctx = RiceContext::new(16);
        for &v in &values {
            w.rice(&mut ctx, v);
        }
        w.finish();
        let mut r = BitReader::new(&out);
        let mut ctx = RiceContext::new(16);
        for &v in &values {
            assert_eq!(r.rice(&mut ctx).unwrap(), v);
        }
        assert!(r.remaining_bits() < 8);
    }

    #[test]
    fn k_is_smallest_with_n_shifted_at_least_a() {
        for (a, n) in [
            (1u64, 1u32),
            (2, 1),
            (3, 1),
            (4, 1),
            (5, 1),
            (100, 7),
            (1 << 62, 3),
            (u64::MAX, 1),
            (u64::MAX, 63),
            (12345, 33),
        ] {
            let ctx = RiceContext { a, n };
            let k = ctx.k();
            let brute = (0..=63u32)
                .find(|&k| (u128::from(n) << k) >= u128::from(a))
                .unwrap_or(63);
            assert_eq!(k, brute, "a={a} n={n}");
        }
    }

    #[test]
    fn reading_past_the_end_fails() {
        let mut r = BitReader::new(&[0xff]);
        let mut ctx = RiceContext::new(1);
        assert!(r.rice(&mut ctx).is_err());
    }
}
