//! # framewise-incidents — the files of `.framewise/`
//!
//! Who should use this crate: the recorder (`framewise`), whose writer thread appends the
//! live incident log, and the CLI verbs and inspector panels that read and fold it. It
//! holds the typed records of `perf.jsonl` ([`Record`]: `hitch`, `heartbeat`,
//! `session-end`, `usermark`, `jitter`), the `profile.json` summary ([`Profile`]), a
//! line-atomic [`Appender`] (one `write` per line on an `O_APPEND` file, so two processes
//! can append at once), a reader that skips and counts torn and malformed lines
//! ([`read_all`], [`read_from`]), and where `.framewise/` is and how a new one is
//! scaffolded ([`locate`], [`scaffold`]). [`fold`] adds the ledger up: the issues
//! catalogue, the timeline, window summaries, and fix records (`fixes.jsonl`) with their
//! measured before and after — one implementation for the CLI's `issues`, `report`,
//! `history` and `fix` and every other reader.
//!
//! [`derive`](mod@derive) is the one path from frames to records: the recorder's writer thread feeds it
//! each frame it writes, and a capture's frames fed to it after the fact give the same
//! records (jitter included: it feeds the session's motion tracks to the motion monitor).
//! [`world`] is the naming convention of the host's `world` object and reads it back from a
//! frame's counters onto the records. It implements no detector: hitches, classifications, footprints and jitter are
//! decided by `framewise-detect`, and this crate gives their results a file format. A field
//! that was not measured is absent from a record, never `0`. docs/INCIDENTS.md describes
//! every record and field.
//!
//! ```
//! use framewise_incidents::{read_all, Appender, Common, HeartbeatRecord, Record, Window};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("perf.jsonl");
//! let mut log = Appender::open(&path)?;
//! log.append(&Record::Heartbeat(HeartbeatRecord {
//!     common: Common { at: framewise_incidents::now_iso(), ..Common::default() },
//!     frame: 599,
//!     window: Window { frames: 600, ..Window::default() },
//!     counters: Default::default(),
//!     hitches: 0,
//! }))?;
//! let read = read_all(&path)?;
//! assert_eq!(read.records.len(), 1);
//! assert!(!read.torn_last_line);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod append;
pub mod derive;
mod dir;
pub mod fold;
mod jitter;
mod once;
mod profile;
mod read;
mod record;
pub mod stats;
mod time;
pub mod world;

pub use append::Appender;
pub use dir::{
    locate, scaffold, scaffold_dir, Scaffold, AGENT_DOCTRINE, AGENT_GUIDE, AGENT_GUIDE_FILE,
    BENCH_HISTORY_FILE, CONFIG_TOML, DIR_ENV, DIR_NAME, FIXES_FILE, GITIGNORE, PERF_FILE,
    PROFILE_FILE,
};
pub use jitter::jitter_record;
pub use once::{append_once, AppendOnce, Occurrence};
pub use profile::{
    read_profile, write_profile, Budgets, CounterStats, FrameSummary, Profile, ScopeStats,
    PROFILE_SCHEMA,
};
pub use read::{parse_bytes, parse_line, read_all, read_from, ReadOutcome};
pub use record::{
    Camera, Common, Confidence, DropCounts, Footprint, Guess, HeartbeatRecord, HitchRecord,
    JitterRecord, Reach, Record, ScopeTime, SessionEndRecord, UsermarkRecord, Window, World,
    WorstFrame, WrittenCounts, MAX_FRAME_MS, MAX_UNITS, RECORD_TYPES,
};
pub use time::{iso_from_system_time, iso_from_unix_ms, now_iso};

use std::path::PathBuf;

/// Errors reading or writing `.framewise/` files; each names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A record could not be encoded, or a whole-file document did not parse.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// A line went out in more than one write (disk full, or a signal): it was finished, but
    /// another process appending at the same moment may have cut into it.
    #[error("{}: a line went out in two writes ({written} of {len} bytes in the first)", path.display())]
    ShortWrite {
        /// The file.
        path: PathBuf,
        /// Bytes the first write took.
        written: usize,
        /// The line's length.
        len: usize,
    },
}

/// `Ok` when `path` is a regular file (through symlinks) or does not exist; an error for a
/// FIFO, a device or a directory, which would block or mislead a reader or an appender.
pub(crate) fn regular_or_missing(path: &std::path::Path) -> Result<(), Error> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(Error::Io {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
        }),
        _ => Ok(()),
    }
}
