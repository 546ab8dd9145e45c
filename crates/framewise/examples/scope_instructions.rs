//! Scope loops for counting instructions per scope with callgrind, a figure that does not
//! move with the machine's load (see `docs/performance/recorder.md`):
//!
//! ```text
//! cargo build --release -p framewise --example scope_instructions
//! for f in framewise_off framewise_on framewise_counter_on puffin_on tracing_noop tracy_on; do
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$f --toggle-collect=$f \
//!     target/release/examples/scope_instructions 2>&1 | grep Collected
//! done
//! ```
//!
//! `framewise_counter_on` is 3 × 10,000 `counter!` adds on the counting thread (divide by
//! 30,000 for instructions per count).
//!
//! Each collected function runs 3 × 10,000 scopes (10,000 for the off loop, twice); divide the
//! collected instruction count by 30,000 (20,000). Every profiler is warmed up (thread
//! registered, call site interned) before its collected loops run.
//!
//! Frame close, on the game thread, for a 201-scope frame (a `frame` scope wrapping 200),
//! 1,000 frames after 100 warm-up frames: divide by 1,000 for instructions per close.
//!
//! ```text
//! for f in framewise_end_frame puffin_new_frame game_frame_framewise; do
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$f --toggle-collect=$f \
//!     target/release/examples/scope_instructions 2>&1 | grep Collected
//! done
//! ```
//!
//! `framewise_end_frame` is `Session::end_frame` alone (lossless session to `io::sink()`);
//! `puffin_new_frame` is `GlobalProfiler::new_frame` with a `GlobalFrameView` sink attached;
//! `game_frame_framewise` is a whole frame, 201 scopes and the close: divide by 201,000 for
//! the all-in instructions per scope.

use framewise::{scope, Session, Sink, WriterMode};

const SCOPES: u64 = 10_000;

/// `scope!` with no session running.
#[inline(never)]
#[no_mangle]
pub fn framewise_off() {
    for _ in 0..SCOPES {
        let _scope = scope!("probe_off");
    }
}

/// `scope!` while a session records.
#[inline(never)]
#[no_mangle]
pub fn framewise_on() {
    for _ in 0..SCOPES {
        let _scope = scope!("probe");
    }
}

/// `counter!` while a session records, on the thread that counts (the count's cost there).
#[inline(never)]
#[no_mangle]
pub fn framewise_counter_on() {
    for _ in 0..SCOPES {
        framewise::counter!("probe_count", 1);
    }
}

/// `puffin::profile_scope!` with scopes on.
#[inline(never)]
#[no_mangle]
pub fn puffin_on() {
    for _ in 0..SCOPES {
        puffin::profile_scope!("probe");
    }
}

/// `tracy_client::span!` with the client running and no viewer (each zone's begin and end
/// are queued for a viewer that never comes; the queue's blocks are allocated as it grows).
#[inline(never)]
#[no_mangle]
pub fn tracy_on() {
    for _ in 0..SCOPES {
        let _span = tracy_client::span!("probe");
    }
}

/// A `tracing` span entered and exited under a subscriber that does nothing.
#[inline(never)]
#[no_mangle]
pub fn tracing_noop() {
    for _ in 0..SCOPES {
        let _span = tracing::info_span!("probe").entered();
    }
}

const CLOSE_FRAMES: u64 = 1_000;

/// 201 scopes: a `frame` scope wrapping 40 systems of 5 nested scopes.
#[inline(always)]
fn scopes_201_framewise() {
    let _frame = scope!("frame");
    for _ in 0..40 {
        let _system = scope!("system");
        for _ in 0..2 {
            let _query = scope!("system.query");
            let _iter = scope!("system.query.iter");
        }
    }
}

/// The same 201 scopes with puffin.
#[inline(always)]
fn scopes_201_puffin() {
    puffin::profile_scope!("frame");
    for _ in 0..40 {
        puffin::profile_scope!("system");
        for _ in 0..2 {
            puffin::profile_scope!("system.query");
            puffin::profile_scope!("system.query.iter");
        }
    }
}

/// `Session::end_frame` alone.
#[inline(never)]
#[no_mangle]
pub fn framewise_end_frame(session: &Session) {
    session.end_frame();
}

/// A whole framewise frame: 201 scopes and its close.
#[inline(never)]
#[no_mangle]
pub fn game_frame_framewise(session: &Session) {
    scopes_201_framewise();
    session.end_frame();
}

/// puffin's frame close with a real sink attached.
#[inline(never)]
#[no_mangle]
pub fn puffin_new_frame() {
    puffin::GlobalProfiler::lock().new_frame();
}

struct NoopSubscriber;

impl tracing::Subscriber for NoopSubscriber {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    framewise_off();
    framewise_off();

    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(Sink::stream(std::io::sink()))?;
    let _warm = scope!("warm-up");
    drop(_warm);
    session.end_frame();
    for _ in 0..3 {
        framewise_on();
        session.end_frame();
    }
    framewise::counter!("probe_count", 1);
    session.end_frame();
    for _ in 0..3 {
        framewise_counter_on();
        session.end_frame();
    }
    session.stop()?;

    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .start(Sink::stream(std::io::sink()))?;
    for _ in 0..100 {
        scopes_201_framewise();
        session.end_frame();
    }
    for _ in 0..CLOSE_FRAMES {
        scopes_201_framewise();
        framewise_end_frame(&session);
    }
    for _ in 0..CLOSE_FRAMES {
        game_frame_framewise(&session);
    }
    session.stop()?;

    puffin::set_scopes_on(true);
    {
        let _view = puffin::GlobalFrameView::default();
        for _ in 0..100 {
            scopes_201_puffin();
            puffin::GlobalProfiler::lock().new_frame();
        }
        for _ in 0..CLOSE_FRAMES {
            scopes_201_puffin();
            puffin_new_frame();
        }
    }
    {
        puffin::profile_scope!("warm-up");
    }
    puffin::GlobalProfiler::lock().new_frame();
    for _ in 0..3 {
        puffin_on();
        puffin::GlobalProfiler::lock().new_frame();
    }

    tracing::dispatcher::with_default(&tracing::Dispatch::new(NoopSubscriber), || {
        let _warm = tracing::info_span!("warm-up").entered();
        drop(_warm);
        for _ in 0..3 {
            tracing_noop();
        }
    });

    let _tracy = tracy_client::Client::start();
    {
        let _warm = tracy_client::span!("warm-up");
    }
    for _ in 0..3 {
        tracy_on();
    }
    Ok(())
}
