//! `/api/search`: the analysis crate's search, served, each scope and pass with its longest
//! runs as the analysis crate finds them.

use framewise_analysis::search::{longest_instances, search};
use framewise_analysis::FrameSource;

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
        let expected = search(&capture, text, limit);
        let matches = doc["matches"].as_array().unwrap();
        assert_eq!(matches.len(), expected.len(), "{query}");
        for (got, want) in matches.iter().zip(&expected) {
            let mut found = got.clone();
            let spans = found.as_object_mut().unwrap().remove("spans").unwrap();
            assert_eq!(found, serde_json::to_value(want).unwrap(), "{query}");
            let runs = longest_instances(
                &capture,
                &FrameSource::kept(),
                want.kind,
                &want.name,
                limit,
                usize::MAX,
            )
            .unwrap();
            assert_eq!(
                spans,
                serde_json::to_value(&runs).unwrap(),
                "{query}: {}",
                want.name
            );
            if let Some(runs) = runs {
                assert!(runs.complete && runs.longest.len() == limit.min(runs.total as usize));
            }
        }
    }
    // A scope's runs: longest first, each a span of its frame.
    let runs = &ok(&app, &format!("/api/search?q={name}&limit=5"))["matches"][0]["spans"];
    let longest = runs["longest"].as_array().unwrap();
    assert!(!longest.is_empty() && runs["total"].as_u64().unwrap() >= longest.len() as u64);
    assert!(longest
        .windows(2)
        .all(|w| w[0]["dur_ns"].as_u64() >= w[1]["dur_ns"].as_u64()));
    let none = ok(&app, &format!("/api/search?q={name}&spans=0"));
    assert!(none["matches"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["spans"].is_null()));
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
            "/api/search?q=a&spans=yes",
        ],
    );
}
