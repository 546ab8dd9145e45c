//! The monitor itself: per-track state, the reversal test, bursts and the rate limits.

use super::{
    round_to, JitterEvent, JitterGuess, JitterGuessKind, JitterKind, MotionError, MotionOptions,
    MotionStats, ReachChange, Sample, TrackSpec, TrackStats, DT_RING, EVENT_RING,
};
use crate::hitch_classify::Confidence;

/// A residual awaiting its reversal verdict (or, once confirmed, a burst's first event).
#[derive(Clone, Debug, Default)]
struct Pending {
    active: bool,
    r: [f64; 3],
    mag: f64,
    travel: f64,
    /// Units per second.
    speed: f64,
    dt_ms: f64,
    t_ms: f64,
    frame: u64,
    /// The track's sample count when the residual was taken (burst gaps count samples).
    sample: u64,
    from: [f64; 3],
    to: [f64; 3],
    reach_before: Option<f64>,
    reach_after: Option<f64>,
    phase: Option<String>,
    situation: Option<String>,
}

/// The open burst.
#[derive(Clone, Debug, Default)]
struct Burst {
    active: bool,
    events: u64,
    first_t_ms: f64,
    last_t_ms: f64,
    last_sample: u64,
    last_frame: u64,
    amplitude: f64,
    first: Pending,
}

/// A track's rate-limit window: its record is the biggest burst in it.
#[derive(Clone, Debug)]
struct Window {
    record: JitterEvent,
    amplitude: f64,
    opened_ms: f64,
    dropped: u64,
    /// Where the record goes among the records minted since (mint order).
    index: usize,
}

#[derive(Clone, Debug)]
struct Track {
    spec: TrackSpec,
    /// Index of the followed track.
    follows: Option<usize>,
    stats: TrackStats,
    /// 0: no sample, 1: one, 2: two (a prediction is possible).
    seeds: u8,
    p0: [f64; 3],
    p1: [f64; 3],
    t0: f64,
    t1: f64,
    reach1: Option<f64>,
    dts: [f64; DT_RING],
    dt_count: usize,
    dt_head: usize,
    pending: Pending,
    burst: Burst,
    event_frames: [u64; EVENT_RING],
    event_count: usize,
    window: Option<Window>,
}

impl Track {
    fn reseed(&mut self, s: &Sample<'_>) {
        self.seeds = 1;
        self.p1 = s.position;
        self.t1 = s.t_ms;
        self.reach1 = s.reach;
        self.pending.active = false;
    }

    fn push_dt(&mut self, dt: f64) {
        self.dts[self.dt_head] = dt;
        self.dt_head = (self.dt_head + 1) % DT_RING;
        self.dt_count = (self.dt_count + 1).min(DT_RING);
    }

    /// The median frame time (the upper middle of an even count, as the reference takes it).
    fn median_dt(&self) -> Option<f64> {
        if self.dt_count == 0 {
            return None;
        }
        let mut s = self.dts[..self.dt_count].to_vec();
        s.sort_by(f64::total_cmp);
        s.get(s.len() / 2).copied()
    }

    fn had_event_at(&self, frame: u64) -> bool {
        self.event_frames[..self.event_count.min(EVENT_RING)].contains(&frame)
    }

    fn note_event(&mut self) {
        let p = &self.pending;
        self.stats.events += 1;
        self.event_frames[self.event_count % EVENT_RING] = p.frame;
        self.event_count += 1;
        let b = &mut self.burst;
        if !b.active {
            b.active = true;
            b.events = 0;
            b.amplitude = 0.0;
            b.first_t_ms = p.t_ms;
            b.first = p.clone();
            self.stats.bursts += 1;
        }
        b.events += 1;
        b.last_t_ms = p.t_ms;
        b.last_sample = p.sample;
        b.last_frame = p.frame;
        if p.mag > b.amplitude {
            b.amplitude = p.mag;
        }
    }
}

/// The motion monitor (module docs of [`super`]): declare tracks, feed one [`Sample`] per
/// track per rendered frame, declare cuts, drain [`JitterEvent`]s.
///
/// The steady path allocates nothing; strings exist only when a candidate or a burst is
/// recorded.
#[derive(Clone, Debug)]
pub struct MotionMonitor {
    options: MotionOptions,
    tracks: Vec<Track>,
    records: Vec<JitterEvent>,
    session_records: u64,
    dropped_since_last: u64,
    total_dropped: u64,
    /// The latest sample time seen (the monitor's "now" for a drain).
    now_ms: f64,
}

impl MotionMonitor {
    /// A monitor of these tracks. Every floor must be positive, names distinct, and a
    /// followed track declared.
    pub fn new(specs: Vec<TrackSpec>, options: MotionOptions) -> Result<Self, MotionError> {
        let mut tracks: Vec<Track> = Vec::with_capacity(specs.len());
        for spec in &specs {
            if !(spec.floor > 0.0 && spec.floor.is_finite()) {
                return Err(MotionError::BadFloor(spec.name.clone()));
            }
            if specs.iter().filter(|s| s.name == spec.name).count() > 1 {
                return Err(MotionError::DuplicateTrack(spec.name.clone()));
            }
        }
        for spec in specs.iter().cloned() {
            let follows = match &spec.follows {
                Some(f) => Some(specs.iter().position(|s| &s.name == f).ok_or_else(|| {
                    MotionError::UnknownFollows {
                        track: spec.name.clone(),
                        follows: f.clone(),
                    }
                })?),
                None => None,
            };
            tracks.push(Track {
                stats: TrackStats {
                    name: spec.name.clone(),
                    ..TrackStats::default()
                },
                spec,
                follows,
                seeds: 0,
                p0: [0.0; 3],
                p1: [0.0; 3],
                t0: 0.0,
                t1: 0.0,
                reach1: None,
                dts: [0.0; DT_RING],
                dt_count: 0,
                dt_head: 0,
                pending: Pending::default(),
                burst: Burst::default(),
                event_frames: [0; EVENT_RING],
                event_count: 0,
                window: None,
            });
        }
        Ok(Self {
            options,
            tracks,
            records: Vec::new(),
            session_records: 0,
            dropped_since_last: 0,
            total_dropped: 0,
            now_ms: f64::NEG_INFINITY,
        })
    }

    /// The index of a track, for [`Self::sample_index`].
    pub fn track_index(&self, name: &str) -> Option<usize> {
        self.tracks.iter().position(|t| t.spec.name == name)
    }

    /// Feeds one frame's sample of the named track.
    pub fn sample(&mut self, track: &str, sample: &Sample<'_>) -> Result<(), MotionError> {
        let i = self
            .track_index(track)
            .ok_or_else(|| MotionError::UnknownTrack(track.to_owned()))?;
        self.sample_index(i, sample);
        Ok(())
    }

    /// Feeds one frame's sample of the track at `index` (see [`Self::track_index`]); an
    /// index out of range is ignored.
    pub fn sample_index(&mut self, index: usize, s: &Sample<'_>) {
        if index >= self.tracks.len() {
            return;
        }
        if s.t_ms > self.now_ms {
            self.now_ms = s.t_ms;
        }
        self.tracks[index].stats.samples += 1;
        self.flush_if_closed(index, s.t_ms);
        if s.held {
            self.tracks[index].stats.held += 1;
            self.close_burst(index);
            self.tracks[index].reseed(s);
            return;
        }
        let tr = &mut self.tracks[index];
        if tr.seeds == 0 {
            tr.reseed(s);
            return;
        }
        let dt2 = s.t_ms - tr.t1;
        if tr.seeds == 1 {
            if dt2 <= 0.0 {
                tr.reseed(s);
                return;
            }
            tr.push_dt(dt2);
            tr.p0 = tr.p1;
            tr.t0 = tr.t1;
            tr.p1 = s.position;
            tr.t1 = s.t_ms;
            tr.reach1 = s.reach;
            tr.seeds = 2;
            return;
        }
        let dt1 = tr.t1 - tr.t0;
        if dt1 <= 0.0 || dt2 <= 0.0 {
            self.close_burst(index);
            self.tracks[index].reseed(s);
            return;
        }
        tr.push_dt(dt2);
        self.judge(index, s, dt1, dt2);
        let gap = self.options.burst_gap_frames;
        let max_ms = self.options.burst_max_ms;
        let tr = &self.tracks[index];
        let b = &tr.burst;
        if b.active
            && (tr.stats.samples - b.last_sample > gap + 1 || s.t_ms - b.first_t_ms >= max_ms)
        {
            self.close_burst(index);
        }
        let tr = &mut self.tracks[index];
        tr.p0 = tr.p1;
        tr.t0 = tr.t1;
        tr.p1 = s.position;
        tr.t1 = s.t_ms;
        tr.reach1 = s.reach;
    }

    /// The prediction, the verdict on the pending residual, and this residual as the next
    /// candidate.
    fn judge(&mut self, index: usize, s: &Sample<'_>, dt1: f64, dt2: f64) {
        let ratio = self.options.ratio;
        let tr = &mut self.tracks[index];
        let v = [0, 1, 2].map(|a| (tr.p1[a] - tr.p0[a]) / dt1);
        let speed = norm(v);
        let travel = speed * dt2;
        let r = [0, 1, 2].map(|a| s.position[a] - (tr.p1[a] + v[a] * dt2));
        let mag = norm(r);

        // The verdict on the previous residual: reversed by this one? As velocity anomalies.
        let mut confirmed = false;
        if tr.pending.active {
            let p = &tr.pending;
            let dot = p.r[0] * r[0] + p.r[1] * r[1] + p.r[2] * r[2];
            let scaled = mag * (p.dt_ms / dt2);
            // Anti-parallel (cos ≤ −0.5) and at least half the size.
            let reversed =
                dot < 0.0 && scaled >= 0.5 * p.mag && dot * dot >= 0.25 * p.mag * p.mag * mag * mag;
            if reversed {
                tr.note_event();
                confirmed = true;
            }
            tr.pending.active = false;
        }
        // This residual as the next candidate, unless it is the echo of a confirmed jump.
        if !confirmed && mag > tr.spec.floor.max(ratio * travel) {
            let p = &mut tr.pending;
            p.active = true;
            p.r = r;
            p.mag = mag;
            p.travel = travel;
            p.speed = speed * 1000.0;
            p.dt_ms = dt2;
            p.t_ms = s.t_ms;
            p.frame = s.frame;
            p.sample = tr.stats.samples;
            p.from = tr.p1;
            p.to = s.position;
            p.reach_before = tr.reach1;
            p.reach_after = s.reach;
            set_text(&mut p.phase, s.phase);
            set_text(&mut p.situation, s.situation);
        }
    }

    /// The host changed the view on purpose (a teleport, a mode flip, a respawn): the named
    /// track (every track with `None`) forgets its trajectory; an open burst closes as it
    /// stands.
    pub fn cut(&mut self, track: Option<&str>) {
        for i in 0..self.tracks.len() {
            if track.is_some_and(|name| self.tracks[i].spec.name != name) {
                continue;
            }
            self.tracks[i].stats.cuts += 1;
            self.close_burst(i);
            let tr = &mut self.tracks[i];
            tr.seeds = 0;
            tr.pending.active = false;
        }
    }

    /// Hands back the records decided so far, in the order they were minted. A track's
    /// rate-limit window still open rides to the next drain (its record is not decided
    /// yet); `final_drain` (the session is ending) closes open bursts and windows now.
    pub fn drain(&mut self, final_drain: bool) -> Vec<JitterEvent> {
        if final_drain {
            for i in 0..self.tracks.len() {
                self.close_burst(i);
            }
        }
        for i in 0..self.tracks.len() {
            let Some(w) = &mut self.tracks[i].window else {
                continue;
            };
            if final_drain || self.now_ms - w.opened_ms >= self.options.min_record_gap_ms {
                self.flush_window(i);
            } else {
                w.index = 0;
            }
        }
        std::mem::take(&mut self.records)
    }

    /// Counts for probes.
    pub fn stats(&self) -> MotionStats {
        MotionStats {
            records: self.session_records,
            dropped: self.total_dropped,
            tracks: self.tracks.iter().map(|t| t.stats.clone()).collect(),
        }
    }

    fn flush_window(&mut self, index: usize) {
        let Some(w) = self.tracks[index].window.take() else {
            return;
        };
        let mut record = w.record;
        let dropped = w.dropped + self.dropped_since_last;
        if dropped > 0 {
            record.dropped_since_last = Some(dropped);
            self.dropped_since_last = 0;
        }
        let at = w.index.min(self.records.len());
        self.records.insert(at, record);
    }

    fn flush_if_closed(&mut self, index: usize, now_ms: f64) {
        let gap = self.options.min_record_gap_ms;
        if self.tracks[index]
            .window
            .as_ref()
            .is_some_and(|w| now_ms - w.opened_ms >= gap)
        {
            self.flush_window(index);
        }
    }

    /// Closes the track's burst: rate limits first, then the record and its explanations.
    fn close_burst(&mut self, index: usize) {
        if !self.tracks[index].burst.active {
            return;
        }
        self.tracks[index].burst.active = false;
        let b = self.tracks[index].burst.clone();
        self.flush_if_closed(index, b.first.t_ms);
        let amplitude = b.amplitude;
        if let Some(w) = &mut self.tracks[index].window {
            w.dropped += 1;
            self.total_dropped += 1;
            if amplitude <= w.amplitude {
                return;
            }
        } else if self.session_records >= self.options.max_records_per_session {
            self.dropped_since_last += 1;
            self.total_dropped += 1;
            return;
        }
        let record = self.record_of(index, &b);
        let tr = &mut self.tracks[index];
        if let Some(w) = &mut tr.window {
            // The bigger burst takes the window over.
            w.record = record;
            w.amplitude = amplitude;
            return;
        }
        self.session_records += 1;
        tr.window = Some(Window {
            record,
            amplitude,
            opened_ms: b.first.t_ms,
            dropped: 0,
            index: self.records.len(),
        });
    }

    /// The record of a closed burst, with its explanations ranked ahead of its kind.
    fn record_of(&self, index: usize, b: &Burst) -> JitterEvent {
        let tr = &self.tracks[index];
        let f = &b.first;
        let kind = if b.events >= 2 {
            JitterKind::Oscillation
        } else {
            JitterKind::Snap
        };
        let duration_ms = b.last_t_ms - b.first_t_ms;
        let median = tr.median_dt();
        let oscillation = kind == JitterKind::Oscillation;
        let coincident: Vec<String> = self
            .tracks
            .iter()
            .enumerate()
            .filter(|&(i, other)| i != index && other.had_event_at(f.frame))
            .map(|(_, other)| other.spec.name.clone())
            .collect();
        let passenger = tr
            .follows
            .is_some_and(|i| coincident.contains(&self.tracks[i].spec.name));
        let reach = match (&tr.spec.reach, f.reach_before, f.reach_after) {
            (Some(name), Some(before), Some(after)) if before.is_finite() && after.is_finite() => {
                Some((name.clone(), before, after))
            }
            _ => None,
        };
        let unit = &self.options.unit;
        let mut cls = Vec::new();
        if passenger {
            let leader = tr.spec.follows.as_deref().unwrap_or("?");
            cls.push(JitterGuess {
                guess: JitterGuessKind::FollowsTrack,
                confidence: Confidence::High,
                evidence: format!(
                    "jumped in the same frame as {leader}, which it follows — see that record; this one is the passenger"
                ),
            });
        }
        if let Some((name, before, after)) = &reach {
            let d = after - before;
            if d.abs() >= 0.7 * f.mag {
                cls.push(JitterGuess {
                    guess: JitterGuessKind::ReachChange,
                    confidence: Confidence::High,
                    evidence: format!(
                        "{name} {}→{}{unit} (Δ{}{} ≈ the {}{unit} jump): the point's distance to its anchor changed — a clamp or a zoom, not a teleport",
                        round_to(*before, 2),
                        round_to(*after, 2),
                        if d >= 0.0 { "+" } else { "" },
                        round_to(d, 3),
                        round_to(f.mag, 3)
                    ),
                });
            }
        }
        let long_ms = self.options.long_frame_ms;
        let long =
            f.dt_ms >= long_ms || median.is_some_and(|m| f.dt_ms >= 2.0 * m && f.dt_ms >= 50.0);
        if long {
            let rel = median
                .map(|m| format!(" ({:.1}× the {m:.1}ms median)", f.dt_ms / m))
                .unwrap_or_default();
            let shape = if oscillation {
                format!("{} reversals starting in", b.events)
            } else {
                "landed in".to_owned()
            };
            cls.push(JitterGuess {
                guess: JitterGuessKind::LongFrameCatchUp,
                confidence: Confidence::Medium,
                evidence: format!(
                    "{shape} a {:.0}ms frame{rel}, past the {long_ms}ms the sim integrates against the clock: a dt clamp across a stall reads as a jump — the stall is the incident",
                    f.dt_ms
                ),
            });
        } else if oscillation {
            cls.push(JitterGuess {
                guess: JitterGuessKind::Oscillation,
                confidence: Confidence::High,
                evidence: format!(
                    "{} reversals over {duration_ms:.0}ms, amplitude {}{unit} — a fixed-step sim drawn without interpolation, or two writers fighting over one transform",
                    b.events,
                    round_to(b.amplitude, 3)
                ),
            });
        } else {
            cls.push(JitterGuess {
                guess: JitterGuessKind::Snap,
                confidence: Confidence::High,
                evidence: format!(
                    "{}{unit} off its trajectory in one {:.1}ms frame (expected {}{unit} of travel at {:.2}{unit}/s); motion resumed from the new place",
                    round_to(f.mag, 3),
                    f.dt_ms,
                    round_to(f.travel, 3),
                    f.speed
                ),
            });
        }
        JitterEvent {
            t_ms: f.t_ms,
            track: tr.spec.name.clone(),
            kind,
            frame: f.frame,
            jump: f.r.map(|x| round_to(x, 3)),
            units: round_to(f.mag, 3),
            unit: self.options.unit.clone(),
            travel_units: round_to(f.travel, 3),
            speed: round_to(f.speed, 2),
            dt_ms: round_to(f.dt_ms, 1),
            median_dt_ms: median.map(|m| round_to(m, 1)),
            from: f.from.map(|x| round_to(x, 2)),
            to: f.to.map(|x| round_to(x, 2)),
            frames: oscillation.then(|| b.last_frame.saturating_sub(f.frame) + 1),
            duration_ms: oscillation.then(|| duration_ms.round()),
            amplitude: oscillation.then(|| round_to(b.amplitude, 3)),
            coincident,
            reach: reach.map(|(name, before, after)| ReachChange {
                name,
                before: round_to(before, 2),
                after: round_to(after, 2),
            }),
            classification: cls,
            phase: f.phase.clone(),
            situation: f.situation.clone(),
            dropped_since_last: None,
        }
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Sets `slot` to `text`, reusing its buffer.
fn set_text(slot: &mut Option<String>, text: Option<&str>) {
    match (slot.as_mut(), text) {
        (Some(buf), Some(t)) => {
            buf.clear();
            buf.push_str(t);
        }
        (None, Some(t)) => *slot = Some(t.to_owned()),
        (_, None) => *slot = None,
    }
}
