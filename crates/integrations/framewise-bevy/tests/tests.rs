//! framewise-bevy's tests: headless Bevy apps recorded through the plugin, read back the way
//! the CLI reads them.
//!
//! Sessions are process-wide (one at a time), so every test that starts one in this process
//! holds [`common::serial`]; what depends on the process itself runs in a child (`child`).

#![allow(clippy::unwrap_used, reason = "tests fail loudly by design")]

mod app;
mod child;
mod common;
#[cfg(feature = "render")]
mod render;
#[cfg(feature = "render")]
mod render_bisect;
#[cfg(feature = "render")]
mod scene;
