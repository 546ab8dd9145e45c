//! The encoder's bytes are pinned: any change to what a writer emits for the same frames,
//! however fast, is a format change and fails here. The constants were recorded from the
//! encoder as it stood before the bit coder was rewritten for speed.

use crate::support;
use framewise_format::model::*;
use framewise_format::payload;

/// FNV-1a, 64 bits: stable across platforms and Rust versions (unlike `DefaultHasher`).
fn fnv1a64(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Lanes that exercise the coder's corners: escapes, 64-bit gaps and durations, large and
/// negative symbol deltas, deep top-level spans, and empty lanes.
fn edge_frame(rng: &mut support::Rng, index: u64) -> Frame {
    let mut lanes = Vec::new();
    for lane in 0..6u32 {
        let mut spans: Vec<CpuSpan> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let mut t: u64 = rng.below(1 << 20);
        let mut top_depth = rng.below(3) as u32;
        let events = rng.below(120);
        for _ in 0..events {
            let step = match rng.below(8) {
                0 => 0,
                1 => rng.below(4),
                2 => rng.log_uniform(1, 1 << 12),
                3 => rng.log_uniform(1 << 12, 1 << 30),
                4 => rng.log_uniform(1 << 30, 1 << 50),
                _ => rng.log_uniform(10, 100_000),
            };
            let Some(next) = t.checked_add(step) else {
                break;
            };
            if next > u64::MAX / 2 {
                break;
            }
            t = next;
            if rng.below(3) == 0 && !stack.is_empty() {
                if let Some(i) = stack.pop() {
                    spans[i].end_ns = t;
                }
            } else {
                let depth = match stack.last() {
                    Some(&parent) => spans[parent].depth + 1,
                    None => {
                        top_depth += u32::from(rng.below(4) == 0);
                        if rng.below(50) == 0 {
                            top_depth = top_depth.wrapping_add(1 << 28);
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
            let bits = rng.below(60) as u32;
            t += rng.below(1 << bits);
            spans[i].end_ns = t;
        }
        lanes.push(Lane {
            thread: 1 + lane,
            spans,
            dropped_spans: rng.below(3),
        });
    }
    // One lane with a single span whose duration is at the top of the u64 range.
    lanes.push(Lane {
        thread: 9,
        spans: vec![CpuSpan {
            scope: 7,
            depth: u32::MAX,
            start_ns: 0,
            end_ns: u64::MAX,
        }],
        dropped_spans: 0,
    });
    Frame {
        index,
        cpu_begin_ns: 5,
        cpu_end_ns: 1 << 40,
        lanes,
        ..Frame::default()
    }
}

/// Hashes the FRAM payloads of `n` realistic frames (the generator the benches use).
fn realistic_hash(seed: u64, n: u64) -> (u64, usize) {
    let mut rng = support::Rng::new(seed);
    let mut hash = FNV_OFFSET;
    let mut total = 0;
    let mut out = Vec::new();
    for i in 0..n {
        let f = support::frame(&mut rng, i, 1_000_000 + i * 16_700_000);
        out.clear();
        payload::encode_frame(&mut out, &f, std::iter::empty()).expect("encode");
        fnv1a64(&mut hash, &out);
        total += out.len();
        assert_eq!(payload::decode_frame(&out).expect("decode").1, f);
    }
    (hash, total)
}

#[test]
fn realistic_frames_encode_to_pinned_bytes() {
    assert_eq!(realistic_hash(9, 400), (8426684386603325765, 550433));
    assert_eq!(realistic_hash(1, 400), (224900625824277380, 550893));
}

#[test]
fn edge_case_lanes_encode_to_pinned_bytes() {
    let mut rng = support::Rng::new(77);
    let mut hash = FNV_OFFSET;
    let mut total = 0;
    let mut out = Vec::new();
    for i in 0..300 {
        let f = edge_frame(&mut rng, i);
        out.clear();
        payload::encode_frame(&mut out, &f, std::iter::empty()).expect("encode");
        fnv1a64(&mut hash, &out);
        total += out.len();
        assert_eq!(payload::decode_frame(&out).expect("decode").1, f);
    }
    assert_eq!((hash, total), (14565136902164593263, 1111948));
}

#[test]
fn whole_capture_encodes_to_pinned_bytes() {
    let (bytes, _, _) = support::capture(120, 1, true);
    let mut hash = FNV_OFFSET;
    fnv1a64(&mut hash, &bytes);
    // Frame 17 of the fixture says a frame was dropped before it: frame 16's directory
    // period is unknown (the one period rule), not the begin-to-begin difference. Format
    // version 2 changed the header's version field and checksum only: same length.
    assert_eq!((hash, bytes.len()), (10339363581710111075, 180043));
}

#[test]
fn committed_sample_is_what_the_writer_writes_today() {
    let (bytes, _, _) = support::capture(12, 42, true);
    let committed = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sample-v1.sgpt"
    ))
    .expect("sample");
    assert!(
        bytes[32..] == committed[32..],
        "the writer no longer reproduces sample-v1.sgpt's records"
    );
    // Version 2 changed the header's version field (and so its checksum) only.
    assert_eq!(bytes[6..8], committed[6..8], "min_reader_version stays 1");
    let v2 = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/sample-v2.sgpt"
    ))
    .expect("sample v2");
    assert!(
        crate::sample::sample_v2() == v2,
        "the writer no longer reproduces sample-v2.sgpt"
    );
}
