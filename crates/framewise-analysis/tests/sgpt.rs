//! The `.sgpt` loader, against files written by `framewise-format`'s own writer.

use std::io::Cursor;

use framewise_analysis::model::{DefectKind, SourceKind, TimingGrade};
use framewise_analysis::{find_hitches, load, summarize, HitchKind, HitchOptions, LoadOptions};
use framewise_format::model::*;
use framewise_format::Writer;

const MS: u64 = 1_000_000;
const MAIN: SymId = 1;
const FRAME: SymId = 2;
const PHYSICS: SymId = 3;
const QUEUE: SymId = 4;
const SHADOW: SymId = 5;
const DRAWS: SymId = 6;
const PIPES: SymId = 7;
const PLAY: SymId = 8;
const GC: SymId = 9;

pub fn symbols() -> SymbolTable {
    let mut t = SymbolTable::new();
    let mut add = |id, kind, name: &str| {
        t.insert(Symbol {
            id,
            kind,
            name: name.into(),
        });
    };
    add(MAIN, SymbolKind::Thread, "main");
    add(
        FRAME,
        SymbolKind::Scope {
            file: "src/main.rs".into(),
            line: 20,
        },
        "frame",
    );
    add(
        PHYSICS,
        SymbolKind::Scope {
            file: "src/physics.rs".into(),
            line: 42,
        },
        "physics",
    );
    add(QUEUE, SymbolKind::Queue, "graphics");
    add(SHADOW, SymbolKind::Pass, "shadow");
    add(DRAWS, SymbolKind::Counter(CounterKind::Sum), "draw_calls");
    add(
        PIPES,
        SymbolKind::Counter(CounterKind::Sum),
        "pipelines_created",
    );
    add(PLAY, SymbolKind::Phase, "play");
    add(GC, SymbolKind::Mark, "gc");
    t
}

pub fn meta(adapter_type: AdapterType) -> Meta {
    Meta {
        capture_level: 2,
        build_id: "abc123".into(),
        gpu_clocks: vec![GpuQueueClock {
            queue: QUEUE,
            timestamp_period_ns: 2.5,
        }],
        adapter: Some(AdapterInfo {
            vendor: "ACME".into(),
            device: "Rocket".into(),
            adapter_type,
            ..AdapterInfo::default()
        }),
        ..Meta::default()
    }
}

/// `frames` frames of 16 ms; frame 150 compiles pipelines and runs physics 40 ms longer.
pub fn frame(i: u64) -> Frame {
    let begin = 10 * MS + i * 16 * MS + if i > 150 { 40 * MS } else { 0 };
    let physics_ns = if i == 150 { 42 * MS } else { 2 * MS };
    let work = 6 * MS + physics_ns;
    Frame {
        index: i,
        phase: Some(PLAY),
        cpu_begin_ns: begin,
        cpu_end_ns: begin + work,
        lanes: vec![Lane {
            thread: MAIN,
            spans: vec![
                CpuSpan {
                    scope: FRAME,
                    depth: 0,
                    start_ns: begin,
                    end_ns: begin + work,
                },
                CpuSpan {
                    scope: PHYSICS,
                    depth: 1,
                    start_ns: begin + MS,
                    end_ns: begin + MS + physics_ns,
                },
            ],
            dropped_spans: 0,
        }],
        gpu: GpuFrame {
            expected: true,
            results_missing: false,
            queues: vec![GpuQueueFrame {
                queue: QUEUE,
                anchor: GpuAnchor {
                    cpu_submit_ns: Some(begin + work),
                    cpu_readback_ns: None,
                },
            }],
            // 1.2 M ticks × 2.5 ns = 3 ms.
            passes: vec![GpuPass {
                pass: SHADOW,
                queue_index: 0,
                depth: 0,
                timing: Some(GpuTiming {
                    begin_ticks: 1000 + i,
                    end_ticks: 1000 + i + 1_200_000,
                }),
            }],
        },
        counters: vec![
            CounterValue {
                counter: DRAWS,
                value: 300,
            },
            CounterValue {
                counter: PIPES,
                value: if i == 150 { 2 } else { 0 },
            },
        ],
        marks: if i == 10 {
            vec![Mark {
                name: GC,
                thread: MAIN,
                at_ns: begin + MS,
                kind: MarkKind::Instant,
            }]
        } else {
            vec![]
        },
        ..Frame::default()
    }
}

pub fn write(frames: u64, adapter_type: AdapterType) -> Vec<u8> {
    let symbols = symbols();
    let mut w =
        Writer::new(Cursor::new(Vec::new()), &meta(adapter_type), &symbols).expect("writer");
    for i in 0..frames {
        w.write_frame(&frame(i), &symbols).expect("frame");
    }
    w.finish_and_close(&[]).expect("close").into_inner()
}

#[test]
fn closed_capture_loads_and_summarizes() {
    let c = load::from_bytes(write(300, AdapterType::Hardware), &LoadOptions::default())
        .expect("loads");
    assert_eq!(c.meta().source, SourceKind::Sgpt);
    assert_eq!(c.meta().level.as_deref(), Some("workload"));
    assert_eq!(c.meta().build.as_deref(), Some("abc123"));
    assert_eq!(c.meta().adapter_name.as_deref(), Some("ACME Rocket"));
    assert!(c.defects().is_empty(), "{:?}", c.defects());
    let s = summarize(&c);
    assert_eq!(s.grade.timing, TimingGrade::Hardware);
    assert_eq!(s.frame.times.count, 299);
    assert_eq!(s.frame.times.p50, Some(16.0));
    // GPU ticks are converted with META's 2.5 ns per tick.
    assert_eq!(s.metric("pass.shadow.max"), Some(3.0));
    assert_eq!(c.frames().gpu_ns[0], Some(3 * MS));
    assert_eq!(s.metric("counter.draw_calls.sum"), Some(300.0 * 300.0));
    assert_eq!(
        s.scopes.get("physics").map(|p| p.sites.clone()),
        Some(vec!["src/physics.rs:42".to_owned()])
    );
    assert_eq!(c.marks().len(), 1);
}

#[test]
fn hitch_in_an_sgpt_is_classified() {
    let c = load::from_bytes(write(300, AdapterType::Hardware), &LoadOptions::default())
        .expect("loads");
    let r = find_hitches(&c, &HitchOptions::default());
    assert_eq!(
        r.hitches.iter().map(|h| h.frame).collect::<Vec<_>>(),
        vec![150]
    );
    let guesses: Vec<HitchKind> = r.hitches[0]
        .classification
        .iter()
        .map(|g| g.guess)
        .collect();
    assert_eq!(
        guesses,
        vec![HitchKind::PipelineCompile, HitchKind::LongCpuScope]
    );
    assert_eq!(
        r.hitches[0].classification[1].scope.as_deref(),
        Some("physics")
    );
}

#[test]
fn software_adapter_grades_software() {
    let c =
        load::from_bytes(write(5, AdapterType::Software), &LoadOptions::default()).expect("loads");
    assert_eq!(c.grade().timing, TimingGrade::Software);
}

#[test]
fn a_cut_off_capture_recovers_whole_frames_and_says_so() {
    let symbols = symbols();
    let mut w = Writer::new(
        Cursor::new(Vec::new()),
        &meta(AdapterType::Hardware),
        &symbols,
    )
    .expect("writer");
    for i in 0..40 {
        w.write_frame(&frame(i), &symbols).expect("frame");
    }
    let mut bytes = w.finish(&[]).expect("finish").into_inner();
    // Not closed, then cut inside the directory record: a crash while stopping.
    bytes.truncate(bytes.len() - 7);
    let c = load::from_bytes(bytes, &LoadOptions::default()).expect("recovers");
    assert_eq!(c.frame_count(), 40);
    let kinds: Vec<DefectKind> = c.defects().iter().map(|d| d.kind).collect();
    assert!(kinds.contains(&DefectKind::TruncatedTail), "{kinds:?}");
    assert!(summarize(&c)
        .defects
        .iter()
        .any(|d| d.kind == DefectKind::TruncatedTail));
}

#[test]
fn spans_are_kept_on_request_and_export() {
    let c = load::from_bytes(
        write(20, AdapterType::Hardware),
        &LoadOptions::default().with_spans(true),
    )
    .expect("loads");
    let spans = c.spans().expect("kept");
    assert_eq!(spans.cpu.all().len(), 40);
    assert_eq!(spans.gpu.all().len(), 20);
    let g = spans.gpu.frame(0)[0];
    assert_eq!(g.nominal_end_ns - g.nominal_start_ns, 3 * MS);
    let mut out = Vec::new();
    framewise_analysis::write_trace(
        &c,
        framewise_analysis::TraceOptions { normalize: true },
        &mut out,
    )
    .expect("exports");
    let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
    assert!(v["traceEvents"].as_array().map_or(0, Vec::len) > 60);
}

#[test]
fn the_format_crates_committed_sample_loads() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../framewise-format/tests/data/sample-v1.sgpt"
    );
    let c = load::open(path, &LoadOptions::default()).expect("sample loads");
    assert_eq!(c.frame_count(), 12);
    // The sample records 12 dropped spans; they are shown, never hidden.
    let kinds: Vec<(DefectKind, u64)> = c.defects().iter().map(|d| (d.kind, d.count)).collect();
    assert_eq!(kinds, vec![(DefectKind::DroppedSpans, 12)]);
    let s = summarize(&c);
    assert_eq!(s.capture.dropped_spans, 12);
    assert_eq!(
        s.frame.times.count + s.capture.frames_without_period + s.capture.frames_paused,
        12
    );
    assert!(!s.scopes.is_empty());
    assert_eq!(s.counters.len(), 20);
}

#[test]
fn not_an_sgpt_is_an_error_with_the_reason() {
    let e = load::from_bytes(
        b"SGPT but not really a capture".to_vec(),
        &LoadOptions::default(),
    )
    .expect_err("bad");
    assert!(e.to_string().starts_with("sgpt: "), "{e}");
}

#[test]
fn summary_only_sgpt_load_matches() {
    let bytes = write(300, AdapterType::Hardware);
    let full = summarize(&load::from_bytes(bytes.clone(), &LoadOptions::default()).expect("loads"));
    let opts = LoadOptions::default().with_summary_only(true);
    let lean = summarize(&load::from_bytes(bytes, &opts).expect("loads"));
    assert_eq!(lean.metrics(), full.metrics());
}

/// The directory read alone gives every frame's row of a full load: index, begin, work,
/// period, GPU time, paused, and the hitch rule's flag (the hitches `find_hitches` finds).
#[test]
fn the_frame_directory_matches_a_full_load() {
    let dir = std::env::temp_dir().join(format!("framewise-analysis-dire-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("closed.sgpt");
    std::fs::write(&path, write(300, AdapterType::Hardware)).expect("write");
    let d = load::frame_directory(&path)
        .expect("reads")
        .expect("a closed capture has a directory");
    let c = load::open(&path, &LoadOptions::default()).expect("loads");
    let f = c.frames();
    assert_eq!(d.len(), 300);
    assert_eq!(d.index, f.index);
    assert_eq!(d.cpu_begin_ns, f.cpu_begin_ns);
    assert_eq!(d.period_ns, f.period_ns);
    assert_eq!(d.gpu_ns, f.gpu_ns);
    assert_eq!(d.paused, f.paused);
    assert_eq!(d.work_ns, f.rows().map(|r| r.work_ns()).collect::<Vec<_>>());
    assert_eq!(d.frame_budget_ns, c.frame_budget_ns());
    let hitches: Vec<u64> = find_hitches(&c, &HitchOptions::default())
        .hitches
        .iter()
        .map(|h| h.frame)
        .collect();
    let flagged: Vec<u64> = (0..d.len())
        .filter(|&r| d.hitch[r])
        .map(|r| d.index[r])
        .collect();
    assert_eq!(flagged, hitches);
    assert_eq!(flagged, vec![150]);

    // Not closed (cut off, or still being written): no directory to read, only a scan.
    let mut bytes = std::fs::read(&path).expect("read");
    bytes.truncate(bytes.len() / 2);
    let cut = dir.join("cut.sgpt");
    std::fs::write(&cut, &bytes).expect("write");
    assert_eq!(load::frame_directory(&cut).expect("reads the header"), None);
    // Not an .sgpt at all.
    let json = dir.join("trace.json");
    std::fs::write(&json, crate::chrome::trace(4)).expect("write");
    assert_eq!(load::frame_directory(&json).expect("peeks"), None);
    assert!(load::frame_directory(dir.join("missing.sgpt")).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
