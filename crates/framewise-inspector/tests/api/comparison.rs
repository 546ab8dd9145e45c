//! `/api/comparison`: the gate's verdict, the headline, and the diff's rows ranked by the
//! analysis crate.

use framewise_analysis::significance::{rank, HEADLINE};
use framewise_analysis::{gate, GateConfig};

use super::*;

#[test]
fn the_comparison_leads_with_the_gates_verdict_then_ranked_rows() {
    let (_, normal, slow) = captures();
    let inspector = Inspector::open(normal, Some(slow)).unwrap();
    let app = router(inspector, Token::from_string(TOKEN), None);
    let text = ok_text(&app, "/api/comparison");
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema"], "framewise.inspector.comparison/1");
    let summary_only = LoadOptions::new().with_summary_only(true);
    let a = summarize(&load::open(normal, &summary_only).unwrap());
    let b = summarize(&load::open(slow, &summary_only).unwrap());
    let verdict = gate(&a, &b, &GateConfig::default()).unwrap();
    assert!(text.contains(&format!(
        "\"verdict\":{}",
        serde_json::to_string(&verdict).unwrap()
    )));
    let ranked = rank(&diff(&a, &b), &a, &b);
    assert!(text.contains(&format!(
        "\"rows\":{}",
        serde_json::to_string(&ranked).unwrap()
    )));
    let headline: Vec<&str> = doc["headline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert!(!headline.is_empty());
    assert!(
        headline.iter().all(|m| HEADLINE.contains(m)),
        "{headline:?}"
    );
    let counts = &doc["counts"];
    let total: u64 = ["judged", "not_judged", "one_sided", "unchanged"]
        .iter()
        .map(|k| counts[k].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, ranked.len());
}

#[test]
fn without_a_second_capture_there_is_no_comparison() {
    let (status, json) = get(&app(demo()), "/api/comparison");
    assert_eq!(status, StatusCode::NOT_FOUND, "{json}");
}
