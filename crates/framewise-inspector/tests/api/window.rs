//! `/api/window`: the analysis crate's window of frames on one axis, served.

use framewise_analysis::window::window;
use framewise_analysis::FrameSource;

use super::*;

#[test]
fn a_window_is_the_analysis_crates_window_of_the_rows() {
    let app = app(demo());
    let capture = with_spans(demo());
    let n = capture.frame_count();
    for (from, to) in [(0, 1), (10, 60), (n - 5, n)] {
        let served = ok_text(&app, &format!("/api/window?from={from}&to={to}"));
        let doc: Value = serde_json::from_str(&served).unwrap();
        assert_eq!(doc["schema"], "framewise.inspector.window/1");
        let mut expected: Value =
            serde_json::to_value(window(&capture, &FrameSource::kept(), from..to).unwrap())
                .unwrap();
        expected["schema"] = "framewise.inspector.window/1".into();
        assert_eq!(doc, expected, "rows {from}..{to}");
        assert_eq!(doc["frames"].as_array().unwrap().len(), to - from);
        assert!(
            !doc["lanes"].as_array().unwrap().is_empty(),
            "rows {from}..{to}"
        );
    }
}

#[test]
fn bad_windows_are_400_with_one_line() {
    let app = app(demo());
    all_bad(
        &app,
        &[
            "/api/window?from=0",
            "/api/window?to=3",
            "/api/window?from=5&to=4",
            "/api/window?from=0&to=9999",
        ],
    );
}
