//! Exporters.

pub mod chrome;
mod events;
