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
    /// Count, in `1..RESET`. A u64 only so that [`RiceContext::k`] needs no widening.
    n: u64,
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
    #[inline(always)]
    pub fn k(&self) -> u32 {
        let n = self.n;
        // The formula of [`k_unclamped`] with a saturating subtraction in place of its
        // `| 1`s: the lane decoder measured 2% more instructions with those (register
        // allocation), the encoder fewer; so the encoder uses
        // [`RiceContext::k_for_encoder`].
        let d = n.leading_zeros().saturating_sub(self.a.leading_zeros());
        (d + u32::from((n << d) < self.a)).min(63)
    }

    /// [`RiceContext::k`] before its clamp at 63, as the lane encoder's hot loop computes it
    /// ([`k_unclamped`]): the smallest `k ≤ 64` with `n · 2^k ≥ a`. The two differ only
    /// when `n = 1` and `a > 2^63`, never for a context made by [`RiceContext::new`] (its
    /// count is 1 only before its first update, its sum then an initial mean); a caller
    /// codes with `k.min(63)` on a path that a parameter of 32 or more takes anyway.
    ///
    /// `LZCNT`: the caller is built for LZCNT (see [`nonzero_count`]).
    #[inline(always)]
    pub(crate) fn k_for_encoder<const LZCNT: bool>(&self) -> u32 {
        let n1 = nonzero_count::<LZCNT>(self.n);
        k_unclamped(self.a, self.n, n1, n1.leading_zeros())
    }

    /// [`RiceContext::update`] when `a + value` cannot overflow (the caller knows it from
    /// the parameter and the quotient it coded with), so that the sum needs no saturation.
    #[inline(always)]
    pub(crate) fn update_unsaturated(&mut self, value: u64) {
        debug_assert!(self.a.checked_add(value).is_some());
        self.a = self.a.wrapping_add(value);
        self.tally();
    }

    #[inline(always)]
    pub(crate) fn update(&mut self, value: u64) {
        // (A branchless halving measured slower than this rarely taken branch.)
        self.a = self.a.saturating_add(value);
        self.tally();
    }

    /// Counts the value just added to the sum, halving both at [`RESET`].
    #[inline(always)]
    fn tally(&mut self) {
        self.n += 1;
        if self.n >= u64::from(RESET) {
            self.a >>= 1;
            self.n >>= 1;
        }
    }
}

/// A count `n ≥ 1` as [`k_unclamped`]'s `n1`, whose bit length is `n`'s: `n | 1` for a
/// caller built without LZCNT, so that `leading_zeros` knows its operand is not zero and
/// skips the fix-up that `bsr` needs for zero (`bsr` and an `xor`, no `cmov`); `n` itself for
/// a caller built with LZCNT, where `leading_zeros` is one `lzcnt`, defined at zero, and the
/// `| 1` would be one more instruction for each parameter. A context's count is never 0 (it
/// starts at 1, grows by 1, and halves only from [`RESET`]), so both give the same parameter
/// (test `the_unclamped_parameter_clamps_to_the_parameter` checks both).
#[inline(always)]
fn nonzero_count<const LZCNT: bool>(n: u64) -> u64 {
    if LZCNT {
        n
    } else {
        n | 1
    }
}

/// The smallest `k ≤ 64` with `n · 2^k ≥ a`, where `n ≥ 1`: [`RiceContext::k`] before its
/// clamp at 63 (64 stands for 63; test `the_unclamped_parameter_clamps_to_the_parameter`).
/// `n1` is `n` or `n | 1` ([`nonzero_count`]) and `n_lz` its leading zero count (two contexts
/// sharing a count compute them once).
///
/// `d = bitlen(a) - bitlen(n)`, or 0 when `a` is the shorter: then `n << d` has `a`'s bit
/// length and is either ≥ `a` (one shift less would be shorter than `a`) or one shift
/// short; when `a ≤ n`, `k = 0`. No division. `a | n1` has the bit length of the longer
/// of `a` and `n` (`n1` has `n`'s) and is never zero, so `d` needs neither a saturating
/// subtraction nor a fix-up of the instruction undefined at zero, and the clamp at 63 is
/// left to the callers' long path (parameters of 32 and more take it).
#[inline(always)]
fn k_unclamped(a: u64, n: u64, n1: u64, n_lz: u32) -> u32 {
    let d = n_lz - (a | n1).leading_zeros();
    d + u32::from((n << d) < a)
}

/// Two adaptive Rice contexts that are always updated together, so that their counts are
/// always equal: they share it. Coding with a pair gives the bits that two
/// [`RiceContext`]s give, with one count to keep (the lane encoder's gap and scope
/// contexts: every begin codes both).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RicePair {
    a: [u64; 2],
    n: u64,
}

impl RicePair {
    /// Two contexts as [`RiceContext::new`] makes them.
    pub(crate) const fn new(initial_means: [u64; 2]) -> Self {
        Self {
            a: initial_means,
            n: 1,
        }
    }

    /// Both contexts' Rice parameters before their clamp at 63, as
    /// [`RiceContext::k_for_encoder`] gives them (`LZCNT` likewise).
    #[inline(always)]
    pub(crate) fn k<const LZCNT: bool>(&self) -> (u32, u32) {
        let n1 = nonzero_count::<LZCNT>(self.n);
        let n_lz = n1.leading_zeros();
        (
            k_unclamped(self.a[0], self.n, n1, n_lz),
            k_unclamped(self.a[1], self.n, n1, n_lz),
        )
    }

    /// [`RicePair::update`] when neither sum can overflow (see
    /// [`RiceContext::update_unsaturated`]).
    #[inline(always)]
    pub(crate) fn update_unsaturated(&mut self, first: u64, second: u64) {
        debug_assert!(self.a[0].checked_add(first).is_some());
        debug_assert!(self.a[1].checked_add(second).is_some());
        let [a0, a1] = self.a;
        self.a = [a0.wrapping_add(first), a1.wrapping_add(second)];
        self.tally();
    }

    /// Updates both contexts, as [`RiceContext`]'s update of each would.
    #[inline(always)]
    pub(crate) fn update(&mut self, first: u64, second: u64) {
        let [a0, a1] = self.a;
        self.a = [a0.saturating_add(first), a1.saturating_add(second)];
        self.tally();
    }

    /// Counts the values just added to the sums, halving all three at [`RESET`].
    #[inline(always)]
    fn tally(&mut self) {
        self.n += 1;
        if self.n >= u64::from(RESET) {
            self.a = [self.a[0] >> 1, self.a[1] >> 1];
            self.n >>= 1;
        }
    }
}

/// Writes bits MSB-first into a byte vector; the last byte is zero-padded by [`finish`].
///
/// Pending bits sit left-aligned in a 64-bit accumulator, which is stored (8 bytes,
/// big-endian) only once it is full: a write that fits beside the pending bits is a shift
/// and an OR, with no memory touched; the one that fills the accumulator stores it whole,
/// in one unaligned store, and keeps the bits that did not fit. The vector is grown ahead
/// of the position in steps (zero-filled, never read) and cut back to the bytes written
/// when the writer is finished or dropped. While the writer lives it holds the vector
/// itself (the caller's is left empty) and gives it back then.
///
/// [`finish`]: BitWriter::finish
pub struct BitWriter<'a> {
    /// Where the bytes go back when the writer is finished or dropped.
    out: &'a mut Vec<u8>,
    /// `out`'s vector, moved here while the writer lives: a local vector whose address no
    /// call ever sees, so that its pointer and length stay in registers while bytes are
    /// stored through the pointer (through `&mut Vec` they would be reloaded after each).
    buf: Vec<u8>,
    state: WriteState,
}

/// A bit writer's position and pending bits, apart from its vector: out-of-line paths take
/// and return it by value, so that a caller's writer never has its address taken and can
/// live in registers.
///
/// A hot loop uses it directly, with the vector in a separate local ([`WriteState::new`],
/// [`WriteState::finish`]): a [`BitWriter`] has a `Drop`, which a panic's unwinding path
/// calls with the writer's address, and that keeps all of its fields in memory.
#[derive(Clone, Copy)]
pub(crate) struct WriteState {
    /// Where the accumulator goes when it is full; the vector holds exactly the written
    /// bytes before it.
    pos: usize,
    /// Pending bits, left-aligned; the bits below the top `nbits` are zero.
    acc: u64,
    /// Pending bit count, always `< 64` between calls.
    nbits: u32,
}

impl WriteState {
    /// A state appending to the bytes of `out`.
    pub(crate) fn new(out: &[u8]) -> Self {
        Self {
            pos: out.len(),
            acc: 0,
            nbits: 0,
        }
    }

    /// Pads the last byte with zero bits and cuts `out` back to the bytes written.
    pub(crate) fn finish(self, out: &mut Vec<u8>) {
        self.settle(out, self.nbits.div_ceil(8));
    }

    /// Stores the pending bits and cuts `out` back to the bytes before `pos` and `bytes`
    /// more of them (the zero bits below the pending ones pad the last).
    fn settle(self, out: &mut Vec<u8>, bytes: u32) {
        if bytes > 0 {
            store(out, self.pos, self.acc.to_be_bytes());
        }
        out.truncate(self.pos + bytes as usize);
    }

    /// Appends the `n` bits of `value`, `1 ≤ n ≤ 56`; `value` must be below `2^n`.
    #[inline(always)]
    pub(crate) fn put_small(&mut self, out: &mut Vec<u8>, value: u64, n: u32) {
        debug_assert!((1..=56).contains(&n) && self.nbits < 64 && value >> n == 0);
        let total = self.nbits + n;
        if total < 64 {
            // The shift is in 1..=63.
            self.acc |= value << (64 - total);
            self.nbits = total;
        } else {
            // The accumulator fills: it goes out whole with the top of `value`, and the
            // `spill` bits of `value` left over (0..=55) become the pending ones.
            let spill = total - 64;
            store(out, self.pos, (self.acc | (value >> spill)).to_be_bytes());
            self.pos += 8;
            // value << (64 - spill), and 0 when nothing spills (no shift by 64): `value`
            // is below 2^56, so the first shift loses nothing.
            self.acc = (value << 1) << (63 - spill);
            self.nbits = spill;
        }
    }

    /// Writes the low `n ≤ 64` bits of `value`.
    #[inline]
    fn put(&mut self, out: &mut Vec<u8>, value: u64, n: u32) {
        if n > 56 {
            self.put(out, value >> 32, n - 32);
            self.put_small(out, value & 0xffff_ffff, 32);
        } else if n > 0 {
            self.put_small(out, value & (u64::MAX >> (64 - n)), n);
        }
    }

    /// Codes `value` with Rice parameter `k` (the context is the caller's).
    #[inline(always)]
    pub(crate) fn rice(&mut self, out: &mut Vec<u8>, k: u32, value: u64) {
        if let Some((code, n)) = rice_field(k, value) {
            self.put_small(out, code, n);
        } else {
            let taken = std::mem::take(out);
            (*self, *out) = self.rice_long(taken, k, value);
        }
    }

    /// Escapes, and values whose code is longer than one write.
    #[cold]
    #[inline(never)]
    fn rice_long(mut self, mut out: Vec<u8>, k: u32, value: u64) -> (Self, Vec<u8>) {
        let q = value >> k;
        if q < UNARY_LIMIT {
            self.put_small(&mut out, (2u64 << q) - 2, q as u32 + 1);
            self.put(&mut out, value, k);
        } else {
            let len = 64 - value.leading_zeros();
            // 24 one-bits and the 7-bit length: 31 bits.
            self.put_small(
                &mut out,
                (((1u64 << UNARY_LIMIT) - 1) << 7) | u64::from(len),
                31,
            );
            self.put(&mut out, value, len);
        }
        (self, out)
    }
}

/// The Rice code of `value` with parameter `k` as one field `(bits, length)` when it is at
/// most 56 bits long (nearly always, escapes included), so that a caller can join it to the
/// fields around it into one write; `None` otherwise.
#[inline(always)]
pub(crate) fn rice_field(k: u32, value: u64) -> Option<(u64, u32)> {
    let q = value >> k;
    if q < UNARY_LIMIT && q as u32 + 1 + k <= 56 {
        // `q` one-bits, a zero-bit, then the low `k` bits: ((2^(q+1) - 2) << k) + low, where
        // low = value - (q << k); no mask needed.
        let head = (2u64 << q) - 2 - q;
        return Some(((head << k).wrapping_add(value), q as u32 + 1 + k));
    }
    let len = 64 - value.leading_zeros();
    if q >= UNARY_LIMIT && len <= 25 {
        // An escape: 24 one-bits, the 7-bit length, then the value's `len` bits.
        let head = (((1u64 << UNARY_LIMIT) - 1) << 7) | u64::from(len);
        return Some(((head << len) | value, 31 + len));
    }
    None
}

/// Stores `word` at `out[pos..pos + 8]`, growing `out` first when it is too short.
#[inline(always)]
fn store(out: &mut Vec<u8>, pos: usize, word: [u8; 8]) {
    // (Not `pos..pos + 8`, whose end is checked for overflow too.)
    match out.get_mut(pos..).and_then(<[u8]>::first_chunk_mut::<8>) {
        Some(dst) => *dst = word,
        None => *out = grown_and_stored(std::mem::take(out), pos, word),
    }
}

/// Stores `word` at `out[pos..pos + 8]`, growing `out` first. Out of line (a lane grows
/// its output a few times), and by value, so that the caller's vector never has its
/// address taken.
#[cold]
#[inline(never)]
fn grown_and_stored(mut out: Vec<u8>, pos: usize, word: [u8; 8]) -> Vec<u8> {
    let grown = pos + 8 + (out.len() / 2).clamp(256, 1 << 16);
    out.resize(grown, 0);
    out[pos..pos + 8].copy_from_slice(&word);
    out
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        let buf = std::mem::take(out);
        let pos = buf.len();
        Self {
            out,
            buf,
            state: WriteState {
                pos,
                acc: 0,
                nbits: 0,
            },
        }
    }

    /// Writes the low `n` bits of `value`, most significant first.
    #[inline]
    pub fn put(&mut self, value: u64, n: u32) {
        self.state.put(&mut self.buf, value, n);
    }

    /// Codes `value` with the context and updates it.
    #[inline(always)]
    pub fn rice(&mut self, ctx: &mut RiceContext, value: u64) {
        self.state.rice(&mut self.buf, ctx.k(), value);
        ctx.update(value);
    }

    /// Pads the last byte with zero bits.
    pub fn finish(mut self) {
        // The pending bits, padded, become complete bytes; Drop stores them.
        self.state.nbits = self.state.nbits.next_multiple_of(8);
    }
}

impl Drop for BitWriter<'_> {
    fn drop(&mut self) {
        // Keep the complete bytes written (and the padded last byte once finished), none of
        // the space grown ahead of them, and give the vector back.
        self.state.settle(&mut self.buf, self.state.nbits / 8);
        *self.out = std::mem::take(&mut self.buf);
    }
}

#[cold]
#[inline(never)]
fn end_error(pos: usize, len: usize, needed: u32) -> DecodeError {
    DecodeError::UnexpectedEnd {
        offset: pos,
        needed: (needed as usize).div_ceil(8).max(1),
        len,
    }
}

/// Reads bits MSB-first through a 64-bit cache; every read is bounds-checked.
///
/// The cache is refilled eight bytes at a time while eight bytes remain (one load, no loop),
/// then byte by byte. Bits below `avail` in the cache are either zero or the stream's next
/// bits (a refill may load a byte's bits before it counts them), so a later refill that ORs
/// the same bits in again changes nothing.
#[derive(Clone, Copy)]
pub struct BitReader<'a> {
    /// The bytes not yet counted in `avail` (the refill's one bounds check is on its length).
    rest: &'a [u8],
    /// The stream's length in bytes.
    len: usize,
    /// Unread bits, left-aligned.
    cache: u64,
    /// Unread bits in the cache, `≤ 63`.
    avail: u32,
}

impl<'a> BitReader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            rest: bytes,
            len: bytes.len(),
            cache: 0,
            avail: 0,
        }
    }

    /// The next byte not yet counted in `avail`.
    #[inline(always)]
    fn pos(&self) -> usize {
        self.len - self.rest.len()
    }

    /// The error for a read of `needed` bits past the end. It is only ever raised once every
    /// byte has been loaded, so `pos` is the stream's length.
    #[inline(always)]
    fn end(&self, needed: u32) -> DecodeError {
        end_error(self.pos(), self.len, needed)
    }

    /// Bits not yet read.
    #[inline]
    pub fn remaining_bits(&self) -> usize {
        self.rest.len() * 8 + self.avail as usize
    }

    /// Bits read so far.
    #[inline]
    fn consumed_bits(&self) -> usize {
        self.pos() * 8 - self.avail as usize
    }

    /// Tops the cache up to at least 56 unread bits, or to every bit left.
    #[inline(always)]
    fn refill(&mut self) {
        if let Some(chunk) = self.rest.first_chunk::<8>() {
            // avail ≤ 63, so the shift is in range; the bytes it loads past the last whole
            // one are the stream's own next bits.
            self.cache |= u64::from_be_bytes(*chunk) >> self.avail;
            // Whole bytes that fit: ≤ 7 < 8 ≤ rest.len() (the mask tells the compiler so).
            let take = ((63 - self.avail) >> 3) as usize & 7;
            self.rest = self.rest.get(take..).unwrap_or_default();
            self.avail |= 56;
        } else {
            *self = self.refilled_tail();
        }
    }

    /// The last bytes of the stream, one at a time. Takes and returns the reader by value
    /// (here and in the other out-of-line paths) so that a caller's reader never has its
    /// address taken and can live in registers.
    #[inline(never)]
    fn refilled_tail(mut self) -> Self {
        while self.avail <= 55 {
            let Some((&byte, rest)) = self.rest.split_first() else {
                break;
            };
            self.cache |= u64::from(byte) << (56 - self.avail);
            self.avail += 8;
            self.rest = rest;
        }
        self
    }

    #[inline(always)]
    fn consume(&mut self, n: u32) {
        // n <= avail <= 63
        self.cache <<= n;
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

    /// Tops the cache up before a group of reads: [`BitReader::bit_after_refill`] and
    /// [`BitReader::rice_no_refill`] then read from the cache as long as it holds enough.
    #[inline(always)]
    pub(crate) fn prepare(&mut self) {
        self.refill();
    }

    /// Reads one bit, which must be the first read since [`BitReader::prepare`] (the cache
    /// is then empty only at the end of the stream).
    #[inline(always)]
    pub(crate) fn bit_after_refill(&mut self) -> Result<bool, DecodeError> {
        if self.avail == 0 {
            return Err(self.end(1));
        }
        let value = self.cache >> 63;
        self.consume(1);
        Ok(value == 1)
    }

    /// Reads one Rice-coded value with the context and updates it.
    #[inline(always)]
    pub fn rice(&mut self, ctx: &mut RiceContext) -> Result<u64, DecodeError> {
        self.refill();
        self.rice_no_refill(ctx)
    }

    /// [`BitReader::rice`] from the cache as it is when the whole code is in it (what a
    /// refill would add cannot change a code that is already complete); otherwise it
    /// refills first, out of line.
    #[inline(always)]
    pub(crate) fn rice_no_refill(&mut self, ctx: &mut RiceContext) -> Result<u64, DecodeError> {
        let k = ctx.k();
        // `| 1`: a cache of all ones counts 63, not 64, and takes the slow path all the same.
        let ones = (!self.cache | 1).leading_zeros();
        let used = ones + 1 + k;
        if ones < UNARY_LIMIT as u32 && used <= self.avail {
            // The unary run, its zero-bit and the k low bits are all in the cache.
            // `(c >> 1) >> (63 - k)` is the top k bits of c, and 0 when k = 0.
            let c = self.cache << (ones + 1);
            let low = (c >> 1) >> (63 - k);
            self.cache <<= used;
            self.avail -= used;
            let value = (u64::from(ones) << k) | low;
            ctx.update(value);
            return Ok(value);
        }
        let (r, value) = self.rice_refilled(ctx, k);
        *self = r;
        value
    }

    /// Refills, then reads as [`BitReader::rice`] does.
    #[inline(never)]
    fn rice_refilled(mut self, ctx: &mut RiceContext, k: u32) -> (Self, Result<u64, DecodeError>) {
        self.refill();
        let ones = (!self.cache | 1).leading_zeros();
        let used = ones + 1 + k;
        if ones < UNARY_LIMIT as u32 && used <= self.avail {
            let c = self.cache << (ones + 1);
            let low = (c >> 1) >> (63 - k);
            self.cache <<= used;
            self.avail -= used;
            let value = (u64::from(ones) << k) | low;
            ctx.update(value);
            return (self, Ok(value));
        }
        // Escapes, which real lanes have (a value far above its context's mean): 24 ones,
        // the 7-bit length L, then L bits, here when L ≤ 32 and they are all in the cache
        // (an escaped value is taken as given, even 0).
        if ones >= UNARY_LIMIT as u32 && self.avail >= 31 {
            let len = ((self.cache << UNARY_LIMIT) >> 57) as u32;
            if len <= 32 && 31 + len <= self.avail {
                // The top `len` bits after the length, and 0 when len = 0.
                let value = ((self.cache << 31) >> 1) >> (63 - len);
                self.cache <<= 31 + len;
                self.avail -= 31 + len;
                ctx.update(value);
                return (self, Ok(value));
            }
        }
        let value = self.rice_slow_inner(ctx, k);
        (self, value)
    }

    /// Escapes, values longer than the cache holds, and the end of the stream, just after a
    /// refill.
    #[cold]
    fn rice_slow_inner(&mut self, ctx: &mut RiceContext, k: u32) -> Result<u64, DecodeError> {
        // A reader that refilled to 64 bits whenever it could would have its next byte at
        // this offset when it read the escape's length; the error names it, as it always has.
        let len_offset = (self.consumed_bits() / 8 + 8).min(self.len);
        let ones = self.cache.leading_ones().min(self.avail);
        let value = if u64::from(ones) >= UNARY_LIMIT {
            self.consume(UNARY_LIMIT as u32);
            let len = self.get(7)? as u32;
            if len > 64 {
                return Err(DecodeError::InvalidValue {
                    field: "escaped bit length",
                    value: u64::from(len),
                    offset: len_offset,
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
    use proptest::prelude::*;

    /// The bytes of `fields` written MSB-first one bit at a time after `prefix`, the last
    /// byte zero-padded when `pad`, else cut to the complete bytes.
    fn bit_by_bit(prefix: &[u8], fields: &[(u64, u32)], pad: bool) -> Vec<u8> {
        let bits: Vec<bool> = fields
            .iter()
            .flat_map(|&(v, n)| (0..n).rev().map(move |i| (v >> i) & 1 == 1))
            .collect();
        let whole = if pad {
            bits.len().div_ceil(8)
        } else {
            bits.len() / 8
        };
        let mut out = prefix.to_vec();
        out.extend((0..whole).map(|byte| {
            (0..8).fold(0u8, |b, i| {
                (b << 1) | u8::from(bits.get(byte * 8 + i).copied().unwrap_or(false))
            })
        }));
        out
    }

    proptest! {
        /// The accumulator stored only when full writes the bits a bit-at-a-time writer
        /// writes, through `WriteState` (finished) and `BitWriter` (finished or dropped),
        /// on an empty vector or after bytes already there.
        #[test]
        fn writes_are_the_bits_written_one_at_a_time(
            prefix in proptest::collection::vec(any::<u8>(), 0..20),
            raw in proptest::collection::vec((any::<u64>(), 1u32..=64), 0..200),
        ) {
            let fields: Vec<(u64, u32)> =
                raw.iter().map(|&(v, n)| (v & (u64::MAX >> (64 - n)), n)).collect();
            let small: Vec<(u64, u32)> =
                fields.iter().map(|&(v, n)| (v >> n.saturating_sub(56), n.min(56))).collect();

            let mut out = prefix.clone();
            let mut w = WriteState::new(&out);
            for &(v, n) in &small {
                w.put_small(&mut out, v, n);
            }
            w.finish(&mut out);
            prop_assert_eq!(&out, &bit_by_bit(&prefix, &small, true));

            for finish in [true, false] {
                let mut out = prefix.clone();
                let mut w = BitWriter::new(&mut out);
                for &(v, n) in &fields {
                    w.put(v, n);
                }
                if finish {
                    w.finish();
                } else {
                    drop(w);
                }
                prop_assert_eq!(&out, &bit_by_bit(&prefix, &fields, finish));
            }
        }
    }

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
            let ctx = RiceContext { a, n: u64::from(n) };
            let k = ctx.k();
            let brute = (0..=63u32)
                .find(|&k| (u128::from(n) << k) >= u128::from(a))
                .unwrap_or(63);
            assert_eq!(k, brute, "a={a} n={n}");
        }
    }

    #[test]
    fn the_unclamped_parameter_clamps_to_the_parameter() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let check = |a: u64, n: u64| {
            let ctx = RiceContext { a, n };
            let k = ctx.k_for_encoder::<false>();
            assert_eq!(k.min(63), ctx.k(), "a={a} n={n}");
            assert_eq!(ctx.k_for_encoder::<true>(), k, "a={a} n={n}");
            // The smallest k ≤ 64 with n · 2^k ≥ a.
            let brute = (0..=64u32)
                .find(|&k| (u128::from(n) << k) >= u128::from(a))
                .unwrap_or(64);
            assert_eq!(k, brute, "a={a} n={n}");
        };
        for n in 1..RESET {
            let n = u64::from(n);
            for a in [0, 1, 2, n - 1, n, n + 1, u64::MAX, u64::MAX / 2, 1 << 63] {
                check(a, n);
            }
            for shift in 0..64 {
                for a in [(n << shift) >> 1, n << shift] {
                    check(a.wrapping_sub(1), n);
                    check(a, n);
                    check(a.wrapping_add(1), n);
                }
            }
            for _ in 0..2_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                check(x >> (x % 64), n);
            }
        }
    }

    #[test]
    fn a_pair_codes_as_two_contexts() {
        let mut pair = RicePair::new([64, 4]);
        let mut two = [RiceContext::new(64), RiceContext::new(4)];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..5_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly small values, some huge (saturating sums), a run of zeros.
            let shift = [60, 58, 40, 2, 63][(i % 5) as usize];
            let (v0, v1) = if (1_000..1_200).contains(&i) {
                (0, 0)
            } else {
                (
                    x >> shift,
                    (x >> 3) >> [61, 20, 59, 62, 0][(i % 5) as usize],
                )
            };
            let (k0, k1) = pair.k::<false>();
            assert_eq!(pair.k::<true>(), (k0, k1), "step {i}");
            assert_eq!(
                (k0.min(63), k1.min(63)),
                (two[0].k(), two[1].k()),
                "step {i}"
            );
            pair.update(v0, v1);
            two[0].update(v0);
            two[1].update(v1);
        }
    }

    #[test]
    fn reading_past_the_end_fails() {
        let mut r = BitReader::new(&[0xff]);
        let mut ctx = RiceContext::new(1);
        assert!(r.rice(&mut ctx).is_err());
    }
}
