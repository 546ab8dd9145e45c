//! Any bytes, as the file every analysis verb opens (an `.sgpt`, a `.litecap` or Chrome JSON,
//! told apart by their first bytes), written to a file and loaded and inspected from it as
//! `summarize`, `hitches`, `gate`, `diff` and `inspect` do: never panics; a capture that
//! loads summarizes, and gated against itself with the default tolerances, does not fail.
#![no_main]

use framewise_analysis::{
    attribute, diff, find_hitches, find_jitter, gate, inspect, load, summarize, AttributeTarget,
    GateConfig, HitchOptions, LoadOptions, Verdict,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    // A quarter of the inputs get a valid `.sgpt` header, so the fuzzer spends its time on
    // records (the `read` target's rule).
    if bytes.len() >= 32 && data.first().map(|b| b & 3) == Some(1) {
        bytes[..32].copy_from_slice(&framewise_format::Header::new().to_bytes());
    }
    let dir = std::path::Path::new("/dev/shm");
    let dir = if dir.is_dir() {
        dir.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!("framewise-fuzz-load-{}.sgpt", std::process::id()));
    std::fs::write(&path, &bytes).expect("write the input to a file");
    let _ = inspect(&path);
    let loaded = load::open(&path, &LoadOptions::default().with_spans(true));
    let _ = std::fs::remove_file(&path);
    let Ok(capture) = loaded else {
        return;
    };
    let summary = summarize(&capture);
    let _ = serde_json::to_string(&summary).expect("a summary serializes");
    let _ = find_hitches(&capture, &HitchOptions::default());
    let _ = find_jitter(&capture);
    let _ = attribute(&capture, AttributeTarget::P95Excess);
    let _ = diff(&summary, &summary);
    let same = gate(&summary, &summary, &GateConfig::default()).expect("the defaults are valid");
    assert_ne!(
        same.verdict,
        Verdict::Fail,
        "a capture failed against itself"
    );
});
