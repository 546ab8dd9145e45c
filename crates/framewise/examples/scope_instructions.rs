//! Scope loops for counting instructions per scope with callgrind, a figure that does not
//! move with the machine's load (see `docs/PERFORMANCE.md`, "Recorder"):
//!
//! ```text
//! cargo build --release -p framewise --example scope_instructions
//! for f in framewise_off framewise_on puffin_on tracing_noop; do
//!   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$f --toggle-collect=$f \
//!     target/release/examples/scope_instructions 2>&1 | grep Collected
//! done
//! ```
//!
//! Each collected function runs 3 × 10,000 scopes (10,000 for the off loop, twice); divide the
//! collected instruction count by 30,000 (20,000). Every profiler is warmed up (thread
//! registered, call site interned) before its collected loops run.

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

/// `puffin::profile_scope!` with scopes on.
#[inline(never)]
#[no_mangle]
pub fn puffin_on() {
    for _ in 0..SCOPES {
        puffin::profile_scope!("probe");
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
    session.stop()?;

    puffin::set_scopes_on(true);
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
    Ok(())
}
