//! The `.sgpt` loader: a thin adapter from `framewise-format`'s reader to the
//! [`CaptureBuilder`]. Frames are decoded and folded one at a time, so memory holds the
//! per-frame aggregates, not the spans (unless spans were asked for).
//!
//! GPU pass times are converted from ticks with the queue's `timestamp_period_ns` from
//! META and placed on the CPU axis at the frame's anchor (submit time when recorded, else
//! the frame's CPU end): a nominal placement; the durations are the GPU's own. The
//! conversion is [`framewise_format::derived::GpuTimes`], the one the writer's directory
//! uses, so a frame's GPU time here is its directory GPU duration.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use framewise_format::derived::{self, GpuTimes, PassTime};
use framewise_format::model::{
    AdapterType, CaptureLevel, CounterKind as FmtCounterKind, Frame, FrameEntry, MarkKind, SymId,
    SymbolKind, SymbolTable,
};
use framewise_format::payload::FrameDecoder;
use framewise_format::read;

use crate::build::{
    push_frame_spans, CaptureBuilder, Folder, FrameInput, GpuPassInput, LaneInput, LoadOptions,
    MarkInput, SpanInput,
};
use crate::load::{no_progress, FrameReadError, LoadError, Progress, Reporter, Stage};
use crate::model::{
    AdapterKind, Capture, CounterKind, Defect, DefectKind, FrameSpans, Numeric, SourceKind,
    SpanTable, TopologyAccess, TopologyDetail, TopologyEdge, TopologyPass, TopologyPassKind,
    TopologyResource, TopologyResourceKind, TopologySummary, UserMark,
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
#[derive(Clone, Default)]
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

/// Format symbol → builder id, per kind, and the symbols no intact record defined: what
/// a load learnt about names, kept to re-read frames later ([`FrameSource`]).
#[derive(Clone, Default)]
struct Ids {
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

/// Interns format symbols into builder ids, remembering which were never defined.
struct Names<'a> {
    symbols: &'a SymbolTable,
    ids: Ids,
}

impl<'a> Names<'a> {
    fn name(&mut self, id: SymId) -> String {
        match self.symbols.name(id) {
            Some(n) => n.to_owned(),
            None => {
                self.ids.unresolved.insert(id);
                format!("#{id}")
            }
        }
    }

    #[inline]
    fn scope(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        match self.ids.scopes.dense.get(id as usize) {
            Some(&s) if s != u32::MAX => s,
            _ => self.scope_slow(b, id),
        }
    }

    /// A scope id past the dense table, or not yet seen.
    #[cold]
    #[inline(never)]
    fn scope_slow(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(s) = self.ids.scopes.get(id) {
            return s;
        }
        let name = self.name(id);
        let (file, line) = match self.symbols.get(id).map(|s| &s.kind) {
            Some(SymbolKind::Scope { file, line }) => (file.as_str(), *line),
            _ => ("", 0),
        };
        let s = b.scope(&name, file, line);
        self.ids.scopes.insert(id, s);
        s
    }

    fn thread(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(t) = self.ids.threads.get(id) {
            return t;
        }
        let name = self.name(id);
        let t = b.thread(&name);
        self.ids.threads.insert(id, t);
        t
    }

    fn pass(&mut self, b: &mut CaptureBuilder, pass: SymId, queue: SymId) -> u32 {
        let at = pass as usize;
        if let Some(&(q, p)) = self.ids.passes.get(at) {
            if q == queue && p != u32::MAX {
                return p;
            }
        }
        if let Some(&p) = self.ids.passes_elsewhere.get(&(pass, queue)) {
            return p;
        }
        let queue_name = self.name(queue);
        let q = b.queue(&queue_name);
        let name = self.name(pass);
        let p = b.pass(&name, q);
        if at < IdMap::DENSE_LIMIT && self.ids.passes.get(at).is_none_or(|&(_, p)| p == u32::MAX) {
            if at >= self.ids.passes.len() {
                self.ids.passes.resize(at + 1, (0, u32::MAX));
            }
            self.ids.passes[at] = (queue, p);
        } else {
            self.ids.passes_elsewhere.insert((pass, queue), p);
        }
        p
    }

    fn phase(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(&p) = self.ids.phases.get(&id) {
            return p;
        }
        let name = self.name(id);
        let p = b.phase(&name);
        self.ids.phases.insert(id, p);
        p
    }

    fn counter(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(c) = self.ids.counters.get(id) {
            return c;
        }
        let name = self.name(id);
        let kind = match self.symbols.get(id).map(|s| &s.kind) {
            Some(SymbolKind::Counter(FmtCounterKind::Gauge)) => CounterKind::Gauge,
            _ => CounterKind::Sum,
        };
        let c = b.counter(&name, kind, Numeric::Integer);
        self.ids.counters.insert(id, c);
        c
    }

    fn mark(&mut self, b: &mut CaptureBuilder, id: SymId) -> u32 {
        if let Some(&m) = self.ids.marks.get(&id) {
            return m;
        }
        let name = self.name(id);
        let m = b.mark_name(&name);
        self.ids.marks.insert(id, m);
        m
    }
}

/// `x.round() as u64`, exactly, without the library call where truncation gives the
/// same: below 2^52 the integer part and the fraction of a non-negative `x` are exact.
#[inline]
/// A topology with its symbols resolved to names.
fn topology_detail(t: &framewise_format::model::Topology, names: &mut Names) -> TopologyDetail {
    use framewise_format::model::{Access, PassKind, ResourceKind};
    let passes = t
        .passes
        .iter()
        .map(|p| TopologyPass {
            label: names.name(p.label),
            kind: match p.kind {
                PassKind::Render => TopologyPassKind::Render,
                PassKind::Compute => TopologyPassKind::Compute,
                PassKind::Copy => TopologyPassKind::Copy,
                PassKind::Other => TopologyPassKind::Other,
            },
            culled: p.culled,
            scope: p.scope.map(|s| names.name(s)),
        })
        .collect();
    let resources = t
        .resources
        .iter()
        .map(|r| TopologyResource {
            label: names.name(r.label),
            kind: match r.kind {
                ResourceKind::Buffer => TopologyResourceKind::Buffer,
                ResourceKind::Texture => TopologyResourceKind::Texture,
                ResourceKind::Other => TopologyResourceKind::Other,
            },
            format: r.format.map(|f| names.name(f)),
            bytes: r.declared_bytes,
            transient: r.transient,
        })
        .collect();
    let edges = t
        .edges
        .iter()
        .map(|e| TopologyEdge {
            pass: e.pass,
            resource: e.resource,
            version: e.version,
            access: match e.access {
                Access::Read => TopologyAccess::Read,
                Access::Write => TopologyAccess::Write,
                Access::ReadWrite => TopologyAccess::ReadWrite,
            },
        })
        .collect();
    TopologyDetail {
        id: t.id,
        passes,
        resources,
        edges,
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
    /// Fold CPU instances as they are read (else only copy them into `input.lanes`, for
    /// the builder to fold: the general path, kept to check this one against).
    fold: bool,
    /// Span vectors of earlier frames' lanes, for reuse.
    spare: Vec<Vec<SpanInput>>,
    /// Places the frame's GPU passes on the CPU clock by the directory's rule.
    gpu_times: GpuTimes,
}

impl Converter {
    fn new(keep_spans: bool, fold: FoldPath) -> Self {
        let fold = fold == FoldPath::AsDecoded;
        Self {
            input: FrameInput::default(),
            scopes: Folder::default(),
            keep_spans: keep_spans || !fold,
            fold,
            spare: Vec::new(),
            gpu_times: GpuTimes::new(),
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
            // Fold as the builder would (lane by lane, in pre-order), straight from the
            // decoded spans: no SpanInput is made for them.
            if self.fold {
                self.scopes.fold_lane(lane.spans.iter().map(|s| {
                    (
                        names.scope(b, s.scope),
                        s.depth,
                        s.end_ns.saturating_sub(s.start_ns),
                    )
                }));
            }
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
        let times = self.gpu_times.convert(frame, |q| periods.get(&q).copied());
        for (p, &time) in frame.gpu.passes.iter().zip(times) {
            let Some(q) = frame.gpu.queues.get(p.queue_index as usize) else {
                continue;
            };
            let pass = names.pass(b, p.pass, q.queue);
            let nominal_ns = match time {
                PassTime::Timed { start_ns, end_ns } => Some((start_ns, end_ns)),
                PassTime::Reversed => {
                    tally.reversed += 1;
                    None
                }
                PassTime::NoPeriod => {
                    tally.no_period += 1;
                    None
                }
                PassTime::Untimed => None,
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

/// How CPU instances reach the builder's aggregates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FoldPath {
    /// Folded as each frame is decoded, straight from the decoded spans (what loads do).
    AsDecoded,
    /// Copied into the frame's lanes and folded by [`CaptureBuilder::push_frame`], as
    /// every other loader's are, and (in tests) by the stack fold alone: the reference
    /// the first is tested against.
    #[cfg_attr(not(test), expect(dead_code, reason = "the reference path, for tests"))]
    ByBuilder,
    /// Nothing folded: only the spans are copied into the frame's lanes (a frame re-read
    /// for its spans, whose aggregates the load already has).
    SpansOnly,
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
    let mut reporter = Reporter::start(progress, Stage::Frames, r.frame_count() as u64);
    r.read_frames_into(
        0..r.frame_count(),
        &mut decoder,
        &mut frame,
        |i, decoded| {
            reporter.update(i as u64);
            match decoded {
                Ok(frame) => {
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
                Err(d) => b.defect(defect_of(&d)),
            }
        },
    );
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
        let mut frame = Frame::default();
        read::read_frame_at(&self.file, entry, &mut FrameDecoder::new(), &mut frame)
            .map_err(|d| changed(d.to_string()))?;
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
mod tests {
    //! The fold as decoded against the builder's own, on a capture meant to be awkward:
    //! several threads, deep nesting, scopes inside themselves, two call sites of one
    //! name, lanes that open deep or skip levels (spans whose ancestors were still open),
    //! zero-length spans, GPU passes on two queues (one without a declared period,
    //! nested, untimed), counters of both kinds, marks, paused frames, dropped spans and
    //! frames, and damaged records.

    use super::*;
    use framewise_format::model::{
        CounterKind as Kind, CounterValue, CpuClock, CpuSpan, GpuAnchor, GpuFrame, GpuPass,
        GpuQueueClock, GpuQueueFrame, GpuTiming, Lane, Mark, Meta, Symbol,
    };
    use framewise_format::Writer;

    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
    }

    const THREADS: [SymId; 3] = [1, 2, 3];
    const QUEUES: [SymId; 2] = [10, 11];
    const PASSES: SymId = 20; // 20..26
    const COUNTERS: SymId = 30; // 30..34
    const SCOPES: SymId = 40; // 40..52
    const PLAY: SymId = 60;
    const MARK: SymId = 61;

    fn symbols() -> SymbolTable {
        let mut t = SymbolTable::new();
        let mut add = |id, kind, name: String| t.insert(Symbol { id, kind, name });
        for (i, &id) in THREADS.iter().enumerate() {
            add(id, SymbolKind::Thread, format!("thread-{i}"));
        }
        for (i, &id) in QUEUES.iter().enumerate() {
            add(id, SymbolKind::Queue, format!("queue-{i}"));
        }
        for p in 0..6 {
            add(PASSES + p, SymbolKind::Pass, format!("pass_{}", p % 4));
        }
        for c in 0..4 {
            let kind = if c % 2 == 0 { Kind::Sum } else { Kind::Gauge };
            add(
                COUNTERS + c,
                SymbolKind::Counter(kind),
                format!("counter_{c}"),
            );
        }
        for s in 0..12 {
            // scope_0 and scope_1 each have two call sites.
            let kind = SymbolKind::Scope {
                file: format!("src/s{}.rs", s % 5),
                line: s,
            };
            add(
                SCOPES + s,
                kind,
                format!("scope_{}", if s >= 10 { s - 10 } else { s }),
            );
        }
        add(PLAY, SymbolKind::Phase, "play".into());
        add(MARK, SymbolKind::Mark, "gc".into());
        t
    }

    /// A tree of spans in `[start, end)`, pre-order, at `depth`; few scopes, so that a
    /// scope often runs inside itself.
    fn tree(rng: &mut Rng, out: &mut Vec<CpuSpan>, depth: u32, start: u64, end: u64) {
        let mut t = start;
        while t < end && out.len() < 120 {
            let gap = rng.below(50);
            let len = if rng.below(8) == 0 {
                0
            } else {
                1 + rng.below((end - t) / 2 + 1)
            };
            let s = t + gap;
            if s + len > end {
                break;
            }
            out.push(CpuSpan {
                scope: SCOPES + rng.below(if depth > 1 { 3 } else { 12 }) as u32,
                depth,
                start_ns: s,
                end_ns: s + len,
            });
            if depth < 5 && len > 4 && rng.below(3) > 0 {
                tree(rng, out, depth + 1, s, s + len);
            }
            t = s + len;
        }
    }

    fn frame(rng: &mut Rng, index: u64) -> Frame {
        let begin = 1_000 + index * 100_000;
        let lanes = THREADS
            .iter()
            .map(|&thread| {
                let mut spans = Vec::new();
                match rng.below(4) {
                    // Opens deep: its ancestors were still open at the frame's start.
                    0 => {
                        let depth = 1 + rng.below(3) as u32;
                        tree(rng, &mut spans, depth, begin, begin + 30_000);
                    }
                    // Closed spans, then a span deeper than anything open.
                    1 => {
                        tree(rng, &mut spans, 0, begin, begin + 20_000);
                        let s = begin + 40_000;
                        spans.push(CpuSpan {
                            scope: SCOPES + 3,
                            depth: 3,
                            start_ns: s,
                            end_ns: s + 9_000,
                        });
                        tree(rng, &mut spans, 4, s, s + 9_000);
                    }
                    _ => tree(rng, &mut spans, 0, begin, begin + 80_000),
                }
                Lane {
                    thread,
                    spans,
                    dropped_spans: u64::from(index % 17 == 3),
                }
            })
            .collect();
        let mut passes = Vec::new();
        let mut ticks = 5_000 + index * 90_000;
        for p in 0..6u32 {
            let len = rng.below(3_000);
            passes.push(GpuPass {
                pass: PASSES + p,
                queue_index: p % 2,
                depth: u32::from(p % 3 == 2),
                timing: (rng.below(7) != 0).then_some(GpuTiming {
                    begin_ticks: ticks,
                    end_ticks: ticks + len,
                }),
            });
            ticks += len + rng.below(100);
        }
        let mut counters = Vec::new();
        for c in 0..4u32 {
            if rng.below(5) != 0 {
                counters.push(CounterValue {
                    counter: COUNTERS + c,
                    value: rng.below(1_000) as i64 - 300,
                });
            }
        }
        let marks = index
            .is_multiple_of(9)
            .then_some(Mark {
                name: MARK,
                thread: THREADS[1],
                at_ns: begin + 7,
                kind: MarkKind::Instant,
            })
            .into_iter()
            .collect();
        Frame {
            index: index + u64::from(index >= 150),
            phase: Some(PLAY),
            paused: index % 23 == 5,
            topology: None,
            cpu_begin_ns: begin,
            cpu_end_ns: begin + 90_000,
            dropped_frames_before: u64::from(index == 150),
            lanes,
            gpu: GpuFrame {
                expected: true,
                results_missing: index % 31 == 4,
                queues: QUEUES
                    .iter()
                    .map(|&queue| GpuQueueFrame {
                        queue,
                        anchor: GpuAnchor {
                            cpu_submit_ns: Some(begin + 50_000),
                            cpu_readback_ns: None,
                        },
                    })
                    .collect(),
                passes,
            },
            workloads: Vec::new(),
            bindings: Vec::new(),
            counters,
            marks,
        }
    }

    fn capture() -> Vec<u8> {
        let symbols = symbols();
        let meta = Meta {
            capture_level: 2,
            cpu_clock: CpuClock {
                source: "test".into(),
                resolution_ns: 1.0,
            },
            // Queue 1 declares no period: its timings are left untimed, with a defect.
            gpu_clocks: vec![GpuQueueClock {
                queue: QUEUES[0],
                timestamp_period_ns: 1.5,
            }],
            ..Meta::default()
        };
        let mut w = Writer::new(std::io::Cursor::new(Vec::new()), &meta, &symbols).expect("writer");
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for i in 0..300 {
            w.write_frame(&frame(&mut rng, i), &symbols)
                .expect("a valid frame");
        }
        w.finish_and_close(&[]).expect("closes").into_inner()
    }

    /// Everything a capture holds, as text.
    fn both(bytes: &[u8], options: &LoadOptions) -> (String, String) {
        let load = |fold| {
            let r = read::from_bytes(bytes.to_vec()).expect("opens");
            let c = adapt_with(&r, options, &mut no_progress, fold);
            let summary = serde_json::to_string(&crate::summarize(&c)).expect("serializes");
            format!("{c:?}\n{summary}")
        };
        (load(FoldPath::AsDecoded), load(FoldPath::ByBuilder))
    }

    /// The capture intact; damaged (a flipped byte inside a frame's payload); and that cut
    /// two thirds in (read by scan).
    fn three_captures() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let intact = capture();
        let mut damaged = intact.clone();
        let at = damaged.len() / 3;
        damaged[at] ^= 0x5a;
        let cut = damaged[..damaged.len() * 2 / 3].to_vec();
        (intact, damaged, cut)
    }

    #[test]
    fn the_loaded_periods_and_gpu_times_are_the_directorys() {
        let r = read::from_bytes(capture()).expect("opens");
        assert!(r.opened_by_directory());
        let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
        let directory: Vec<_> = r
            .frame_entries()
            .map(|e| (e.index, e.period_ns, e.gpu_ns))
            .collect();
        let f = c.frames();
        let loaded: Vec<_> = (0..c.frame_count())
            .map(|row| (f.index[row], f.period_ns[row], f.gpu_ns[row]))
            .collect();
        assert_eq!(loaded, directory);
        // The fixture exercises it: a 1.5 ns tick, so per-pass rounding would drift.
        assert!(directory.iter().filter(|e| e.2.is_some()).count() > 250);
        assert_eq!(directory.iter().filter(|e| e.1.is_none()).count(), 2);
    }

    /// Frames of 1 ms work at these begins (ms), budget 10 ms.
    fn clocked_capture(begins_ms: &[u64], hitches: impl Fn(&[FrameEntry]) -> Vec<u64>) -> Vec<u8> {
        let symbols = symbols();
        let meta = Meta {
            frame_budget_ns: Some(10_000_000),
            ..Meta::default()
        };
        let mut w = Writer::new(std::io::Cursor::new(Vec::new()), &meta, &symbols).expect("writer");
        for (index, &begin_ms) in (0u64..).zip(begins_ms) {
            let frame = Frame {
                index,
                cpu_begin_ns: begin_ms * 1_000_000,
                cpu_end_ns: begin_ms * 1_000_000 + 1_000_000,
                ..Frame::default()
            };
            w.write_frame(&frame, &symbols).expect("a valid frame");
        }
        let flags = hitches(&w.directory(&[]).frames);
        w.finish_and_close(&flags).expect("closes").into_inner()
    }

    /// The clock steps back three times in a row before a 18 ms frame: were the steps
    /// periods of 0, they would pull the rolling median to 0 and make it a hitch.
    const BACKWARDS_MS: [u64; 8] = [0, 10, 20, 19, 18, 17, 35, 45];
    const BACKWARDS_PERIODS: [Option<u64>; 8] = [
        Some(10_000_000),
        Some(10_000_000),
        None,
        None,
        None,
        Some(18_000_000),
        Some(10_000_000),
        None,
    ];

    #[test]
    fn a_frame_whose_next_begins_earlier_has_no_period_in_the_analysis_load() {
        let r = read::from_bytes(clocked_capture(&BACKWARDS_MS, |_| Vec::new())).expect("opens");
        let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
        assert_eq!(c.frames().period_ns, BACKWARDS_PERIODS);
        assert!(c
            .defects()
            .iter()
            .any(|d| d.kind == DefectKind::FrameOrder && d.count == 3));
    }

    #[test]
    fn directory_hitch_flags_agree_with_the_analysis_when_the_clock_goes_backwards() {
        // The directory's flags as the recorder sets them: the one hitch rule over the
        // directory's periods.
        let recorder_flags = |entries: &[FrameEntry]| {
            let mut rule = crate::hitch_rule::HitchRule::new(10_000_000);
            entries
                .iter()
                .filter_map(|e| {
                    let judgement = rule.observe(e.period_ns?, e.paused)?;
                    judgement.hitch.then_some(e.index)
                })
                .collect()
        };
        let r = read::from_bytes(clocked_capture(&BACKWARDS_MS, recorder_flags)).expect("opens");
        let periods: Vec<_> = r.frame_entries().map(|e| e.period_ns).collect();
        assert_eq!(periods, BACKWARDS_PERIODS);
        let flagged: Vec<u64> = r
            .frame_entries()
            .filter(|e| e.hitch)
            .map(|e| e.index)
            .collect();
        let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
        let found: Vec<u64> = crate::find_hitches(&c, &crate::HitchOptions::default())
            .hitches
            .iter()
            .map(|h| h.frame)
            .collect();
        assert_eq!(flagged, found);
        assert_eq!(found, Vec::<u64>::new());
    }

    #[test]
    fn folding_as_decoded_is_the_builders_fold() {
        let (intact, damaged, cut) = three_captures();
        for bytes in [&intact, &damaged, &cut] {
            for options in [
                LoadOptions::default(),
                LoadOptions::default().with_summary_only(true),
                LoadOptions::default().with_spans(true),
            ] {
                let (as_decoded, by_builder) = both(bytes, &options);
                assert_eq!(as_decoded, by_builder, "{options:?}");
            }
        }
        // The capture exercises what it claims to.
        let r = read::from_bytes(damaged.clone()).expect("opens");
        let c = adapt(&r, &LoadOptions::default(), &mut no_progress);
        assert!(c
            .defects()
            .iter()
            .any(|d| d.kind == DefectKind::CorruptRange));
        assert!(c.dropped_spans() > 0 && c.gpu_timed());
        assert!(c
            .scope_aggs()
            .all()
            .iter()
            .any(|a| a.self_ns == 0 && a.total_ns > 0));
        let r = read::from_bytes(cut).expect("opens");
        assert!(!r.opened_by_directory());
    }

    #[test]
    fn frames_read_again_are_the_frames_loaded_with_spans() {
        let (intact, damaged, cut) = three_captures();
        let dir = std::env::temp_dir().join(format!("framewise-reread-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        for (name, bytes) in [("intact", &intact), ("damaged", &damaged), ("cut", &cut)] {
            let path = dir.join(format!("{name}.sgpt"));
            std::fs::write(&path, bytes).expect("written");
            let with =
                crate::load::open(&path, &LoadOptions::default().with_spans(true)).expect("loads");
            let (c, frames) =
                crate::load::open_with_frame_source(&path, &LoadOptions::default(), |_| {})
                    .expect("loads");
            assert!(c.spans().is_none(), "{name}: spans are not kept");
            assert_eq!(frames.file(), Some(path.as_path()));
            assert_eq!(c.frames(), with.frames(), "{name}");
            let table = with.spans().expect("kept");
            assert!(c.frame_count() > 100, "{name}");
            for row in 0..c.frame_count() {
                let spans = frames.frame_spans(&c, row).expect("reads");
                assert_eq!(spans, table.frame_spans(row), "{name}: row {row}");
            }
            assert!(matches!(
                frames.frame_spans(&c, c.frame_count()),
                Err(FrameReadError::NoSuchRow { .. })
            ));
        }

        // The file changes under the source: overwritten in place with its own first two
        // thirds, then with a damaged copy. Rows still intact read as before; the others
        // are errors, never another frame's spans.
        let path = dir.join("changing.sgpt");
        std::fs::write(&path, &intact).expect("written");
        let with =
            crate::load::open(&path, &LoadOptions::default().with_spans(true)).expect("loads");
        let (c, frames) =
            crate::load::open_with_frame_source(&path, &LoadOptions::default(), |_| {})
                .expect("loads");
        let table = with.spans().expect("kept");
        std::fs::write(&path, &intact[..intact.len() / 2]).expect("overwritten");
        let (mut fine, mut changed) = (0, 0);
        for row in 0..c.frame_count() {
            match frames.frame_spans(&c, row) {
                Ok(spans) => {
                    assert_eq!(spans, table.frame_spans(row), "row {row}");
                    fine += 1;
                }
                Err(e @ FrameReadError::Changed { .. }) => {
                    assert!(e.to_string().contains("changed after it was loaded"), "{e}");
                    changed += 1;
                }
                Err(e) => panic!("row {row}: {e}"),
            }
        }
        assert!(fine > 0 && changed > 0, "{fine} intact, {changed} changed");
        std::fs::write(&path, &damaged).expect("overwritten");
        let errors = (0..c.frame_count())
            .filter(|&row| frames.frame_spans(&c, row).is_err())
            .count();
        assert_eq!(errors, 1, "one frame's record no longer checks");
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }
}
