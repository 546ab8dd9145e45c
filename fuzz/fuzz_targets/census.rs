//! Any bytes as a `CENS` payload, and any text as a census document: never panics; a
//! payload that decodes re-encodes to the same bytes when minimal, and a census that parses
//! serializes and parses back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((symbols, document)) = framewise_format::payload::decode_census(data) {
        if symbols.is_empty() {
            let mut again = Vec::new();
            framewise_format::payload::encode_census(&mut again, &document);
            // Non-minimal varints decode too; only a minimal input must round-trip.
            if again.len() == data.len() {
                assert_eq!(again, data);
            }
        }
        fuzz_json(&document);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        fuzz_json(text);
    }
});

fn fuzz_json(text: &str) {
    if let Ok(censuses) = framewise_census::parse_censuses(text) {
        let _ = framewise_census::hints(&censuses);
        for census in censuses {
            let json = serde_json::to_string(&census).expect("a parsed census serializes");
            let back = framewise_census::parse_census(&json).expect("and parses back");
            // f64 fields (scale factors, ranges) round-trip through serde_json exactly.
            assert_eq!(back, census);
        }
    }
}
