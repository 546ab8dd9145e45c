//! Hitches: the rule from [`crate::hitch_rule`] applied to a capture, and each hitch's
//! classification in the closed vocabulary of docs/CONCEPTS.md, ranked, with confidence and
//! evidence.
//!
//! The rule and the classification are framewise-detect's (`hitch_rule`, `hitch_classify`):
//! this module is the adapter that fills the classifier's per-frame evidence from a
//! capture, with capture-wide baselines — a scope's median is taken over every non-paused
//! frame, counting 0 for frames in which it did not run (a scope that did not run spent no
//! time in that frame) — and gives the results their JSON shape.

use serde::{Deserialize, Serialize};

use framewise_detect::footprint::{footprint, Footprint, FOOTPRINT_VERSION};
use framewise_detect::footprint_key::{footprint_of, KeyRecord};
use framewise_detect::hitch_classify::{
    self, EntitiesEvidence, FrameEvidence, ScopeEvidence, UploadEvidence,
};
use framewise_detect::median::{median, median_with_zeros};

pub use framewise_detect::hitch_classify::{ClassifyThresholds, Confidence, HitchKind};

use crate::hitch_rule::{HitchRule, Judgement, WINDOW_FRAMES};
use crate::model::{Capture, CounterId, Defect, Grade};
use crate::stats::NS_PER_MS;

/// One ranked guess.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Guess {
    /// The classification.
    #[serde(with = "kind_name")]
    pub guess: HitchKind,
    /// How sure.
    #[serde(with = "confidence_name")]
    pub confidence: Confidence,
    /// The numbers it rests on, in a sentence.
    pub evidence: String,
    /// The scope, for `long-cpu-scope`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The scope's call site, for `long-cpu-scope`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

impl From<hitch_classify::Guess> for Guess {
    fn from(g: hitch_classify::Guess) -> Self {
        Self {
            guess: g.guess,
            confidence: g.confidence,
            evidence: g.evidence,
            scope: g.scope,
            site: g.site,
        }
    }
}

/// A [`HitchKind`] as its name (`pipeline-compile`); the reference's aliases parse too.
mod kind_name {
    use super::HitchKind;

    pub fn serialize<S: serde::Serializer>(k: &HitchKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.name())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<HitchKind, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        HitchKind::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown hitch kind `{name}`")))
    }
}

/// A [`Confidence`] as `low`, `medium` or `high`.
mod confidence_name {
    use super::Confidence;

    pub fn serialize<S: serde::Serializer>(c: &Confidence, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(c.name())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Confidence, D::Error> {
        let name = <String as serde::Deserialize>::deserialize(d)?;
        Confidence::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown confidence `{name}`")))
    }
}

/// Options for [`find_hitches`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HitchOptions {
    /// Frame budget in ns (`framewise.toml`'s `[budgets] frame_ms`); `None`: the capture's
    /// declared budget, else 60 Hz.
    pub budget_ns: Option<u64>,
    /// Classification thresholds.
    pub thresholds: ClassifyThresholds,
}

/// The rule as applied, stated in the output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleInfo {
    /// The rule in words.
    pub rule: String,
    /// Frame budget, ms.
    pub budget_ms: f64,
    /// Frames in the rolling median.
    pub window_frames: u64,
}

/// One hitch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hitch {
    /// Frame index.
    pub frame: u64,
    /// Phase, if set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Period, ms.
    pub duration_ms: f64,
    /// CPU work, ms.
    pub work_ms: f64,
    /// GPU frame time, ms, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_ms: Option<f64>,
    /// The threshold the period exceeded, ms.
    pub threshold_ms: f64,
    /// The rolling median behind the threshold, ms; absent for a frame judged with no
    /// history yet (the capture's first frames), whose bar is the budget's alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<f64>,
    /// Period minus the baseline (rolling median, or the capture median when there was no
    /// history), ms.
    pub excess_ms: f64,
    /// Ranked guesses, best first.
    pub classification: Vec<Guess>,
}

impl Hitch {
    /// The footprint of this hitch's incident record under the capture's canonical
    /// situation (see [`crate::model::CaptureMeta::canonical_situation`]; `""` for none), by
    /// framewise-detect's rule: `hitch|PHASE|TOP GUESS[|section:SCOPE][|ctx:SITUATION]`.
    pub fn footprint(&self, situation: &str) -> Footprint {
        let key = hitch_classify::hitch_key_of(
            self.phase.as_deref(),
            self.classification
                .iter()
                .map(|g| (g.guess, g.scope.as_deref())),
        );
        // A hitch is always an incident; the fallback is never taken.
        footprint_of(&KeyRecord::Hitch(key), situation)
            .unwrap_or_else(|| footprint(FOOTPRINT_VERSION, "hitch"))
    }
}

/// `hitches --format json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HitchReport {
    /// `framewise.hitches/1`.
    pub schema: String,
    /// The rule as applied.
    pub rule: RuleInfo,
    /// Non-paused frames with a known period that the rule judged.
    pub frames_judged: u64,
    /// Truth grade.
    pub grade: Grade,
    /// Every hitch, in frame order.
    pub hitches: Vec<Hitch>,
    /// What was wrong with the capture judged (lost frames can hide hitches).
    pub defects: Vec<Defect>,
}

impl HitchReport {
    /// No hitch among the frames read, but the capture lost frames (dropped, cut off,
    /// corrupt, never flushed): any of them could have been one, so "no hitch" is not shown.
    pub fn lost_frames_hide_a_hitch(&self) -> bool {
        self.hitches.is_empty()
            && self
                .defects
                .iter()
                .any(|d| crate::diff::loses_frames(d.kind))
    }

    /// `fail` at least one hitch; `inconclusive` no frame judged, or no hitch in a capture
    /// that lost frames; `pass` no hitch.
    pub fn verdict(&self) -> crate::gate::Verdict {
        use crate::gate::Verdict;
        if self.frames_judged == 0 || self.lost_frames_hide_a_hitch() {
            Verdict::Inconclusive
        } else if self.hitches.is_empty() {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

/// `framewise hitches --format json` (without `--append`), as every surface serves it (the
/// CLI, the inspector's `/api/hitches`): the verdict, its exit code, and the report.
#[derive(Clone, Debug, Serialize)]
pub struct HitchesDoc<'a> {
    /// [`HitchReport::verdict`].
    pub verdict: crate::gate::Verdict,
    /// The exit code that verdict gives.
    pub exit_code: i32,
    /// The report.
    #[serde(flatten)]
    pub report: &'a HitchReport,
}

impl<'a> HitchesDoc<'a> {
    /// The document of `report`.
    pub fn new(report: &'a HitchReport) -> Self {
        let verdict = report.verdict();
        Self {
            verdict,
            exit_code: verdict.exit_code(),
            report,
        }
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS
}

/// Applies the hitch rule to every frame: `None` for paused frames and frames whose
/// period is unknown.
pub fn judge_frames(capture: &Capture, budget_ns: u64) -> Vec<Option<Judgement>> {
    let mut rule = HitchRule::new(budget_ns);
    capture
        .frames()
        .rows()
        .map(|row| row.period_ns.and_then(|p| rule.observe(p, row.paused)))
        .collect()
}

/// Capture-wide medians the classification compares a frame against.
pub(crate) struct Baselines {
    /// Per scope id: median per-frame total over non-paused frames (0 where absent).
    pub scope_median_ns: Vec<u64>,
    /// Per scope id: median per-frame self time over the same frames (0 where absent).
    pub scope_self_median_ns: Vec<u64>,
    /// Median of period − work over non-paused frames with a period.
    pub gap_median_ns: u64,
    /// Median GPU frame time over frames that have one.
    pub gpu_median_ns: Option<u64>,
    /// Median period.
    pub period_median_ns: u64,
}

impl Baselines {
    pub(crate) fn of(capture: &Capture) -> Self {
        let f = capture.frames();
        let mut per_scope: Vec<Vec<u64>> = vec![Vec::new(); capture.scopes().len()];
        let mut per_scope_self: Vec<Vec<u64>> = vec![Vec::new(); capture.scopes().len()];
        let mut frames = 0usize;
        let mut gaps = Vec::new();
        let mut gpus = Vec::new();
        let mut periods = Vec::new();
        for (r, row) in f.rows().enumerate() {
            if row.paused {
                continue;
            }
            frames += 1;
            for a in capture.scope_aggs().frame(r) {
                if let Some(v) = per_scope.get_mut(a.id as usize) {
                    v.push(a.total_ns);
                }
                if let Some(v) = per_scope_self.get_mut(a.id as usize) {
                    v.push(a.self_ns);
                }
            }
            if let Some(p) = row.period_ns {
                gaps.push(p.saturating_sub(row.work_ns()));
                periods.push(p);
            }
            if let Some(g) = row.gpu_ns {
                gpus.push(g);
            }
        }
        let medians = |per_scope: &mut Vec<Vec<u64>>| -> Vec<u64> {
            per_scope
                .iter_mut()
                .map(|v| {
                    let zeros = frames.saturating_sub(v.len());
                    median_with_zeros(v, zeros)
                })
                .collect()
        };
        Self {
            scope_median_ns: medians(&mut per_scope),
            scope_self_median_ns: medians(&mut per_scope_self),
            gap_median_ns: median_with_zeros(&mut gaps, 0),
            gpu_median_ns: (!gpus.is_empty()).then(|| median_with_zeros(&mut gpus, 0)),
            period_median_ns: median_with_zeros(&mut periods, 0),
        }
    }
}

fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// The counter whose snake_case name is `canonical`.
fn find_counter(capture: &Capture, canonical: &str) -> Option<CounterId> {
    capture
        .counters()
        .iter()
        .position(|c| snake(&c.name) == canonical)
        .and_then(|p| u32::try_from(p).ok())
}

struct CounterBaselines {
    pipelines: Option<CounterId>,
    uploads: Option<(CounterId, i64)>,
    entities: Option<CounterId>,
}

impl CounterBaselines {
    fn of(capture: &Capture) -> Self {
        let uploads = find_counter(capture, "bytes_uploaded").map(|id| {
            let mut values: Vec<i64> = (0..capture.frame_count())
                .filter(|&r| !capture.frames().paused.get(r).copied().unwrap_or(false))
                .filter_map(|r| capture.counter_in_frame(r, id))
                .map(|e| capture.counter_value(e) as i64)
                .collect();
            (id, median(&mut values).unwrap_or(0))
        });
        Self {
            pipelines: find_counter(capture, "pipelines_created"),
            uploads,
            entities: find_counter(capture, "entities"),
        }
    }
}

fn counter_at(capture: &Capture, row: usize, id: CounterId) -> Option<i64> {
    capture
        .counter_in_frame(row, id)
        .map(|e| capture.counter_value(e) as i64)
}

/// Classifies the frame at `row`, whose excess over its baseline is `excess_ns`: fills the
/// classifier's evidence from the capture and asks framewise-detect. Scopes the capture has
/// no name for are left out of the evidence.
fn classify_row(
    capture: &Capture,
    row: usize,
    excess_ns: u64,
    base: &Baselines,
    counters: &CounterBaselines,
    thresholds: &ClassifyThresholds,
) -> Vec<Guess> {
    let Some(frame) = capture.frames().row(row) else {
        return Vec::new();
    };
    let named: Vec<_> = capture
        .scope_aggs()
        .frame(row)
        .iter()
        .filter_map(|a| Some((a, capture.scopes().get(a.id as usize)?)))
        .map(|(a, info)| (a, info, info.site()))
        .collect();
    let scopes: Vec<ScopeEvidence<'_>> = named
        .iter()
        .map(|(a, info, site)| ScopeEvidence {
            id: a.id,
            name: &info.name,
            site: site.as_deref(),
            total_ns: a.total_ns,
            self_ns: a.self_ns,
            median_ns: base
                .scope_median_ns
                .get(a.id as usize)
                .copied()
                .unwrap_or(0),
            self_median_ns: base
                .scope_self_median_ns
                .get(a.id as usize)
                .copied()
                .unwrap_or(0),
        })
        .collect();
    let evidence = FrameEvidence {
        index: frame.index,
        period_ns: frame.period_ns.unwrap_or(0),
        work_ns: frame.work_ns(),
        gpu_ns: frame.gpu_ns,
        pipelines_created: counters
            .pipelines
            .and_then(|id| counter_at(capture, row, id)),
        bytes_uploaded: counters.uploads.map(|(id, median)| UploadEvidence {
            bytes: counter_at(capture, row, id),
            median,
        }),
        entities: counters.entities.map(|id| EntitiesEvidence {
            before: row.checked_sub(1).and_then(|r| counter_at(capture, r, id)),
            now: counter_at(capture, row, id),
        }),
        scopes: &scopes,
    };
    let baselines = hitch_classify::Baselines {
        gap_median_ns: base.gap_median_ns,
        gpu_median_ns: base.gpu_median_ns,
    };
    hitch_classify::classify(&evidence, excess_ns, &baselines, thresholds)
        .into_iter()
        .map(Guess::from)
        .collect()
}

/// Finds and classifies every hitch in a capture.
pub fn find_hitches(capture: &Capture, options: &HitchOptions) -> HitchReport {
    let budget_ns = options
        .budget_ns
        .unwrap_or_else(|| capture.frame_budget_ns());
    let judgements = judge_frames(capture, budget_ns);
    let base = Baselines::of(capture);
    let counters = CounterBaselines::of(capture);
    let mut hitches = Vec::new();
    let mut judged = 0u64;
    for (row, j) in judgements.iter().enumerate() {
        let Some(j) = j else { continue };
        judged += 1;
        if !j.hitch {
            continue;
        }
        let Some(frame) = capture.frames().row(row) else {
            continue;
        };
        let excess_ns = hitch_classify::excess_ns(j, base.period_median_ns);
        hitches.push(Hitch {
            frame: frame.index,
            phase: frame
                .phase
                .and_then(|p| capture.phases().get(p as usize).cloned()),
            duration_ms: ms(j.period_ns),
            work_ms: ms(frame.work_ns()),
            gpu_ms: frame.gpu_ns.map(ms),
            threshold_ms: ms(j.threshold_ns),
            median_ms: (j.median_ns > 0).then(|| ms(j.median_ns)),
            excess_ms: ms(excess_ns),
            classification: classify_row(
                capture,
                row,
                excess_ns,
                &base,
                &counters,
                &options.thresholds,
            ),
        });
    }
    HitchReport {
        schema: "framewise.hitches/1".into(),
        rule: RuleInfo {
            rule: "a non-paused frame whose period exceeds max(2 x rolling median, 1.5 x frame budget); the median is over the previous 600 non-paused periods".into(),
            budget_ms: ms(budget_ns),
            window_frames: WINDOW_FRAMES as u64,
        },
        frames_judged: judged,
        grade: capture.grade(),
        hitches,
        defects: capture.defects().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases() {
        assert_eq!(
            HitchKind::parse("shader-compile"),
            Some(HitchKind::PipelineCompile)
        );
        assert_eq!(
            HitchKind::parse("texture-upload"),
            Some(HitchKind::ResourceUpload)
        );
        assert_eq!(
            HitchKind::parse("long-render"),
            Some(HitchKind::LongCpuScope)
        );
        assert_eq!(
            HitchKind::parse("long-script"),
            Some(HitchKind::LongCpuScope)
        );
        assert_eq!(
            HitchKind::parse("gc-or-upload-by-elimination"),
            Some(HitchKind::UnknownByElimination)
        );
        assert_eq!(HitchKind::parse("gc"), None);
        for k in HitchKind::ALL {
            assert_eq!(HitchKind::parse(k.name()), Some(k));
            let g = Guess {
                guess: k,
                confidence: Confidence::Medium,
                evidence: String::new(),
                scope: None,
                site: None,
            };
            let json = serde_json::to_value(&g).unwrap_or_default();
            assert_eq!(json["guess"], k.name());
            assert_eq!(json["confidence"], "medium");
            let back: Option<Guess> = serde_json::from_value(json).ok();
            assert_eq!(back, Some(g));
        }
    }

    #[test]
    fn upload_baseline_of_extreme_counter_values_does_not_overflow() {
        use crate::build::{CaptureBuilder, FrameInput};
        use crate::model::{CounterKind, Numeric, SourceKind};
        let mut b = CaptureBuilder::new(SourceKind::Synthetic, false);
        let id = b.counter("bytes_uploaded", CounterKind::Sum, Numeric::Integer);
        let mut f = FrameInput::default();
        for (index, raw) in [(0u64, i64::MIN), (1, i64::MAX)] {
            f.clear();
            f.index = index;
            f.cpu_begin_ns = index * 10;
            f.cpu_end_ns = index * 10 + 5;
            f.counters.push((id, raw));
            b.push_frame(&f);
        }
        let capture = b.finish();
        let baselines = CounterBaselines::of(&capture);
        assert_eq!(baselines.uploads, Some((id, -1)));
    }

    #[test]
    fn footprints_name_the_verdict_and_the_scope() {
        let guess = |kind, scope: Option<&str>| Guess {
            guess: kind,
            confidence: Confidence::High,
            evidence: String::new(),
            scope: scope.map(str::to_owned),
            site: None,
        };
        let mut hitch = Hitch {
            frame: 7,
            phase: Some("play".into()),
            duration_ms: 40.0,
            work_ms: 39.0,
            gpu_ms: None,
            threshold_ms: 33.0,
            median_ms: Some(16.0),
            excess_ms: 24.0,
            classification: vec![
                guess(HitchKind::PipelineCompile, None),
                guess(HitchKind::LongCpuScope, Some("render")),
            ],
        };
        let fp = hitch.footprint("squad=solo,view=top");
        assert_eq!(
            fp.key,
            "hitch|play|pipeline-compile|section:render|ctx:squad=solo,view=top"
        );
        // Computed independently (FNV-1a over UTF-16 units, in Node).
        assert_eq!(fp.id, "bc0cebbd");
        hitch.phase = None;
        hitch.classification.clear();
        assert_eq!(hitch.footprint("").key, "hitch|?|unclassified");
    }

    #[test]
    fn snake_case() {
        assert_eq!(snake("pipelinesCreated"), "pipelines_created");
        assert_eq!(snake("bytes_uploaded"), "bytes_uploaded");
    }
}
