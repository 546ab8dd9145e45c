use super::config::edit_distance;
use super::judge::{regression_reason, worsening};
use super::*;
use crate::summary::direction;

#[test]
fn exit_codes_are_the_contract() {
    assert_eq!(Verdict::Pass.exit_code(), 0);
    assert_eq!(Verdict::Fail.exit_code(), 1);
    assert_eq!(Verdict::Inconclusive.exit_code(), 2);
    assert_eq!(Verdict::Incomparable.exit_code(), 3);
    assert_eq!(Verdict::Error.exit_code(), 4);
}

#[test]
fn aliases() {
    assert_eq!(alias_path("phase.render.p99"), "scope.render.p99");
    assert_eq!(
        alias_path("counter.drawCalls.max"),
        "counter.draw_calls.max"
    );
    assert_eq!(alias_path("frame.jankRatio"), "frame.jank_ratio");
    assert_eq!(snake_case("HTTPServer"), "httpserver");
    assert_eq!(snake_case("lowFps1pct"), "low_fps1pct");
}

#[test]
fn lite_profiler_config_parses() {
    let cfg = GateConfig::from_json(
        r#"{"tolerances": {"frame.avg": 0.1, "phase.render.p99": 0.15, "counter.drawCalls.max": 0}}"#,
    )
    .expect("valid");
    assert_eq!(cfg.tolerances.len(), 3);
    assert_eq!(cfg.tolerances.get("phase.render.p99"), Some(&0.15));
    assert!(GateConfig::from_json(r#"{"tolerances": {"frame.avg": -1}}"#).is_err());
    assert!(GateConfig::from_json(r#"{"tolerances": {"bogus": 1}}"#).is_err());
    assert!(GateConfig::from_json("{").is_err());
}

#[test]
fn an_unknown_key_in_a_json_gate_config_is_refused_with_its_line() {
    // A misspelt section must not leave the defaults running unannounced.
    let err = GateConfig::from_json(
        "{\n  \"tolerances\": {\"frame.avg\": 0.1},\n  \"tolerences\": {}\n}",
    )
    .expect_err("unknown key");
    let text = err.to_string();
    assert!(
        text.contains("line 3") && text.contains("unknown field `tolerences`"),
        "{text}"
    );
    // The section misspelt alone is an unknown key, not a tolerance with a bad value.
    let err = GateConfig::from_json("{\n  \"tolerence\": {\"frame.avg\": 0.1}\n}")
        .expect_err("unknown key");
    let text = err.to_string();
    assert!(
        text.contains("line 2")
            && text.contains("unknown key `tolerence` (did you mean `tolerances`?)"),
        "{text}"
    );
    // A bad path inside names its line too.
    let err =
        GateConfig::from_json("{\"tolerances\": {\n\"frame.avg\": 0.1,\n\"frame.p98\": 0.1}}")
            .expect_err("no p98");
    assert!(err.to_string().starts_with("line 3: `frame.p98`"), "{err}");
}

#[test]
fn nearest_paths_are_a_few_edits_away() {
    assert_eq!(edit_distance("draw_call", "draw_calls"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    let paths = [
        "counter.draw_calls.max",
        "counter.draw_calls.avg",
        "frame.p99",
    ];
    assert_eq!(
        nearest("counter.draw_call.max", paths),
        vec![
            "counter.draw_calls.max".to_owned(),
            "counter.draw_calls.avg".to_owned()
        ]
    );
    assert!(nearest("scope.no_such_scope.p95", paths).is_empty());
}

#[test]
fn tolerance_arguments() {
    let mut cfg = GateConfig::empty();
    cfg.apply_arg("frame.p95=0.2").expect("valid");
    assert_eq!(cfg.tolerances.get("frame.p95"), Some(&0.2));
    assert!(cfg.apply_arg("frame.p95").is_err());
    assert!(cfg.apply_arg("frame.p95=abc").is_err());
    // A percentage is named as one, with the fraction it means.
    let err = cfg.apply_arg("frame.p99=5%").unwrap_err().to_string();
    assert_eq!(
        err,
        "tolerance for `frame.p99` is a fraction, not a percentage: 5% is 0.05"
    );
    // A misspelt path is the first thing wrong, whatever the value.
    let err = cfg.apply_arg("fram.p95=5%").unwrap_err().to_string();
    assert!(err.contains("`fram.p95` is not a metric path"), "{err}");
    assert!(cfg
        .apply_arg("frame.p95=-5%")
        .is_err_and(|e| e.to_string().contains("must be a finite number >= 0")));
}

#[test]
fn reasons_use_fixed_precision() {
    let check = |metric: &str, base: Option<f64>, cand: Option<f64>, status, tolerance| {
        regression_reason(&GateCheck {
            metric: metric.to_owned(),
            configured: None,
            base,
            cand,
            tolerance,
            worsening: None,
            direction: direction(metric),
            status,
        })
    };
    assert_eq!(
        check(
            "frame.avg",
            Some(12.042976588628763),
            Some(16.016220735785954),
            CheckStatus::Regressed,
            0.1
        ),
        "frame.avg: 12.04 ms -> 16.02 ms (+33.0%, tolerance +10.0%)"
    );
    assert_eq!(
        check(
            "frame.fps",
            Some(83.04),
            Some(62.44),
            CheckStatus::Regressed,
            0.05
        ),
        "frame.fps: 83.0 fps -> 62.4 fps (-24.8%, tolerance -5.0%)"
    );
    assert_eq!(
        check(
            "counter.draw_calls.max",
            Some(0.0),
            Some(3.0),
            CheckStatus::Regressed,
            0.0
        ),
        "counter.draw_calls.max: 0 -> 3 (from 0, tolerance exact)"
    );
    assert_eq!(
        check(
            "scope.render.p95",
            Some(0.25),
            None,
            CheckStatus::MissingInCandidate,
            0.1
        ),
        "scope.render.p95: the base has 0.250 ms and the candidate lacks it"
    );
}

#[test]
fn worsening_is_direction_aware() {
    assert!((worsening("frame.p99", 10.0, 11.0) - 0.1).abs() < 1e-12);
    assert!((worsening("frame.fps", 60.0, 54.0) - 0.1).abs() < 1e-12);
    assert!(worsening("frame.fps", 60.0, 66.0) < 0.0);
    assert_eq!(worsening("counter.x.max", 0.0, 1.0), f64::INFINITY);
    assert_eq!(worsening("counter.x.max", 0.0, 0.0), 0.0);
}

#[test]
fn a_metric_has_one_tolerance_however_it_is_spelt() {
    // A tolerance set under an alias replaces the default of the metric it names: the
    // default frame.p99 at 10 % no longer runs beside frame.P99 at 50 %.
    let mut g = GateConfig::default();
    g.set("frame.P99", 0.5).expect("sets");
    assert_eq!(g.tolerances.get("frame.P99"), Some(&0.5));
    assert_eq!(g.tolerances.get("frame.p99"), None);
    assert_eq!(g.tolerances.len(), 2, "{:?}", g.tolerances);
    // In one list, the same metric twice is refused, whichever spelling comes first.
    let mut listed = GateConfig::empty();
    listed.add("counter.drawCalls.max", 0.0).expect("adds");
    let e = listed
        .add("counter.draw_calls.max", 0.5)
        .expect_err("the same metric twice");
    assert!(
        matches!(&e, GateConfigError::SameMetricTwice { first, second }
            if first == "counter.drawCalls.max" && second == "counter.draw_calls.max"),
        "{e}"
    );
    let json = GateConfig::from_json("{\"frame.p99\": 0.1,\n \"frame.P99\": 0.5}")
        .expect_err("the same metric twice");
    assert!(json.to_string().contains("line 2"), "{json}");
    assert!(
        json.to_string().contains("which tolerance was meant"),
        "{json}"
    );
}
