use framewise_analysis::hitch::Confidence;
use framewise_analysis::{find_hitches, HitchKind, HitchOptions};

use crate::fixtures::*;

fn report() -> framewise_analysis::HitchReport {
    find_hitches(&game(&GameSpec::default()), &HitchOptions::default())
}

#[test]
fn finds_exactly_the_injected_hitches() {
    let r = report();
    let frames: Vec<u64> = r.hitches.iter().map(|h| h.frame).collect();
    assert_eq!(
        frames,
        vec![
            PIPELINE_FRAME,
            UPLOAD_FRAME,
            SPAWN_FRAME,
            LONG_SCOPE_FRAME,
            GPU_FRAME,
            WAIT_FRAME,
            UNKNOWN_FRAME
        ],
        "paused frames with 250 ms periods are never hitches"
    );
    assert_eq!(r.rule.window_frames, 600);
    for h in &r.hitches {
        assert!(h.duration_ms > h.threshold_ms);
        assert!(!h.classification.is_empty());
        for g in &h.classification {
            assert!(
                g.evidence.chars().any(|c| c.is_ascii_digit()),
                "evidence names numbers: {}",
                g.evidence
            );
        }
    }
}

fn best(frame: u64) -> framewise_analysis::hitch::Guess {
    let r = report();
    let h = r
        .hitches
        .iter()
        .find(|h| h.frame == frame)
        .expect("hitch found");
    h.classification[0].clone()
}

fn kinds(frame: u64) -> Vec<HitchKind> {
    let r = report();
    let h = r
        .hitches
        .iter()
        .find(|h| h.frame == frame)
        .expect("hitch found");
    h.classification.iter().map(|g| g.guess).collect()
}

#[test]
fn pipeline_compile() {
    let g = best(PIPELINE_FRAME);
    assert_eq!(
        (g.guess, g.confidence),
        (HitchKind::PipelineCompile, Confidence::High)
    );
    assert!(
        g.evidence.contains("pipelines_created = 3"),
        "{}",
        g.evidence
    );
    // The render scope it happened in is named too.
    assert!(kinds(PIPELINE_FRAME).contains(&HitchKind::LongCpuScope));
}

#[test]
fn resource_upload() {
    assert!(kinds(UPLOAD_FRAME).contains(&HitchKind::ResourceUpload));
    let r = report();
    let h = r
        .hitches
        .iter()
        .find(|h| h.frame == UPLOAD_FRAME)
        .expect("hitch");
    let g = h
        .classification
        .iter()
        .find(|g| g.guess == HitchKind::ResourceUpload)
        .expect("guess");
    assert!(
        g.evidence.contains("bytes_uploaded = 33554432"),
        "{}",
        g.evidence
    );
    assert!(
        g.evidence.contains("no pipelines created"),
        "{}",
        g.evidence
    );
}

#[test]
fn spawn_burst() {
    assert_eq!(best(SPAWN_FRAME).guess, HitchKind::SpawnBurst);
    assert!(best(SPAWN_FRAME)
        .evidence
        .contains("entities rose by 1996 (504 → 2500)"));
}

#[test]
fn long_cpu_scope_names_scope_and_site() {
    let g = best(LONG_SCOPE_FRAME);
    assert_eq!(g.guess, HitchKind::LongCpuScope);
    assert_eq!(g.confidence, Confidence::High);
    // physics, not its parent update: the most specific scope that explains the excess.
    assert_eq!(g.scope.as_deref(), Some("physics"));
    assert_eq!(g.site.as_deref(), Some("src/physics.rs:42"));
    assert!(g.evidence.contains("src/physics.rs:42"), "{}", g.evidence);
}

#[test]
fn gpu_bound() {
    let g = best(GPU_FRAME);
    assert_eq!(g.guess, HitchKind::GpuBound);
    assert!(
        g.evidence.contains("GPU frame time 47.00 ms"),
        "{}",
        g.evidence
    );
}

#[test]
fn wait_outside_frame() {
    let g = best(WAIT_FRAME);
    assert_eq!(g.guess, HitchKind::WaitOutsideFrame);
    assert!(g.evidence.contains("work only 10.00 ms"), "{}", g.evidence);
}

#[test]
fn unknown_by_elimination_says_what_was_checked() {
    let g = best(UNKNOWN_FRAME);
    assert_eq!(kinds(UNKNOWN_FRAME), vec![HitchKind::UnknownByElimination]);
    assert_eq!(g.confidence, Confidence::Low);
    assert!(
        g.evidence.contains("pipelines_created = 0"),
        "{}",
        g.evidence
    );
}

#[test]
fn without_counters_nothing_is_guessed_from_them() {
    let c = game(&GameSpec {
        with_counters: false,
        ..GameSpec::default()
    });
    let r = find_hitches(&c, &HitchOptions::default());
    for h in &r.hitches {
        for g in &h.classification {
            assert!(!matches!(
                g.guess,
                HitchKind::PipelineCompile | HitchKind::ResourceUpload | HitchKind::SpawnBurst
            ));
        }
    }
    let h = r
        .hitches
        .iter()
        .find(|h| h.frame == UNKNOWN_FRAME)
        .expect("hitch");
    assert!(h.classification[0]
        .evidence
        .contains("pipelines_created not recorded"));
}

#[test]
fn budget_option_moves_the_threshold() {
    let c = game(&GameSpec {
        hitches: false,
        ..GameSpec::default()
    });
    assert!(find_hitches(&c, &HitchOptions::default())
        .hitches
        .is_empty());
    // A 5 ms budget: 1.5 × 5 = 7.5 ms, but 2 × the 16 ms median still rules.
    let opts = HitchOptions {
        budget_ns: Some(5 * MS),
        ..HitchOptions::default()
    };
    let r = find_hitches(&c, &opts);
    assert_eq!(r.rule.budget_ms, 5.0);
    // Only the first frame (no history: 1.5 × budget alone) can be a hitch.
    assert!(r.hitches.iter().all(|h| h.frame == 0));
}

#[test]
fn hitches_snapshot() {
    insta::assert_json_snapshot!("hitches", redacted(&report()));
}
