use framewise_analysis::{attribute, AttributeError, AttributeTarget};

use crate::fixtures::*;

#[test]
fn ranks_the_slow_scope_first_for_a_frame() {
    let c = game(&GameSpec::default());
    let a = attribute(&c, AttributeTarget::Frame(LONG_SCOPE_FRAME)).expect("frame exists");
    assert!(!a.sums_to_total);
    assert!(a.note.contains("ranking"));
    let top: Vec<&str> = a.ranking.iter().map(|r| r.scope.as_str()).take(2).collect();
    // physics and its parent update both carry the 40 ms; both are named.
    assert!(
        top.contains(&"physics") && top.contains(&"update"),
        "{top:?}"
    );
    let physics = a
        .ranking
        .iter()
        .find(|r| r.scope == "physics")
        .expect("ranked");
    assert_eq!(physics.site.as_deref(), Some("src/physics.rs:42"));
    assert!((physics.contribution_ms - 40.0).abs() < 1e-9);
    assert!(a.excess_ms > 30.0);
}

#[test]
fn p95_excess_over_the_median() {
    let c = game(&GameSpec::default());
    let a = attribute(&c, AttributeTarget::P95Excess).expect("enough frames");
    assert_eq!(a.target, "p95-excess");
    assert!(a.frames >= 70, "{} frames at or above p95", a.frames);
    assert!(!a.sums_to_total);
}

#[test]
fn errors_name_the_problem() {
    let c = game(&GameSpec {
        frames: 10,
        ..GameSpec::default()
    });
    assert_eq!(
        attribute(&c, AttributeTarget::Frame(99)),
        Err(AttributeError::NoSuchFrame {
            index: 99,
            frames: 10
        })
    );
    assert_eq!(
        attribute(&c, AttributeTarget::Frame(9)),
        Err(AttributeError::NoPeriod { index: 9 })
    );
    assert_eq!(
        attribute(&c, AttributeTarget::P95Excess).map(|_| ()),
        Err(AttributeError::TooFewFrames {
            needed: 20,
            have: 9
        })
    );
}

#[test]
fn attribution_snapshot() {
    let c = game(&GameSpec::default());
    let a = attribute(&c, AttributeTarget::Frame(LONG_SCOPE_FRAME)).expect("frame exists");
    insta::assert_json_snapshot!("attribution", redacted(&a));
}
