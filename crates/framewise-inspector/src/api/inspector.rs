//! The [`Inspector`]: a capture loaded once through framewise-analysis, its hitches found,
//! and the documents that cover the whole capture serialized once, for every request to
//! share.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use axum::body::Bytes;
use framewise_analysis::hitch::judge_frames;
use framewise_analysis::{
    diff, find_hitches, load, summarize, Capture, FrameSource, HitchOptions, HitchReport,
    LoadError, LoadOptions,
};

use super::docs::{to_bytes, ErrorDoc, RowRange, StatsDoc};

/// A capture, read once through framewise-analysis, and what the API serves from it.
///
/// Memory: an `.sgpt` capture is held as its per-frame aggregates (what hitches,
/// statistics, series and comparisons read), without its spans: `/api/frame` reads the
/// one frame's spans from the file, kept open, when it is asked for
/// ([`framewise_analysis::load::open_with_frame_source`]). Other kinds are small and keep
/// their spans in memory. The documents that cover the whole capture (`/api/capture`,
/// `/api/strip`, `/api/stats` without a range, `/api/hitches`, `/api/diff`) are computed
/// once, here, and served as bytes.
pub struct Inspector {
    pub(super) capture: Capture,
    /// Where `/api/frame` gets a frame's spans.
    pub(super) frames: FrameSource,
    pub(super) hitches: HitchReport,
    /// Capture row → position in `hitches.hitches`.
    pub(super) hitch_rows: HashMap<usize, usize>,
    /// The path as the user gave it, and its size when loaded (or why it is not known).
    pub(super) file: String,
    pub(super) file_bytes: Result<u64, String>,
    /// `--compare`'s file and frame count.
    pub(super) compared: Option<(String, usize)>,
    /// Documents serialized once per load; `Bytes`, so every answer shares them instead of
    /// copying (the strip of an hour capture is 7.1 MB). `stats_doc` is `/api/stats` over
    /// every row.
    pub(super) strip_doc: Bytes,
    pub(super) stats_doc: Bytes,
    pub(super) hitches_doc: Bytes,
    pub(super) diff_doc: Option<Bytes>,
    /// `/api/comparison`, beside `/api/diff`.
    pub(super) comparison_doc: Option<Bytes>,
    /// The game's `.framewise/` directory, when the capture belongs to one
    /// (`/api/issues`).
    pub(super) project: Option<PathBuf>,
}

/// A second capture to compare against (`framewise view A --compare B`).
pub struct Compared {
    /// The path as the user gave it.
    pub file: String,
    /// The capture (a summary-only load is enough).
    pub capture: Capture,
}

impl Compared {
    /// Loads `path` (summary only) through framewise-analysis.
    pub fn open(path: &Path) -> Result<Self, LoadError> {
        Ok(Self {
            file: path.display().to_string(),
            capture: load::open(path, &LoadOptions::new().with_summary_only(true))?,
        })
    }
}

impl Inspector {
    /// Loads `capture` (an `.sgpt` without its spans, read a frame at a time on demand;
    /// another kind with them) and, when given, `compare` (summary only) through
    /// framewise-analysis.
    pub fn open(capture: &Path, compare: Option<&Path>) -> Result<Self, LoadError> {
        let (main, frames) = load::open_with_frame_source(capture, &LoadOptions::new(), |_| {})?;
        let compared = compare.map(Compared::open).transpose()?;
        Ok(
            Self::with_frames(main, frames, &capture.display().to_string(), compared)
                .with_project(crate::issues::find_project(capture)),
        )
    }

    /// Serves the issues catalogue of the `.framewise/` directory `dir` (`/api/issues`);
    /// `None`: no catalogue. [`Self::open`] looks for the nearest one from the capture's
    /// directory up; [`crate::issues::project_dir`] reads a `--project DIR`.
    pub fn with_project(mut self, dir: Option<PathBuf>) -> Self {
        self.project = dir;
        self
    }

    /// The `.framewise/` directory whose catalogue `/api/issues` serves.
    pub fn project(&self) -> Option<&Path> {
        self.project.as_deref()
    }

    /// Serves an already loaded capture (`file`: its path as the user gave it), its spans
    /// from its own span table: load it with spans ([`LoadOptions::with_spans`]) or
    /// `/api/frame` has no lanes to show.
    pub fn new(capture: Capture, file: &str, compare: Option<Compared>) -> Self {
        Self::with_frames(capture, FrameSource::kept(), file, compare)
    }

    /// Serves an already loaded capture whose frames' spans come from `frames` (as
    /// [`framewise_analysis::load::open_with_frame_source`] returned them with it).
    pub fn with_frames(
        capture: Capture,
        frames: FrameSource,
        file: &str,
        compare: Option<Compared>,
    ) -> Self {
        Self::build(capture, frames, file, compare.as_ref())
    }

    /// [`Self::with_frames`] with the compared capture borrowed: a followed capture is
    /// rebuilt on every reload against the same one.
    pub(crate) fn build(
        capture: Capture,
        frames: FrameSource,
        file: &str,
        compare: Option<&Compared>,
    ) -> Self {
        let options = HitchOptions::default();
        let hitches = find_hitches(&capture, &options);
        let hitch_rows = hitch_rows(&capture, &options, &hitches);
        let file_bytes = file_size(file);
        let summary = summarize(&capture);
        let (diff_doc, comparison_doc) = compare
            .map(|other| {
                // Judged against this capture's frame budget, as `framewise diff` judges a
                // candidate against its base's: jank ratios compare frames, not budgets.
                let (theirs, _) = diff::summarize_candidate(&capture, &other.capture, None);
                let d = diff(&summary, &theirs);
                let doc = match diff::diff_json(&d, (file, &summary), (&other.file, &theirs), false)
                {
                    Ok(v) => Bytes::from(to_bytes(&v)),
                    Err(e) => Bytes::from(to_bytes(&ErrorDoc {
                        error: &format!("serializing: {e}"),
                    })),
                };
                let ranked = crate::comparison::comparison_bytes(
                    &d,
                    (file, &summary),
                    (&other.file, &theirs),
                );
                (doc, ranked)
            })
            .unzip();
        let stats_doc = Bytes::from(to_bytes(&StatsDoc {
            summary: &summary,
            range: RowRange {
                from: 0,
                to: capture.frame_count(),
            },
        }));
        let mut inspector = Self {
            hitches_doc: Bytes::from(to_bytes(&framewise_analysis::HitchesDoc::new(&hitches))),
            stats_doc,
            hitches,
            hitch_rows,
            file: file.to_owned(),
            file_bytes,
            compared: compare.map(|c| (c.file.clone(), c.capture.frame_count())),
            strip_doc: Bytes::new(),
            diff_doc,
            comparison_doc,
            capture,
            frames,
            project: None,
        };
        let hitch: Vec<bool> = (0..inspector.capture.frame_count())
            .map(|row| inspector.hitch_rows.contains_key(&row))
            .collect();
        inspector.strip_doc = Bytes::from(crate::strip::of_capture(&inspector.capture, &hitch));
        inspector
    }

    /// The capture it serves.
    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    /// `/api/comparison`'s bytes, when a capture is compared.
    pub(crate) fn comparison_doc(&self) -> Option<&Bytes> {
        self.comparison_doc.as_ref()
    }

    /// Where a frame's spans are read from.
    pub(crate) fn frame_source(&self) -> &FrameSource {
        &self.frames
    }
}

/// Capture row → position in `report.hitches`. A hitch names its frame by index, and in a
/// damaged capture (two recordings in one file, frames out of order) an index may be held
/// by more than one row, so a hitch is never looked up by index: `find_hitches` lists the
/// rows the hitch rule flags, in row order, one hitch each, and the rule's judgements
/// (framewise-analysis' `judge_frames`, the rule `find_hitches` applies) give those rows.
fn hitch_rows(
    capture: &Capture,
    options: &HitchOptions,
    report: &HitchReport,
) -> HashMap<usize, usize> {
    let budget_ns = options
        .budget_ns
        .unwrap_or_else(|| capture.frame_budget_ns());
    let flagged = judge_frames(capture, budget_ns)
        .into_iter()
        .enumerate()
        .filter(|(_, j)| j.as_ref().is_some_and(|j| j.hitch))
        .map(|(row, _)| row);
    let rows: HashMap<usize, usize> = flagged
        .zip(report.hitches.iter().enumerate())
        .filter(|(row, (_, h))| capture.frames().index.get(*row) == Some(&h.frame))
        .map(|(row, (at, _))| (row, at))
        .collect();
    debug_assert_eq!(rows.len(), report.hitches.len(), "one row per hitch");
    rows
}

/// The size of the capture's file when it was loaded, or why it is not known: a FIFO, a
/// device or a socket has no size to read after the fact (what was read through it is
/// not counted), and an in-memory capture may name no file at all. Never an unmeasured 0.
fn file_size(file: &str) -> Result<u64, String> {
    match std::fs::metadata(file) {
        Ok(m) if m.is_file() => Ok(m.len()),
        Ok(m) => {
            let kind = file_kind(&m.file_type());
            Err(format!(
                "{file} is {kind}, not a regular file: its size is not known (the bytes read through it are not counted)"
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{file} was not found: its size is not known"))
        }
        Err(e) => Err(format!("{file}: its size could not be read: {e}")),
    }
}

fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "a file of another kind"
    }
}
