//! Held hitches ([`crate::DemoConfig::hold_hitches`], `framewise demo --hold-hitches`): each
//! injected hitch, after its real work, also holds its frame until the frame is a hitch by
//! the hitch rule's own numbers, on any machine however loaded.
//!
//! The real work of a hitch is of fixed size, and the hitch rule judges a frame's period
//! against twice the rolling median of the periods before it: on a machine busy with other
//! work the frames around a hitch can stretch more than the hitch does, and the hitch goes
//! unflagged. A held hitch does not depend on that. The game reads the recorder's own clock
//! ([`Session::now_ns`]) just before and just after each `begin_frame`, so it has an upper
//! bound of every period the recorder saw: from the read before one frame's begin to the read
//! after the next one's. Each bound is at least its period, so the rolling median of the
//! bounds, over the same window the rule takes (the last
//! [`WINDOW_FRAMES`](framewise_detect::hitch_rule::WINDOW_FRAMES) frames not paused), is at
//! least the rule's median. The hitch frame is then held, on that clock, until it has lasted
//! [`HOLD_FACTOR`] times the longest of: that median, the frame budget, and the frame's own
//! work so far times the threads that may have run a scope in it (the worker threads and the
//! game thread), counted from the read after its begin. Its period in the capture is at least
//! that, so it exceeds `2 × median` and `1.5 × budget`, whatever the machine did.
//!
//! Where the hold goes keeps the frame's evidence pointing at the true cause:
//! - a hitch whose true cause is a counter (`spawn-burst`, `pipeline-compile`,
//!   `resource-upload`) holds after every scope of the frame has closed: no scope grows, and
//!   any scope's time in the frame, summed over the threads that ran it, is at most a quarter
//!   of the period, the median at most another quarter, so no scope carries more than a
//!   third of the excess: a `long-cpu-scope` guess stays below medium confidence and below
//!   the counter's guess. The held time is work inside the frame, not a wait between frames;
//! - a hitch whose true cause is a long scope (`pathfind_rebuild`) holds inside that scope,
//!   which then carries the excess.

use std::time::Duration;

use framewise::Session;
use framewise_detect::hitch_rule::HitchRule;

/// A held hitch lasts at least this many times the longest of the rolling median before it,
/// the frame budget, and its own work before the hold times the threads that may have run
/// scopes.
pub const HOLD_FACTOR: u64 = 4;

/// The longest single sleep of a hold: the hold re-reads the recorder's clock after each.
const HOLD_SLICE: Duration = Duration::from_millis(2);

/// What the game knows of the recorder's frame boundaries, to hold a hitch frame.
#[derive(Debug)]
pub(crate) struct HitchHold {
    /// The frame budget the session declares, ns.
    budget_ns: u64,
    /// The threads that may run scopes in a frame: the game thread and the workers.
    threads: u64,
    /// The recorder's clock just before the current frame's `begin_frame`, ns (at most the
    /// frame's begin in the capture), and whether that frame is paused.
    before_begin: Option<(u64, bool)>,
    /// The recorder's clock just after it, ns (at least the frame's begin).
    after_begin_ns: u64,
    /// The hitch rule's window, fed each frame's upper bound instead of its period: its
    /// median is at least the median the rule judges the current frame against.
    bounds: HitchRule,
}

impl HitchHold {
    /// Nothing known yet, for a session whose frame budget is `budget_ns` and a game running
    /// `workers` worker threads.
    pub(crate) fn new(budget_ns: u64, workers: usize) -> Self {
        Self {
            budget_ns,
            threads: u64::try_from(workers).map_or(u64::MAX, |w| w.saturating_add(1)),
            before_begin: None,
            after_begin_ns: 0,
            bounds: HitchRule::new(budget_ns),
        }
    }

    /// Begins a frame on `session`, between two reads of its clock; `paused`: the frame is
    /// shown paused (the rule leaves paused frames out of its median).
    pub(crate) fn begin_frame(&mut self, session: &Session, paused: bool) {
        let before = session.now_ns();
        session.begin_frame();
        let after = session.now_ns();
        if let Some((previous, previous_paused)) = self.before_begin {
            // The previous frame's period: from its begin (≥ `previous`) to this one's
            // (≤ `after`).
            self.bounds
                .observe(after.saturating_sub(previous), previous_paused);
        }
        self.before_begin = Some((before, paused));
        self.after_begin_ns = after;
    }

    /// Holds the current frame (sleeping, on the recorder's clock) until it has lasted
    /// [`HOLD_FACTOR`] times the longest of: the bound of the rule's median, the frame budget,
    /// and its own work up to now times the threads. Returns the time held, ns.
    pub(crate) fn hold(&self, session: &Session) -> u64 {
        let start = session.now_ns();
        let before = self.before_begin.map_or(start, |(before, _)| before);
        let work_ns = start.saturating_sub(before);
        let longest = self
            .bounds
            .median_ns()
            .max(self.budget_ns)
            .max(work_ns.saturating_mul(self.threads));
        let until = self
            .after_begin_ns
            .saturating_add(longest.saturating_mul(HOLD_FACTOR));
        loop {
            let now = session.now_ns();
            if now >= until {
                return now - start;
            }
            std::thread::sleep(Duration::from_nanos(until - now).min(HOLD_SLICE));
        }
    }
}
