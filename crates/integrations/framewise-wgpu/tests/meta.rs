//! What goes into META: the queue's declared period, the adapter and its type (the timing
//! regime), and which timestamps are available.

use framewise::{AdapterType, Session};
use framewise_wgpu::example::{ExampleConfig, ExampleWorkload};
use framewise_wgpu::{GpuProfiler, GpuSetup, ProfilerError, TIMER_FEATURES};

use crate::common::{self, Recording};

#[test]
fn meta_carries_the_declared_period_the_adapter_type_and_timestamp_support() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let info = gpu.adapter.get_info();
    let declared_period_ns = gpu.queue.get_timestamp_period();
    let recording = Recording::start(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue).queue_name("graphics"),
        |builder| builder,
    );
    let profiler = GpuProfiler::new(&recording.session, &recording.setup).unwrap();
    assert!(profiler.timestamps_enabled());
    drop(profiler);
    let (_, capture, _dir) = recording.finish();
    let meta = capture.meta().unwrap();

    // The period is the API's own declaration, stored as is.
    assert_eq!(meta.gpu_clocks.len(), 1);
    assert_eq!(
        meta.gpu_clocks[0].timestamp_period_ns,
        f64::from(declared_period_ns)
    );
    assert_eq!(common::name(&capture, meta.gpu_clocks[0].queue), "graphics");

    let adapter = meta.adapter.as_ref().unwrap();
    assert_eq!(adapter.device, info.name);
    assert_eq!(adapter.backend, "vulkan");
    if info.device_type == wgpu::DeviceType::Cpu {
        // lavapipe: software, so its timings are graded "software" and never compared with
        // a hardware run.
        assert_eq!(adapter.adapter_type, AdapterType::Software);
        assert_eq!(declared_period_ns, 1.0, "lavapipe declares 1 ns ticks");
    }
    assert_ne!(adapter.adapter_type, AdapterType::Unknown, "{info:?}");

    assert_eq!(common::feature(&capture, "gpu.timestamps"), Some("enabled"));
    // What the device has (lavapipe has both), and only that, is said enabled.
    let features = gpu.device.features();
    for (feature, key) in [
        (
            wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
            "gpu.timestamps_inside_encoders",
        ),
        (
            wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES,
            "gpu.timestamps_inside_passes",
        ),
    ] {
        let enabled = common::feature(&capture, key) == Some("enabled");
        assert_eq!(enabled, features.contains(feature), "{key}: {info:?}");
        if info.device_type == wgpu::DeviceType::Cpu {
            assert!(enabled, "lavapipe supports {key}");
        }
    }
    assert!(common::feature(&capture, "gpu.clock_anchor")
        .unwrap()
        .contains("per frame"));
}

#[test]
fn a_session_without_the_declared_queue_is_refused() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let setup = GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue);
    let session = Session::builder()
        .start(framewise::Sink::stream(std::io::sink()))
        .unwrap();
    let error = GpuProfiler::new(&session, &setup).unwrap_err();
    assert!(matches!(error, ProfilerError::QueueNotDeclared { ref name } if name == "wgpu"));
    assert!(error.to_string().contains("GpuSetup::declare"), "{error}");
    session.stop().unwrap();
}

#[test]
fn gpu_passes_map_onto_the_frame_graphs_pass_nodes() {
    let _serial = common::serial();
    let Some(gpu) = common::gpu(TIMER_FEATURES) else {
        return;
    };
    let recording = Recording::start(
        GpuSetup::new(&gpu.adapter, &gpu.device, &gpu.queue),
        |builder| builder.level(framewise::CaptureLevel::Workload),
    );
    let session = &recording.session;
    let mut profiler = GpuProfiler::new(session, &recording.setup).unwrap();
    let work = ExampleWorkload::new(session, &gpu.device, ExampleConfig::with_particles(64));
    let topology = session.register_topology(&work.topology());
    for frame in 0..3 {
        let _frame = session.frame();
        session.set_topology(topology);
        work.run_frame(session, &mut profiler, &gpu.device);
        if frame == 2 {
            profiler
                .flush(session, std::time::Duration::from_secs(30))
                .unwrap();
        }
    }
    drop(profiler);
    let (_, capture, _dir) = recording.finish();
    let graph = &capture.topologies()[0];
    let nodes: Vec<_> = graph.passes.iter().map(|pass| pass.label).collect();
    for frame in common::frames(&capture) {
        assert_eq!(frame.topology, Some(graph.id));
        // Every wgpu pass is a node of the graph, by symbol; the scopes are not.
        let gpu_passes: Vec<_> = frame
            .gpu
            .passes
            .iter()
            .filter(|pass| nodes.contains(&pass.pass))
            .map(|pass| common::name(&capture, pass.pass))
            .collect();
        assert_eq!(gpu_passes, ["particles.update", "particles.draw"]);
        let with_workload: Vec<_> = frame
            .workloads
            .iter()
            .map(|workload| workload.pass)
            .collect();
        assert_eq!(with_workload, nodes);
    }
}
