//! Timestamps: nested passes nest, every pass lies inside its frame's submit → readback CPU
//! window, and results arrive for every frame within the wait bound. Structure and ordering
//! only, never absolute durations.

use std::time::Duration;

use framewise::{CaptureLevel, ClockChoice};
use framewise_format::model::{Frame, GpuTiming};
use framewise_format::read::Capture;
use framewise_wgpu::example::{ExampleConfig, ExampleWorkload};
use framewise_wgpu::{GpuProfiler, GpuSetup, HeadlessGpu, TIMER_FEATURES};

use crate::common::{self, Recording};

const FRAMES: u64 = 40;
/// How long each test frame lasts on the CPU: a game's frame pacing, shortened.
const FRAME_PACING: Duration = Duration::from_millis(2);
/// Frames of GPU work in flight, as a swapchain allows: frame N starts once frame N − 2's
/// work is done, so a slow (or busy) software GPU slows the test instead of piling up work.
const FRAMES_IN_FLIGHT: usize = 2;
/// The session holds a frame this many frames for its GPU results (the recorder's default).
const WAIT_FRAMES: u32 = framewise::DEFAULT_GPU_WAIT_FRAMES;

type Run = (
    framewise::Report,
    Capture,
    framewise_wgpu::ProfilerStats,
    Option<(i128, u64)>,
);

/// Runs the example workload for `FRAMES` paced frames, flushing in the last one, and
/// returns the capture, the profiler's stats and the offset of `CLOCK_MONOTONIC` from the
/// session clock (see [`monotonic_minus_session_ns`]).
fn run_example(gpu: &HeadlessGpu) -> Run {
    let recording = Recording::start(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue),
        |builder| {
            builder
                .level(CaptureLevel::Workload)
                .clock(ClockChoice::Monotonic)
                .gpu_wait_frames(WAIT_FRAMES)
        },
    );
    let session = &recording.session;
    let mut profiler = GpuProfiler::new(session, &recording.setup).unwrap();
    let work = ExampleWorkload::new(session, &gpu.device, ExampleConfig::with_particles(4096));
    let offset = monotonic_minus_session_ns(session);
    let mut submissions = std::collections::VecDeque::new();
    for frame in 0..FRAMES {
        let _frame = session.frame();
        if submissions.len() == FRAMES_IN_FLIGHT {
            let oldest = submissions.pop_front();
            gpu.device
                .poll(wgpu::PollType::Wait {
                    submission_index: oldest,
                    timeout: None,
                })
                .unwrap();
        }
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        work.encode(&mut profiler, &mut encoder);
        profiler.resolve(&mut encoder);
        submissions.push_back(profiler.submit(session, [encoder.finish()]));
        profiler.end_frame(session);
        std::thread::sleep(FRAME_PACING);
        if frame == FRAMES - 1 {
            profiler.flush(session, Duration::from_secs(30)).unwrap();
        }
    }
    let stats = profiler.stats();
    let (report, capture, _dir) = recording.finish();
    (report, capture, stats, offset)
}

/// `CLOCK_MONOTONIC` minus the session clock, ns, and the uncertainty of that difference
/// (the width of the bracketing reads). `None` off Linux.
fn monotonic_minus_session_ns(session: &framewise::Session) -> Option<(i128, u64)> {
    #[cfg(target_os = "linux")]
    {
        fn monotonic_ns() -> u64 {
            let mut now = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: `clock_gettime` writes one `timespec` through a valid pointer.
            let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
            assert_eq!(rc, 0);
            now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
        }
        // The tightest of a few brackets.
        (0..16)
            .map(|_| {
                let before = monotonic_ns();
                let session_ns = session.now_ns();
                let after = monotonic_ns();
                let middle = i128::from(before) + i128::from(after - before) / 2;
                (middle - i128::from(session_ns), after - before)
            })
            .min_by_key(|&(_, width)| width)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = session;
        None
    }
}

fn timing(frame: &Frame, pass: usize) -> GpuTiming {
    frame.gpu.passes[pass]
        .timing
        .unwrap_or_else(|| panic!("frame {}: pass {pass} untimed", frame.index))
}

#[test]
fn nested_passes_nest_in_pre_order() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let serial_queue = gpu.adapter.get_info().driver == "llvmpipe";
    let (_, capture, _, _) = run_example(&gpu);
    let frames = common::frames(&capture);
    assert_eq!(frames.len() as u64, FRAMES);
    for frame in &frames {
        let names: Vec<(String, u32)> = frame
            .gpu
            .passes
            .iter()
            .map(|pass| (common::name(&capture, pass.pass), pass.depth))
            .collect();
        assert_eq!(
            names,
            [
                ("gpu.frame".to_owned(), 0),
                ("particles.update".to_owned(), 1),
                ("particles.draw".to_owned(), 1),
                ("particles.instances".to_owned(), 2),
            ],
            "frame {}",
            frame.index
        );
        for (child, pass) in frame.gpu.passes.iter().enumerate() {
            let own = timing(frame, child);
            assert!(
                own.begin_ticks <= own.end_ticks,
                "frame {}: {own:?}",
                frame.index
            );
            if pass.depth == 0 {
                continue;
            }
            // The parent is the nearest earlier pass one level up (passes are in pre-order).
            let parent = (0..child)
                .rev()
                .find(|&i| frame.gpu.passes[i].depth + 1 == pass.depth)
                .unwrap();
            let outer = timing(frame, parent);
            assert!(
                outer.begin_ticks <= own.begin_ticks && own.end_ticks <= outer.end_ticks,
                "frame {}: pass {child} {own:?} escapes its parent {parent} {outer:?}",
                frame.index
            );
        }
        if serial_queue {
            // lavapipe runs one queue's passes one after another, in submission order.
            assert!(timing(frame, 1).end_ticks <= timing(frame, 2).begin_ticks);
        }
    }
}

#[test]
fn every_pass_lies_inside_its_frames_submit_to_readback_window() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let info = gpu.adapter.get_info();
    let (_, capture, _, offset) = run_example(&gpu);
    let period_ns = capture.meta().unwrap().gpu_clocks[0].timestamp_period_ns;
    // On Mesa's software drivers a timestamp is CLOCK_MONOTONIC in ns, so the GPU interval
    // can be checked against the CPU anchors directly, with no anchoring assumption at all.
    let raw_clock = (info.driver == "llvmpipe" && period_ns == 1.0)
        .then_some(offset)
        .flatten();
    if raw_clock.is_none() {
        eprintln!(
            "note: {} does not stamp with CLOCK_MONOTONIC; only the anchored check runs",
            info.name
        );
    }
    for frame in common::frames(&capture) {
        let anchor = frame.gpu.queues[0].anchor;
        let submit_ns = anchor.cpu_submit_ns.unwrap();
        let readback_ns = anchor.cpu_readback_ns.unwrap();
        assert!(
            frame.cpu_begin_ns <= submit_ns && submit_ns <= frame.cpu_end_ns,
            "frame {}: submitted outside its own CPU interval",
            frame.index
        );
        assert!(submit_ns < readback_ns, "frame {}", frame.index);

        // Anchored as the inspector anchors it: the first begin at the submit time. Every
        // pass must then end before the results were read back.
        let first_begin = (0..frame.gpu.passes.len())
            .map(|i| timing(&frame, i).begin_ticks)
            .min()
            .unwrap();
        for i in 0..frame.gpu.passes.len() {
            let own = timing(&frame, i);
            let end_ns = submit_ns as f64 + (own.end_ticks - first_begin) as f64 * period_ns;
            assert!(
                end_ns <= readback_ns as f64,
                "frame {}: pass {i} ends at {end_ns} ns, after the readback at {readback_ns} ns",
                frame.index
            );
        }

        if let Some((monotonic_minus_session, uncertainty_ns)) = raw_clock {
            let slack = i128::from(uncertainty_ns) + 1_000;
            let window = (
                i128::from(submit_ns) + monotonic_minus_session - slack,
                i128::from(readback_ns) + monotonic_minus_session + slack,
            );
            for i in 0..frame.gpu.passes.len() {
                let own = timing(&frame, i);
                assert!(
                    window.0 <= i128::from(own.begin_ticks)
                        && i128::from(own.end_ticks) <= window.1,
                    "frame {}: pass {i} at {own:?} outside the CPU window {window:?} \
                     (CLOCK_MONOTONIC ns)",
                    frame.index
                );
            }
        }
    }
}

#[test]
fn results_arrive_for_every_frame_within_the_wait_bound() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let (report, capture, stats, _) = run_example(&gpu);
    assert_eq!(report.frames_written, FRAMES);
    assert_eq!(report.gpu_results_missing, 0);
    assert_eq!(report.gpu_deliveries_late, 0);
    assert_eq!(stats.frames_recorded, FRAMES);
    assert_eq!(stats.frames_delivered, FRAMES);
    assert_eq!(stats.frames_pending, 0);
    assert_eq!(stats.last_delivered_frame, Some(FRAMES - 1));
    // A frame's results are read back as soon as the GPU is done with it: no later than the
    // frame that had to wait for that work (the swapchain-like bound), well inside the
    // session's wait.
    assert!(
        stats.max_latency_frames <= FRAMES_IN_FLIGHT as u64,
        "latency {} frames",
        stats.max_latency_frames
    );
    assert!(FRAMES_IN_FLIGHT as u64 <= u64::from(WAIT_FRAMES));
    // Pools: one per frame in flight, and one for the frame being recorded while the oldest
    // waits to be collected; never more, however many frames run.
    assert!(
        stats.pools_created <= FRAMES_IN_FLIGHT as u64 + 1,
        "{stats:?}"
    );
    let frames = common::frames(&capture);
    let indices: Vec<u64> = frames.iter().map(|frame| frame.index).collect();
    assert_eq!(indices, (0..FRAMES).collect::<Vec<_>>());
    for frame in &frames {
        assert!(
            frame.gpu.expected && !frame.gpu.results_missing,
            "frame {}",
            frame.index
        );
        assert!(
            frame.gpu.passes.iter().all(|pass| pass.timing.is_some()),
            "frame {}",
            frame.index
        );
    }
}
