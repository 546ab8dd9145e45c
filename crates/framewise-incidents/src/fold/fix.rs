//! Fix records (`fixes.jsonl`): what was wrong, what changed, and the measured before and
//! after — two windows of the ledger, by build (default: the previous build with evidence
//! and the latest) or by time range, each with its summary and a p95 series. Nobody types
//! a number into a fix; the fold measures both sides.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::history::build_windows;
use super::window::{summarize_window, WindowSummary};
use super::{unix_ms_from_iso, Ledger};
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
    /// From the build's first evidence to its last.
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
    /// No default for a window left out: the before window's is the build before the latest
    /// (two builds with evidence needed), the after window's the latest (one needed).
    #[error("a fix's default windows are the ledger's last two builds with evidence (before: the previous, after: the latest) and it has {}: {}; pass --before and --after (a build name, or <ISO>..<ISO>)", .builds.len(), list(.builds))]
    NotEnoughBuilds {
        /// The builds the ledger has evidence for.
        builds: Vec<String>,
    },
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

/// The newest build with evidence and the one before it, oldest first: the default
/// before/after of a fix, because a fix ships as a build.
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
    /// The before window (default: the previous build with evidence).
    pub before: Option<WindowSpec>,
    /// The after window (default: the latest build with evidence).
    pub after: Option<WindowSpec>,
}

/// Measures a fix's windows in `ledger` and makes its record, stamped `at`.
pub fn build_fix(
    ledger: &Ledger<'_>,
    request: FixRequest,
    at: String,
) -> Result<FixRecord, FixError> {
    // Each side left out defaults on its own: the after window to the latest build (one build
    // needed), the before window to the one before it (two needed).
    let (before, after) = match (request.before, request.after) {
        (Some(b), Some(a)) => (b, a),
        (Some(b), None) => {
            let pair = latest_builds(ledger);
            let latest = pair
                .last()
                .cloned()
                .ok_or(FixError::NotEnoughBuilds { builds: pair })?;
            (b, WindowSpec::Build(latest))
        }
        (b, a) => {
            let pair = latest_builds(ledger);
            let [previous, latest] = <[String; 2]>::try_from(pair.clone())
                .map_err(|_| FixError::NotEnoughBuilds { builds: pair })?;
            (
                b.unwrap_or(WindowSpec::Build(previous)),
                a.unwrap_or(WindowSpec::Build(latest)),
            )
        }
    };
    Ok(FixRecord {
        record_type: FixType::Fix,
        at,
        title: request.title,
        issue: request.issue,
        solution: request.solution,
        commit: request.commit,
        files: request.files,
        footprints: request.footprints,
        before: measure(ledger, &before, "before")?,
        after: measure(ledger, &after, "after")?,
    })
}

/// The window a spec names, measured.
fn measure(
    ledger: &Ledger<'_>,
    spec: &WindowSpec,
    label: &'static str,
) -> Result<FixWindow, FixError> {
    let (build, from_ms, to_ms) = match spec {
        WindowSpec::Range { from_ms, to_ms } => (None, *from_ms, *to_ms),
        WindowSpec::Build(name) => {
            let windows = build_windows(ledger);
            let Some(&(_, from, to)) = windows.iter().find(|(b, _, _)| b == name) else {
                return Err(FixError::NoEvidence {
                    label,
                    build: name.clone(),
                    builds: windows.iter().map(|(b, _, _)| (*b).to_owned()).collect(),
                });
            };
            (Some(name.clone()), from, to)
        }
    };
    let mut summary = summarize_window(ledger, from_ms, to_ms);
    summary.build = build;
    let width = ((to_ms - from_ms).max(1) as f64) / FIX_SERIES_SLICES as f64;
    let series = (0..FIX_SERIES_SLICES)
        .map(|i| {
            let b0 = from_ms + (i as f64 * width) as i64;
            let b1 = if i + 1 == FIX_SERIES_SLICES {
                to_ms
            } else {
                from_ms + ((i + 1) as f64 * width) as i64 - 1
            };
            summarize_window(ledger, b0, b1).p95_ms
        })
        .collect();
    Ok(FixWindow { summary, series })
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
        match serde_json::from_slice::<FixRecord>(line) {
            Ok(fix) => read.fixes.push(fix),
            Err(_) => read.malformed += 1,
        }
    }
    Ok(read)
}
