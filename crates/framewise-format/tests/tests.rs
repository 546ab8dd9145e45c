//! framewise-format's integration tests: one binary, one module per concern.

mod support;

mod corruption;
mod directory;
mod fuzz_findings;
mod golden;
mod roundtrip;
mod sample;
mod truncation;
