//! # framewise — the recorder a game links
//!
//! Who should use this crate: a game or other real-time program that wants every frame
//! recorded — CPU scopes per thread, exact per-frame counters, instant marks, GPU pass times,
//! its frame graph and workload — into a streaming, crash-proof `.sgpt` capture, at a cost it
//! can leave switched on all day. Tools that *read* captures use `framewise-format` (bytes)
//! or `framewise-analysis` (numbers and verdicts); this crate must never depend on the
//! analysis, the CLI or the inspector.
//!
//! The caller owns the [`Session`]: nothing records until the game starts one, and stopping
//! it (or reaching `frame_limit`, or dropping it) finishes the capture. Scopes, counters and
//! marks are global macros; with no session running each costs one relaxed atomic load and a
//! branch, and the `disabled` feature compiles them to nothing.
//!
//! ```
//! use framewise::{counter, gauge, mark, scope, Session, Sink};
//! use std::io::Cursor;
//!
//! let session = Session::builder()
//!     .build_id("example")
//!     .start(Sink::seekable(Cursor::new(Vec::new())))?;
//! session.set_phase("play");
//! for frame in 0..3 {
//!     let _frame = session.frame(); // ends the frame when dropped
//!     let _update = scope!("update");
//!     {
//!         let _physics = scope!("physics");
//!         counter!("draw_calls", 12);
//!     }
//!     gauge!("entities", 100 + frame);
//!     mark!("tick");
//! }
//! let report = session.stop()?;
//! assert_eq!(report.frames_written, 3);
//! assert!(report.is_complete());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How it works, in brief: each scope's begin and end write a timestamp and a pre-interned
//! id into the calling thread's own ring buffer (no lock, no allocation, no hashing; the
//! thread's first event allocates its ring and registers it under a lock, and a call site's
//! first use interns its name under a lock); a `counter!` adds to the calling thread's own
//! running total for the name (a load and a store). Frame close on the game thread only cuts
//! what must be cut at that instant (the frame's end, the counters — every thread's totals,
//! less what the close before read — and the host's context, swapped rather than copied) and hands the frame, through a lock-free queue and without a system
//! call, to a named background thread (`framewise-writer`). That thread, which looks for
//! frames at least every millisecond, drains every thread's ring up to the frame's end,
//! pairs begins with ends into spans in pre-order, encodes the frame into one `FRAM` record
//! and flushes it once no frame waits, so a killed game loses the frame in flight and the
//! frames it closed that the writer had not yet written: when the writer keeps up, those
//! closed in its last ≤ 1 ms (at 60 Hz, at most the last one) and any held for their GPU
//! results (up to `gpu_wait_frames`); behind, up to `queue_frames`.

// The per-thread rings, the TSC clock and the counter slots need `unsafe`; every block
// says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

mod clock;
mod counters;
pub mod env;
mod error;
mod gpu;
mod handoff;
mod incidents;
mod intern;
pub mod motion;
mod report;
mod scope;
mod session;
mod sink;
mod thread;
mod topology;
#[cfg(feature = "tracing")]
pub mod tracing;
pub mod world;
mod writer;

pub use clock::ClockChoice;
pub use counters::{Counter, Gauge};
pub use error::{SessionError, StartError, StopError};
pub use framewise_format::model::Access;
pub use framewise_format::model::{
    AdapterInfo, AdapterType, CaptureLevel, PassKind, RenderSettings, ResourceKind, Workload,
};
pub use gpu::{GpuPassTiming, GpuQueue, GpuTicket, Label, PassLabel};
pub use report::{Report, UsermarkRecord, Warning};
pub use scope::{mark_dynamic, scope_dynamic, ScopeGuard};
pub use session::{
    FrameGuard, FrameOutcome, Session, SessionBuilder, DEFAULT_BYTE_BUDGET,
    DEFAULT_GPU_WAIT_FRAMES, DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_FRAMES,
    DEFAULT_REALTIME_QUEUE_FRAMES, DEFAULT_USERMARK_WINDOW,
};
pub use sink::{check_capture_path, Sink, WriteSeek};
pub use topology::{EdgeDesc, PassDesc, ResourceDesc, TopologyDesc, TopologyId};
pub use writer::{FrameWritten, WriterMode};

/// Whether a session records, the one relaxed load every hook makes first, and the clock's
/// source: two bits of one byte ([`Flags`]), which a scope's begin reads once for both.
pub(crate) static ENABLED: Flags = Flags {
    bits: AtomicU8::new(0),
};

/// The process-wide flags a scope reads, one byte in a cache line of its own: a thread's first
/// scope after a wait (a paced frame) fetches one line for both, a scope's begin reads both
/// with one load ([`Flags::bits`]), and no other static's writes take the line
/// away.
#[repr(C, align(64))]
pub(crate) struct Flags {
    /// [`Flags::ON`] and [`Flags::TSC`].
    bits: AtomicU8,
}

impl Flags {
    /// A session records.
    const ON: u8 = 1;
    /// Ticks come from `rdtsc`. Decided at session start (`clock`).
    const TSC: u8 = 2;

    /// Whether a session records.
    #[inline(always)]
    pub(crate) fn load(&self, order: Ordering) -> bool {
        self.bits.load(order) & Self::ON != 0
    }

    /// Sets whether a session records (`order` as for a store: `Release` or `Relaxed`).
    pub(crate) fn store(&self, on: bool, order: Ordering) {
        self.set(Self::ON, on, order);
    }

    /// Whether ticks come from `rdtsc`.
    #[inline(always)]
    pub(crate) fn use_tsc(&self) -> bool {
        self.bits.load(Ordering::Relaxed) & Self::TSC != 0
    }

    /// Sets whether ticks come from `rdtsc`.
    pub(crate) fn set_use_tsc(&self, tsc: bool) {
        self.set(Self::TSC, tsc, Ordering::Relaxed);
    }

    /// Both flags, read with one relaxed load: for a scope's begin, which asks
    /// [`FlagBits::recording_with_tsc`] first and, only when not, [`FlagBits::recording`].
    #[inline(always)]
    pub(crate) fn bits(&self) -> FlagBits {
        FlagBits(self.bits.load(Ordering::Relaxed))
    }

    fn set(&self, bit: u8, on: bool, order: Ordering) {
        if on {
            self.bits.fetch_or(bit, order);
        } else {
            self.bits.fetch_and(!bit, order);
        }
    }
}

/// The flags as one load read them ([`Flags::bits`]).
#[derive(Clone, Copy)]
pub(crate) struct FlagBits(u8);

impl FlagBits {
    /// A session records with ticks from `rdtsc`: the common case of a scope's begin, which
    /// then reads the counter with no check of its own.
    #[inline(always)]
    pub(crate) fn recording_with_tsc(self) -> bool {
        self.0 == Flags::ON | Flags::TSC
    }

    /// A session records.
    #[inline(always)]
    pub(crate) fn recording(self) -> bool {
        self.0 & Flags::ON != 0
    }
}

/// True from a session's start until its stop: one session per process at a time.
pub(crate) static ACTIVE: AtomicBool = AtomicBool::new(false);

// A session and its handles are shared with the threads that report GPU results, count and
// set context: checked at compile time.
const _: fn() = || {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Session>();
    assert_send_sync::<Counter>();
    assert_send_sync::<Gauge>();
    assert_send_sync::<GpuQueue>();
    assert_send_sync::<GpuTicket>();
};

/// Whether a session is recording right now.
#[inline]
pub fn is_recording() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// What the macros expand to; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::counters::{CounterName, CounterSite};
    pub use crate::intern::{MarkSite, ScopeSite, SiteNames};
    pub use crate::scope::mark_at;

    /// Converts a counter argument to `i64`, saturating (a count never wraps sign).
    pub trait IntoCount {
        /// The value as an `i64`.
        fn into_count(self) -> i64;
    }

    macro_rules! into_count {
        ($($t:ty),*) => {$(
            impl IntoCount for $t {
                #[inline(always)]
                fn into_count(self) -> i64 {
                    i64::try_from(self).unwrap_or(if self > 0 as $t { i64::MAX } else { i64::MIN })
                }
            }
        )*};
    }
    into_count!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
}

/// Opens a CPU scope on the calling thread's lane and returns its guard; the scope ends when
/// the guard is dropped. The name must be a `&'static str` constant; it is interned once per
/// call site, with the call site's `file:line`.
///
/// ```
/// fn update() {
///     let _scope = framewise::scope!("update");
///     // ... work ...
/// } // the scope ends here
/// # update();
/// ```
///
/// Guards should drop in the reverse order of their creation. An end pairs with the
/// innermost open scope of its name and call site: scopes opened inside that one and still open (a guard
/// leaked, or dropped after its parent's) are lost, counted as dropped spans, and the scopes
/// they enclosed that closed are kept inside the scope around them, one level below it
/// (docs/CONCEPTS.md, "Scopes: nesting, guards leaked or dropped out of order").
#[cfg(not(feature = "disabled"))]
#[macro_export]
macro_rules! scope {
    ($name:expr) => {{
        static __FRAMEWISE_NAMES: $crate::__private::SiteNames =
            $crate::__private::SiteNames::new($name, ::core::file!());
        static __FRAMEWISE_SITE: $crate::__private::ScopeSite =
            $crate::__private::ScopeSite::new(&__FRAMEWISE_NAMES, ::core::line!());
        $crate::ScopeGuard::begin(&__FRAMEWISE_SITE)
    }};
}

/// Opens a CPU scope (compiled out: the `disabled` feature is on).
#[cfg(feature = "disabled")]
#[macro_export]
macro_rules! scope {
    ($name:expr) => {{
        if false {
            let _ = $name;
        }
        $crate::ScopeGuard::inactive()
    }};
}

/// Adds to a **sum** counter in the current frame: `counter!("draw_calls", 1)`. A frame's
/// value is the exact sum of everything counted in it, from any thread. A name keeps the kind
/// of its first use: `counter!` on a name first set with `gauge!` sets that gauge.
#[cfg(not(feature = "disabled"))]
#[macro_export]
macro_rules! counter {
    ($name:expr, $value:expr) => {{
        static __FRAMEWISE_NAME: $crate::__private::CounterName =
            $crate::__private::CounterName::sum($name);
        static __FRAMEWISE_SITE: $crate::__private::CounterSite =
            $crate::__private::CounterSite::new(&__FRAMEWISE_NAME);
        __FRAMEWISE_SITE.record($crate::__private::IntoCount::into_count($value));
    }};
}

/// Adds to a sum counter (compiled out: the `disabled` feature is on).
#[cfg(feature = "disabled")]
#[macro_export]
macro_rules! counter {
    ($name:expr, $value:expr) => {{
        if false {
            let _ = ($name, $value);
        }
    }};
}

/// Sets a **gauge**, a level such as `entities`: `gauge!("entities", world.len())`. A frame
/// carries the last level set.
#[cfg(not(feature = "disabled"))]
#[macro_export]
macro_rules! gauge {
    ($name:expr, $value:expr) => {{
        static __FRAMEWISE_NAME: $crate::__private::CounterName =
            $crate::__private::CounterName::gauge($name);
        static __FRAMEWISE_SITE: $crate::__private::CounterSite =
            $crate::__private::CounterSite::new(&__FRAMEWISE_NAME);
        __FRAMEWISE_SITE.record($crate::__private::IntoCount::into_count($value));
    }};
}

/// Sets a gauge (compiled out: the `disabled` feature is on).
#[cfg(feature = "disabled")]
#[macro_export]
macro_rules! gauge {
    ($name:expr, $value:expr) => {{
        if false {
            let _ = ($name, $value);
        }
    }};
}

/// Records an instant mark on the calling thread's lane: `mark!("gc")`.
#[cfg(not(feature = "disabled"))]
#[macro_export]
macro_rules! mark {
    ($name:expr) => {{
        static __FRAMEWISE_SITE: $crate::__private::MarkSite =
            $crate::__private::MarkSite::new($name);
        $crate::__private::mark_at(&__FRAMEWISE_SITE);
    }};
}

/// Records an instant mark (compiled out: the `disabled` feature is on).
#[cfg(feature = "disabled")]
#[macro_export]
macro_rules! mark {
    ($name:expr) => {{
        if false {
            let _ = $name;
        }
    }};
}
