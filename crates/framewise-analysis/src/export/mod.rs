//! Exporters.

pub mod chrome;
