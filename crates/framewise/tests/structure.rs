//! Topology (level 1) and workload (level 2): deduplicated by content hash, gated by level.

use framewise::{
    Access, CaptureLevel, EdgeDesc, PassDesc, PassKind, ResourceDesc, ResourceKind, Session,
    TopologyDesc, Workload, WriterMode,
};

use crate::common::{self, name};

fn graph() -> TopologyDesc {
    let mut depth = ResourceDesc::new("depth", ResourceKind::Texture);
    depth.format = Some("depth32float".into());
    depth.declared_bytes = Some(1920 * 1080 * 4);
    depth.transient = true;
    TopologyDesc {
        passes: vec![
            PassDesc::new("shadow", PassKind::Render),
            PassDesc::new("lighting", PassKind::Compute),
        ],
        resources: vec![depth],
        edges: vec![
            EdgeDesc {
                pass: 0,
                resource: 0,
                access: Access::Write,
                version: 1,
            },
            EdgeDesc {
                pass: 1,
                resource: 0,
                access: Access::Read,
                version: 1,
            },
        ],
    }
}

#[test]
fn a_topology_is_written_once_and_each_frame_costs_an_id() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("topology");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .level(CaptureLevel::Workload)
        .start(path.as_path())
        .unwrap();
    let id = session.register_topology(&graph());
    assert_eq!(
        session.register_topology(&graph()),
        id,
        "same content, same id"
    );
    let mut other = graph();
    other.passes[1].culled = true;
    let other_id = session.register_topology(&other);
    assert_ne!(other_id, id);
    let shadow = session.pass_label("shadow");
    let pipeline = session.pipeline_label("shadow_pipeline");
    for frame in 0..10u64 {
        session.set_topology(if frame == 5 { other_id } else { id });
        session.record_workload(
            shadow,
            Workload {
                draws: Some(100 + frame),
                dispatches: None,
                pipeline: Some(pipeline.symbol()),
                ..Workload::default()
            },
        );
        session.end_frame();
    }
    session.stop().unwrap();

    let capture = common::open(&path);
    assert_eq!(
        capture.topologies().len(),
        2,
        "one TOPO record per distinct graph"
    );
    let topology = capture.topologies().iter().find(|t| t.id == id.0).unwrap();
    let passes: Vec<String> = topology
        .passes
        .iter()
        .map(|p| name(&capture, p.label))
        .collect();
    assert_eq!(passes, vec!["shadow", "lighting"]);
    assert_eq!(name(&capture, topology.resources[0].label), "depth");
    assert_eq!(topology.edges.len(), 2);
    let frames = common::frames(&capture);
    for frame in &frames {
        let expected = if frame.index == 5 { other_id } else { id };
        assert_eq!(frame.topology, Some(expected.0));
        assert_eq!(frame.workloads.len(), 1);
        let workload = &frame.workloads[0];
        assert_eq!(name(&capture, workload.pass), "shadow");
        assert_eq!(workload.workload.draws, Some(100 + frame.index));
        assert_eq!(
            workload.workload.dispatches, None,
            "unknown stays unknown, not zero"
        );
        assert_eq!(
            name(&capture, workload.workload.pipeline.unwrap()),
            "shadow_pipeline"
        );
    }
}

#[test]
fn the_timing_level_records_neither_topology_nor_workload() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("timing-level");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    assert_eq!(session.level(), CaptureLevel::Timing);
    let id = session.register_topology(&graph());
    session.set_topology(id);
    session.record_workload(
        session.pass_label("shadow"),
        Workload {
            draws: Some(1),
            ..Workload::default()
        },
    );
    session.end_frame();
    session.stop().unwrap();
    let capture = common::open(&path);
    assert!(capture.topologies().is_empty());
    let frames = common::frames(&capture);
    assert_eq!(frames[0].topology, None);
    assert!(frames[0].workloads.is_empty());
}

#[test]
fn sampled_gauges_are_written_as_counter_tracks() {
    let _serial = common::serial();
    let (_dir, path) = common::temp_capture("tracks");
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(path.as_path())
        .unwrap();
    let memory = framewise::Gauge::new("gpu_memory_bytes");
    for value in 0..300 {
        session.sample(&memory, value * 1024);
    }
    session.end_frame();
    session.stop().unwrap();
    let capture = common::open(&path);
    let tracks: Vec<_> = capture
        .counter_tracks()
        .into_iter()
        .map(|t| t.unwrap())
        .collect();
    let samples: Vec<i64> = tracks
        .iter()
        .flat_map(|t| t.samples.iter().map(|s| s.value))
        .collect();
    assert_eq!(samples, (0..300).map(|v| v * 1024).collect::<Vec<_>>());
    assert!(tracks
        .iter()
        .all(|t| name(&capture, t.counter) == "gpu_memory_bytes"));
    for track in &tracks {
        assert!(track.samples.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
    }
}
