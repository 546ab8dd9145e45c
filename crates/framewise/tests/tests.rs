//! Integration tests of the recorder, through its public API only.
//!
//! Sessions are process-wide (one at a time), so every test that starts one holds
//! [`common::serial`] for its whole length.

#![allow(clippy::unwrap_used, reason = "tests fail loudly by design")]

#[cfg_attr(
    feature = "disabled",
    expect(dead_code, reason = "most helpers serve the recording tests")
)]
mod common;

#[cfg(not(feature = "disabled"))]
mod alloc;
#[cfg(not(feature = "disabled"))]
mod capture_path;
#[cfg(not(feature = "disabled"))]
mod census;
#[cfg(not(feature = "disabled"))]
mod counters;
#[cfg(not(feature = "disabled"))]
mod crash;
#[cfg(feature = "disabled")]
mod disabled;
#[cfg(not(feature = "disabled"))]
mod frame_close;
#[cfg(not(feature = "disabled"))]
mod gpu;
#[cfg(not(feature = "disabled"))]
mod incidents;
#[cfg(not(feature = "disabled"))]
mod lifecycle;
#[cfg(not(feature = "disabled"))]
mod lossless_rings;
#[cfg(not(feature = "disabled"))]
mod marks;
#[cfg(not(feature = "disabled"))]
mod nesting;
#[cfg(not(feature = "disabled"))]
mod ring_accounting;
#[cfg(not(feature = "disabled"))]
mod soak;
#[cfg(not(feature = "disabled"))]
mod structure;
#[cfg(not(feature = "disabled"))]
mod tracing_layer;
#[cfg(not(feature = "disabled"))]
mod writer;

/// Counts heap allocations made by threads that opted in (see `common::count_allocations`).
#[global_allocator]
static ALLOCATOR: common::CountingAllocator = common::CountingAllocator;
