//! Query pools grow to fit the largest frame, are reused across frames, and stop being made
//! once the frames in flight have theirs.

use framewise::{PassLabel, Session};
use framewise_wgpu::{GpuProfiler, GpuSetup, HeadlessGpu, ProfilerStats, TIMER_FEATURES};

use crate::common::{self, Recording};

/// One frame of `passes` empty timed compute passes, then a wait for the GPU and a
/// collection, so each frame's results are delivered before the next frame records: one
/// frame in flight, deterministically, so the pool counts below are exact.
fn frame(
    gpu: &HeadlessGpu,
    session: &Session,
    profiler: &mut GpuProfiler,
    labels: &[PassLabel],
    passes: usize,
) -> ProfilerStats {
    let _frame = session.frame();
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    for label in labels.iter().cycle().take(passes) {
        drop(profiler.compute_pass(&mut encoder, *label, &Default::default()));
    }
    profiler.resolve(&mut encoder);
    profiler.submit(session, [encoder.finish()]);
    profiler.end_frame(session);
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .unwrap();
    profiler.collect(session);
    assert_eq!(profiler.stats().frames_pending, 0);
    profiler.stats()
}

#[test]
fn pools_are_reused_and_stop_growing_after_warm_up() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let recording = Recording::start(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue),
        |builder| builder,
    );
    let session = &recording.session;
    let mut profiler = GpuProfiler::new(session, &recording.setup).unwrap();
    let labels: Vec<PassLabel> = (0..8)
        .map(|i| session.pass_label(&format!("pass{i}")))
        .collect();

    // Small frames (8 passes, 16 queries): the first pool (64 queries) holds each, and the
    // one pool is reused every frame.
    let warm = frame(&gpu, session, &mut profiler, &labels, 8);
    assert_eq!((warm.pools_created, warm.pools_live), (1, 1), "{warm:?}");
    assert_eq!(warm.query_capacity, 64);
    for _ in 0..100 {
        let stats = frame(&gpu, session, &mut profiler, &labels, 8);
        let pools = |s: ProfilerStats| {
            (
                s.pools_created,
                s.pools_destroyed,
                s.pools_live,
                s.query_capacity,
            )
        };
        assert_eq!(pools(stats), pools(warm), "{stats:?}");
    }

    // A frame of 40 passes (80 queries) outgrows the pool: it chains a second one, and every
    // pool made afterwards holds the largest frame, rounded up to a power of two. The
    // outgrown pools are dropped when the frame's results are in.
    let grown = frame(&gpu, session, &mut profiler, &labels, 40);
    assert_eq!(grown.pools_created, 2, "{grown:?}");
    assert_eq!(
        (grown.pools_destroyed, grown.pools_live),
        (2, 0),
        "{grown:?}"
    );
    let rewarmed = frame(&gpu, session, &mut profiler, &labels, 40);
    assert_eq!(rewarmed.pools_created, 3, "{rewarmed:?}");
    assert_eq!((rewarmed.pools_live, rewarmed.query_capacity), (1, 128));
    for _ in 0..100 {
        let stats = frame(&gpu, session, &mut profiler, &labels, 40);
        assert_eq!(stats.pools_created, rewarmed.pools_created, "{stats:?}");
        assert_eq!(stats.pools_destroyed, rewarmed.pools_destroyed, "{stats:?}");
        assert_eq!(stats.pools_live, 1);
    }
    // Smaller frames reuse the large pool rather than make small ones.
    for _ in 0..10 {
        let stats = frame(&gpu, session, &mut profiler, &labels, 3);
        assert_eq!(stats.pools_created, rewarmed.pools_created, "{stats:?}");
    }
    let stats = profiler.stats();
    assert_eq!(stats.readback_failures, 0);
    assert_eq!(stats.frames_untimed, 0);
    assert_eq!(stats.resolve_fallbacks, 0);
    assert_eq!(stats.max_latency_frames, 0, "collected within each frame");
    drop(profiler);
    let (report, capture, _dir) = recording.finish();
    assert_eq!(report.gpu_results_missing, 0);
    // Every pass of every frame came back timed, including the chained-pool frame.
    let passes: Vec<usize> = common::frames(&capture)
        .iter()
        .map(|frame| {
            assert!(frame.gpu.passes.iter().all(|pass| pass.timing.is_some()));
            frame.gpu.passes.len()
        })
        .collect();
    assert_eq!(passes.len(), 1 + 100 + 1 + 1 + 100 + 10);
    assert_eq!(passes.iter().filter(|&&n| n == 40).count(), 1 + 1 + 100);
}
