//! framewise-format's integration tests: one binary, one module per concern.

mod support;

mod census;
mod corruption;
mod directory;
mod encoder_bmi2;
mod fuzz_findings;
mod golden;
mod reader_defects;
mod roundtrip;
mod sample;
mod truncation;
