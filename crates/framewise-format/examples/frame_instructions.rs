//! Frame encode and decode loops for counting instructions per span with callgrind, a figure
//! that does not move with the machine's load (see `docs/performance/format.md`):
//!
//! ```text
//! cargo build --release -p framewise-format --example frame_instructions
//! for f in fw_decode fw_decode_into fw_encode fw_encode_bmi2; do
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$f --toggle-collect=$f \
//!     target/release/examples/frame_instructions 2>&1 | grep Collected
//! done
//! ```
//!
//! Each collected function runs over the same 200 realistic frames (4 threads, 200 CPU spans
//! each, 30 GPU passes, 20 counters: `tests/support`); the program prints the span count to
//! divide by. The collected count covers the whole FRAM payload, not only the CPU lanes.
//!
//! With an argument, `target/release/examples/frame_instructions 200` repeats the loops that
//! many times and prints the fastest round of each in ns per span: a rough wall-clock check
//! between two builds on a noisy machine (criterion's `frame` benches are the reported figures).

#[path = "../tests/support/mod.rs"]
mod support;

use framewise_format::model::Frame;
use framewise_format::payload::{self, FrameDecoder};
use std::hint::black_box;

const FRAMES: u64 = 200;

/// `decode_frame` over every payload.
#[inline(never)]
#[no_mangle]
pub fn fw_decode(payloads: &[Vec<u8>]) -> usize {
    let mut spans = 0;
    for p in payloads {
        let (_, frame) = payload::decode_frame(black_box(p)).expect("decode");
        spans += frame.lanes.iter().map(|l| l.spans.len()).sum::<usize>();
    }
    spans
}

/// `FrameDecoder::decode_frame_into` over every payload, into one reused frame.
#[inline(never)]
#[no_mangle]
pub fn fw_decode_into(
    payloads: &[Vec<u8>],
    decoder: &mut FrameDecoder,
    frame: &mut Frame,
) -> usize {
    let mut spans = 0;
    for p in payloads {
        decoder
            .decode_frame_into(black_box(p), frame)
            .expect("decode");
        spans += frame.lanes.iter().map(|l| l.spans.len()).sum::<usize>();
    }
    spans
}

/// `encode_frame` of every frame into one reused buffer.
#[inline(never)]
#[no_mangle]
pub fn fw_encode(frames: &[Frame], out: &mut Vec<u8>) -> usize {
    let mut bytes = 0;
    for f in frames {
        out.clear();
        payload::encode_frame(out, black_box(f), std::iter::empty()).expect("encode");
        bytes += out.len();
    }
    bytes
}

/// [`fw_encode`] through `encode_frame_bmi2` (the encoder built for BMI1, BMI2 and LZCNT),
/// when the CPU has them; otherwise 0 bytes.
#[inline(never)]
#[no_mangle]
pub fn fw_encode_bmi2(frames: &[Frame], out: &mut Vec<u8>) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
    {
        let mut bytes = 0;
        for f in frames {
            out.clear();
            // SAFETY: the CPU has the three features the function is built for (above).
            unsafe { payload::encode_frame_bmi2(out, black_box(f), std::iter::empty()) }
                .expect("encode");
            bytes += out.len();
        }
        return bytes;
    }
    let _ = (frames, out);
    0
}

fn main() {
    let mut rng = support::Rng::new(9);
    let frames: Vec<Frame> = (0..FRAMES)
        .map(|i| support::frame(&mut rng, i, 1_000_000 + i * 16_700_000))
        .collect();
    let payloads: Vec<Vec<u8>> = frames
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            payload::encode_frame(&mut out, f, std::iter::empty()).expect("encode");
            out
        })
        .collect();
    // `-- ROUNDS` repeats both loops, for a sampling profiler (`perf record`).
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let mut out = Vec::with_capacity(1 << 16);
    let (mut spans, mut bytes, mut bytes_bmi2) = (0, 0, 0);
    let mut best_encode_bmi2 = f64::MAX;
    // The fastest round of each loop: a rough wall-clock figure that shrugs off a noisy
    // machine better than a mean (criterion's benches are the reported ones).
    let (mut best_decode, mut best_decode_into, mut best_encode) = (f64::MAX, f64::MAX, f64::MAX);
    let mut decoder = FrameDecoder::new();
    let mut frame = Frame::default();
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        spans = fw_decode(&payloads);
        best_decode = best_decode.min(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        assert_eq!(fw_decode_into(&payloads, &mut decoder, &mut frame), spans);
        best_decode_into = best_decode_into.min(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        bytes = fw_encode(&frames, &mut out);
        best_encode = best_encode.min(t.elapsed().as_secs_f64());
        let t = std::time::Instant::now();
        bytes_bmi2 = fw_encode_bmi2(&frames, &mut out);
        best_encode_bmi2 = best_encode_bmi2.min(t.elapsed().as_secs_f64());
    }
    println!("{FRAMES} frames, {spans} CPU spans, {bytes} payload bytes");
    println!(
        "encode_frame_bmi2: {bytes_bmi2} payload bytes (0: the CPU lacks BMI1, BMI2 or LZCNT)"
    );
    if rounds > 1 {
        let per_span = |s: f64| s * 1e9 / spans as f64;
        println!(
            "fastest of {rounds} rounds: decode {:.1} ns/span, decode_into {:.1} ns/span, \
             encode {:.1} ns/span, encode_frame_bmi2 {:.1} ns/span",
            per_span(best_decode),
            per_span(best_decode_into),
            per_span(best_encode),
            per_span(best_encode_bmi2)
        );
    }
}
