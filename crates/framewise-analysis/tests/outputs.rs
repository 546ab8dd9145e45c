//! What every output carries: the capture's defects (tagged by side for comparisons), the
//! budget it was judged against, and load options built the documented way.

use framewise_analysis::model::{Defect, DefectKind};
use framewise_analysis::stats::FrameClass;
use framewise_analysis::{
    attribute, diff, find_hitches, gate, summarize, summarize_with, AttributeError,
    AttributeTarget, Capture, CaptureBuilder, FrameInput, GateConfig, HitchOptions,
    InconclusiveAttribution, LoadOptions, Side, SourceKind, SummaryOptions,
};

use crate::fixtures::*;

/// A capture with one defect of each of two kinds.
fn damaged(frames: u64) -> Capture {
    let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
    b.defect(Defect::new(DefectKind::TruncatedTail, 1, "cut off").at(1234));
    let mut f = FrameInput::default();
    for i in 0..frames {
        f.clear();
        f.index = i;
        f.cpu_begin_ns = i * 16 * MS;
        f.cpu_end_ns = f.cpu_begin_ns + 10 * MS;
        // Frames 3 and 4 were dropped by the writer.
        f.dropped_frames_before = u64::from(i == 5) * 2;
        b.push_frame(&f);
    }
    b.finish()
}

#[test]
fn hitches_and_attribution_carry_the_capture_defects() {
    let c = damaged(200);
    assert_eq!(c.defects().len(), 2);
    let report = find_hitches(&c, &HitchOptions::default());
    assert_eq!(report.defects, c.defects());
    let a = attribute(&c, AttributeTarget::P95Excess).expect("enough frames");
    assert_eq!(a.defects, c.defects());
    assert!(!a.inconclusive);
    let json = serde_json::to_value(&report).expect("serializes");
    assert_eq!(json["defects"][0]["kind"], "truncated-tail");
    assert_eq!(json["defects"][0]["offset"], 1234);
    assert_eq!(json["defects"][1]["kind"], "dropped-frames");
}

#[test]
fn inconclusive_attribution_is_a_result_with_defects() {
    let c = damaged(10);
    let target = AttributeTarget::P95Excess;
    let err = attribute(&c, target).expect_err("too few frames");
    assert!(err.is_inconclusive());
    assert!(!AttributeError::NoSuchFrame {
        index: 1,
        frames: 1
    }
    .is_inconclusive());
    let i = InconclusiveAttribution::new(&c, target, &err);
    let json = serde_json::to_value(&i).expect("serializes");
    assert_eq!(json["schema"], "framewise.attribution/1");
    assert_eq!(json["target"], "p95-excess");
    assert_eq!(json["inconclusive"], true);
    assert_eq!(json["sums_to_total"], false);
    assert_eq!(json["ranking"], serde_json::json!([]));
    assert!(json.get("frame").is_none());
    assert_eq!(json["reason"], err.to_string());
    assert_eq!(json["defects"].as_array().map(Vec::len), Some(2));
}

#[test]
fn comparisons_tag_each_defect_with_its_side() {
    let clean = summarize(&game(&GameSpec::default()));
    let broken = summarize(&damaged(200));
    let d = diff(&clean, &broken);
    assert_eq!(d.defects.len(), 2);
    assert!(d.defects.iter().all(|s| s.side == Side::Cand));
    let g = gate(&broken, &clean, &GateConfig::default()).expect("gates");
    assert_eq!(g.defects.len(), 2);
    assert!(g.defects.iter().all(|s| s.side == Side::Base));
    // The defect's own fields sit beside `side`.
    let json = serde_json::to_value(&g).expect("serializes");
    let first = &json["defects"][0];
    assert_eq!(first["side"], "base");
    assert_eq!(first["kind"], "truncated-tail");
    assert_eq!(first["message"], "cut off");
    assert_eq!(first["offset"], 1234);
    assert_eq!(first["count"], 1);
    let back: framewise_analysis::GateResult = serde_json::from_value(json).expect("round trips");
    assert_eq!(back.defects, g.defects);
}

#[test]
fn the_configured_budget_is_the_one_reported() {
    let c = game(&GameSpec::default());
    assert!((summarize(&c).budget_ms - 16.666_666).abs() < 1e-3);
    let s = summarize_with(&c, &SummaryOptions::default().with_budget_ns(Some(8 * MS)));
    assert_eq!(s.budget_ms, 8.0);
    // The classifier's thresholds follow it (work of 10 ms and more is jank against an
    // 8 ms budget); no other statistic depends on it.
    let at_60_hz = summarize(&c);
    assert_eq!(at_60_hz.work.classifier.class, Some(FrameClass::Steady));
    assert_eq!(s.work.classifier.class, Some(FrameClass::Throttled));
    let unclassified = |s: &framewise_analysis::Summary| {
        let mut m = s.metrics().values;
        m.retain(|path, _| !path.ends_with("_ratio"));
        m
    };
    assert_eq!(unclassified(&s), unclassified(&at_60_hz));
}

#[test]
fn load_options_build_from_the_default() {
    let o = LoadOptions::new()
        .with_spans(true)
        .with_frame_span(Some("frame".into()))
        .with_summary_only(true);
    assert!(o.with_spans && o.summary_only);
    assert_eq!(o.frame_span.as_deref(), Some("frame"));
    assert_eq!(LoadOptions::new(), LoadOptions::default());
}

#[test]
fn gate_reasons_read_at_fixed_precision() {
    let base = summarize(&game(&GameSpec::default()));
    let slow = summarize(&game(&GameSpec {
        render_ns: 12 * MS,
        ..GameSpec::default()
    }));
    let r = gate(&base, &slow, &GateConfig::default()).expect("gates");
    let avg = r
        .reasons
        .iter()
        .find(|s| s.starts_with("frame.avg: "))
        .expect("frame.avg regressed");
    // `frame.avg: 12.34 ms -> 19.34 ms (+56.7%, tolerance +10.0%)`: two decimals.
    let numbers: Vec<&str> = avg
        .split([' ', '(', ','])
        .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(numbers.len(), 2, "{avg}");
    for n in numbers {
        assert_eq!(n.split('.').nth(1).map(str::len), Some(2), "{avg}");
    }
    assert!(avg.contains(" ms -> "), "{avg}");
    assert!(avg.ends_with("tolerance +10.0%)"), "{avg}");
}
