//! The `.sgpt` loader: a thin adapter from `framewise-format`'s reader to the
//! [`CaptureBuilder`]. Frames are decoded and folded one at a time, so memory holds the
//! per-frame aggregates, not the spans (unless spans were asked for).
//!
//! GPU pass times are converted from ticks with the queue's `timestamp_period_ns` from
//! META and placed on the CPU axis at the frame's anchor (submit time when recorded, else
//! the frame's CPU end): a nominal placement; the durations are the GPU's own.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use framewise_format::model::{
    AdapterType, CaptureLevel, CounterKind as FmtCounterKind, Frame, MarkKind, SymId, SymbolKind,
    SymbolTable,
};
use framewise_format::payload::FrameDecoder;
use framewise_format::read;

use crate::build::{
    CaptureBuilder, Folder, FrameInput, GpuPassInput, LaneInput, LoadOptions, MarkInput, SpanInput,
};
use crate::load::{no_progress, LoadError, Progress, Reporter, Stage};
use crate::model::{
    AdapterKind, Capture, CounterKind, Defect, DefectKind, Numeric, SourceKind, TopologySummary,
    UserMark,
};

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
        _ => Defect::new(DefectKind::Other, 1, message),
    }
}

/// SymId → builder id: a dense vector for the small ids writers hand out, a map beyond.
#[derive(Default)]
struct IdMap {
    dense: Vec<u32>,
    sparse: HashMap<SymId, u32>,
}

impl IdMap {
    const DENSE_LIMIT: usize = 1 << 16;

    #[inline]
    fn get(&self, id: SymId) -> Option<u32> {
        match self.dense.get(id as usize) {
            Some(&v) if v != u32::MAX => Some(v),
            Some(_) => None,
            None => self.sparse.get(&id).copied(),
        }
    }

    fn insert(&mut self, id: SymId, value: u32) {
        let at = id as usize;
        if at < Self::DENSE_LIMIT {
            if at >= self.dense.len() {
                self.dense.resize(at + 1, u32::MAX);
            }
            self.dense[at] = value;
        } else {
            self.sparse.insert(id, value);
        }
    }
}

/// Interns format symbols into builder ids, remembering which were never defined.
struct Names<'a> {
    symbols: &'a SymbolTable,
    unresolved: HashSet<SymId>,
    scopes: IdMap,
    threads: IdMap,
    /// Pass symbol → (queue symbol, builder id) of the first queue it ran on.
    passes: Vec<(SymId, u32)>,
    /// The same label on other queues.
    passes_elsewhere: HashMap<(SymId, SymId), u32>,
    phases: HashMap<SymId, u32>,
    counters: IdMap,
    marks: HashMap<SymId, u32>,
}

impl<'a> Names<'a> {
    fn name(&mut self, id: SymId) -> String {
        match self.symbols.name(id) {
            Some(n) => n.to_owned(),
            None => {
                self.unresolved.insert(id);
                format!("#{id}")
            }
        }
    }

    #[inline]
    fn scope(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        match self.scopes.dense.get(id as usize) {
            Some(&s) if s != u32::MAX => s,
            _ => self.scope_slow(b, id),
        }
    }

    /// A scope id past the dense table, or not yet seen.
    #[cold]
    #[inline(never)]
    fn scope_slow(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(s) = self.scopes.get(id) {
            return s;
        }
        let name = self.name(id);
        let (file, line) = match self.symbols.get(id).map(|s| &s.kind) {
            Some(SymbolKind::Scope { file, line }) => (file.as_str(), *line),
            _ => ("", 0),
        };
        let s = b.scope(&name, file, line);
        self.scopes.insert(id, s);
        s
    }

    fn thread(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(t) = self.threads.get(id) {
            return t;
        }
        let name = self.name(id);
        let t = b.thread(&name);
        self.threads.insert(id, t);
        t
    }

    fn pass(&mut self, b: &mut CaptureBuilder, pass: SymId, queue: SymId) -> u32 {
        let at = pass as usize;
        if let Some(&(q, p)) = self.passes.get(at) {
            if q == queue && p != u32::MAX {
                return p;
            }
        }
        if let Some(&p) = self.passes_elsewhere.get(&(pass, queue)) {
            return p;
        }
        let queue_name = self.name(queue);
        let q = b.queue(&queue_name);
        let name = self.name(pass);
        let p = b.pass(&name, q);
        if at < IdMap::DENSE_LIMIT && self.passes.get(at).is_none_or(|&(_, p)| p == u32::MAX) {
            if at >= self.passes.len() {
                self.passes.resize(at + 1, (0, u32::MAX));
            }
            self.passes[at] = (queue, p);
        } else {
            self.passes_elsewhere.insert((pass, queue), p);
        }
        p
    }

    fn phase(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(&p) = self.phases.get(&id) {
            return p;
        }
        let name = self.name(id);
        let p = b.phase(&name);
        self.phases.insert(id, p);
        p
    }

    fn counter(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(c) = self.counters.get(id) {
            return c;
        }
        let name = self.name(id);
        let kind = match self.symbols.get(id).map(|s| &s.kind) {
            Some(SymbolKind::Counter(FmtCounterKind::Gauge)) => CounterKind::Gauge,
            _ => CounterKind::Sum,
        };
        let c = b.counter(&name, kind, Numeric::Integer);
        self.counters.insert(id, c);
        c
    }

    fn mark(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(&m) = self.marks.get(&id) {
            return m;
        }
        let name = self.name(id);
        let m = b.mark_name(&name);
        self.marks.insert(id, m);
        m
    }
}

/// Counters of the GPU conversion, reported once at the end.
#[derive(Default)]
struct GpuTally {
    no_period: u64,
    reversed: u64,
}

/// Turns decoded frames into builder input, reusing every allocation across frames.
struct Converter {
    /// The frame handed to the builder: everything but the CPU instances, which are
    /// folded into `scopes` as they are read (and copied into `input.lanes` only when
    /// spans are kept).
    input: FrameInput,
    scopes: Folder,
    keep_spans: bool,
    /// Span vectors of earlier frames' lanes, for reuse.
    spare: Vec<Vec<SpanInput>>,
    /// Per queue of the frame: the earliest timed begin, and the declared period.
    queue_base: Vec<Option<u64>>,
    queue_period: Vec<Option<f64>>,
}

impl Converter {
    fn new(keep_spans: bool) -> Self {
        Self {
            input: FrameInput::default(),
            scopes: Folder::default(),
            keep_spans,
            spare: Vec::new(),
            queue_base: Vec::new(),
            queue_period: Vec::new(),
        }
    }

    fn convert(
        &mut self,
        frame: &Frame,
        b: &mut CaptureBuilder,
        names: &mut Names<'_>,
        periods: &HashMap<SymId, f64>,
        tally: &mut GpuTally,
    ) {
        let f = &mut self.input;
        self.spare.extend(f.lanes.drain(..).map(|l| l.spans));
        f.clear();
        f.index = frame.index;
        f.phase = frame.phase.map(|p| names.phase(b, p));
        f.paused = frame.paused;
        f.topology = frame.topology;
        f.cpu_begin_ns = frame.cpu_begin_ns;
        f.cpu_end_ns = frame.cpu_end_ns;
        f.dropped_frames_before = frame.dropped_frames_before;
        for lane in &frame.lanes {
            let thread = names.thread(b, lane.thread);
            // Fold as the builder would (lane by lane, in pre-order), without a copy.
            self.scopes.fold_lane(lane.spans.iter().map(|s| {
                (
                    names.scope(b, s.scope),
                    s.depth,
                    s.end_ns.saturating_sub(s.start_ns),
                )
            }));
            let mut spans = self.spare.pop().unwrap_or_default();
            spans.clear();
            if self.keep_spans {
                spans.extend(lane.spans.iter().map(|s| SpanInput {
                    scope: names.scope(b, s.scope),
                    depth: s.depth,
                    start_ns: s.start_ns,
                    end_ns: s.end_ns,
                }));
            }
            f.lanes.push(LaneInput {
                thread,
                spans,
                dropped_spans: lane.dropped_spans,
            });
        }

        // GPU: per queue, the first timed pass's begin is placed at the queue's anchor.
        let queues = &frame.gpu.queues;
        self.queue_base.clear();
        self.queue_base.resize(queues.len(), None);
        self.queue_period.clear();
        self.queue_period
            .extend(queues.iter().map(|q| periods.get(&q.queue).copied()));
        for p in &frame.gpu.passes {
            if let (Some(t), Some(base)) =
                (p.timing, self.queue_base.get_mut(p.queue_index as usize))
            {
                *base = Some(base.map_or(t.begin_ticks, |v| v.min(t.begin_ticks)));
            }
        }
        for p in &frame.gpu.passes {
            let at = p.queue_index as usize;
            let Some(q) = queues.get(at) else {
                continue;
            };
            let pass = names.pass(b, p.pass, q.queue);
            let period = self.queue_period.get(at).copied().flatten();
            let nominal_ns = match (p.timing, period) {
                (Some(t), Some(period)) if t.end_ticks >= t.begin_ticks => {
                    let base = self
                        .queue_base
                        .get(at)
                        .copied()
                        .flatten()
                        .unwrap_or(t.begin_ticks);
                    let anchor = q.anchor.cpu_submit_ns.unwrap_or(frame.cpu_end_ns);
                    let to_ns = |ticks: u64| (ticks as f64 * period).round() as u64;
                    let start = anchor.saturating_add(to_ns(t.begin_ticks - base));
                    let end = start.saturating_add(to_ns(t.end_ticks - t.begin_ticks));
                    Some((start, end))
                }
                (Some(_), Some(_)) => {
                    tally.reversed += 1;
                    None
                }
                (Some(_), None) => {
                    tally.no_period += 1;
                    None
                }
                (None, _) => None,
            };
            f.gpu.push(GpuPassInput {
                pass,
                depth: p.depth,
                nominal_ns,
            });
        }
        f.gpu_results_missing = frame.gpu.results_missing;

        for c in &frame.counters {
            let id = names.counter(b, c.counter);
            f.counters.push((id, c.value));
        }
        for m in &frame.marks {
            let name = names.mark(b, m.name);
            let thread = Some(names.thread(b, m.thread));
            f.marks.push(MarkInput {
                name,
                thread,
                at_ns: m.at_ns,
                user: match &m.kind {
                    MarkKind::User { window_ns, note } => Some(UserMark {
                        window_ns: *window_ns,
                        note: note.clone(),
                    }),
                    MarkKind::Instant => None,
                },
            });
        }
    }
}

fn adapt(r: &read::Capture, options: &LoadOptions, progress: &mut dyn FnMut(Progress)) -> Capture {
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
        m.frame_budget_ns = meta.frame_budget_ns;
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
            if c.timestamp_period_ns.is_finite() && c.timestamp_period_ns > 0.0 {
                periods.insert(c.queue, c.timestamp_period_ns);
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
        unresolved: HashSet::new(),
        scopes: IdMap::default(),
        threads: IdMap::default(),
        passes: Vec::new(),
        passes_elsewhere: HashMap::new(),
        phases: HashMap::new(),
        counters: IdMap::default(),
        marks: HashMap::new(),
    };

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
    let mut conv = Converter::new(options.with_spans);
    let mut decoder = FrameDecoder::new();
    let mut frame = Frame::default();
    let mut reporter = Reporter::start(progress, Stage::Frames, r.frame_count() as u64);
    for i in 0..r.frame_count() {
        reporter.update(i as u64);
        match r.read_frame_into(i, &mut decoder, &mut frame) {
            Ok(()) => {
                conv.convert(&frame, &mut b, &mut names, &periods, &mut tally);
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
                b.push_frame_folded(f, &mut conv.scopes);
            }
            Err(d) => b.defect(defect_of(&d)),
        }
    }
    reporter.finish();

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
    if !names.unresolved.is_empty() {
        let mut ids: Vec<SymId> = names.unresolved.iter().copied().collect();
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
    b.finish()
}
