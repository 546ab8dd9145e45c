//! Appending records once: a record made after the fact (from a capture) is appended only
//! when its occurrence is not in the log yet, so deriving the same capture twice adds
//! nothing.
//!
//! An occurrence is the session id, the record type and the frame, and for `jitter` the
//! track, since two tracks can jump in one frame ([`Occurrence`]). `session-end` has no
//! frame: one per session. A record without a session id (none was
//! recorded) names no occurrence and is always appended.

use std::collections::HashSet;
use std::path::Path;

use crate::append::Appender;
use crate::read::read_all;
use crate::record::Record;
use crate::Error;

/// What names one occurrence in `perf.jsonl`: session, record type, frame (and track).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Occurrence {
    /// The session id (32 hex digits).
    pub session: String,
    /// The record's `type`.
    pub record_type: &'static str,
    /// The record's frame; `None` for `session-end`.
    pub frame: Option<u64>,
    /// A jitter record's track; `None` for the other types.
    pub track: Option<String>,
}

impl Record {
    /// The frame a record is about: a hitch's or jitter's frame, a usermark's or a
    /// heartbeat's newest frame; `None` for `session-end`.
    pub fn frame(&self) -> Option<u64> {
        match self {
            Self::Hitch(r) => Some(r.frame),
            Self::Heartbeat(r) => Some(r.frame),
            Self::Usermark(r) => Some(r.frame),
            Self::Jitter(r) => Some(r.frame),
            Self::SessionEnd(_) => None,
        }
    }

    /// The occurrence this record names, when it carries a session id.
    pub fn occurrence(&self) -> Option<Occurrence> {
        Some(Occurrence {
            session: self.common().session.clone()?,
            record_type: self.type_name(),
            frame: self.frame(),
            track: match self {
                Self::Jitter(r) => Some(r.track.clone()),
                _ => None,
            },
        })
    }
}

/// What [`append_once`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppendOnce {
    /// Records appended.
    pub appended: u64,
    /// Records left out: their occurrence was in the log already (or earlier in the batch).
    pub already: u64,
    /// Lines of the existing log that were skipped while reading it (malformed, of an
    /// unknown type, or a torn last line): their occurrences could not be known.
    pub skipped_lines: u64,
}

/// Appends to the log at `path` (created when missing; its directory must exist) those
/// `records` whose occurrence is not in it yet, in order, one line each.
pub fn append_once(path: &Path, records: &[Record]) -> Result<AppendOnce, Error> {
    let mut outcome = AppendOnce::default();
    let mut seen: HashSet<Occurrence> = HashSet::new();
    if path.exists() {
        let read = read_all(path)?;
        outcome.skipped_lines = read.malformed + read.unknown_type + u64::from(read.torn_last_line);
        seen.extend(read.records.iter().filter_map(Record::occurrence));
    }
    let mut log: Option<Appender> = None;
    for record in records {
        if let Some(occurrence) = record.occurrence() {
            if !seen.insert(occurrence) {
                outcome.already += 1;
                continue;
            }
        }
        let appender = match &mut log {
            Some(appender) => appender,
            None => log.insert(Appender::open(path)?),
        };
        appender.append(record)?;
        outcome.appended += 1;
    }
    Ok(outcome)
}
