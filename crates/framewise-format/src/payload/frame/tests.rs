//! The lane codec and the bit coder against the implementations they replaced, kept here
//! verbatim as `reference`: on valid and invalid lanes, on valid, damaged and random bit
//! streams, both must give the same bytes, the same values and the same errors.

use super::lane::{encode_lane_by_depth, lane_contexts};
use super::*;
use crate::bits::{BitReader, BitWriter, RiceContext, WriteState};
use crate::model::CpuSpan;

/// The codec as it stood before it was rewritten for speed (the code the committed sample
/// and every capture so far were written with). Only the `pub` markers are new.
#[allow(dead_code, reason = "a verbatim copy; not every item is exercised")]
mod reference {
    use crate::error::{DecodeError, EncodeError};
    use crate::model::{CpuSpan, Lane};
    use crate::wire::{put_svarint, put_varint, unzigzag, zigzag, Cursor};

    pub const RESET: u32 = 64;
    pub const UNARY_LIMIT: u64 = 24;

    const CTX_GAP: usize = 0;
    const CTX_LEAF: usize = 1;
    const CTX_TAIL: usize = 2;
    const CTX_SYM: usize = 3;
    const CTX_DEPTH: usize = 4;
    const CTX_INITIAL_MEANS: [u64; 5] = [64, 16384, 64, 4, 1];

    fn lane_contexts() -> [RiceContext; 5] {
        CTX_INITIAL_MEANS.map(RiceContext::new)
    }

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
        pub fn update(&mut self, value: u64) {
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

    pub fn encode_lane(
        out: &mut Vec<u8>,
        lane: &Lane,
        frame_begin_ns: u64,
    ) -> Result<(), EncodeError> {
        put_varint(out, u64::from(lane.thread));
        put_varint(out, lane.dropped_spans);
        put_varint(out, lane.spans.len() as u64);
        let base = lane.spans.first().map_or(frame_begin_ns, |s| s.start_ns);
        put_svarint(out, base.wrapping_sub(frame_begin_ns) as i64);

        let mut bits = Vec::with_capacity(lane.spans.len() * 4);
        {
            let bad = |index: usize, reason: &'static str| EncodeError::BadNesting {
                thread: lane.thread,
                index,
                reason,
            };
            let mut w = BitWriter::new(&mut bits);
            let mut ctx = lane_contexts();
            // Open spans: (index, depth, end_ns).
            let mut stack: Vec<(usize, u32, u64, u64)> = Vec::with_capacity(16);
            let mut last_ns = base;
            let mut last_sym: i64 = 0;
            let mut last_was_begin_of: Option<usize> = None;
            let total = lane.spans.len();
            let mut begun = 0usize;
            let emit_end = |w: &mut BitWriter<'_>,
                            ctx: &mut [RiceContext; 5],
                            idx: usize,
                            end_ns: u64,
                            last_ns: &mut u64,
                            last_was_begin_of: &mut Option<usize>,
                            begun: usize|
             -> Result<(), EncodeError> {
                if end_ns < *last_ns {
                    return Err(bad(idx, "ends before an event that precedes its end"));
                }
                if begun < total {
                    w.put(0, 1); // token: end
                }
                let c = if *last_was_begin_of == Some(idx) {
                    CTX_LEAF
                } else {
                    CTX_TAIL
                };
                w.rice(&mut ctx[c], end_ns - *last_ns);
                *last_ns = end_ns;
                *last_was_begin_of = None;
                Ok(())
            };
            for (i, s) in lane.spans.iter().enumerate() {
                if s.end_ns < s.start_ns {
                    return Err(bad(i, "ends before it starts"));
                }
                while let Some(&(idx, depth, start, end)) = stack.last() {
                    let contains = s.start_ns >= start && s.end_ns <= end;
                    if depth >= s.depth || !contains {
                        stack.pop();
                        emit_end(
                            &mut w,
                            &mut ctx,
                            idx,
                            end,
                            &mut last_ns,
                            &mut last_was_begin_of,
                            begun,
                        )?;
                    } else {
                        break;
                    }
                }
                if let Some(&(_, depth, _, _)) = stack.last() {
                    if depth + 1 != s.depth {
                        return Err(bad(i, "is inside a span but not exactly one level deeper"));
                    }
                }
                if s.start_ns < last_ns {
                    return Err(bad(i, "starts before the previous event (not pre-order)"));
                }
                if !stack.is_empty() {
                    w.put(1, 1); // token: begin (only coded when an end is also possible)
                }
                w.rice(&mut ctx[CTX_GAP], s.start_ns - last_ns);
                w.rice(&mut ctx[CTX_SYM], zigzag(i64::from(s.scope) - last_sym));
                last_sym = i64::from(s.scope);
                if stack.is_empty() {
                    w.rice(&mut ctx[CTX_DEPTH], u64::from(s.depth));
                }
                last_ns = s.start_ns;
                last_was_begin_of = Some(i);
                begun += 1;
                stack.push((i, s.depth, s.start_ns, s.end_ns));
            }
            while let Some((idx, _, _, end)) = stack.pop() {
                emit_end(
                    &mut w,
                    &mut ctx,
                    idx,
                    end,
                    &mut last_ns,
                    &mut last_was_begin_of,
                    begun,
                )?;
            }
            w.finish();
        }
        put_varint(out, bits.len() as u64);
        out.extend_from_slice(&bits);
        Ok(())
    }

    pub fn decode_lane(c: &mut Cursor<'_>, frame_begin_ns: u64) -> Result<Lane, DecodeError> {
        let thread = c.varint_u32("thread symbol")?;
        let dropped_spans = c.varint()?;
        let span_count_offset = c.pos();
        let span_count = c.varint()?;
        let base = frame_begin_ns.wrapping_add(c.svarint()? as u64);
        let bit_len = c.count(1)?;
        let stream = c.bytes(bit_len)?;
        // Every span costs at least two bits (gap and symbol), so a count the stream cannot
        // hold is refused before anything is allocated.
        if span_count > (stream.len() as u64) * 4 {
            return Err(DecodeError::ImplausibleCount {
                count: span_count,
                offset: span_count_offset,
                remaining: stream.len(),
            });
        }
        let total = span_count as usize;
        let mut spans: Vec<CpuSpan> = Vec::with_capacity(total);
        let mut r = BitReader::new(stream);
        let mut ctx = lane_contexts();
        let mut stack: Vec<usize> = Vec::with_capacity(16);
        let mut last_ns = base;
        let mut last_sym: i64 = 0;
        let mut last_was_begin_of: Option<usize> = None;
        let invalid =
            |field: &'static str, value: u64, r: &BitReader<'_>| DecodeError::InvalidValue {
                field,
                value,
                offset: stream.len() - r.remaining_bits() / 8,
            };
        while spans.len() < total || !stack.is_empty() {
            let is_begin = if stack.is_empty() {
                true
            } else if spans.len() == total {
                false
            } else {
                r.get(1)? == 1
            };
            if is_begin {
                let gap = r.rice(&mut ctx[CTX_GAP])?;
                let start_ns = last_ns
                    .checked_add(gap)
                    .ok_or_else(|| invalid("span gap", gap, &r))?;
                let sym_delta = unzigzag(r.rice(&mut ctx[CTX_SYM])?);
                let sym = last_sym.wrapping_add(sym_delta);
                let scope =
                    u32::try_from(sym).map_err(|_| invalid("scope symbol", sym as u64, &r))?;
                last_sym = sym;
                let depth = match stack.last() {
                    Some(&parent) => spans[parent]
                        .depth
                        .checked_add(1)
                        .ok_or_else(|| invalid("depth", u64::MAX, &r))?,
                    None => {
                        let d = r.rice(&mut ctx[CTX_DEPTH])?;
                        u32::try_from(d).map_err(|_| invalid("depth", d, &r))?
                    }
                };
                last_ns = start_ns;
                last_was_begin_of = Some(spans.len());
                stack.push(spans.len());
                spans.push(CpuSpan {
                    scope,
                    depth,
                    start_ns,
                    end_ns: start_ns,
                });
            } else {
                let Some(idx) = stack.pop() else {
                    return Err(invalid("end token with no open span", 0, &r));
                };
                let c = if last_was_begin_of == Some(idx) {
                    CTX_LEAF
                } else {
                    CTX_TAIL
                };
                let delta = r.rice(&mut ctx[c])?;
                let end_ns = last_ns
                    .checked_add(delta)
                    .ok_or_else(|| invalid("span end", delta, &r))?;
                spans[idx].end_ns = end_ns;
                last_ns = end_ns;
                last_was_begin_of = None;
            }
        }
        if r.remaining_bits() >= 8 {
            return Err(DecodeError::TrailingBytes {
                extra: r.remaining_bits() / 8,
            });
        }
        Ok(Lane {
            thread,
            spans,
            dropped_spans,
        })
    }
}

/// xorshift64*: deterministic test data.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    /// A value of a random bit length: small values and 64-bit extremes alike.
    fn wide(&mut self) -> u64 {
        let bits = self.below(65) as u32;
        match bits {
            0 => 0,
            64 => self.next(),
            b => self.next() >> (64 - b),
        }
    }
}

/// A lane, mostly valid: random nesting, gaps and durations of every magnitude (so that
/// escapes and long codes occur), scope deltas of every sign and size, deep top-level
/// spans; with `damage`, one field of one span is then disturbed.
fn random_lane(rng: &mut Rng, damage: bool) -> Lane {
    let mut spans: Vec<CpuSpan> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut t = rng.below(1 << 20);
    let mut top_depth = rng.below(3) as u32;
    let events = rng.below(70);
    let scale = rng.below(5);
    for _ in 0..events {
        let step = match rng.below(8) {
            0 => 0,
            1 => rng.below(4),
            2 if scale > 2 => rng.wide() >> 1,
            _ => rng.below(1 << (4 * scale + 6)),
        };
        let Some(next) = t.checked_add(step) else {
            break;
        };
        t = next;
        if rng.below(3) == 0 && !stack.is_empty() {
            if let Some(i) = stack.pop() {
                spans[i].end_ns = t;
            }
        } else {
            let depth = match stack.last() {
                Some(&parent) => match spans[parent].depth.checked_add(1) {
                    Some(d) => d,
                    None => continue, // no span fits inside one at u32::MAX
                },
                None => {
                    top_depth = top_depth.saturating_add(u32::from(rng.below(4) == 0));
                    if rng.below(40) == 0 {
                        top_depth = u32::MAX - rng.below(3) as u32;
                    }
                    top_depth
                }
            };
            let scope = match rng.below(6) {
                0 => rng.next() as u32,
                1 => u32::MAX - rng.below(3) as u32,
                2 => rng.below(3) as u32,
                _ => 100 + rng.below(40) as u32,
            };
            stack.push(spans.len());
            spans.push(CpuSpan {
                scope,
                depth,
                start_ns: t,
                end_ns: t,
            });
        }
    }
    while let Some(i) = stack.pop() {
        let bits = rng.below(40);
        t = t.saturating_add(rng.below(1 << bits));
        spans[i].end_ns = t;
    }
    if damage && !spans.is_empty() {
        let i = rng.below(spans.len() as u64) as usize;
        let j = rng.below(spans.len() as u64) as usize;
        let s = &mut spans[i];
        match rng.below(5) {
            0 => s.start_ns = s.start_ns.wrapping_add(rng.below(1000)).wrapping_sub(500),
            1 => s.end_ns = s.end_ns.wrapping_add(rng.below(1000)).wrapping_sub(500),
            2 => s.depth = s.depth.wrapping_add(rng.below(3) as u32).wrapping_sub(1),
            3 => s.start_ns = s.end_ns.wrapping_add(1),
            _ => spans.swap(i, j),
        }
    }
    Lane {
        thread: rng.below(5) as u32,
        spans,
        dropped_spans: rng.below(3),
    }
}

pub(super) fn encode_new(lane: &Lane, begin: u64) -> Result<Vec<u8>, String> {
    let mut out = vec![0xa5; 3]; // something before, as in a real payload
    let mut stack = Vec::new();
    encode_lane(&mut out, lane, begin, &mut stack, true).map_err(|e| format!("{e:?}"))?;
    Ok(out)
}

/// The lane through every check of the lane algorithm (never coded by its depths alone).
fn encode_checked(lane: &Lane, begin: u64) -> Result<Vec<u8>, String> {
    let mut out = vec![0xa5; 3];
    let mut stack = Vec::new();
    encode_lane(&mut out, lane, begin, &mut stack, false).map_err(|e| format!("{e:?}"))?;
    Ok(out)
}

pub(super) fn encode_old(lane: &Lane, begin: u64) -> Result<Vec<u8>, String> {
    let mut out = vec![0xa5; 3];
    reference::encode_lane(&mut out, lane, begin).map_err(|e| format!("{e:?}"))?;
    Ok(out)
}

fn decode_new(bytes: &[u8], begin: u64, reuse: &mut Lane) -> (Result<Lane, DecodeError>, usize) {
    let mut c = Cursor::new(bytes);
    let result = decode_lane_into(&mut c, begin, reuse).map(|()| reuse.clone());
    (result, c.pos())
}

fn decode_old(bytes: &[u8], begin: u64) -> (Result<Lane, DecodeError>, usize) {
    let mut c = Cursor::new(bytes);
    let result = reference::decode_lane(&mut c, begin);
    (result, c.pos())
}

/// Whether the encoder codes `lane` by its depths alone, without starting again with
/// every check.
pub(super) fn coded_by_depth(lane: &Lane) -> bool {
    let mut out = Vec::new();
    let mut w = WriteState::new(&out);
    let base = lane.spans.first().map_or(0, |s| s.start_ns);
    encode_lane_by_depth::<false>(&mut out, &mut w, &lane.spans, base)
}

/// Lanes nested about as deep as the stack of open spans the depths code with: those
/// deeper go through every check, to the reference's bytes either way.
#[test]
fn lanes_nested_past_the_depth_stack_encode_to_the_reference_bytes() {
    let mut rng = Rng::new(11);
    for levels in [1, 2, 63, 64, 65, 66, 100, 200] {
        for _ in 0..20 {
            let top = rng.below(3) as u32;
            let mut spans = Vec::new();
            let mut t = rng.below(1 << 20);
            // A chain `levels` deep, then a sibling subtree part way down, closing later.
            let mut ends = Vec::new();
            for d in 0..levels {
                t += rng.below(50);
                spans.push(CpuSpan {
                    scope: 100 + rng.below(8) as u32,
                    depth: top + d,
                    start_ns: t,
                    end_ns: 0,
                });
                ends.push(spans.len() - 1);
            }
            let close = |i: usize, t: &mut u64, spans: &mut Vec<CpuSpan>, rng: &mut Rng| {
                *t += rng.below(50);
                spans[i].end_ns = *t;
            };
            let keep = rng.below(u64::from(levels)) as usize;
            while ends.len() > keep + 1 {
                let i = ends.pop().unwrap_or_default();
                close(i, &mut t, &mut spans, &mut rng);
            }
            let deeper = u32::try_from(ends.len()).unwrap_or(u32::MAX);
            t += 1;
            spans.push(CpuSpan {
                scope: 7,
                depth: top + deeper,
                start_ns: t,
                end_ns: t + 3,
            });
            t += 3;
            while let Some(i) = ends.pop() {
                close(i, &mut t, &mut spans, &mut rng);
            }
            let lane = Lane {
                thread: 1,
                dropped_spans: 0,
                spans,
            };
            let begin = rng.below(1 << 20);
            let new = encode_new(&lane, begin);
            assert!(new.is_ok(), "{levels} levels: {new:?}");
            assert_eq!(new, encode_old(&lane, begin), "{levels} levels");
            // Open at once: the chain, or the spans kept open and the one inside them.
            let nesting = (levels as usize).max(keep + 2);
            assert_eq!(
                coded_by_depth(&lane),
                nesting <= super::lane::BY_DEPTH_LEVELS,
                "{levels} levels, {nesting} open at once"
            );
        }
    }
}

#[test]
fn lanes_encode_to_the_reference_bytes_and_errors() {
    let mut rng = Rng::new(1);
    let (mut ok, mut refused, mut by_depth) = (0, 0, 0);
    for i in 0..40_000 {
        let lane = random_lane(&mut rng, i % 3 == 0);
        let begin = rng.below(1 << 30);
        let new = encode_new(&lane, begin);
        let old = encode_old(&lane, begin);
        assert_eq!(new, old, "lane {lane:?}");
        assert_eq!(encode_checked(&lane, begin), old, "lane {lane:?}");
        if new.is_ok() {
            ok += 1;
        } else {
            refused += 1;
        }
        if coded_by_depth(&lane) {
            assert!(
                new.is_ok(),
                "a lane coded by depth is one the checks pass: {lane:?}"
            );
            by_depth += 1;
        }
    }
    // Both kinds were exercised, and both of the encoder's paths for lanes written.
    assert!(
        ok > 20_000 && refused > 3_000 && by_depth > 10_000 && ok - by_depth > 3_000,
        "{ok} written ({by_depth} by depth), {refused} refused"
    );
}

/// Lane bytes whose stream is `stream`, with this span count.
fn lane_bytes(span_count: u64, base: i64, stream: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, 1);
    put_varint(&mut out, 0);
    put_varint(&mut out, span_count);
    crate::wire::put_svarint(&mut out, base);
    put_varint(&mut out, stream.len() as u64);
    out.extend_from_slice(stream);
    out
}

/// Splits lane bytes into (span count, base, stream).
fn lane_parts(bytes: &[u8]) -> (u64, i64, Vec<u8>) {
    let mut c = Cursor::new(bytes);
    let _ = c.varint();
    let _ = c.varint();
    let count = c.varint().unwrap_or(0);
    let base = c.svarint().unwrap_or(0);
    let len = c.varint().unwrap_or(0) as usize;
    let stream = c.bytes(len.min(c.remaining())).unwrap_or(&[]).to_vec();
    (count, base, stream)
}

#[test]
fn lanes_decode_to_the_reference_values_and_errors() {
    let mut rng = Rng::new(2);
    let mut reuse = Lane::default();
    let (mut ok, mut failed) = (0, 0);
    for i in 0..60_000u64 {
        let begin = rng.below(1 << 30);
        let bytes = match i % 6 {
            // Valid lanes.
            0 | 1 => match encode_old(&random_lane(&mut rng, false), begin) {
                Ok(b) => b[3..].to_vec(),
                Err(_) => continue,
            },
            // Valid lanes, damaged: bit flips, a cut or lengthened stream, a wrong count.
            2 | 3 => {
                let Ok(b) = encode_old(&random_lane(&mut rng, false), begin) else {
                    continue;
                };
                let (mut count, base, mut stream) = lane_parts(&b[3..]);
                match rng.below(5) {
                    0 | 1 if !stream.is_empty() => {
                        for _ in 0..1 + rng.below(3) {
                            let at = rng.below(stream.len() as u64) as usize;
                            stream[at] ^= 1 << rng.below(8);
                        }
                    }
                    2 => {
                        let keep = rng.below(stream.len() as u64 + 1) as usize;
                        stream.truncate(keep);
                    }
                    3 => {
                        for _ in 0..1 + rng.below(12) {
                            stream.push(rng.next() as u8);
                        }
                    }
                    _ => count = count.wrapping_add(rng.below(5)).wrapping_sub(2),
                }
                lane_bytes(count, base, &stream)
            }
            // Random streams: uniform bytes, or runs of ones (escapes, unterminated codes).
            _ => {
                let len = rng.below(48) as usize;
                let dense = rng.below(3);
                let stream: Vec<u8> = (0..len)
                    .map(|_| match dense {
                        0 => rng.next() as u8,
                        1 => (rng.next() | rng.next()) as u8,
                        _ => {
                            if rng.below(8) == 0 {
                                rng.next() as u8
                            } else {
                                0xff
                            }
                        }
                    })
                    .collect();
                let count = rng.below(len as u64 * 4 + 2);
                lane_bytes(count, rng.next() as i64 >> rng.below(64), &stream)
            }
        };
        let new = decode_new(&bytes, begin, &mut reuse);
        let old = decode_old(&bytes, begin);
        if let Err(DecodeError::LaneNesting { .. }) = new.0 {
            // The one refusal the old reader lacked (spans the writer nests otherwise),
            // made when the top-level span ends: the old reader read on, to the end or to
            // an error further on.
            if let (Ok(lane), len) = &old {
                let again = encode_old(lane, begin).ok().map(|b| b[3..].to_vec());
                assert_ne!(again.as_deref(), Some(&bytes[..*len]), "bytes {bytes:02x?}");
            }
            failed += 1;
            continue;
        }
        assert_eq!(new, old, "bytes {bytes:02x?}");
        if new.0.is_ok() {
            ok += 1;
        } else {
            failed += 1;
        }
    }
    assert!(
        ok > 20_000 && failed > 20_000,
        "{ok} decoded, {failed} refused"
    );
}

#[test]
fn bit_coder_matches_the_reference_call_by_call() {
    let mut rng = Rng::new(3);
    for _ in 0..5_000 {
        // Writer: random puts and Rice codes.
        let mut new_out = vec![1u8];
        let mut old_out = vec![1u8];
        let mean = 1 + rng.below(1 << 20);
        let mut new_ctx = RiceContext::new(mean);
        let mut old_ctx = reference::RiceContext::new(mean);
        let ops: Vec<(bool, u64, u32)> = (0..rng.below(40))
            .map(|_| {
                let n = rng.below(65) as u32;
                (rng.below(2) == 0, rng.wide(), n)
            })
            .collect();
        {
            let mut w = BitWriter::new(&mut new_out);
            let mut o = reference::BitWriter::new(&mut old_out);
            for &(rice, v, n) in &ops {
                if rice {
                    w.rice(&mut new_ctx, v);
                    o.rice(&mut old_ctx, v);
                } else {
                    w.put(v, n);
                    o.put(v, n);
                }
            }
            if rng.below(4) != 0 {
                w.finish();
                o.finish();
            }
        }
        assert_eq!(new_out, old_out, "{ops:?}");

        // Reader: the same calls on random or just-written bytes.
        let bytes: Vec<u8> = if rng.below(2) == 0 {
            new_out
        } else {
            (0..rng.below(24))
                .map(|_| {
                    if rng.below(3) == 0 {
                        0xff
                    } else {
                        rng.next() as u8
                    }
                })
                .collect()
        };
        let mut r = BitReader::new(&bytes);
        let mut o = reference::BitReader::new(&bytes);
        let seed = 1 + rng.below(1 << 16);
        let (mut new_ctx, mut old_ctx) =
            (RiceContext::new(seed), reference::RiceContext::new(seed));
        for &(rice, _, n) in &ops {
            let (a, b) = if rice {
                (r.rice(&mut new_ctx), o.rice(&mut old_ctx))
            } else {
                (r.get(n), o.get(n))
            };
            assert_eq!(a, b, "{bytes:02x?} {ops:?}");
            assert_eq!(r.remaining_bits(), o.remaining_bits());
            if a.is_err() {
                break;
            }
        }
    }
}

#[test]
fn rice_parameter_matches_the_reference() {
    let mut rng = Rng::new(4);
    for _ in 0..200_000 {
        let mut a = rng.wide();
        let n = 1 + rng.below(63) as u32;
        if rng.below(4) == 0 {
            a = u64::from(n) << rng.below(64) >> rng.below(3);
        }
        // Drive both contexts to (a, n): from (a, 1), n - 1 updates of 0 leave a alone
        // (no halving below n = 64).
        let mut new = RiceContext::new(a);
        let mut old = reference::RiceContext::new(a);
        for _ in 1..n {
            new.update(0);
            old.update(0);
        }
        assert_eq!(new.k(), old.k(), "a={a} n={n}");
    }
}

#[test]
fn decoding_into_a_used_frame_gives_what_a_fresh_decode_gives() {
    let mut rng = Rng::new(5);
    let mut decoder = FrameDecoder::new();
    let mut frame = Frame::default();
    for i in 0..300u64 {
        let f = Frame {
            index: i,
            cpu_begin_ns: 1_000,
            cpu_end_ns: 9_000,
            lanes: (0..rng.below(5))
                .map(|_| random_lane(&mut rng, false))
                .filter(|l| encode_old(l, 1_000).is_ok())
                .collect(),
            counters: (0..rng.below(4))
                .map(|c| CounterValue {
                    counter: c as u32,
                    value: rng.next() as i64,
                })
                .collect(),
            marks: (0..rng.below(3))
                .map(|m| Mark {
                    name: m as u32,
                    thread: 1,
                    at_ns: 2_000,
                    kind: MarkKind::User {
                        window_ns: 5,
                        note: "n".into(),
                    },
                })
                .collect(),
            ..Frame::default()
        };
        let mut payload = Vec::new();
        encode_frame(&mut payload, &f, std::iter::empty()).expect("encode");
        // First a damaged copy, which may fail halfway and leave the frame half-written.
        let mut damaged = payload.clone();
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(damaged.len() as u64) as usize;
            damaged[at] ^= 1 << rng.below(8);
        }
        damaged.truncate(damaged.len() - rng.below(4) as usize);
        let _ = decoder.decode_frame_into(&damaged, &mut frame);
        let symbols = decoder
            .decode_frame_into(&payload, &mut frame)
            .expect("decode")
            .to_vec();
        assert_eq!(
            (symbols, frame.clone()),
            decode_frame(&payload).expect("decode")
        );
        assert_eq!(frame, f);
    }
}

/// A random event stream that follows the token grammar of docs/FORMAT.md §8.2 and codes
/// every value as a writer does (so no needless escape, zero padding), but ignores the
/// nesting rules: top-level spans of any depth, many zero gaps and zero-length spans at
/// the same instant. The first gap is 0, as the writer's base is the first span's start.
/// Returns the span count and the stream.
fn random_event_stream(rng: &mut Rng) -> (u64, Vec<u8>) {
    let span_count = rng.below(10);
    let [mut gap, mut leaf, mut tail, mut sym, mut depth] = lane_contexts();
    let mut stream = Vec::new();
    let mut w = BitWriter::new(&mut stream);
    let small = |rng: &mut Rng| match rng.below(4) {
        0 | 1 => 0,
        2 => rng.below(3),
        _ => rng.below(1 << 20),
    };
    // Per open span: whether an event has followed its begin (then its end is a tail).
    let mut open: Vec<bool> = Vec::new();
    let mut begun = 0;
    while begun < span_count || !open.is_empty() {
        let is_begin = if open.is_empty() {
            true
        } else if begun == span_count {
            false
        } else {
            let b = rng.below(2) == 0;
            w.put(u64::from(b), 1);
            b
        };
        if is_begin {
            // A writer's base is the first span's start.
            let gap_ns = if begun == 0 { 0 } else { small(rng) };
            w.rice(&mut gap, gap_ns);
            // Mostly rising scope ids; now and then one below the last (which may be < 0).
            w.rice(&mut sym, 2 * rng.below(3) + u64::from(rng.below(8) == 0));
            if open.is_empty() {
                w.rice(&mut depth, rng.below(4));
            }
            if let Some(parent) = open.last_mut() {
                *parent = true;
            }
            open.push(false);
            begun += 1;
        } else if open.pop() == Some(true) {
            w.rice(&mut tail, small(rng));
        } else {
            w.rice(&mut leaf, small(rng));
        }
    }
    w.finish();
    (span_count, stream)
}

/// A lane the reader accepts, the writer writes again with the very same bytes; and the
/// reader refuses exactly the streams whose spans the writer would code otherwise, or not
/// at all.
#[test]
fn every_lane_read_is_written_back_to_the_same_bytes() {
    let mut rng = Rng::new(6);
    let mut reuse = Lane::default();
    let (mut same, mut refused) = (0, 0);
    for _ in 0..60_000 {
        let begin = rng.below(1 << 30);
        let (span_count, stream) = random_event_stream(&mut rng);
        let base = if span_count == 0 {
            0
        } else {
            rng.below(1 << 20) as i64 - (1 << 19)
        };
        let bytes = lane_bytes(span_count, base, &stream);
        let (new, _) = decode_new(&bytes, begin, &mut reuse);
        let (old, _) = decode_old(&bytes, begin);
        let written_again = old
            .as_ref()
            .ok()
            .and_then(|lane| encode_new(lane, begin).ok());
        let round_trips = written_again.as_ref().map(|b| &b[3..]) == Some(&bytes[..]);
        match new {
            Ok(lane) => {
                assert!(round_trips, "bytes {bytes:02x?} read as {lane:?}");
                same += 1;
            }
            Err(DecodeError::LaneNesting { .. }) => {
                // The old reader read the spans (or failed further on); the writer
                // refuses them or writes other bytes.
                assert!(!round_trips, "bytes {bytes:02x?}");
                refused += 1;
            }
            Err(e) => {
                // Scope ids below 0 and the like: the old reader refused them too.
                assert_eq!(old, Err(e), "bytes {bytes:02x?}");
            }
        }
    }
    assert!(
        same > 30_000 && refused > 1_000,
        "{same} written back, {refused} refused"
    );
}

/// Lane bytes of the 2026-11 fuzz finding (`frame_roundtrip`): a zero-length top-level
/// span at u64::MAX, then a top-level span at the same instant with `depth` and no length.
/// The old reader read it; the writer refused the spans (depth 2) or nested the second in
/// the first and wrote other bytes (depth 1).
fn same_instant_lane(depth: u64) -> Vec<u8> {
    let [mut gap, mut leaf, _, mut sym, mut depth_ctx] = lane_contexts();
    let mut stream = Vec::new();
    let mut w = BitWriter::new(&mut stream);
    w.rice(&mut gap, 0); // begin: gap 0 from base (u64::MAX)
    w.rice(&mut sym, 0); // scope 0
    w.rice(&mut depth_ctx, 0); // depth 0
    w.put(0, 1); // an end
    w.rice(&mut leaf, 0); // a leaf of length 0
    w.rice(&mut gap, 0); // begin, nothing open: gap 0
    w.rice(&mut sym, 0); // scope 0
    w.rice(&mut depth_ctx, depth);
    w.rice(&mut leaf, 0); // all begun: its end, length 0
    w.finish();
    lane_bytes(2, -1, &stream)
}

#[test]
fn a_deeper_zero_length_top_level_span_where_the_last_ended_is_refused() {
    // The bytes tests/fuzz_findings.rs spells out by hand.
    assert_eq!(
        same_instant_lane(2),
        [1, 0, 2, 1, 7, 0, 0, 0, 0, 0x18, 0, 0]
    );
    for (depth, writer) in [(2u64, false), (1, true)] {
        let bytes = same_instant_lane(depth);
        let (old, _) = decode_old(&bytes, 0);
        let lane = old.expect("the old reader read it");
        assert_eq!(encode_old(&lane, 0).is_ok(), writer);
        assert_eq!(
            decode_new(&bytes, 0, &mut Lane::default()).0,
            Err(DecodeError::LaneNesting {
                thread: 1,
                span: 1,
                start_ns: u64::MAX,
                depth: depth as u32,
                previous_depth: 0,
            })
        );
    }
    // The same stream with depth 0 is two sibling spans, which the writer writes alike.
    let bytes = same_instant_lane(0);
    let (new, _) = decode_new(&bytes, 0, &mut Lane::default());
    let lane = new.expect("siblings at the same instant");
    assert_eq!(
        encode_new(&lane, 0).expect("written").as_slice()[3..],
        bytes
    );
}
