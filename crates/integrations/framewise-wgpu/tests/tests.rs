//! Integration tests on a real wgpu device: Mesa's lavapipe where there is no GPU
//! (`scripts/install-test-deps` installs it).
//!
//! They assert structure and ordering, never absolute times. Sessions are process-wide (one
//! at a time), so every test holds [`common::serial`] for its whole length. With
//! `FRAMEWISE_REQUIRE_GPU=1` (scripts/check) or `CI=true` a missing adapter fails the test;
//! otherwise the test is skipped with the reason printed.

#![allow(clippy::unwrap_used, reason = "tests fail loudly by design")]

mod common;
mod meta;
mod pools;
mod timing;
mod untimed;
mod workload;
