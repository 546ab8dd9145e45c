//! The session CPU clock.
//!
//! The hot path stores raw *ticks*; they become nanoseconds on the session clock only when a
//! frame closes. On x86_64, when the time-stamp counter is trustworthy (the kernel itself uses
//! it as its clock source, or the CPU declares an invariant TSC), a tick is one TSC count: a
//! `rdtsc` costs about half of an `Instant::now()`. Its frequency is calibrated once per process
//! against the monotonic clock. Anywhere else a tick is one nanosecond of `Instant`.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Which CPU clock a session should use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ClockChoice {
    /// The time-stamp counter when it is trustworthy on this machine, else the monotonic clock.
    #[default]
    Auto,
    /// Always the monotonic clock (`std::time::Instant`).
    Monotonic,
}

// Whether ticks come from `rdtsc` (`FLAGS.use_tsc()`): decided at session start, read on the hot
// path, a bit of the byte that holds the session's flag (one load for both).
use crate::ENABLED as FLAGS;

/// The process-wide anchor of `Instant`-based ticks.
static INSTANT_ANCHOR: OnceLock<Instant> = OnceLock::new();

/// The TSC calibration, measured once per process (`None`: the TSC is not usable).
static TSC_CALIBRATION: OnceLock<Option<TscCalibration>> = OnceLock::new();

/// How long the one calibration of the TSC against the monotonic clock lasts.
const CALIBRATION_WINDOW: Duration = Duration::from_millis(20);

#[derive(Clone, Copy, Debug)]
struct TscCalibration {
    ticks_per_second: f64,
}

/// Reads the current tick count. This is the only clock read on the hot path.
#[inline(always)]
pub(crate) fn now_ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        if FLAGS.use_tsc() {
            return read_tsc();
        }
        // Out of line, so that the `rdtsc` path falls through with no jump over it.
        instant_ticks_cold()
    }
    #[cfg(not(target_arch = "x86_64"))]
    instant_ticks()
}

/// The current tick count when ticks are the TSC's (one `rdtsc`, no call), else `None`: for a
/// fast path that calls nothing and leaves the monotonic clock to a slow path's `now_ticks`.
#[inline(always)]
pub(crate) fn tsc_ticks() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    if FLAGS.use_tsc() {
        return Some(read_tsc());
    }
    None
}

/// The current tick count for a caller that has just read that ticks come from `rdtsc`
/// ([`FlagBits::recording_with_tsc`](crate::FlagBits::recording_with_tsc)): one `rdtsc`, no check.
/// Elsewhere than on x86_64, where the TSC is never chosen, the monotonic clock.
#[inline(always)]
pub(crate) fn tsc_ticks_chosen() -> u64 {
    #[cfg(target_arch = "x86_64")]
    return read_tsc();
    #[cfg(not(target_arch = "x86_64"))]
    instant_ticks()
}

#[cfg(target_arch = "x86_64")]
#[cold]
#[inline(never)]
fn instant_ticks_cold() -> u64 {
    instant_ticks()
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn read_tsc() -> u64 {
    #[allow(
        unused_unsafe,
        reason = "`_rdtsc` is an unsafe fn on some toolchains only"
    )]
    // SAFETY: `rdtsc` exists on every x86_64 CPU and has no preconditions; we only use its
    // value once the session has checked that the counter is invariant and calibrated it.
    unsafe {
        core::arch::x86_64::_rdtsc()
    }
}

#[inline]
fn instant_ticks() -> u64 {
    let anchor = INSTANT_ANCHOR.get_or_init(Instant::now);
    u64::try_from(anchor.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Whether the TSC can be trusted as a clock on this machine.
#[cfg(target_arch = "x86_64")]
fn tsc_is_trustworthy() -> bool {
    // The kernel only keeps `tsc` as its clocksource after checking that it is invariant and
    // synchronised across CPUs; that is the strongest evidence available to a process.
    if let Ok(source) =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    {
        return source.trim() == "tsc";
    }
    // Elsewhere, ask the CPU: leaf 0x8000_0007, EDX bit 8 declares an invariant TSC.
    #[allow(
        unused_unsafe,
        reason = "`__cpuid` is an unsafe fn on some toolchains only"
    )]
    // SAFETY: `cpuid` is available on every x86_64 CPU.
    let max_extended = unsafe { core::arch::x86_64::__cpuid(0x8000_0000) }.eax;
    if max_extended < 0x8000_0007 {
        return false;
    }
    #[allow(
        unused_unsafe,
        reason = "`__cpuid` is an unsafe fn on some toolchains only"
    )]
    // SAFETY: as above; the leaf exists (checked against the maximum extended leaf).
    let power = unsafe { core::arch::x86_64::__cpuid(0x8000_0007) };
    power.edx & (1 << 8) != 0
}

/// One (tsc, instant) pair read as close together as we can manage: the TSC is read on both
/// sides of `Instant::now()` and the tightest of a few tries is kept, at its midpoint.
#[cfg(target_arch = "x86_64")]
fn paired_read() -> (u64, Instant) {
    let mut best: Option<(u64, u64, Instant)> = None;
    for _ in 0..16 {
        let before = read_tsc();
        let instant = Instant::now();
        let after = read_tsc();
        let width = after.wrapping_sub(before);
        if best.is_none_or(|(w, _, _)| width < w) {
            best = Some((width, before + width / 2, instant));
        }
    }
    match best {
        Some((_, tsc, instant)) => (tsc, instant),
        None => (read_tsc(), Instant::now()),
    }
}

#[cfg(target_arch = "x86_64")]
fn calibrate_tsc() -> Option<TscCalibration> {
    if !tsc_is_trustworthy() {
        return None;
    }
    let (tsc_start, instant_start) = paired_read();
    std::thread::sleep(CALIBRATION_WINDOW);
    let (tsc_end, instant_end) = paired_read();
    let elapsed_s = instant_end.duration_since(instant_start).as_secs_f64();
    let ticks = tsc_end.checked_sub(tsc_start)? as f64;
    let ticks_per_second = ticks / elapsed_s;
    // A counter outside 100 MHz – 20 GHz is not a TSC we understand; do not trust it.
    (100e6..20e9)
        .contains(&ticks_per_second)
        .then_some(TscCalibration { ticks_per_second })
}

#[cfg(not(target_arch = "x86_64"))]
fn calibrate_tsc() -> Option<TscCalibration> {
    None
}

/// The conversion from ticks to session nanoseconds, fixed for the session's lifetime.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SessionClock {
    /// Ticks at session start: session time zero.
    base_ticks: u64,
    /// Nanoseconds per tick as a 32.32 fixed-point number.
    ns_per_tick_fixed: u64,
    /// Whether ticks are TSC counts.
    tsc: bool,
    /// Tick frequency.
    ticks_per_second: f64,
}

impl SessionClock {
    /// Chooses the clock for a new session and sets the hot path to it. Calibrates the TSC the
    /// first time a process asks for it (about 20 ms, once).
    pub(crate) fn start(choice: ClockChoice) -> Self {
        let calibration = match choice {
            ClockChoice::Auto => *TSC_CALIBRATION.get_or_init(calibrate_tsc),
            ClockChoice::Monotonic => None,
        };
        let (tsc, ticks_per_second) = match calibration {
            Some(c) => (true, c.ticks_per_second),
            None => (false, 1e9),
        };
        FLAGS.set_use_tsc(tsc);
        let ns_per_tick_fixed = ((1e9 / ticks_per_second) * 4_294_967_296.0).round() as u64;
        Self {
            base_ticks: now_ticks(),
            ns_per_tick_fixed,
            tsc,
            ticks_per_second,
        }
    }

    /// A clock with the given base and 32.32 ns per tick, leaving the process's tick source
    /// alone.
    #[cfg(test)]
    pub(crate) fn with_rate(base_ticks: u64, ns_per_tick_fixed: u64) -> Self {
        Self {
            base_ticks,
            ns_per_tick_fixed,
            tsc: true,
            ticks_per_second: 4_294_967_296e9 / ns_per_tick_fixed as f64,
        }
    }

    /// A clock that reads ticks as nanoseconds from tick 0, leaving the process's tick source
    /// alone (unit tests of code that converts ticks run in parallel with clock tests).
    #[cfg(test)]
    pub(crate) fn identity() -> Self {
        Self {
            base_ticks: 0,
            ns_per_tick_fixed: 1 << 32,
            tsc: false,
            ticks_per_second: 1e9,
        }
    }

    /// Session nanoseconds for a tick count (ticks before the session's start read as 0).
    #[inline]
    pub(crate) fn ns(&self, ticks: u64) -> u64 {
        let elapsed = ticks.saturating_sub(self.base_ticks) as u128;
        u64::try_from((elapsed * self.ns_per_tick_fixed as u128) >> 32).unwrap_or(u64::MAX)
    }

    /// Ticks at session start: session time zero (`ns` reads earlier ticks as 0).
    pub(crate) fn base_ticks(&self) -> u64 {
        self.base_ticks
    }

    /// `ns(ticks)` for ticks at or after [`Self::base_ticks`], with no saturation: the
    /// writer's pairing loop clamps its ticks to the base once and converts every event.
    #[inline(always)]
    pub(crate) fn ns_from_base(&self, ticks: u64) -> u64 {
        debug_assert!(ticks >= self.base_ticks);
        let elapsed = ticks.wrapping_sub(self.base_ticks) as u128;
        u64::try_from((elapsed * self.ns_per_tick_fixed as u128) >> 32).unwrap_or(u64::MAX)
    }

    /// Whether a tick lasts at most a nanosecond (the TSC of a CPU at 1 GHz or more, and
    /// the monotonic clock's ns): then [`Self::ns_from_base`] never saturates, since
    /// `ticks · ns_per_tick_fixed >> 32 ≤ ticks`.
    pub(crate) fn tick_at_most_ns(&self) -> bool {
        self.ns_per_tick_fixed <= 1 << 32
    }

    /// [`Self::ns_from_base`] for a clock whose tick lasts at most a nanosecond
    /// ([`Self::tick_at_most_ns`]), without its check for saturation.
    #[inline(always)]
    pub(crate) fn ns_from_base_fine(&self, ticks: u64) -> u64 {
        debug_assert!(ticks >= self.base_ticks && self.tick_at_most_ns());
        let elapsed = ticks.wrapping_sub(self.base_ticks) as u128;
        ((elapsed * self.ns_per_tick_fixed as u128) >> 32) as u64
    }

    /// Session nanoseconds now.
    pub(crate) fn now_ns(&self) -> u64 {
        self.ns(now_ticks())
    }

    /// The clock's description for META.
    pub(crate) fn source(&self) -> String {
        if self.tsc {
            format!(
                "rdtsc ({:.6} GHz, calibrated against CLOCK_MONOTONIC over {} ms)",
                self.ticks_per_second / 1e9,
                CALIBRATION_WINDOW.as_millis()
            )
        } else {
            "std::time::Instant (monotonic)".to_owned()
        }
    }

    /// The clock's resolution in nanoseconds for META (`0.0`: not declared by the platform).
    pub(crate) fn resolution_ns(&self) -> f64 {
        if self.tsc {
            1e9 / self.ticks_per_second
        } else {
            0.0
        }
    }

    /// Whether this session reads the TSC.
    #[cfg(test)]
    pub(crate) fn is_tsc(&self) -> bool {
        self.tsc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_of_at_most_a_nanosecond_converts_without_the_check_to_the_same_ns() {
        let fixed_rates = [1, 1_431_655_765, (1 << 32) - 1, 1 << 32];
        for (i, fixed) in fixed_rates.into_iter().enumerate() {
            let clock = SessionClock::with_rate(1_000 + i as u64, fixed);
            assert!(clock.tick_at_most_ns());
            let mut ticks = clock.base_ticks();
            for shift in 0..64 {
                for ticks_after in [ticks, ticks | (1 << shift), u64::MAX, u64::MAX - 1] {
                    assert_eq!(
                        clock.ns_from_base_fine(ticks_after),
                        clock.ns_from_base(ticks_after),
                        "{fixed} ns/2^32 per tick, tick {ticks_after}"
                    );
                }
                ticks |= 1 << shift;
            }
        }
        assert!(!SessionClock::with_rate(0, (1 << 32) + 1).tick_at_most_ns());
    }

    #[test]
    fn ticks_convert_to_increasing_nanoseconds() {
        let clock = SessionClock::start(ClockChoice::Auto);
        let first = clock.now_ns();
        std::thread::sleep(Duration::from_millis(2));
        let second = clock.now_ns();
        assert!(second > first, "{second} <= {first}");
        // A sleep of 2 ms is at least 2 ms on any clock that is right.
        assert!(
            second - first >= 2_000_000,
            "slept 2 ms, clock says {} ns",
            second - first
        );
    }

    #[test]
    fn calibrated_clock_agrees_with_instant() {
        let clock = SessionClock::start(ClockChoice::Auto);
        // Each clock read between two `Instant` reads, the tightest of a few: the time
        // between the two clock reads lies between the brackets' inner and outer spans
        // however long the thread was preempted around a read (a single pair of reads
        // counted a preemption between them against the clock).
        let bracketed = || {
            (0..16)
                .map(|_| {
                    let before = Instant::now();
                    let ns = clock.now_ns();
                    (before, ns, Instant::now())
                })
                .min_by_key(|&(before, _, after)| after - before)
                .expect("16 reads")
        };
        let (before_start, start_ns, after_start) = bracketed();
        std::thread::sleep(Duration::from_millis(50));
        let (before_end, end_ns, after_end) = bracketed();
        let clock_ns = (end_ns - start_ns) as f64;
        let inner_ns = before_end.duration_since(after_start).as_nanos() as f64;
        let outer_ns = after_end.duration_since(before_start).as_nanos() as f64;
        // The two clocks must agree within 1 % over 50 ms; a calibration that is off by more
        // is a bug, not noise.
        assert!(
            clock_ns >= inner_ns * 0.99 && clock_ns <= outer_ns * 1.01,
            "clock {clock_ns} ns, Instant between {inner_ns} and {outer_ns} ns, tsc {}",
            clock.is_tsc()
        );
    }

    #[test]
    fn ticks_before_start_read_as_zero() {
        let clock = SessionClock {
            base_ticks: 1000,
            ns_per_tick_fixed: 1 << 32,
            tsc: false,
            ticks_per_second: 1e9,
        };
        assert_eq!(clock.ns(10), 0);
        assert_eq!(clock.ns(1500), 500);
    }

    #[test]
    fn from_base_agrees_with_ns_at_and_after_the_base() {
        for ns_per_tick_fixed in [1 << 32, 1_431_655_765, 3 << 33] {
            let clock = SessionClock {
                base_ticks: 1000,
                ns_per_tick_fixed,
                tsc: true,
                ticks_per_second: 3e9,
            };
            for ticks in [1000, 1001, 123_456_789, u64::MAX / 3, u64::MAX] {
                assert_eq!(clock.ns_from_base(ticks), clock.ns(ticks), "{ticks}");
            }
        }
    }
}
