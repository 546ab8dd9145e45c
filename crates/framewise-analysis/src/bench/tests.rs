//! Comparison verdicts on synthetic results whose per-run values are given.

use std::collections::BTreeMap;

use super::*;
use crate::model::CountersGrade;

fn settings() -> BenchSettings {
    BenchSettings {
        command: vec!["game".into()],
        frames: 600,
        warmup: 120,
        runs: 5,
        seed: None,
        fixed_dt: None,
        resolution: None,
    }
}

fn fingerprint() -> Fingerprint {
    Fingerprint {
        cpu_model: Some("cpu".into()),
        os: "linux".into(),
        gpu_adapter: None,
        build_profile: "release".into(),
        settings: settings(),
        build: None,
    }
}

/// A run whose frame metrics are `median_ms` (p95 and p99 scaled from it), with
/// `draw_calls` as its only counter.
pub(crate) fn run(k: u32, median_ms: f64, draw_calls: i64) -> BenchRun {
    let mut metrics = BTreeMap::new();
    for (p, f) in [
        ("frame.p50", 1.0),
        ("frame.p95", 1.3),
        ("frame.p99", 1.6),
        ("work.p50", 0.9),
    ] {
        metrics.insert(p.to_owned(), median_ms * f);
    }
    metrics.insert("hitches.per_min".to_owned(), 0.0);
    metrics.insert("counter.draw_calls.sum".to_owned(), draw_calls as f64);
    metrics.insert(
        "counter.draw_calls.max".to_owned(),
        draw_calls as f64 / 600.0,
    );
    BenchRun {
        run: k,
        capture: format!("run-{k}.sgpt"),
        frames_measured: 600,
        // The bench's 600 frames exactly: more would make the run long, fewer short.
        frames_recorded: Some(600),
        short: false,
        long: false,
        frames_discarded: 120,
        frames_lost: 0,
        measured_s: 600.0 * median_ms / 1000.0,
        frame: FrameFigures {
            median_ms: Some(median_ms),
            p95_ms: Some(median_ms * 1.3),
            p99_ms: Some(median_ms * 1.6),
        },
        hitches: 0,
        hitches_per_min: 0.0,
        counters: [("draw_calls".to_owned(), draw_calls)]
            .into_iter()
            .collect(),
        metrics,
        defects: Vec::new(),
    }
}

pub(crate) fn result_of(medians: &[f64], draw_calls: i64) -> BenchResult {
    let runs: Vec<BenchRun> = medians
        .iter()
        .enumerate()
        .map(|(i, &m)| run(i as u32 + 1, m, draw_calls))
        .collect();
    let grades = vec![
        Grade {
            counters: CountersGrade::Exact,
            timing: TimingGrade::Hardware,
        };
        runs.len()
    ];
    BenchResult::new(
        "smoke",
        true,
        "2026-12-01T00:00:00.000Z".into(),
        settings(),
        fingerprint(),
        runs,
        &grades,
    )
}

const BASE: [f64; 5] = [10.0, 10.1, 9.9, 10.05, 9.95];

#[test]
fn same_runs_are_no_detectable_change() {
    let a = result_of(&BASE, 6000);
    let b = result_of(&[10.02, 9.97, 10.08, 9.93, 10.0], 6000);
    let c = compare(&a, &b, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::NoDetectableChange, "{c:#?}");
    assert_eq!(c.overall.exit_code, 2);
    let p50 = c
        .metrics
        .iter()
        .find(|m| m.metric == "frame.p50")
        .expect("p50");
    // The smallest detectable change is stated, and at least the 2% minimum effect.
    assert!(p50.smallest_detectable.expect("stated") >= 0.02);
}

#[test]
fn a_ten_percent_slowdown_regresses_and_a_speedup_improves() {
    let a = result_of(&BASE, 6000);
    let slow: Vec<f64> = BASE.iter().map(|m| m * 1.1).collect();
    let c = compare(&a, &result_of(&slow, 6000), &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Regressed, "{c:#?}");
    assert_eq!(c.overall.exit_code, 1);
    let fast: Vec<f64> = BASE.iter().map(|m| m * 0.9).collect();
    let c = compare(&a, &result_of(&fast, 6000), &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Improved);
    assert_eq!(c.overall.exit_code, 0);
}

#[test]
fn significant_but_below_two_percent_is_not_called() {
    // Tiny noise makes a 1% shift significant; the minimum effect still refuses it.
    let a = result_of(&[10.0, 10.001, 9.999, 10.0, 10.0], 6000);
    let b = result_of(&[10.1, 10.101, 10.099, 10.1, 10.1], 6000);
    let c = compare(&a, &b, &Budgets::default());
    let p50 = c
        .metrics
        .iter()
        .find(|m| m.metric == "frame.p50")
        .expect("p50");
    assert!(p50.p_value.expect("p") < 0.001);
    assert_eq!(p50.verdict, VerdictWord::NoDetectableChange);
}

#[test]
fn noisy_runs_hide_a_shift() {
    let a = result_of(&[8.0, 12.0, 10.0, 9.0, 11.5], 6000);
    let b = result_of(&[8.8, 13.2, 11.0, 9.9, 12.65], 6000);
    let c = compare(&a, &b, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::NoDetectableChange, "{c:#?}");
}

#[test]
fn counters_compare_exactly_and_precedence_holds() {
    let a = result_of(&BASE, 6000);
    let b = result_of(&BASE, 6001);
    let c = compare(&a, &b, &Budgets::default());
    let dc = c
        .metrics
        .iter()
        .find(|m| m.metric == "counter.draw_calls.sum")
        .expect("counter");
    assert_eq!(dc.verdict, VerdictWord::Regressed);
    assert_eq!(c.overall.exit_code, 1);
    // Faster but more draw calls: regressed wins (1 before 0).
    let fast: Vec<f64> = BASE.iter().map(|m| m * 0.8).collect();
    let c = compare(&a, &result_of(&fast, 6001), &Budgets::default());
    assert_eq!(c.count(VerdictWord::Improved), 4, "{c:#?}");
    assert_eq!(c.overall.verdict, VerdictWord::Regressed);
}

#[test]
fn counters_only_judges_the_counters_and_nothing_else() {
    let a = result_of(&BASE, 6000);
    let slow: Vec<f64> = BASE.iter().map(|m| m * 1.5).collect();
    // Fewer draw calls on a machine that got slower meanwhile: the timings regress, the
    // counters improve. Judged on everything, regressed; on counters only, improved.
    let b = result_of(&slow, 5000);
    assert_eq!(
        compare(&a, &b, &Budgets::default()).overall.verdict,
        VerdictWord::Regressed
    );
    let c = compare_counters_only(&a, &b, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Improved, "{c:#?}");
    assert_eq!(c.overall.exit_code, 0);
    assert!(c.metrics.iter().all(|m| m.metric.starts_with("counter.")));
    assert!(c.method.starts_with("counters only"), "{}", c.method);
    assert!(
        c.overall
            .reasons
            .iter()
            .any(|r| r.starts_with("counters only")),
        "{c:?}"
    );
    // Only slower, the same counts: nothing the counters can detect.
    let c = compare_counters_only(&a, &result_of(&slow, 6000), &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::NoDetectableChange, "{c:#?}");
    // More draw calls: regressed, however fast.
    let fast: Vec<f64> = BASE.iter().map(|m| m * 0.5).collect();
    let c = compare_counters_only(&a, &result_of(&fast, 6001), &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Regressed);
    // No counter at all: inconclusive, never a pass.
    let mut bare = result_of(&BASE, 6000);
    for r in &mut bare.runs {
        r.counters.clear();
        r.metrics.retain(|k, _| !k.starts_with("counter."));
    }
    let c = compare_counters_only(&bare, &bare.clone(), &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
    // Incomparable stays incomparable.
    let mut other = result_of(&BASE, 5000);
    other.config_hash = "0000000000000000".into();
    assert_eq!(
        compare_counters_only(&a, &other, &Budgets::default())
            .overall
            .exit_code,
        3
    );
}

#[test]
fn incomparable_and_inconclusive() {
    let a = result_of(&BASE, 6000);
    let mut b = result_of(&BASE, 6000);
    b.config_hash = "0000000000000000".into();
    assert_eq!(compare(&a, &b, &Budgets::default()).overall.exit_code, 3);
    let mut b = result_of(&BASE, 6000);
    b.regime = TimingGrade::Software;
    let c = compare(&a, &b, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Incomparable);
    let b = result_of(&BASE[..2], 6000);
    assert_eq!(compare(&a, &b, &Budgets::default()).overall.exit_code, 3);
    // A run that lost frames: inconclusive even when a metric moved.
    let slow: Vec<f64> = BASE.iter().map(|m| m * 1.5).collect();
    let mut b = result_of(&slow, 6000);
    b.runs_with_lost_frames = 1;
    let c = compare(&a, &b, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Inconclusive);
    assert_eq!(c.overall.exit_code, 2);
    // A run that lost frames counts even when the result's tally says none.
    let mut b = result_of(&slow, 6000);
    b.runs[0].frames_lost = 5;
    assert_eq!(b.runs_with_lost_frames, 0);
    let c = compare(&a, &b, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:?}");
    assert!(
        c.overall.reasons[0].starts_with("1 run(s) lost frames"),
        "{c:?}"
    );
}

#[test]
fn budgets_are_stated_against_the_after_side() {
    let a = result_of(&BASE, 6000);
    let b = result_of(&BASE, 6000);
    let mut budgets = Budgets {
        frame_ms: Some(12.0),
        ..Budgets::default()
    };
    budgets.limits.insert("counter.draw_calls.max".into(), 5.0);
    let c = compare(&a, &b, &budgets);
    let states: Vec<(&str, BudgetState)> = c
        .overall
        .budgets
        .iter()
        .map(|b| (b.budget.as_str(), b.state))
        .collect();
    // p95 = 1.3 x 10 ms = 13 ms over 12; 6000 / 600 = 10 draw calls over 5.
    assert_eq!(
        states,
        [
            ("frame_ms", BudgetState::Breached),
            ("counter.draw_calls.max", BudgetState::Breached)
        ]
    );
    assert!(c.overall.reasons.iter().any(|r| r.contains("frame_ms")));
}

#[test]
fn config_hash_ignores_runs_and_build() {
    let f = fingerprint();
    let mut g = f.clone();
    g.settings.runs = 9;
    g.build = Some("abc".into());
    assert_eq!(f.config_hash(), g.config_hash());
    let mut h = f.clone();
    h.settings.frames = 300;
    assert_ne!(f.config_hash(), h.config_hash());
    assert_eq!(f.config_hash().len(), 16);
}

#[test]
fn noise_floors_are_per_metric() {
    let r = result_of(&[9.0, 10.0, 11.0], 6000);
    let nf = r.noise_floor["frame.p50"].expect("floor");
    assert!((nf - 0.14826).abs() < 1e-9);
    assert_eq!(r.noise_floor["counter.draw_calls.sum"], Some(0.0));
}

#[test]
fn a_result_with_an_absurd_or_negative_value_is_not_usable() {
    use crate::bench::usable::first_unusable;
    let mut r = result_of(&BASE, 6000);
    assert_eq!(first_unusable(&r), None);
    // A gauge's statistics may be negative.
    r.runs[0]
        .metrics
        .insert("counter.camera.x_mm.min".into(), -4200.0);
    assert_eq!(first_unusable(&r), None);
    let mut big = r.clone();
    big.runs[1].metrics.insert("frame.p50".into(), 1e308);
    assert_eq!(
        first_unusable(&big).as_deref(),
        Some("run 2: frame.p50 = 1e308: not a usable value (a finite number within ±1e100)")
    );
    let mut negative = r.clone();
    negative.runs[2].frame.median_ms = Some(-5.0);
    assert!(first_unusable(&negative)
        .is_some_and(|why| why.starts_with("run 3: frame.median_ms = -5: ")));
    let mut floor = r;
    floor.noise_floor.insert("frame.p50".into(), Some(f64::MAX));
    assert!(first_unusable(&floor).is_some_and(|why| why.starts_with("noise_floor frame.p50")));
}

#[test]
fn a_before_near_zero_gives_no_infinite_change() {
    // Usable values, yet so near 0 that a ratio to them overflows.
    let tiny: Vec<f64> = BASE.iter().map(|m| m * 1e-310).collect();
    let before = result_of(&tiny, 6000);
    assert_eq!(crate::bench::usable::first_unusable(&before), None);
    let c = compare(&before, &result_of(&BASE, 6000), &Budgets::default());
    for m in &c.metrics {
        assert!(m.change.is_none_or(f64::is_finite), "{m:?}");
        assert!(m.smallest_detectable.is_none_or(f64::is_finite), "{m:?}");
    }
    let p50 = c
        .metrics
        .iter()
        .find(|m| m.metric == "frame.p50")
        .expect("p50");
    assert_eq!(p50.change, None, "{p50:?}");
    let reasons = c.overall.reasons.join("; ");
    assert!(
        !reasons.contains("inf") && !reasons.contains("NaN"),
        "{reasons}"
    );
}

/// A result of `medians` whose runs recorded `recorded` frames after the warm-up and measured
/// one fewer, with `draw_calls` per run — as a program that stops early leaves it.
fn short_result_of(medians: &[f64], recorded: u64, draw_calls: i64) -> BenchResult {
    let mut r = result_of(medians, draw_calls);
    for run in &mut r.runs {
        run.frames_recorded = Some(recorded);
        run.frames_measured = recorded - 1;
    }
    BenchResult::new(
        &r.name.clone(),
        true,
        r.at.clone(),
        settings(),
        fingerprint(),
        r.runs,
        &[r.grade; 5][..medians.len()],
    )
}

#[test]
fn short_runs_on_either_side_are_inconclusive() {
    let a = result_of(&BASE, 6000);
    // The program stopped after 5 of its 600 frames: fewer draw calls, faster frames.
    let fast: Vec<f64> = BASE.iter().map(|m| m * 0.5).collect();
    let b = short_result_of(&fast, 5, 40);
    assert_eq!(b.short_runs, 5);
    assert!(b.runs.iter().all(|r| r.short));
    assert_eq!(a.short_runs, 0);
    for (before, after, side) in [(&a, &b, "after"), (&b, &a, "before")] {
        let c = compare(before, after, &Budgets::default());
        assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
        assert_eq!(c.overall.exit_code, 2);
        let reason = c.overall.reasons.join("; ");
        assert!(
            reason.contains(&format!(
                "the {side} side: 5 of 5 run(s) short: frames recorded after the warm-up 5, 5, 5, 5, 5 where the bench asks 600"
            )),
            "{reason}"
        );
        let c = compare_counters_only(before, after, &Budgets::default());
        assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
    }
    // A short run counts even when the result's tally and flag say none (an edit, an older
    // writer): it is counted from the frames the run recorded.
    let mut edited = b.clone();
    edited.short_runs = 0;
    for r in &mut edited.runs {
        r.short = false;
    }
    let c = compare(&a, &edited, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
    // A result written before `frames_recorded` existed: judged by its measured frames.
    let mut old = edited;
    for r in &mut old.runs {
        r.frames_recorded = None;
    }
    assert_eq!(crate::bench::usable::short_runs(&old), 5);
    let mut whole = result_of(&BASE, 6000);
    for r in &mut whole.runs {
        r.frames_recorded = None;
        r.frames_measured = 599;
    }
    assert_eq!(crate::bench::usable::short_runs(&whole), 0);
}

#[test]
fn totals_over_different_frame_counts_are_not_compared() {
    // Every run recorded its 600 frames, but the after side measured fewer of them (paused
    // frames, frames without a period): its totals cover fewer frames.
    let a = result_of(&BASE, 6000);
    let mut b = result_of(&BASE, 5000);
    for r in &mut b.runs {
        r.frames_measured = 500;
    }
    for c in [
        compare(&a, &b, &Budgets::default()),
        compare_counters_only(&a, &b, &Budgets::default()),
    ] {
        let sum = c
            .metrics
            .iter()
            .find(|m| m.metric == "counter.draw_calls.sum")
            .expect("the total is listed");
        assert_eq!(sum.verdict, VerdictWord::Inconclusive, "{sum:?}");
        assert!(
            sum.note.as_deref().is_some_and(|n| n.contains(
                "measured different frame counts (before 600, 600, 600, 600, 600; after 500, 500, 500, 500, 500)"
            )),
            "{sum:?}"
        );
        // Not `improved` on fewer draw calls: nothing else moved, so nothing is decided.
        assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
        assert_eq!(c.overall.exit_code, 2);
    }
    // The same frame counts: the totals are called as before.
    let c = compare(&a, &result_of(&BASE, 5000), &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Improved, "{c:#?}");
}

/// A budget written in an alias spelling (`counter.drawCalls.max`, `phase.render.p95`) was
/// pushed as written, found no per-run value and was silently left out: the comparison read
/// no-detectable-change where the canonical spelling regressed. It is compared as measured.
#[test]
fn a_budget_in_an_alias_spelling_is_compared_as_measured() {
    let mut a = result_of(&BASE, 6000);
    let mut b = result_of(&BASE, 6000);
    for (r, render) in a.runs.iter_mut().zip(BASE) {
        r.metrics.insert("scope.render.p95".into(), render * 0.5);
    }
    for (r, render) in b.runs.iter_mut().zip(BASE) {
        // Twice the draw calls in the worst frame, the same total; render 50% slower.
        r.metrics.insert("counter.draw_calls.max".into(), 20.0);
        r.metrics.insert("scope.render.p95".into(), render * 0.75);
    }
    assert_eq!(
        compare(&a, &b, &Budgets::default()).overall.verdict,
        VerdictWord::NoDetectableChange
    );
    for (spelling, measured) in [
        ("counter.draw_calls.max", "counter.draw_calls.max"),
        ("counter.drawCalls.max", "counter.draw_calls.max"),
        ("scope.render.p95", "scope.render.p95"),
        ("phase.render.p95", "scope.render.p95"),
    ] {
        let mut budgets = Budgets::default();
        budgets.limits.insert(spelling.into(), 5000.0);
        let c = compare(&a, &b, &budgets);
        assert_eq!(
            c.overall.verdict,
            VerdictWord::Regressed,
            "{spelling}: {c:#?}"
        );
        assert_eq!(c.overall.exit_code, 1);
        let m = c
            .metrics
            .iter()
            .find(|m| m.metric == measured)
            .unwrap_or_else(|| panic!("{spelling}: {measured} compared: {c:#?}"));
        assert_eq!(m.verdict, VerdictWord::Regressed, "{spelling}: {m:?}");
        // And on the counters alone, the counter budget still decides.
        if measured.starts_with("counter.") {
            let c = compare_counters_only(&a, &b, &budgets);
            assert_eq!(
                c.overall.verdict,
                VerdictWord::Regressed,
                "{spelling}: {c:#?}"
            );
        }
    }
    // Both spellings declared: the metric is compared once.
    let mut budgets = Budgets::default();
    budgets
        .limits
        .insert("counter.drawCalls.max".into(), 5000.0);
    budgets
        .limits
        .insert("counter.draw_calls.max".into(), 5000.0);
    let c = compare(&a, &b, &budgets);
    assert_eq!(
        c.metrics
            .iter()
            .filter(|m| m.metric == "counter.draw_calls.max")
            .count(),
        1
    );
}

/// A compared metric measured in every run before and missing after was dropped with no
/// reason: a real regression (the counter no longer recorded) read no-detectable-change,
/// or improved beside another improvement. It is a regression, named with its reason.
#[test]
fn a_metric_measured_before_and_missing_after_is_a_regression() {
    let a = result_of(&BASE, 6000);
    let mut budgets = Budgets::default();
    budgets.limits.insert("counter.drawCalls.max".into(), 300.0);
    // Faster, and the budgeted counter statistic gone from every run.
    let fast: Vec<f64> = BASE.iter().map(|m| m * 0.8).collect();
    let mut b = result_of(&fast, 6000);
    for r in &mut b.runs {
        r.metrics.remove("counter.draw_calls.max");
    }
    let c = compare(&a, &b, &budgets);
    assert_eq!(c.overall.verdict, VerdictWord::Regressed, "{c:#?}");
    assert_eq!(c.overall.exit_code, 1);
    assert_eq!(c.missing.len(), 1, "{c:#?}");
    assert_eq!(c.missing[0].metric, "counter.draw_calls.max");
    assert_eq!(c.missing[0].verdict, VerdictWord::Regressed);
    assert_eq!(c.missing[0].after_runs, 0);
    assert_eq!(c.missing[0].before, 10.0);
    assert!(
        c.overall.reasons.iter().any(|r| r.starts_with(
            "counter.draw_calls.max regressed: measured in all 5 run(s) before, missing from 5 of 5 run(s) after"
        )),
        "{:?}",
        c.overall.reasons
    );
    assert_eq!(c.count(VerdictWord::Regressed), 1);
    let line = crate::bench::LedgerLine::of(&c, "now".into(), None, None);
    assert_eq!(line.regressed, ["counter.draw_calls.max"]);
    assert_eq!(line.verdict, VerdictWord::Regressed);
    // On the counters alone, too.
    let c = compare_counters_only(&a, &b, &budgets);
    assert_eq!(c.overall.verdict, VerdictWord::Regressed, "{c:#?}");

    // A sum counter no longer recorded at all (no budget): its total is gone, which is not
    // fewer draw calls.
    let mut gone = result_of(&BASE, 6000);
    for r in &mut gone.runs {
        r.counters.clear();
        r.metrics.retain(|k, _| !k.starts_with("counter."));
    }
    let c = compare(&a, &gone, &Budgets::default());
    assert_eq!(c.overall.verdict, VerdictWord::Regressed, "{c:#?}");
    assert_eq!(c.missing[0].metric, "counter.draw_calls.sum");
    // Missing from one run of the after side only.
    let mut one = result_of(&BASE, 6000);
    one.runs[2].metrics.remove("counter.draw_calls.max");
    let c = compare(&a, &one, &budgets);
    assert_eq!(c.overall.verdict, VerdictWord::Regressed, "{c:#?}");
    assert_eq!(c.missing[0].after_runs, 4);
    assert!(c.missing[0]
        .note
        .contains("missing from 1 of 5 run(s) after"));
    // Measured after but not before: not compared, and not a regression.
    let c = compare(&one, &a, &budgets);
    assert!(c.missing.is_empty(), "{c:#?}");
    assert_eq!(c.overall.verdict, VerdictWord::NoDetectableChange, "{c:#?}");
    // A short side still makes the comparison inconclusive first.
    let mut short = b.clone();
    for r in &mut short.runs {
        r.frames_recorded = Some(5);
    }
    let c = compare(&a, &short, &budgets);
    assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
}

/// An exact counter change too small to show at one decimal read "regressed by +0.0%".
#[test]
fn a_change_never_reads_zero_percent() {
    use crate::bench::compare::percent_text;
    assert_eq!(percent_text(0.108), "+10.8%");
    assert_eq!(percent_text(-0.05), "-5.0%");
    assert_eq!(percent_text(0.0), "+0.0%");
    assert_eq!(percent_text(1.0 / 6000.0), "+0.02%");
    assert_eq!(percent_text(-3.0 / 6_000_000.0), "-0.00005%");
    assert_eq!(percent_text(1e-30), "+1.0e-28%");
    let a = result_of(&BASE, 6_000_000);
    for (after, shown) in [
        (6_000_001, "counter.draw_calls.sum regressed by +0.00002%"),
        (5_999_999, "counter.draw_calls.sum improved by -0.00002%"),
    ] {
        let c = compare(&a, &result_of(&BASE, after), &Budgets::default());
        let reasons = c.overall.reasons.join("; ");
        assert!(reasons.contains(shown), "{reasons}");
        assert!(!reasons.contains("0.0%"), "{reasons}");
    }
}

/// A run that recorded more frames than the bench asks ran another workload: as a short
/// run, it makes the result, and any comparison with it, inconclusive.
#[test]
fn long_runs_on_either_side_are_inconclusive() {
    let a = result_of(&BASE, 6000);
    let mut b = result_of(&BASE, 9000);
    for r in &mut b.runs {
        r.frames_recorded = Some(900);
        r.frames_measured = 899;
    }
    let b = BenchResult::new(
        "smoke",
        true,
        b.at.clone(),
        settings(),
        fingerprint(),
        b.runs,
        &[b.grade; 5],
    );
    assert_eq!(b.long_runs, 5);
    assert_eq!(b.short_runs, 0);
    assert!(b.runs.iter().all(|r| r.long && !r.short));
    assert_eq!(a.long_runs, 0);
    for (before, after, side) in [(&a, &b, "after"), (&b, &a, "before")] {
        let c = compare(before, after, &Budgets::default());
        assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
        let reason = c.overall.reasons.join("; ");
        assert!(
            reason.contains(&format!(
                "the {side} side: 5 of 5 run(s) long: frames recorded after the warm-up 900, 900, 900, 900, 900 where the bench asks 600"
            )),
            "{reason}"
        );
        let c = compare_counters_only(before, after, &Budgets::default());
        assert_eq!(c.overall.verdict, VerdictWord::Inconclusive, "{c:#?}");
    }
    // Counted from the frames recorded, whatever the flags and the tally say.
    let mut edited = b.clone();
    edited.long_runs = 0;
    for r in &mut edited.runs {
        r.long = false;
    }
    assert_eq!(crate::bench::usable::long_runs(&edited), 5);
    assert_eq!(
        compare(&a, &edited, &Budgets::default()).overall.verdict,
        VerdictWord::Inconclusive
    );
}

/// `config_hash` was trusted as stored: a result whose command or CPU model was edited
/// still compared as the same configuration. A hash that is not its fingerprint's, or
/// settings that are not the fingerprint's, is a value framewise never writes.
#[test]
fn a_config_hash_that_is_not_its_fingerprints_is_not_usable() {
    use crate::bench::usable::first_unusable;
    let r = result_of(&BASE, 6000);
    assert_eq!(first_unusable(&r), None);
    let mut cpu = r.clone();
    cpu.fingerprint.cpu_model = Some("another cpu".into());
    let mut command = r.clone();
    command.fingerprint.settings.command = vec!["other-game".into()];
    command.settings.command = vec!["other-game".into()];
    let mut hash = r.clone();
    hash.config_hash = "0123456789abcdef".into();
    for edited in [&cpu, &command, &hash] {
        let why = first_unusable(edited).expect("refused");
        assert!(why.contains("is not the hash of its fingerprint"), "{why}");
    }
    let mut settings = r;
    settings.settings.seed = Some(7);
    assert_eq!(
        first_unusable(&settings).as_deref(),
        Some("settings that differ from its fingerprint's")
    );
}

/// A timing metric whose values (near 1e90, inside what a result may hold) overflowed
/// Welch's degrees of freedom was dropped from the comparison, so an edited result with a
/// frame.p50 of 1e90 and a halved p95 read `improved`. The test is taken on such values now,
/// and the metric is judged.
#[test]
fn a_timing_metric_of_huge_values_is_judged_not_dropped() {
    let a = result_of(&BASE, 6000);
    let mut b = result_of(&BASE, 6000);
    for (k, r) in b.runs.iter_mut().enumerate() {
        r.metrics
            .insert("frame.p50".into(), (1.0 + k as f64 * 0.01) * 1e90);
        if let Some(p95) = r.metrics.get_mut("frame.p95") {
            *p95 /= 2.0;
        }
    }
    let c = compare(&a, &b, &Budgets::default());
    let p50 = c
        .metrics
        .iter()
        .find(|m| m.metric == "frame.p50")
        .unwrap_or_else(|| panic!("frame.p50 judged: {c:#?}"));
    assert_eq!(p50.verdict, VerdictWord::Regressed, "{p50:#?}");
    assert_eq!(c.overall.verdict, VerdictWord::Regressed, "{c:#?}");
}
