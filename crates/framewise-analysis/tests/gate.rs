use framewise_analysis::diff::Change;
use framewise_analysis::gate::CheckStatus;
use framewise_analysis::model::AdapterKind;
use framewise_analysis::{
    diff, gate, summarize, CaptureBuilder, GateConfig, SourceKind, Summary, Verdict,
};

use crate::fixtures::*;

fn base() -> Summary {
    summarize(&game(&GameSpec::default()))
}

#[test]
fn same_capture_passes() {
    let r = gate(&base(), &base(), &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Pass);
    assert_eq!(r.exit_code, 0);
    assert!(
        r.checks
            .iter()
            .any(|c| c.metric == "counter.draw_calls.max"),
        "counter wildcard expands"
    );
}

#[test]
fn doubled_draw_calls_fail_exactly() {
    let cand = summarize(&game(&GameSpec {
        draw_calls: 240,
        ..GameSpec::default()
    }));
    let r = gate(&base(), &cand, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.exit_code, 1);
    assert!(
        r.reasons
            .iter()
            .any(|s| s.starts_with("counter.draw_calls.max: 120 -> 240")),
        "{:?}",
        r.reasons
    );
    // One more draw call is also a regression: counters gate exactly.
    let cand = summarize(&game(&GameSpec {
        draw_calls: 121,
        ..GameSpec::default()
    }));
    assert_eq!(
        gate(&base(), &cand, &GateConfig::default()).verdict,
        Verdict::Fail
    );
}

#[test]
fn slower_frames_fail_past_tolerance_only() {
    // render 5 → 12 ms: the fixture stretches each period to work + 6 ms, ~40% slower.
    let cand = summarize(&game(&GameSpec {
        render_ns: 12 * MS,
        ..GameSpec::default()
    }));
    let r = gate(&base(), &cand, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    let mut cfg = GateConfig::empty();
    cfg.set("frame.avg", 0.5).expect("valid");
    assert_eq!(gate(&base(), &cand, &cfg).verdict, Verdict::Pass);
}

#[test]
fn higher_is_better_metrics_gate_the_other_way() {
    let slow = summarize(&game(&GameSpec {
        render_ns: 12 * MS,
        ..GameSpec::default()
    }));
    let mut cfg = GateConfig::empty();
    cfg.set("frame.fps", 0.05).expect("valid");
    assert_eq!(gate(&base(), &slow, &cfg).verdict, Verdict::Fail);
    // Faster candidate: fps rose, which passes.
    assert_eq!(gate(&slow, &base(), &cfg).verdict, Verdict::Pass);
}

#[test]
fn a_metric_the_candidate_lacks_is_a_regression() {
    let cand = summarize(&game(&GameSpec {
        with_counters: false,
        ..GameSpec::default()
    }));
    let r = gate(&base(), &cand, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(r
        .checks
        .iter()
        .any(|c| c.status == CheckStatus::MissingInCandidate));
}

#[test]
fn empty_or_unmatched_is_inconclusive() {
    let empty = summarize(&CaptureBuilder::new(SourceKind::Synthetic, false).finish());
    let r = gate(&base(), &empty, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert_eq!(r.exit_code, 2);
    let r = gate(&empty, &empty, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Inconclusive);
    let mut cfg = GateConfig::empty();
    cfg.set("scope.nothing.p95", 0.1).expect("valid");
    let r = gate(&base(), &base(), &cfg);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert_eq!(
        r.reasons,
        vec!["no configured metric is present in both captures".to_owned()]
    );
}

#[test]
fn different_timing_regimes_are_incomparable_but_counters_compare() {
    let soft = summarize(&game(&GameSpec {
        adapter: AdapterKind::Software,
        ..GameSpec::default()
    }));
    let r = gate(&base(), &soft, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Incomparable);
    assert_eq!(r.exit_code, 3);
    let mut counters_only = GateConfig::empty();
    counters_only.set("counter.*.max", 0.0).expect("valid");
    assert_eq!(gate(&base(), &soft, &counters_only).verdict, Verdict::Pass);
}

#[test]
fn lite_profiler_config_aliases_resolve() {
    let cfg = GateConfig::from_json(
        r#"{"tolerances": {"frame.avg": 0.1, "phase.render.p99": 0.15, "counter.drawCalls.max": 0}}"#,
    )
    .expect("valid");
    let cand = summarize(&game(&GameSpec {
        draw_calls: 240,
        ..GameSpec::default()
    }));
    let r = gate(&base(), &cand, &cfg);
    assert_eq!(r.verdict, Verdict::Fail);
    let metrics: Vec<&str> = r.checks.iter().map(|c| c.metric.as_str()).collect();
    assert!(metrics.contains(&"scope.render.p99"), "{metrics:?}");
    assert!(metrics.contains(&"counter.draw_calls.max"), "{metrics:?}");
    let aliased = r
        .checks
        .iter()
        .find(|c| c.metric == "counter.draw_calls.max")
        .expect("check");
    assert_eq!(aliased.configured.as_deref(), Some("counter.drawCalls.max"));
    assert_eq!(aliased.status, CheckStatus::Regressed);
}

#[test]
fn diff_rows_carry_base_cand_delta_pct() {
    let cand = summarize(&game(&GameSpec {
        draw_calls: 240,
        ..GameSpec::default()
    }));
    let d = diff(&base(), &cand);
    assert!(d.timing_comparable);
    let row = d
        .rows
        .iter()
        .find(|r| r.metric == "counter.draw_calls.max")
        .expect("row");
    assert_eq!(
        (row.base, row.cand, row.delta, row.pct),
        (Some(120.0), Some(240.0), Some(120.0), Some(100.0))
    );
    assert_eq!(row.change, Change::Worse);
    let same = d
        .rows
        .iter()
        .find(|r| r.metric == "frame.p99")
        .expect("row");
    assert_eq!(same.change, Change::Same);
}

#[test]
fn gate_snapshot() {
    let cand = summarize(&game(&GameSpec {
        draw_calls: 240,
        ..GameSpec::default()
    }));
    insta::assert_json_snapshot!(
        "gate_fail",
        redacted(&gate(&base(), &cand, &GateConfig::default()))
    );
}

#[test]
fn diff_snapshot() {
    let cand = summarize(&game(&GameSpec {
        draw_calls: 240,
        frames: 300,
        ..GameSpec::default()
    }));
    let base = summarize(&game(&GameSpec {
        frames: 300,
        ..GameSpec::default()
    }));
    insta::assert_json_snapshot!("diff", redacted(&diff(&base, &cand)));
}
