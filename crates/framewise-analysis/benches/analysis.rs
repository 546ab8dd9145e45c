//! Analysis benchmarks: load + summarize of an `.sgpt` (the same realistic 200-span frames
//! the format crate benchmarks), `.litecap` v4 decode (1024 frames, 8 phases), and Chrome
//! trace export throughput.
//!
//! `cargo bench -p framewise-analysis --bench analysis`
//!
//! With `FRAMEWISE_BENCH_HOUR=1` it also writes a one-hour 60 Hz capture (216,000 frames,
//! ~43 M spans) once — to `FRAMEWISE_BENCH_HOUR_FILE` if set, else into the target
//! directory — then times one `open` + `summarize` on it and prints the wall time and the
//! peak resident memory against the file size (the targets are ≤ 3 s and ≤ 1.5 × the file
//! size). The same file is what `framewise summarize` is timed on.
#![allow(missing_docs)]

#[path = "../../framewise-format/tests/support/mod.rs"]
mod support;

use std::hint::black_box;
use std::io::{BufWriter, Cursor};
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use framewise_analysis::import::litecap::{self, InstantLane, Litecap, SpanLane, Timeline};
use framewise_analysis::{load, summarize, write_trace, LoadOptions, TraceOptions};
use framewise_format::model::Frame;
use framewise_format::Writer;

fn sgpt(frames: u64) -> (Vec<u8>, u64) {
    let symbols = support::symbols();
    let mut rng = support::Rng::new(7);
    let mut w = Writer::new(Cursor::new(Vec::new()), &support::meta(), &symbols).expect("writer");
    let mut spans = 0u64;
    for i in 0..frames {
        let f = support::frame(&mut rng, i, 1_000_000 + i * 16_700_000);
        spans += f.lanes.iter().map(|l| l.spans.len() as u64).sum::<u64>();
        w.write_frame(&f, &symbols).expect("frame");
    }
    (w.finish_and_close(&[]).expect("close").into_inner(), spans)
}

fn litecap_v4() -> Vec<u8> {
    let n = 1024;
    let frames_ms: Vec<f32> = (0..n).map(|i| 16.0 + (i % 9) as f32 * 0.1).collect();
    let starts: Vec<f64> = (0..n).map(|i| 1000.0 + i as f64 * 16.7).collect();
    litecap::encode(&Litecap {
        version: 4,
        frames_ms,
        phase_tags: (0..8).map(|p| format!("phase_{p}")).collect(),
        phases_ms: (0..8)
            .map(|p| (0..n).map(|i| 1.0 + ((i + p) % 5) as f32).collect())
            .collect(),
        meta: Some(serde_json::json!({"label": "bench"})),
        meta_invalid: false,
        counter_tags: vec!["drawCalls".into()],
        counters: vec![vec![120.0; n]],
        timeline: Some(Timeline {
            spans: (0..8)
                .map(|p| SpanLane {
                    tag: format!("phase_{p}"),
                    t0_ms: starts.iter().map(|s| s + p as f64).collect(),
                    t1_ms: starts.iter().map(|s| s + p as f64 + 0.5).collect(),
                })
                .collect(),
            instants: vec![InstantLane {
                tag: "gc".into(),
                times_ms: vec![2000.0],
            }],
            frame_starts_ms: starts,
        }),
        trailing_bytes: 0,
    })
}

fn benches(c: &mut Criterion) {
    let (bytes, spans) = sgpt(2_000);
    let mut g = c.benchmark_group("summarize");
    g.sample_size(10);
    g.throughput(Throughput::Elements(spans));
    g.bench_function("sgpt_2000_frames_load_and_summarize", |b| {
        b.iter(|| {
            let cap = load::from_bytes(bytes.clone(), &LoadOptions::default()).expect("loads");
            black_box(summarize(&cap))
        })
    });
    g.finish();

    let lc = litecap_v4();
    let mut g = c.benchmark_group("litecap");
    g.throughput(Throughput::Bytes(lc.len() as u64));
    g.bench_function("decode_v4_1024x8", |b| {
        b.iter(|| black_box(litecap::decode(&lc).expect("valid")))
    });
    g.finish();

    let cap =
        load::from_bytes(bytes.clone(), &LoadOptions::default().with_spans(true)).expect("loads");
    let mut out = Vec::new();
    write_trace(&cap, TraceOptions::default(), &mut out).expect("exports");
    let mut g = c.benchmark_group("trace");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(out.len() as u64));
    g.bench_function("export_2000_frames", |b| {
        b.iter(|| {
            let mut sink = Vec::with_capacity(out.len());
            write_trace(&cap, TraceOptions::default(), &mut sink).expect("exports");
            black_box(sink)
        })
    });
    g.finish();

    if std::env::var_os("FRAMEWISE_BENCH_HOUR").is_some() {
        hour();
    }
}

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// One hour at 60 Hz, written once under target/ and kept.
fn hour() {
    let frames: u64 = std::env::var("FRAMEWISE_BENCH_HOUR_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(216_000);
    // FRAMEWISE_BENCH_HOUR_FILE names the file (to time `framewise summarize` on the same
    // capture); by default it goes in the target directory.
    let path = match std::env::var_os("FRAMEWISE_BENCH_HOUR_FILE") {
        Some(p) => PathBuf::from(p),
        None => std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(
                || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"),
                PathBuf::from,
            )
            .join(format!("bench-analysis-{frames}.sgpt")),
    };
    if std::fs::metadata(&path).is_err() {
        eprintln!("writing {} (once)…", path.display());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("the capture's directory");
        }
        let symbols = support::symbols();
        let mut rng = support::Rng::new(12);
        let pool: Vec<Frame> = (0..512).map(|i| support::frame(&mut rng, i, 0)).collect();
        let file = BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).expect("create"));
        let mut w = Writer::new(file, &support::meta(), &symbols).expect("writer");
        for i in 0..frames {
            let mut f = pool[(i % 512) as usize].clone();
            let shift = 1_000_000 + i * 16_666_667;
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
            w.write_frame(&f, &symbols).expect("frame");
        }
        let mut file = w.finish_and_close(&[]).expect("finish");
        std::io::Write::flush(&mut file).expect("flush");
    }
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if std::env::var_os("FRAMEWISE_BENCH_DECODE_ONLY").is_some() {
        // The format crate's own share, read the way the loader reads (`read_frames_into`:
        // 1 MiB pieces, every frame decoded into one reused frame), nothing kept; then the
        // same with one positioned read per frame (`read_frame_into`).
        let r = framewise_format::read::open(&path).expect("opens");
        let mut decoder = framewise_format::payload::FrameDecoder::new();
        let mut frame = Frame::default();
        let t = std::time::Instant::now();
        let mut spans = 0usize;
        r.read_frames_into(0..r.frame_count(), &mut decoder, &mut frame, |_, f| {
            if let Ok(f) = f {
                spans += f.lanes.iter().map(|l| l.spans.len()).sum::<usize>();
            }
        });
        let pieces = t.elapsed();
        let t = std::time::Instant::now();
        let mut again = 0usize;
        for i in 0..r.frame_count() {
            if r.read_frame_into(i, &mut decoder, &mut frame).is_ok() {
                again += frame.lanes.iter().map(|l| l.spans.len()).sum::<usize>();
            }
        }
        let per_frame = t.elapsed();
        assert_eq!(spans, again, "both reads decode the same spans");
        eprintln!(
            "hour: decode only {:.2} s in 1 MiB pieces, {:.2} s with a read per frame, for {spans} spans",
            pieces.as_secs_f64(),
            per_frame.as_secs_f64(),
        );
    }
    let before = peak_rss_bytes().unwrap_or(0);
    let t = std::time::Instant::now();
    let summary_only = std::env::var_os("FRAMEWISE_BENCH_FULL").is_none();
    let opts = LoadOptions::default().with_summary_only(summary_only);
    let cap = load::open(&path, &opts).expect("loads");
    let loaded = t.elapsed();
    let after_load = peak_rss_bytes().unwrap_or(0);
    eprintln!(
        "hour (summary_only {summary_only}): {} scope aggregates ({:.1} MB), {} pass aggregates, {} counter values; peak after load {:.1} MB",
        cap.scope_aggs().all().len(),
        std::mem::size_of_val(cap.scope_aggs().all()) as f64 / 1e6,
        cap.pass_aggs().all().len(),
        cap.counter_values().all().len(),
        after_load as f64 / 1e6
    );
    let s = summarize(&cap);
    let total = t.elapsed();
    let peak = peak_rss_bytes().unwrap_or(0);
    eprintln!(
        "hour: {frames} frames, file {:.1} MB; load {:.2} s, load+summarize {:.2} s; peak RSS {:.1} MB ({:.2} x file; {:.1} MB before loading); {} scopes",
        size as f64 / 1e6,
        loaded.as_secs_f64(),
        total.as_secs_f64(),
        peak as f64 / 1e6,
        peak as f64 / size.max(1) as f64,
        before as f64 / 1e6,
        s.scopes.len()
    );
}

criterion_group!(analysis, benches);
criterion_main!(analysis);
