//! Without timestamps, passes and workload are still recorded, with time absent (never 0)
//! and META saying why; frames the profiler cannot time are untimed, never stalled.

use std::time::Duration;

use framewise::CaptureLevel;
use framewise_wgpu::example::{ExampleConfig, ExampleWorkload};
use framewise_wgpu::{GpuProfiler, GpuSetup, ProfilerSettings, TIMER_FEATURES};

use crate::common::{self, Recording};

const FRAMES: u64 = 12;

fn small() -> ExampleConfig {
    ExampleConfig::with_particles(256)
}

/// Runs the example untimed and checks the capture: every pass present with time absent,
/// anchors and workload present, and META's reason.
fn passes_are_recorded_with_time_absent(setup: GpuSetup, expected_reason: &str) {
    let device = setup.device().clone();
    let recording = Recording::start(setup, |builder| builder.level(CaptureLevel::Workload));
    let session = &recording.session;
    let mut profiler = GpuProfiler::new(session, &recording.setup).unwrap();
    assert!(!profiler.timestamps_enabled());
    let work = ExampleWorkload::new(session, &device, small());
    for _ in 0..FRAMES {
        let _frame = session.frame();
        // Untimed frames are delivered at once: nothing is ever pending.
        work.run_frame(session, &mut profiler, &device);
        assert_eq!(profiler.stats().frames_pending, 0);
    }
    let stats = profiler.stats();
    assert_eq!(stats.frames_delivered, FRAMES);
    assert_eq!(stats.pools_created, 0, "no query pools without timestamps");
    drop(profiler);
    let (report, capture, _dir) = recording.finish();
    assert_eq!(report.gpu_results_missing, 0);
    let reason = common::feature(&capture, "gpu.timestamps").unwrap();
    assert!(
        reason.starts_with("absent: ") && reason.contains(expected_reason),
        "{reason}"
    );
    for key in [
        "gpu.timestamps_inside_encoders",
        "gpu.timestamps_inside_passes",
    ] {
        assert!(common::feature(&capture, key)
            .unwrap()
            .starts_with("absent: "));
    }
    let frames = common::frames(&capture);
    assert_eq!(frames.len() as u64, FRAMES);
    for frame in &frames {
        assert!(frame.gpu.expected && !frame.gpu.results_missing);
        let anchor = frame.gpu.queues[0].anchor;
        assert!(anchor.cpu_submit_ns.unwrap() <= anchor.cpu_readback_ns.unwrap());
        let passes: Vec<(String, u32, bool)> = frame
            .gpu
            .passes
            .iter()
            .map(|pass| {
                (
                    common::name(&capture, pass.pass),
                    pass.depth,
                    pass.timing.is_some(),
                )
            })
            .collect();
        assert_eq!(
            passes,
            [
                ("gpu.frame".to_owned(), 0, false),
                ("particles.update".to_owned(), 1, false),
                ("particles.draw".to_owned(), 1, false),
                ("particles.instances".to_owned(), 2, false),
            ]
        );
        assert_eq!(frame.workloads.len(), 2);
        let update = &frame.workloads[0].workload;
        assert_eq!(update.dispatches, Some(1));
        assert_eq!(update.workgroups, Some(u64::from(256u32.div_ceil(64))));
        assert_eq!(update.workgroup_size, Some([64, 1, 1]));
        let draw = &frame.workloads[1].workload;
        assert_eq!(draw.draws, Some(1));
        assert_eq!(draw.instances, Some(256));
    }
}

#[test]
fn a_device_without_timestamps_records_passes_with_time_absent() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(wgpu::Features::empty()) else {
        return;
    };
    assert!(!gpu
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY));
    let expected = if gpu
        .adapter
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        "the device was created without TIMESTAMP_QUERY"
    } else {
        "the adapter does not support TIMESTAMP_QUERY"
    };
    passes_are_recorded_with_time_absent(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue),
        expected,
    );
}

#[test]
fn a_host_can_switch_timestamps_off() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    passes_are_recorded_with_time_absent(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue).without_timestamps(),
        "disabled by the host",
    );
}

#[test]
fn a_leaked_scope_leaves_its_frame_untimed_instead_of_hanging_the_gpu() {
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
    let leaked = session.pass_label("leaked");
    let after = session.pass_label("after");
    {
        let _frame = session.frame();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        // The scope's end timestamp is never written: resolving it would wait forever.
        std::mem::forget(profiler.scope(&mut encoder, leaked));
        profiler.resolve(&mut encoder);
        profiler.submit(session, [encoder.finish()]);
        profiler.end_frame(session);
    }
    {
        let _frame = session.frame();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        drop(profiler.compute_pass(&mut encoder, after, &Default::default()));
        profiler.resolve(&mut encoder);
        profiler.submit(session, [encoder.finish()]);
        profiler.end_frame(session);
        profiler.flush(session, Duration::from_secs(30)).unwrap();
    }
    assert_eq!(profiler.stats().frames_untimed, 1);
    drop(profiler);
    let (report, capture, _dir) = recording.finish();
    assert_eq!(report.gpu_results_missing, 0);
    let frames = common::frames(&capture);
    assert_eq!(frames[0].gpu.passes.len(), 1);
    assert_eq!(frames[0].gpu.passes[0].timing, None);
    // The next frame is timed again, at depth 0: the leaked scope's depth was reset.
    assert_eq!(frames[1].gpu.passes.len(), 1);
    assert_eq!(frames[1].gpu.passes[0].depth, 0);
    assert!(frames[1].gpu.passes[0].timing.is_some());
}

/// A frame waits for its GPU results no longer than the session holds it (`gpu_wait_frames`):
/// more frames pending than that would only read back results the capture ignores, so the
/// profiler's bound is at most `gpu_wait_frames` + 1, whatever the settings ask.
#[test]
fn the_pending_bound_is_at_most_what_the_session_waits_for() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    for (wait, asked, bound) in [(3, 8, 4), (0, 8, 1), (64, 8, 8), (3, 0, 1), (3, 2, 2)] {
        let recording = Recording::start(
            GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue),
            |builder| builder.gpu_wait_frames(wait),
        );
        assert_eq!(recording.session.gpu_wait_frames(), wait);
        let mut settings = ProfilerSettings::default();
        settings.max_pending_frames = asked;
        let profiler =
            GpuProfiler::with_settings(&recording.session, &recording.setup, settings).unwrap();
        assert_eq!(
            profiler.settings().max_pending_frames,
            bound,
            "gpu_wait_frames {wait}, max_pending_frames {asked}"
        );
        drop(profiler);
        drop(recording.finish());
    }
}

#[test]
fn frames_beyond_the_pending_bound_are_recorded_untimed() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let recording = Recording::start(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue),
        |builder| builder.gpu_wait_frames(64),
    );
    let session = &recording.session;
    let mut settings = ProfilerSettings::default();
    settings.max_pending_frames = 1;
    let mut profiler = GpuProfiler::with_settings(session, &recording.setup, settings).unwrap();
    let work = ExampleWorkload::new(session, &gpu.device, small());
    const RUN: u64 = 30;
    for frame in 0..RUN {
        let _frame = session.frame();
        work.run_frame(session, &mut profiler, &gpu.device);
        assert!(profiler.stats().frames_pending <= 1);
        if frame == RUN - 1 {
            profiler.flush(session, Duration::from_secs(30)).unwrap();
        }
    }
    let stats = profiler.stats();
    assert_eq!(stats.frames_delivered, RUN);
    assert!(stats.pools_live <= 2, "{stats:?}");
    drop(profiler);
    let (report, capture, _dir) = recording.finish();
    assert_eq!(report.gpu_results_missing, 0);
    // Each frame is wholly timed or wholly untimed, and the untimed ones are those counted.
    let mut untimed = 0;
    for frame in common::frames(&capture) {
        let timed = frame
            .gpu
            .passes
            .iter()
            .filter(|p| p.timing.is_some())
            .count();
        assert!(
            timed == 0 || timed == frame.gpu.passes.len(),
            "frame {}",
            frame.index
        );
        assert_eq!(frame.gpu.passes.len(), 4);
        untimed += u64::from(timed == 0);
    }
    assert_eq!(untimed, stats.frames_untimed);
}
