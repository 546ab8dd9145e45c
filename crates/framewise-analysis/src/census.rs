//! Censuses read back — from a capture's `CENS` records or a `.framewise/census.json` —
//! with their hints ([`framewise_census::hints()`]).
//!
//! A capture's census records are read in file order; one whose record or document does
//! not read is a defect (what the rest of the capture lost is listed too), never the end of
//! the reading. A census file that does not parse is an error: it has nothing else to give.

use std::path::{Path, PathBuf};

use framewise_census::{Census, Hint};
use serde::Serialize;

use crate::load::sgpt::{defect_of, open_reader};
use crate::load::{peek, LoadError};
use crate::model::{Defect, DefectKind};

/// Where the censuses came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CensusSource {
    /// An `.sgpt` capture's `CENS` records.
    Capture,
    /// A census document (`.framewise/census.json`, or one census on its own).
    CensusFile,
}

/// The censuses of one input, oldest first, with their hints.
#[derive(Clone, Debug, PartialEq)]
pub struct CensusRead {
    /// A capture or a census file.
    pub source: CensusSource,
    /// Every census that read, oldest first.
    pub censuses: Vec<Census>,
    /// The hints of the series (each kind but `undisposed-suspect` reads the latest).
    pub hints: Vec<Hint>,
    /// What the capture lost, census records that did not read among it.
    pub defects: Vec<Defect>,
}

/// Why an input gives no censuses at all.
#[derive(Debug, thiserror::Error)]
pub enum CensusError {
    /// Not readable, a directory, empty, or an `.sgpt` the reader refused.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// Neither an `.sgpt` nor a census document.
    #[error("{}: {reason}", path.display())]
    NotCensus {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        reason: String,
    },
}

/// Reads the censuses of `path`: an `.sgpt` capture (sniffed by its magic), else a census
/// document (JSON).
pub fn read_censuses(path: &Path) -> Result<CensusRead, CensusError> {
    // Checked before anything opens it: opening a FIFO would wait for a writer.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_dir() && !m.is_file()) {
        return Err(CensusError::NotCensus {
            path: path.to_owned(),
            reason: "not a regular file (a FIFO or device holds no census)".to_owned(),
        });
    }
    let peeked = peek(path).map_err(|e| match e {
        // The load error's words name a capture; a census input may be either.
        LoadError::Empty => CensusError::NotCensus {
            path: path.to_owned(),
            reason: "empty file (0 bytes): neither an .sgpt capture nor a census document"
                .to_owned(),
        },
        LoadError::IsDirectory { .. } => CensusError::NotCensus {
            path: path.to_owned(),
            reason: "is a directory: give a capture (.sgpt) or a census document (census.json)"
                .to_owned(),
        },
        other => CensusError::Load(other),
    })?;
    if peeked.sgpt {
        return Ok(of_capture(path)?);
    }
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_owned(),
        source,
    })?;
    let not = |reason: String| CensusError::NotCensus {
        path: path.to_owned(),
        reason,
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| {
        not("neither an .sgpt capture nor a census document (JSON): not UTF-8".to_owned())
    })?;
    let censuses = framewise_census::parse_censuses(text).map_err(|e| not(e.to_string()))?;
    Ok(CensusRead {
        source: CensusSource::CensusFile,
        hints: framewise_census::hints(&censuses),
        censuses,
        defects: Vec::new(),
    })
}

fn of_capture(path: &Path) -> Result<CensusRead, LoadError> {
    let reader = open_reader(path)?;
    // Every defect of the capture, as `inspect` and `summarize` report it (a frame that does
    // not decode is found only by decoding it), a census record that does not read among them.
    let mut defects: Vec<Defect> = reader.verify().iter().map(defect_of).collect();
    let mut censuses = Vec::new();
    // A record that does not read is already among the capture's defects.
    for doc in reader.censuses().into_iter().flatten() {
        match framewise_census::parse_census(&doc.document) {
            Ok(census) => censuses.push(census),
            Err(e) => defects.push(
                Defect::new(
                    DefectKind::CorruptRange,
                    1,
                    format!("census record at offset {}: {e}", doc.offset),
                )
                .at(doc.offset),
            ),
        }
    }
    Ok(CensusRead {
        source: CensusSource::Capture,
        hints: framewise_census::hints(&censuses),
        censuses,
        defects,
    })
}
