//! A `.framewise/` directory's ledger read whole: `perf.jsonl`'s records and
//! `fixes.jsonl`'s fixes, with what was skipped counted — what every reader of the folds
//! (the CLI's verbs, the inspector's Issues panel) starts from — and the issues document
//! they serve.

use std::path::Path;

use serde::Serialize;

use super::fix::{read_fixes, FixRecord};
use super::issues::{catalogue, Catalogue, CatalogueOptions};
use super::Ledger;
use crate::dir::{FIXES_FILE, PERF_FILE};
use crate::read::{read_all, ReadOutcome};
use crate::record::Record;
use crate::Error;

/// What was read from `.framewise/`, and what was skipped.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LedgerInfo {
    /// The directory.
    pub dir: String,
    /// Records read from `perf.jsonl` (0 when it does not exist yet).
    pub records: u64,
    /// Lines of `perf.jsonl` skipped: not JSON, or a known type that did not parse.
    pub malformed: u64,
    /// Lines of `perf.jsonl` skipped: a record type this framewise does not know.
    pub unknown_type: u64,
    /// Whether `perf.jsonl` ended in a line without its newline (a crash; skipped).
    pub torn_last_line: bool,
    /// Records left out of the folds because their `at` is not a time.
    pub unstamped: u64,
    /// Fixes read from `fixes.jsonl`.
    pub fixes: u64,
    /// Lines of `fixes.jsonl` skipped (not a fix record, or torn).
    pub fixes_skipped: u64,
}

/// A directory's ledger.
#[derive(Clone, Debug, Default)]
pub struct LedgerFiles {
    /// `perf.jsonl`'s records, in file order.
    pub records: Vec<Record>,
    /// `fixes.jsonl`'s fixes, in file order.
    pub fixes: Vec<FixRecord>,
    /// What was read and skipped (`unstamped` is filled by [`LedgerFiles::ledger`]).
    pub info: LedgerInfo,
}

impl LedgerFiles {
    /// Reads `perf.jsonl` and `fixes.jsonl` of the `.framewise/` directory `dir`; a file
    /// that does not exist yet holds nothing.
    pub fn read(dir: &Path) -> Result<Self, Error> {
        let perf = dir.join(PERF_FILE);
        let read = if perf.exists() {
            read_all(&perf)?
        } else {
            ReadOutcome::default()
        };
        let fixes = read_fixes(&dir.join(FIXES_FILE))?;
        let info = LedgerInfo {
            dir: dir.display().to_string(),
            records: read.records.len() as u64,
            malformed: read.malformed,
            unknown_type: read.unknown_type,
            torn_last_line: read.torn_last_line,
            unstamped: 0,
            fixes: fixes.fixes.len() as u64,
            fixes_skipped: fixes.malformed + u64::from(fixes.torn_last_line),
        };
        Ok(Self {
            records: read.records,
            fixes: fixes.fixes,
            info,
        })
    }

    /// The records as a [`Ledger`], and the info with `unstamped` counted.
    pub fn ledger(&self) -> (Ledger<'_>, LedgerInfo) {
        let ledger = Ledger::new(&self.records);
        let info = LedgerInfo {
            unstamped: ledger.unstamped(),
            ..self.info.clone()
        };
        (ledger, info)
    }

    /// The issues document of this ledger.
    pub fn issues(&self, options: &CatalogueOptions) -> IssuesDoc {
        let (ledger, info) = self.ledger();
        IssuesDoc {
            catalogue: catalogue(&ledger, &self.fixes, options),
            ledger: info,
            total_issues: None,
        }
    }
}

/// The issues document: `framewise issues --format json`, `framewise report`'s (with
/// `total_issues`), and the inspector's `/api/issues` — one shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IssuesDoc {
    /// The catalogue (schema `framewise.issues/1`).
    #[serde(flatten)]
    pub catalogue: Catalogue,
    /// What was read.
    pub ledger: LedgerInfo,
    /// `report`: how many issues there are in all (the list is the top five).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_issues: Option<u64>,
}
