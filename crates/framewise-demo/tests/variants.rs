//! Variants and switches, run without recording: the slow build's draw calls, determinism
//! under a pinned step, the snap-back bug, refused configurations.

use framewise_demo::{DemoConfig, DemoError, Schedule, Variant};

use crate::common::small_config;

fn quiet(frames: u64) -> DemoConfig {
    let mut config = small_config(frames);
    config.schedule = Schedule {
        pause: None,
        spawn_wave_at: None,
        new_material_at: None,
        texture_stream_at: None,
        pathfind_rebuild_at: None,
        ..config.schedule
    };
    config
}

#[test]
fn the_slow_variant_multiplies_draw_calls_but_not_triangles() {
    let normal = framewise_demo::run(quiet(100)).expect("normal run");
    let slow = framewise_demo::run(DemoConfig {
        variant: Variant::Slow,
        ..quiet(100)
    })
    .expect("slow run");
    assert!(normal.capture.is_none() && slow.capture.is_none());
    for (n, s) in normal.frames.iter().zip(&slow.frames) {
        assert_eq!(n.triangles, s.triangles, "frame {}", n.index);
        assert_eq!(n.entities, s.entities);
        if n.phase == "play" {
            assert!(
                s.draw_calls >= 2 * n.draw_calls,
                "frame {}: {} vs {}",
                n.index,
                s.draw_calls,
                n.draw_calls
            );
        }
    }
}

/// Every seed the command line takes runs: `--seed 18446744073709551615` (and any seed whose
/// low 32 bits are all ones) overflowed the ground texture's noise seed and panicked.
#[test]
fn the_largest_seeds_run() {
    for seed in [u64::MAX, u64::from(u32::MAX)] {
        let run = framewise_demo::run(DemoConfig { seed, ..quiet(3) }).expect("runs");
        assert_eq!(run.frames.len(), 3, "seed {seed}");
    }
}

#[test]
fn a_pinned_step_makes_the_run_and_its_image_repeatable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |seed: u64, name: &str| {
        framewise_demo::run(DemoConfig {
            seed,
            golden_frame: Some(90),
            golden_path: Some(dir.path().join(name)),
            ..small_config(120)
        })
        .expect("run")
    };
    let a = run(3, "a.png");
    let b = run(3, "b.png");
    let c = run(4, "c.png");
    let facts = |o: &framewise_demo::DemoOutcome| {
        o.frames
            .iter()
            .map(|f| {
                (
                    f.entities,
                    f.particles,
                    f.draw_calls,
                    f.triangles,
                    f.bytes_uploaded,
                    f.unit_mm,
                    f.camera_mm,
                    f.passes,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(facts(&a), facts(&b));
    assert_ne!(facts(&a), facts(&c));
    let png = |name: &str| std::fs::read(dir.path().join(name)).expect("golden written");
    assert_eq!(png("a.png"), png("b.png"));
    assert_ne!(png("a.png"), png("c.png"));
    assert!(png("a.png").starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(
        a.golden.as_deref(),
        Some(dir.path().join("a.png").as_path())
    );
}

#[test]
fn the_snap_bug_jumps_the_unit_back_for_one_frame() {
    let clean = framewise_demo::run(quiet(240)).expect("clean run");
    assert!(clean.snaps.is_empty());
    let buggy = framewise_demo::run(DemoConfig {
        snap_bug: true,
        ..quiet(240)
    })
    .expect("buggy run");
    assert!(!buggy.snaps.is_empty(), "no snap in 240 frames");
    let dist_mm =
        |a: [i64; 2], b: [i64; 2]| (((a[0] - b[0]).pow(2) + (a[1] - b[1]).pow(2)) as f64).sqrt();
    for &f in &buggy.snaps {
        let f = f as usize;
        let (before, at) = (buggy.frames[f - 1].unit_mm, buggy.frames[f].unit_mm);
        assert!(
            dist_mm(before, at) >= 2500.0,
            "frame {f}: moved {} mm",
            dist_mm(before, at)
        );
        // The true path is untouched: the clean run was at the same place one frame later.
        if let Some(next) = buggy.frames.get(f + 1) {
            if !next.snapped {
                assert_eq!(next.unit_mm, clean.frames[f + 1].unit_mm);
            }
        }
    }
}

#[test]
fn impossible_configurations_are_refused() {
    // `--gpu` is never run CPU-only in silence: without the feature the run says how to
    // rebuild; with it, a run that does not record is refused (the GPU track goes nowhere).
    let gpu = DemoConfig {
        gpu: true,
        ..small_config(100)
    };
    let refused = framewise_demo::run(gpu).expect_err("--gpu without recording is refused");
    if cfg!(feature = "gpu") {
        assert!(
            matches!(&refused, DemoError::Config { reason } if reason.contains("--no-record")),
            "{refused}"
        );
    } else {
        assert!(matches!(refused, DemoError::GpuNotBuilt), "{refused}");
    }
    let mut late = small_config(100);
    late.schedule.pathfind_rebuild_at = Some(100);
    assert!(matches!(
        framewise_demo::run(late),
        Err(DemoError::Config { .. })
    ));
}
