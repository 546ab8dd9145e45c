//! The fold as decoded against the builder's own, on a capture meant to be awkward:
//! several threads, deep nesting, scopes inside themselves, two call sites of one
//! name, lanes that open deep or skip levels (spans whose ancestors were still open),
//! zero-length spans, GPU passes on two queues (one without a declared period,
//! nested, untimed), counters of both kinds, marks, paused frames, dropped spans and
//! frames, and damaged records.

use super::*;
use framewise_format::model::{
    CounterKind as Kind, CounterValue, CpuClock, CpuSpan, GpuAnchor, GpuFrame, GpuPass,
    GpuQueueClock, GpuQueueFrame, GpuTiming, Lane, Mark, Meta, Symbol,
};
use framewise_format::model::{MarkKind, SymbolKind};
use framewise_format::Writer;

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

const THREADS: [SymId; 3] = [1, 2, 3];
const QUEUES: [SymId; 2] = [10, 11];
const PASSES: SymId = 20; // 20..26
const COUNTERS: SymId = 30; // 30..34
const SCOPES: SymId = 40; // 40..52
const PLAY: SymId = 60;
const MARK: SymId = 61;

fn symbols() -> SymbolTable {
    let mut t = SymbolTable::new();
    let mut add = |id, kind, name: String| t.insert(Symbol { id, kind, name });
    for (i, &id) in THREADS.iter().enumerate() {
        add(id, SymbolKind::Thread, format!("thread-{i}"));
    }
    for (i, &id) in QUEUES.iter().enumerate() {
        add(id, SymbolKind::Queue, format!("queue-{i}"));
    }
    for p in 0..6 {
        add(PASSES + p, SymbolKind::Pass, format!("pass_{}", p % 4));
    }
    for c in 0..4 {
        let kind = if c % 2 == 0 { Kind::Sum } else { Kind::Gauge };
        add(
            COUNTERS + c,
            SymbolKind::Counter(kind),
            format!("counter_{c}"),
        );
    }
    for s in 0..12 {
        // scope_0 and scope_1 each have two call sites.
        let kind = SymbolKind::Scope {
            file: format!("src/s{}.rs", s % 5),
            line: s,
        };
        add(
            SCOPES + s,
            kind,
            format!("scope_{}", if s >= 10 { s - 10 } else { s }),
        );
    }
    add(PLAY, SymbolKind::Phase, "play".into());
    add(MARK, SymbolKind::Mark, "gc".into());
    t
}

/// A tree of spans in `[start, end)`, pre-order, at `depth`; few scopes, so that a
/// scope often runs inside itself.
fn tree(rng: &mut Rng, out: &mut Vec<CpuSpan>, depth: u32, start: u64, end: u64) {
    let mut t = start;
    while t < end && out.len() < 120 {
        let gap = rng.below(50);
        let len = if rng.below(8) == 0 {
            0
        } else {
            1 + rng.below((end - t) / 2 + 1)
        };
        let s = t + gap;
        if s + len > end {
            break;
        }
        out.push(CpuSpan {
            scope: SCOPES + rng.below(if depth > 1 { 3 } else { 12 }) as u32,
            depth,
            start_ns: s,
            end_ns: s + len,
        });
        if depth < 5 && len > 4 && rng.below(3) > 0 {
            tree(rng, out, depth + 1, s, s + len);
        }
        t = s + len;
    }
}

fn frame(rng: &mut Rng, index: u64) -> Frame {
    let begin = 1_000 + index * 100_000;
    let lanes = THREADS
        .iter()
        .map(|&thread| {
            let mut spans = Vec::new();
            match rng.below(4) {
                // Opens deep: its ancestors were still open at the frame's start.
                0 => {
                    let depth = 1 + rng.below(3) as u32;
                    tree(rng, &mut spans, depth, begin, begin + 30_000);
                }
                // Closed spans, then a span deeper than anything open.
                1 => {
                    tree(rng, &mut spans, 0, begin, begin + 20_000);
                    let s = begin + 40_000;
                    spans.push(CpuSpan {
                        scope: SCOPES + 3,
                        depth: 3,
                        start_ns: s,
                        end_ns: s + 9_000,
                    });
                    tree(rng, &mut spans, 4, s, s + 9_000);
                }
                _ => tree(rng, &mut spans, 0, begin, begin + 80_000),
            }
            Lane {
                thread,
                spans,
                dropped_spans: u64::from(index % 17 == 3),
            }
        })
        .collect();
    let mut passes = Vec::new();
    let mut ticks = 5_000 + index * 90_000;
    for p in 0..6u32 {
        let len = rng.below(3_000);
        passes.push(GpuPass {
            pass: PASSES + p,
            queue_index: p % 2,
            depth: u32::from(p % 3 == 2),
            timing: (rng.below(7) != 0).then_some(GpuTiming {
                begin_ticks: ticks,
                end_ticks: ticks + len,
            }),
        });
        ticks += len + rng.below(100);
    }
    let mut counters = Vec::new();
    for c in 0..4u32 {
        if rng.below(5) != 0 {
            counters.push(CounterValue {
                counter: COUNTERS + c,
                value: rng.below(1_000) as i64 - 300,
            });
        }
    }
    let marks = index
        .is_multiple_of(9)
        .then_some(Mark {
            name: MARK,
            thread: THREADS[1],
            at_ns: begin + 7,
            kind: MarkKind::Instant,
        })
        .into_iter()
        .collect();
    Frame {
        index: index + u64::from(index >= 150),
        phase: Some(PLAY),
        paused: index % 23 == 5,
        topology: None,
        cpu_begin_ns: begin,
        cpu_end_ns: begin + 90_000,
        dropped_frames_before: u64::from(index == 150),
        lanes,
        gpu: GpuFrame {
            expected: true,
            results_missing: index % 31 == 4,
            queues: QUEUES
                .iter()
                .map(|&queue| GpuQueueFrame {
                    queue,
                    anchor: GpuAnchor {
                        cpu_submit_ns: Some(begin + 50_000),
                        cpu_readback_ns: None,
                    },
                })
                .collect(),
            passes,
        },
        workloads: Vec::new(),
        bindings: Vec::new(),
        counters,
        marks,
    }
}

fn capture() -> Vec<u8> {
    let symbols = symbols();
    let meta = Meta {
        capture_level: 2,
        cpu_clock: CpuClock {
            source: "test".into(),
            resolution_ns: 1.0,
        },
        // Queue 1 declares no period: its timings are left untimed, with a defect.
        gpu_clocks: vec![GpuQueueClock {
            queue: QUEUES[0],
            timestamp_period_ns: 1.5,
        }],
        ..Meta::default()
    };
    let mut w = Writer::new(std::io::Cursor::new(Vec::new()), &meta, &symbols).expect("writer");
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for i in 0..300 {
        w.write_frame(&frame(&mut rng, i), &symbols)
            .expect("a valid frame");
    }
    w.finish_and_close(&[]).expect("closes").into_inner()
}

/// Everything a capture holds, as text.
fn both(bytes: &[u8], options: &LoadOptions) -> (String, String) {
    let load = |fold| {
        let r = read::from_bytes(bytes.to_vec()).expect("opens");
        let c = adapt_with(&r, options, &mut no_progress, fold);
        let summary = serde_json::to_string(&crate::summarize(&c)).expect("serializes");
        format!("{c:?}\n{summary}")
    };
    (load(FoldPath::AsDecoded), load(FoldPath::ByBuilder))
}

/// The capture intact; damaged (a flipped byte inside a frame's payload); and that cut
/// two thirds in (read by scan).
fn three_captures() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let intact = capture();
    let mut damaged = intact.clone();
    let at = damaged.len() / 3;
    damaged[at] ^= 0x5a;
    let cut = damaged[..damaged.len() * 2 / 3].to_vec();
    (intact, damaged, cut)
}

#[test]
fn the_loaded_periods_and_gpu_times_are_the_directorys() {
    let r = read::from_bytes(capture()).expect("opens");
    assert!(r.opened_by_directory());
    let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
    let directory: Vec<_> = r
        .frame_entries()
        .map(|e| (e.index, e.period_ns, e.gpu_ns))
        .collect();
    let f = c.frames();
    let loaded: Vec<_> = (0..c.frame_count())
        .map(|row| (f.index[row], f.period_ns[row], f.gpu_ns[row]))
        .collect();
    assert_eq!(loaded, directory);
    // The fixture exercises it: a 1.5 ns tick, so per-pass rounding would drift.
    assert!(directory.iter().filter(|e| e.2.is_some()).count() > 250);
    assert_eq!(directory.iter().filter(|e| e.1.is_none()).count(), 2);
}

/// Frames of 1 ms work at these begins (ms), budget 10 ms.
fn clocked_capture(begins_ms: &[u64], hitches: impl Fn(&[FrameEntry]) -> Vec<u64>) -> Vec<u8> {
    let symbols = symbols();
    let meta = Meta {
        frame_budget_ns: Some(10_000_000),
        ..Meta::default()
    };
    let mut w = Writer::new(std::io::Cursor::new(Vec::new()), &meta, &symbols).expect("writer");
    for (index, &begin_ms) in (0u64..).zip(begins_ms) {
        let frame = Frame {
            index,
            cpu_begin_ns: begin_ms * 1_000_000,
            cpu_end_ns: begin_ms * 1_000_000 + 1_000_000,
            ..Frame::default()
        };
        w.write_frame(&frame, &symbols).expect("a valid frame");
    }
    let flags = hitches(&w.directory(&[]).frames);
    w.finish_and_close(&flags).expect("closes").into_inner()
}

/// The clock steps back three times in a row before a 18 ms frame: were the steps
/// periods of 0, they would pull the rolling median to 0 and make it a hitch.
const BACKWARDS_MS: [u64; 8] = [0, 10, 20, 19, 18, 17, 35, 45];
const BACKWARDS_PERIODS: [Option<u64>; 8] = [
    Some(10_000_000),
    Some(10_000_000),
    None,
    None,
    None,
    Some(18_000_000),
    Some(10_000_000),
    None,
];

#[test]
fn a_frame_whose_next_begins_earlier_has_no_period_in_the_analysis_load() {
    let r = read::from_bytes(clocked_capture(&BACKWARDS_MS, |_| Vec::new())).expect("opens");
    let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
    assert_eq!(c.frames().period_ns, BACKWARDS_PERIODS);
    assert!(c
        .defects()
        .iter()
        .any(|d| d.kind == DefectKind::FrameOrder && d.count == 3));
}

#[test]
fn directory_hitch_flags_agree_with_the_analysis_when_the_clock_goes_backwards() {
    // The directory's flags as the recorder sets them: the one hitch rule over the
    // directory's periods.
    let recorder_flags = |entries: &[FrameEntry]| {
        let mut rule = crate::hitch_rule::HitchRule::new(10_000_000);
        entries
            .iter()
            .filter_map(|e| {
                let judgement = rule.observe(e.period_ns?, e.paused)?;
                judgement.hitch.then_some(e.index)
            })
            .collect()
    };
    let r = read::from_bytes(clocked_capture(&BACKWARDS_MS, recorder_flags)).expect("opens");
    let periods: Vec<_> = r.frame_entries().map(|e| e.period_ns).collect();
    assert_eq!(periods, BACKWARDS_PERIODS);
    let flagged: Vec<u64> = r
        .frame_entries()
        .filter(|e| e.hitch)
        .map(|e| e.index)
        .collect();
    let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
    let found: Vec<u64> = crate::find_hitches(&c, &crate::HitchOptions::default())
        .hitches
        .iter()
        .map(|h| h.frame)
        .collect();
    assert_eq!(flagged, found);
    assert_eq!(found, Vec::<u64>::new());
}

#[test]
fn folding_as_decoded_is_the_builders_fold() {
    let (intact, damaged, cut) = three_captures();
    for bytes in [&intact, &damaged, &cut] {
        for options in [
            LoadOptions::default(),
            LoadOptions::default().with_summary_only(true),
            LoadOptions::default().with_spans(true),
        ] {
            let (as_decoded, by_builder) = both(bytes, &options);
            assert_eq!(as_decoded, by_builder, "{options:?}");
        }
    }
    // The capture exercises what it claims to.
    let r = read::from_bytes(damaged.clone()).expect("opens");
    let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
    assert!(c
        .defects()
        .iter()
        .any(|d| d.kind == DefectKind::CorruptRange));
    assert!(c.dropped_spans() > 0 && c.gpu_timed());
    assert!(c
        .scope_aggs()
        .all()
        .iter()
        .any(|a| a.self_ns == 0 && a.total_ns > 0));
    let r = read::from_bytes(cut).expect("opens");
    assert!(!r.opened_by_directory());
}

#[test]
fn frames_read_again_are_the_frames_loaded_with_spans() {
    let (intact, damaged, cut) = three_captures();
    let dir = std::env::temp_dir().join(format!("framewise-reread-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    for (name, bytes) in [("intact", &intact), ("damaged", &damaged), ("cut", &cut)] {
        let path = dir.join(format!("{name}.sgpt"));
        std::fs::write(&path, bytes).expect("written");
        let with =
            crate::load::open(&path, &LoadOptions::default().with_spans(true)).expect("loads");
        let (c, frames) =
            crate::load::open_with_frame_source(&path, &LoadOptions::default(), |_| {})
                .expect("loads");
        assert!(c.spans().is_none(), "{name}: spans are not kept");
        assert_eq!(frames.file(), Some(path.as_path()));
        assert_eq!(c.frames(), with.frames(), "{name}");
        let table = with.spans().expect("kept");
        assert!(c.frame_count() > 100, "{name}");
        for row in 0..c.frame_count() {
            let spans = frames.frame_spans(&c, row).expect("reads");
            assert_eq!(spans, table.frame_spans(row), "{name}: row {row}");
        }
        assert!(matches!(
            frames.frame_spans(&c, c.frame_count()),
            Err(FrameReadError::NoSuchRow { .. })
        ));
    }

    // The file changes under the source: overwritten in place with its own first two
    // thirds, then with a damaged copy. Rows still intact read as before; the others
    // are errors, never another frame's spans.
    let path = dir.join("changing.sgpt");
    std::fs::write(&path, &intact).expect("written");
    let with = crate::load::open(&path, &LoadOptions::default().with_spans(true)).expect("loads");
    let (c, frames) =
        crate::load::open_with_frame_source(&path, &LoadOptions::default(), |_| {}).expect("loads");
    let table = with.spans().expect("kept");
    std::fs::write(&path, &intact[..intact.len() / 2]).expect("overwritten");
    let (mut fine, mut changed) = (0, 0);
    for row in 0..c.frame_count() {
        match frames.frame_spans(&c, row) {
            Ok(spans) => {
                assert_eq!(spans, table.frame_spans(row), "row {row}");
                fine += 1;
            }
            Err(e @ FrameReadError::Changed { .. }) => {
                assert!(e.to_string().contains("changed after it was loaded"), "{e}");
                // Cut shorter: the record lies past the end, not "corrupt data" past it.
                assert!(
                    e.to_string()
                        .contains(&format!("the file is now {} bytes", intact.len() / 2)),
                    "{e}"
                );
                changed += 1;
            }
            Err(e) => panic!("row {row}: {e}"),
        }
    }
    assert!(fine > 0 && changed > 0, "{fine} intact, {changed} changed");
    std::fs::write(&path, &damaged).expect("overwritten");
    let errors = (0..c.frame_count())
        .filter(|&row| frames.frame_spans(&c, row).is_err())
        .count();
    assert_eq!(errors, 1, "one frame's record no longer checks");
    std::fs::remove_dir_all(&dir).expect("cleaned up");
}

/// Frames with these indices and drop counts, closed.
fn indexed_capture(frames: &[(u64, u64)]) -> Vec<u8> {
    let symbols = symbols();
    let mut w =
        Writer::new(std::io::Cursor::new(Vec::new()), &Meta::default(), &symbols).expect("writer");
    for (row, &(index, dropped_frames_before)) in (0u64..).zip(frames) {
        let frame = Frame {
            index,
            dropped_frames_before,
            cpu_begin_ns: row * 1_000_000,
            cpu_end_ns: row * 1_000_000 + 500_000,
            ..Frame::default()
        };
        w.write_frame(&frame, &symbols).expect("a valid frame");
    }
    w.finish_and_close(&[]).expect("closes").into_inner()
}

fn lost_frames(frames: &[(u64, u64)]) -> Vec<(u64, bool)> {
    let c = from_bytes(indexed_capture(frames), &LoadOptions::default()).expect("loads");
    c.defects()
        .iter()
        .filter(|d| d.kind == DefectKind::DroppedFrames)
        .map(|d| (d.count, d.message.contains("no drop recorded")))
        .collect()
}

#[test]
fn frame_indices_that_no_drop_accounts_for_are_lost_frames() {
    let run = |range: std::ops::Range<u64>| range.map(|i| (i, 0)).collect::<Vec<_>>();
    // Whole: nothing lost.
    assert_eq!(lost_frames(&run(0..10)), []);
    // Frames 4..7 not in the file, and no drop recorded: lost.
    let mut gap = run(0..4);
    gap.extend(run(7..10));
    assert_eq!(lost_frames(&gap), [(3, true)]);
    // The writer dropped them and said so: its own defect, no gap.
    let mut dropped = run(0..4);
    dropped.push((7, 3));
    dropped.extend(run(8..10));
    assert_eq!(lost_frames(&dropped), [(3, false)]);
    // Fewer dropped than skipped: the rest is lost.
    dropped[4] = (7, 1);
    let mut got = lost_frames(&dropped);
    got.sort_unstable();
    assert_eq!(got, [(1, false), (2, true)]);
    // The recorder counts from 0: frames missing before the first one read are lost too.
    assert_eq!(lost_frames(&run(5..10)), [(5, true)]);
    // Every frame there, out of order in the file (reversed, or two swapped): none missing.
    let mut reversed = run(0..10);
    reversed.reverse();
    assert_eq!(lost_frames(&reversed), []);
    let mut swapped = run(0..10);
    swapped.swap(3, 6);
    assert_eq!(lost_frames(&swapped), []);
    // Out of order with a real gap: the gap alone.
    let mut both = gap.clone();
    both.swap(0, 5);
    assert_eq!(lost_frames(&both), [(3, true)]);
}
