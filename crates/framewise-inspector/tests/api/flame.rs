//! `/api/flame` and `/api/flame-diff`: the analysis crate's fold of the same rows, served.

use framewise_analysis::flame::{self, FlameOptions};
use framewise_analysis::stats::Num;
use framewise_analysis::FrameSource;

use super::*;

/// The fold of `rows` (merged, or one thread) as framewise-analysis makes it from the
/// capture loaded with every span.
fn folded(capture: &Capture, rows: std::ops::Range<usize>, thread: Option<&str>) -> Value {
    let mut options = FlameOptions::rows(rows);
    if let Some(t) = thread {
        options = options.with_thread(t);
    }
    serde_json::to_value(flame::fold(capture, &FrameSource::kept(), &options).unwrap()).unwrap()
}

#[test]
fn the_flame_graph_is_the_analysis_crates_fold_of_the_rows() {
    let app = app(demo());
    let capture = with_spans(demo());
    let n = capture.frame_count();
    let thread = capture.threads()[0].clone();
    for (query, rows, one) in [
        (String::new(), 0..n, None),
        ("?from=3&to=4".to_owned(), 3..4, None),
        (
            format!("?from=10&to=90&thread={thread}"),
            10..90,
            Some(thread.as_str()),
        ),
    ] {
        let mut doc = ok(&app, &format!("/api/flame{query}"));
        assert_eq!(doc["schema"], "framewise.inspector.flame/1");
        let names = doc.as_object_mut().unwrap().remove("names").unwrap();
        doc.as_object_mut().unwrap().remove("schema");
        // Every scope that ran has its spans in a capture of the recorder's.
        let recorded = doc.as_object_mut().unwrap().remove("spans_recorded");
        assert_eq!(recorded, Some(Value::Bool(true)), "{query}");
        assert_eq!(
            doc.as_object_mut().unwrap().remove("reason"),
            Some(Value::Null)
        );
        assert_eq!(doc, folded(&capture, rows.clone(), one), "{query}");
        assert!(
            doc["total_ns"].as_u64().unwrap() > 0,
            "{query}: no time folded"
        );
        // By name, over every frame, the fold is the per-frame totals the load aggregated.
        if rows == (0..n) {
            for t in names.as_array().unwrap() {
                let name = t["name"].as_str().unwrap();
                let series = view::series(&capture, SeriesKind::Scope, name).unwrap();
                let sum: i64 = series
                    .iter()
                    .flatten()
                    .map(|v| match v {
                        Num::Int(ns) => *ns,
                        Num::Float(ns) => *ns as i64,
                    })
                    .sum();
                assert_eq!(t["total_ns"].as_i64().unwrap(), sum, "scope {name}");
            }
        }
    }
}

#[test]
fn the_differential_flame_graph_is_the_analysis_crates_diff() {
    let app = app(demo());
    let capture = with_spans(demo());
    let doc = ok(&app, "/api/flame-diff?a_from=0&a_to=60&b_from=60&b_to=240");
    assert_eq!(doc["schema"], "framewise.inspector.flame-diff/1");
    let d = flame::diff(
        &flame::fold(&capture, &FrameSource::kept(), &FlameOptions::rows(0..60)).unwrap(),
        &flame::fold(&capture, &FrameSource::kept(), &FlameOptions::rows(60..240)).unwrap(),
    );
    // Compared as text: the same serializer wrote both (a float read back from JSON may
    // differ in its last bit).
    let served = ok_text(&app, "/api/flame-diff?a_from=0&a_to=60&b_from=60&b_to=240");
    let roots = format!("\"roots\":{}", serde_json::to_string(&d.roots).unwrap());
    assert!(served.contains(&roots), "{served}");
    assert_eq!(
        (doc["a"]["frames"].as_u64(), doc["b"]["frames"].as_u64()),
        (Some(60), Some(180))
    );
}

#[test]
fn bad_flame_selections_are_400_with_one_line() {
    let app = app(demo());
    all_bad(
        &app,
        &[
            "/api/flame?from=5&to=4",
            "/api/flame?to=9999",
            "/api/flame?from=x",
            "/api/flame?thread=nobody",
            "/api/flame-diff?a_from=0&a_to=1&b_from=2",
            // A side over no frame has no mean per frame: not 0.
            "/api/flame-diff?a_from=0&a_to=0&b_from=1&b_to=2",
            "/api/flame-diff?a_from=0&a_to=5&b_from=7&b_to=7",
            // A parameter given twice: which was meant is not guessed.
            "/api/flame?from=0&from=1",
            "/api/frame?row=1&row=abc",
            "/api/frame?row=abc&row=1",
            "/api/frame?row=1&row=1",
        ],
    );
}
