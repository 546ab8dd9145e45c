//! `--config PATH`: `framewise.toml` (budgets, gate tolerances), or for `gate` a
//! lite-profiler gate config in JSON. framewise reads no configuration file it was not
//! given: without `--config`, every verb uses the documented defaults. A key the file
//! format does not have (a misspelt `[gaet.tolerances]`) is an error naming the file, the
//! line and the key, never silently ignored.
//!
//! ```toml
//! [budgets]
//! frame_ms = 16.67          # the hitch rule's frame budget
//!
//! [gate]
//! defaults = true           # keep the default tolerances under these (default: false
//!                           # when tolerances are listed, true otherwise)
//! [gate.tolerances]
//! "frame.p99" = 0.10
//! "counter.draw_calls.max" = 0
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use framewise_analysis::GateConfig;
use serde::Deserialize;

/// `--config`, flattened into verbs that read one.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ConfigArgs {
    /// framewise.toml (`[budgets] frame_ms`, `[gate.tolerances]`); `gate` also accepts a
    /// lite-profiler gate config (`{"tolerances": {...}}`).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Toml {
    #[serde(default)]
    budgets: Budgets,
    #[serde(default)]
    gate: Option<GateSection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Budgets {
    frame_ms: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateSection {
    defaults: Option<bool>,
    #[serde(default)]
    tolerances: BTreeMap<toml::Spanned<String>, f64>,
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .map_or(1, |before| before.matches('\n').count() + 1)
}

/// What a config file said.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file it came from.
    pub path: Option<PathBuf>,
    /// `[budgets] frame_ms`.
    pub frame_ms: Option<f64>,
    /// Gate tolerances it lists (TOML `[gate.tolerances]` or a JSON gate config).
    pub gate: Option<GateConfig>,
    /// Whether the default tolerances stay under the listed ones.
    pub gate_keeps_defaults: bool,
    /// The file was a JSON gate config (only `gate` reads those).
    pub is_json_gate_config: bool,
}

impl Config {
    /// The frame budget in ns, when configured.
    pub fn budget_ns(&self) -> Option<u64> {
        // Unit conversion only: the value was validated as finite and positive.
        self.frame_ms.map(|ms| (ms * 1_000_000.0).round() as u64)
    }
}

fn parse_toml(path: &Path, text: &str) -> anyhow::Result<Config> {
    let raw: Toml = toml::from_str(text).map_err(|e| {
        let msg = e.message().to_owned();
        match e.span() {
            Some(span) => {
                let line = line_of(text, span.start);
                anyhow::anyhow!("{}: line {line}: {msg}", path.display())
            }
            None => anyhow::anyhow!("{}: {msg}", path.display()),
        }
    })?;
    if let Some(ms) = raw.budgets.frame_ms {
        if !ms.is_finite() || ms <= 0.0 {
            bail!(
                "{}: [budgets] frame_ms must be a positive number of milliseconds, got {ms}",
                path.display()
            );
        }
    }
    let mut cfg = Config {
        path: Some(path.to_owned()),
        frame_ms: raw.budgets.frame_ms,
        gate_keeps_defaults: true,
        ..Config::default()
    };
    if let Some(gate) = raw.gate {
        if !gate.tolerances.is_empty() {
            let mut g = GateConfig::empty();
            for (metric, tolerance) in &gate.tolerances {
                g.set(metric.get_ref(), *tolerance).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: line {}: [gate.tolerances] {e}",
                        path.display(),
                        line_of(text, metric.span().start)
                    )
                })?;
            }
            cfg.gate = Some(g);
            cfg.gate_keeps_defaults = gate.defaults.unwrap_or(false);
        } else {
            cfg.gate_keeps_defaults = gate.defaults.unwrap_or(true);
        }
    }
    Ok(cfg)
}

/// Reads `--config`, or the empty config when none was given.
pub fn load(args: &ConfigArgs) -> anyhow::Result<Config> {
    let Some(path) = &args.config else {
        return Ok(Config {
            gate_keeps_defaults: true,
            ..Config::default()
        });
    };
    if path.is_dir() {
        bail!("{}: is a directory, not a config file", path.display());
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the config", path.display()))?;
    if text.trim_start().starts_with('{') {
        let gate = GateConfig::from_json(&text).with_context(|| path.display().to_string())?;
        return Ok(Config {
            path: Some(path.clone()),
            gate: Some(gate),
            gate_keeps_defaults: false,
            is_json_gate_config: true,
            ..Config::default()
        });
    }
    parse_toml(path, &text)
}

/// Refuses a JSON gate config for a verb other than `gate`: it would be ignored.
pub fn require_toml(cfg: &Config, verb: &str) -> anyhow::Result<()> {
    if cfg.is_json_gate_config {
        bail!(
            "{}: a JSON gate config only applies to `framewise gate`; `{verb}` reads framewise.toml",
            cfg.path.as_deref().unwrap_or(Path::new("--config")).display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_budgets_and_tolerances() {
        let cfg = parse_toml(
            Path::new("framewise.toml"),
            "[budgets]\nframe_ms = 8.0\n[gate.tolerances]\n\"frame.p99\" = 0.2\n",
        )
        .expect("valid");
        assert_eq!(cfg.budget_ns(), Some(8_000_000));
        let gate = cfg.gate.expect("tolerances");
        assert_eq!(gate.tolerances.get("frame.p99"), Some(&0.2));
        assert!(!cfg.gate_keeps_defaults);
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_file_line_and_key() {
        // `[gaet.tolerances]` used to be ignored, and the default tolerances ran.
        let err = parse_toml(
            Path::new("framewise.toml"),
            "[budgets]\nframe_ms = 8.0\n\n[gaet.tolerances]\n\"frame.p99\" = 0.2\n",
        )
        .expect_err("misspelt section");
        let text = err.to_string();
        assert!(
            text.starts_with("framewise.toml: line 4:") && text.contains("`gaet`"),
            "{text}"
        );
        for (toml, key) in [
            ("[budgets]\nframe_msec = 8.0\n", "frame_msec"),
            ("[gate]\ndefault = true\n", "default"),
        ] {
            let text = parse_toml(Path::new("f.toml"), toml)
                .expect_err(key)
                .to_string();
            assert!(
                text.starts_with("f.toml: line 2:") && text.contains(key),
                "{text}"
            );
        }
    }

    #[test]
    fn a_bad_tolerance_path_names_its_line() {
        let err = parse_toml(
            Path::new("f.toml"),
            "[gate.tolerances]\n\"frame.avg\" = 0.1\n\"frame.p98\" = 0.1\n",
        )
        .expect_err("no p98");
        let text = err.to_string();
        assert!(
            text.starts_with("f.toml: line 3: [gate.tolerances] `frame.p98`")
                && text.contains("frame.p99"),
            "{text}"
        );
    }

    #[test]
    fn bad_budget_is_refused() {
        let err = parse_toml(Path::new("f.toml"), "[budgets]\nframe_ms = -1\n")
            .expect_err("negative budget");
        assert!(err.to_string().contains("frame_ms"), "{err}");
        let err = parse_toml(Path::new("f.toml"), "[budgets\n").expect_err("not toml");
        assert!(err.to_string().starts_with("f.toml: line 1"), "{err}");
    }
}
