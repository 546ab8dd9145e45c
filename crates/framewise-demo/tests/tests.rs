//! framewise-demo's integration tests: one binary, a module per concern. Every check is
//! on counts, names and structure; none on timings.

// Count allocations, so the `allocations` counter is recorded and can be checked.
#[global_allocator]
static ALLOC: framewise_demo::CountingAlloc = framewise_demo::CountingAlloc::new();

mod capture;
mod common;
mod harness;
mod hitches;
mod jitter;
mod variants;
