//! `framewise demo --settings FILE`: the game's own settings file, kept in the game's
//! repository as a real game keeps its build and graphics settings. A change to the game is
//! an edit to this file (the bench's `command` stays the same, so its config hash does too):
//! what the verification loop of docs/AGENTS.md measures, judges and keeps or reverts.
//!
//! ```toml
//! variant = "slow"     # normal | slow (batching off: one draw call per instance)
//! shadows = true       # draw the shadow pass (false: the sun casts no shadows)
//! snap_bug = false     # the player unit snaps back a few metres for one frame, now and then
//! ```
//!
//! Every key is optional (a missing key keeps the demo's default); an unknown key, a wrong
//! type or a bad variant is an error naming the file and the line; a key the command line
//! also sets is refused rather than silently overridden.

use std::path::Path;

use anyhow::{bail, Context};
use serde::Deserialize;

/// What a settings file says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// `normal` or `slow`.
    pub variant: Option<String>,
    /// Draw the shadow pass.
    pub shadows: Option<bool>,
    /// The snap-back bug.
    pub snap_bug: Option<bool>,
}

/// Reads and checks a settings file: a regular file of TOML with the keys above.
pub fn load(path: &Path) -> anyhow::Result<Settings> {
    let meta = std::fs::metadata(path).with_context(|| {
        format!(
            "--settings {}: cannot read the settings file",
            path.display()
        )
    })?;
    if !meta.is_file() {
        bail!(
            "--settings {}: not a regular file (a directory, a FIFO or a device)",
            path.display()
        );
    }
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "--settings {}: cannot read the settings file",
            path.display()
        )
    })?;
    parse(path, &text)
}

/// Parses `text`, the contents of the settings file `path` (which the errors name, with the
/// line).
pub fn parse(path: &Path, text: &str) -> anyhow::Result<Settings> {
    let settings: Settings =
        toml::from_str(text).map_err(|e| crate::config::toml_error(path, text, &e))?;
    if let Some(variant) = &settings.variant {
        if framewise_demo::Variant::parse(variant).is_none() {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("variant"))
                .map_or(1, |i| i + 1);
            bail!(
                "{}: line {line}: variant = {variant:?}: expected \"normal\" or \"slow\"",
                path.display()
            );
        }
    }
    Ok(settings)
}
