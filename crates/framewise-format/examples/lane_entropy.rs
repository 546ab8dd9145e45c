//! Scratch study (issue 2, "≤ 4 B per CPU span"): where a lane's bits go today, per event
//! class, and what other lossless codes of the same events would spend. Nothing here
//! changes the format; it replays the writer's event walk (docs/FORMAT.md §8.2) and prices
//! each event under several models.
//!
//! ```text
//! cargo run --release -p framewise-format --example lane_entropy            # synthetic frames
//! cargo run --release -p framewise-format --example lane_entropy -- FILE.sgpt
//! # decode cost of today's Rice values vs a range-coded `unary` code, same events:
//! for f in dc_rice dc_cls_rice dc_range; do valgrind --tool=callgrind --toggle-collect=$f \
//!   target/release/examples/lane_entropy --decode-cost 2>&1 | grep Collected; done
//! ```
//!
//! Models, per value class (gap, leaf, tail, scope delta, depth) and for tokens:
//!
//! - `rice`: the format's adaptive Rice code, bit for bit (checked against the encoder's
//!   lane bytes).
//! - `static`: the empirical entropy of the value's bit-length class over the whole input,
//!   plus its raw mantissa (the bits below the leading one) — a floor for any code that
//!   sends a class and then raw mantissa bits with one fixed table per class.
//! - `cls-rice`: no arithmetic coder: the class as a Rice code (format-style adaptive `k`)
//!   of its zigzag difference from a running average class, then the raw mantissa; tokens
//!   and depth as today; contexts per lane, as today.
//! - `cls-rice+`: `cls-rice`, and a begin's scope first guessed as the one that followed the
//!   previous begin's scope last time in the lane (one raw bit; the delta on a miss).
//! - `unary`: `bin/frame`'s coder, but each class as the zigzag difference from a running
//!   average class, in unary with an adaptive bit per position: fewer binary decisions.
//! - `bin/lane`, `bin/frame`: an achievable code: the class coded by a binary adaptive
//!   coder (a 7-level binary tree of adaptive probabilities, as CABAC or LZMA do), then
//!   the raw mantissa; contexts reset per lane or per frame (a frame stays self-contained).
//!   Cost is −log2 p per binary decision (an arithmetic coder spends that within a fraction
//!   of a percent), plus a 32-bit flush per stream.
//! - `pred`: `bin/frame`, with a leaf's or tail's class coded in a context of the class the
//!   same scope's last end had in this frame, a gap's class in a context of whether it is a
//!   first child's, and a begin's scope first guessed as the scope that followed the
//!   previous begin's scope last time in this frame (a flag, then the delta on a miss).
//! - `resid`: `pred`, but a leaf or tail of a scope already seen in the frame is coded as
//!   the difference from that scope's last one (zigzag, class and mantissa).
#![expect(
    clippy::unwrap_used,
    reason = "a scratch study: its inputs are its own"
)]

#[path = "../tests/support/mod.rs"]
mod support;

use framewise_format::model::{Frame, Lane};
use framewise_format::{payload, read, Writer};
use std::collections::HashMap;
use std::io::Cursor;

// ---------------------------------------------------------------- the writer's event walk

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Class {
    Token,
    Gap,
    Leaf,
    Tail,
    Sym,
    Depth,
}

const CLASSES: [Class; 6] = [
    Class::Token,
    Class::Gap,
    Class::Leaf,
    Class::Tail,
    Class::Sym,
    Class::Depth,
];

#[derive(Clone, Copy, Debug)]
enum Event {
    /// A coded token: begin (true) or end; context: whether the open span has no child
    /// yet, and its depth below the lane's first.
    Token {
        begin: bool,
        childless: bool,
        rel_depth: u32,
    },
    /// A coded value of a class; `scope` is the span's, `prev_scope` the previous begin's.
    Value {
        class: Class,
        value: u64,
        scope: u32,
        prev_scope: u32,
        first_child: bool,
    },
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The events the writer codes for a lane, in order (docs/FORMAT.md §8.2).
fn lane_events(lane: &Lane) -> Vec<Event> {
    let mut ev = Vec::new();
    let mut stack: Vec<(usize, bool)> = Vec::new(); // (span, has a child)
    let spans = &lane.spans;
    let Some(first) = spans.first() else {
        return ev;
    };
    let base_depth = first.depth;
    let mut t = first.start_ns;
    let mut last_scope = 0u32;
    let mut last_was_begin = false;
    let end = |ev: &mut Vec<Event>, top: usize, t: &mut u64, token: bool, lwb: bool, ls: u32| {
        let s = &spans[top];
        if token {
            ev.push(Event::Token {
                begin: false,
                childless: lwb,
                rel_depth: s.depth.saturating_sub(base_depth),
            });
        }
        ev.push(Event::Value {
            class: if lwb { Class::Leaf } else { Class::Tail },
            value: s.end_ns - *t,
            scope: s.scope,
            prev_scope: ls,
            first_child: false,
        });
        *t = s.end_ns;
    };
    for (i, s) in spans.iter().enumerate() {
        while let Some(&(top, _)) = stack.last() {
            let p = &spans[top];
            if p.depth < s.depth && s.start_ns >= p.start_ns && s.end_ns <= p.end_ns {
                break;
            }
            stack.pop();
            end(&mut ev, top, &mut t, true, last_was_begin, last_scope);
            last_was_begin = false;
        }
        if let Some(&(top, _)) = stack.last() {
            ev.push(Event::Token {
                begin: true,
                childless: last_was_begin,
                rel_depth: spans[top].depth.saturating_sub(base_depth),
            });
        }
        ev.push(Event::Value {
            class: Class::Gap,
            value: s.start_ns - t,
            scope: s.scope,
            prev_scope: last_scope,
            first_child: last_was_begin,
        });
        ev.push(Event::Value {
            class: Class::Sym,
            value: zigzag(i64::from(s.scope) - i64::from(last_scope)),
            scope: s.scope,
            prev_scope: last_scope,
            first_child: false,
        });
        if stack.is_empty() {
            ev.push(Event::Value {
                class: Class::Depth,
                value: u64::from(s.depth),
                scope: s.scope,
                prev_scope: last_scope,
                first_child: false,
            });
        }
        if let Some(top) = stack.last_mut() {
            top.1 = true;
        }
        stack.push((i, false));
        t = s.start_ns;
        last_scope = s.scope;
        last_was_begin = true;
    }
    while let Some((top, _)) = stack.pop() {
        end(&mut ev, top, &mut t, false, last_was_begin, last_scope);
        last_was_begin = false;
    }
    ev
}

// ---------------------------------------------------------------- the format's Rice code

#[derive(Clone, Copy)]
struct Rice {
    a: u64,
    n: u64,
}

impl Rice {
    fn new(mean: u64) -> Self {
        Self { a: mean, n: 1 }
    }
    fn cost(&mut self, v: u64) -> f64 {
        let k = (0..64).find(|&k| (self.n << k) >= self.a).unwrap_or(63);
        let q = v >> k;
        let bits = if q < 24 {
            q + 1 + k
        } else {
            24 + 7 + u64::from(64 - v.leading_zeros())
        };
        self.a = self.a.saturating_add(v);
        self.n += 1;
        if self.n == 64 {
            self.a >>= 1;
            self.n = 32;
        }
        bits as f64
    }
}

/// The format's initial Rice means, indexed by `Class as usize` (tokens have none).
const INITIAL_MEANS: [u64; 6] = [0, 64, 16384, 64, 4, 1];

/// One context per value class, made from the class's initial mean.
fn contexts<T>(make: impl Fn(u64) -> T) -> HashMap<Class, T> {
    CLASSES[1..]
        .iter()
        .map(|&c| (c, make(INITIAL_MEANS[c as usize])))
        .collect()
}

fn rice_contexts() -> HashMap<Class, Rice> {
    contexts(Rice::new)
}

// ---------------------------------------------------------------- class by Rice, mantissa raw

/// A cheap code of the same shape as today's (no arithmetic coder): a value's bit-length
/// class as a Rice code of its zigzag difference from a running average class (format-style
/// adaptive k), then the mantissa raw. Decoding is one Rice code and one raw read.
#[derive(Clone, Copy)]
struct ClsRice {
    /// Running average class, ×16.
    avg16: i64,
    rice: Rice,
}

impl ClsRice {
    fn new(initial_mean: u64) -> Self {
        Self {
            avg16: i64::from(bit_len(initial_mean)) * 16,
            rice: Rice::new(2),
        }
    }
    fn cost(&mut self, v: u64) -> f64 {
        let c = i64::from(bit_len(v));
        let pred = (self.avg16 + 8) >> 4;
        let bits = self.rice.cost(zigzag(c - pred)) + (c - 1).max(0) as f64;
        self.avg16 += (c * 16 - self.avg16) >> 2;
        bits
    }
}

fn cls_rice_contexts() -> HashMap<Class, ClsRice> {
    contexts(ClsRice::new)
}

// ---------------------------------------------------------------- binary adaptive coding

/// An adaptive probability of a 1: the count-based estimate (n1 + ½)/(n + 1) while few
/// decisions have been seen (fast learning), then exponential forgetting at rate 1/32.
#[derive(Clone, Copy)]
struct Bit {
    p1: f64,
    n: u32,
}

impl Default for Bit {
    fn default() -> Self {
        Self { p1: 0.5, n: 0 }
    }
}

impl Bit {
    fn cost(&mut self, bit: bool) -> f64 {
        let p = if bit { self.p1 } else { 1.0 - self.p1 };
        let p = p.clamp(1.0 / 4096.0, 1.0 - 1.0 / 4096.0);
        let rate = 1.0 / f64::from((self.n + 2).min(32));
        self.p1 += ((if bit { 1.0 } else { 0.0 }) - self.p1) * rate;
        self.n += 1;
        -p.log2()
    }
}

/// A bit-length class (0..=64) coded MSB-first down a 7-level tree of adaptive bits.
#[derive(Clone)]
struct ClassTree {
    nodes: Vec<Bit>,
}

impl Default for ClassTree {
    fn default() -> Self {
        Self {
            nodes: vec![Bit::default(); 128],
        }
    }
}

impl ClassTree {
    fn cost(&mut self, class: u32) -> f64 {
        let mut node = 1usize;
        let mut bits = 0.0;
        for i in (0..7).rev() {
            let b = (class >> i) & 1 == 1;
            bits += self.nodes[node].cost(b);
            node = node * 2 + usize::from(b);
        }
        bits
    }
}

/// A class coded as the zigzag difference from a running average class, in unary with an
/// adaptive bit per position (16 positions, then 7 raw bits): a few binary decisions per
/// value instead of the tree's seven.
#[derive(Clone)]
struct ClassUnary {
    avg16: i64,
    bins: [Bit; 17],
}

impl ClassUnary {
    fn new(initial_class: u32) -> Self {
        Self {
            avg16: i64::from(initial_class) * 16,
            bins: [Bit::default(); 17],
        }
    }
    /// (bits, binary decisions)
    fn cost(&mut self, v: u64) -> (f64, u32) {
        let c = i64::from(bit_len(v));
        let pred = (self.avg16 + 8) >> 4;
        let r = zigzag(c - pred).min(16) as usize;
        let mut bits = 0.0;
        for i in 0..r {
            bits += self.bins[i].cost(true);
        }
        if r < 16 {
            bits += self.bins[r].cost(false);
        } else {
            bits += 7.0;
        }
        self.avg16 += (c * 16 - self.avg16) >> 2;
        (bits + (c - 1).max(0) as f64, r as u32 + 1)
    }
}

fn bit_len(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// Class by a tree, then the mantissa raw.
fn class_and_mantissa(tree: &mut ClassTree, v: u64) -> f64 {
    let c = bit_len(v);
    tree.cost(c) + f64::from(c.saturating_sub(1))
}

/// The binary-adaptive model's state for one stream (a lane or a frame).
#[derive(Default)]
struct BinState {
    trees: HashMap<Class, ClassTree>,
    tokens: HashMap<(bool, u32), Bit>,
    // `pred` and `resid` only:
    end_by_last_class: HashMap<(Class, u32), ClassTree>,
    last_end_class: HashMap<u32, u32>,
    last_end: HashMap<u32, u64>,
    resid_trees: HashMap<Class, ClassTree>,
    gap_trees: HashMap<bool, ClassTree>,
    next_scope: HashMap<u32, u32>,
    hit: HashMap<bool, Bit>,
    // `unary` only:
    unary: HashMap<Class, ClassUnary>,
    /// Binary decisions coded (a proxy for decode time).
    bins: u64,
}

impl BinState {
    fn cost(&mut self, e: &Event, model: &str) -> (Class, f64) {
        let predict = model != "bin" && model != "unary";
        match *e {
            Event::Token {
                begin,
                childless,
                rel_depth,
            } => {
                self.bins += 1;
                let ctx = (childless, rel_depth.min(3));
                (
                    Class::Token,
                    self.tokens.entry(ctx).or_default().cost(begin),
                )
            }
            Event::Value {
                class,
                value,
                scope,
                prev_scope,
                first_child,
            } => {
                if model == "unary" {
                    let initial = match class {
                        Class::Leaf => 15,
                        Class::Gap | Class::Tail => 7,
                        Class::Sym => 2,
                        _ => 0,
                    };
                    let u = self
                        .unary
                        .entry(class)
                        .or_insert_with(|| ClassUnary::new(initial));
                    let (bits, bins) = u.cost(value);
                    self.bins += u64::from(bins);
                    return (class, bits);
                }
                self.bins += 7;
                if !predict {
                    let tree = self.trees.entry(class).or_default();
                    return (class, class_and_mantissa(tree, value));
                }
                match class {
                    Class::Leaf | Class::Tail if model == "resid" => {
                        // Residual against this scope's last end value in the frame.
                        let last = self.last_end.insert(scope, value);
                        match last {
                            Some(last) => {
                                let r = zigzag(value.wrapping_sub(last) as i64);
                                let tree = self.resid_trees.entry(class).or_default();
                                (class, class_and_mantissa(tree, r))
                            }
                            None => {
                                let tree = self.trees.entry(class).or_default();
                                (class, class_and_mantissa(tree, value))
                            }
                        }
                    }
                    Class::Gap => {
                        // Context: a first child's gap (from its parent's begin) or a gap
                        // after an end.
                        let tree = self.gap_trees.entry(first_child).or_default();
                        (class, class_and_mantissa(tree, value))
                    }
                    Class::Leaf | Class::Tail => {
                        // Context: the class of this scope's last end in the frame (65 =
                        // none yet).
                        let last = self.last_end_class.get(&scope).copied().unwrap_or(65);
                        self.last_end_class.insert(scope, bit_len(value));
                        let tree = self.end_by_last_class.entry((class, last)).or_default();
                        (class, class_and_mantissa(tree, value))
                    }
                    Class::Sym => {
                        let guess = self.next_scope.get(&prev_scope).copied();
                        self.next_scope.insert(prev_scope, scope);
                        let has_guess = guess.is_some();
                        let hit = guess == Some(scope);
                        let mut bits = 0.0;
                        if has_guess {
                            bits += self.hit.entry(true).or_default().cost(hit);
                        }
                        if !hit {
                            let tree = self.trees.entry(class).or_default();
                            bits += class_and_mantissa(tree, value);
                        }
                        (class, bits)
                    }
                    _ => {
                        let tree = self.trees.entry(class).or_default();
                        (class, class_and_mantissa(tree, value))
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------- the study

#[derive(Default)]
struct Tally {
    count: HashMap<Class, u64>,
    bits: HashMap<(&'static str, Class), f64>,
    /// Whole-stream bytes per model (padding and flush included).
    stream_bytes: HashMap<&'static str, f64>,
    /// Bit-length class histograms, for the static floor.
    hist: HashMap<Class, [u64; 66]>,
    mantissa: HashMap<Class, f64>,
    tokens: HashMap<Class, [u64; 2]>,
    lane_header_bytes: u64,
    rice_stream_bytes: u64,
    spans: u64,
    frames: u64,
    encoded_lane_bytes: u64,
    encoded_record_bytes: u64,
    bins: HashMap<&'static str, u64>,
}

fn varint_len(v: u64) -> u64 {
    u64::from(bit_len(v).max(1).div_ceil(7))
}

const FLUSH_BITS: f64 = 32.0;

fn study_frame(t: &mut Tally, f: &Frame) {
    let mut whole = Vec::new();
    payload::encode_frame(&mut whole, f, std::iter::empty()).unwrap();
    let mut no_lanes = Vec::new();
    let stripped = Frame {
        lanes: Vec::new(),
        ..f.clone()
    };
    payload::encode_frame(&mut no_lanes, &stripped, std::iter::empty()).unwrap();
    t.encoded_lane_bytes += (whole.len() - no_lanes.len()) as u64;
    t.encoded_record_bytes += whole.len() as u64 + 16;
    t.frames += 1;

    let mut per_frame = BinState::default();
    let mut per_frame_pred = BinState::default();
    let mut per_frame_resid = BinState::default();
    let mut per_frame_unary = BinState::default();
    let (mut frame_bits, mut frame_pred_bits, mut frame_resid_bits) = (0.0, 0.0, 0.0);
    let mut frame_unary_bits = 0.0;
    for lane in &f.lanes {
        t.spans += lane.spans.len() as u64;
        let base = lane.spans.first().map_or(f.cpu_begin_ns, |s| s.start_ns);
        let events = lane_events(lane);
        let mut rice = rice_contexts();
        let mut cls = cls_rice_contexts();
        let mut cls_plus = cls_rice_contexts();
        let mut next_scope: HashMap<u32, u32> = HashMap::new();
        let mut per_lane = BinState::default();
        let (mut rice_bits, mut lane_bits, mut cls_bits) = (0.0, 0.0, 0.0);
        let mut plus_bits = 0.0;
        for e in &events {
            let class = match *e {
                Event::Token { begin, .. } => {
                    t.tokens.entry(Class::Token).or_default()[usize::from(begin)] += 1;
                    rice_bits += 1.0;
                    cls_bits += 1.0;
                    plus_bits += 1.0;
                    *t.bits.entry(("cls-rice+", Class::Token)).or_default() += 1.0;
                    *t.bits.entry(("rice", Class::Token)).or_default() += 1.0;
                    *t.bits.entry(("cls-rice", Class::Token)).or_default() += 1.0;
                    Class::Token
                }
                Event::Value { class, value, .. } => {
                    let b = rice.get_mut(&class).unwrap().cost(value);
                    rice_bits += b;
                    *t.bits.entry(("rice", class)).or_default() += b;
                    // Depth stays as today (a plain Rice code): it is nearly always 0.
                    let c = if class == Class::Depth {
                        b
                    } else {
                        cls.get_mut(&class).unwrap().cost(value)
                    };
                    cls_bits += c;
                    *t.bits.entry(("cls-rice", class)).or_default() += c;
                    // cls-rice+: a begin's scope is first guessed as the one that followed
                    // the previous begin's scope last time in this lane: one raw bit says
                    // whether the guess holds, the delta follows when it does not.
                    let c = match (class, *e) {
                        (
                            Class::Sym,
                            Event::Value {
                                scope, prev_scope, ..
                            },
                        ) => {
                            let guess = next_scope.insert(prev_scope, scope);
                            match guess {
                                Some(g) if g == scope => 1.0,
                                Some(_) => 1.0 + cls_plus.get_mut(&class).unwrap().cost(value),
                                None => cls_plus.get_mut(&class).unwrap().cost(value),
                            }
                        }
                        (Class::Depth, _) => b,
                        _ => cls_plus.get_mut(&class).unwrap().cost(value),
                    };
                    plus_bits += c;
                    *t.bits.entry(("cls-rice+", class)).or_default() += c;
                    t.hist.entry(class).or_insert([0; 66])[bit_len(value) as usize] += 1;
                    *t.mantissa.entry(class).or_default() +=
                        f64::from(bit_len(value).saturating_sub(1));
                    class
                }
            };
            *t.count.entry(class).or_default() += 1;
            let (_, b) = per_lane.cost(e, "bin");
            lane_bits += b;
            *t.bits.entry(("bin/lane", class)).or_default() += b;
            let (_, b) = per_frame.cost(e, "bin");
            frame_bits += b;
            *t.bits.entry(("bin/frame", class)).or_default() += b;
            let (_, b) = per_frame_pred.cost(e, "pred");
            frame_pred_bits += b;
            *t.bits.entry(("pred", class)).or_default() += b;
            let (_, b) = per_frame_resid.cost(e, "resid");
            frame_resid_bits += b;
            *t.bits.entry(("resid", class)).or_default() += b;
            let (_, b) = per_frame_unary.cost(e, "unary");
            frame_unary_bits += b;
            *t.bits.entry(("unary", class)).or_default() += b;
        }
        let rice_bytes = (rice_bits / 8.0).ceil();
        t.rice_stream_bytes += rice_bytes as u64;
        let header = varint_len(u64::from(lane.thread))
            + varint_len(lane.dropped_spans)
            + varint_len(lane.spans.len() as u64)
            + varint_len(zigzag(base.wrapping_sub(f.cpu_begin_ns) as i64))
            + varint_len(rice_bytes as u64);
        t.lane_header_bytes += header;
        *t.stream_bytes.entry("rice").or_default() += rice_bytes;
        *t.stream_bytes.entry("cls-rice").or_default() += (cls_bits / 8.0).ceil();
        *t.stream_bytes.entry("cls-rice+").or_default() += (plus_bits / 8.0).ceil();
        *t.stream_bytes.entry("bin/lane").or_default() += ((lane_bits + FLUSH_BITS) / 8.0).ceil();
    }
    // One stream per frame for the shared-context models.
    *t.stream_bytes.entry("bin/frame").or_default() += ((frame_bits + FLUSH_BITS) / 8.0).ceil();
    *t.stream_bytes.entry("pred").or_default() += ((frame_pred_bits + FLUSH_BITS) / 8.0).ceil();
    *t.stream_bytes.entry("resid").or_default() += ((frame_resid_bits + FLUSH_BITS) / 8.0).ceil();
    *t.stream_bytes.entry("unary").or_default() += ((frame_unary_bits + FLUSH_BITS) / 8.0).ceil();
    for (m, st) in [
        ("bin/frame", &per_frame),
        ("resid", &per_frame_resid),
        ("unary", &per_frame_unary),
    ] {
        *t.bins.entry(m).or_default() += st.bins;
    }
}

fn entropy(hist: &[u64]) -> f64 {
    let n: u64 = hist.iter().sum();
    hist.iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n as f64;
            -(c as f64) * p.log2()
        })
        .sum()
}

fn report(name: &str, t: &Tally) {
    let spans = t.spans as f64;
    println!(
        "\n== {name}: {} frames, {:.1} spans/frame; encoder: lanes {:.3} B/span, whole record {:.3} B/span",
        t.frames,
        spans / t.frames as f64,
        t.encoded_lane_bytes as f64 / spans,
        t.encoded_record_bytes as f64 / spans
    );
    // The replayed Rice code must be the encoder's, byte for byte.
    assert_eq!(
        t.rice_stream_bytes + t.lane_header_bytes,
        t.encoded_lane_bytes,
        "the replayed Rice code is not the encoder's"
    );
    let models = [
        "rice",
        "static",
        "cls-rice",
        "cls-rice+",
        "bin/lane",
        "bin/frame",
        "pred",
        "resid",
        "unary",
    ];
    println!(
        "{:<7} {:>9} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "class",
        "per span",
        "rice b/val",
        "rice",
        "static",
        "cls-rice",
        "cls-rice+",
        "bin/lane",
        "bin/frame",
        "pred",
        "resid",
        "unary"
    );
    let mut totals: HashMap<&str, f64> = HashMap::new();
    for class in CLASSES {
        let n = *t.count.get(&class).unwrap_or(&0) as f64;
        if n == 0.0 {
            continue;
        }
        let static_bits = if class == Class::Token {
            entropy(&t.tokens[&Class::Token])
        } else {
            entropy(&t.hist[&class]) + t.mantissa[&class]
        };
        let mut row = format!(
            "{:<7} {:>9.3} {:>11.2}",
            format!("{class:?}").to_lowercase(),
            n / spans,
            t.bits[&("rice", class)] / n
        );
        for m in models {
            let b = if m == "static" {
                static_bits
            } else {
                t.bits[&(m, class)]
            };
            *totals.entry(m).or_default() += b;
            row += &format!(" {:>9.2}", b / spans);
        }
        println!("{row}");
    }
    let mut row = format!("{:<7} {:>9} {:>11}", "total", "", "");
    for m in models {
        row += &format!(" {:>9.2}", totals[m] / spans);
    }
    println!("{row}   bits/span, events only");
    let header = t.lane_header_bytes as f64 / spans;
    println!("lane headers (thread, dropped, S, base, B): {header:.3} B/span");
    for m in models {
        let stream = match m {
            "static" => totals[m] / 8.0 / spans,
            _ => t.stream_bytes[m] / spans,
        };
        // The per-frame models have one stream: no per-lane B, the rest of the header stays.
        println!(
            "  {m:<9}: streams {stream:.3} B/span (padding{} included) → lanes ≈ {:.3} B/span",
            if matches!(m, "rice" | "static" | "cls-rice" | "cls-rice+") {
                ""
            } else {
                ", 32-bit flush"
            },
            stream + header
        );
    }
    let mut bins: Vec<_> = t.bins.iter().collect();
    bins.sort();
    for (m, b) in bins {
        println!(
            "  {m:<9}: {:.1} binary decisions per span",
            *b as f64 / spans
        );
    }
    // Within 1 bit of entropy? Per coded value, Rice minus the static class+mantissa floor.
    for class in CLASSES {
        let n = *t.count.get(&class).unwrap_or(&0) as f64;
        if n == 0.0 || class == Class::Token {
            continue;
        }
        let floor = entropy(&t.hist[&class]) + t.mantissa[&class];
        println!(
            "  {:<6} rice {:6.2} b/value vs static floor {:6.2} (class entropy {:4.2} + mantissa {:5.2}): gap {:+5.2}",
            format!("{class:?}").to_lowercase(),
            t.bits[&("rice", class)] / n,
            floor / n,
            entropy(&t.hist[&class]) / n,
            t.mantissa[&class] / n,
            (t.bits[&("rice", class)] - floor) / n
        );
    }
}

// ---------------------------------------------------------------- decode cost

/// LZMA's binary range coder: 11-bit probabilities, adaptation shift 5.
struct RangeEncoder {
    low: u64,
    range: u32,
    cache: u8,
    cache_size: u64,
    out: Vec<u8>,
}

impl RangeEncoder {
    fn new() -> Self {
        Self {
            low: 0,
            range: u32::MAX,
            cache: 0,
            cache_size: 1,
            out: Vec::new(),
        }
    }
    fn shift_low(&mut self) {
        if (self.low as u32) < 0xFF00_0000 || (self.low >> 32) != 0 {
            let carry = (self.low >> 32) as u8;
            let mut temp = self.cache;
            loop {
                self.out.push(temp.wrapping_add(carry));
                temp = 0xFF;
                self.cache_size -= 1;
                if self.cache_size == 0 {
                    break;
                }
            }
            self.cache = ((self.low >> 24) & 0xFF) as u8;
        }
        self.cache_size += 1;
        self.low = (self.low & 0x00FF_FFFF) << 8;
    }
    fn bit(&mut self, p: &mut u16, bit: bool) {
        let bound = (self.range >> 11) * u32::from(*p);
        if bit {
            self.low += u64::from(bound);
            self.range -= bound;
            *p -= *p >> 5;
        } else {
            self.range = bound;
            *p += (2048 - *p) >> 5;
        }
        while self.range < 1 << 24 {
            self.range <<= 8;
            self.shift_low();
        }
    }
    fn finish(mut self) -> Vec<u8> {
        for _ in 0..5 {
            self.shift_low();
        }
        self.out
    }
}

struct RangeDecoder<'a> {
    code: u32,
    range: u32,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> RangeDecoder<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let mut d = Self {
            code: 0,
            range: u32::MAX,
            bytes,
            pos: 1,
        };
        for _ in 0..4 {
            d.code = (d.code << 8) | u32::from(d.next());
        }
        d
    }
    #[inline(always)]
    fn next(&mut self) -> u8 {
        let b = self.bytes.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    #[inline(always)]
    fn bit(&mut self, p: &mut u16) -> bool {
        let bound = (self.range >> 11) * u32::from(*p);
        let bit = self.code >= bound;
        if bit {
            self.code -= bound;
            self.range -= bound;
            *p -= *p >> 5;
        } else {
            self.range = bound;
            *p += (2048 - *p) >> 5;
        }
        if self.range < 1 << 24 {
            self.range <<= 8;
            self.code = (self.code << 8) | u32::from(self.next());
        }
        bit
    }
}

/// What the decode-cost loops decode: a frame's events (kinds and values), as the Rice
/// streams of today (one per lane) and as one range-coded stream of class decisions plus
/// one raw stream of mantissas (`unary` binarization, contexts per frame).
pub struct CostFrame {
    /// Per lane: (event kinds, Rice stream). Kind: 0 token, 1 + class index.
    lanes: Vec<(Vec<u8>, Vec<u8>)>,
    /// Per lane, the `cls-rice` stream: tokens raw, a class as a Rice code of its zigzag
    /// difference from the running average class, then the mantissa, in one stream.
    cls: Vec<Vec<u8>>,
    kinds: Vec<u8>,
    range: Vec<u8>,
    raw: Vec<u8>,
    checksum: u64,
}

fn kind(e: &Event) -> (u8, u64) {
    match *e {
        Event::Token { begin, .. } => (0, u64::from(begin)),
        Event::Value { class, value, .. } => (class as u8, value),
    }
}

/// Unary-binarized class state for the range coder: running average class ×16 and 17
/// adaptive probabilities.
#[derive(Clone, Copy)]
struct UnaryProbs {
    avg16: i64,
    p: [u16; 17],
}

impl UnaryProbs {
    fn new(initial_class: i64) -> Self {
        Self {
            avg16: initial_class * 16,
            p: [1024; 17],
        }
    }
}

const INITIAL_CLASS: [i64; 6] = [0, 7, 15, 7, 2, 0];

fn cost_frame(f: &Frame) -> CostFrame {
    use framewise_format::bits::{BitWriter, RiceContext};
    let mut lanes = Vec::new();
    let mut cls = Vec::new();
    let mut kinds = Vec::new();
    let mut enc = RangeEncoder::new();
    let mut raw = Vec::new();
    let mut raw_w = BitWriter::new(&mut raw);
    let mut probs = INITIAL_CLASS.map(UnaryProbs::new);
    let mut token_p = [1024u16; 8];
    let mut last_begin = false;
    let mut checksum = 0u64;
    for lane in &f.lanes {
        let events = lane_events(lane);
        let mut rice_stream = Vec::new();
        let mut lane_kinds = Vec::new();
        let mut cls_stream = Vec::new();
        {
            let mut w = BitWriter::new(&mut cls_stream);
            let mut ctx = [2u64; 6].map(RiceContext::new);
            let mut avg16 = INITIAL_CLASS.map(|c| c * 16);
            for e in &events {
                let (k, v) = kind(e);
                if k == 0 {
                    w.put(v, 1);
                    continue;
                }
                let c = i64::from(bit_len(v));
                let a = &mut avg16[usize::from(k)];
                w.rice(&mut ctx[usize::from(k)], zigzag(c - ((*a + 8) >> 4)));
                *a += (c * 16 - *a) >> 2;
                if c > 1 {
                    w.put(v, (c - 1) as u32);
                }
            }
            w.finish();
        }
        cls.push(cls_stream);
        {
            let mut w = BitWriter::new(&mut rice_stream);
            let mut ctx = INITIAL_MEANS.map(RiceContext::new);
            for e in &events {
                let (k, v) = kind(e);
                lane_kinds.push(k);
                checksum = checksum.wrapping_add(v);
                if k == 0 {
                    w.put(v, 1);
                    let tp = &mut token_p[usize::from(last_begin)];
                    enc.bit(tp, v == 1);
                    last_begin = v == 1;
                    continue;
                }
                w.rice(&mut ctx[usize::from(k)], v);
                let c = i64::from(bit_len(v));
                let u = &mut probs[usize::from(k)];
                let pred = (u.avg16 + 8) >> 4;
                let r = zigzag(c - pred).min(16) as usize;
                for i in 0..r {
                    enc.bit(&mut u.p[i], true);
                }
                if r < 16 {
                    enc.bit(&mut u.p[r], false);
                } else {
                    raw_w.put(c as u64, 7);
                }
                u.avg16 += (c * 16 - u.avg16) >> 2;
                if c > 1 {
                    raw_w.put(v, (c - 1) as u32);
                }
            }
            w.finish();
        }
        kinds.extend_from_slice(&lane_kinds);
        lanes.push((lane_kinds, rice_stream));
    }
    raw_w.finish();
    CostFrame {
        lanes,
        cls,
        kinds,
        range: enc.finish(),
        raw,
        checksum,
    }
}

/// Today's values: Rice codes from one stream per lane.
#[inline(never)]
#[no_mangle]
pub fn dc_rice(frames: &[CostFrame]) -> u64 {
    use framewise_format::bits::{BitReader, RiceContext};
    let mut sum = 0u64;
    for f in frames {
        for (kinds, stream) in &f.lanes {
            let mut r = BitReader::new(std::hint::black_box(stream));
            let mut ctx = INITIAL_MEANS.map(RiceContext::new);
            for &k in kinds {
                let v = if k == 0 {
                    r.get(1)
                } else {
                    r.rice(&mut ctx[usize::from(k)])
                };
                sum = sum.wrapping_add(v.unwrap());
            }
        }
    }
    sum
}

/// The class `zz` (a zigzag difference) away from the running average `avg16` (×16).
#[inline(always)]
fn class_from(avg16: i64, zz: u64) -> i64 {
    ((avg16 + 8) >> 4) + ((zz >> 1) as i64 ^ -((zz & 1) as i64))
}

/// A value of class `c`: its leading one and the mantissa read from `r`.
#[inline(always)]
fn value_of_class(c: i64, r: &mut framewise_format::bits::BitReader<'_>) -> u64 {
    if c <= 1 {
        c as u64
    } else {
        (1 << (c - 1)) | r.get((c - 1) as u32).unwrap()
    }
}

/// The `cls-rice` code: one stream per lane, a Rice code and a raw read per value.
#[inline(never)]
#[no_mangle]
pub fn dc_cls_rice(frames: &[CostFrame]) -> u64 {
    use framewise_format::bits::{BitReader, RiceContext};
    let mut sum = 0u64;
    for f in frames {
        for ((kinds, _), stream) in f.lanes.iter().zip(&f.cls) {
            let mut r = BitReader::new(std::hint::black_box(stream));
            let mut ctx = [2u64; 6].map(RiceContext::new);
            let mut avg16 = INITIAL_CLASS.map(|c| c * 16);
            for &k in kinds {
                if k == 0 {
                    sum = sum.wrapping_add(r.get(1).unwrap());
                    continue;
                }
                let zz = r.rice(&mut ctx[usize::from(k)]).unwrap();
                let a = &mut avg16[usize::from(k)];
                let c = class_from(*a, zz);
                *a += (c * 16 - *a) >> 2;
                sum = sum.wrapping_add(value_of_class(c, &mut r));
            }
        }
    }
    sum
}

/// The `unary` code: class decisions from the range coder, mantissas from a raw stream.
#[inline(never)]
#[no_mangle]
pub fn dc_range(frames: &[CostFrame]) -> u64 {
    use framewise_format::bits::BitReader;
    let mut sum = 0u64;
    for f in frames {
        let mut d = RangeDecoder::new(std::hint::black_box(&f.range));
        let mut raw = BitReader::new(&f.raw);
        let mut probs = INITIAL_CLASS.map(UnaryProbs::new);
        let mut token_p = [1024u16; 8];
        let mut last_begin = false;
        for &k in &f.kinds {
            if k == 0 {
                let b = d.bit(&mut token_p[usize::from(last_begin)]);
                last_begin = b;
                sum = sum.wrapping_add(u64::from(b));
                continue;
            }
            let u = &mut probs[usize::from(k)];
            let mut r = 0usize;
            while r < 16 && d.bit(&mut u.p[r]) {
                r += 1;
            }
            let c = if r == 16 {
                raw.get(7).unwrap() as i64
            } else {
                class_from(u.avg16, r as u64)
            };
            u.avg16 += (c * 16 - u.avg16) >> 2;
            sum = sum.wrapping_add(value_of_class(c, &mut raw));
        }
    }
    sum
}

fn decode_cost() {
    let mut rng = support::Rng::new(9);
    let frames: Vec<Frame> = (0..200)
        .map(|i| support::frame(&mut rng, i, 1_000_000 + i * 16_700_000))
        .collect();
    let spans: usize = frames
        .iter()
        .flat_map(|f| &f.lanes)
        .map(|l| l.spans.len())
        .sum();
    let cost: Vec<CostFrame> = frames.iter().map(cost_frame).collect();
    let want = cost.iter().fold(0u64, |a, f| a.wrapping_add(f.checksum));
    assert_eq!(dc_rice(&cost), want);
    assert_eq!(dc_range(&cost), want);
    assert_eq!(dc_cls_rice(&cost), want);
    let rice_bytes: usize = cost.iter().flat_map(|f| &f.lanes).map(|l| l.1.len()).sum();
    let cls_bytes: usize = cost.iter().flat_map(|f| &f.cls).map(Vec::len).sum();
    let range_bytes: usize = cost.iter().map(|f| f.range.len() + f.raw.len()).sum();
    println!(
        "{} frames, {spans} CPU spans: Rice streams {:.3} B/span, cls-rice streams {:.3} B/span, \
         range + raw streams {:.3} B/span",
        frames.len(),
        rice_bytes as f64 / spans as f64,
        cls_bytes as f64 / spans as f64,
        range_bytes as f64 / spans as f64
    );
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--decode-cost") {
        decode_cost();
        return;
    }
    let mut t = Tally::default();
    match std::env::args().nth(1) {
        Some(path) => {
            let c = read::open(&path).expect("open");
            for f in c.frames().flatten() {
                study_frame(&mut t, &f);
            }
            report(&path, &t);
        }
        None => {
            // The frames of the encoded-size report in benches/format.rs: seed 5, frames
            // 16..1016 after 16 of warm-up.
            let symbols = support::symbols();
            let mut rng = support::Rng::new(5);
            let mut w = Writer::new(Cursor::new(Vec::new()), &support::meta(), &symbols).unwrap();
            for i in 0..16 {
                w.write_frame(
                    &support::frame(&mut rng, i, 1_000 + i * 16_700_000),
                    &symbols,
                )
                .unwrap();
            }
            for i in 16..1016u64 {
                study_frame(&mut t, &support::frame(&mut rng, i, 1_000 + i * 16_700_000));
            }
            report("synthetic realistic frames (tests/support)", &t);
        }
    }
}
