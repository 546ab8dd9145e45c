//! Building `hitch` and `usermark` records from the frames the deriver remembers.

use std::collections::BTreeMap;

use framewise_detect::footprint_key::{footprint_of, KeyRecord};
use framewise_detect::hitch_classify::{
    classify, hitch_key, Baselines, ClassifyThresholds, Confidence as DetectConfidence,
    EntitiesEvidence, FrameEvidence, Guess as DetectGuess, ScopeEvidence, UploadEvidence,
};
use framewise_detect::hitch_rule::Judgement;
use framewise_detect::median::median;
use framewise_format::model::{CounterKind, SymId, Symbol, SymbolKind, SymbolTable};

use super::frames::{counter_kind, FrameSummary, ScopeTotals};
use super::{Deriver, BASELINE_FRAMES};
use crate::record::{
    Confidence, Footprint, Guess, HitchRecord, ScopeTime, UsermarkRecord, Window, WorstFrame,
};
use crate::stats::{median_p95_ms, ms_from_ns};

/// Scopes a hitch record lists.
const LONGEST_SCOPES: usize = 5;
/// Scopes of a frame weighed by the classifier: the longest (a scope's excess over its
/// median is at most its total, so a short scope cannot name a long hitch).
const SCOPE_CANDIDATES: usize = 32;
/// Frames a usermark ranks.
const WORST_FRAMES: usize = 5;

fn footprint(key: &KeyRecord<'_>, ctx: Option<&str>) -> Footprint {
    // Every hitch and usermark is an incident: `footprint_of` answers for them.
    let fp = footprint_of(key, ctx.unwrap_or(""));
    let fp = fp.unwrap_or_else(|| framewise_detect::footprint::footprint(0, ""));
    Footprint {
        v: fp.v,
        id: fp.id,
        key: fp.key,
    }
}

/// Per counter of `frame`: its value minus its median over the recent frames (sum counters),
/// or its change since the frame before (gauges, when that frame is remembered).
fn deltas(deriver: &Deriver, frame: &FrameSummary, symbols: &SymbolTable) -> BTreeMap<String, i64> {
    let medians = deriver
        .ring
        .counter_medians(BASELINE_FRAMES, Some(frame.index), symbols);
    let before = deriver
        .ring
        .newest_first()
        .find(|f| Some(f.index) == frame.index.checked_sub(1));
    frame
        .counters
        .iter()
        .filter_map(|&(id, value)| {
            let baseline = match counter_kind(symbols, id) {
                Some(CounterKind::Gauge) => before?.counter(id)?,
                _ => medians
                    .iter()
                    .find(|(m, _)| *m == id)
                    .map_or(0, |&(_, m)| m),
            };
            Some((symbols.name(id)?.to_owned(), value.saturating_sub(baseline)))
        })
        .collect()
}

fn scope_time(symbols: &SymbolTable, id: SymId, total_ns: u64) -> Option<ScopeTime> {
    let symbol = symbols.get(id)?;
    Some(ScopeTime {
        name: symbol.name.clone(),
        site: site_of(symbol),
        ms: ms_from_ns(total_ns),
    })
}

fn site_of(symbol: &Symbol) -> Option<String> {
    match &symbol.kind {
        SymbolKind::Scope { file, line } if !file.is_empty() => Some(format!("{file}:{line}")),
        _ => None,
    }
}

/// The counter whose name, in snake_case, is `canonical` (`pipelines_created`).
fn counter_named(
    frame: &FrameSummary,
    recent: &[&FrameSummary],
    symbols: &SymbolTable,
    canonical: &str,
) -> Option<SymId> {
    let matches = |id: &SymId| {
        symbols
            .name(*id)
            .is_some_and(|n| snake_case(n) == canonical)
    };
    frame
        .counters
        .iter()
        .map(|&(id, _)| id)
        .chain(
            recent
                .iter()
                .flat_map(|f| f.counters.iter().map(|&(id, _)| id)),
        )
        .find(matches)
}

/// `BytesUploaded` → `bytes_uploaded`; snake_case names are kept as they are.
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// `frame`'s ranked guesses from `framewise-detect`'s classifier, against baselines taken
/// over the recent frames (not `frame` itself).
fn classification(
    deriver: &Deriver,
    frame: &FrameSummary,
    symbols: &SymbolTable,
) -> Vec<DetectGuess> {
    let Some(period_ns) = frame.period_ns else {
        return Vec::new();
    };
    let recent: Vec<&FrameSummary> = deriver
        .ring
        .newest_first()
        .filter(|f| !f.paused && f.period_ns.is_some() && f.index != frame.index)
        .take(BASELINE_FRAMES)
        .collect();
    let mut values: Vec<u64> = Vec::with_capacity(recent.len());
    let mut self_values: Vec<u64> = Vec::with_capacity(recent.len());
    let names: Vec<(ScopeTotals, &str, Option<String>)> = frame
        .scopes
        .iter()
        .take(SCOPE_CANDIDATES)
        .filter_map(|s| {
            let symbol = symbols.get(s.scope)?;
            Some((*s, symbol.name.as_str(), site_of(symbol)))
        })
        .collect();
    let scopes: Vec<ScopeEvidence<'_>> = names
        .iter()
        .map(|(s, name, site)| {
            // Each recent frame's totals of the scope, looked up once for both medians.
            values.clear();
            self_values.clear();
            for f in &recent {
                let (total_ns, self_ns) = f.scope_times_ns(s.scope);
                values.push(total_ns);
                self_values.push(self_ns);
            }
            let median_ns = median(&mut values).unwrap_or(0);
            ScopeEvidence {
                id: s.scope,
                name,
                site: site.as_deref(),
                total_ns: s.total_ns,
                self_ns: s.self_ns,
                median_ns,
                self_median_ns: median(&mut self_values).unwrap_or(0),
            }
        })
        .collect();
    values.clear();
    values.extend(
        recent
            .iter()
            .filter_map(|f| Some(f.period_ns?.saturating_sub(f.work_ns()))),
    );
    let gap_median_ns = median(&mut values).unwrap_or(0);
    values.clear();
    values.extend(recent.iter().filter_map(|f| f.period_ns));
    let period_median_ns = median(&mut values).unwrap_or(0);
    let pipelines = counter_named(frame, &recent, symbols, "pipelines_created");
    let uploads = counter_named(frame, &recent, symbols, "bytes_uploaded");
    let entities = counter_named(frame, &recent, symbols, "entities");
    let before = deriver
        .ring
        .newest_first()
        .find(|f| Some(f.index) == frame.index.checked_sub(1));
    let evidence = FrameEvidence {
        index: frame.index,
        period_ns,
        work_ns: frame.work_ns(),
        gpu_ns: None,
        pipelines_created: pipelines.and_then(|id| frame.counter(id)),
        bytes_uploaded: uploads.map(|id| {
            let mut seen: Vec<i64> = recent.iter().filter_map(|f| f.counter(id)).collect();
            UploadEvidence {
                bytes: frame.counter(id),
                median: median(&mut seen).unwrap_or(0),
            }
        }),
        entities: entities.map(|id| EntitiesEvidence {
            before: before.and_then(|f| f.counter(id)),
            now: frame.counter(id),
        }),
        scopes: &scopes,
    };
    // The excess is over the rolling median the rule judged the frame against, or, with no
    // history then, over the recent frames' median.
    let baseline_ns = frame
        .median_ns
        .filter(|&m| m > 0)
        .unwrap_or(period_median_ns);
    let baselines = Baselines {
        gap_median_ns,
        gpu_median_ns: None,
    };
    classify(
        &evidence,
        period_ns.saturating_sub(baseline_ns),
        &baselines,
        &ClassifyThresholds::default(),
    )
}

/// The guesses as a record writes them.
fn record_guesses(guesses: Vec<DetectGuess>) -> Vec<Guess> {
    guesses
        .into_iter()
        .map(|g| Guess {
            guess: g.guess.name().to_owned(),
            confidence: match g.confidence {
                DetectConfidence::Low => Confidence::Low,
                DetectConfidence::Medium => Confidence::Medium,
                DetectConfidence::High => Confidence::High,
            },
            evidence: g.evidence,
            scope: g.scope,
            site: g.site,
        })
        .collect()
}

/// The hitch record of the newest remembered frame, judged as `judgement` says.
pub(super) fn hitch(
    deriver: &Deriver,
    symbols: &SymbolTable,
    judgement: &Judgement,
) -> HitchRecord {
    let empty = FrameSummary::default();
    let frame = deriver.ring.back(0).unwrap_or(&empty);
    let phase = frame.phase.and_then(|p| symbols.name(p));
    let common = deriver.common(frame.end_ns, phase, Some(frame), symbols);
    let guesses = classification(deriver, frame, symbols);
    let footprint = footprint(
        &KeyRecord::Hitch(hitch_key(phase, &guesses)),
        common.ctx.as_deref(),
    );
    let classification = record_guesses(guesses);
    HitchRecord {
        frame: frame.index,
        frame_ms: ms_from_ns(judgement.period_ns),
        median_ms: (judgement.median_ns > 0).then(|| ms_from_ns(judgement.median_ns)),
        threshold_ms: ms_from_ns(judgement.threshold_ns),
        work_ms: Some(ms_from_ns(frame.work_ns())),
        gpu_ms: None,
        delta: deltas(deriver, frame, symbols),
        scopes: frame
            .scopes
            .iter()
            .take(LONGEST_SCOPES)
            .filter_map(|s| scope_time(symbols, s.scope, s.total_ns))
            .collect(),
        classification,
        dropped_since_last: None,
        footprint,
        common,
    }
}

/// The usermark made at session time `at_ns` over the trailing `window_ns`.
pub(super) fn usermark(
    deriver: &Deriver,
    symbols: &SymbolTable,
    at_ns: u64,
    window_ns: u64,
    note: &str,
) -> UsermarkRecord {
    let since_ns = at_ns.saturating_sub(window_ns);
    let in_window: Vec<&FrameSummary> = deriver
        .ring
        .newest_first()
        .filter(|f| f.end_ns <= at_ns)
        .take_while(|f| f.end_ns >= since_ns)
        .collect();
    let mut judged: Vec<&FrameSummary> = in_window
        .iter()
        .copied()
        .filter(|f| !f.paused && f.period_ns.is_some())
        .collect();
    let mut periods_ns: Vec<u64> = judged.iter().filter_map(|f| f.period_ns).collect();
    let (median_ms, p95_ms) = median_p95_ms(&mut periods_ns);
    judged.sort_by(|a, b| b.period_ns.cmp(&a.period_ns).then(a.index.cmp(&b.index)));
    let worst_frames: Vec<WorstFrame> = judged
        .iter()
        .take(WORST_FRAMES)
        .map(|f| WorstFrame {
            frame: f.index,
            ago_ms: ms_from_ns(at_ns.saturating_sub(f.end_ns)),
            frame_ms: ms_from_ns(f.period_ns.unwrap_or(0)),
            delta: deltas(deriver, f, symbols),
            classification: record_guesses(classification(deriver, f, symbols)),
        })
        .collect();
    let open = deriver.ring.back(0);
    let phase = open.and_then(|f| f.phase).and_then(|p| symbols.name(p));
    let common = deriver.common(at_ns, phase, open, symbols);
    let worst_guess = worst_frames
        .first()
        .and_then(|w| w.classification.first())
        .map(|g| g.guess.as_str());
    let footprint = footprint(
        &KeyRecord::Usermark { phase, worst_guess },
        common.ctx.as_deref(),
    );
    UsermarkRecord {
        frame: open.map_or(0, |f| f.index),
        window: Window {
            ms: Some(ms_from_ns(window_ns)),
            frames: in_window.len() as u64,
            seconds: None,
            median_ms,
            p95_ms,
        },
        worst_frames,
        note: (!note.is_empty()).then(|| note.to_owned()),
        footprint,
        common,
    }
}
