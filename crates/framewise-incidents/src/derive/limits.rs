//! The rate limits: at most one hitch record per second and 500 incident records (hitches
//! and usermarks) per session, and never a silent drop.
//!
//! The second is a window whose record is its worst hitch: a hitch opens the window, a
//! longer frame inside it takes the record over, and every hitch that lost is counted onto
//! the record that is written (`dropped_since_last`). The record leaves with the first frame
//! that begins after the window closes, or when the session ends. Past the session cap,
//! hitches are counted onto the next record written and into the session's drop counts.

use crate::record::{DropCounts, HitchRecord, WrittenCounts};

/// Incident records (hitches and usermarks) a session writes at most.
pub const SESSION_CAP: u64 = 500;
/// The hitch window, ns.
pub const HITCH_WINDOW_NS: u64 = 1_000_000_000;

/// What the limits let through and what they held back.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    /// The open window's record and when the window closes.
    pending: Option<(Box<HitchRecord>, u64)>,
    /// Hitches dropped that the next hitch record must report.
    unreported: u64,
    /// Incident records admitted this session.
    admitted: u64,
    pub(crate) written: WrittenCounts,
    pub(crate) dropped: DropCounts,
}

impl Limits {
    /// A hitch that began at `begin_ns`.
    pub(crate) fn hitch(&mut self, record: HitchRecord, begin_ns: u64) {
        if let Some((pending, _)) = &mut self.pending {
            // Inside the open window (a closed one was flushed before this frame): the
            // longer frame keeps the record, the other is dropped.
            if record.frame_ms > pending.frame_ms {
                **pending = record;
            }
            self.unreported += 1;
            self.dropped.hitch += 1;
            return;
        }
        if self.admitted >= SESSION_CAP {
            self.unreported += 1;
            self.dropped.hitch += 1;
            return;
        }
        self.admitted += 1;
        self.pending = Some((Box::new(record), begin_ns.saturating_add(HITCH_WINDOW_NS)));
    }

    /// The open window's record once a frame beginning at `now_ns` is past it (or at once
    /// when `closing`), stamped with the drops it reports.
    pub(crate) fn due(&mut self, now_ns: u64, closing: bool) -> Option<Box<HitchRecord>> {
        let (_, closes_ns) = self.pending.as_ref()?;
        if !closing && now_ns < *closes_ns {
            return None;
        }
        let (mut record, _) = self.pending.take()?;
        record.dropped_since_last = (self.unreported > 0).then_some(self.unreported);
        self.unreported = 0;
        self.written.hitch += 1;
        Some(record)
    }

    /// Whether a usermark may be written (counted either way).
    pub(crate) fn usermark(&mut self) -> bool {
        if self.admitted >= SESSION_CAP {
            self.dropped.usermark += 1;
            return false;
        }
        self.admitted += 1;
        self.written.usermark += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Common, Footprint};

    fn hitch(frame: u64, frame_ms: f64) -> HitchRecord {
        HitchRecord {
            common: Common::default(),
            frame,
            frame_ms,
            median_ms: None,
            threshold_ms: 25.0,
            work_ms: None,
            gpu_ms: None,
            delta: Default::default(),
            scopes: Vec::new(),
            classification: Vec::new(),
            dropped_since_last: None,
            footprint: Footprint {
                v: 1,
                id: String::new(),
                key: String::new(),
            },
        }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_window_keeps_its_worst_hitch_and_counts_the_rest() {
        let mut limits = Limits::default();
        limits.hitch(hitch(10, 40.0), 100 * MS);
        assert!(limits.due(500 * MS, false).is_none(), "window still open");
        limits.hitch(hitch(20, 90.0), 500 * MS);
        limits.hitch(hitch(30, 50.0), 900 * MS);
        let record = limits.due(1_100 * MS, false).expect("window closed");
        assert_eq!(record.frame, 20, "the worst hitch of the second");
        assert_eq!(record.dropped_since_last, Some(2));
        assert_eq!(limits.dropped.hitch, 2);
        assert_eq!(limits.written.hitch, 1);
        // The next window starts afresh.
        limits.hitch(hitch(40, 30.0), 1_200 * MS);
        let record = limits.due(0, true).expect("closing flushes");
        assert_eq!(record.dropped_since_last, None);
    }

    #[test]
    fn past_the_cap_hitches_and_usermarks_are_counted_not_written() {
        let mut limits = Limits::default();
        for i in 0..SESSION_CAP {
            let begin_ns = i * 2 * HITCH_WINDOW_NS;
            limits.hitch(hitch(i, 40.0), begin_ns);
            assert!(limits.due(begin_ns + HITCH_WINDOW_NS, false).is_some());
        }
        limits.hitch(hitch(999, 40.0), u64::MAX / 2);
        assert!(limits.due(u64::MAX, true).is_none());
        assert!(!limits.usermark());
        assert_eq!(limits.written.hitch, SESSION_CAP);
        assert_eq!(limits.dropped.hitch, 1);
        assert_eq!(limits.dropped.usermark, 1);
    }
}
