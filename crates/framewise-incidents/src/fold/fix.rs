//! Fix records (`fixes.jsonl`): what was wrong, what changed, and the measured before and
//! after — two windows of the ledger, by build or by time range, each with its summary and a
//! p95 series. Nobody types a number into a fix; the fold measures both sides.
//!
//! A build's window measures that build's records only, from its first evidence to its last
//! (another build that ran in between does not count). By default the after window is the
//! latest build — the build of the newest evidence, the one that ran last — and the before
//! window the build that ran before the after window: for a build, the build of the newest
//! evidence of another build before that build's last evidence; for a range, the build of
//! the newest evidence before the range. A fix whose window holds no evidence, or whose
//! windows are the same or share time or records, is refused: it would be recorded as
//! measured while it measured nothing, or the same thing on both sides.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::history::build_windows;
use super::window::{summarize_build, summarize_window, WindowSummary};
use super::{is_evidence, unix_ms_from_iso, Ledger, Stamped};
use crate::time::iso_from_unix_ms;
use crate::Error;

/// Slices a fix window's p95 series has.
pub const FIX_SERIES_SLICES: usize = 24;

/// The `type` of a fix line: always `fix`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FixType {
    /// A fix.
    #[default]
    Fix,
}

/// One line of `fixes.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FixRecord {
    /// Always `fix`.
    #[serde(rename = "type")]
    pub record_type: FixType,
    /// When the fix was recorded, ISO 8601 UTC.
    pub at: String,
    /// What was fixed, in a line.
    pub title: String,
    /// The issue it addresses (a tracker reference or a sentence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
    /// What was done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solution: Option<String>,
    /// The commit that made the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The files it changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The footprint ids it addresses: the issues catalogue lists the fix under each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub footprints: Vec<String>,
    /// The measured window before the change.
    pub before: FixWindow,
    /// The measured window after it.
    pub after: FixWindow,
}

/// A fix's measured window: its summary and its p95 series.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FixWindow {
    /// The window's summary (`build` names the build when the window is one).
    #[serde(flatten)]
    pub summary: WindowSummary,
    /// The frame p95 (ms) of [`FIX_SERIES_SLICES`] equal slices of the window, oldest
    /// first; `null` where a slice had no heartbeat (a gap, never a zero).
    pub series: Vec<Option<f64>>,
}

/// A window named on the command line: a build, or `ISO..ISO`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowSpec {
    /// The build's records, from its first evidence to its last.
    Build(String),
    /// An explicit range, ms since the epoch, both inclusive.
    Range {
        /// Start.
        from_ms: i64,
        /// End.
        to_ms: i64,
    },
}

/// Why a fix cannot be measured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FixError {
    /// A range that does not parse or is empty.
    #[error("bad {label} window {spec:?}: want <ISO>..<ISO> with the end after the start, or a build name")]
    BadWindow {
        /// `before` or `after`.
        label: &'static str,
        /// What was given.
        spec: String,
    },
    /// A build with no evidence in the ledger.
    #[error("no evidence for {label} window {build:?}: builds with evidence: {}", list(.builds))]
    NoEvidence {
        /// `before` or `after`.
        label: &'static str,
        /// The build asked for.
        build: String,
        /// The builds the ledger has evidence for.
        builds: Vec<String>,
    },
    /// No default for a window left out: the after window's is the latest build (one build
    /// with evidence needed), the before window's the build that ran before it (two needed).
    #[error("a fix's default windows are the ledger's last two builds with evidence (after: the build of the newest evidence, before: the build that ran before it) and it has {}: {}; pass --before and --after (a build name, or <ISO>..<ISO>)", .builds.len(), list(.builds))]
    NotEnoughBuilds {
        /// The builds the ledger has evidence for.
        builds: Vec<String>,
    },
    /// The before window was left out and no build ran before the after window given.
    #[error("the before window defaults to the build that ran before the after window ({after}), and no build with evidence did; pass --before (a build name, or <ISO>..<ISO>)")]
    NoBuildBefore {
        /// The after window, described.
        after: String,
    },
    /// A window with no heartbeat, hitch or jitter in it: the fix would measure nothing.
    #[error("the {label} window {window} holds no evidence (no heartbeat, hitch or jitter): a fix measured against nothing is not recorded")]
    EmptyWindow {
        /// `before` or `after`.
        label: &'static str,
        /// The window, described.
        window: String,
    },
    /// The before and after windows are one window.
    #[error("the before and after windows are the same ({window}): a fix compares two windows")]
    SameWindows {
        /// The window, described.
        window: String,
    },
    /// The before and after windows share time (two ranges) or records.
    #[error("the before window {before} and the after window {after} overlap ({why}): a fix compares two windows apart")]
    Overlapping {
        /// The before window, described.
        before: String,
        /// The after window, described.
        after: String,
        /// What they share.
        why: String,
    },
}

/// A window spec as messages name it: `build "b42"`, or `ISO..ISO`.
fn describe(spec: &WindowSpec) -> String {
    match spec {
        WindowSpec::Build(name) => format!("build {name:?}"),
        WindowSpec::Range { from_ms, to_ms } => {
            format!(
                "{}..{}",
                iso_from_unix_ms(*from_ms),
                iso_from_unix_ms(*to_ms)
            )
        }
    }
}

fn list(builds: &[String]) -> String {
    if builds.is_empty() {
        "none".to_owned()
    } else {
        builds.join(", ")
    }
}

/// Reads a window spec: `ISO..ISO` (anything with `..`) or a build name.
pub fn parse_window_spec(spec: &str, label: &'static str) -> Result<WindowSpec, FixError> {
    let bad = || FixError::BadWindow {
        label,
        spec: spec.to_owned(),
    };
    if let Some((a, b)) = spec.split_once("..") {
        let (from_ms, to_ms) = (
            unix_ms_from_iso(a).ok_or_else(bad)?,
            unix_ms_from_iso(b).ok_or_else(bad)?,
        );
        if to_ms <= from_ms {
            return Err(bad());
        }
        return Ok(WindowSpec::Range { from_ms, to_ms });
    }
    if spec.trim().is_empty() {
        return Err(bad());
    }
    Ok(WindowSpec::Build(spec.to_owned()))
}

/// The latest build (the build of the newest evidence) and the build that ran before it,
/// that one first: the default before/after of a fix, because a fix ships as a build.
pub fn latest_builds(ledger: &Ledger<'_>) -> Vec<String> {
    let windows = build_windows(ledger);
    let skip = windows.len().saturating_sub(2);
    windows
        .into_iter()
        .skip(skip)
        .map(|(b, _, _)| b.to_owned())
        .collect()
}

/// What a fix says about itself; [`build_fix`] measures the rest.
#[derive(Clone, Debug, Default)]
pub struct FixRequest {
    /// `title`.
    pub title: String,
    /// `issue`.
    pub issue: Option<String>,
    /// `solution`.
    pub solution: Option<String>,
    /// `commit`.
    pub commit: Option<String>,
    /// `files`.
    pub files: Vec<String>,
    /// `footprints`.
    pub footprints: Vec<String>,
    /// The before window (default: the build that ran before the after window).
    pub before: Option<WindowSpec>,
    /// The after window (default: the latest build, the build of the newest evidence).
    pub after: Option<WindowSpec>,
}

/// Measures a fix's windows in `ledger` and makes its record, stamped `at`. Refused: a
/// window left out that has no default, a build with no evidence, a window that holds no
/// evidence, and before and after windows that are the same, are ranges sharing time, or
/// would measure a record on both sides.
pub fn build_fix(
    ledger: &Ledger<'_>,
    request: FixRequest,
    at: String,
) -> Result<FixRecord, FixError> {
    let windows = build_windows(ledger);
    let names = || -> Vec<String> { windows.iter().map(|(b, _, _)| (*b).to_owned()).collect() };
    let after_given = request.after.is_some();
    let after = match request.after {
        Some(after) => after,
        None => {
            let (latest, _, _) = windows
                .last()
                .ok_or_else(|| FixError::NotEnoughBuilds { builds: names() })?;
            WindowSpec::Build((*latest).to_owned())
        }
    };
    let before = match request.before {
        Some(before) => before,
        None => {
            let previous = match &after {
                WindowSpec::Build(name) => {
                    // Back from the build's last evidence, past its own records: the newest
                    // evidence of another build (for the latest build, the build before it in
                    // `build_windows`' order).
                    let all = ledger.all();
                    let last = all
                        .iter()
                        .rposition(|s| {
                            is_evidence(s.record)
                                && s.record.common().build.as_deref() == Some(name.as_str())
                        })
                        .ok_or_else(|| FixError::NoEvidence {
                            label: "after",
                            build: name.clone(),
                            builds: names(),
                        })?;
                    all.get(..last)
                        .unwrap_or_default()
                        .iter()
                        .rev()
                        .filter(|s| is_evidence(s.record))
                        .filter_map(|s| s.record.common().build.as_deref())
                        .find(|b| *b != name.as_str())
                }
                WindowSpec::Range { from_ms, .. } => ledger
                    .between(i64::MIN, from_ms.saturating_sub(1))
                    .iter()
                    .rev()
                    .filter(|s| is_evidence(s.record))
                    .find_map(|s| s.record.common().build.as_deref()),
            };
            match previous {
                Some(previous) => WindowSpec::Build(previous.to_owned()),
                None if after_given => {
                    return Err(FixError::NoBuildBefore {
                        after: describe(&after),
                    })
                }
                None => return Err(FixError::NotEnoughBuilds { builds: names() }),
            }
        }
    };
    if before == after {
        return Err(FixError::SameWindows {
            window: describe(&before),
        });
    }
    let overlapping = |why: String| FixError::Overlapping {
        before: describe(&before),
        after: describe(&after),
        why,
    };
    if let (
        WindowSpec::Range {
            from_ms: b0,
            to_ms: b1,
        },
        WindowSpec::Range {
            from_ms: a0,
            to_ms: a1,
        },
    ) = (&before, &after)
    {
        // Inclusive ranges that only touch (`X..Y` and `Y..Z`) share an instant, not time;
        // a record at that instant is caught below.
        if b0 < a1 && a0 < b1 {
            return Err(overlapping("their ranges share time".to_owned()));
        }
    }
    let measured_before = measure(ledger, &windows, &before, "before")?;
    let measured_after = measure(ledger, &windows, &after, "after")?;
    for (label, spec, w) in [
        ("before", &before, &measured_before),
        ("after", &after, &measured_after),
    ] {
        let s = &w.summary;
        if s.beats == 0 && s.hitches == 0 && s.jitters.unwrap_or(0) == 0 {
            return Err(FixError::EmptyWindow {
                label,
                window: describe(spec),
            });
        }
    }
    let shared = shared_evidence(ledger, &windows, &before, &after);
    if shared > 0 {
        return Err(overlapping(format!(
            "{shared} record{} would be measured on both sides",
            if shared == 1 { "" } else { "s" }
        )));
    }
    Ok(FixRecord {
        record_type: FixType::Fix,
        at,
        title: request.title,
        issue: request.issue,
        solution: request.solution,
        commit: request.commit,
        files: request.files,
        footprints: request.footprints,
        before: measured_before,
        after: measured_after,
    })
}

/// What a window measures: its build (`None`: every record) and its span, ms; `None` for a
/// build with no evidence.
fn extent<'s>(
    windows: &[(&str, i64, i64)],
    spec: &'s WindowSpec,
) -> Option<(Option<&'s str>, i64, i64)> {
    match spec {
        WindowSpec::Range { from_ms, to_ms } => Some((None, *from_ms, *to_ms)),
        WindowSpec::Build(name) => windows
            .iter()
            .find(|(b, _, _)| b == name)
            .map(|&(_, from, to)| (Some(name.as_str()), from, to)),
    }
}

/// How many evidence records both windows would measure.
fn shared_evidence(
    ledger: &Ledger<'_>,
    windows: &[(&str, i64, i64)],
    before: &WindowSpec,
    after: &WindowSpec,
) -> usize {
    let (Some((b_build, b0, b1)), Some((a_build, a0, a1))) =
        (extent(windows, before), extent(windows, after))
    else {
        return 0;
    };
    let of = |build: Option<&str>, s: &Stamped<'_>| {
        build.is_none() || s.record.common().build.as_deref() == build
    };
    // The records in both spans (`between` is empty when they do not meet), counted when both
    // windows take them: evidence, and of each window's build when it is a build's.
    ledger
        .between(b0.max(a0), b1.min(a1))
        .iter()
        .filter(|s| is_evidence(s.record) && of(b_build, s) && of(a_build, s))
        .count()
}

/// The window a spec names, measured: a range summarises every record in it, a build only
/// its own records (the series too).
fn measure(
    ledger: &Ledger<'_>,
    windows: &[(&str, i64, i64)],
    spec: &WindowSpec,
    label: &'static str,
) -> Result<FixWindow, FixError> {
    let (build, from_ms, to_ms) = match spec {
        WindowSpec::Range { from_ms, to_ms } => (None, *from_ms, *to_ms),
        WindowSpec::Build(name) => {
            let Some(&(_, from, to)) = windows.iter().find(|(b, _, _)| b == name) else {
                return Err(FixError::NoEvidence {
                    label,
                    build: name.clone(),
                    builds: windows.iter().map(|(b, _, _)| (*b).to_owned()).collect(),
                });
            };
            (Some(name.as_str()), from, to)
        }
    };
    let summarize = |from: i64, to: i64| match build {
        Some(name) => summarize_build(ledger, name, from, to),
        None => summarize_window(ledger, from, to),
    };
    let summary = summarize(from_ms, to_ms);
    let width = ((to_ms - from_ms).max(1) as f64) / FIX_SERIES_SLICES as f64;
    let series = (0..FIX_SERIES_SLICES)
        .map(|i| {
            let b0 = from_ms + (i as f64 * width) as i64;
            let b1 = if i + 1 == FIX_SERIES_SLICES {
                to_ms
            } else {
                from_ms + ((i + 1) as f64 * width) as i64 - 1
            };
            summarize(b0, b1).p95_ms
        })
        .collect();
    Ok(FixWindow { summary, series })
}

impl FixRecord {
    /// Whether `other` records this same fix again: the same title (blanks around ignored),
    /// the same footprints (in any order, any case), and the same windows on each side (the
    /// same build, or the same range). `framewise fix` refuses such a repeat: the ledger is
    /// append-only, so a fix recorded twice is listed twice for good.
    pub fn repeats(&self, other: &FixRecord) -> bool {
        let footprints = |f: &FixRecord| {
            let mut ids: Vec<String> = f
                .footprints
                .iter()
                .map(|id| id.to_ascii_lowercase())
                .collect();
            ids.sort();
            ids.dedup();
            ids
        };
        self.title.trim() == other.title.trim()
            && footprints(self) == footprints(other)
            && same_window(&self.before, &other.before)
            && same_window(&self.after, &other.after)
    }
}

/// Whether two measured windows are one: the same build, or the same range.
fn same_window(a: &FixWindow, b: &FixWindow) -> bool {
    let (a, b) = (&a.summary, &b.summary);
    match (&a.build, &b.build) {
        (Some(x), Some(y)) => x == y,
        (None, None) => {
            // By instant, so `…T10:00Z` and `…T10:00:00.000Z` are one; as written otherwise.
            let instant = |t: &str| unix_ms_from_iso(t).ok_or_else(|| t.to_owned());
            instant(&a.from) == instant(&b.from) && instant(&a.to) == instant(&b.to)
        }
        _ => false,
    }
}

/// What [`read_fixes`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FixesRead {
    /// The fixes, in file order.
    pub fixes: Vec<FixRecord>,
    /// Lines that were not a fix record (skipped).
    pub malformed: u64,
    /// Whether the file ended in a line without its newline (skipped).
    pub torn_last_line: bool,
}

/// Reads `fixes.jsonl`; a file that does not exist holds no fix.
pub fn read_fixes(path: &Path) -> Result<FixesRead, Error> {
    crate::regular_or_missing(path)?;
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FixesRead::default()),
        Err(source) => {
            return Err(Error::Io {
                path: path.to_owned(),
                source,
            })
        }
    };
    let mut read = FixesRead::default();
    let lines = crate::read::whole_lines(&bytes);
    read.torn_last_line = lines.torn;
    for line in lines.lines {
        match serde_json::from_slice::<FixRecord>(crate::read::without_bom(line)) {
            Ok(fix) => read.fixes.push(fix),
            Err(_) => read.malformed += 1,
        }
    }
    Ok(read)
}
