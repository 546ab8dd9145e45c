//! Any text, as a bisection report (`bisect.json`, read by `framewise bisect --read` and the
//! MCP server's `bisect` tool): never panics; an error says why; a report that parses
//! serializes and parses back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match framewise_census::parse_bisect(text) {
        Ok(report) => {
            let json = serde_json::to_string(&report).expect("a report serializes");
            // Back, not equal: serde_json's default float parsing may move a far exponent's
            // last bit.
            let back = framewise_census::parse_bisect(&json).expect("and parses back");
            assert_eq!(back.results.len(), report.results.len());
        }
        Err(e) => {
            assert!(!e.to_string().trim().is_empty(), "an error says why");
        }
    }
});
