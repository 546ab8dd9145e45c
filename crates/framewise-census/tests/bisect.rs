//! The bisection protocol over the synthetic engine: ranking, deltas, noise, restore checks.

use framewise_census::bisect::DEFAULT_TOP;
use framewise_census::*;

use crate::scene::Scene;

#[test]
fn the_heavy_mesh_ranks_first_and_the_world_is_restored() {
    let mut scene = Scene::planted(30, 5, 200_000);
    let options = BisectOptions::default();
    let report = bisect(&mut scene, &options).unwrap();
    assert_eq!(report.schema, BISECT_SCHEMA);
    assert!(!report.sums_to_baseline);
    assert!(report.restored);
    assert_eq!(report.results.len(), DEFAULT_TOP);
    // warm-up, two baselines and one measure per candidate.
    assert_eq!(
        scene.frames_rendered,
        u64::from(options.warmup_frames) + u64::from(options.frames) * (2 + DEFAULT_TOP as u64)
    );
    let base = report.baseline;
    assert_eq!(
        base.triangles.unwrap().median,
        (30 * 120 + 5 * 12 + 200_000) as f64
    );
    // boid+feather is one batch, each crate its own, the statue one: 7 draws.
    assert_eq!(base.draw_calls.unwrap().median, 7.0);
    // Counts do not jitter; the time does, and its spread was measured.
    assert_eq!(report.spread.triangles, Some(0.0));
    let ms_spread = report.spread.render_ms.unwrap();
    assert_eq!(
        report.render_ms_source.as_deref(),
        Some("the synthetic cost model"),
        "the engine's word on what render ms is"
    );
    assert!(
        ms_spread > 0.0 && ms_spread <= 2.0 * scene.jitter_ms,
        "{ms_spread}"
    );

    let first = &report.results[0];
    assert_eq!((first.rank, first.id.as_str()), (1, "statue"));
    assert_eq!(first.site, "src/plaza.rs:7");
    assert_eq!(first.delta_triangles.unwrap().delta, -200_000.0);
    assert_eq!(first.delta_draw_calls.unwrap().delta, -1.0);
    let ms = first.delta_render_ms.unwrap();
    assert!(!ms.noisy && ms.delta < 0.0, "{ms:?}");

    // A boid: its batch still draws for the other 29, so no draw call is saved, and its
    // 120 triangles cost less time than the noise.
    let boid = report
        .results
        .iter()
        .find(|r| r.id.starts_with("boid"))
        .unwrap();
    assert_eq!(boid.delta_draw_calls.unwrap().delta, 0.0);
    assert!(boid.delta_draw_calls.unwrap().noisy);
    assert_eq!(boid.delta_triangles.unwrap().delta, -120.0);
    assert!(!boid.delta_triangles.unwrap().noisy);
    assert!(boid.delta_render_ms.unwrap().noisy);
    // Crates (one draw each) rank below boids only by triangles: 120 > 12.
    let ranks: Vec<&str> = report.results.iter().map(|r| r.id.as_str()).collect();
    let last_boid = ranks.iter().rposition(|id| id.starts_with("boid")).unwrap();
    let first_crate = ranks.iter().position(|id| id.starts_with("crate"));
    if let Some(c) = first_crate {
        assert!(c > last_boid, "{ranks:?}");
    }
    for (i, r) in report.results.iter().enumerate() {
        assert_eq!(r.rank as usize, i + 1);
        assert!(r.restored && r.restore_differences.is_empty() && r.error.is_none());
    }
    // Every object is visible again.
    assert!(scene.objects.iter().all(|o| o.visible));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["sums_to_baseline"], false);
}

#[test]
fn a_world_left_changed_is_reported() {
    let mut scene = Scene::planted(3, 2, 5_000);
    scene.forget_to_show = Some("crate1".into());
    let report = bisect(
        &mut scene,
        &BisectOptions {
            top: 10,
            ..BisectOptions::default()
        },
    )
    .unwrap();
    assert!(!report.restored);
    let crate1 = report.results.iter().find(|r| r.id == "crate1").unwrap();
    assert!(!crate1.restored);
    assert_eq!(
        crate1.restore_differences,
        vec!["crate1.visible: true → false".to_owned()]
    );
    // Later candidates see the difference too: it is never hidden.
    assert!(report.results.iter().filter(|r| !r.restored).count() >= 1);
}

#[test]
fn a_candidate_that_fails_is_reported_and_the_run_goes_on() {
    let mut scene = Scene::planted(3, 2, 5_000);
    scene.refuse_hide = Some("statue".into());
    let report = bisect(&mut scene, &BisectOptions::default()).unwrap();
    let statue = report.results.iter().find(|r| r.id == "statue").unwrap();
    assert!(statue
        .error
        .as_deref()
        .unwrap()
        .contains("statue cannot be hidden"));
    assert_eq!(statue.delta_triangles, None);
    assert!(statue.restored);
    assert_eq!(
        report.results.last().unwrap().id,
        "statue",
        "no saving measured: ranked last"
    );
    assert_eq!(report.results.len(), 3 + 2 + 1);
}

#[test]
fn an_untimed_engine_ranks_by_triangles() {
    let mut scene = Scene::planted(3, 2, 5_000);
    scene.untimed = true;
    let report = bisect(
        &mut scene,
        &BisectOptions {
            frames: 3,
            warmup_frames: 0,
            top: 2,
        },
    )
    .unwrap();
    assert_eq!(report.baseline.render_ms, None);
    assert_eq!(report.spread.render_ms, None);
    assert_eq!(
        report.render_ms_source, None,
        "the engine says it does not time"
    );
    let ids: Vec<&str> = report.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["statue", "boid0"]);
    assert!(report.results.iter().all(|r| r.delta_render_ms.is_none()));
}

#[test]
fn zero_frames_is_refused() {
    let mut scene = Scene::planted(1, 1, 10);
    let err = bisect(
        &mut scene,
        &BisectOptions {
            frames: 0,
            ..BisectOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(err, BisectError::NoFrames);
    assert_eq!(scene.frames_rendered, 0);
}

#[test]
fn a_bisection_document_that_is_not_an_object_says_what_it_is() {
    for (text, expected) in [
        (
            "[]",
            "not a bisection report: an array, where a JSON object",
        ),
        ("7", "not a bisection report: a number"),
        ("{", "not a bisection report"),
        ("{\"a\": 1}", "no \"schema\" field"),
    ] {
        let err = framewise_census::parse_bisect(text)
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{text:?}: {err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

/// An engine whose render time drifts down over the run (a renderer still warming), with
/// the times CI saw on lavapipe: a light candidate measured after the slow opening baseline
/// has a median past the spread, but its frames overlap the closing baseline's.
struct Drifting {
    hidden: Option<String>,
    times_ms: std::vec::IntoIter<f64>,
}

impl BisectEngine for Drifting {
    fn name(&self) -> String {
        "drifting".into()
    }
    fn candidates(&mut self) -> Result<Vec<Candidate>, EngineError> {
        Ok([("light", 224), ("heavy", 65_024)]
            .map(|(id, triangles)| Candidate {
                id: id.into(),
                name: id.into(),
                site: None,
                triangles,
            })
            .to_vec())
    }
    fn hide(&mut self, id: &str) -> Result<(), EngineError> {
        self.hidden = Some(id.into());
        Ok(())
    }
    fn show(&mut self, _: &str) -> Result<(), EngineError> {
        self.hidden = None;
        Ok(())
    }
    fn render_frame(&mut self) -> Result<FrameCost, EngineError> {
        let triangles = 68_482
            - match self.hidden.as_deref() {
                Some("light") => 224,
                Some("heavy") => 65_024,
                _ => 0,
            };
        Ok(FrameCost {
            draw_calls: None,
            triangles: Some(triangles),
            render_ms: self.times_ms.next(),
        })
    }
    fn snapshot(&mut self) -> Result<WorldSnapshot, EngineError> {
        Ok(WorldSnapshot::default())
    }
}

/// Bisects the two candidates of [`Drifting`] over 3 frames a measure, no warm-up, its
/// frames timed `times_ms` in order (opening baseline, heavy hidden, light hidden, closing
/// baseline).
fn bisect_scripted(times_ms: Vec<f64>) -> BisectReport {
    let mut engine = Drifting {
        hidden: None,
        times_ms: times_ms.into_iter(),
    };
    let options = BisectOptions {
        frames: 3,
        warmup_frames: 0,
        top: 2,
    };
    bisect(&mut engine, &options).expect("the scripted engine never fails")
}

#[test]
fn drift_past_the_spread_is_not_called_a_saving() {
    let times_ms = vec![
        71.3, 63.3, 72.7, // opening baseline (slow: still warming)
        50.7, 46.3, 58.4, // heavy hidden
        48.2, 42.7, 61.7, // light hidden
        51.1, 49.2, 57.2, // closing baseline
    ];
    let report = bisect_scripted(times_ms);
    let spread = report.spread.render_ms.unwrap();
    assert!((spread - (71.3 - 51.1)).abs() < 1e-9, "drift: {spread}");
    for r in &report.results {
        let ms = r.delta_render_ms.unwrap();
        assert!(ms.noisy, "{}: {ms:?}", r.id);
    }
    let light = report.results.iter().find(|r| r.id == "light").unwrap();
    let ms = light.delta_render_ms.unwrap();
    assert!(
        ms.delta.abs() > ms.spread,
        "the median alone is past the spread: {ms:?}"
    );
    // Nothing stands out in time: ranked by triangles saved, which are exact.
    let ids: Vec<&str> = report.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["heavy", "light"]);
    assert!(report
        .results
        .iter()
        .all(|r| !r.delta_triangles.unwrap().noisy));
}

#[test]
fn a_saving_clear_of_both_baselines_stands_out() {
    let times_ms = vec![
        10.0, 10.4, 10.2, // opening baseline
        6.1, 6.0, 6.3, // heavy hidden
        10.1, 9.8, 10.3, // light hidden
        10.3, 10.0, 10.1, // closing baseline
    ];
    let report = bisect_scripted(times_ms);
    let heavy = &report.results[0];
    assert_eq!(heavy.id, "heavy");
    let ms = heavy.delta_render_ms.unwrap();
    assert!(!ms.noisy && ms.delta < -3.9, "{ms:?}");
    assert!(report.results[1].delta_render_ms.unwrap().noisy);
}

/// Every cut of a real report, and every byte of it replaced by each of six characters of
/// JSON's syntax, reads back as the report or as a one-line error: never a panic.
#[test]
fn cut_and_corrupted_reports_are_one_line_errors() {
    let mut scene = Scene::planted(3, 1, 20_000);
    let options = BisectOptions {
        top: 3,
        ..BisectOptions::default()
    };
    let report = bisect(&mut scene, &options).unwrap();
    let text = serde_json::to_string(&report).unwrap();
    parse_bisect(&text).expect("the whole report reads");
    let judge = |doc: &str| match parse_bisect(doc) {
        Ok(_) => true,
        Err(e) => {
            let e = e.to_string();
            assert!(!e.is_empty() && !e.contains('\n'), "{doc:?}: {e}");
            false
        }
    };
    // Only the whole document (with or without its trailing whitespace) reads.
    let whole = text.trim_end().len();
    for cut in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
        assert_eq!(judge(&text[..cut]), cut >= whole, "cut at {cut}");
    }
    for (i, c) in text.char_indices() {
        for b in ["}", "]", "\"", ",", "0", "-"] {
            let mut doc = text.clone();
            doc.replace_range(i..i + c.len_utf8(), b);
            judge(&doc);
        }
    }
}
