//! Synthetic captures shaped like a game: a main thread with `update`/`physics`/`render`,
//! a worker thread, two GPU passes, four counters, and hitches of every kind on request.

use framewise_analysis::build::float_raw;
use framewise_analysis::model::{AdapterKind, CounterKind, Numeric};
use framewise_analysis::{
    Capture, CaptureBuilder, FrameInput, GpuPassInput, LaneInput, SourceKind, SpanInput,
};

pub const MS: u64 = 1_000_000;

/// Frames at which [`GameSpec::hitches`] injects each kind.
pub const PIPELINE_FRAME: u64 = 700;
pub const UPLOAD_FRAME: u64 = 800;
pub const SPAWN_FRAME: u64 = 900;
pub const LONG_SCOPE_FRAME: u64 = 1000;
pub const GPU_FRAME: u64 = 1100;
pub const WAIT_FRAME: u64 = 1200;
pub const UNKNOWN_FRAME: u64 = 1300;
/// Frames the host declares paused (with huge periods that must not count).
pub const PAUSED: std::ops::Range<u64> = 100..110;

#[derive(Clone, Debug)]
pub struct GameSpec {
    pub frames: u64,
    pub draw_calls: i64,
    pub render_ns: u64,
    pub hitches: bool,
    pub adapter: AdapterKind,
    pub with_spans: bool,
    pub with_counters: bool,
    pub summary_only: bool,
}

impl Default for GameSpec {
    fn default() -> Self {
        Self {
            frames: 1500,
            draw_calls: 120,
            render_ns: 5 * MS,
            hitches: true,
            adapter: AdapterKind::Hardware,
            with_spans: false,
            with_counters: true,
            summary_only: false,
        }
    }
}

pub fn game(spec: &GameSpec) -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, spec.with_spans);
    if spec.summary_only {
        b = b.summary_only();
    }
    b.meta_mut().adapter = spec.adapter;
    b.meta_mut().build = Some("test-build".into());
    let main = b.thread("main");
    let worker = b.thread("worker");
    let update = b.scope("update", "src/game.rs", 10);
    let physics = b.scope("physics", "src/physics.rs", 42);
    let render = b.scope("render", "src/render.rs", 88);
    let spawn = b.scope("spawn", "src/world.rs", 7);
    let jobs = b.scope("jobs", "src/jobs.rs", 3);
    let gfx = b.queue("graphics");
    let shadow = b.pass("shadow", gfx);
    let main_pass = b.pass("main", gfx);
    let draws = b.counter("draw_calls", CounterKind::Sum, Numeric::Integer);
    let pipes = b.counter("pipelines_created", CounterKind::Sum, Numeric::Integer);
    let upload = b.counter("bytes_uploaded", CounterKind::Sum, Numeric::Integer);
    let ents = b.counter("entities", CounterKind::Gauge, Numeric::Integer);
    let play = b.phase("play");
    let menu = b.phase("menu");
    let _ = float_raw;

    let mut f = FrameInput::default();
    let mut begin = 1_000 * MS;
    for i in 0..spec.frames {
        f.clear();
        f.index = i;
        let paused = PAUSED.contains(&i);
        f.paused = paused;
        f.phase = Some(if paused { menu } else { play });
        // A steady 14 ms period with a small deterministic wobble.
        let mut period = 14 * MS + (i % 7) * 100_000;
        let mut update_ns = 3 * MS;
        let mut physics_ns = 2 * MS;
        let mut render_ns = spec.render_ns;
        let mut spawn_ns = 0;
        let mut unscoped_ns = 0;
        let mut main_gpu_ns = 5 * MS;
        let mut pipelines = 0;
        let mut bytes = 64 * 1024 + (i % 3) as i64 * 1024;
        let mut entities = 500 + (i as i64 % 5);
        if paused {
            period = 250 * MS;
        }
        if spec.hitches {
            match i {
                PIPELINE_FRAME => {
                    pipelines = 3;
                    render_ns += 30 * MS;
                }
                UPLOAD_FRAME => {
                    bytes = 32 * 1024 * 1024;
                    unscoped_ns = 30 * MS;
                }
                SPAWN_FRAME => {
                    entities += 2000;
                    spawn_ns = 30 * MS;
                }
                LONG_SCOPE_FRAME => physics_ns += 40 * MS,
                GPU_FRAME => main_gpu_ns = 45 * MS,
                WAIT_FRAME => period = 60 * MS,
                UNKNOWN_FRAME => unscoped_ns = 40 * MS,
                _ => {}
            }
        }
        let work = update_ns + physics_ns + render_ns + spawn_ns + unscoped_ns;
        let gpu_total = 2 * MS + main_gpu_ns;
        period = period.max(work + 2 * MS);
        if spec.hitches && i == GPU_FRAME {
            period = period.max(gpu_total + 2 * MS);
        }
        update_ns += physics_ns;
        f.cpu_begin_ns = begin;
        f.cpu_end_ns = begin + work;
        let mut t = begin;
        let mut spans = vec![SpanInput {
            scope: update,
            depth: 0,
            start_ns: t,
            end_ns: t + update_ns,
        }];
        spans.push(SpanInput {
            scope: physics,
            depth: 1,
            start_ns: t + MS,
            end_ns: t + MS + physics_ns,
        });
        t += update_ns;
        if spawn_ns > 0 {
            spans.push(SpanInput {
                scope: spawn,
                depth: 0,
                start_ns: t,
                end_ns: t + spawn_ns,
            });
            t += spawn_ns;
        }
        spans.push(SpanInput {
            scope: render,
            depth: 0,
            start_ns: t,
            end_ns: t + render_ns,
        });
        f.lanes.push(LaneInput {
            thread: main,
            spans,
            dropped_spans: 0,
        });
        f.lanes.push(LaneInput {
            thread: worker,
            spans: vec![SpanInput {
                scope: jobs,
                depth: 0,
                start_ns: begin + MS,
                end_ns: begin + 4 * MS,
            }],
            dropped_spans: 0,
        });
        let gpu_begin = begin + work;
        f.gpu.push(GpuPassInput {
            pass: shadow,
            depth: 0,
            nominal_ns: Some((gpu_begin, gpu_begin + 2 * MS)),
        });
        f.gpu.push(GpuPassInput {
            pass: main_pass,
            depth: 0,
            nominal_ns: Some((gpu_begin + 2 * MS, gpu_begin + 2 * MS + main_gpu_ns)),
        });
        if spec.with_counters {
            f.counters.push((draws, spec.draw_calls));
            f.counters.push((pipes, pipelines));
            f.counters.push((upload, bytes));
            f.counters.push((ents, entities));
        }
        b.push_frame(&f);
        begin += period;
    }
    b.finish()
}

/// Replaces every floating-point number with "[f64]" so snapshots pin the schema and the
/// integers (counts, exact counters), not timings.
pub fn redact_floats(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            *v = serde_json::Value::String("[f64]".into())
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_floats),
        serde_json::Value::Object(o) => o.values_mut().for_each(redact_floats),
        _ => {}
    }
}

pub fn redacted<T: serde::Serialize>(value: &T) -> serde_json::Value {
    let mut v = serde_json::to_value(value).expect("serializes");
    redact_floats(&mut v);
    v
}
