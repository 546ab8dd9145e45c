//! Format benchmarks: scan-read throughput (with CRC), opening a CLOSED 1 GB capture by its
//! directory, frame encode/decode, and the encoded size of a realistic frame.
//!
//! `cargo bench -p framewise-format --bench format` (`-- frame` for the frame group alone:
//! the scan and open groups build their 200 MiB and 1 GiB inputs only when they run).
#![allow(missing_docs)]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use framewise_format::model::Frame;
use framewise_format::{payload, read, Writer};
use std::hint::black_box;
use std::io::{BufWriter, Cursor};
use std::path::PathBuf;
use std::sync::OnceLock;

/// Builds a capture of at least `min_bytes` from realistic frames.
fn capture_of(min_bytes: u64) -> Vec<u8> {
    let symbols = support::symbols();
    let mut rng = support::Rng::new(11);
    let mut w = Writer::new(
        Cursor::new(Vec::with_capacity(min_bytes as usize + (1 << 20))),
        &support::meta(),
        &symbols,
    )
    .expect("writer");
    let mut i = 0;
    while w.bytes_written() < min_bytes {
        let f = support::frame(&mut rng, i, 1_000_000 + i * 16_700_000);
        w.write_frame(&f, &symbols).expect("frame");
        i += 1;
    }
    w.finish_and_close(&[]).expect("finish").into_inner()
}

/// A CLOSED capture of at least 1 GiB on disk, made once and kept under target/.
fn big_file() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-1gib.sgpt");
    let big_enough = std::fs::metadata(&path)
        .map(|m| m.len() >= 1 << 30)
        .unwrap_or(false);
    if big_enough
        && read::open(&path)
            .map(|c| c.opened_by_directory())
            .unwrap_or(false)
    {
        return path;
    }
    eprintln!("writing {} (once)…", path.display());
    let symbols = support::symbols();
    let mut rng = support::Rng::new(12);
    // Encode a pool of frames once and re-index them: the file's size is what matters.
    let pool: Vec<Frame> = (0..512).map(|i| support::frame(&mut rng, i, 0)).collect();
    let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).expect("create"));
    let mut w = Writer::new(file, &support::meta(), &symbols).expect("writer");
    let mut i = 0u64;
    while w.bytes_written() < (1 << 30) {
        let mut f = pool[(i % 512) as usize].clone();
        let shift = 1_000_000 + i * 16_700_000;
        f.index = i;
        f.cpu_begin_ns += shift;
        f.cpu_end_ns += shift;
        for lane in &mut f.lanes {
            for s in &mut lane.spans {
                s.start_ns += shift;
                s.end_ns += shift;
            }
        }
        for m in &mut f.marks {
            m.at_ns += shift;
        }
        for q in &mut f.gpu.queues {
            q.anchor.cpu_submit_ns = q.anchor.cpu_submit_ns.map(|t| t + shift);
            q.anchor.cpu_readback_ns = q.anchor.cpu_readback_ns.map(|t| t + shift);
        }
        w.write_frame(&f, &symbols).expect("frame");
        i += 1;
    }
    w.finish_and_close(&[]).expect("finish");
    path
}

fn encoded_size_report() {
    let symbols = support::symbols();
    let mut rng = support::Rng::new(5);
    let mut w = Writer::new(Cursor::new(Vec::new()), &support::meta(), &symbols).expect("writer");
    // Warm up: the first frames carry symbol definitions; steady state is what counts.
    for i in 0..16 {
        w.write_frame(
            &support::frame(&mut rng, i, 1_000 + i * 16_700_000),
            &symbols,
        )
        .expect("frame");
    }
    let (mut total, mut lanes_bytes, mut spans, mut frames) = (0usize, 0usize, 0usize, 0usize);
    for i in 16..1016u64 {
        let f = support::frame(&mut rng, i, 1_000 + i * 16_700_000);
        let mut whole = Vec::new();
        payload::encode_frame(&mut whole, &f, std::iter::empty()).expect("encode");
        let mut no_lanes = Vec::new();
        let stripped = Frame {
            lanes: Vec::new(),
            ..f.clone()
        };
        payload::encode_frame(&mut no_lanes, &stripped, std::iter::empty()).expect("encode");
        total += whole.len() + 16;
        lanes_bytes += whole.len() - no_lanes.len();
        spans += f.lanes.iter().map(|l| l.spans.len()).sum::<usize>();
        frames += 1;
    }
    eprintln!(
        "encoded size, realistic frame (4 threads, {} CPU spans, 30 GPU passes, 20 counters), steady state over {frames} frames:\n  \
         whole record {:.0} B/frame = {:.2} B per CPU span; CPU lanes alone {:.2} B per CPU span",
        spans / frames,
        total as f64 / frames as f64,
        total as f64 / spans as f64,
        lanes_bytes as f64 / spans as f64,
    );
}

fn benches(c: &mut Criterion) {
    encoded_size_report();

    // The big inputs are built lazily, inside the benchmarks that use them, so that a filtered
    // run (`-- frame`) does not spend minutes writing files it will not read.
    let bytes = OnceLock::new();
    let bytes = || bytes.get_or_init(|| capture_of(200 << 20));
    let unclosed = OnceLock::new();
    let unclosed = || {
        unclosed.get_or_init(|| {
            let mut v = bytes().clone();
            v[8] = 0;
            v
        })
    };
    let mut g = c.benchmark_group("scan");
    g.sample_size(10);
    // The capture is at least 200 MiB and a few KiB more; the figure is per 200 MiB.
    g.throughput(Throughput::Bytes(200 << 20));
    g.bench_function("scan_records_crc_200MiB", |b| {
        let bytes = bytes();
        b.iter(|| black_box(read::scan_records(black_box(bytes))))
    });
    g.bench_function("open_by_scan_200MiB", |b| {
        let unclosed = unclosed();
        b.iter_batched(
            || unclosed.clone(),
            |v| black_box(read::from_bytes(v).expect("open")),
            BatchSize::PerIteration,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("open");
    g.sample_size(20);
    g.bench_function("open_closed_1GiB_by_directory", |b| {
        let path = big_file();
        b.iter(|| {
            let c = read::open(&path).expect("open");
            assert!(c.opened_by_directory());
            black_box(c.frame_count())
        })
    });
    g.finish();

    let mut rng = support::Rng::new(9);
    let frame = support::frame(&mut rng, 100, 5_000_000);
    let spans: usize = frame.lanes.iter().map(|l| l.spans.len()).sum();
    let mut encoded = Vec::new();
    payload::encode_frame(&mut encoded, &frame, std::iter::empty()).expect("encode");
    let mut g = c.benchmark_group("frame");
    // Elements are CPU spans: criterion's element rate is spans per second.
    g.throughput(Throughput::Elements(spans as u64));
    g.bench_function("encode_realistic_frame", |b| {
        let mut out = Vec::with_capacity(4096);
        b.iter(|| {
            out.clear();
            payload::encode_frame(&mut out, black_box(&frame), std::iter::empty()).expect("encode");
            black_box(out.len())
        })
    });
    g.bench_function("decode_realistic_frame", |b| {
        b.iter(|| black_box(payload::decode_frame(black_box(&encoded)).expect("decode")))
    });
    g.bench_function("decode_realistic_frame_into", |b| {
        let mut decoder = payload::FrameDecoder::new();
        let mut into = Frame::default();
        b.iter(|| {
            decoder
                .decode_frame_into(black_box(&encoded), &mut into)
                .expect("decode");
            black_box(into.lanes.len())
        })
    });
    g.finish();

    // The same work over 256 different frames per iteration: a branch predictor can learn the
    // token pattern of one frame decoded again and again, never those of a whole capture.
    // Elements are CPU spans, so the element rate is spans per second.
    let mut rng = support::Rng::new(21);
    let frames: Vec<Frame> = (0..256)
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
    let spans: usize = frames
        .iter()
        .map(|f| f.lanes.iter().map(|l| l.spans.len()).sum::<usize>())
        .sum();
    let mut g = c.benchmark_group("frames");
    g.throughput(Throughput::Elements(spans as u64));
    g.bench_function("encode_256_realistic_frames", |b| {
        let mut out = Vec::with_capacity(4096);
        b.iter(|| {
            for f in &frames {
                out.clear();
                payload::encode_frame(&mut out, black_box(f), std::iter::empty()).expect("encode");
            }
            black_box(out.len())
        })
    });
    g.bench_function("decode_256_realistic_frames", |b| {
        b.iter(|| {
            for p in &payloads {
                black_box(payload::decode_frame(black_box(p)).expect("decode"));
            }
        })
    });
    g.bench_function("decode_256_realistic_frames_into", |b| {
        let mut decoder = payload::FrameDecoder::new();
        let mut into = Frame::default();
        b.iter(|| {
            for p in &payloads {
                decoder
                    .decode_frame_into(black_box(p), &mut into)
                    .expect("decode");
                black_box(into.lanes.len());
            }
        })
    });
    g.finish();
}

criterion_group!(format_benches, benches);
criterion_main!(format_benches);
