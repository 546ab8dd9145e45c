//! Hitch classification: the one implementation. A hitch's likely causes in a closed
//! vocabulary, ranked, each with a confidence and the numbers it rests on.
//!
//! The classifier reads one frame's [`FrameEvidence`] — period and work, GPU time, the
//! `pipelines_created`, `bytes_uploaded` and `entities` counters, each scope's total against
//! its baseline — and the [`Baselines`] it is compared with. It holds no capture model and no
//! I/O: the analysis fills the evidence from a capture (with capture-wide baselines), and the
//! recorder's writer side can fill it from a frame it has just built.
//!
//! Triggers (thresholds in [`ClassifyThresholds`]):
//! - `pipeline-compile`: `pipelines_created` > 0 in the frame.
//! - `resource-upload`: `bytes_uploaded` far above its median (≥ `upload_factor` × the
//!   median and at least `upload_min_bytes` above it), no pipelines created.
//! - `spawn-burst`: the `entities` gauge rose by at least `spawn_min_rise` in the frame.
//! - `long-cpu-scope`: one scope's inclusive time, above its median, accounts for most of the
//!   frame's excess over the rolling median; names the scope and its call site.
//! - `gpu-bound`: the GPU frame time dominates the period while CPU work is shorter.
//! - `wait-outside-frame`: the period is at least twice the work and the time between frames
//!   accounts for most of the excess.
//! - `unknown-by-elimination`: nothing above explains it.
//!
//! Guesses are ranked best first: by confidence, then in the vocabulary's order (what
//! happened before where the time went).

use crate::footprint_key::HitchKey;
use crate::hitch_rule::Judgement;

/// The closed hitch vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HitchKind {
    /// Pipelines (shaders) were created in the frame.
    PipelineCompile,
    /// Far more bytes than usual were uploaded.
    ResourceUpload,
    /// Many entities appeared at once.
    SpawnBurst,
    /// One CPU scope took most of the excess.
    LongCpuScope,
    /// The GPU frame time dominated.
    GpuBound,
    /// The time went between frames.
    WaitOutsideFrame,
    /// Nothing measured explains it.
    UnknownByElimination,
}

impl HitchKind {
    /// Every kind, in the vocabulary's order.
    pub const ALL: [Self; 7] = [
        Self::PipelineCompile,
        Self::ResourceUpload,
        Self::SpawnBurst,
        Self::LongCpuScope,
        Self::GpuBound,
        Self::WaitOutsideFrame,
        Self::UnknownByElimination,
    ];

    /// The kind's name (`pipeline-compile`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::PipelineCompile => "pipeline-compile",
            Self::ResourceUpload => "resource-upload",
            Self::SpawnBurst => "spawn-burst",
            Self::LongCpuScope => "long-cpu-scope",
            Self::GpuBound => "gpu-bound",
            Self::WaitOutsideFrame => "wait-outside-frame",
            Self::UnknownByElimination => "unknown-by-elimination",
        }
    }

    /// Parses a name, accepting the JavaScript reference's names as aliases
    /// (`shader-compile`, `texture-upload`, `long-render`, `long-script`,
    /// `gc-or-upload-by-elimination`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "pipeline-compile" | "shader-compile" => Self::PipelineCompile,
            "resource-upload" | "texture-upload" => Self::ResourceUpload,
            "spawn-burst" => Self::SpawnBurst,
            "long-cpu-scope" | "long-render" | "long-script" => Self::LongCpuScope,
            "gpu-bound" => Self::GpuBound,
            "wait-outside-frame" => Self::WaitOutsideFrame,
            "unknown-by-elimination" | "gc-or-upload-by-elimination" => Self::UnknownByElimination,
            _ => return None,
        })
    }
}

/// How sure a guess is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    /// Weak.
    Low,
    /// Plausible.
    Medium,
    /// Strong.
    High,
}

impl Confidence {
    /// `low`, `medium` or `high`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// Parses `low`, `medium` or `high`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "low" => Self::Low,
            "medium" => Self::Medium,
            "high" => Self::High,
            _ => return None,
        })
    }
}

/// One ranked guess.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guess {
    /// The classification.
    pub guess: HitchKind,
    /// How sure.
    pub confidence: Confidence,
    /// The numbers it rests on, in a sentence.
    pub evidence: String,
    /// The scope, for `long-cpu-scope`.
    pub scope: Option<String>,
    /// The scope's call site, for `long-cpu-scope`.
    pub site: Option<String>,
}

/// Thresholds for the classification triggers.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassifyThresholds {
    /// `bytes_uploaded` must be at least this multiple of its median.
    pub upload_factor: f64,
    /// …and at least this many bytes above it.
    pub upload_min_bytes: i64,
    /// The `entities` gauge must rise by at least this much in the frame.
    pub spawn_min_rise: i64,
    /// Fraction of the excess for medium confidence.
    pub explains_medium: f64,
    /// Fraction of the excess for high confidence.
    pub explains_high: f64,
    /// Fraction of the excess below which a scope is not named at all.
    pub explains_low: f64,
}

impl Default for ClassifyThresholds {
    fn default() -> Self {
        Self {
            upload_factor: 4.0,
            upload_min_bytes: 256 * 1024,
            spawn_min_rise: 100,
            explains_medium: 0.5,
            explains_high: 0.75,
            explains_low: 0.25,
        }
    }
}

/// `bytes_uploaded` for one frame: the value and the baseline median it is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UploadEvidence {
    /// Bytes uploaded in the frame; `None` when the counter has no value in this frame.
    pub bytes: Option<i64>,
    /// The counter's median per frame.
    pub median: i64,
}

/// The `entities` gauge around one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntitiesEvidence {
    /// Its value in the frame before (`None`: unknown).
    pub before: Option<i64>,
    /// Its value in the frame (`None`: unknown).
    pub now: Option<i64>,
}

/// One scope's time in one frame, with its baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScopeEvidence<'a> {
    /// A stable id: among scopes equally far above their medians with equal self time, the
    /// lower id is named.
    pub id: u32,
    /// The scope's name.
    pub name: &'a str,
    /// Its call site (`file:line`), when known.
    pub site: Option<&'a str>,
    /// Inclusive time in the frame, ns.
    pub total_ns: u64,
    /// Self time in the frame, ns.
    pub self_ns: u64,
    /// Its median per-frame total, ns (0 for frames it did not run in).
    pub median_ns: u64,
    /// Its median per-frame self time, ns (0 for frames it did not run in), over the same
    /// frames as `median_ns`.
    pub self_median_ns: u64,
}

impl ScopeEvidence<'_> {
    /// How far its self time in the frame lies above its median self time, ns (negative
    /// below): where in a nest the time was added.
    fn self_rise_ns(&self) -> i128 {
        i128::from(self.self_ns) - i128::from(self.self_median_ns)
    }
}

/// Everything the classifier reads about one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameEvidence<'a> {
    /// The frame's index (named in the evidence).
    pub index: u64,
    /// Its period, ns.
    pub period_ns: u64,
    /// Its CPU work, ns.
    pub work_ns: u64,
    /// Its GPU frame time, ns, when known.
    pub gpu_ns: Option<u64>,
    /// `pipelines_created` in the frame (`None`: not recorded).
    pub pipelines_created: Option<i64>,
    /// `bytes_uploaded` (`None`: the counter is not recorded at all).
    pub bytes_uploaded: Option<UploadEvidence>,
    /// The `entities` gauge (`None`: not recorded at all).
    pub entities: Option<EntitiesEvidence>,
    /// The scopes that ran in the frame.
    pub scopes: &'a [ScopeEvidence<'a>],
}

/// What a frame is compared with besides its own scopes' medians.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Baselines {
    /// Median of period − work, ns.
    pub gap_median_ns: u64,
    /// Median GPU frame time, ns, when frames have one.
    pub gpu_median_ns: Option<u64>,
}

/// A hitch's excess over its baseline, ns: the period minus the rolling median behind the
/// judgement, or minus `fallback_median_ns` (a wider median, e.g. the capture's) when the
/// rule had no history yet.
pub fn excess_ns(judgement: &Judgement, fallback_median_ns: u64) -> u64 {
    let baseline = if judgement.median_ns > 0 {
        judgement.median_ns
    } else {
        fallback_median_ns
    };
    judgement.period_ns.saturating_sub(baseline)
}

/// What of a classified hitch enters its footprint key: the top guess as the verdict, and
/// as the site the scope a `long-cpu-scope` guess names (the scope whose time was most
/// above its baseline), whatever that guess's rank.
pub fn hitch_key<'a>(phase: Option<&'a str>, guesses: &'a [Guess]) -> HitchKey<'a> {
    hitch_key_of(phase, guesses.iter().map(|g| (g.guess, g.scope.as_deref())))
}

/// [`hitch_key`] over guesses of any shape, given best first as each one's kind and the
/// scope it names (a serialized hitch's guesses, say).
pub fn hitch_key_of<'a>(
    phase: Option<&'a str>,
    guesses: impl IntoIterator<Item = (HitchKind, Option<&'a str>)>,
) -> HitchKey<'a> {
    let mut guesses = guesses.into_iter();
    let first = guesses.next();
    HitchKey {
        phase,
        guess: first.map(|(kind, _)| kind.name()),
        section: first
            .into_iter()
            .chain(guesses)
            .find(|(kind, _)| *kind == HitchKind::LongCpuScope)
            .and_then(|(_, scope)| scope),
        ..HitchKey::default()
    }
}

const NS_PER_MS: f64 = 1_000_000.0;

fn fmt_ms(ns: u64) -> String {
    format!("{:.2} ms", ns as f64 / NS_PER_MS)
}

fn pct(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

fn tier(fraction: f64, t: &ClassifyThresholds) -> Option<Confidence> {
    if fraction >= t.explains_high {
        Some(Confidence::High)
    } else if fraction >= t.explains_medium {
        Some(Confidence::Medium)
    } else if fraction >= t.explains_low {
        Some(Confidence::Low)
    } else {
        None
    }
}

fn guess(kind: HitchKind, confidence: Confidence, evidence: String) -> Guess {
    Guess {
        guess: kind,
        confidence,
        evidence,
        scope: None,
        site: None,
    }
}

/// One frame under classification: its evidence, excess and thresholds, and what was
/// checked without explaining it (named when nothing does).
struct Classifier<'e, 'a> {
    frame: &'e FrameEvidence<'a>,
    base: &'e Baselines,
    t: &'e ClassifyThresholds,
    excess_ns: u64,
    /// The excess as a divisor (at least 1 ns).
    excess: f64,
    guesses: Vec<Guess>,
    checked: Vec<String>,
}

/// Classifies one frame whose excess over its baseline is `excess_ns` (see [`excess_ns`]).
/// Always at least one guess: `unknown-by-elimination` names what was checked.
pub fn classify(
    frame: &FrameEvidence<'_>,
    excess_ns: u64,
    base: &Baselines,
    t: &ClassifyThresholds,
) -> Vec<Guess> {
    let mut c = Classifier {
        frame,
        base,
        t,
        excess_ns,
        excess: excess_ns.max(1) as f64,
        guesses: Vec::new(),
        checked: Vec::new(),
    };
    c.pipelines();
    c.uploads();
    c.spawns();
    c.scopes();
    c.gpu();
    c.wait();
    c.finish()
}

impl Classifier<'_, '_> {
    fn pipelines(&mut self) {
        let f = self.frame;
        match f.pipelines_created {
            Some(n) if n > 0 => self.guesses.push(guess(
                HitchKind::PipelineCompile,
                Confidence::High,
                format!(
                    "pipelines_created = {n} in frame {} (period {}, {} over the median)",
                    f.index,
                    fmt_ms(f.period_ns),
                    fmt_ms(self.excess_ns)
                ),
            )),
            Some(n) => self.checked.push(format!("pipelines_created = {n}")),
            None => self.checked.push("pipelines_created not recorded".into()),
        }
    }

    fn uploads(&mut self) {
        let f = self.frame;
        let Some(uploads) = f.bytes_uploaded else {
            self.checked.push("bytes_uploaded not recorded".into());
            return;
        };
        let median = uploads.median;
        let Some(bytes) = uploads.bytes else {
            self.checked
                .push("bytes_uploaded not recorded in this frame".into());
            return;
        };
        let far = (bytes as f64) >= self.t.upload_factor * (median.max(0) as f64)
            && bytes.saturating_sub(median) >= self.t.upload_min_bytes;
        if !far || f.pipelines_created.unwrap_or(0) != 0 {
            self.checked
                .push(format!("bytes_uploaded = {bytes} (median {median})"));
            return;
        }
        let ratio = if median > 0 {
            format!("{:.1}× its median {median}", bytes as f64 / median as f64)
        } else {
            format!("its median is {median}")
        };
        let (confidence, pipes) = match f.pipelines_created {
            Some(_) => (Confidence::Medium, "no pipelines created"),
            None => (Confidence::Low, "pipelines_created not recorded"),
        };
        self.guesses.push(guess(
            HitchKind::ResourceUpload,
            confidence,
            format!(
                "bytes_uploaded = {bytes} in frame {}, {ratio}; {pipes}",
                f.index
            ),
        ));
    }

    fn spawns(&mut self) {
        let Some(entities) = self.frame.entities else {
            self.checked.push("entities not recorded".into());
            return;
        };
        let min_rise = self.t.spawn_min_rise;
        match (entities.before, entities.now) {
            (Some(b), Some(n)) if n.saturating_sub(b) >= min_rise => {
                let rise = n.saturating_sub(b);
                let confidence = if rise >= min_rise.saturating_mul(10) {
                    Confidence::High
                } else {
                    Confidence::Medium
                };
                self.guesses.push(guess(
                    HitchKind::SpawnBurst,
                    confidence,
                    format!(
                        "entities rose by {rise} ({b} → {n}) in frame {}; threshold {min_rise}",
                        self.frame.index
                    ),
                ));
            }
            (Some(b), Some(n)) => self.checked.push(format!("entities {b} → {n}")),
            _ => self.checked.push("entities change unknown".into()),
        }
    }

    /// `long-cpu-scope`: at the best tier reached, among the scopes whose rise reaches it,
    /// the one whose own (self) time rose the most: in a nest, the scope whose code took
    /// the added time, not a parent whose inclusive time carries it.
    fn scopes(&mut self) {
        let (excess, t) = (self.excess, self.t);
        // Scopes above their medians, ascending by the delta (among equal deltas the one
        // with more self time first: the last is the one the evidence names when no scope
        // reaches a tier).
        let mut deltas: Vec<(&ScopeEvidence<'_>, u64)> = self
            .frame
            .scopes
            .iter()
            .filter_map(|s| Some((s, s.total_ns.checked_sub(s.median_ns)?)))
            .collect();
        deltas.sort_by_key(|&(s, delta)| (delta, std::cmp::Reverse(s.self_ns), s.id));
        // At each tier, from the best, of the scopes whose inclusive rise reaches it, the one
        // whose self time rose most; on equal self rises the smaller inclusive rise (the
        // inner of a nest), then more self time, then the lower id. A parent's inclusive rise
        // holds its children's, so the parent reaches every tier its culprit child reaches;
        // the smallest rise alone named the parent whenever its other children ran below
        // their medians (its rise then under the child's), and which of the two was named
        // moved with that noise.
        let pick = [t.explains_high, t.explains_medium, t.explains_low]
            .iter()
            .find_map(|&bar| {
                deltas
                    .iter()
                    .filter(|&&(_, d)| d as f64 >= bar * excess)
                    .max_by_key(|&&(s, d)| {
                        (
                            s.self_rise_ns(),
                            std::cmp::Reverse(d),
                            s.self_ns,
                            std::cmp::Reverse(s.id),
                        )
                    })
            })
            .copied();
        let Some((s, delta)) = pick else {
            self.checked.push(match deltas.last() {
                Some((s, d)) => format!(
                    "largest scope change +{} (`{}`), {} of the excess",
                    fmt_ms(*d),
                    s.name,
                    pct(*d as f64 / excess)
                ),
                None => "no scope ran above its median".into(),
            });
            return;
        };
        let fraction = delta as f64 / excess;
        let Some(conf) = tier(fraction, t) else {
            return;
        };
        let at = s.site.map(|site| format!(" ({site})")).unwrap_or_default();
        let mut g = guess(
            HitchKind::LongCpuScope,
            conf,
            format!(
                "scope `{}`{at} took {} in frame {} against a median of {}: +{}, {} of the {} excess",
                s.name,
                fmt_ms(s.total_ns),
                self.frame.index,
                fmt_ms(s.median_ns),
                fmt_ms(delta),
                pct(fraction),
                fmt_ms(self.excess_ns)
            ),
        );
        g.scope = Some(s.name.to_owned());
        g.site = s.site.map(str::to_owned);
        self.guesses.push(g);
    }

    fn gpu(&mut self) {
        let f = self.frame;
        let Some(gpu) = f.gpu_ns else {
            self.checked.push("GPU time unknown".into());
            return;
        };
        let (period_ns, work_ns) = (f.period_ns, f.work_ns);
        let gpu_median = self.base.gpu_median_ns.unwrap_or(0);
        let gpu_delta = gpu.saturating_sub(gpu_median);
        let fraction = gpu_delta as f64 / self.excess;
        let dominates = gpu as f64 >= 0.5 * period_ns as f64 && gpu > work_ns;
        if !(dominates && fraction >= self.t.explains_low) {
            self.checked.push(format!(
                "GPU {} against work {}",
                fmt_ms(gpu),
                fmt_ms(work_ns)
            ));
            return;
        }
        let strong =
            gpu as f64 >= 0.8 * period_ns as f64 && (work_ns as f64) <= 0.5 * period_ns as f64;
        let confidence = match (strong, fraction >= self.t.explains_medium) {
            (true, true) => Confidence::High,
            (_, true) | (true, false) => Confidence::Medium,
            _ => Confidence::Low,
        };
        self.guesses.push(guess(
            HitchKind::GpuBound,
            confidence,
            format!(
                "GPU frame time {} of the {} period while CPU work was {}; GPU median {}, +{} is {} of the excess",
                fmt_ms(gpu),
                fmt_ms(period_ns),
                fmt_ms(work_ns),
                fmt_ms(gpu_median),
                fmt_ms(gpu_delta),
                pct(fraction)
            ),
        ));
    }

    fn wait(&mut self) {
        let (period_ns, work_ns) = (self.frame.period_ns, self.frame.work_ns);
        let gap_median = self.base.gap_median_ns;
        let gap = period_ns.saturating_sub(work_ns);
        let gap_delta = gap.saturating_sub(gap_median);
        let fraction = gap_delta as f64 / self.excess;
        if !(period_ns >= work_ns.saturating_mul(2) && fraction >= self.t.explains_medium) {
            self.checked.push(format!(
                "{} between frames (median {})",
                fmt_ms(gap),
                fmt_ms(gap_median)
            ));
            return;
        }
        let confidence = if fraction >= self.t.explains_high {
            Confidence::High
        } else {
            Confidence::Medium
        };
        self.guesses.push(guess(
            HitchKind::WaitOutsideFrame,
            confidence,
            format!(
                "period {} but work only {}: {} between frames against a median of {}, +{} is {} of the excess",
                fmt_ms(period_ns),
                fmt_ms(work_ns),
                fmt_ms(gap),
                fmt_ms(gap_median),
                fmt_ms(gap_delta),
                pct(fraction)
            ),
        ));
    }

    fn finish(mut self) -> Vec<Guess> {
        let f = self.frame;
        if self.guesses.is_empty() {
            self.guesses.push(guess(
                HitchKind::UnknownByElimination,
                Confidence::Low,
                format!(
                    "no counter or scope explains the {} excess of frame {} (period {}, work {}): {}",
                    fmt_ms(self.excess_ns),
                    f.index,
                    fmt_ms(f.period_ns),
                    fmt_ms(f.work_ns),
                    self.checked.join("; ")
                ),
            ));
        }
        self.guesses
            .sort_by(|a, b| b.confidence.cmp(&a.confidence).then(a.guess.cmp(&b.guess)));
        self.guesses
    }
}
