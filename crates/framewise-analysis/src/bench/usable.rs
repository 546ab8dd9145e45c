//! Whether a bench result read from a file holds numbers a comparison can use.
//!
//! Every value framewise writes into a result is finite and far inside `±`[`MAX_USABLE`];
//! times, rates and noise floors are never negative. A file that says otherwise was edited
//! or damaged: a p50 of `1e308` ms overflows the mean of its runs to infinity, and the
//! comparison would read "regressed by +inf%". [`first_unusable`] names the first such value
//! so the reader can refuse the file in one line rather than print a verdict on it.

use super::{BenchResult, FrameFigures};
use crate::gate::number_as_written as show;

/// The largest magnitude a bench value may have: far beyond any count or time a game
/// produces (an `i64` counter summed over a million frames is below `1e25`), and small enough
/// that means, variances and ratios of such values stay finite.
pub const MAX_USABLE: f64 = 1e100;

/// Why `v`, named `what`, is not usable (`may_be_negative`: a counter's value), if it is not:
/// `what = v: not a usable value (why)`. The rule for any figure framewise wrote and reads
/// back (a bench result, `profile.json`).
pub fn unusable(what: &str, v: f64, may_be_negative: bool) -> Option<String> {
    let why = if !v.is_finite() || v.abs() > MAX_USABLE {
        format!("a finite number within ±{}", show(MAX_USABLE))
    } else if v < 0.0 && !may_be_negative {
        "a time, rate or count, never negative".to_owned()
    } else {
        return None;
    };
    Some(format!("{what} = {}: not a usable value ({why})", show(v)))
}

fn frame_figures(at: &str, f: &FrameFigures) -> Option<String> {
    [
        ("median_ms", f.median_ms),
        ("p95_ms", f.p95_ms),
        ("p99_ms", f.p99_ms),
    ]
    .into_iter()
    .find_map(|(name, v)| unusable(&format!("{at} frame.{name}"), v?, false))
}

/// Why `result`'s configuration cannot be trusted, if it cannot: a `config_hash` that is not
/// its fingerprint's hash (framewise computes it from the fingerprint when it writes a
/// result; an edited command or CPU model under the old hash would compare as the same
/// configuration), or `settings` that are not its fingerprint's.
fn forged_config(result: &BenchResult) -> Option<String> {
    let hash = result.fingerprint.config_hash();
    if hash != result.config_hash {
        return Some(format!(
            "config_hash {:?} is not the hash of its fingerprint ({hash})",
            result.config_hash
        ));
    }
    (result.settings != result.fingerprint.settings)
        .then(|| "settings that differ from its fingerprint's".to_owned())
}

/// The first value of `result` a comparison cannot use, described in one phrase (`run 2:
/// frame.p50 = 1e308: not a usable value (…)`, `config_hash "…" is not the hash of its
/// fingerprint (…)`); `None` when every value is usable. Only the `counter.` metrics may be
/// negative (a gauge can be).
pub fn first_unusable(result: &BenchResult) -> Option<String> {
    if let Some(why) = forged_config(result) {
        return Some(why);
    }
    for run in &result.runs {
        let at = format!("run {}:", run.run);
        let found = run
            .metrics
            .iter()
            .find_map(|(metric, &v)| {
                unusable(&format!("{at} {metric}"), v, metric.starts_with("counter."))
            })
            .or_else(|| frame_figures(&at, &run.frame))
            .or_else(|| unusable(&format!("{at} measured_s"), run.measured_s, false))
            .or_else(|| unusable(&format!("{at} hitches_per_min"), run.hitches_per_min, false));
        if found.is_some() {
            return found;
        }
    }
    frame_figures("pooled:", &result.pooled.frame)
        .or_else(|| {
            unusable(
                "pooled: hitches_per_min",
                result.pooled.hitches_per_min,
                false,
            )
        })
        .or_else(|| {
            result
                .noise_floor
                .iter()
                .find_map(|(metric, v)| unusable(&format!("noise_floor {metric}"), (*v)?, false))
        })
}

/// Runs of `result` that lost frames, counted from the runs themselves (a result whose tally
/// says fewer, from an edit or another writer, cannot hide one).
pub fn lost_runs(result: &BenchResult) -> u32 {
    let counted = result.runs.iter().filter(|run| run.frames_lost > 0).count();
    u32::try_from(counted)
        .unwrap_or(u32::MAX)
        .max(result.runs_with_lost_frames)
}

/// The bench's `frames` a run of `result` had to record after its warm-up (the larger of the
/// result's settings and its fingerprint's, should an edit have made them differ).
fn frames_asked(result: &BenchResult) -> u64 {
    result
        .settings
        .frames
        .max(result.fingerprint.settings.frames)
}

/// Short runs of `result`: runs that recorded fewer frames after the warm-up than the bench's
/// `frames` (the program stopped early, or its file lost frames), counted from the runs
/// themselves as [`lost_runs`] does.
pub fn short_runs(result: &BenchResult) -> u32 {
    let frames = frames_asked(result);
    let counted = result.runs.iter().filter(|r| r.is_short(frames)).count();
    u32::try_from(counted)
        .unwrap_or(u32::MAX)
        .max(result.short_runs)
}

/// Long runs of `result`: runs that recorded more frames after the warm-up than the bench's
/// `frames` (the program ran past `FRAMEWISE_FRAMES`), counted from the runs themselves as
/// [`short_runs`] does.
pub fn long_runs(result: &BenchResult) -> u32 {
    let frames = frames_asked(result);
    let counted = result.runs.iter().filter(|r| r.is_long(frames)).count();
    u32::try_from(counted)
        .unwrap_or(u32::MAX)
        .max(result.long_runs)
}

fn frames_recorded(result: &BenchResult) -> String {
    let recorded: Vec<String> = result
        .runs
        .iter()
        .map(|r| r.recorded().to_string())
        .collect();
    recorded.join(", ")
}

/// Why the runs of `result` (the `side` of a comparison, or `None` for a result alone) cannot
/// be judged, if they cannot: short runs measured another workload than the one asked (fewer
/// frames: percentiles over another stretch of the program, totals over fewer frames), so a
/// verdict on them would compare unlike things. Lost frames are stated by the comparison
/// over both sides together; long runs by [`long_reason`].
pub fn short_reason(side: Option<&str>, result: &BenchResult) -> Option<String> {
    let short = short_runs(result);
    if short == 0 {
        return None;
    }
    let frames = frames_asked(result);
    let whose = side.map_or_else(String::new, |s| format!("the {s} side: "));
    Some(format!(
        "{whose}{short} of {} run(s) short: frames recorded after the warm-up {} where the bench asks {frames} (the program stopped early, or its capture lost frames)",
        result.runs.len(),
        frames_recorded(result)
    ))
}

/// Why the runs of `result` cannot be judged because they recorded more frames than the
/// bench asks, if any did: like a short run, a long one measured another workload (more
/// frames: percentiles over another stretch of the program, totals over more frames).
pub fn long_reason(side: Option<&str>, result: &BenchResult) -> Option<String> {
    let long = long_runs(result);
    if long == 0 {
        return None;
    }
    let frames = frames_asked(result);
    let whose = side.map_or_else(String::new, |s| format!("the {s} side: "));
    Some(format!(
        "{whose}{long} of {} run(s) long: frames recorded after the warm-up {} where the bench asks {frames} (the program ran more frames than FRAMEWISE_FRAMES asked: another workload)",
        result.runs.len(),
        frames_recorded(result)
    ))
}

/// [`short_reason`] and [`long_reason`]: why the runs' lengths make `result` another
/// workload than the bench's, in phrases (empty: every run recorded the bench's `frames`).
pub fn length_reasons(side: Option<&str>, result: &BenchResult) -> Vec<String> {
    short_reason(side, result)
        .into_iter()
        .chain(long_reason(side, result))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_counters_may_be_negative_and_nothing_may_be_absurd() {
        assert_eq!(unusable("frame.p50", 20.0, false), None);
        assert_eq!(unusable("counter.x.min", -7.0, true), None);
        assert_eq!(
            unusable("run 1: frame.p50", 1e308, false).as_deref(),
            Some("run 1: frame.p50 = 1e308: not a usable value (a finite number within ±1e100)")
        );
        assert_eq!(
            unusable("run 1: frame.p50", -5.0, false).as_deref(),
            Some(
                "run 1: frame.p50 = -5: not a usable value (a time, rate or count, never negative)"
            )
        );
        assert!(unusable("counter.x.sum", -1e101, true).is_some());
        assert!(unusable("x", f64::NAN, true).is_some());
    }
}
