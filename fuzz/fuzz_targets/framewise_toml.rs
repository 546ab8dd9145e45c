//! Any text, as `framewise.toml` (budgets, benches, gate tolerances) and as the demo's
//! `--settings` file: what the `framewise` binary parses itself. Never panics; an error is
//! one line naming the file; what parses is within the documented ranges.
#![no_main]

use std::path::Path;

use framewise_analysis::bench::MIN_RUNS;
use framewise_cli::parsers::{demo_settings, framewise_toml, one_line, FRAME_MS_MAX, FRAME_MS_MIN};
use libfuzzer_sys::fuzz_target;

/// An error is one non-empty line that starts with the file's name.
fn names(error: &anyhow::Error, file: &str) {
    let line = one_line(error);
    assert!(line.starts_with(file), "{line}");
    assert!(!line.contains('\n'), "{line}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match framewise_toml(Path::new("framewise.toml"), text) {
        Ok(config) => {
            if let Some(ms) = config.frame_ms {
                assert!((FRAME_MS_MIN..=FRAME_MS_MAX).contains(&ms), "{ms}");
                assert!(config.budget_ns().is_some_and(|ns| ns > 0));
            }
            for (metric, limit) in &config.budgets.limits {
                assert!(limit.is_finite(), "{metric} = {limit}");
            }
            for (name, bench) in &config.benches {
                assert!(!name.is_empty());
                assert!(
                    bench.runs as usize >= MIN_RUNS,
                    "{name}: {} runs",
                    bench.runs
                );
                assert!(!bench.command.is_empty(), "{name}: no command");
                if let Some(t) = bench.golden_threshold {
                    assert!(t > 0.0 && t <= 1.0, "{name}: threshold {t}");
                }
                if let Some(dt) = bench.fixed_dt {
                    assert!(dt.is_finite() && dt > 0.0, "{name}: fixed_dt {dt}");
                }
            }
        }
        Err(e) => names(&e, "framewise.toml"),
    }
    match demo_settings(Path::new("settings.toml"), text) {
        Ok(settings) => {
            if let Some(variant) = settings.variant {
                assert!(variant == "normal" || variant == "slow", "{variant}");
            }
        }
        Err(e) => names(&e, "settings.toml"),
    }
});
