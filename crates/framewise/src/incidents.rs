//! The live incident log: `.framewise/perf.jsonl` and `profile.json`, written on the writer
//! thread as frames are written, never on the game thread.
//!
//! Every record comes from `framewise-incidents`' deriver, the same code that derives
//! records from a capture after the fact. On by default when a directory is configured
//! ([`crate::SessionBuilder::incident_dir`], or `FRAMEWISE_DIR`) or `.framewise/` exists in
//! the working directory; [`crate::SessionBuilder::incident_log`] turns it on or off. A log
//! that cannot be written never stops the capture: the session gives one warning and the
//! log stops.

use std::path::{Path, PathBuf};

use framewise_format::model::{Frame, Meta, SymbolTable};
use framewise_incidents::derive::{automated_from_env, Deriver, SessionFacts};
use framewise_incidents::{Appender, Record};

use crate::report::Warning;

/// What the builder was told about the incident log.
#[derive(Clone, Debug, Default)]
pub(crate) struct IncidentSettings {
    /// The directory given in code.
    pub(crate) dir: Option<PathBuf>,
    /// Forced on or off; `None`: on when a directory is found.
    pub(crate) enabled: Option<bool>,
}

/// The log of one session, owned by the writer thread.
pub(crate) struct LiveLog {
    deriver: Deriver,
    perf: Appender,
    profile_path: PathBuf,
    /// `census.json`, and the censuses of this session so far (the newest kept).
    census_path: PathBuf,
    censuses: Vec<framewise_census::Census>,
    /// `census.json` could not be written once: no more attempts.
    census_failed: bool,
    /// Records made due by the last frame (kept to reuse its buffer).
    due: Vec<Record>,
    /// The log failed once and writes nothing more.
    stopped: bool,
}

fn warning(path: &Path, error: impl std::fmt::Display) -> Warning {
    // The warning names the path itself: an error that starts with it says it once.
    let text = error.to_string();
    let message = text
        .strip_prefix(&format!("{}: ", path.display()))
        .unwrap_or(&text)
        .to_owned();
    Warning::IncidentLog {
        path: path.to_owned(),
        message,
    }
}

impl LiveLog {
    /// Opens the log for a session with this META, when it is on: `Ok(None)` when it is off
    /// or no directory was found.
    pub(crate) fn open(settings: &IncidentSettings, meta: &Meta) -> Result<Option<Self>, Warning> {
        if settings.enabled == Some(false) {
            return Ok(None);
        }
        let Some(dir) = framewise_incidents::locate(settings.dir.as_deref()) else {
            if settings.enabled == Some(true) {
                return Err(warning(
                    Path::new(framewise_incidents::DIR_NAME),
                    "the incident log was asked for, but no directory was configured and none \
                     exists in the working directory",
                ));
            }
            return Ok(None);
        };
        if !dir.is_dir() {
            framewise_incidents::scaffold_dir(&dir).map_err(|e| warning(&dir, e))?;
        }
        let perf_path = dir.join(framewise_incidents::PERF_FILE);
        let perf = Appender::open(&perf_path).map_err(|e| warning(&perf_path, e))?;
        Ok(Some(Self {
            deriver: Deriver::new(SessionFacts::from_meta(meta, automated_from_env())),
            perf,
            profile_path: dir.join(framewise_incidents::PROFILE_FILE),
            census_path: dir.join(framewise_census::CENSUS_FILE),
            censuses: Vec::new(),
            census_failed: false,
            due: Vec::new(),
            stopped: false,
        }))
    }

    /// The frame just written: records it made due are appended, and `profile.json` is
    /// rewritten when due. A warning the first time the log cannot be written.
    pub(crate) fn on_frame(&mut self, frame: &Frame, symbols: &SymbolTable) -> Option<Warning> {
        if self.stopped {
            return None;
        }
        self.deriver.observe(frame, symbols, &mut self.due);
        if let Some(warning) = self.append_due() {
            return Some(warning);
        }
        let profile = self.deriver.profile_due(symbols)?;
        self.write_profile(&profile)
    }

    /// The session ended: the pending hitch, `session-end`, and a last `profile.json`.
    pub(crate) fn finish(&mut self, symbols: &SymbolTable) -> Option<Warning> {
        if self.stopped {
            return None;
        }
        self.deriver.finish(symbols, &mut self.due);
        if let Some(warning) = self.append_due() {
            return Some(warning);
        }
        let profile = self.deriver.profile(symbols);
        self.write_profile(&profile)
    }

    /// A census was recorded: `census.json` is rewritten with every census of the session
    /// (the newest [`framewise_census::file::MAX_CENSUSES_IN_FILE`]). A warning the first
    /// time it cannot be written; the incident log itself goes on.
    pub(crate) fn on_census(&mut self, census: framewise_census::Census) -> Option<Warning> {
        if self.census_failed {
            return None;
        }
        if self.censuses.len() == framewise_census::file::MAX_CENSUSES_IN_FILE {
            self.censuses.remove(0);
        }
        self.censuses.push(census);
        let result = framewise_census::write_census_file(&self.census_path, &self.censuses);
        result.err().map(|error| {
            self.census_failed = true;
            Warning::CensusFile {
                path: self.census_path.clone(),
                message: error.to_string(),
            }
        })
    }

    fn append_due(&mut self) -> Option<Warning> {
        for record in self.due.drain(..) {
            if let Err(error) = self.perf.append(&record) {
                self.stopped = true;
                return Some(warning(self.perf.path(), error));
            }
        }
        None
    }

    fn write_profile(&mut self, profile: &framewise_incidents::Profile) -> Option<Warning> {
        let result = framewise_incidents::write_profile(&self.profile_path, profile);
        result.err().map(|error| {
            self.stopped = true;
            warning(&self.profile_path, error)
        })
    }
}
