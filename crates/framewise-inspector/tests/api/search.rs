//! `/api/search`: the analysis crate's search, served.

use framewise_analysis::search::search;

use super::*;

#[test]
fn search_is_the_analysis_crates_search() {
    let app = app(demo());
    let capture = with_spans(demo());
    let name = capture.scopes()[0].name.clone();
    let part = name[..name.len().min(4)].to_uppercase();
    for (query, text, limit) in [
        (format!("q={part}"), part.as_str(), 10),
        (format!("q={name}&limit=3"), name.as_str(), 3),
        ("q=no-such-name".to_owned(), "no-such-name", 10),
    ] {
        let served = ok_text(&app, &format!("/api/search?{query}"));
        let doc: Value = serde_json::from_str(&served).unwrap();
        assert_eq!(doc["schema"], "framewise.inspector.search/1");
        assert_eq!(doc["limit"], limit);
        let expected = serde_json::to_string(&search(&capture, text, limit)).unwrap();
        assert!(
            served.contains(&format!("\"matches\":{expected}")),
            "{query}: {served}"
        );
    }
    let found = ok(&app, &format!("/api/search?q={name}"));
    assert_eq!(found["matches"][0]["name"], name.as_str());
}

#[test]
fn bad_searches_are_400_with_one_line() {
    let app = app(demo());
    all_bad(
        &app,
        &[
            "/api/search",
            "/api/search?q=a&limit=0",
            "/api/search?q=a&limit=x",
        ],
    );
}
