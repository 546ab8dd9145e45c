//! Round trips: what a writer writes, a reader gives back exactly.

use crate::support;
use framewise_format::model::*;
use framewise_format::{read, Writer};
use proptest::prelude::*;
use std::io::Cursor;

#[test]
fn realistic_capture_round_trips_by_directory_and_by_scan() {
    let (bytes, frames, symbols) = support::capture(120, 1, true);
    let by_dir = read::from_bytes(bytes.clone()).expect("open");
    assert!(by_dir.opened_by_directory());
    assert!(by_dir.defects().is_empty(), "{:?}", by_dir.defects());
    let got: Vec<Frame> = by_dir.frames().map(|f| f.expect("frame")).collect();
    assert_eq!(got, frames);
    assert_eq!(by_dir.meta(), Some(&support::meta()));
    assert_eq!(by_dir.topologies().len(), 1);
    for s in symbols.iter_sorted() {
        if by_dir.symbols().contains(s.id) {
            assert_eq!(by_dir.symbols().get(s.id), Some(s));
        }
    }
    assert!(by_dir.verify().is_empty());

    // Clearing the CLOSED flag forces a scan; it must find the same.
    let mut unclosed = bytes;
    unclosed[8] = 0;
    let by_scan = read::from_bytes(unclosed).expect("open");
    assert!(!by_scan.opened_by_directory());
    let got: Vec<Frame> = by_scan.frames().map(|f| f.expect("frame")).collect();
    assert_eq!(got, frames);
    // The file still ends with its DIRE: complete, only the header was not patched.
    assert!(by_scan.defects().is_empty(), "{:?}", by_scan.defects());
    let tracks = by_scan.counter_tracks();
    assert_eq!(tracks.len(), 1);
    assert_eq!(tracks[0].as_ref().expect("track").samples.len(), 10);
    // Directory facts agree whichever way the file was opened.
    let a: Vec<_> = by_dir
        .frame_entries()
        .map(|e| (e.index, e.offset, e.period_ns, e.work_ns, e.hitch))
        .collect();
    let b: Vec<_> = by_scan
        .frame_entries()
        .map(|e| (e.index, e.offset, e.period_ns, e.work_ns, e.hitch))
        .collect();
    assert_eq!(a, b);
    assert!(by_dir.frame_entries().any(|e| e.index == 30 && e.hitch));
}

#[test]
fn directory_carries_gpu_duration_and_periods() {
    let (bytes, frames, _) = support::capture(5, 2, true);
    let c = read::from_bytes(bytes).expect("open");
    let entries: Vec<_> = c.frame_entries().collect();
    for (e, f) in entries.iter().zip(&frames) {
        let timed: Vec<_> = f.gpu.passes.iter().filter_map(|p| p.timing).collect();
        let lo = timed.iter().map(|t| t.begin_ticks).min().expect("timed");
        let hi = timed.iter().map(|t| t.end_ticks).max().expect("timed");
        assert_eq!(e.gpu_ns, Some(hi - lo), "period is 1 ns per tick");
        assert_eq!(e.work_ns, f.cpu_end_ns - f.cpu_begin_ns);
    }
    assert_eq!(
        entries[0].period_ns,
        Some(frames[1].cpu_begin_ns - frames[0].cpu_begin_ns)
    );
    assert_eq!(entries[4].period_ns, None);
}

fn arb_span_forest() -> impl Strategy<Value = Vec<CpuSpan>> {
    // A valid pre-order forest from a random open/close event sequence. Top-level spans
    // may sit deeper than 0 and deepen over the frame (their ancestors were still open
    // when the frame closed), exactly as a recorder produces them.
    prop::collection::vec((0u8..4, 0u64..3_000_000, 100u32..140), 0..80).prop_map(|ops| {
        let mut spans: Vec<CpuSpan> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let mut t: u64 = 500;
        let mut top_depth = 0u32;
        for (op, gap, sym) in ops {
            t += if gap % 3 == 0 { 0 } else { gap };
            if op >= 2 && !stack.is_empty() {
                if let Some(i) = stack.pop() {
                    spans[i].end_ns = t;
                }
            } else {
                let depth = match stack.last() {
                    Some(&parent) => spans[parent].depth + 1,
                    None => {
                        top_depth += u32::from(op == 1);
                        top_depth
                    }
                };
                stack.push(spans.len());
                spans.push(CpuSpan {
                    scope: sym,
                    depth,
                    start_ns: t,
                    end_ns: t,
                });
            }
        }
        while let Some(i) = stack.pop() {
            t += 7;
            spans[i].end_ns = t;
        }
        spans
    })
}

fn arb_workload() -> impl Strategy<Value = Workload> {
    (
        prop::option::of(0u64..1 << 40),
        prop::option::of(0u64..10),
        prop::option::of(any::<u64>()),
        prop::option::of([1u32..1024, 1u32..64, 1u32..4]),
        prop::option::of(100u32..140),
        prop::collection::vec((100u32..140, any::<u64>()), 0..3),
    )
        .prop_map(
            |(draws, dispatches, invocations, workgroup_size, pipeline, extra)| Workload {
                draws,
                dispatches,
                invocations,
                workgroup_size,
                pipeline,
                instances: draws.map(|d| d * 2),
                extra,
                ..Workload::default()
            },
        )
}

prop_compose! {
    fn arb_frame()(
        index in any::<u64>(),
        begin in 0u64..1 << 60,
        work in 0u64..1 << 32,
        paused in any::<bool>(),
        topo in prop::option::of(any::<u64>()),
        lanes in prop::collection::vec((1u32..5, arb_span_forest(), 0u64..5), 0..4),
        passes in prop::collection::vec((100u32..140, 0u32..3, prop::option::of((any::<u64>(), any::<u64>()))), 0..12),
        counters in prop::collection::vec((100u32..140, any::<i64>()), 0..10),
        marks in prop::collection::vec((100u32..140, 1u32..5, 0u64..1 << 40, prop::option::of((any::<u64>(), ".{0,12}"))), 0..4),
        workloads in prop::collection::vec((100u32..140, arb_workload()), 0..4),
        missing in any::<bool>(),
    ) -> Frame {
        let shift = begin; // place spans near the frame begin
        Frame {
            index,
            phase: Some(120),
            paused,
            topology: topo,
            cpu_begin_ns: begin,
            cpu_end_ns: begin.wrapping_add(work),
            dropped_frames_before: u64::from(paused),
            lanes: lanes.into_iter().map(|(thread, spans, dropped)| Lane {
                thread,
                spans: spans.into_iter().map(|s| CpuSpan { start_ns: s.start_ns + shift, end_ns: s.end_ns + shift, ..s }).collect(),
                dropped_spans: dropped,
            }).collect(),
            gpu: GpuFrame {
                expected: !passes.is_empty(),
                results_missing: missing,
                queues: vec![
                    GpuQueueFrame { queue: 130, anchor: GpuAnchor { cpu_submit_ns: Some(begin + 5), cpu_readback_ns: None } },
                    GpuQueueFrame { queue: 131, anchor: GpuAnchor::default() },
                ],
                passes: passes.into_iter().map(|(pass, depth, t)| GpuPass {
                    pass,
                    queue_index: depth % 2,
                    depth,
                    timing: t.map(|(b, e)| GpuTiming { begin_ticks: b, end_ticks: e }),
                }).collect(),
            },
            workloads: workloads.into_iter().map(|(pass, workload)| PassWorkload { pass, workload }).collect(),
            bindings: vec![Binding { pass: 100, resource: 101, attachment: true, slot: 2, access: Access::ReadWrite }],
            counters: counters.into_iter().map(|(counter, value)| CounterValue { counter, value }).collect(),
            marks: marks.into_iter().map(|(name, thread, at, user)| Mark {
                name,
                thread,
                at_ns: begin.wrapping_add(at),
                kind: match user {
                    Some((window_ns, note)) => MarkKind::User { window_ns, note },
                    None => MarkKind::Instant,
                },
            }).collect(),
        }
    }
}

fn generic_symbols() -> SymbolTable {
    let mut t = SymbolTable::new();
    for id in 1..5 {
        t.insert(Symbol {
            id,
            kind: SymbolKind::Thread,
            name: format!("t{id}"),
        });
    }
    for id in 100..140 {
        let kind = match id % 4 {
            0 => SymbolKind::Scope {
                file: "a.rs".into(),
                line: id,
            },
            1 => SymbolKind::Counter(CounterKind::Gauge),
            2 => SymbolKind::Pass,
            _ => SymbolKind::Unknown {
                kind: 200,
                extra: vec![1, 2, 3],
            },
        };
        t.insert(Symbol {
            id,
            kind,
            name: format!("s{id}"),
        });
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn frames_round_trip(frames in prop::collection::vec(arb_frame(), 1..6)) {
        let symbols = generic_symbols();
        let mut w = Writer::new(Cursor::new(Vec::new()), &Meta::default(), &symbols).expect("writer");
        for f in &frames {
            w.write_frame(f, &symbols).expect("frame");
        }
        let bytes = w.finish_and_close(&[]).expect("finish").into_inner();
        let c = read::from_bytes(bytes).expect("open");
        let back: Vec<Frame> = c.frames().map(|f| f.expect("frame")).collect();
        prop_assert_eq!(back, frames);
        prop_assert!(c.verify().is_empty());
    }

    #[test]
    fn topologies_and_tracks_round_trip(
        passes in prop::collection::vec((100u32..140, 0u8..5, any::<bool>(), prop::option::of(100u32..140)), 1..8),
        resources in prop::collection::vec((100u32..140, 0u8..4, prop::option::of(any::<u64>()), any::<bool>(), any::<bool>()), 0..8),
        samples in prop::collection::vec((any::<u64>(), any::<i64>()), 0..50),
    ) {
        let symbols = generic_symbols();
        let n = passes.len() as u32;
        let mut topo = Topology {
            id: 0,
            passes: passes.into_iter().map(|(label, kind, culled, scope)| TopoPass { label, kind: PassKind::from_u8(kind), culled, scope }).collect(),
            resources: resources.iter().map(|&(label, kind, bytes, transient, imported)| TopoResource {
                label, kind: ResourceKind::from_u8(kind), format: Some(101), usage: None, declared_bytes: bytes, transient, imported,
                first_use: Some(0), last_use: Some(n - 1),
            }).collect(),
            edges: vec![],
        };
        for r in 0..topo.resources.len() as u32 {
            topo.edges.push(TopoEdge { pass: r % n, resource: r, access: Access::Write, version: r });
        }
        topo.id = framewise_format::topology_id(&topo, &symbols);
        let track = CounterTrack { counter: 101, samples: samples.into_iter().map(|(at_ns, value)| Sample { at_ns, value }).collect() };
        let mut w = Writer::new(Cursor::new(Vec::new()), &Meta::default(), &symbols).expect("writer");
        prop_assert!(w.write_topology(&topo, &symbols).expect("topo"));
        prop_assert!(!w.write_topology(&topo, &symbols).expect("topo again"), "written once per id");
        w.write_counter_track(&track, &symbols).expect("track");
        let bytes = w.finish(&[]).expect("finish").into_inner();
        let c = read::from_bytes(bytes).expect("open");
        prop_assert_eq!(c.topologies(), &[topo.clone()][..]);
        let tracks = c.counter_tracks();
        prop_assert_eq!(tracks[0].as_ref().expect("track"), &track);
        prop_assert_eq!(framewise_format::topology_id(&topo, c.symbols()), topo.id);
    }
}

#[test]
fn topology_id_depends_on_names_not_ids() {
    let symbols = support::symbols();
    let t = support::topology(&symbols);
    // Same graph, different ids for the same names.
    let mut renamed = SymbolTable::new();
    for s in symbols.iter_sorted() {
        renamed.insert(Symbol {
            id: s.id + 1000,
            ..s.clone()
        });
    }
    let mut t2 = t.clone();
    for p in &mut t2.passes {
        p.label += 1000;
        p.scope = p.scope.map(|s| s + 1000);
    }
    for r in &mut t2.resources {
        r.label += 1000;
    }
    assert_eq!(framewise_format::topology_id(&t2, &renamed), t.id);
    let mut t3 = t.clone();
    t3.passes[0].culled = !t3.passes[0].culled;
    assert_ne!(framewise_format::topology_id(&t3, &symbols), t.id);
}

#[test]
fn writer_refuses_undefined_symbols_and_bad_nesting() {
    let symbols = support::symbols();
    let mut w = Writer::new(Cursor::new(Vec::new()), &Meta::default(), &symbols).expect("writer");
    let mut f = Frame {
        lanes: vec![Lane {
            thread: 9999,
            spans: vec![],
            dropped_spans: 0,
        }],
        ..Frame::default()
    };
    assert!(matches!(
        w.write_frame(&f, &symbols),
        Err(framewise_format::EncodeError::UndefinedSymbol { id: 9999 })
    ));
    f.lanes[0].thread = 1;
    f.lanes[0].spans = vec![
        CpuSpan {
            scope: 100,
            depth: 0,
            start_ns: 10,
            end_ns: 100,
        },
        CpuSpan {
            scope: 101,
            depth: 1,
            start_ns: 50,
            end_ns: 150,
        }, // overlaps its parent's end
    ];
    assert!(matches!(
        w.write_frame(&f, &symbols),
        Err(framewise_format::EncodeError::BadNesting { .. })
    ));
    // Nothing half-written: the file still reads cleanly.
    let bytes = w.finish(&[]).expect("finish").into_inner();
    let c = read::from_bytes(bytes).expect("open");
    assert_eq!(c.frame_count(), 0);
}

#[test]
fn symbols_are_defined_once_then_refreshed() {
    let (bytes, frames, _) = support::small_capture(600);
    let c = read::from_bytes(bytes.clone()).expect("open");
    assert_eq!(c.frame_count(), frames.len());
    // Frame 0 defines its names; frame 2 reuses frame 0's scope? (i % 40): frame 40 reuses frame 0's.
    let defines = |i: usize| {
        let e = c.frame_entries().nth(i).expect("entry");
        let start = e.offset as usize + 16;
        let payload = &bytes[start..start + e.length as usize - 16];
        framewise_format::payload::peek_frame(payload)
            .expect("peek")
            .defines_symbols
    };
    assert!(defines(0));
    assert!(!defines(41), "frame 41's names were all defined earlier");
    assert!(defines(256), "every 256th frame re-declares its names");
    assert!(defines(512));
}

#[test]
fn reading_into_a_reused_frame_gives_what_read_frame_gives() {
    let (bytes, frames, _) = support::capture(60, 4, true);
    let mut unclosed = bytes.clone();
    unclosed[8] = 0;
    // Damage one frame's payload so that one read fails and the next must still be right.
    let mut damaged = bytes.clone();
    let victim = read::from_bytes(bytes.clone())
        .expect("open")
        .frame_entries()
        .nth(20)
        .expect("entry");
    damaged[(victim.offset + 40) as usize] ^= 0x5a;
    for (file, failures) in [(bytes, 0), (unclosed, 0), (damaged, 1)] {
        let c = read::from_bytes(file).expect("open");
        assert_eq!(c.frame_count(), 60, "the directory lists the damaged frame");
        let mut decoder = framewise_format::payload::FrameDecoder::new();
        let mut frame = Frame::default();
        let mut failed = 0;
        for i in 0..c.frame_count() {
            let into = c.read_frame_into(i, &mut decoder, &mut frame);
            match c.read_frame(i) {
                Ok(f) => {
                    assert_eq!(into, Ok(()));
                    assert_eq!(frame, f);
                    assert_eq!(f, frames[f.index as usize]);
                }
                Err(d) => {
                    assert_eq!(into, Err(d));
                    failed += 1;
                }
            }
        }
        assert_eq!(failed, failures);
    }
}
