//! `framewise hitches CAPTURE --append`: the incident records a recording session's live
//! log writes, derived after the fact from an `.sgpt` capture and appended to
//! `.framewise/perf.jsonl` once.
//!
//! The capture's frames go, in file order, through the same deriver the recorder's writer
//! thread runs (`framewise-incidents`), so the hitch, usermark, jitter, heartbeat and
//! session-end records are the live log's, in its order. A record whose
//! occurrence (session id, type, frame, a jitter record's track) is in the log already is
//! left out, so appending the same capture twice adds nothing. A frame the capture lost is
//! skipped: the records are derived from the frames that could be read.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use framewise_incidents::derive::{automated_from_env, Deriver, SessionFacts};
use framewise_incidents::{append_once, Record, DIR_ENV, DIR_NAME};
use serde::Serialize;

/// Where `--append` writes and what it did (`append` in `hitches --format json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppendSummary {
    /// The `.framewise/` directory.
    pub dir: String,
    /// Why this directory: `--dir`, `nearest to the capture`, `FRAMEWISE_DIR` or
    /// `nearest to the working directory`.
    pub chosen_by: &'static str,
    /// Records derived from the capture.
    pub derived: u64,
    /// Records appended (those not in the log yet).
    pub appended: u64,
    /// Records left out: the log had their occurrence already.
    pub already: u64,
    /// Frames read from the capture (fed to the deriver).
    pub frames_read: u64,
    /// Frames the capture lost (unreadable records, skipped).
    pub frames_unreadable: u64,
    /// Lines of the existing log that could not be read (malformed, unknown type, a torn last
    /// line): their occurrences are unknown, so a record among them may be appended again.
    pub skipped_lines: u64,
}

/// The `.framewise/` directory `--append` writes to: `--dir`, else the nearest one from the
/// capture's directory up, else `FRAMEWISE_DIR`, else the nearest one from the working
/// directory up. An error (exit 4) when there is none.
pub fn locate(given: Option<&Path>, capture: &Path) -> anyhow::Result<(PathBuf, &'static str)> {
    if let Some(dir) = given {
        if !dir.is_dir() {
            bail!(
                "{}: not a directory (--dir names the {DIR_NAME}/ directory; `framewise init` scaffolds one)",
                dir.display()
            );
        }
        return Ok((dir.to_owned(), "--dir"));
    }
    if let Some(dir) = framewise_inspector::find_project(capture) {
        return Ok((dir, "nearest to the capture"));
    }
    if let Some(dir) = std::env::var_os(DIR_ENV).filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(dir);
        if !dir.is_dir() {
            bail!("{}: not a directory (named by {DIR_ENV})", dir.display());
        }
        return Ok((dir, DIR_ENV));
    }
    let here = std::env::current_dir().context("the working directory")?;
    match here
        .ancestors()
        .map(|at| at.join(DIR_NAME))
        .find(|dir| dir.is_dir())
    {
        Some(dir) => Ok((dir, "nearest to the working directory")),
        None => bail!(
            "no {DIR_NAME}/ above {} or {}: run `framewise init` in the game's repository, or pass --dir",
            capture.display(),
            here.display()
        ),
    }
}

/// The records derived from the `.sgpt` capture at `path`, in the order the live log would
/// write them, with the frames read and lost.
pub fn derive(path: &Path) -> anyhow::Result<(Vec<Record>, u64, u64)> {
    crate::input::refuse_device(path, "a capture")?;
    let opened = framewise_format::read::open(path).map_err(|e| {
        anyhow::anyhow!(
            "{}: incidents are derived from .sgpt captures only: {e}",
            path.display()
        )
    })?;
    let Some(meta) = opened.meta() else {
        bail!(
            "{}: the capture has no readable META record (no session id): nothing to append",
            path.display()
        );
    };
    let mut deriver = Deriver::new(SessionFacts::from_meta(meta, automated_from_env()));
    let mut records = Vec::new();
    let (mut read, mut lost) = (0u64, 0u64);
    for frame in opened.frames() {
        match frame {
            Ok(frame) => {
                read += 1;
                deriver.observe(&frame, opened.symbols(), &mut records);
            }
            Err(_) => lost += 1,
        }
    }
    deriver.finish(opened.symbols(), &mut records);
    Ok((records, read, lost))
}

/// Derives the capture's records and appends those not in `dir`'s `perf.jsonl` yet.
pub fn append(path: &Path, dir: PathBuf, chosen_by: &'static str) -> anyhow::Result<AppendSummary> {
    let (records, frames_read, frames_unreadable) = derive(path)?;
    let outcome = append_once(&dir.join(framewise_incidents::PERF_FILE), &records)?;
    Ok(AppendSummary {
        dir: dir.display().to_string(),
        chosen_by,
        derived: records.len() as u64,
        appended: outcome.appended,
        already: outcome.already,
        frames_read,
        frames_unreadable,
        skipped_lines: outcome.skipped_lines,
    })
}

/// Adds to `records` (a ledger read from `perf.jsonl`) the records derived from the `.sgpt`
/// capture at `path` whose occurrence it does not hold; how many were added.
pub fn fold_into(path: &Path, records: &mut Vec<Record>) -> anyhow::Result<u64> {
    let (derived, _, _) = derive(path)?;
    let mut held: std::collections::HashSet<_> =
        records.iter().filter_map(Record::occurrence).collect();
    let before = records.len();
    records.extend(
        derived
            .into_iter()
            .filter(|r| r.occurrence().is_none_or(|o| held.insert(o))),
    );
    Ok((records.len() - before) as u64)
}

impl AppendSummary {
    /// The stderr lines: where, and what was appended.
    pub fn lines(&self) -> String {
        let perf = Path::new(&self.dir).join(framewise_incidents::PERF_FILE);
        let mut out = format!(
            "framewise hitches: appending to {} ({})\n",
            perf.display(),
            self.chosen_by
        );
        out.push_str(&format!(
            "framewise hitches: {} of {} records derived from {} frames appended, {} already there",
            self.appended, self.derived, self.frames_read, self.already
        ));
        if self.frames_unreadable > 0 {
            out.push_str(&format!(
                "; {} frames could not be read",
                self.frames_unreadable
            ));
        }
        if self.skipped_lines > 0 {
            out.push_str(&format!(
                "; {} unreadable lines of the log were skipped",
                self.skipped_lines
            ));
        }
        out.push('\n');
        out
    }
}
