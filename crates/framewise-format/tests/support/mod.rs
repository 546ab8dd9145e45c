//! Deterministic, realistic captures for tests and benchmarks.
#![allow(dead_code, missing_docs)]

use framewise_format::model::*;
use framewise_format::{topology_id, Writer};
use std::io::Cursor;
use std::path::{Path, PathBuf};

/// xorshift64*: small, deterministic, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    /// Log-uniform in [lo, hi).
    pub fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo.max(1) as f64).ln(), (hi.max(2) as f64).ln());
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        (l + (h - l) * u).exp() as u64
    }
}

pub const THREADS: u32 = 4;
pub const SCOPES_BASE: u32 = 100; // scope ids 100..
pub const QUEUE: SymId = 10;
pub const PASS_BASE: SymId = 20; // 30 GPU passes: 20..50
pub const COUNTER_BASE: SymId = 60; // 20 counters: 60..80
pub const PHASE_PLAY: SymId = 5;
pub const MARK_GC: SymId = 6;
pub const PIPELINE: SymId = 7;

/// The symbol table every generated capture uses.
pub fn symbols() -> SymbolTable {
    let mut t = SymbolTable::new();
    for i in 0..THREADS {
        let name = if i == 0 {
            "main".to_string()
        } else {
            format!("worker-{i}")
        };
        t.insert(Symbol {
            id: 1 + i,
            kind: SymbolKind::Thread,
            name,
        });
    }
    t.insert(Symbol {
        id: PHASE_PLAY,
        kind: SymbolKind::Phase,
        name: "play".into(),
    });
    t.insert(Symbol {
        id: MARK_GC,
        kind: SymbolKind::Mark,
        name: "gc".into(),
    });
    t.insert(Symbol {
        id: PIPELINE,
        kind: SymbolKind::Pipeline,
        name: "lit-opaque".into(),
    });
    t.insert(Symbol {
        id: QUEUE,
        kind: SymbolKind::Queue,
        name: "graphics".into(),
    });
    for p in 0..30 {
        t.insert(Symbol {
            id: PASS_BASE + p,
            kind: SymbolKind::Pass,
            name: format!("pass_{p}"),
        });
    }
    for c in 0..20 {
        let kind = if c % 4 == 3 {
            CounterKind::Gauge
        } else {
            CounterKind::Sum
        };
        t.insert(Symbol {
            id: COUNTER_BASE + c,
            kind: SymbolKind::Counter(kind),
            name: format!("counter_{c}"),
        });
    }
    for s in 0..120 {
        t.insert(Symbol {
            id: SCOPES_BASE + s,
            kind: SymbolKind::Scope {
                file: format!("src/systems/mod_{}.rs", s % 7),
                line: 10 + s,
            },
            name: format!("scope_{s}"),
        });
    }
    // A label that spells the sync marker, to test resync robustness.
    t.insert(Symbol {
        id: 90,
        kind: SymbolKind::Label,
        name: "SRECSRECSREC".into(),
    });
    t
}

pub fn meta() -> Meta {
    Meta {
        session_id: [7; 16],
        wall_clock_start_unix_ns: 1_790_000_000_000_000_000,
        capture_level: 2,
        build_id: "test-build".into(),
        cpu_clock: CpuClock {
            source: "CLOCK_MONOTONIC".into(),
            resolution_ns: 1.0,
        },
        gpu_clocks: vec![GpuQueueClock {
            queue: QUEUE,
            timestamp_period_ns: 1.0,
        }],
        host: vec![("os".into(), "linux".into())],
        adapter: Some(AdapterInfo {
            vendor: "mesa".into(),
            device: "llvmpipe".into(),
            driver: "25.0".into(),
            adapter_type: AdapterType::Software,
            backend: "vulkan".into(),
        }),
        note: "SREC in a note must not derail resync".into(),
        writer: "framewise-format tests".into(),
        ..Meta::default()
    }
}

/// Fills `spans` with a nested tree of about `count` spans in [start, start + budget).
fn tree(
    rng: &mut Rng,
    spans: &mut Vec<CpuSpan>,
    depth: u32,
    start: u64,
    budget: u64,
    count: usize,
    sym: &mut u32,
) {
    let mut t = start;
    let mut left = count;
    let end_limit = start + budget;
    while left > 0 && t < end_limit {
        let gap = rng.log_uniform(20, 3_000);
        let s = t + gap;
        let remaining = end_limit.saturating_sub(s);
        if remaining < 100 {
            break;
        }
        // Children get a share of the remaining spans.
        let children = if depth < 4 && left > 1 {
            rng.below((left as u64).min(6)) as usize
        } else {
            0
        };
        let dur = if children > 0 {
            (remaining / (left as u64).max(1)).max(2_000) * (children as u64 + 1)
        } else {
            rng.log_uniform(500, 400_000)
        }
        .min(remaining);
        let idx = spans.len();
        spans.push(CpuSpan {
            scope: SCOPES_BASE + (*sym % 120),
            depth,
            start_ns: s,
            end_ns: s + dur,
        });
        *sym += 1;
        left -= 1;
        if children > 0 {
            let before = spans.len();
            tree(rng, spans, depth + 1, s, dur, children, sym);
            left = left.saturating_sub(spans.len() - before);
        }
        t = spans[idx].end_ns;
    }
}

/// A realistic frame: 4 threads, ~200 nested CPU spans, 30 GPU passes, 20 counters.
pub fn frame(rng: &mut Rng, index: u64, begin_ns: u64) -> Frame {
    let period = 16_000_000 + rng.below(1_500_000);
    let mut lanes = Vec::new();
    let per_thread = [80usize, 40, 40, 40];
    for (i, &count) in per_thread.iter().enumerate() {
        let mut spans = Vec::new();
        let mut sym = (i as u32) * 30;
        tree(
            rng,
            &mut spans,
            0,
            begin_ns,
            period - 500_000,
            count,
            &mut sym,
        );
        lanes.push(Lane {
            thread: 1 + i as u32,
            spans,
            dropped_spans: if index % 97 == 5 { 3 } else { 0 },
        });
    }
    let gpu_base = 9_000_000_000 + index * 16_700_000;
    let mut passes = Vec::new();
    let mut t = gpu_base;
    for p in 0..30u32 {
        let dur = rng.log_uniform(2_000, 900_000);
        let timing = if index % 50 == 7 && p == 3 {
            None
        } else {
            Some(GpuTiming {
                begin_ticks: t,
                end_ticks: t + dur,
            })
        };
        passes.push(GpuPass {
            pass: PASS_BASE + p,
            queue_index: 0,
            depth: u32::from(p % 5 != 0),
            timing,
        });
        t += dur + rng.below(5_000);
    }
    let counters = (0..20u32)
        .map(|c| CounterValue {
            counter: COUNTER_BASE + c,
            value: rng.below(5_000) as i64 - if c == 19 { 2_500 } else { 0 },
        })
        .collect();
    let mut marks = Vec::new();
    if index.is_multiple_of(10) {
        marks.push(Mark {
            name: MARK_GC,
            thread: 1,
            at_ns: begin_ns + 3_000,
            kind: MarkKind::Instant,
        });
    }
    if index % 64 == 9 {
        marks.push(Mark {
            name: MARK_GC,
            thread: 2,
            at_ns: begin_ns + 9_000,
            kind: MarkKind::User {
                window_ns: 5_000_000_000,
                note: "felt wrong SREC".into(),
            },
        });
    }
    let workloads = vec![PassWorkload {
        pass: PASS_BASE,
        workload: Workload {
            draws: Some(120 + index % 3),
            instances: Some(400),
            pipeline: Some(PIPELINE),
            workgroup_size: None,
            extra: vec![(90, 7)],
            ..Workload::default()
        },
    }];
    Frame {
        index,
        phase: Some(PHASE_PLAY),
        paused: index % 100 == 42,
        topology: None,
        cpu_begin_ns: begin_ns,
        cpu_end_ns: begin_ns + period - 200_000,
        dropped_frames_before: u64::from(index == 17),
        lanes,
        gpu: GpuFrame {
            expected: true,
            results_missing: false,
            queues: vec![GpuQueueFrame {
                queue: QUEUE,
                anchor: GpuAnchor {
                    cpu_submit_ns: Some(begin_ns + 12_000_000),
                    cpu_readback_ns: Some(begin_ns + 40_000_000),
                },
            }],
            passes,
        },
        workloads,
        bindings: vec![],
        counters,
        marks,
    }
}

pub fn topology(symbols: &SymbolTable) -> Topology {
    let mut t = Topology {
        id: 0,
        passes: (0..3)
            .map(|p| TopoPass {
                label: PASS_BASE + p,
                kind: PassKind::from_u8(p as u8),
                culled: p == 2,
                scope: Some(SCOPES_BASE + p),
            })
            .collect(),
        resources: vec![TopoResource {
            label: 90,
            kind: ResourceKind::Texture,
            format: None,
            usage: None,
            declared_bytes: Some(640 * 360 * 4),
            transient: true,
            imported: false,
            first_use: Some(0),
            last_use: Some(1),
        }],
        edges: vec![
            TopoEdge {
                pass: 0,
                resource: 0,
                access: Access::Write,
                version: 1,
            },
            TopoEdge {
                pass: 1,
                resource: 0,
                access: Access::Read,
                version: 1,
            },
        ],
    };
    t.id = topology_id(&t, symbols);
    t
}

/// A whole capture of `frames` frames; returns the bytes and the frames written.
pub fn capture(frames: u64, seed: u64, close: bool) -> (Vec<u8>, Vec<Frame>, SymbolTable) {
    capture_with_census(frames, seed, close, None)
}

/// [`capture`], with a census record (`CENS`) carrying `census` after the middle frame.
pub fn capture_with_census(
    frames: u64,
    seed: u64,
    close: bool,
    census: Option<&str>,
) -> (Vec<u8>, Vec<Frame>, SymbolTable) {
    let symbols = symbols();
    let mut rng = Rng::new(seed);
    let mut w = Writer::new(Cursor::new(Vec::new()), &meta(), &symbols).expect("writer");
    let topo = topology(&symbols);
    w.write_topology(&topo, &symbols).expect("topo");
    let mut written = Vec::new();
    let mut begin = 1_000_000;
    for i in 0..frames {
        let mut f = frame(&mut rng, i, begin);
        f.topology = Some(topo.id);
        begin = f.cpu_end_ns + 200_000 + if i == 30 { 40_000_000 } else { 0 };
        w.write_frame(&f, &symbols).expect("frame");
        written.push(f);
        if i == frames / 2 {
            let track = CounterTrack {
                counter: COUNTER_BASE + 3,
                samples: (0..10)
                    .map(|k| Sample {
                        at_ns: begin + k * 1000,
                        value: k as i64 * 3 - 5,
                    })
                    .collect(),
            };
            w.write_counter_track(&track, &symbols).expect("cntr");
            if let Some(document) = census {
                w.write_census(document).expect("cens");
            }
        }
    }
    let bytes = if close {
        w.finish_and_close(&[30]).expect("finish").into_inner()
    } else {
        w.get_ref().expect("sink").get_ref().clone()
    };
    (bytes, written, symbols)
}

/// A small capture for exhaustive cut tests: `frames` frames with few, short spans.
pub fn small_capture(frames: u64) -> (Vec<u8>, Vec<Frame>, SymbolTable) {
    let symbols = symbols();
    let mut w = Writer::new(Cursor::new(Vec::new()), &meta(), &symbols).expect("writer");
    let mut written = Vec::new();
    for i in 0..frames {
        let b = 1_000 + i * 16_000;
        // Names are introduced gradually so that symbol definitions are spread over the file.
        let scope = SCOPES_BASE + (i % 40) as u32;
        let f = Frame {
            index: i,
            phase: Some(PHASE_PLAY),
            cpu_begin_ns: b,
            cpu_end_ns: b + 15_000,
            lanes: vec![Lane {
                thread: 1 + (i % 2) as u32,
                spans: vec![
                    CpuSpan {
                        scope,
                        depth: 0,
                        start_ns: b + 10,
                        end_ns: b + 9_000,
                    },
                    CpuSpan {
                        scope: scope + 1,
                        depth: 1,
                        start_ns: b + 20,
                        end_ns: b + 4_000,
                    },
                ],
                dropped_spans: 0,
            }],
            counters: vec![CounterValue {
                counter: COUNTER_BASE + (i % 20) as u32,
                value: i as i64,
            }],
            ..Frame::default()
        };
        w.write_frame(&f, &symbols).expect("frame");
        written.push(f);
    }
    (
        w.finish_and_close(&[]).expect("finish").into_inner(),
        written,
        symbols,
    )
}

/// A file written into a temporary directory of its own, removed with it when dropped (a
/// directory named by the process id outlived every run, and a later process with the same
/// id found the last one's files).
pub struct TempFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl TempFile {
    /// Writes `bytes` as `name` in a new temporary directory.
    pub fn new(name: &str, bytes: &[u8]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        Self { _dir: dir, path }
    }
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}
