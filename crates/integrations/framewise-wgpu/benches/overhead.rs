//! CPU-side cost of timing GPU passes: framewise-wgpu side by side with wgpu-profiler on the
//! same workload, in the same run, on the same device.
//!
//! Each iteration is one frame: one encoder scope holding `PASSES` compute passes (one
//! single-workgroup dispatch each), the timer's resolve, the submit, the timer's end-of-frame
//! work (readback of an earlier frame, delivery) and one non-blocking device poll. Variants:
//!
//! - **baseline**: the same passes, no timestamps, no timer;
//! - **floor**: the same timestamps written by hand into one preallocated query set, resolved,
//!   mapped and read back with no bookkeeping at all (wgpu's own cost, paid by any timer);
//! - **framewise-wgpu** and **wgpu-profiler** (debug groups off, as framewise pushes none).
//!
//! Only the CPU time of that sequence is measured: the blocking wait for the GPU that follows
//! each frame (which keeps one earlier frame in flight for every variant) is not.
//! Recorded cost per pass = (variant − baseline) / `PASSES`.
//!
//! Criterion measures each variant in turn. On a shared machine the load drifts between
//! variants, so the bench then also interleaves them (`ROUNDS` rounds of `BATCH` frames of
//! each) and prints the median frame time per variant, which is what docs/performance/gpu.md
//! reports.
//!
//! Run: `cargo bench -p framewise-wgpu --bench overhead -j2`

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use framewise::{CaptureLevel, Session, Sink};
use framewise_wgpu::{GpuProfiler, GpuSetup, HeadlessGpu};

const PASSES: usize = 32;
const ROUNDS: usize = 40;
const BATCH: u32 = 64;

const SHADER: &str = "@compute @workgroup_size(1) fn main() {}";

struct Rig {
    gpu: HeadlessGpu,
    pipeline: wgpu::ComputePipeline,
}

impl Rig {
    fn encoder(&self) -> wgpu::CommandEncoder {
        self.gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None })
    }
}

/// One variant: its name, the session its frames open (framewise only) and its frame.
struct Variant<'a> {
    name: &'static str,
    session: Option<&'a Session>,
    frame: Box<dyn FnMut() + 'a>,
}

impl Variant<'_> {
    /// Runs `frames` frames and returns the CPU time of their work, excluding the wait for the
    /// GPU after each.
    fn run(&mut self, rig: &Rig, frames: u64) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..frames {
            let guard = self.session.map(Session::frame);
            let start = Instant::now();
            (self.frame)();
            total += start.elapsed();
            drop(guard);
            let _ = rig.gpu.device.poll(wgpu::PollType::wait_indefinitely());
        }
        total
    }
}

fn baseline(rig: &Rig) -> impl FnMut() + '_ {
    move || {
        let mut encoder = rig.encoder();
        for _ in 0..PASSES {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("pass"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&rig.pipeline);
            pass.dispatch_workgroups(1, 1, 1);
        }
        rig.gpu.queue.submit([encoder.finish()]);
        let _ = rig.gpu.device.poll(wgpu::PollType::Poll);
    }
}

fn floor(rig: &Rig) -> impl FnMut() + '_ {
    let queries = (PASSES as u32 + 1) * 2;
    let bytes = u64::from(queries) * 8;
    let device = &rig.gpu.device;
    let query_set = device.create_query_set(&wgpu::QuerySetDescriptor {
        label: None,
        ty: wgpu::QueryType::Timestamp,
        count: queries,
    });
    let resolve = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback: Vec<(wgpu::Buffer, Arc<AtomicBool>)> = (0..2)
        .map(|_| {
            let buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: bytes,
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                mapped_at_creation: false,
            });
            (buffer, Arc::new(AtomicBool::new(false)))
        })
        .collect();
    let mut frame = 0usize;
    move || {
        let (buffer, mapped) = &readback[frame % 2];
        let mut encoder = rig.encoder();
        let frame_query = PASSES as u32 * 2;
        encoder.write_timestamp(&query_set, frame_query);
        for pass_index in 0..PASSES as u32 {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("pass"),
                timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                    query_set: &query_set,
                    beginning_of_pass_write_index: Some(pass_index * 2),
                    end_of_pass_write_index: Some(pass_index * 2 + 1),
                }),
            });
            pass.set_pipeline(&rig.pipeline);
            pass.dispatch_workgroups(1, 1, 1);
        }
        encoder.write_timestamp(&query_set, frame_query + 1);
        encoder.resolve_query_set(&query_set, 0..queries, &resolve, 0);
        encoder.copy_buffer_to_buffer(&resolve, 0, buffer, 0, bytes);
        rig.gpu.queue.submit([encoder.finish()]);
        let flag = Arc::clone(mapped);
        buffer.map_async(wgpu::MapMode::Read, .., move |result| {
            flag.store(result.is_ok(), Ordering::Release);
        });
        let _ = rig.gpu.device.poll(wgpu::PollType::Poll);
        // Read the previous frame's timestamps, as a timer delivers them.
        let (previous, previous_mapped) = &readback[(frame + 1) % 2];
        if previous_mapped.swap(false, Ordering::Acquire) {
            if let Ok(view) = previous.get_mapped_range(..) {
                let sum = view
                    .chunks_exact(8)
                    .filter_map(|raw| raw.try_into().ok().map(u64::from_ne_bytes))
                    .fold(0u64, u64::wrapping_add);
                black_box(sum);
            }
            previous.unmap();
        }
        frame += 1;
    }
}

fn framewise_wgpu<'a>(
    rig: &'a Rig,
    session: &'a Session,
    mut profiler: GpuProfiler,
) -> impl FnMut() + 'a {
    let frame_label = session.pass_label("frame");
    let pass_label = session.pass_label("pass");
    move || {
        let mut encoder = rig.encoder();
        {
            let mut scope = profiler.scope(&mut encoder, frame_label);
            for _ in 0..PASSES {
                let mut pass = scope.compute_pass(
                    pass_label,
                    &wgpu::ComputePassDescriptor {
                        label: Some("pass"),
                        timestamp_writes: None,
                    },
                );
                pass.set_raw_pipeline(&rig.pipeline);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        profiler.resolve(&mut encoder);
        profiler.submit(session, [encoder.finish()]);
        black_box(profiler.end_frame(session));
    }
}

fn wgpu_profiler(rig: &Rig) -> impl FnMut() + '_ {
    let settings = wgpu_profiler::GpuProfilerSettings {
        enable_timer_queries: true,
        enable_debug_groups: false,
        ..Default::default()
    };
    let mut profiler =
        wgpu_profiler::GpuProfiler::new(&rig.gpu.device, settings).expect("wgpu-profiler starts");
    let period = rig.gpu.queue.get_timestamp_period();
    move || {
        let mut encoder = rig.encoder();
        {
            let mut scope = profiler.scope("frame", &mut encoder);
            for _ in 0..PASSES {
                let mut pass = scope.scoped_compute_pass("pass");
                pass.set_pipeline(&rig.pipeline);
                pass.dispatch_workgroups(1, 1, 1);
            }
        }
        profiler.resolve_queries(&mut encoder);
        rig.gpu.queue.submit([encoder.finish()]);
        profiler
            .end_frame()
            .expect("every query closed and resolved");
        let _ = rig.gpu.device.poll(wgpu::PollType::Poll);
        black_box(profiler.process_finished_frame(period));
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn bench(c: &mut Criterion) {
    let gpu = match HeadlessGpu::new() {
        Ok(gpu) => gpu,
        Err(error) => {
            eprintln!("skipping the wgpu overhead benchmark: {error}");
            return;
        }
    };
    if !gpu
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        eprintln!("skipping the wgpu overhead benchmark: the adapter has no timestamps");
        return;
    }
    let info = gpu.adapter.get_info();
    eprintln!(
        "adapter: {} ({}, {})",
        info.name, info.driver, info.driver_info
    );
    let module = gpu
        .device
        .create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
    let pipeline = gpu
        .device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
    let rig = Rig { gpu, pipeline };

    let setup = GpuSetup::new(&rig.gpu.adapter, &rig.gpu.device, &rig.gpu.queue);
    let session = setup
        .declare(Session::builder().level(CaptureLevel::Workload))
        .start(Sink::stream(std::io::sink()))
        .expect("a session writing nowhere starts");
    let profiler = GpuProfiler::new(&session, &setup).expect("the queue is declared");

    let mut variants = vec![
        Variant {
            name: "baseline (no timing)",
            session: None,
            frame: Box::new(baseline(&rig)),
        },
        Variant {
            name: "timestamps by hand (floor)",
            session: None,
            frame: Box::new(floor(&rig)),
        },
        Variant {
            name: "framewise-wgpu",
            session: Some(&session),
            frame: Box::new(framewise_wgpu(&rig, &session, profiler)),
        },
        Variant {
            name: "wgpu-profiler",
            session: None,
            frame: Box::new(wgpu_profiler(&rig)),
        },
    ];

    let mut group = c.benchmark_group(format!("gpu_frame_{PASSES}_passes"));
    group
        .throughput(Throughput::Elements(PASSES as u64))
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for variant in &mut variants {
        group.bench_function(variant.name, |b| {
            b.iter_custom(|iterations| variant.run(&rig, iterations));
        });
    }
    group.finish();

    // Interleaved: every round runs a batch of each variant, so load drift hits all alike.
    let mut frame_us: Vec<Vec<f64>> = vec![Vec::with_capacity(ROUNDS); variants.len()];
    for _ in 0..ROUNDS {
        for (variant, samples) in variants.iter_mut().zip(&mut frame_us) {
            let total = variant.run(&rig, u64::from(BATCH));
            samples.push(total.as_secs_f64() * 1e6 / f64::from(BATCH));
        }
    }
    let medians: Vec<f64> = frame_us.iter_mut().map(|s| median(s)).collect();
    let baseline_us = medians[0];
    eprintln!(
        "\ninterleaved, {ROUNDS} rounds x {BATCH} frames, {PASSES} passes per frame \
         (median frame CPU time; per pass = (variant - baseline) / {PASSES}):"
    );
    for (variant, frame) in variants.iter().zip(&medians) {
        eprintln!(
            "  {:<28} {:>8.1} us/frame  {:>6.2} us/pass over baseline",
            variant.name,
            frame,
            (frame - baseline_us) / PASSES as f64
        );
    }
    drop(variants);
    let report = session.stop().expect("the session stops");
    eprintln!(
        "framewise-wgpu session: {} frames, GPU results missing {} (the last frame's, at stop)",
        report.frames_closed, report.gpu_results_missing
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
