//! What a session tells its host: warnings while it runs, a report when it stops.

use std::fmt;
use std::path::PathBuf;

use crate::error::SessionError;
use crate::CaptureLevel;

/// Something the host should know, that does not stop the recording.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Warning {
    /// The capture grew past the session's byte budget. Given once per session.
    ByteBudgetExceeded {
        /// The budget.
        budget_bytes: u64,
        /// Bytes written when the budget was passed.
        bytes_written: u64,
        /// The capture level, which decides how much each frame costs.
        level: CaptureLevel,
        /// Frames written so far.
        frames_written: u64,
        /// Observed rate: bytes per second of session time.
        bytes_per_second: f64,
        /// Observed rate: bytes per written frame.
        bytes_per_frame: f64,
    },
    /// The incident log (`.framewise/`) could not be opened or written: it stopped, and the
    /// capture goes on. Given once per session.
    IncidentLog {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// `.framewise/census.json` could not be written: no further census goes there (they
    /// still go into the capture). Given once per session.
    CensusFile {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A `FRAMEWISE_*` variable is set that framewise does not read: most likely a misspelt
    /// one, which would otherwise change nothing without a word. Given once per process, for
    /// each such variable, when its first session starts.
    UnknownVariable(crate::env::UnknownVariable),
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::ByteBudgetExceeded {
                budget_bytes,
                bytes_written,
                level,
                frames_written,
                bytes_per_second,
                bytes_per_frame,
            } => write!(
                f,
                "capture passed its byte budget: {bytes_written} bytes written (budget \
                 {budget_bytes}) at level {level_name} ({level_number}), {rate_mib:.2} MiB/s, \
                 {bytes_per_frame:.0} bytes/frame over {frames_written} frames; recording \
                 continues (lower the level or raise byte_budget)",
                level_name = level.name(),
                level_number = *level as u8,
                rate_mib = bytes_per_second / (1024.0 * 1024.0),
            ),
            Warning::IncidentLog { path, message } => write!(
                f,
                "incident log stopped: {}: {message}; the capture goes on",
                path.display()
            ),
            Warning::CensusFile { path, message } => write!(
                f,
                "census file not written: {}: {message}; censuses still go into the capture",
                path.display()
            ),
            Warning::UnknownVariable(variable) => write!(f, "{variable}"),
        }
    }
}

/// A usermark as the session saw it: "it felt wrong here" about a trailing window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsermarkRecord {
    /// The note given with it.
    pub note: String,
    /// When it was made, ns on the session clock.
    pub at_ns: u64,
    /// The window's length, ns.
    pub window_ns: u64,
    /// The window's start, ns on the session clock (clamped to the session's start).
    pub window_start_ns: u64,
    /// The first frame that overlaps the window (the oldest the session still remembered).
    pub first_frame: u64,
    /// The frame during which it was made.
    pub frame: u64,
}

/// What a session recorded, returned by `stop()` (and when `frame_limit` ends it).
///
/// Every loss is counted here; a report with any of them non-zero describes an incomplete
/// capture, and [`Report::is_complete`] says so.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Report {
    /// Where the capture went, when it was a file.
    pub path: Option<PathBuf>,
    /// Frames the game closed.
    pub frames_closed: u64,
    /// Frames written to the capture.
    pub frames_written: u64,
    /// Frames the realtime writer dropped because it fell behind, and frames the capture
    /// format refused to encode (a recorder bug: dropped whole, the session going on); each
    /// counted in the next written frame's `dropped_frames_before`.
    pub frames_dropped: u64,
    /// Frames not written because the sink had failed.
    pub frames_lost_to_error: u64,
    /// CPU spans and marks dropped because a thread's buffer was full, in written frames.
    pub spans_dropped: u64,
    /// Frames written without the GPU results they expected (`gpu_wait_frames` passed).
    pub gpu_results_missing: u64,
    /// GPU deliveries that came after their frame had been written or dropped.
    pub gpu_deliveries_late: u64,
    /// Bytes the capture holds.
    pub bytes_written: u64,
    /// The header was patched CLOSED with a directory (a file or other seekable sink).
    pub closed: bool,
    /// Warnings given during the session.
    pub warnings: Vec<Warning>,
    /// Usermarks made during the session.
    pub usermarks: Vec<UsermarkRecord>,
    /// The first error the session met, if any.
    pub error: Option<SessionError>,
}

impl Report {
    /// True when every closed frame was written whole: no frame dropped or lost, no span
    /// dropped, no GPU result missing, no error.
    pub fn is_complete(&self) -> bool {
        self.error.is_none()
            && self.frames_dropped == 0
            && self.frames_lost_to_error == 0
            && self.spans_dropped == 0
            && self.gpu_results_missing == 0
            && self.frames_written == self.frames_closed
    }
}
