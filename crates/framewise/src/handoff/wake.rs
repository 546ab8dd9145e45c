//! When the parked writer wakes to look for frames: between two frame closes, not at one.
//!
//! A writer that polls on a clock of its own drifts across the game's frames, and every so
//! often wakes while the game thread closes a frame: the timer's interrupt, the wake-up and
//! the writer's first reads of the frame's lines then land inside `end_frame`, on its core or
//! on the other (measured with the `game_loop` bench's close detail: the writer had run
//! around most of the closes over the p99, and around fewer than 1 % of the others). So the writer keeps the last frame's end and the
//! period between the last two, and wakes half a period after the next close it expects,
//! never later than [`WRITER_POLL`](super::WRITER_POLL) after it parked, and at the same phase
//! when the game is late: a frame still reaches the file within about a millisecond of its
//! close.

use std::time::Duration;

/// The frames' rhythm as the writer saw it (writer thread only).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WakePlan {
    /// The newest frame's end, session ns.
    last_end_ns: Option<u64>,
    /// Between the two newest frames' ends, ns (0 until two frames were seen).
    period_ns: u64,
}

impl WakePlan {
    /// A frame that ended at `end_ns` was taken.
    pub(crate) fn frame_ended(&mut self, end_ns: u64) {
        if let Some(last) = self.last_end_ns {
            if end_ns > last {
                self.period_ns = end_ns - last;
            }
        }
        self.last_end_ns = Some(end_ns);
    }

    /// How long to park at `now_ns` when no message waits: until half a period (at most
    /// half of `poll`) after the next close expected, or a multiple of `poll` before or
    /// after that instant, so that no park is longer than `poll`.
    pub(crate) fn park_for(&self, now_ns: u64, poll: Duration) -> Duration {
        let poll_ns = poll.as_nanos() as u64;
        let Some(last) = self.last_end_ns else {
            return poll;
        };
        if self.period_ns == 0 || poll_ns == 0 {
            return poll;
        }
        let wake_ns = last
            .saturating_add(self.period_ns)
            .saturating_add((self.period_ns / 2).min(poll_ns / 2));
        let wait_ns = if wake_ns > now_ns {
            (wake_ns - now_ns - 1) % poll_ns + 1
        } else {
            poll_ns - (now_ns - wake_ns) % poll_ns
        };
        Duration::from_nanos(wait_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLL: Duration = Duration::from_millis(1);
    const MS: u64 = 1_000_000;

    #[test]
    fn before_two_frames_the_writer_polls() {
        let mut plan = WakePlan::default();
        assert_eq!(plan.park_for(5 * MS, POLL), POLL);
        plan.frame_ended(10 * MS);
        assert_eq!(plan.park_for(10 * MS + 5, POLL), POLL);
    }

    #[test]
    fn at_1000_frames_a_second_it_wakes_between_two_closes() {
        let mut plan = WakePlan::default();
        plan.frame_ended(10 * MS);
        plan.frame_ended(11 * MS);
        // Done with frame 11 at 11.02 ms: the next close is expected at 12 ms, the wake at
        // 12.5 ms, 1.48 ms away: a multiple of the poll earlier, 11.5 ms.
        assert_eq!(
            plan.park_for(11 * MS + 20_000, POLL),
            Duration::from_nanos(480_000)
        );
        // Woken at 11.5 ms with nothing new: 12.5 ms next.
        assert_eq!(plan.park_for(11 * MS + MS / 2, POLL), POLL);
    }

    #[test]
    fn a_slow_game_is_polled_every_poll_at_the_same_phase() {
        let mut plan = WakePlan::default();
        plan.frame_ended(0);
        plan.frame_ended(16 * MS);
        // Next close expected at 32 ms, the wake at 32.5 ms: every poll at .5 ms until then.
        assert_eq!(
            plan.park_for(16 * MS + 100_000, POLL),
            Duration::from_nanos(400_000)
        );
        assert_eq!(plan.park_for(20 * MS + MS / 2, POLL), POLL);
        // The game is late (34.2 ms, nothing yet): the same phase, 34.5 ms.
        assert_eq!(
            plan.park_for(34 * MS + 200_000, POLL),
            Duration::from_nanos(300_000)
        );
    }

    #[test]
    fn no_park_is_longer_than_the_poll_or_zero() {
        let mut plan = WakePlan::default();
        plan.frame_ended(3 * MS);
        plan.frame_ended(3 * MS + 700_000);
        for now in (3 * MS..60 * MS).step_by(37_117) {
            let wait = plan.park_for(now, POLL);
            assert!(wait > Duration::ZERO && wait <= POLL, "{wait:?} at {now}");
        }
    }
}
