//! Importers for other profilers' files: lite-profiler's `.litecap` and Chrome Trace Event
//! JSON.

pub mod chrome;
pub mod litecap;
