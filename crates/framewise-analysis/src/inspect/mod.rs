//! [`Inspection`]: what a capture file holds, structurally — `inspect --format json`, and
//! the model the web inspector's file view reads, so the two never disagree.
//!
//! For an `.sgpt`, read through framewise-format's reader: the header, how the file was
//! opened (by its directory, or by scanning), META, intact records by type with counts and
//! bytes, symbols (each, and counted by kind), topologies, the frame entries summarized,
//! and every defect — each frame is decoded to find damage, so a file that opens cleanly
//! but holds a frame that does not decode says so. For a `.litecap` or a Chrome trace:
//! what the importer made of it (names, counts, notes, defects).
//!
//! An inspection states what is in the file; it computes no statistic. Defects are data:
//! a damaged file inspects, and [`Inspection::defects`] lists what was lost.
//!
//! The parts: `schema` is the JSON's types; `sgpt` reads an `.sgpt` through the format
//! crate's reader, verifying every frame; `imported` describes what an importer made of a
//! `.litecap` or Chrome trace. [`inspect_with`], here, tells the kinds apart by content.

mod imported;
mod schema;
mod sgpt;
#[cfg(test)]
mod tests;

use std::path::Path;

use framewise_format::read;

use crate::build::LoadOptions;
use crate::load::sgpt::open_reader;
use crate::load::{self, no_progress, FileKind, LoadError, Progress};

pub use self::imported::of_imported;
pub use self::schema::{
    AdapterInfo, CounterEntry, CpuClockInfo, Detail, FrameSummary, GpuClockInfo, HeaderInfo,
    ImportedDetail, Inspection, MetaInfo, OpenedBy, PassEntry, RecordCount, RenderInfo, ScopeEntry,
    SgptDetail, SymbolInfo, TopologyInfo, INSPECT_SCHEMA,
};
pub use self::sgpt::of_sgpt;

/// Inspects a file of any supported kind with the default [`LoadOptions`].
pub fn inspect(path: impl AsRef<Path>) -> Result<Inspection, LoadError> {
    inspect_with(path, &LoadOptions::default(), no_progress)
}

/// Inspects a file, reporting progress (an `.sgpt` is verified frame by frame, counted in
/// [`Stage::Verifying`](crate::load::Stage::Verifying); other kinds load as
/// [`load::open_with_progress`] does). `options` matter only to importers (a Chrome trace's
/// frame span).
pub fn inspect_with(
    path: impl AsRef<Path>,
    options: &LoadOptions,
    mut on_progress: impl FnMut(Progress),
) -> Result<Inspection, LoadError> {
    let path = path.as_ref();
    let file = path.display().to_string();
    if load::is_stream(path) {
        // A pipe or a FIFO is read once, whole (a peek would consume its first bytes); a
        // stream whose first bytes are no capture's is refused before it is read on.
        let bytes = load::read_stream(path, &mut |_| {})?;
        if load::detect(&bytes) == Some(FileKind::Sgpt) {
            let reader = read::from_bytes(bytes).map_err(|e| LoadError::Sgpt {
                message: format!("{file}: {e}"),
            })?;
            return Ok(of_sgpt(file, &reader, &mut on_progress));
        }
        let len = bytes.len() as u64;
        let options = options.clone().with_spans(false).with_summary_only(false);
        return Ok(of_imported(file, len, &load::from_bytes(bytes, &options)?));
    }
    // A directory, a device, an empty or unreadable file are refused here, as `load` does.
    let peeked = load::peek(path)?;
    if peeked.sgpt {
        let reader = open_reader(path)?;
        return Ok(of_sgpt(file, &reader, &mut on_progress));
    }
    let options = options.clone().with_spans(false).with_summary_only(false);
    let capture = load::open_with_progress(path, &options, &mut on_progress)?;
    Ok(of_imported(file, peeked.bytes, &capture))
}
