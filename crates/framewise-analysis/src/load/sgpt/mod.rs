//! The `.sgpt` loader: a thin adapter from `framewise-format`'s reader to the
//! [`CaptureBuilder`]. Frames are decoded and folded one at a time, so memory holds the
//! per-frame aggregates, not the spans (unless spans were asked for).
//!
//! GPU pass times are converted from ticks with the queue's `timestamp_period_ns` from
//! META and placed on the CPU axis at the frame's anchor (submit time when recorded, else
//! the frame's CPU end): a nominal placement; the durations are the GPU's own. The
//! conversion is [`framewise_format::derived::GpuTimes`], the one the writer's directory
//! uses, so a frame's GPU time here is its directory GPU duration.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use framewise_format::derived;
use framewise_format::model::{AdapterType, CaptureLevel, Frame, FrameEntry, SymId, SymbolTable};
use framewise_format::payload::FrameDecoder;
use framewise_format::read;

use crate::build::{push_frame_spans, CaptureBuilder, LoadOptions};
use crate::load::{no_progress, FrameReadError, LoadError, Progress, Reporter, Stage};
use crate::model::{
    AdapterKind, Capture, Defect, DefectKind, FrameSpans, SourceKind, SpanTable, TopologySummary,
};

mod convert;
mod names;

use convert::{Converter, FoldPath, GpuTally};
use names::{topology_detail, Ids, Names};

/// Loads an `.sgpt` file.
pub fn open(path: &Path, options: &LoadOptions) -> Result<Capture, LoadError> {
    open_reporting(path, options, &mut no_progress)
}

/// Opens an `.sgpt` file with the format crate's reader (by its directory when closed,
/// else by scanning).
pub(crate) fn open_reader(path: &Path) -> Result<read::Capture, LoadError> {
    read::open(path).map_err(|e| LoadError::Sgpt {
        message: format!("{}: {e}", path.display()),
    })
}

pub(crate) fn open_reporting(
    path: &Path,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, LoadError> {
    let reader = open_reader(path)?;
    Ok(adapt(&reader, options, progress))
}

/// Loads an `.sgpt` from bytes.
pub fn from_bytes(bytes: Vec<u8>, options: &LoadOptions) -> Result<Capture, LoadError> {
    from_bytes_reporting(bytes, options, &mut no_progress)
}

pub(crate) fn from_bytes_reporting(
    bytes: Vec<u8>,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, LoadError> {
    let reader = read::from_bytes(bytes).map_err(|e| LoadError::Sgpt {
        message: e.to_string(),
    })?;
    Ok(adapt(&reader, options, progress))
}

/// The analysis crate's defect for one the format crate's reader reported.
pub(crate) fn defect_of(d: &read::Defect) -> Defect {
    let message = d.to_string();
    match d {
        read::Defect::TruncatedTail { offset, bytes_lost } => {
            Defect::new(DefectKind::TruncatedTail, *bytes_lost, message).at(*offset)
        }
        read::Defect::Corrupt {
            offset,
            bytes_skipped,
        } => Defect::new(DefectKind::CorruptRange, *bytes_skipped, message).at(*offset),
        read::Defect::BadPayload { offset, .. } => {
            Defect::new(DefectKind::CorruptRange, 1, message).at(*offset)
        }
        read::Defect::UnresolvedSymbol { first_offset, .. } => {
            Defect::new(DefectKind::UnresolvedSymbol, 1, message).at(*first_offset)
        }
        read::Defect::Unclosed { end_offset } => {
            Defect::new(DefectKind::Unclosed, 1, message).at(*end_offset)
        }
        read::Defect::UnknownRecord { offset, .. } => {
            Defect::new(DefectKind::UnknownRecord, 1, message).at(*offset)
        }
        read::Defect::ConflictingSymbol { offset, .. } => {
            Defect::new(DefectKind::ConflictingSymbol, 1, message).at(*offset)
        }
        read::Defect::DirectoryUnusable { .. } => {
            Defect::new(DefectKind::DirectoryUnusable, 1, message)
        }
        read::Defect::MissingMeta => Defect::new(DefectKind::MissingMeta, 1, message),
        read::Defect::HeaderDamaged { .. } => {
            Defect::new(DefectKind::HeaderDamaged, 1, message).at(0)
        }
        read::Defect::TrailingBytes { offset, bytes } => {
            Defect::new(DefectKind::TrailingBytes, *bytes, message).at(*offset)
        }
        read::Defect::FramesMissing { count, .. } => {
            Defect::new(DefectKind::DroppedFrames, *count, message)
        }
        // One frame lost with its record.
        read::Defect::FrameUnreadable { index, offset, .. } => {
            Defect::new(DefectKind::CorruptRange, 1, message)
                .at(*offset)
                .of_frame(*index)
        }
        _ => Defect::new(DefectKind::Other, 1, message),
    }
}

fn adapt(r: &read::Capture, options: &LoadOptions, progress: &mut dyn FnMut(Progress)) -> Capture {
    adapt_with(r, options, progress, FoldPath::AsDecoded)
}

fn adapt_with(
    r: &read::Capture,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
    fold: FoldPath,
) -> Capture {
    adapt_full(r, options, progress, fold, false).capture
}

/// A load, and what it learnt that re-reading one of its frames needs.
struct Adapted {
    capture: Capture,
    ids: Ids,
    periods: HashMap<SymId, f64>,
    /// Per row: its frame record's offset and length (only when asked for).
    rows: Vec<(u64, u64)>,
}

fn adapt_full(
    r: &read::Capture,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
    fold: FoldPath,
    keep_rows: bool,
) -> Adapted {
    let mut b = CaptureBuilder::from_options(SourceKind::Sgpt, options);
    b.meta_mut().source_version = Some(u32::from(r.header().format_version));
    let mut periods: HashMap<SymId, f64> = HashMap::new();
    if let Some(meta) = r.meta() {
        let m = b.meta_mut();
        m.level = Some(CaptureLevel::from_u8(meta.capture_level).map_or_else(
            || format!("level {}", meta.capture_level),
            |l| l.name().to_owned(),
        ));
        m.build = (!meta.build_id.is_empty()).then(|| meta.build_id.clone());
        m.session = Some(meta.session_id.iter().map(|b| format!("{b:02x}")).collect());
        m.frame_budget_ns = meta.frame_budget_ns;
        m.situation.clone_from(&meta.situation);
        m.settings.clone_from(&meta.settings);
        if let Some(a) = &meta.adapter {
            m.adapter = match a.adapter_type {
                AdapterType::Hardware => AdapterKind::Hardware,
                AdapterType::Software => AdapterKind::Software,
                AdapterType::Unknown => AdapterKind::Unknown,
            };
            let name = [a.vendor.as_str(), a.device.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            m.adapter_name = (!name.is_empty()).then_some(name);
        }
        for c in &meta.gpu_clocks {
            if let Some(period) = derived::declared_period(c.timestamp_period_ns) {
                periods.insert(c.queue, period);
            }
        }
    }
    for d in r.defects() {
        b.defect(defect_of(d));
    }
    for t in r.topologies() {
        b.topology(TopologySummary {
            id: t.id,
            passes: u32::try_from(t.passes.len()).unwrap_or(u32::MAX),
            culled_passes: u32::try_from(t.passes.iter().filter(|p| p.culled).count())
                .unwrap_or(u32::MAX),
            resources: u32::try_from(t.resources.len()).unwrap_or(u32::MAX),
            edges: u32::try_from(t.edges.len()).unwrap_or(u32::MAX),
            frames: 0,
        });
    }

    let mut names = Names {
        symbols: r.symbols(),
        ids: Ids::default(),
    };
    for t in r.topologies() {
        let detail = topology_detail(t, &mut names);
        b.topology_detail(detail);
    }

    // Sampled counter tracks: each frame takes the last sample in [begin, next begin).
    let mut tracks: Vec<(u32, Vec<(u64, i64)>)> = Vec::new();
    for t in r.counter_tracks() {
        match t {
            Ok(track) => {
                let id = names.counter(&mut b, track.counter);
                let mut samples: Vec<(u64, i64)> =
                    track.samples.iter().map(|s| (s.at_ns, s.value)).collect();
                samples.sort_by_key(|s| s.0);
                match tracks.iter_mut().find(|(c, _)| *c == id) {
                    Some((_, existing)) => {
                        existing.extend(samples);
                        existing.sort_by_key(|s| s.0);
                    }
                    None => tracks.push((id, samples)),
                }
            }
            Err(d) => b.defect(defect_of(&d)),
        }
    }
    if !tracks.is_empty() {
        b.note("sampled counter tracks are read per frame: each frame takes the last sample before the next frame begins");
    }
    let begins: Vec<u64> = r.frame_entries().map(|e| e.cpu_begin_ns).collect();
    let mut cursors = vec![0usize; tracks.len()];

    let mut tally = GpuTally::default();
    #[cfg(test)]
    if fold == FoldPath::ByBuilder {
        b.fold_with_stack_only();
    }
    let mut conv = Converter::new(options.with_spans, fold);
    let mut rows: Vec<(u64, u64)> = Vec::with_capacity(if keep_rows { r.frame_count() } else { 0 });
    let mut decoder = FrameDecoder::new();
    let mut frame = Frame::default();
    let mut gaps = IndexGaps::default();
    let mut reporter = Reporter::start(progress, Stage::Frames, r.frame_count() as u64);
    r.read_frames_into(
        0..r.frame_count(),
        &mut decoder,
        &mut frame,
        |i, decoded| {
            reporter.update(i as u64);
            match decoded {
                Ok(frame) => {
                    gaps.see(frame.index, frame.dropped_frames_before);
                    if keep_rows {
                        let e = r.frame_entry(i).unwrap_or_default();
                        rows.push((e.offset, e.length));
                    }
                    conv.convert(frame, &mut b, &mut names, &periods, &mut tally);
                    let f = &mut conv.input;
                    let next = begins.get(i + 1).copied().unwrap_or(u64::MAX);
                    for (t, (id, samples)) in tracks.iter().enumerate() {
                        let mut last = None;
                        while let Some(&(at, v)) = samples.get(cursors[t]) {
                            if at >= next {
                                break;
                            }
                            cursors[t] += 1;
                            last = Some(v);
                        }
                        if let Some(v) = last {
                            if !f.counters.iter().any(|(c, _)| c == id) {
                                f.counters.push((*id, v));
                            }
                        }
                    }
                    match fold {
                        FoldPath::AsDecoded => b.push_frame_folded(f, &mut conv.scopes),
                        FoldPath::ByBuilder | FoldPath::SpansOnly => b.push_frame(f),
                    }
                }
                Err(d) => {
                    if let read::Defect::FrameUnreadable { index, .. } = &d {
                        gaps.unreadable(*index);
                    }
                    b.defect(defect_of(&d));
                }
            }
        },
    );
    reporter.finish();
    if let Some(defect) = gaps.defect() {
        b.defect(defect);
    }

    if tally.no_period > 0 {
        b.defect(Defect::new(
            DefectKind::Other,
            tally.no_period,
            format!("{} GPU pass timings are on a queue whose timestamp period META does not declare; left untimed", tally.no_period),
        ));
    }
    if tally.reversed > 0 {
        b.defect(Defect::new(
            DefectKind::Other,
            tally.reversed,
            format!(
                "{} GPU pass timings end before they begin (as the driver reported); left untimed",
                tally.reversed
            ),
        ));
    }
    if !names.ids.unresolved.is_empty() {
        let mut ids: Vec<SymId> = names.ids.unresolved.iter().copied().collect();
        ids.sort_unstable();
        let shown: Vec<String> = ids.iter().take(8).map(|i| format!("#{i}")).collect();
        b.defect(Defect::new(
            DefectKind::UnresolvedSymbol,
            ids.len() as u64,
            format!(
                "{} symbols are defined by no intact record ({}); they are shown by id",
                ids.len(),
                shown.join(", ")
            ),
        ));
    }
    Adapted {
        capture: b.finish(),
        ids: names.ids,
        periods,
        rows,
    }
}

/// Frame indices the file skips that no drop accounts for. The recorder counts frames from 0
/// and a frame record says how many frames the writer dropped just before it, so between two
/// frames in index order (and before the first) every index is either read, unreadable (a
/// defect of its own) or dropped; one that is none of these was removed from the file, or lost
/// with bytes a scan could not tell from a clean record boundary. The indices are judged in
/// index order, not file order: frames the file holds out of order (the builder's
/// `frame-order` defect) are all there, and none of them is missing.
#[derive(Default)]
struct IndexGaps {
    /// Every frame seen: its index, the drops its record declares before it, and whether it
    /// read (`None` for a frame listed but unreadable, whose drop count is in its record).
    seen: Vec<(u64, Option<u64>)>,
}

impl IndexGaps {
    fn see(&mut self, index: u64, dropped_before: u64) {
        self.seen.push((index, Some(dropped_before)));
    }

    /// A frame the directory lists whose record does not read: lost, and reported as such,
    /// so not counted again; the gap before it is not judged (its drop count is in the record).
    fn unreadable(&mut self, index: u64) {
        self.seen.push((index, None));
    }

    /// How many indices are missing, and the index read after the first gap.
    fn missing(self) -> (u64, Option<u64>) {
        let mut seen = self.seen;
        // Stable: two records of one index keep their file order.
        seen.sort_by_key(|&(index, _)| index);
        let (mut missing, mut first_after_gap) = (0u64, None);
        let mut last: Option<u64> = None;
        for (index, dropped_before) in seen {
            let expected = match last {
                // The same index twice: not a gap.
                Some(last) if index <= last => continue,
                Some(last) => last + 1,
                None => 0,
            };
            last = Some(index);
            let Some(dropped_before) = dropped_before else {
                continue;
            };
            let skipped = (index - expected).saturating_sub(dropped_before);
            if skipped > 0 {
                missing = missing.saturating_add(skipped);
                first_after_gap.get_or_insert(index);
            }
        }
        (missing, first_after_gap)
    }

    fn defect(self) -> Option<Defect> {
        let (missing, first_after_gap) = self.missing();
        let at = first_after_gap?;
        Some(Defect::new(
            DefectKind::DroppedFrames,
            missing,
            format!(
                "{missing} frame indices are missing with no drop recorded for them (the first gap before frame {at}): those frames are not in the file"
            ),
        ))
    }
}

/// Loads an `.sgpt` file without its spans (whatever `options.with_spans` says) and
/// keeps it open, with where each row's frame record lies, to read one frame's spans
/// again on demand ([`FrameFile::frame_spans`]).
pub(crate) fn open_with_frames(
    path: &Path,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Capture, FrameFile), LoadError> {
    // Opened before the reader: should the path be replaced in between, the re-reads
    // still come from the file that was opened, and the checks below say it differs.
    let file = std::fs::File::open(path).map_err(|source| LoadError::Io {
        path: path.to_owned(),
        source,
    })?;
    let reader = open_reader(path)?;
    let options = options.clone().with_spans(false);
    let a = adapt_full(&reader, &options, progress, FoldPath::AsDecoded, true);
    Ok((
        a.capture,
        FrameFile {
            path: path.to_owned(),
            file,
            rows: a.rows,
            ids: a.ids,
            periods: a.periods,
        },
    ))
}

/// An `.sgpt` file kept open after its load, to read one frame's spans on demand: the
/// frame's record is read again at its offset through framewise-format's reader and
/// converted as the load converted it (the same name maps, the same conversion, the
/// same span rows: [`crate::build::push_frame_spans`]).
pub(crate) struct FrameFile {
    path: PathBuf,
    file: std::fs::File,
    /// Per row: the offset and length of its frame record.
    rows: Vec<(u64, u64)>,
    ids: Ids,
    periods: HashMap<SymId, f64>,
}

impl FrameFile {
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Frame `row`'s spans; `capture` is the capture this file was loaded as.
    pub(crate) fn frame_spans(
        &self,
        capture: &Capture,
        row: usize,
    ) -> Result<FrameSpans, FrameReadError> {
        let frames = capture.frames();
        let (Some(&(offset, length)), Some(&index), Some(&begin_ns)) = (
            self.rows.get(row),
            frames.index.get(row),
            frames.cpu_begin_ns.get(row),
        ) else {
            return Err(FrameReadError::NoSuchRow {
                row,
                frames: capture.frame_count().min(self.rows.len()),
            });
        };
        let changed = |reason: String| FrameReadError::Changed {
            path: self.path.clone(),
            row,
            index,
            reason,
        };
        let entry = FrameEntry {
            index,
            offset,
            length,
            ..FrameEntry::default()
        };
        // A file cut shorter since: say so, rather than what a short read decodes as. Looked
        // at before the read and again after a read that failed (the file may be cut while
        // it is read).
        let past_end = || {
            let now = self.file.metadata().map(|m| m.len()).ok()?;
            (offset.saturating_add(length) > now).then(|| {
                changed(format!(
                    "the file is now {now} bytes, and the record at offset {offset} ({length} bytes) lies past its end"
                ))
            })
        };
        if let Some(cut) = past_end() {
            return Err(cut);
        }
        let mut frame = Frame::default();
        read::read_frame_at(&self.file, entry, &mut FrameDecoder::new(), &mut frame)
            .map_err(|d| past_end().unwrap_or_else(|| changed(d.to_string())))?;
        if frame.index != index || frame.cpu_begin_ns != begin_ns {
            return Err(changed(format!(
                "the record at offset {offset} is frame {} beginning at {} ns, not frame {index} beginning at {begin_ns} ns",
                frame.index, frame.cpu_begin_ns
            )));
        }
        // Every name this frame uses was interned when it was loaded: resolved through the
        // load's maps, none reaches this builder, and should one (a different file now),
        // its id would mean nothing in `capture`.
        let symbols = SymbolTable::new();
        let mut names = Names {
            symbols: &symbols,
            ids: self.ids.clone(),
        };
        let mut b = CaptureBuilder::new(SourceKind::Sgpt, true);
        let mut conv = Converter::new(true, FoldPath::SpansOnly);
        conv.convert(
            &frame,
            &mut b,
            &mut names,
            &self.periods,
            &mut GpuTally::default(),
        );
        if !b.interned_nothing() {
            return Err(changed(
                "the record names symbols the loaded file did not".to_owned(),
            ));
        }
        let mut table = SpanTable::default();
        push_frame_spans(&mut table, &conv.input);
        Ok(table.frame_spans(0))
    }
}

#[cfg(test)]
mod tests;
