use framewise_analysis::diff::Change;
use framewise_analysis::gate::CheckStatus;
use framewise_analysis::model::AdapterKind;
use framewise_analysis::{
    diff, gate, summarize, CaptureBuilder, GateConfig, GateResult, SourceKind, Summary, Verdict,
};

use crate::fixtures::*;

fn base() -> Summary {
    summarize(&game(&GameSpec::default()))
}

/// The gate `r` ran, or the test fails with its error.
fn gated(base: &Summary, cand: &Summary, cfg: &GateConfig) -> GateResult {
    gate(base, cand, cfg).expect("every configured path names something")
}

/// The defaults and `metric` gated at `tolerance`.
fn defaults_and(metric: &str, tolerance: f64) -> GateConfig {
    let mut cfg = GateConfig::default();
    cfg.set(metric, tolerance).expect("valid");
    cfg
}

#[test]
fn same_capture_passes() {
    let r = gated(&base(), &base(), &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Pass);
    assert_eq!(r.exit_code, 0);
    assert_eq!(r.reasons, ["2 metrics within tolerance"]);
    let mut one = GateConfig::empty();
    one.set("frame.avg", 0.1).expect("valid");
    let r = gated(&base(), &base(), &one);
    assert_eq!(r.reasons, ["1 metric within tolerance"]);
}

#[test]
fn the_default_gate_is_frame_avg_and_p99_only() {
    // Counters vary between runs of one workload: the default gate must not judge them.
    let more_draws = summarize(&game(&GameSpec {
        draw_calls: 240,
        ..GameSpec::default()
    }));
    let r = gated(&base(), &more_draws, &GateConfig::default());
    let metrics: Vec<&str> = r.checks.iter().map(|c| c.metric.as_str()).collect();
    assert_eq!(metrics, ["frame.avg", "frame.p99"]);
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
}

#[test]
fn a_counter_wildcard_covers_sum_counters_not_gauges() {
    let r = gated(&base(), &base(), &defaults_and("counter.*.max", 0.0));
    let metrics: Vec<&str> = r.checks.iter().map(|c| c.metric.as_str()).collect();
    assert!(metrics.contains(&"counter.draw_calls.max"), "{metrics:?}");
    assert!(!metrics.contains(&"counter.entities.max"), "{metrics:?}");
    // Named, a gauge gates like anything else.
    let r = gated(&base(), &base(), &defaults_and("counter.entities.max", 0.0));
    assert!(r.checks.iter().any(|c| c.metric == "counter.entities.max"));
}

#[test]
fn doubled_draw_calls_fail_exactly() {
    let cand = summarize(&game(&GameSpec {
        draw_calls: 240,
        ..GameSpec::default()
    }));
    let exact_draws = defaults_and("counter.draw_calls.max", 0.0);
    let r = gated(&base(), &cand, &exact_draws);
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
    assert_eq!(gated(&base(), &cand, &exact_draws).verdict, Verdict::Fail);
}

#[test]
fn slower_frames_fail_past_tolerance_only() {
    // render 5 → 12 ms: the fixture stretches each period to work + 6 ms, ~40% slower.
    let cand = summarize(&game(&GameSpec {
        render_ns: 12 * MS,
        ..GameSpec::default()
    }));
    let r = gated(&base(), &cand, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    let mut cfg = GateConfig::empty();
    cfg.set("frame.avg", 0.5).expect("valid");
    assert_eq!(gated(&base(), &cand, &cfg).verdict, Verdict::Pass);
}

#[test]
fn higher_is_better_metrics_gate_the_other_way() {
    let slow = summarize(&game(&GameSpec {
        render_ns: 12 * MS,
        ..GameSpec::default()
    }));
    let mut cfg = GateConfig::empty();
    cfg.set("frame.fps", 0.05).expect("valid");
    assert_eq!(gated(&base(), &slow, &cfg).verdict, Verdict::Fail);
    // Faster candidate: fps rose, which passes.
    assert_eq!(gated(&slow, &base(), &cfg).verdict, Verdict::Pass);
}

#[test]
fn a_metric_the_candidate_lacks_is_a_regression() {
    let cand = summarize(&game(&GameSpec {
        with_counters: false,
        ..GameSpec::default()
    }));
    let r = gated(&base(), &cand, &defaults_and("counter.draw_calls.max", 0.0));
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(r
        .checks
        .iter()
        .any(|c| c.status == CheckStatus::MissingInCandidate));
}

#[test]
fn a_typo_in_a_gated_path_is_a_usage_error_with_the_nearest_paths() {
    let mut cfg = GateConfig::empty();
    cfg.set("frame.avg", 0.1).expect("valid");
    cfg.set("counter.draw_call.max", 0.0)
        .expect("a well-formed path: checked against the captures when the gate runs");
    let err = gate(&base(), &base(), &cfg).expect_err("no counter draw_call");
    let text = err.to_string();
    assert!(
        text.starts_with("`counter.draw_call.max` is in neither capture")
            && text.contains("did you mean counter.draw_calls.max"),
        "{text}"
    );
    let mut cfg = GateConfig::empty();
    cfg.set("scope.no_such_scope.p95", 0.1)
        .expect("well-formed");
    let text = gate(&base(), &base(), &cfg)
        .expect_err("no such scope")
        .to_string();
    assert!(
        text.contains("no scope named `no_such_scope`") && text.contains("render"),
        "{text}"
    );
}

#[test]
fn an_unknown_statistic_is_refused_with_the_nearest_ones() {
    let mut cfg = GateConfig::empty();
    let text = cfg.set("frame.p98", 0.1).expect_err("no p98").to_string();
    assert!(
        text.contains("`p98` is not a statistic of frame.*") && text.contains("frame.p99"),
        "{text}"
    );
    let text = cfg
        .set("frame.nonexistent_stat", 0.1)
        .expect_err("no such statistic")
        .to_string();
    assert!(
        text.contains("its statistics: ") && text.contains("p95"),
        "{text}"
    );
    assert!(cfg.set("counter.*.mx", 0.0).is_err());
    assert!(cfg.set("scope.render.self", 0.1).is_ok());
}

#[test]
fn a_damaged_input_makes_the_gate_inconclusive_unless_allowed() {
    use framewise_analysis::{Defect, DefectKind};
    let damaged = |kind| {
        let mut s = base();
        s.defects
            .push(Defect::new(kind, 1, "the file ends inside a frame"));
        s
    };
    let cut = damaged(DefectKind::TruncatedTail);
    let r = gated(&base(), &cut, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert!(
        r.reasons[0].starts_with("the candidate lost frames")
            && r.reasons[0].contains("truncated-tail"),
        "{:?}",
        r.reasons
    );
    assert_eq!(
        gated(&cut, &base(), &GateConfig::default()).verdict,
        Verdict::Inconclusive
    );
    let allowed = GateConfig {
        allow_damaged: true,
        ..GateConfig::default()
    };
    let r = gated(&base(), &cut, &allowed);
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
    // Dropped spans lose no frame: the frame metrics are judged as usual.
    let spans = damaged(DefectKind::DroppedSpans);
    assert_eq!(
        gated(&base(), &spans, &GateConfig::default()).verdict,
        Verdict::Pass
    );
}

#[test]
fn a_scope_metric_on_a_side_that_dropped_spans_cannot_pass() {
    use framewise_analysis::{Defect, DefectKind};
    let with = |kind, message: &str| {
        let mut s = base();
        s.defects.push(Defect::new(kind, 12, message));
        s
    };
    let spans = with(
        DefectKind::DroppedSpans,
        "the recorder dropped 12 spans in 3 frames (buffer full); scope totals in those frames are low",
    );
    let mut cfg = GateConfig::default();
    cfg.set("scope.render.p95", 0.1).expect("valid");
    // Same numbers on both sides, but the candidate's render is missing spans: it may
    // have hidden a regression, so the scope check is incomplete and the verdict says so.
    for (b, c, side) in [(&base(), &spans, "candidate"), (&spans, &base(), "base")] {
        let r = gated(b, c, &cfg);
        assert_eq!(r.verdict, Verdict::Inconclusive, "{:?}", r.reasons);
        assert_eq!(r.exit_code, 2);
        let check = r
            .checks
            .iter()
            .find(|c| c.metric == "scope.render.p95")
            .expect("the scope check");
        assert_eq!(check.status, CheckStatus::Incomplete);
        let frame = r
            .checks
            .iter()
            .find(|c| c.metric == "frame.avg")
            .expect("frame.avg");
        assert_eq!(frame.status, CheckStatus::Pass, "frames lost nothing");
        assert!(
            r.reasons[0].starts_with("scope.render.p95 cannot be judged: spans were dropped")
                && r.reasons[0].contains(&format!("{side}: the recorder dropped 12 spans")),
            "{:?}",
            r.reasons
        );
    }
    // A regression the complete metrics show is still a failure.
    let mut slow = summarize(&game(&GameSpec {
        render_ns: 12 * MS,
        ..GameSpec::default()
    }));
    slow.defects = spans.defects.clone();
    let r = gated(&base(), &slow, &cfg);
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    // --allow-damaged judges the scope, and says so.
    cfg.allow_damaged = true;
    let r = gated(&base(), &spans, &cfg);
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
    assert!(
        r.reasons.iter().any(|x| x.contains("--allow-damaged")),
        "{:?}",
        r.reasons
    );
    // GPU results that never came leave pass metrics incomplete, not scope metrics.
    let gpu = with(
        DefectKind::GpuResultsMissing,
        "12 frames were written without their GPU results (they never came)",
    );
    let mut scope_only = GateConfig::empty();
    scope_only.set("scope.render.p95", 0.1).expect("valid");
    assert_eq!(gated(&base(), &gpu, &scope_only).verdict, Verdict::Pass);
}

/// A scope the candidate lacks is a regression, unless the candidate lost spans: then its
/// scope may be missing for that alone, and the check is incomplete, not a failure (nor a
/// pass). A pass the candidate lacks while it lost GPU results is the same.
#[test]
fn a_scope_missing_in_a_candidate_that_dropped_spans_is_incomplete() {
    use framewise_analysis::{Defect, DefectKind};
    let without = |name: &str, defect: Option<(DefectKind, &str)>| {
        let mut s = base();
        let before = s.scopes.0.len();
        s.scopes.0.retain(|(n, _)| n != name);
        assert_eq!(s.scopes.0.len(), before - 1, "the fixture has {name}");
        s.defects
            .extend(defect.map(|(kind, message)| Defect::new(kind, 40, message)));
        s
    };
    let dropped = (
        DefectKind::DroppedSpans,
        "40 timeline spans were lost on import",
    );
    let mut cfg = GateConfig::empty();
    cfg.set("scope.*.avg", 0.5).expect("valid");
    let status = |r: &GateResult| {
        r.checks
            .iter()
            .find(|c| c.metric == "scope.render.avg")
            .map(|c| c.status)
    };
    // The candidate dropped spans: its render may be lost to that, so nothing is judged.
    let r = gated(&base(), &without("render", Some(dropped)), &cfg);
    assert_eq!(status(&r), Some(CheckStatus::Incomplete), "{:?}", r.checks);
    assert_eq!(r.verdict, Verdict::Inconclusive, "{:?}", r.reasons);
    assert_eq!(r.exit_code, 2);
    assert!(
        r.reasons
            .iter()
            .any(|x| x.contains("spans were dropped (candidate: 40 timeline spans")),
        "{:?}",
        r.reasons
    );
    // An undamaged candidate that lacks it: a regression.
    let r = gated(&base(), &without("render", None), &cfg);
    assert_eq!(status(&r), Some(CheckStatus::MissingInCandidate));
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    // Only the base dropped spans: the candidate's lack is its own, a regression.
    let mut damaged_base = base();
    damaged_base
        .defects
        .push(Defect::new(dropped.0, 40, dropped.1));
    let r = gated(&damaged_base, &without("render", None), &cfg);
    assert_eq!(status(&r), Some(CheckStatus::MissingInCandidate));
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    // A candidate that lost GPU results may lack a scope for no such reason.
    let gpu = (
        DefectKind::GpuResultsMissing,
        "40 frames were written without their GPU results (they never came)",
    );
    let r = gated(&base(), &without("render", Some(gpu)), &cfg);
    assert_eq!(status(&r), Some(CheckStatus::MissingInCandidate));
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    // --allow-damaged judges what is left: the scope is missing.
    cfg.allow_damaged = true;
    let r = gated(&base(), &without("render", Some(dropped)), &cfg);
    assert_eq!(status(&r), Some(CheckStatus::MissingInCandidate));
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
}

#[test]
fn empty_or_unmatched_is_inconclusive() {
    let empty = summarize(&CaptureBuilder::new(SourceKind::Synthetic, false).finish());
    let r = gated(&base(), &empty, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert_eq!(r.exit_code, 2);
    let r = gated(&empty, &empty, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Inconclusive);
    // frame.p999 needs 1000 frames: null in both, so it can be judged neither way.
    let short = summarize(&game(&GameSpec {
        frames: 500,
        hitches: false,
        ..GameSpec::default()
    }));
    let mut cfg = GateConfig::empty();
    cfg.set("frame.p999", 0.1).expect("valid");
    let r = gated(&short, &short, &cfg);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    assert_eq!(
        r.reasons,
        vec!["frame.p999: neither capture has enough values for it (needs at least 1000 values (one beyond it), have 489), so it can be judged neither way".to_owned()]
    );
}

#[test]
fn different_timing_regimes_are_incomparable_but_counters_compare() {
    let soft = summarize(&game(&GameSpec {
        adapter: AdapterKind::Software,
        ..GameSpec::default()
    }));
    let r = gated(&base(), &soft, &GateConfig::default());
    assert_eq!(r.verdict, Verdict::Incomparable);
    assert_eq!(r.exit_code, 3);
    let mut counters_only = GateConfig::empty();
    counters_only.set("counter.*.max", 0.0).expect("valid");
    assert_eq!(gated(&base(), &soft, &counters_only).verdict, Verdict::Pass);
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
    let r = gated(&base(), &cand, &cfg);
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

/// A metric given twice in a JSON config is refused with its line, in either shape: JSON
/// leaves a repeated key to the reader, and keeping the last would gate `frame.avg` at 50%
/// under a file whose first line for it says 10%.
#[test]
fn a_json_config_naming_a_metric_twice_is_refused() {
    for text in [
        "{\"tolerances\": {\"frame.avg\": 0.1,\n\"frame.avg\": 0.5}}",
        "{\"frame.avg\": 0.1,\n\"frame.avg\": 0.5}",
    ] {
        let e = GateConfig::from_json(text).unwrap_err().to_string();
        assert!(
            e.contains("`frame.avg` is given twice") && e.contains("line 2"),
            "{text}: {e}"
        );
    }
    // Each metric once is read as before.
    let cfg = GateConfig::from_json("{\"frame.avg\": 0.1, \"frame.p99\": 0.5}").expect("valid");
    assert_eq!(cfg.tolerances.get("frame.avg"), Some(&0.1));
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
        redacted(&gated(
            &base(),
            &cand,
            &defaults_and("counter.draw_calls.max", 0.0)
        ))
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

#[test]
fn a_tolerance_that_could_never_fail_is_refused() {
    let mut cfg = GateConfig::empty();
    // Not a number, infinite, negative: refused as before.
    for bad in [
        "frame.p99=NaN",
        "frame.p99=inf",
        "frame.p99=-0.1",
        "frame.p99=1e308",
    ] {
        let e = cfg.apply_arg(bad).expect_err(bad).to_string();
        assert!(e.contains("frame.p99"), "{bad}: {e}");
    }
    // Lower-is-better: at most MAX_TOLERANCE (10, eleven times worse).
    cfg.apply_arg("frame.p99=10").expect("10 is the largest");
    let e = cfg.apply_arg("frame.p99=10.5").unwrap_err().to_string();
    assert!(e.contains("at most 10"), "{e}");
    let e = cfg
        .apply_arg("counter.*.max=1e308")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most 10"), "{e}");
    // Higher-is-better: below 1, since fps cannot fall by more than all of it.
    cfg.apply_arg("frame.fps=0.99").expect("below 1");
    for bad in [
        "frame.fps=1",
        "frame.low_1pct_fps=2",
        "frame.low_01pct_fps=1",
    ] {
        let e = cfg.apply_arg(bad).expect_err(bad).to_string();
        assert!(e.contains("below 1"), "{bad}: {e}");
    }
    // The JSON config takes the same rule, with the line.
    let e = GateConfig::from_json("{\"tolerances\": {\n\"frame.fps\": 1.0}}")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("line 2:") && e.contains("below 1"), "{e}");
}

#[test]
fn a_statistic_too_few_frames_hold_is_neither_a_regression_nor_a_pass() {
    let long = base();
    let short = summarize(&game(&GameSpec {
        frames: 20,
        ..GameSpec::default()
    }));
    assert!(long.metric("frame.p99").is_some() && short.metric("frame.p99").is_none());
    // frame.p99 of 19 periods does not exist: the candidate does not lack it, it is too short
    // to say; and a short base cannot vouch for the candidate's p99 either.
    let defaults = GateConfig::default();
    for (b, c, side) in [(&long, &short, "candidate"), (&short, &long, "base")] {
        let r = gated(b, c, &defaults);
        let p99 = r.checks.iter().find(|c| c.metric == "frame.p99").unwrap();
        assert_eq!(p99.status, CheckStatus::TooFewValues, "{side}");
        if r.verdict != Verdict::Fail {
            assert_eq!(r.verdict, Verdict::Inconclusive, "{side}: {:?}", r.reasons);
            assert_eq!(r.exit_code, 2);
        }
        let reason = r
            .reasons
            .iter()
            .find(|x| x.starts_with("frame.p99:"))
            .expect("a reason names the statistic when it decides");
        assert!(
            reason.contains(&format!("the {side} has too few values"))
                && reason.contains("needs at least 100 values"),
            "{reason}"
        );
    }
    // Neither side: frame.avg passing does not vouch for the frame.p99 asked for.
    let r = gated(&short, &short, &defaults);
    assert_eq!(r.verdict, Verdict::Inconclusive, "{:?}", r.reasons);
    assert!(
        r.reasons
            .iter()
            .any(|x| x.starts_with("frame.p99: neither capture has enough values")),
        "{:?}",
        r.reasons
    );
}

#[test]
fn a_wildcard_leaves_out_a_name_too_rare_in_both_captures() {
    let short = summarize(&game(&GameSpec {
        frames: 15,
        with_spans: true,
        ..GameSpec::default()
    }));
    let mut cfg = GateConfig::empty();
    cfg.set("scope.*.p95", 0.2).expect("valid");
    cfg.set("frame.avg", 0.1).expect("valid");
    let r = gated(&short, &short, &cfg);
    let scopes: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.metric.starts_with("scope."))
        .collect();
    assert!(!scopes.is_empty(), "the wildcard covers the scopes");
    assert!(
        scopes.iter().all(|c| c.status == CheckStatus::Absent),
        "{scopes:?}"
    );
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
    // Named, the same statistic must be judged: inconclusive.
    let name = scopes[0].metric.clone();
    cfg.set(&name, 0.2).expect("valid");
    let r = gated(&short, &short, &cfg);
    assert_eq!(r.verdict, Verdict::Inconclusive, "{:?}", r.reasons);
}

/// A wildcard that covers nothing (no counter in either capture) gates nothing: refused, as
/// a path that names nothing is, rather than dropped while the other checks pass.
#[test]
fn a_wildcard_that_covers_nothing_is_refused() {
    let quiet = summarize(&game(&GameSpec {
        with_counters: false,
        ..GameSpec::default()
    }));
    let err = gate(&quiet, &quiet, &defaults_and("counter.*.max", 0.0))
        .expect_err("a wildcard over no counter");
    assert_eq!(
        err.to_string(),
        "`counter.*.max` covers nothing: neither capture has any counters"
    );
    // Where it covers something, it gates it.
    assert!(gated(&base(), &base(), &defaults_and("counter.*.max", 0.0))
        .checks
        .iter()
        .any(|c| c.configured.as_deref() == Some("counter.*.max")));
}

/// A metric named on its own keeps its own tolerance when a wildcard also covers it: one
/// check per metric, at the named tolerance.
#[test]
fn a_named_metric_overrides_the_wildcard_that_covers_it() {
    let cand = summarize(&game(&GameSpec {
        render_ns: 12 * MS,
        ..GameSpec::default()
    }));
    let mut cfg = GateConfig::empty();
    cfg.set("scope.*.p95", 0.1).expect("valid");
    cfg.set("scope.render.p95", 5.0).expect("valid");
    let r = gated(&base(), &cand, &cfg);
    let render: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.metric == "scope.render.p95")
        .collect();
    assert_eq!(render.len(), 1, "{render:?}");
    assert_eq!(render[0].tolerance, 5.0);
    assert_eq!(render[0].configured, None);
    assert_eq!(render[0].status, CheckStatus::Pass);
    assert!(r
        .checks
        .iter()
        .any(|c| c.metric == "scope.update.p95" && c.tolerance == 0.1));
    // The same under the lite-profiler spelling of the named metric.
    let mut cfg = GateConfig::empty();
    cfg.set("scope.*.p95", 0.1).expect("valid");
    cfg.set("phase.render.p95", 5.0).expect("valid");
    let r = gated(&base(), &cand, &cfg);
    assert_eq!(
        r.checks
            .iter()
            .filter(|c| c.metric == "scope.render.p95")
            .count(),
        1
    );
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
}

/// A total over a capture's frames compared raw between runs of different lengths: a
/// 5-frame candidate making far more draw calls a frame passed an exact gate on
/// `counter.draw_calls.sum` (its sum the smaller), and the same workload over 300 frames
/// against 60 failed on no change. Totals over different frame counts are
/// `frame_counts_differ` (inconclusive); per-frame statistics are judged as ever.
#[test]
fn totals_over_different_frame_counts_are_judged_neither_way() {
    let long = summarize(&game(&GameSpec::default()));
    let short_heavier = summarize(&game(&GameSpec {
        frames: 400,
        draw_calls: 2400,
        ..GameSpec::default()
    }));
    let mut totals = GateConfig::empty();
    for metric in [
        "counter.draw_calls.sum",
        "counter.draw_calls.count",
        "scope.render.total",
        "scope.render.count",
        "scope.render.calls",
        "frame.count",
        "work.count",
    ] {
        totals.set(metric, 0.0).expect("valid");
    }
    for (base, cand) in [(&long, &short_heavier), (&short_heavier, &long)] {
        let r = gated(base, cand, &totals);
        assert_eq!(r.verdict, Verdict::Inconclusive, "{:?}", r.reasons);
        for c in &r.checks {
            assert_eq!(c.status, CheckStatus::FrameCountsDiffer, "{c:?}");
        }
        assert!(
            r.reasons.iter().any(|why| why.contains("the base holds")
                && why.contains("a longer run's total is larger")),
            "{:?}",
            r.reasons
        );
    }
    // The per-frame statistic next to them decides: 20 times the draw calls a frame.
    let mut both = totals.clone();
    both.set("counter.draw_calls.avg", 0.0).expect("valid");
    let r = gated(&long, &short_heavier, &both);
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    // As many frames: totals are judged as before.
    let same_length = summarize(&game(&GameSpec {
        draw_calls: 2400,
        ..GameSpec::default()
    }));
    let r = gated(&long, &same_length, &totals);
    assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.reasons);
    assert!(r
        .checks
        .iter()
        .any(|c| c.metric == "counter.draw_calls.sum" && c.status == CheckStatus::Regressed));
}

/// camelCase names a snake_case scope or counter, and the other way round, in `gate`.
#[test]
fn either_spelling_names_a_counter_spelt_the_other_way() {
    let mut cfg = GateConfig::empty();
    cfg.set("counter.drawCalls.max", 0.0).expect("valid");
    let r = gated(&base(), &base(), &cfg);
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.reasons);
    assert_eq!(r.checks[0].metric, "counter.draw_calls.max");
    assert_eq!(
        r.checks[0].configured.as_deref(),
        Some("counter.drawCalls.max")
    );
}
