//! The recorded capture against the demo's own tallies: structure, counters, workloads,
//! context.

use framewise_demo::{EVENT_SCOPES, FRAME_SCOPES, MOTION_GAUGES, PASSES};
use framewise_format::model::{CaptureLevel, MarkKind};

use crate::common::{counters, frames, open, recorded, scopes, FRAMES, USERMARK_AT};

#[test]
fn the_run_is_recorded_whole() {
    let run = recorded();
    let report = run.outcome.report.as_ref().expect("recorded");
    assert!(report.is_complete(), "{report:?}");
    assert_eq!(report.frames_written, FRAMES);
    let capture = open(run);
    assert!(capture.defects().is_empty(), "{:?}", capture.defects());
    assert_eq!(capture.frame_count() as u64, FRAMES);
    assert_eq!(run.outcome.frames.len() as u64, FRAMES);
    let meta = capture.meta().expect("META");
    assert_eq!(meta.capture_level, CaptureLevel::Workload as u8);
    let situation: Vec<(&str, &str)> = meta
        .situation
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert!(
        situation.contains(&("view", "top")) && situation.contains(&("squad", "solo")),
        "{situation:?}"
    );
    assert!(meta.settings.iter().any(|(k, v)| k == "seed" && v == "7"));
}

#[test]
fn every_pass_and_scope_is_recorded() {
    let run = recorded();
    let capture = open(run);
    let symbols = capture.symbols();
    // One frame graph, six passes in order, each naming its scope.
    assert_eq!(capture.topologies().len(), 1);
    let topology = &capture.topologies()[0];
    let labels: Vec<&str> = topology
        .passes
        .iter()
        .map(|p| symbols.name(p.label).expect("label"))
        .collect();
    assert_eq!(labels, PASSES);
    assert!(topology.passes.iter().all(|p| p.scope.is_some()));
    assert!(!topology.resources.is_empty() && !topology.edges.is_empty());

    let frames = frames(&capture);
    let mut threads = std::collections::BTreeSet::new();
    for frame in &frames {
        assert_eq!(frame.topology, Some(topology.id), "frame {}", frame.index);
        for lane in &frame.lanes {
            threads.insert(symbols.name(lane.thread).expect("thread named").to_owned());
        }
        let names = scopes(&capture, frame);
        let tally = &run.outcome.frames[frame.index as usize];
        if tally.phase == "play" && !tally.paused {
            for expected in FRAME_SCOPES.iter().chain(PASSES.iter()) {
                assert!(
                    names.iter().any(|n| n == expected),
                    "frame {}: no scope {expected} in {names:?}",
                    frame.index
                );
            }
        }
        // An event's scopes run in its frame and nowhere else.
        for (scope, cause) in EVENT_SCOPES {
            let here = names.iter().any(|n| n == scope);
            let frame_of_cause = run
                .outcome
                .injected
                .iter()
                .any(|h| h.cause == cause && h.frame == frame.index);
            let boot_build = scope == "build_shading_table" && frame.index == 0;
            assert_eq!(
                here,
                frame_of_cause || boot_build,
                "frame {}: scope {scope}",
                frame.index
            );
        }
    }
    assert!(
        threads.contains("demo-worker-0") && threads.contains("demo-worker-1"),
        "{threads:?}"
    );
}

#[test]
fn counters_match_the_demo_tallies_exactly() {
    let run = recorded();
    let capture = open(run);
    for frame in frames(&capture) {
        let values = counters(&capture, &frame);
        let tally = &run.outcome.frames[frame.index as usize];
        assert_eq!(tally.index, frame.index);
        let get = |name: &str| {
            *values
                .get(name)
                .unwrap_or_else(|| panic!("frame {}: no {name}", frame.index))
        };
        let at = frame.index;
        assert_eq!(get("entities"), tally.entities, "entities in frame {at}");
        assert_eq!(get("particles"), tally.particles, "particles in frame {at}");
        assert_eq!(
            get("draw_calls") as u64,
            tally.draw_calls,
            "draw_calls in frame {at}"
        );
        assert_eq!(
            get("triangles") as u64,
            tally.triangles,
            "triangles in frame {at}"
        );
        assert_eq!(
            get("bytes_uploaded") as u64,
            tally.bytes_uploaded,
            "bytes_uploaded in frame {at}"
        );
        assert_eq!(
            get("pipelines_created") as u64,
            tally.pipelines_created,
            "pipelines_created in frame {at}"
        );
        let allocations = tally
            .allocations
            .expect("the test binary counts allocations");
        assert_eq!(
            get("allocations") as u64,
            allocations,
            "allocations in frame {at}"
        );
        let motion = [
            tally.unit_mm[0],
            tally.unit_mm[1],
            tally.camera_mm[0],
            tally.camera_mm[1],
        ];
        for (name, value) in MOTION_GAUGES.iter().zip(motion) {
            assert_eq!(get(name), value, "{name} in frame {at}");
        }
        // The sums are the sums of the passes.
        assert_eq!(
            tally.draw_calls,
            tally.passes.iter().map(|p| p.draws).sum::<u64>()
        );
        assert!(tally.draw_calls > 0 && tally.triangles > 0);
    }
}

#[test]
fn workloads_match_each_pass() {
    let run = recorded();
    let capture = open(run);
    let symbols = capture.symbols();
    for frame in frames(&capture) {
        let tally = &run.outcome.frames[frame.index as usize];
        assert_eq!(frame.workloads.len(), PASSES.len(), "frame {}", frame.index);
        for w in &frame.workloads {
            let label = symbols.name(w.pass).expect("pass label");
            let i = PASSES
                .iter()
                .position(|p| *p == label)
                .expect("a known pass");
            let stats = &tally.passes[i];
            assert_eq!(
                w.workload.draws,
                Some(stats.draws),
                "{label} draws, frame {}",
                frame.index
            );
            assert_eq!(
                w.workload.primitives,
                Some(stats.triangles),
                "{label} triangles"
            );
            assert_eq!(
                w.workload.instances,
                Some(stats.instances),
                "{label} instances"
            );
            assert!(w.workload.pipeline.and_then(|p| symbols.name(p)).is_some());
            let pixels = w
                .workload
                .extra
                .iter()
                .find(|(name, _)| symbols.name(*name) == Some("pixels_shaded"))
                .map(|(_, v)| *v);
            assert_eq!(pixels, Some(stats.pixels_shaded), "{label} pixels_shaded");
        }
    }
}

#[test]
fn phases_pause_marks_and_the_usermark_are_stamped() {
    let run = recorded();
    let capture = open(run);
    let symbols = capture.symbols();
    let schedule = &run.outcome.config.schedule;
    let mut paused = 0;
    for frame in frames(&capture) {
        let tally = &run.outcome.frames[frame.index as usize];
        let phase = frame.phase.and_then(|p| symbols.name(p));
        assert_eq!(phase, Some(tally.phase), "frame {}", frame.index);
        assert_eq!(frame.paused, schedule.is_paused(frame.index));
        paused += u64::from(frame.paused);
        let marks: Vec<&str> = frame
            .marks
            .iter()
            .filter_map(|m| symbols.name(m.name))
            .collect();
        let users = frame
            .marks
            .iter()
            .filter(|m| matches!(m.kind, MarkKind::User { .. }))
            .count();
        assert_eq!(
            users,
            usize::from(frame.index == USERMARK_AT),
            "usermarks in frame {}",
            frame.index
        );
        for (mark, at) in [
            ("wave_arrived", schedule.spawn_wave_at),
            ("crystals_emerged", schedule.new_material_at),
            ("region_entered", schedule.texture_stream_at),
            ("wall_collapsed", schedule.pathfind_rebuild_at),
        ] {
            assert_eq!(
                marks.contains(&mark),
                at == Some(frame.index),
                "mark {mark} in frame {}",
                frame.index
            );
        }
    }
    assert!(paused > 0);
    assert_eq!(run.outcome.usermark_frame, Some(USERMARK_AT));
    let report = run.outcome.report.as_ref().expect("recorded");
    assert_eq!(report.usermarks.len(), 1);
    assert_eq!(report.usermarks[0].frame, USERMARK_AT);
}
