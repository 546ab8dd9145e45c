//! Integration tests for framewise-analysis: one binary, one module per concern.

mod attribute;
mod bench_honesty;
mod census;
mod chrome;
mod fixtures;
mod gate;
mod hitches;
mod inspect;
mod jitter;
mod litecap;
mod load;
mod outputs;
mod peak;
mod sgpt;
mod summarize;
mod trace;
