//! The hitch classifier on hand-built evidence: each trigger, the ranking, and the site a
//! classified hitch gives its footprint.

use framewise_detect::footprint_key::{footprint_key, KeyRecord};
use framewise_detect::hitch_classify::{
    classify, excess_ns, hitch_key, Baselines, ClassifyThresholds, Confidence, EntitiesEvidence,
    FrameEvidence, HitchKind, ScopeEvidence, UploadEvidence,
};
use framewise_detect::hitch_rule::{HitchRule, DEFAULT_BUDGET_NS};

const MS: u64 = 1_000_000;

fn kinds(guesses: &[framewise_detect::hitch_classify::Guess]) -> Vec<(HitchKind, Confidence)> {
    guesses.iter().map(|g| (g.guess, g.confidence)).collect()
}

fn base() -> Baselines {
    Baselines {
        gap_median_ns: MS,
        gpu_median_ns: None,
    }
}

#[test]
fn a_compile_inside_a_long_scope_ranks_the_compile_first() {
    let scopes = [
        ScopeEvidence {
            id: 0,
            name: "frame",
            site: None,
            total_ns: 40 * MS,
            self_ns: MS,
            median_ns: 15 * MS,
            self_median_ns: MS,
        },
        ScopeEvidence {
            id: 1,
            name: "render",
            site: Some("render.rs:10"),
            total_ns: 39 * MS,
            self_ns: 39 * MS,
            median_ns: 14 * MS,
            self_median_ns: 14 * MS,
        },
    ];
    let frame = FrameEvidence {
        index: 7,
        period_ns: 41 * MS,
        work_ns: 40 * MS,
        pipelines_created: Some(3),
        scopes: &scopes,
        ..FrameEvidence::default()
    };
    let g = classify(&frame, 25 * MS, &base(), &ClassifyThresholds::default());
    assert_eq!(
        kinds(&g),
        vec![
            (HitchKind::PipelineCompile, Confidence::High),
            (HitchKind::LongCpuScope, Confidence::High)
        ]
    );
    assert!(g[0].evidence.contains("pipelines_created = 3 in frame 7"));
    // Equal deltas: the scope with more self time is the more specific name.
    assert_eq!(g[1].scope.as_deref(), Some("render"));
    assert_eq!(g[1].site.as_deref(), Some("render.rs:10"));
    // The footprint names the verdict and the scope, whatever the scope guess's rank.
    let key = footprint_key(&KeyRecord::Hitch(hitch_key(Some("play"), &g)), "");
    assert_eq!(
        key.as_deref(),
        Some("hitch|play|pipeline-compile|section:render")
    );
}

#[test]
fn uploads_spawns_gpu_and_waits() {
    let t = ClassifyThresholds::default();
    let upload = FrameEvidence {
        index: 1,
        period_ns: 30 * MS,
        work_ns: 29 * MS,
        pipelines_created: Some(0),
        bytes_uploaded: Some(UploadEvidence {
            bytes: Some(8 << 20),
            median: 64 << 10,
        }),
        ..FrameEvidence::default()
    };
    let g = classify(&upload, 14 * MS, &base(), &t);
    assert_eq!(
        kinds(&g),
        vec![(HitchKind::ResourceUpload, Confidence::Medium)]
    );

    let spawn = FrameEvidence {
        entities: Some(EntitiesEvidence {
            before: Some(10),
            now: Some(1_500),
        }),
        bytes_uploaded: None,
        ..upload
    };
    assert_eq!(
        kinds(&classify(&spawn, 14 * MS, &base(), &t)),
        vec![(HitchKind::SpawnBurst, Confidence::High)]
    );

    let gpu = FrameEvidence {
        index: 2,
        period_ns: 40 * MS,
        work_ns: 10 * MS,
        gpu_ns: Some(36 * MS),
        ..FrameEvidence::default()
    };
    let gpu_base = Baselines {
        gap_median_ns: 30 * MS,
        gpu_median_ns: Some(12 * MS),
    };
    assert_eq!(
        kinds(&classify(&gpu, 24 * MS, &gpu_base, &t)),
        vec![(HitchKind::GpuBound, Confidence::High)]
    );

    let wait = FrameEvidence {
        index: 3,
        period_ns: 60 * MS,
        work_ns: 5 * MS,
        ..FrameEvidence::default()
    };
    assert_eq!(
        kinds(&classify(&wait, 44 * MS, &base(), &t)),
        vec![(HitchKind::WaitOutsideFrame, Confidence::High)]
    );
}

#[test]
fn nothing_explains_it_and_says_what_was_checked() {
    let frame = FrameEvidence {
        index: 9,
        period_ns: 40 * MS,
        work_ns: 39 * MS,
        pipelines_created: Some(0),
        bytes_uploaded: Some(UploadEvidence {
            bytes: None,
            median: 0,
        }),
        ..FrameEvidence::default()
    };
    let g = classify(&frame, 24 * MS, &base(), &ClassifyThresholds::default());
    assert_eq!(
        kinds(&g),
        vec![(HitchKind::UnknownByElimination, Confidence::Low)]
    );
    let e = &g[0].evidence;
    for checked in [
        "pipelines_created = 0",
        "bytes_uploaded not recorded in this frame",
        "entities not recorded",
        "no scope ran above its median",
        "GPU time unknown",
    ] {
        assert!(e.contains(checked), "{checked}: {e}");
    }
    let key = footprint_key(&KeyRecord::Hitch(hitch_key(None, &g)), "stance=foot");
    assert_eq!(
        key.as_deref(),
        Some("hitch|?|unknown-by-elimination|ctx:stance=foot")
    );
}

#[test]
fn excess_falls_back_when_the_rule_had_no_history() {
    let mut rule = HitchRule::new(DEFAULT_BUDGET_NS);
    let first = rule.observe(40 * MS, false).expect("not paused");
    assert_eq!(first.median_ns, 0);
    assert_eq!(excess_ns(&first, 16 * MS), 24 * MS);
    let second = rule.observe(100 * MS, false).expect("not paused");
    assert_eq!(excess_ns(&second, 16 * MS), 60 * MS);
}

#[test]
fn names_and_aliases_round_trip() {
    for k in HitchKind::ALL {
        assert_eq!(HitchKind::parse(k.name()), Some(k));
    }
    assert_eq!(
        HitchKind::parse("long-script"),
        Some(HitchKind::LongCpuScope)
    );
    for c in [Confidence::Low, Confidence::Medium, Confidence::High] {
        assert_eq!(Confidence::parse(c.name()), Some(c));
    }
}

/// A child carrying its parent's whole rise is the scope named at every tier: at the low
/// tier the largest rise was taken, so `render` (the parent) was named at low and `draw`
/// (the child) at medium for the same nest.
#[test]
fn the_innermost_scope_reaching_the_tier_is_named_at_every_tier() {
    for (rise_ms, confidence) in [(7, Confidence::Low), (14, Confidence::Medium)] {
        let rise = rise_ms * MS;
        let scopes = [
            ScopeEvidence {
                id: 0,
                name: "render",
                site: Some("r.rs:1"),
                total_ns: 4 * MS + rise,
                self_ns: 2 * MS,
                median_ns: 4 * MS,
                self_median_ns: 2 * MS,
            },
            ScopeEvidence {
                id: 1,
                name: "draw",
                site: Some("r.rs:9"),
                total_ns: 2 * MS + rise,
                self_ns: 2 * MS + rise,
                median_ns: 2 * MS,
                self_median_ns: 2 * MS,
            },
        ];
        let frame = FrameEvidence {
            index: 60,
            period_ns: 40 * MS,
            work_ns: 4 * MS + rise,
            scopes: &scopes,
            ..FrameEvidence::default()
        };
        let g = classify(&frame, 24 * MS, &base(), &ClassifyThresholds::default());
        let scope = g
            .iter()
            .find(|g| g.guess == HitchKind::LongCpuScope)
            .unwrap_or_else(|| panic!("a scope guess at +{rise_ms} ms: {g:?}"));
        assert_eq!(scope.confidence, confidence);
        assert_eq!(scope.scope.as_deref(), Some("draw"), "+{rise_ms} ms");
    }
}

/// The child whose own time rose is named even when its parent's inclusive rise is the
/// smaller one: `render`'s other child `cull` ran 2 ms under its median in the hitch frame,
/// so `render` rose 12 ms where `draw`, inside it, rose 14 ms. The smallest rise reaching
/// the tier named `render`, and which of the two was named moved with `cull`'s noise.
#[test]
fn the_scope_whose_own_time_rose_is_named_when_its_parent_rose_less() {
    let scopes = [
        ScopeEvidence {
            id: 0,
            name: "render",
            site: Some("r.rs:1"),
            total_ns: 8 * MS + 12 * MS,
            self_ns: MS,
            median_ns: 8 * MS,
            self_median_ns: MS,
        },
        ScopeEvidence {
            id: 1,
            name: "draw",
            site: Some("r.rs:9"),
            total_ns: 3 * MS + 14 * MS,
            self_ns: 3 * MS + 14 * MS,
            median_ns: 3 * MS,
            self_median_ns: 3 * MS,
        },
        ScopeEvidence {
            id: 2,
            name: "cull",
            site: Some("r.rs:20"),
            total_ns: 2 * MS,
            self_ns: 2 * MS,
            median_ns: 4 * MS,
            self_median_ns: 4 * MS,
        },
    ];
    let frame = FrameEvidence {
        index: 60,
        period_ns: 40 * MS,
        work_ns: 20 * MS,
        scopes: &scopes,
        ..FrameEvidence::default()
    };
    // Excess 14 ms: both rises reach the high tier (75 %, 10.5 ms).
    let g = classify(&frame, 14 * MS, &base(), &ClassifyThresholds::default());
    let scope = g
        .iter()
        .find(|g| g.guess == HitchKind::LongCpuScope)
        .unwrap_or_else(|| panic!("a scope guess: {g:?}"));
    assert_eq!(scope.confidence, Confidence::High);
    assert_eq!(scope.scope.as_deref(), Some("draw"));
}
