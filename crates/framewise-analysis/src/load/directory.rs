//! A closed `.sgpt`'s frame directory, read without decoding a frame: every frame's index,
//! begin, work, period, GPU time and paused flag, as the writer recorded them in `DIRE`,
//! and each frame's hitch flag by the one hitch rule. What a viewer can draw at once while
//! the frames themselves load (`framewise view` paints its frame strip from it).
//!
//! For an intact capture these are the values a full load computes: the loader's period
//! rule, GPU duration and work are the ones the writer's directory used, and the hitch
//! flag is [`crate::hitch::judge_frames`]'s rule over the same periods and paused flags.
//! A frame record that does not decode is in the directory but not in a full load, so a
//! viewer replaces this with the loaded capture's frame table once it has it.

use std::io::Read;
use std::path::Path;

use framewise_format::container::{Header, HEADER_LEN};

use super::sgpt::open_reader;
use super::LoadError;
use crate::hitch_rule::{HitchRule, DEFAULT_BUDGET_NS};

/// Every frame of a closed `.sgpt`, from its directory, in file order (a full load's rows
/// for an intact file). Each column has one entry per frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrameDirectory {
    /// Frame index.
    pub index: Vec<u64>,
    /// Frame begin, ns on the session CPU clock.
    pub cpu_begin_ns: Vec<u64>,
    /// CPU work (begin to end), ns.
    pub work_ns: Vec<u64>,
    /// Period (this begin to the next frame's begin), ns; `None` when not measured.
    pub period_ns: Vec<Option<u64>>,
    /// GPU duration, ns, when the frame's passes were timed.
    pub gpu_ns: Vec<Option<u64>>,
    /// The host declared the frame paused.
    pub paused: Vec<bool>,
    /// The hitch rule flags the frame, judged against [`Self::frame_budget_ns`] as
    /// [`crate::find_hitches`] judges a loaded capture.
    pub hitch: Vec<bool>,
    /// The budget judged against: META's, else 60 Hz (as [`crate::Capture::frame_budget_ns`]).
    pub frame_budget_ns: u64,
}

impl FrameDirectory {
    /// The number of frames.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// No frame at all.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

/// Reads the frame directory of the `.sgpt` at `path`: `Ok(None)` when the file is not an
/// `.sgpt` (or is a pipe or a FIFO), is not closed (still being written, or cut off), or its directory is unusable
/// (then only a full load, which scans the file, knows its frames). Reads the header, the
/// directory and the records it names other than frames; never a frame's spans.
///
/// ```no_run
/// use framewise_analysis::load;
///
/// if let Some(dir) = load::frame_directory("game.sgpt")? {
///     println!("{} frames, {} hitches", dir.len(), dir.hitch.iter().filter(|h| **h).count());
/// }
/// # Ok::<(), framewise_analysis::LoadError>(())
/// ```
pub fn frame_directory(path: impl AsRef<Path>) -> Result<Option<FrameDirectory>, LoadError> {
    let path = path.as_ref();
    // A stream has no directory to seek to, and a peek would consume what it reads.
    if super::is_stream(path) || !super::peek(path)?.sgpt || !closed(path)? {
        return Ok(None);
    }
    let reader = open_reader(path)?;
    if !reader.opened_by_directory() {
        return Ok(None);
    }
    let frame_budget_ns = reader
        .meta()
        .and_then(|m| m.frame_budget_ns)
        .unwrap_or(DEFAULT_BUDGET_NS);
    let n = reader.frame_count();
    let mut d = FrameDirectory {
        index: Vec::with_capacity(n),
        cpu_begin_ns: Vec::with_capacity(n),
        work_ns: Vec::with_capacity(n),
        period_ns: Vec::with_capacity(n),
        gpu_ns: Vec::with_capacity(n),
        paused: Vec::with_capacity(n),
        hitch: Vec::with_capacity(n),
        frame_budget_ns,
    };
    let mut rule = HitchRule::new(frame_budget_ns);
    for e in reader.frame_entries() {
        d.index.push(e.index);
        d.cpu_begin_ns.push(e.cpu_begin_ns);
        d.work_ns.push(e.work_ns);
        d.period_ns.push(e.period_ns);
        d.gpu_ns.push(e.gpu_ns);
        d.paused.push(e.paused);
        d.hitch.push(
            e.period_ns
                .and_then(|p| rule.observe(p, e.paused))
                .is_some_and(|j| j.hitch),
        );
    }
    Ok(Some(d))
}

/// Whether the file's header parses and says the file was closed (its directory written):
/// only the header's bytes are read, so a file still being written is never read whole.
fn closed(path: &Path) -> Result<bool, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_owned(),
        source,
    };
    let mut head = Vec::with_capacity(HEADER_LEN);
    std::fs::File::open(path)
        .map_err(io)?
        .take(HEADER_LEN as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    Ok(Header::parse(&head).is_ok_and(|h| h.is_closed()))
}
