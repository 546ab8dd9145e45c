//! `.litecap` v1–v4, lite-profiler's capture buffer, read from its published layout.
//!
//! Little-endian throughout:
//!
//! | field | type |
//! |---|---|
//! | magic | `LCAP` |
//! | version | u8, 1–4 |
//! | count | u32, frames per buffer |
//! | phases | u8, phase buffers |
//! | frame times | count × f32 ms, oldest first |
//! | phase times | phases × count × f32 ms |
//! | v2+: tags | per phase: u8 length + UTF-8 |
//! | v2+: meta | u32 length + UTF-8 JSON (0 = none) |
//! | v3+: counters | u8 n, n × count × f32, then n tags (u8 length + UTF-8) |
//! | v4: timeline | u32 n + n × f64 frame starts (ms); u8 span lanes: tag, u32 pairs, pairs × f64 t0, pairs × f64 t1; u8 instant lanes: tag, u32 marks, marks × f64 |
//!
//! Every read is bounds-checked and every length is checked against the bytes that remain
//! before anything is allocated. A `.litecap` frame time (beginFrame → endFrame) is a work
//! time; it is also taken as the period, and the capture's notes say so. A counter counts
//! what a frame did (lite-profiler's are per-frame command counts: draw calls, floats
//! uploaded), so a value below 0 is no measurement, as one that is not finite.
//!
//! The header and the lengths in the file size it whole ([`sized_len`]): a reader of a
//! stream knows where a `.litecap` ends without reading on.

use crate::build::{
    float_raw, CaptureBuilder, FrameInput, LaneInput, LoadOptions, MarkInput, SpanInput,
};
use crate::load::{no_progress, Progress, Reporter, Stage};
use crate::model::{Capture, CounterKind, Defect, DefectKind, Numeric, SourceKind};

/// The magic bytes.
pub const MAGIC: [u8; 4] = *b"LCAP";
/// Newest version read.
pub const MAX_VERSION: u8 = 4;
/// lite-profiler's own limits, enforced the same way.
pub const MAX_FRAMES: u32 = 1 << 20;
/// Most phases.
pub const MAX_PHASES: u8 = 64;
/// Most counters.
pub const MAX_COUNTERS: u8 = 64;
/// Most span or instant lanes.
pub const MAX_LANES: u8 = 64;
/// Most samples in one timeline array.
pub const MAX_TIMELINE_SAMPLES: u32 = 1 << 20;
/// The longest frame time read as one, ms (an hour); a longer one is a damaged value.
pub const MAX_FRAME_MS: f64 = 3_600_000.0;
/// The smallest `budgetMs` in the meta read as a frame budget (10 kHz).
pub const BUDGET_MS_MIN: f64 = 0.1;
/// The largest `budgetMs` read as a frame budget (a frame of 10 s).
pub const BUDGET_MS_MAX: f64 = 10_000.0;

/// Why a `.litecap` buffer could not be decoded.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes than the 10-byte header.
    #[error("litecap: {len} bytes is too short for the 10-byte header")]
    TooShort {
        /// Bytes available.
        len: usize,
    },
    /// Not `LCAP`.
    #[error("litecap: bad magic {found:02x?} (expected \"LCAP\")")]
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// A version this reader does not know.
    #[error("litecap: unsupported version {version} (supported 1..={MAX_VERSION})")]
    UnsupportedVersion {
        /// The version byte.
        version: u8,
    },
    /// A count above lite-profiler's own limit.
    #[error("litecap: {what} {value} exceeds the limit {limit}")]
    Limit {
        /// What was counted.
        what: &'static str,
        /// The count found.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// The buffer ends before a section does.
    #[error("litecap: truncated {what} at offset {offset}: need {need} bytes, {have} remain")]
    Truncated {
        /// The section.
        what: &'static str,
        /// Where it starts.
        offset: usize,
        /// Bytes it needs.
        need: u64,
        /// Bytes that remain.
        have: usize,
    },
}

/// A span lane of the v4 timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanLane {
    /// The lane's tag.
    pub tag: String,
    /// Span starts, ms (performance.now()).
    pub t0_ms: Vec<f64>,
    /// Span ends, ms.
    pub t1_ms: Vec<f64>,
}

/// An instant lane of the v4 timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct InstantLane {
    /// The lane's tag.
    pub tag: String,
    /// Mark times, ms.
    pub times_ms: Vec<f64>,
}

/// The v4 timeline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Absolute frame starts, ms.
    pub frame_starts_ms: Vec<f64>,
    /// Span lanes.
    pub spans: Vec<SpanLane>,
    /// Instant lanes.
    pub instants: Vec<InstantLane>,
}

/// A decoded `.litecap` buffer, as laid out.
#[derive(Clone, Debug, PartialEq)]
pub struct Litecap {
    /// Format version, 1–4.
    pub version: u8,
    /// Frame times, ms, oldest first.
    pub frames_ms: Vec<f32>,
    /// Phase tags (v1 has none; they are named `phase0`, `phase1`, … here).
    pub phase_tags: Vec<String>,
    /// Phase times per phase, ms, oldest first.
    pub phases_ms: Vec<Vec<f32>>,
    /// The meta JSON blob (v2+), if present and valid.
    pub meta: Option<serde_json::Value>,
    /// The meta blob was present but not valid JSON.
    pub meta_invalid: bool,
    /// Counter tags (v3+).
    pub counter_tags: Vec<String>,
    /// Counter samples per counter, oldest first.
    pub counters: Vec<Vec<f32>>,
    /// The v4 timeline.
    pub timeline: Option<Timeline>,
    /// Bytes after the last section.
    pub trailing_bytes: usize,
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }

    fn take(&mut self, what: &'static str, n: u64) -> Result<&'a [u8], DecodeError> {
        let have = self.remaining();
        let truncated = DecodeError::Truncated {
            what,
            offset: self.at,
            need: n,
            have,
        };
        let n_usize = usize::try_from(n).map_err(|_| truncated.clone())?;
        if n_usize > have {
            return Err(truncated);
        }
        let out = self
            .bytes
            .get(self.at..self.at + n_usize)
            .ok_or(truncated)?;
        self.at += n_usize;
        Ok(out)
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, DecodeError> {
        Ok(self.take(what, 1)?.first().copied().unwrap_or(0))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, DecodeError> {
        let b = self.take(what, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn f32s(&mut self, what: &'static str, n: u32) -> Result<Vec<f32>, DecodeError> {
        let b = self.take(what, u64::from(n) * 4)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    fn f64s(&mut self, what: &'static str, n: u32) -> Result<Vec<f64>, DecodeError> {
        let b = self.take(what, u64::from(n) * 8)?;
        Ok(b.chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect())
    }

    fn tag(&mut self, what: &'static str) -> Result<String, DecodeError> {
        let len = self.u8(what)?;
        let b = self.take(what, u64::from(len))?;
        // The reference decoder's TextDecoder replaces invalid UTF-8 too.
        Ok(String::from_utf8_lossy(b).into_owned())
    }
}

fn limit(what: &'static str, value: u64, limit: u64) -> Result<(), DecodeError> {
    if value > limit {
        Err(DecodeError::Limit { what, value, limit })
    } else {
        Ok(())
    }
}

/// Decodes a `.litecap` buffer. Never panics; never allocates more than the buffer holds.
pub fn decode(bytes: &[u8]) -> Result<Litecap, DecodeError> {
    if bytes.len() < 10 {
        return Err(DecodeError::TooShort { len: bytes.len() });
    }
    let mut r = Reader { bytes, at: 0 };
    let magic = r.take("magic", 4)?;
    if magic != MAGIC {
        return Err(DecodeError::BadMagic {
            found: [magic[0], magic[1], magic[2], magic[3]],
        });
    }
    let version = r.u8("version")?;
    if !(1..=MAX_VERSION).contains(&version) {
        return Err(DecodeError::UnsupportedVersion { version });
    }
    let count = r.u32("frame count")?;
    limit("frame count", u64::from(count), u64::from(MAX_FRAMES))?;
    let phase_count = r.u8("phase count")?;
    limit("phase count", u64::from(phase_count), u64::from(MAX_PHASES))?;

    let frames_ms = r.f32s("frame times", count)?;
    let mut phases_ms = Vec::with_capacity(usize::from(phase_count));
    for _ in 0..phase_count {
        phases_ms.push(r.f32s("phase times", count)?);
    }

    let mut phase_tags: Vec<String> = (0..phase_count).map(|p| format!("phase{p}")).collect();
    let mut meta = None;
    let mut meta_invalid = false;
    if version >= 2 {
        for tag in phase_tags.iter_mut() {
            *tag = r.tag("phase tag")?;
        }
        let len = r.u32("meta length")?;
        let blob = r.take("meta bytes", u64::from(len))?;
        if !blob.is_empty() {
            match serde_json::from_slice(blob) {
                Ok(v) => meta = Some(v),
                Err(_) => meta_invalid = true,
            }
        }
    }

    let mut counter_tags = Vec::new();
    let mut counters = Vec::new();
    if version >= 3 {
        let n = r.u8("counter count")?;
        limit("counter count", u64::from(n), u64::from(MAX_COUNTERS))?;
        for _ in 0..n {
            counters.push(r.f32s("counter samples", count)?);
        }
        for _ in 0..n {
            counter_tags.push(r.tag("counter tag")?);
        }
    }

    let mut timeline = None;
    if version >= 4 {
        let mut t = Timeline::default();
        let n = r.u32("frame boundary count")?;
        limit(
            "frame boundary count",
            u64::from(n),
            u64::from(MAX_TIMELINE_SAMPLES),
        )?;
        t.frame_starts_ms = r.f64s("frame boundaries", n)?;
        let lanes = r.u8("span lane count")?;
        limit("span lane count", u64::from(lanes), u64::from(MAX_LANES))?;
        for _ in 0..lanes {
            let tag = r.tag("span tag")?;
            let pairs = r.u32("span pair count")?;
            limit(
                "span pair count",
                u64::from(pairs),
                u64::from(MAX_TIMELINE_SAMPLES),
            )?;
            let t0_ms = r.f64s("span t0", pairs)?;
            let t1_ms = r.f64s("span t1", pairs)?;
            t.spans.push(SpanLane { tag, t0_ms, t1_ms });
        }
        let lanes = r.u8("instant lane count")?;
        limit("instant lane count", u64::from(lanes), u64::from(MAX_LANES))?;
        for _ in 0..lanes {
            let tag = r.tag("instant tag")?;
            let marks = r.u32("instant mark count")?;
            limit(
                "instant mark count",
                u64::from(marks),
                u64::from(MAX_TIMELINE_SAMPLES),
            )?;
            let times_ms = r.f64s("instant times", marks)?;
            t.instants.push(InstantLane { tag, times_ms });
        }
        timeline = Some(t);
    }

    Ok(Litecap {
        version,
        frames_ms,
        phase_tags,
        phases_ms,
        meta,
        meta_invalid,
        counter_tags,
        counters,
        timeline,
        trailing_bytes: r.remaining(),
    })
}

/// How far a `.litecap`'s first bytes size it ([`sized_len`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SizedLen {
    /// Its whole length in bytes, every section sized: what follows is no part of it.
    Whole(u64),
    /// Sizing it on needs at least this many bytes (a length stored further on).
    Needs(u64),
    /// The bytes are no `.litecap` this reader decodes (a bad magic, version or count):
    /// reading on changes nothing.
    Refused,
}

/// The length of the `.litecap` that `bytes` begins, as its header and the lengths stored
/// in it size it, without reading or allocating its sections: [`SizedLen::Needs`] when a
/// length that sizes it lies beyond `bytes`. The limits are [`decode`]'s, so a `.litecap`
/// is never sized past about 2.2 GB plus its meta blob (a u32 length).
pub fn sized_len(bytes: &[u8]) -> SizedLen {
    struct Walk<'a> {
        bytes: &'a [u8],
        at: u64,
    }
    impl Walk<'_> {
        fn take(&mut self, n: u64) -> Result<&[u8], SizedLen> {
            let end = self.at.saturating_add(n);
            let got = usize::try_from(self.at)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(a, z)| self.bytes.get(a..z))
                .ok_or(SizedLen::Needs(end))?;
            self.at = end;
            Ok(got)
        }
        fn u8(&mut self) -> Result<u8, SizedLen> {
            Ok(self.take(1)?.first().copied().unwrap_or(0))
        }
        fn u32(&mut self) -> Result<u32, SizedLen> {
            let b = self.take(4)?;
            Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        fn skip(&mut self, n: u64) {
            self.at = self.at.saturating_add(n);
        }
        fn tag(&mut self) -> Result<(), SizedLen> {
            let len = self.u8()?;
            self.skip(u64::from(len));
            Ok(())
        }
        fn counted(&mut self, limit: u64) -> Result<u64, SizedLen> {
            let n = u64::from(self.u32()?);
            if n > limit {
                return Err(SizedLen::Refused);
            }
            Ok(n)
        }
        fn lanes(&mut self) -> Result<u8, SizedLen> {
            let n = self.u8()?;
            if n > MAX_LANES {
                return Err(SizedLen::Refused);
            }
            Ok(n)
        }
    }
    let walk = |w: &mut Walk| -> Result<u64, SizedLen> {
        if w.take(4)? != MAGIC {
            return Err(SizedLen::Refused);
        }
        let version = w.u8()?;
        if !(1..=MAX_VERSION).contains(&version) {
            return Err(SizedLen::Refused);
        }
        let count = w.counted(u64::from(MAX_FRAMES))?;
        let phases = w.u8()?;
        if phases > MAX_PHASES {
            return Err(SizedLen::Refused);
        }
        w.skip(count * 4 * (1 + u64::from(phases)));
        if version >= 2 {
            for _ in 0..phases {
                w.tag()?;
            }
            let meta = w.u32()?;
            w.skip(u64::from(meta));
        }
        if version >= 3 {
            let n = w.u8()?;
            if n > MAX_COUNTERS {
                return Err(SizedLen::Refused);
            }
            w.skip(u64::from(n) * count * 4);
            for _ in 0..n {
                w.tag()?;
            }
        }
        if version >= 4 {
            let boundaries = w.counted(u64::from(MAX_TIMELINE_SAMPLES))?;
            w.skip(boundaries * 8);
            for _ in 0..w.lanes()? {
                w.tag()?;
                let pairs = w.counted(u64::from(MAX_TIMELINE_SAMPLES))?;
                w.skip(pairs * 16);
            }
            for _ in 0..w.lanes()? {
                w.tag()?;
                let marks = w.counted(u64::from(MAX_TIMELINE_SAMPLES))?;
                w.skip(marks * 8);
            }
        }
        Ok(w.at)
    };
    match walk(&mut Walk { bytes, at: 0 }) {
        Ok(len) => SizedLen::Whole(len),
        Err(e) => e,
    }
}

/// Milliseconds (f64) to ns, when finite and non-negative.
fn ms_to_ns(ms: f64) -> Option<u64> {
    if (0.0..1.8e13).contains(&ms) {
        Some((ms * 1e6).round() as u64)
    } else {
        None
    }
}

/// Imports a `.litecap` buffer as a capture.
pub fn import(bytes: &[u8], options: &LoadOptions) -> Result<Capture, DecodeError> {
    import_reporting(bytes, options, &mut no_progress)
}

pub(crate) fn import_reporting(
    bytes: &[u8],
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Capture, DecodeError> {
    let lc = decode(bytes)?;
    Ok(build_reporting(&lc, options, progress))
}

/// Builds a capture from a decoded `.litecap`.
pub fn build(lc: &Litecap, options: &LoadOptions) -> Capture {
    build_reporting(lc, options, &mut no_progress)
}

fn build_reporting(
    lc: &Litecap,
    options: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Capture {
    let mut b = CaptureBuilder::from_options(SourceKind::Litecap, options);
    b.meta_mut().source_version = Some(u32::from(lc.version));
    b.note("litecap frame times are work times (beginFrame to endFrame); each is also taken as the frame's period");
    if lc.version == 1 {
        b.note("litecap v1 carries no phase tags; phases are named phase0, phase1, ...");
    }
    if let Some(meta) = &lc.meta {
        match meta.get("budgetMs") {
            None => {}
            Some(v) => match v.as_f64().filter(|ms| (BUDGET_MS_MIN..=BUDGET_MS_MAX).contains(ms)) {
                Some(ms) => b.meta_mut().frame_budget_ns = ms_to_ns(ms),
                // A budget no game has (0, a day, a string) would make every frame a hitch,
                // or none: the default budget is kept, and the note says so.
                None => b.note(format!(
                    "litecap meta budgetMs {v} is not a frame budget ({BUDGET_MS_MIN} to {BUDGET_MS_MAX} ms); ignored"
                )),
            },
        }
        let label = ["label", "engine", "build"]
            .iter()
            .filter_map(|k| {
                meta.get(*k)
                    .and_then(|v| v.as_str())
                    .map(|v| format!("{k}={v}"))
            })
            .collect::<Vec<_>>();
        if let Some(build) = meta.get("build").and_then(|v| v.as_str()) {
            b.meta_mut().build = Some(build.to_owned());
        }
        if !label.is_empty() {
            b.note(format!("litecap meta: {}", label.join(", ")));
        }
    }
    if lc.meta_invalid {
        b.defect(Defect::new(
            DefectKind::Importer,
            1,
            "litecap meta blob is not valid JSON; ignored",
        ));
    }
    if lc.trailing_bytes > 0 {
        // lite-profiler writes exactly the bytes it sized: more is a damaged count (frames
        // past it unread) or two files joined, so frames may be missing.
        b.defect(Defect::new(
            DefectKind::CorruptRange,
            lc.trailing_bytes as u64,
            format!(
                "{} bytes after the last litecap section (lite-profiler writes none: a damaged frame count or files joined); ignored, so frames may be missing",
                lc.trailing_bytes
            ),
        ));
    }
    // lite-profiler's timeline-only capture: one stub frame (0 ms, no phase or counter), its
    // frames in the timeline's boundaries, which this reader does not make frames of.
    if let (1, Some(t)) = (lc.frames_ms.len(), &lc.timeline) {
        let stub = lc.frames_ms.first().is_some_and(|&ms| ms == 0.0)
            && lc.phases_ms.iter().all(|p| p.iter().all(|&v| v == 0.0))
            && lc.counters.iter().all(|c| c.iter().all(|&v| v == 0.0));
        if stub && t.frame_starts_ms.len() > 1 {
            b.defect(Defect::new(
                DefectKind::DroppedFrames,
                t.frame_starts_ms.len() as u64,
                format!(
                    "a timeline-only litecap: its {} frames are in the timeline, which is not read as frames; only its stub frame (0 ms) was read",
                    t.frame_starts_ms.len()
                ),
            ));
        }
    }

    let scopes: Vec<_> = lc.phase_tags.iter().map(|t| b.scope(t, "", 0)).collect();
    let counters: Vec<_> = lc
        .counter_tags
        .iter()
        .zip(&lc.counters)
        .map(|(tag, samples)| {
            let integral = samples
                .iter()
                .all(|v| v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15);
            let numeric = if integral {
                Numeric::Integer
            } else {
                Numeric::Float
            };
            (b.counter(tag, CounterKind::Sum, numeric), numeric)
        })
        .collect();
    if !counters.is_empty() {
        b.note("litecap counters do not declare a kind; they are read as per-frame sums");
    }

    // Frame begins: from the timeline when it has a boundary per frame (aligned on the most
    // recent), else the running sum of frame times, marked as not measured.
    let count = lc.frames_ms.len();
    let starts: Option<&[f64]> = lc.timeline.as_ref().and_then(|t| {
        let n = t.frame_starts_ms.len();
        (n >= count && count > 0).then(|| t.frame_starts_ms.get(n - count..).unwrap_or(&[]))
    });
    // The boundaries that are times: finite and in order.
    let usable: Vec<Option<f64>> = starts.map(usable_boundaries).unwrap_or_default();
    // The first usable boundary is the origin: a damaged first one does not make it 0.
    let first_usable = usable.iter().position(Option::is_some);
    let origin_ms = first_usable
        .and_then(|k| usable.get(k).copied().flatten())
        .unwrap_or(0.0);
    // Frames before the first usable boundary run back to back up to it, from 0.
    let lead_ns = first_usable.map_or(0, |k| {
        lc.frames_ms
            .iter()
            .take(k)
            .filter_map(|&ms| work_ns(ms))
            .fold(0u64, u64::saturating_add)
    });
    let rel = |ms: f64| ms_to_ns(ms - origin_ms).map(|ns| ns.saturating_add(lead_ns));
    let frame_begin_ns: Vec<Option<u64>> = usable.iter().map(|v| v.and_then(rel)).collect();
    let unknown_bounds = frame_begin_ns.iter().filter(|v| v.is_none()).count() as u64;
    // Spans (and marks) lost on import: not placed in any frame.
    let mut spans_lost = LostItems::default();
    let mut marks_lost = LostItems::default();
    match (&lc.timeline, starts) {
        (Some(t), Some(_)) => {
            if t.frame_starts_ms.len() != count {
                b.note(format!(
                    "litecap timeline has {} frame boundaries for {count} frames; aligned on the most recent",
                    t.frame_starts_ms.len()
                ));
            }
            if unknown_bounds == count as u64 {
                b.note("litecap timeline has no frame boundary that is a time; frame begins are not measured");
                b.meta_mut().clock_measured = false;
            }
        }
        (Some(t), None) => {
            b.note(format!(
                "litecap timeline has {} frame boundaries for {count} frames; frame begins are not measured",
                t.frame_starts_ms.len()
            ));
            b.meta_mut().clock_measured = false;
            // Without a boundary per frame, no span or mark can be placed in its frame.
            if count > 0 {
                spans_lost.no_bounds = t.spans.iter().map(|l| l.t0_ms.len() as u64).sum();
                marks_lost.no_bounds = t.instants.iter().map(|l| l.times_ms.len() as u64).sum();
            }
        }
        (None, _) => b.meta_mut().clock_measured = false,
    }

    // Timeline spans and marks, assigned to frames by time.
    let threads: Vec<_> = lc
        .timeline
        .iter()
        .flat_map(|t| t.spans.iter())
        .map(|l| b.thread(&l.tag))
        .collect();
    let span_scopes: Vec<_> = lc
        .timeline
        .iter()
        .flat_map(|t| t.spans.iter())
        .map(|l| b.scope(&l.tag, "", 0))
        .collect();
    let mark_names: Vec<_> = lc
        .timeline
        .iter()
        .flat_map(|t| t.instants.iter())
        .map(|l| b.mark_name(&l.tag))
        .collect();
    // Per lane: spans sorted by start, with a cursor per lane. Only a timeline with a
    // boundary per frame, one of them a time, places any.
    let mut lane_spans: Vec<Vec<(u64, u64)>> = Vec::new();
    let mut lane_marks: Vec<Vec<u64>> = Vec::new();
    match (&lc.timeline, starts, first_usable) {
        (Some(t), Some(_), None) => {
            // No boundary is a time: no frame's begin is known.
            spans_lost.unplaced = t.spans.iter().map(|l| l.t0_ms.len() as u64).sum();
            marks_lost.unplaced = t.instants.iter().map(|l| l.times_ms.len() as u64).sum();
        }
        (Some(t), Some(_), Some(_)) => {
            for lane in &t.spans {
                let mut v: Vec<(u64, u64)> = Vec::with_capacity(lane.t0_ms.len());
                for (&a, &z) in lane.t0_ms.iter().zip(&lane.t1_ms) {
                    if !(a.is_finite() && z.is_finite() && z >= a) {
                        spans_lost.bad += 1;
                        continue;
                    }
                    match (rel(a), rel(z)) {
                        (Some(a), Some(z)) if z >= a => v.push((a, z)),
                        _ => spans_lost.before_first += 1,
                    }
                }
                v.sort_unstable();
                lane_spans.push(v);
            }
            for lane in &t.instants {
                let mut v: Vec<u64> = Vec::with_capacity(lane.times_ms.len());
                for &m in &lane.times_ms {
                    if !m.is_finite() {
                        marks_lost.bad += 1;
                        continue;
                    }
                    match rel(m) {
                        Some(at) => v.push(at),
                        None => marks_lost.before_first += 1,
                    }
                }
                v.sort_unstable();
                lane_marks.push(v);
            }
        }
        _ => {}
    }
    let mut span_cursor = vec![0usize; lane_spans.len()];
    let mut mark_cursor = vec![0usize; lane_marks.len()];

    let mut f = FrameInput::default();
    // Where the previous frame ended: a frame with no usable begin of its own starts there
    // (on the timeline's clock when there is one, not on a sum of work times from 0).
    let mut previous_end_ns = 0u64;
    let mut invalid_frames = 0u64;
    let (mut unmeasured_values, mut unmeasured_frames) = (0u64, 0u64);
    let mut reporter = Reporter::start(progress, Stage::Frames, count as u64);
    for i in 0..count {
        reporter.update(i as u64);
        let begin = frame_begin_ns.get(i).copied().flatten();
        if let Some(begin) = begin {
            // What is left before a usable boundary lies before the first one, in a frame
            // whose end is no usable boundary (it could be this frame's or the one before),
            // or in a frame that was dropped: no frame is known to own it.
            for (l, spans) in lane_spans.iter().enumerate() {
                while spans.get(span_cursor[l]).is_some_and(|&(a, _)| a < begin) {
                    span_cursor[l] += 1;
                    spans_lost.unplaced += 1;
                }
            }
            for (l, marks) in lane_marks.iter().enumerate() {
                while marks.get(mark_cursor[l]).is_some_and(|&at| at < begin) {
                    mark_cursor[l] += 1;
                    marks_lost.unplaced += 1;
                }
            }
        }
        let frame_ms = lc.frames_ms.get(i).copied().unwrap_or(f32::NAN);
        // A frame of over an hour is no frame time (a damaged value): its begin would carry
        // every later frame's past the clock's end.
        let Some(work_ns) = work_ns(frame_ms) else {
            invalid_frames += 1;
            continue;
        };
        f.clear();
        f.index = i as u64;
        f.cpu_begin_ns = begin.unwrap_or(previous_end_ns);
        f.cpu_end_ns = f.cpu_begin_ns.saturating_add(work_ns);
        f.period_override_ns = Some(work_ns);
        previous_end_ns = f.cpu_end_ns;
        let mut frame_unmeasured = false;
        for (p, phase) in lc.phases_ms.iter().enumerate() {
            match phase.get(i).map(|&v| ms_to_ns(f64::from(v))) {
                // lite-profiler reports every phase every frame, and 0 is a time (under the
                // timer's resolution), counted in its statistics: so here too.
                Some(Some(ns)) => {
                    if let Some(&s) = scopes.get(p) {
                        f.direct_scopes.push((s, ns));
                    }
                }
                Some(None) => {
                    unmeasured_values += 1;
                    frame_unmeasured = true;
                }
                None => {}
            }
        }
        for (c, samples) in lc.counters.iter().enumerate() {
            let (Some(&(id, numeric)), Some(&v)) = (counters.get(c), samples.get(i)) else {
                continue;
            };
            // A counter counts what a frame did (draw calls, floats uploaded): a count
            // below 0 is no measurement, as one that is not finite.
            if !v.is_finite() || v < 0.0 {
                unmeasured_values += 1;
                frame_unmeasured = true;
                continue;
            }
            let raw = match numeric {
                Numeric::Integer => v as i64,
                Numeric::Float => float_raw(f64::from(v)),
            };
            f.counters.push((id, raw));
        }
        // This frame owns [begin, next begin) when both are usable boundaries; the last owns
        // everything after its begin. A frame whose begin or end is not known owns nothing:
        // what lies around it is lost, never given to a neighbour.
        let end = if i + 1 == count {
            Some(u64::MAX)
        } else {
            frame_begin_ns.get(i + 1).copied().flatten()
        };
        if let (Some(_), Some(next)) = (begin, end) {
            for (l, spans) in lane_spans.iter().enumerate() {
                let mut lane = LaneInput {
                    thread: threads.get(l).copied().unwrap_or(0),
                    spans: Vec::new(),
                    dropped_spans: 0,
                };
                while let Some(&(a, z)) = spans.get(span_cursor[l]) {
                    if a >= next {
                        break;
                    }
                    span_cursor[l] += 1;
                    let scope = span_scopes.get(l).copied().unwrap_or(0);
                    lane.spans.push(SpanInput {
                        scope,
                        depth: 0,
                        start_ns: a,
                        end_ns: z,
                    });
                    // With phases, a frame's scope statistics are its phases' totals; a lane
                    // that is no phase (lite-profiler's `physics`) adds its spans, one call
                    // each, as a capture without phases counts them.
                    if !lc.phases_ms.is_empty() && !scopes.contains(&scope) {
                        f.direct_scopes.push((scope, z - a));
                    }
                }
                if !lane.spans.is_empty() {
                    f.lanes.push(lane);
                }
            }
            for (l, marks) in lane_marks.iter().enumerate() {
                while let Some(&at) = marks.get(mark_cursor[l]) {
                    if at >= next {
                        break;
                    }
                    mark_cursor[l] += 1;
                    f.marks.push(MarkInput {
                        name: mark_names.get(l).copied().unwrap_or(0),
                        thread: None,
                        at_ns: at,
                        user: None,
                    });
                }
            }
        }
        unmeasured_frames += u64::from(frame_unmeasured);
        b.push_frame(&f);
    }
    reporter.finish();
    // What is left lies after a last frame whose begin is not known, or in it when it was
    // dropped.
    for (l, spans) in lane_spans.iter().enumerate() {
        spans_lost.unplaced += spans.len().saturating_sub(span_cursor[l]) as u64;
    }
    for (l, marks) in lane_marks.iter().enumerate() {
        marks_lost.unplaced += marks.len().saturating_sub(mark_cursor[l]) as u64;
    }
    if invalid_frames > 0 {
        b.defect(Defect::new(
            DefectKind::DroppedFrames,
            invalid_frames,
            format!("{invalid_frames} litecap frame times were negative, not finite or over an hour; those frames were dropped"),
        ));
    }
    if starts.is_some() && unknown_bounds > 0 {
        b.defect(Defect::new(
            DefectKind::Importer,
            unknown_bounds,
            format!("{unknown_bounds} litecap timeline frame boundaries are not finite or come before a boundary before them: those frames begin where the frame before them ended (or, before the first usable boundary, back to back up to it), and the timeline spans and marks between the usable boundaries around them are placed in no frame"),
        ));
    }
    if unmeasured_values > 0 {
        // A phase or counter whose value is no measurement in some frames describes part of
        // the run: what is compared of it would not be the same frames on both sides.
        b.defect(Defect::new(
            DefectKind::DroppedFrames,
            unmeasured_frames,
            format!("{unmeasured_values} litecap phase times or counter values in {unmeasured_frames} frames are negative or not finite: no measurement, so those values are missing"),
        ));
    }
    // A span lost on import is a dropped span: the scope statistics of the run are low, so a
    // gate on them is incomplete, as when a recorder drops spans.
    let frame_boundaries = lc.timeline.as_ref().map_or(0, |t| t.frame_starts_ms.len());
    if let Some(why) = spans_lost.reasons(true, count, frame_boundaries) {
        b.defect(Defect::new(
            DefectKind::DroppedSpans,
            spans_lost.total(),
            format!(
                "{} timeline spans were lost on import ({why}); the scope statistics of the frames they ran in are low",
                spans_lost.total()
            ),
        ));
    }
    if let Some(why) = marks_lost.reasons(false, count, frame_boundaries) {
        b.defect(Defect::new(
            DefectKind::Importer,
            marks_lost.total(),
            format!(
                "{} timeline marks were lost on import ({why})",
                marks_lost.total()
            ),
        ));
    }
    let mut capture = b.finish();
    capture.dropped_spans = capture.dropped_spans.saturating_add(spans_lost.total());
    capture
}

/// A frame time as ns of work, when it is one: finite, not negative, at most an hour.
fn work_ns(frame_ms: f32) -> Option<u64> {
    Some(f64::from(frame_ms))
        .filter(|&ms| ms <= MAX_FRAME_MS)
        .and_then(ms_to_ns)
}

/// The timeline's frame boundaries that are times, the others `None`: a boundary that is not
/// finite, or that is out of order. A boundary outside the two around it while they are in
/// order is the one out of order (one damaged value, as a boundary that is not finite).
/// Where the boundaries still go back in time there is no telling which is wrong, so the
/// boundaries on both sides of the step back are unusable: the one that steps back, and every
/// one before it that it passes below. The usable boundaries never decrease, and a frame owns
/// only what lies between two of them.
fn usable_boundaries(starts: &[f64]) -> Vec<Option<f64>> {
    let finite: Vec<(usize, f64)> = starts
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .collect();
    let mut kept: Vec<(usize, f64)> = Vec::with_capacity(finite.len());
    for (n, &(i, v)) in finite.iter().enumerate() {
        let around = n
            .checked_sub(1)
            .and_then(|p| finite.get(p))
            .zip(finite.get(n + 1));
        if let Some((&(_, before), &(_, after))) = around {
            if before <= after && !(before..=after).contains(&v) {
                continue;
            }
        }
        let mut stepped_back = false;
        while kept.last().is_some_and(|&(_, k)| k > v) {
            kept.pop();
            stepped_back = true;
        }
        if !stepped_back {
            kept.push((i, v));
        }
    }
    let mut out = vec![None; starts.len()];
    for (i, v) in kept {
        if let Some(slot) = out.get_mut(i) {
            *slot = Some(v);
        }
    }
    out
}

/// Timeline spans or marks lost on import, by why.
#[derive(Default)]
struct LostItems {
    /// The timeline has fewer boundaries than frames: none is placed.
    no_bounds: u64,
    /// Not finite, or (a span) ending before it began.
    bad: u64,
    /// Before the first usable frame boundary.
    before_first: u64,
    /// In no frame known to own it: a frame whose begin or end is no usable boundary, or a
    /// frame that was dropped.
    unplaced: u64,
}

impl LostItems {
    fn total(&self) -> u64 {
        self.no_bounds + self.bad + self.before_first + self.unplaced
    }

    /// Why they were lost (`spans`, or marks), in words with counts; `None` when none was.
    fn reasons(&self, spans: bool, frames: usize, boundaries: usize) -> Option<String> {
        let mut parts = Vec::new();
        if self.no_bounds > 0 {
            parts.push(format!(
                "{} not placed: the timeline has {boundaries} frame boundaries for {frames} frames, so no frame's begin is known",
                self.no_bounds
            ));
        }
        if self.bad > 0 {
            parts.push(format!(
                "{} not finite{}",
                self.bad,
                if spans {
                    " or ending before they began"
                } else {
                    ""
                }
            ));
        }
        if self.before_first > 0 {
            parts.push(format!(
                "{} before the first usable frame boundary or too far after it to place",
                self.before_first
            ));
        }
        if self.unplaced > 0 {
            parts.push(format!(
                "{} in frames whose begin or end is no usable boundary, or that were dropped",
                self.unplaced
            ));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// Encodes a `.litecap` buffer (the layout above). For tests, fixtures and benchmarks.
pub fn encode(lc: &Litecap) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.push(lc.version);
    out.extend_from_slice(&(lc.frames_ms.len() as u32).to_le_bytes());
    out.push(lc.phases_ms.len() as u8);
    let f32s = |out: &mut Vec<u8>, v: &[f32]| {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    };
    let f64s = |out: &mut Vec<u8>, v: &[f64]| {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    };
    let tag = |out: &mut Vec<u8>, t: &str| {
        let b = t.as_bytes();
        let len = b.len().min(255);
        out.push(len as u8);
        out.extend_from_slice(&b[..len]);
    };
    f32s(&mut out, &lc.frames_ms);
    for p in &lc.phases_ms {
        f32s(&mut out, p);
    }
    if lc.version >= 2 {
        for t in &lc.phase_tags {
            tag(&mut out, t);
        }
        let meta = lc
            .meta
            .as_ref()
            .map(|m| m.to_string().into_bytes())
            .unwrap_or_default();
        out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        out.extend_from_slice(&meta);
    }
    if lc.version >= 3 {
        out.push(lc.counters.len() as u8);
        for c in &lc.counters {
            f32s(&mut out, c);
        }
        for t in &lc.counter_tags {
            tag(&mut out, t);
        }
    }
    if lc.version >= 4 {
        let t = lc.timeline.clone().unwrap_or_default();
        out.extend_from_slice(&(t.frame_starts_ms.len() as u32).to_le_bytes());
        f64s(&mut out, &t.frame_starts_ms);
        out.push(t.spans.len() as u8);
        for l in &t.spans {
            tag(&mut out, &l.tag);
            out.extend_from_slice(&(l.t0_ms.len() as u32).to_le_bytes());
            f64s(&mut out, &l.t0_ms);
            f64s(&mut out, &l.t1_ms);
        }
        out.push(t.instants.len() as u8);
        for l in &t.instants {
            tag(&mut out, &l.tag);
            out.extend_from_slice(&(l.times_ms.len() as u32).to_le_bytes());
            f64s(&mut out, &l.times_ms);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(version: u8) -> Litecap {
        Litecap {
            version,
            frames_ms: vec![16.0, 17.0, 40.0],
            phase_tags: vec!["update".into(), "render".into()],
            phases_ms: vec![vec![5.0, 6.0, 30.0], vec![8.0, 0.0, 9.0]],
            meta: (version >= 2).then(|| serde_json::json!({"label": "t", "budgetMs": 16.7})),
            meta_invalid: false,
            counter_tags: if version >= 3 {
                vec!["drawCalls".into()]
            } else {
                vec![]
            },
            counters: if version >= 3 {
                vec![vec![10.0, 10.0, 12.0]]
            } else {
                vec![]
            },
            timeline: (version >= 4).then(|| Timeline {
                frame_starts_ms: vec![1000.0, 1016.0, 1033.0],
                spans: vec![SpanLane {
                    tag: "render".into(),
                    t0_ms: vec![1005.0, 1040.0],
                    t1_ms: vec![1013.0, 1049.0],
                }],
                instants: vec![InstantLane {
                    tag: "gc".into(),
                    times_ms: vec![1020.0],
                }],
            }),
            trailing_bytes: 0,
        }
    }

    #[test]
    fn every_version_round_trips() {
        for v in 1..=4 {
            let mut lc = sample(v);
            if v == 1 {
                lc.phase_tags = vec!["phase0".into(), "phase1".into()];
            }
            let bytes = encode(&lc);
            assert_eq!(decode(&bytes), Ok(lc), "version {v}");
        }
    }

    #[test]
    fn errors_carry_numbers() {
        assert_eq!(decode(b"LCAP"), Err(DecodeError::TooShort { len: 4 }));
        assert!(matches!(
            decode(b"XXXX\x01\0\0\0\0\0"),
            Err(DecodeError::BadMagic { .. })
        ));
        assert_eq!(
            decode(b"LCAP\x05\0\0\0\0\0"),
            Err(DecodeError::UnsupportedVersion { version: 5 })
        );
        let mut huge = b"LCAP\x02".to_vec();
        huge.extend_from_slice(&(1u32 << 20).to_le_bytes());
        huge.push(0);
        let e = decode(&huge).expect_err("truncated");
        assert_eq!(
            e.to_string(),
            "litecap: truncated frame times at offset 10: need 4194304 bytes, 0 remain"
        );
    }

    #[test]
    fn import_takes_work_as_period() {
        let c = import(
            &encode(&sample(4)),
            &LoadOptions::default().with_spans(true),
        )
        .expect("valid");
        assert_eq!(c.frame_count(), 3);
        assert_eq!(
            c.frames().period_ns,
            vec![Some(16_000_000), Some(17_000_000), Some(40_000_000)]
        );
        assert!(c
            .meta()
            .notes
            .iter()
            .any(|n| n.contains("taken as the frame's period")));
        assert!(c.meta().clock_measured);
        assert_eq!(c.meta().frame_budget_ns, Some(16_700_000));
        // render's 0 ms in frame 1 is a time (under the timer's resolution), as lite-profiler
        // counts it: render ran in every frame.
        let render_frames = (0..3)
            .filter(|&r| {
                c.scope_aggs()
                    .frame(r)
                    .iter()
                    .any(|a| c.scopes()[a.id as usize].name == "render")
            })
            .count();
        assert_eq!(render_frames, 3);
        let spans = c.spans().expect("kept");
        assert_eq!(spans.cpu.frame(0).len(), 1);
        assert_eq!(spans.cpu.frame(2).len(), 1);
        assert_eq!(c.marks().len(), 1);
        assert_eq!(c.marks()[0].frame_row, 1);
    }

    #[test]
    fn without_timeline_the_clock_is_not_measured() {
        let c = import(&encode(&sample(3)), &LoadOptions::default()).expect("valid");
        assert!(!c.meta().clock_measured);
        assert_eq!(c.counters()[0].name, "drawCalls");
    }
}
