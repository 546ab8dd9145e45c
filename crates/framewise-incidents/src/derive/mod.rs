//! Deriving records from frames: the one path from a frame to `hitch`, `usermark`,
//! `jitter`, `heartbeat` and `session-end` records, and to `profile.json`.
//!
//! The recorder's writer thread feeds it each frame it wrote, and a capture read back can
//! be fed the same frames in the same order, so the live log and a log derived after the
//! fact hold the same records. It applies `framewise-detect`'s rules (the hitch rule, the
//! footprint, the canonical situation, the motion monitor) and implements none; it does no
//! I/O.
//!
//! A frame's period is known when the next frame arrives (begin to next begin), so a frame
//! is judged one frame late, and the last frame of a session is never judged (as in a
//! capture's directory).

mod frames;
mod limits;
mod motion;
mod records;
mod window;

use std::collections::BTreeMap;

use framewise_detect::frame_class::{jank_ratio, FrameClass};
use framewise_detect::hitch_rule::{HitchRule, DEFAULT_BUDGET_NS};
use framewise_format::derived::{period_ns, FrameClock};
use framewise_format::model::{AdapterType, Frame, MarkKind, Meta, SymbolTable};

use crate::profile::{Budgets, FrameSummary as ProfileFrame, Profile, PROFILE_SCHEMA};
use crate::record::{Common, DropCounts, HeartbeatRecord, Record, SessionEndRecord, WrittenCounts};
use crate::stats::{median_p95_ms, ms_from_ns, s_from_ns};
use framewise_detect::motion::JitterEvent;

use frames::{FrameRing, FrameSummary};
use limits::Limits;
use motion::Jitter;

pub use limits::{HITCH_WINDOW_NS, SESSION_CAP};

/// A heartbeat is written after this much non-paused play, ns.
pub const HEARTBEAT_PLAY_NS: u64 = 10_000_000_000;
/// `profile.json` is due this often, ns of session time.
pub const PROFILE_EVERY_NS: u64 = 2_000_000_000;
/// `profile.json` summarises this trailing window, ns.
pub const PROFILE_WINDOW_NS: u64 = 10_000_000_000;
/// Frames a hitch's counter baselines are taken over (the hitch rule's window).
const BASELINE_FRAMES: usize = framewise_detect::hitch_rule::WINDOW_FRAMES;

/// What is known of a session before its first frame: it goes on every record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionFacts {
    /// The build id; `None` when not declared.
    pub build: Option<String>,
    /// The situation's facets as the host declared them (canonicalised here).
    pub situation: Vec<(String, String)>,
    /// `hardware`, `software` or `unknown`; `None` when no adapter was declared.
    pub regime: Option<String>,
    /// The session id, 32 hex digits.
    pub session: Option<String>,
    /// Whether a robot runs the session (bench harness, CI).
    pub automated: bool,
    /// Wall-clock time of session time 0, ns since the Unix epoch (0: unknown).
    pub wall_start_unix_ns: u64,
    /// The frame budget, ns; `None`: 60 Hz.
    pub frame_budget_ns: Option<u64>,
    /// The META settings that declare motion tracks (`motion.*`): the deriver feeds those
    /// tracks to the motion monitor and writes its `jitter` records.
    pub motion_settings: Vec<(String, String)>,
    /// The names of the inputs the host declared for its `world` object, in bit order
    /// (META `world.inputs`).
    pub world_inputs: Vec<String>,
}

impl SessionFacts {
    /// The facts a capture's META states, with `automated` from the caller.
    pub fn from_meta(meta: &Meta, automated: bool) -> Self {
        let session = meta.session_id.iter().map(|b| format!("{b:02x}")).collect();
        Self {
            build: (!meta.build_id.is_empty()).then(|| meta.build_id.clone()),
            situation: meta.situation.clone(),
            regime: meta.adapter.as_ref().map(|a| {
                match a.adapter_type {
                    AdapterType::Hardware => "hardware",
                    AdapterType::Software => "software",
                    AdapterType::Unknown => "unknown",
                }
                .to_owned()
            }),
            session: Some(session),
            automated,
            wall_start_unix_ns: meta.wall_clock_start_unix_ns,
            frame_budget_ns: meta.frame_budget_ns,
            motion_settings: meta
                .settings
                .iter()
                .filter(|(k, _)| framewise_detect::motion::names::is_motion_counter(k))
                .cloned()
                .collect(),
            world_inputs: meta
                .settings
                .iter()
                .rev()
                .find(|(k, _)| k == crate::world::INPUTS_SETTING)
                .map(|(_, v)| crate::world::input_names(v))
                .unwrap_or_default(),
        }
    }
}

/// Whether this process runs under a robot: `FRAMEWISE_AUTOMATED` or `CI` set to anything
/// but empty, `0` or `false` (any case, blanks around ignored): `1`, `true`, `yes` all count.
pub fn automated_from_env() -> bool {
    automated_by(|name| std::env::var(name).ok())
}

/// [`automated_from_env`] over any environment (`lookup` returns a variable's value).
pub fn automated_by(lookup: impl Fn(&str) -> Option<String>) -> bool {
    ["FRAMEWISE_AUTOMATED", "CI"].into_iter().any(|name| {
        lookup(name).is_some_and(|value| {
            let value = value.trim().to_ascii_lowercase();
            !value.is_empty() && value != "0" && value != "false"
        })
    })
}

/// The non-paused play since the last heartbeat.
#[derive(Debug, Default)]
struct Beat {
    play_ns: u64,
    periods_ns: Vec<u64>,
    hitches: u64,
}

/// Derives records from frames fed in order.
#[derive(Debug)]
pub struct Deriver {
    base: Common,
    wall_start_unix_ns: u64,
    /// The host's input names, for the `world` object.
    world_inputs: Vec<String>,
    budget_ns: u64,
    rule: HitchRule,
    ring: FrameRing,
    limits: Limits,
    /// The motion monitor, when the session declared tracks.
    jitter: Option<Jitter>,
    /// Its events decided by the last frame (reused buffer).
    events: Vec<JitterEvent>,
    beat: Beat,
    heartbeats: u64,
    next_profile_ns: Option<u64>,
    first_begin_ns: Option<u64>,
    last_end_ns: u64,
    frames: u64,
    paused_frames: u64,
    finished: bool,
}

impl Deriver {
    /// A deriver for a session with these facts.
    pub fn new(facts: SessionFacts) -> Self {
        let ctx = framewise_detect::situation::canonical_situation(
            facts
                .situation
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        );
        let budget_ns = facts.frame_budget_ns.unwrap_or(DEFAULT_BUDGET_NS);
        let jitter = Jitter::new(&facts.motion_settings, &ctx);
        Self {
            base: Common {
                at: String::new(),
                build: facts.build,
                phase: None,
                ctx: (!ctx.is_empty()).then_some(ctx),
                regime: facts.regime,
                automated: facts.automated,
                session: facts.session,
                world: None,
            },
            wall_start_unix_ns: facts.wall_start_unix_ns,
            world_inputs: facts.world_inputs,
            budget_ns,
            rule: HitchRule::new(budget_ns),
            ring: FrameRing::new(),
            limits: Limits::default(),
            jitter,
            events: Vec::new(),
            beat: Beat::default(),
            heartbeats: 0,
            next_profile_ns: None,
            first_begin_ns: None,
            last_end_ns: 0,
            frames: 0,
            paused_frames: 0,
            finished: false,
        }
    }

    /// Records written so far, by type.
    pub fn written(&self) -> WrittenCounts {
        WrittenCounts {
            heartbeat: self.heartbeats,
            jitter: self.jitter.as_ref().map_or(0, |j| j.written),
            ..self.limits.written
        }
    }

    /// Records the rate limits dropped so far, by type.
    pub fn dropped(&self) -> DropCounts {
        DropCounts {
            jitter: self.jitter.as_ref().map_or(0, Jitter::dropped),
            ..self.limits.dropped
        }
    }

    /// The common fields for a record made at session time `at_ns` in `phase`.
    /// `frame` is the record's frame: its `world` object goes on the record.
    fn common(
        &self,
        at_ns: u64,
        phase: Option<&str>,
        frame: Option<&FrameSummary>,
        symbols: &SymbolTable,
    ) -> Common {
        let unix_ms = (u128::from(self.wall_start_unix_ns) + u128::from(at_ns)) / 1_000_000;
        let world = frame.and_then(|f| {
            let counters = f
                .world
                .iter()
                .filter_map(|&(id, v)| Some((symbols.name(id)?, v)));
            crate::world::world_of(counters, &self.world_inputs)
        });
        Common {
            at: crate::time::iso_from_unix_ms(i64::try_from(unix_ms).unwrap_or(i64::MAX)),
            phase: phase.map(str::to_owned),
            world,
            ..self.base.clone()
        }
    }

    /// Feeds the next frame; the records it made due are pushed onto `out`.
    pub fn observe(&mut self, frame: &Frame, symbols: &SymbolTable, out: &mut Vec<Record>) {
        if self.finished {
            return;
        }
        self.judge_previous(frame, symbols, out);
        let summary = self.ring.push(frame, symbols);
        self.frames += 1;
        self.paused_frames += u64::from(summary.paused);
        self.first_begin_ns.get_or_insert(frame.cpu_begin_ns);
        self.last_end_ns = self.last_end_ns.max(frame.cpu_end_ns);
        for mark in &frame.marks {
            if let MarkKind::User { window_ns, note } = &mark.kind {
                if self.limits.usermark() {
                    let record = records::usermark(self, symbols, mark.at_ns, *window_ns, note);
                    out.push(Record::Usermark(record));
                }
            }
        }
        if let Some(jitter) = &mut self.jitter {
            jitter.observe(frame, symbols, &mut self.events);
        }
        self.push_jitter(symbols, out);
        if self.beat.play_ns >= HEARTBEAT_PLAY_NS {
            out.push(Record::Heartbeat(self.heartbeat(symbols)));
        }
    }

    /// The jitter records of the events decided so far, dated by their jump frame's start.
    fn push_jitter(&mut self, symbols: &SymbolTable, out: &mut Vec<Record>) {
        let mut events = std::mem::take(&mut self.events);
        if let Some(jitter) = &self.jitter {
            for event in &events {
                let begin_ns = jitter.begin_ns(event.frame).unwrap_or(self.last_end_ns);
                let frame = self.ring.newest_first().find(|f| f.index == event.frame);
                let common = self.common(begin_ns, None, frame, symbols);
                let record = crate::jitter_record(event, &common);
                out.push(Record::Jitter(record));
            }
        }
        if let Some(jitter) = &mut self.jitter {
            jitter.written += events.len() as u64;
        }
        events.clear();
        self.events = events;
    }

    /// Gives the newest frame its period from `next`, then judges it.
    fn judge_previous(&mut self, next: &Frame, symbols: &SymbolTable, out: &mut Vec<Record>) {
        let Some(previous) = self.ring.newest_mut() else {
            return;
        };
        let clock = |index, cpu_begin_ns, dropped_frames_before| FrameClock {
            index,
            cpu_begin_ns,
            dropped_frames_before,
        };
        previous.period_ns = period_ns(
            clock(previous.index, previous.begin_ns, 0),
            Some(clock(
                next.index,
                next.cpu_begin_ns,
                next.dropped_frames_before,
            )),
        );
        let (Some(period), paused, begin_ns) =
            (previous.period_ns, previous.paused, previous.begin_ns)
        else {
            return;
        };
        // A window that closed before this frame began leaves first.
        if let Some(record) = self.limits.due(begin_ns, false) {
            out.push(Record::Hitch(*record));
        }
        let Some(judgement) = self.rule.observe(period, paused) else {
            return;
        };
        if let Some(previous) = self.ring.newest_mut() {
            previous.median_ns = Some(judgement.median_ns);
        }
        self.beat.play_ns += period;
        self.beat.periods_ns.push(period);
        if judgement.hitch {
            self.beat.hitches += 1;
            let record = records::hitch(self, symbols, &judgement);
            self.limits.hitch(record, begin_ns);
        }
    }

    fn heartbeat(&mut self, symbols: &SymbolTable) -> HeartbeatRecord {
        let beat = std::mem::take(&mut self.beat);
        let mut periods_ns = beat.periods_ns;
        let frames = periods_ns.len() as u64;
        let newest = self.ring.back(0);
        let phase = newest.and_then(|f| f.phase).and_then(|p| symbols.name(p));
        let record = HeartbeatRecord {
            common: self.common(self.last_end_ns, phase, newest, symbols),
            frame: newest.map_or(0, |f| f.index),
            window: crate::stats::window(frames, Some(s_from_ns(beat.play_ns)), &mut periods_ns),
            counters: self.counter_medians(frames as usize, symbols),
            hitches: beat.hitches,
        };
        // Keep the buffer's capacity for the next window.
        periods_ns.clear();
        self.beat.periods_ns = periods_ns;
        self.heartbeats += 1;
        record
    }

    /// Per counter name, its median over the newest `frames` judged frames.
    fn counter_medians(&self, frames: usize, symbols: &SymbolTable) -> BTreeMap<String, i64> {
        self.ring
            .counter_medians(frames, None, symbols)
            .into_iter()
            .filter_map(|(id, median)| Some((symbols.name(id)?.to_owned(), median)))
            .collect()
    }

    /// The profile, when one is due after the frames fed so far (every 2 s of session time).
    pub fn profile_due(&mut self, symbols: &SymbolTable) -> Option<Profile> {
        let first_begin_ns = self.first_begin_ns?;
        let due_ns = *self
            .next_profile_ns
            .get_or_insert(first_begin_ns.saturating_add(PROFILE_EVERY_NS));
        if self.last_end_ns < due_ns {
            return None;
        }
        self.next_profile_ns = Some(self.last_end_ns.saturating_add(PROFILE_EVERY_NS));
        Some(self.profile(symbols))
    }

    /// The rolling summary over the trailing 10 s now.
    pub fn profile(&self, symbols: &SymbolTable) -> Profile {
        let since_ns = self.last_end_ns.saturating_sub(PROFILE_WINDOW_NS);
        let window: Vec<_> = self
            .ring
            .newest_first()
            .take_while(|f| f.end_ns >= since_ns)
            .collect();
        let mut periods_ns: Vec<u64> = window
            .iter()
            .filter(|f| !f.paused)
            .filter_map(|f| f.period_ns)
            .collect();
        let judged = periods_ns.len();
        // The frames counters' and scopes' statistics are taken over, as `summarize` takes
        // them: every non-paused frame, the newest included (a frame's counters and scopes
        // need no period, only its frame time does).
        let played: Vec<&frames::FrameSummary> =
            window.iter().copied().filter(|f| !f.paused).collect();
        let seconds = window
            .last()
            .map(|oldest| s_from_ns(self.last_end_ns.saturating_sub(oldest.begin_ns)));
        let (median_ms, p95_ms) = median_p95_ms(&mut periods_ns);
        let newest = self.ring.back(0);
        let phase = newest.and_then(|f| f.phase).and_then(|p| symbols.name(p));
        let budget_ms = ms_from_ns(self.budget_ns);
        let budgets = match p95_ms {
            Some(p95) => Budgets {
                checked: 1,
                breached: (p95 > budget_ms)
                    .then(|| "frame_ms".to_owned())
                    .into_iter()
                    .collect(),
            },
            None => Budgets::default(),
        };
        Profile {
            schema: PROFILE_SCHEMA.to_owned(),
            common: self.common(self.last_end_ns, phase, newest, symbols),
            frame_index: newest.map_or(0, |f| f.index),
            window: crate::record::Window {
                ms: None,
                frames: window.len() as u64,
                seconds,
                median_ms: None,
                p95_ms: None,
            },
            frame: ProfileFrame {
                median_ms,
                p95_ms,
                // To 0.01 frames per second.
                fps: median_ms
                    .filter(|&m| m > 0.0)
                    .map(|m| (100_000.0 / m).round() / 100.0),
            },
            counters: self.counter_medians(judged, symbols),
            counter_stats: window::counter_stats(&played, symbols),
            scopes: window::scope_stats(&played, symbols),
            class: jank_ratio(
                window.iter().filter(|f| !f.paused).map(|f| f.work_ns()),
                self.budget_ns,
            )
            .map(|ratio| FrameClass::of_jank_ratio(ratio).name().to_owned()),
            budgets,
            paused: newest.is_some_and(|f| f.paused),
            written: self.written(),
            dropped: self.dropped(),
        }
    }

    /// Ends the session: the open hitch window's record, then `session-end`. Frames fed
    /// afterwards are ignored.
    pub fn finish(&mut self, symbols: &SymbolTable, out: &mut Vec<Record>) {
        if self.finished {
            return;
        }
        self.finished = true;
        if let Some(record) = self.limits.due(u64::MAX, true) {
            out.push(Record::Hitch(*record));
        }
        if let Some(jitter) = &mut self.jitter {
            jitter.finish(&mut self.events);
        }
        self.push_jitter(symbols, out);
        let newest = self.ring.back(0);
        let phase = newest.and_then(|f| f.phase).and_then(|p| symbols.name(p));
        out.push(Record::SessionEnd(SessionEndRecord {
            common: self.common(self.last_end_ns, phase, newest, symbols),
            frames: self.frames,
            paused_frames: self.paused_frames,
            duration_s: s_from_ns(
                self.last_end_ns
                    .saturating_sub(self.first_begin_ns.unwrap_or(self.last_end_ns)),
            ),
            written: self.written(),
            dropped: self.dropped(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::automated_by;

    /// An environment holding `name=value` alone.
    fn only(name: &'static str, value: &'static str) -> impl Fn(&str) -> Option<String> {
        move |n: &str| (n == name).then(|| value.to_owned())
    }

    #[test]
    fn framewise_automated_takes_the_spellings_ci_takes() {
        assert!(!automated_by(|_| None));
        for name in ["FRAMEWISE_AUTOMATED", "CI"] {
            for value in ["1", "true", "TRUE", "yes", " on "] {
                assert!(automated_by(only(name, value)), "{name}={value:?}");
            }
            for value in ["", " ", "0", "false", "False"] {
                assert!(!automated_by(only(name, value)), "{name}={value:?}");
            }
        }
    }
}
