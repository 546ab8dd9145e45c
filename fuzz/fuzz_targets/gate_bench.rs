//! Any text, as the JSON files `gate`, `bench` and the MCP server read: a gate config
//! (`--config`), each line as a `--tolerance` argument, a saved bench result (`bench
//! --compare`), each line as a bench-ledger line, and `.framewise/profile.json`. Never
//! panics; an error is one line; what parses judges (a result compared with itself) and
//! writes back as JSON that parses again.
#![no_main]

use std::collections::BTreeMap;

use framewise_analysis::bench::{compare, compare_counters_only, BenchResult, Budgets, LedgerLine};
use framewise_analysis::GateConfig;
use libfuzzer_sys::fuzz_target;

/// An error says something (the CLI prints it on one line, whitespace collapsed).
fn says(error: &impl std::fmt::Display) {
    assert!(!error.to_string().trim().is_empty());
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match GateConfig::from_json(text) {
        Ok(mut config) => {
            for (metric, tolerance) in config.tolerances.clone() {
                config
                    .set(&metric, tolerance)
                    .expect("a tolerance the config took is taken again");
            }
        }
        Err(e) => says(&e),
    }
    let mut config = GateConfig::empty();
    for line in text.lines() {
        if let Err(e) = config.apply_arg(line) {
            says(&e);
        }
    }

    if let Ok(result) = serde_json::from_str::<BenchResult>(text) {
        let mut limits = BTreeMap::new();
        for key in result
            .noise_floor
            .keys()
            .chain(result.pooled.counters.keys())
        {
            limits.insert(key.clone(), 1.0);
        }
        let budgets = Budgets {
            frame_ms: Some(16.7),
            limits,
        };
        for path in result.noise_floor.keys() {
            let _ = result.value(path);
            let _ = result.per_run(path);
        }
        let _ = result.fingerprint.config_hash();
        let same = compare(&result, &result, &budgets);
        let _ = serde_json::to_string(&same).expect("a comparison serializes");
        let _ = compare_counters_only(&result, &result, &Budgets::default());
        let json = serde_json::to_string(&result).expect("a bench result serializes");
        serde_json::from_str::<BenchResult>(&json).expect("and parses back");
    }
    for line in text.lines() {
        if let Ok(ledger) = serde_json::from_str::<LedgerLine>(line) {
            let json = serde_json::to_string(&ledger).expect("a ledger line serializes");
            serde_json::from_str::<LedgerLine>(&json).expect("and parses back");
        }
    }
    if let Ok(profile) = serde_json::from_str::<framewise_incidents::Profile>(text) {
        let json = serde_json::to_string(&profile).expect("a profile serializes");
        serde_json::from_str::<framewise_incidents::Profile>(&json).expect("and parses back");
    }
});
