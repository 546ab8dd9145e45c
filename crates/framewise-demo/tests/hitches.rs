//! The injected hitches: each cause leaves its own evidence in the capture, and the analysis
//! classifies a flagged hitch by it. Whether a frame is slow enough to be flagged is timing,
//! which tests never assert; what is checked is the evidence and, when flagged, the verdict.

use framewise_demo::HitchCause;

use crate::common::{counters, frames, open, recorded, scopes};

#[test]
fn every_cause_is_injected_once_in_play() {
    let run = recorded();
    let causes: Vec<HitchCause> = run.outcome.injected.iter().map(|h| h.cause).collect();
    assert_eq!(
        causes,
        [
            HitchCause::SpawnWave,
            HitchCause::NewMaterial,
            HitchCause::TextureStream,
            HitchCause::PathfindRebuild
        ]
    );
    for h in &run.outcome.injected {
        let tally = &run.outcome.frames[h.frame as usize];
        assert_eq!(tally.phase, "play");
        assert!(!tally.paused);
    }
}

#[test]
fn each_cause_leaves_its_evidence_in_the_capture() {
    let run = recorded();
    let capture = open(run);
    let frames = frames(&capture);
    let value = |i: usize, name: &str| {
        counters(&capture, &frames[i])
            .get(name)
            .copied()
            .expect("counter")
    };
    let mut uploads: Vec<i64> = (0..frames.len())
        .map(|i| value(i, "bytes_uploaded"))
        .collect();
    uploads.sort_unstable();
    let median_upload = uploads[uploads.len() / 2];
    for h in &run.outcome.injected {
        let i = h.frame as usize;
        match h.cause {
            HitchCause::SpawnWave => {
                let rise = value(i, "entities") - value(i - 1, "entities");
                assert!(rise >= 1000, "entities rose by {rise}");
            }
            HitchCause::NewMaterial => assert_eq!(value(i, "pipelines_created"), 1),
            HitchCause::TextureStream => {
                let bytes = value(i, "bytes_uploaded");
                assert!(
                    bytes >= 4 * median_upload && bytes - median_upload >= 256 * 1024,
                    "{bytes} vs median {median_upload}"
                );
                assert_eq!(value(i, "pipelines_created"), 0);
            }
            HitchCause::PathfindRebuild => {
                assert!(scopes(&capture, &frames[i])
                    .iter()
                    .any(|s| s == "pathfind_rebuild"));
                assert_eq!(value(i, "pipelines_created"), 0);
            }
        }
    }
    // Pipelines are created at boot (the warm-up) and for the new material, never otherwise.
    let material = run
        .outcome
        .injected
        .iter()
        .find(|h| h.cause == HitchCause::NewMaterial)
        .map(|h| h.frame);
    for (i, frame) in frames.iter().enumerate() {
        let created = value(i, "pipelines_created");
        assert_eq!(
            created > 0,
            frame.index == 0 || Some(frame.index) == material,
            "frame {}",
            frame.index
        );
    }
    // Loading never spawns enough at once to look like a burst.
    for i in 1..frames.len() {
        if run
            .outcome
            .injected
            .iter()
            .any(|h| h.frame == i as u64 && h.cause == HitchCause::SpawnWave)
        {
            continue;
        }
        assert!(
            value(i, "entities") - value(i - 1, "entities") < 100,
            "frame {i}"
        );
    }
}

#[test]
fn a_flagged_injected_hitch_is_classified_by_its_cause() {
    let run = recorded();
    let capture = framewise_analysis::open(&run.path, &framewise_analysis::LoadOptions::default())
        .expect("analysis loads the capture");
    let report =
        framewise_analysis::find_hitches(&capture, &framewise_analysis::HitchOptions::default());
    for injected in &run.outcome.injected {
        let Some(hitch) = report.hitches.iter().find(|h| h.frame == injected.frame) else {
            // Not slow enough on this machine at this moment: timing, not checked here.
            eprintln!(
                "note: frame {} ({}) was not flagged this run",
                injected.frame,
                injected.cause.name()
            );
            continue;
        };
        let kinds: Vec<&str> = hitch
            .classification
            .iter()
            .map(|g| g.guess.name())
            .collect();
        assert!(
            kinds.contains(&injected.cause.expected_kind()),
            "frame {} ({}): classified {kinds:?}",
            injected.frame,
            injected.cause.name()
        );
        if let Some(scope) = injected.cause.scope() {
            if injected.cause == HitchCause::PathfindRebuild {
                assert!(hitch
                    .classification
                    .iter()
                    .any(|g| g.scope.as_deref() == Some(scope)));
            }
        }
    }
}
