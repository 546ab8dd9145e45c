//! `/api/strip`'s bytes: every frame's strip facts as little-endian typed columns
//! (`framewise.inspector.strip/2`, specified byte for byte in docs/INSPECTOR.md, "The
//! strip's binary columns"). A column is as wide as its values need (4 bytes, else 8), so
//! an hour at 60 Hz is about 33 bytes a frame rather than 67 bytes of JSON, and the page
//! views the columns in place as typed arrays.
//!
//! Two sources write it: the loaded capture's frame table (complete), and, while that load
//! runs, the capture file's frame directory (framewise-analysis's [`FrameDirectory`]),
//! which holds no phase and no dropped-span count: those columns are then absent (width 0)
//! and the header says the strip is not complete, so the page says what it does not know
//! yet instead of drawing zeros.

use framewise_analysis::load::FrameDirectory;
use framewise_analysis::Capture;

/// The first 8 bytes.
pub(crate) const MAGIC: &[u8; 8] = b"FWSTRIP2";
/// Header bytes before the first column.
pub(crate) const HEADER_BYTES: usize = 48;
/// Header flag: the strip is the loaded capture's (phase and dropped spans present, the
/// hitch flags those of the hitch report the other documents serve).
pub(crate) const COMPLETE: u32 = 1;
/// The flags column's bits.
const HITCH: u8 = 1;
const PAUSED: u8 = 2;

/// The columns, in the order they are written; `None` for a column not known yet.
pub(crate) struct Columns<'a> {
    pub(crate) budget_ns: u64,
    pub(crate) index: &'a [u64],
    /// Absolute; written relative to the first row's.
    pub(crate) begin_ns: &'a [u64],
    pub(crate) period_ns: &'a [Option<u64>],
    pub(crate) work_ns: &'a [u64],
    pub(crate) gpu_ns: &'a [Option<u64>],
    pub(crate) hitch: &'a [bool],
    pub(crate) paused: &'a [bool],
    /// Per row, an index into `phase_names`.
    pub(crate) phase: Option<(&'a [Option<u32>], &'a [String])>,
    pub(crate) dropped_spans: Option<&'a [u64]>,
}

/// The strip of a loaded capture (`hitch`: the rows the hitch report flags).
pub(crate) fn of_capture(c: &Capture, hitch: &[bool]) -> Vec<u8> {
    let f = c.frames();
    let work: Vec<u64> = f.rows().map(|r| r.work_ns()).collect();
    let dropped: Vec<u64> = (0..f.len()).map(|r| c.dropped_spans_in(r)).collect();
    encode(&Columns {
        budget_ns: c.frame_budget_ns(),
        index: &f.index,
        begin_ns: &f.cpu_begin_ns,
        period_ns: &f.period_ns,
        work_ns: &work,
        gpu_ns: &f.gpu_ns,
        hitch,
        paused: &f.paused,
        phase: Some((&f.phase, c.phases())),
        dropped_spans: Some(&dropped),
    })
}

/// The strip a capture file's directory gives before its frames are loaded: no phase, no
/// dropped spans, not complete.
pub(crate) fn of_directory(d: &FrameDirectory) -> Vec<u8> {
    encode(&Columns {
        budget_ns: d.frame_budget_ns,
        index: &d.index,
        begin_ns: &d.cpu_begin_ns,
        period_ns: &d.period_ns,
        work_ns: &d.work_ns,
        gpu_ns: &d.gpu_ns,
        hitch: &d.hitch,
        paused: &d.paused,
        phase: None,
        dropped_spans: None,
    })
}

/// A column's width: 4 bytes when every value fits below `u32::MAX` (the all-ones value is
/// "none" in a nullable column), else 8.
fn width_of(values: impl Iterator<Item = u64>) -> u8 {
    let mut max = 0u64;
    for v in values {
        max = max.max(v);
    }
    if max < u64::from(u32::MAX) {
        4
    } else {
        8
    }
}

fn put(out: &mut Vec<u8>, width: u8, value: u64) {
    if width == 4 {
        // A width of 4 was chosen because every value fits.
        out.extend_from_slice(&u32::try_from(value).unwrap_or(u32::MAX).to_le_bytes());
    } else {
        out.extend_from_slice(&value.to_le_bytes());
    }
}

fn none_of(width: u8) -> u64 {
    if width == 4 {
        u64::from(u32::MAX)
    } else {
        u64::MAX
    }
}

fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Writes the header and the columns (layout: docs/INSPECTOR.md).
pub(crate) fn encode(c: &Columns<'_>) -> Vec<u8> {
    let rows = c.index.len();
    let first = c.begin_ns.first().copied().unwrap_or(0);
    let begin = || c.begin_ns.iter().map(move |&b| b.saturating_sub(first));
    let some = |col: &[Option<u64>]| col.iter().flatten().copied().collect::<Vec<_>>();
    let phase_names: &[String] = c.phase.map_or(&[], |(_, names)| names);
    let widths: [u8; 8] = [
        width_of(c.index.iter().copied()),
        width_of(begin()),
        width_of(some(c.period_ns).into_iter()),
        width_of(c.work_ns.iter().copied()),
        width_of(some(c.gpu_ns).into_iter()),
        1,
        if c.phase.is_some() { 4 } else { 0 },
        c.dropped_spans.map_or(0, |d| width_of(d.iter().copied())),
    ];
    let names_bytes: usize = phase_names.iter().map(|n| 4 + n.len()).sum();
    let mut out = Vec::with_capacity(HEADER_BYTES + rows * 40 + names_bytes + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&to_u32(rows).to_le_bytes());
    let flags = if c.phase.is_some() && c.dropped_spans.is_some() {
        COMPLETE
    } else {
        0
    };
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&c.budget_ns.to_le_bytes());
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&widths);
    out.extend_from_slice(&to_u32(phase_names.len()).to_le_bytes());
    out.extend_from_slice(&to_u32(names_bytes).to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_BYTES);

    let [w_index, w_begin, w_period, w_work, w_gpu, _, w_phase, w_dropped] = widths;
    for &v in c.index {
        put(&mut out, w_index, v);
    }
    pad8(&mut out);
    for v in begin() {
        put(&mut out, w_begin, v);
    }
    pad8(&mut out);
    for v in c.period_ns {
        put(&mut out, w_period, v.unwrap_or(none_of(w_period)));
    }
    pad8(&mut out);
    for &v in c.work_ns {
        put(&mut out, w_work, v);
    }
    pad8(&mut out);
    for v in c.gpu_ns {
        put(&mut out, w_gpu, v.unwrap_or(none_of(w_gpu)));
    }
    pad8(&mut out);
    for row in 0..rows {
        let hitch = c.hitch.get(row).copied().unwrap_or(false);
        let paused = c.paused.get(row).copied().unwrap_or(false);
        out.push((u8::from(hitch) * HITCH) | (u8::from(paused) * PAUSED));
    }
    pad8(&mut out);
    if let Some((phase, names)) = c.phase {
        for p in phase {
            // A phase id past the names (never from the loader) reads as none.
            let v = p.filter(|&p| (p as usize) < names.len());
            put(&mut out, w_phase, v.map_or(none_of(w_phase), u64::from));
        }
        pad8(&mut out);
    }
    if let Some(dropped) = c.dropped_spans {
        for &v in dropped {
            put(&mut out, w_dropped, v);
        }
        pad8(&mut out);
    }
    for name in phase_names {
        out.extend_from_slice(&to_u32(name.len()).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    out
}
