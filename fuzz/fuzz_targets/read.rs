//! Any bytes, opened as a capture: never panics, and every frame that reads resolves or
//! reports its names.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    // A quarter of the inputs get a valid header and another quarter a header whose
    // checksum is broken (read by scanning as a damaged header), so the fuzzer spends its
    // time on records.
    if bytes.len() >= 32 {
        match data.first().map(|b| b & 3) {
            Some(1) => bytes[..32].copy_from_slice(&framewise_format::Header::new().to_bytes()),
            Some(3) => {
                bytes[..32].copy_from_slice(&framewise_format::Header::new().to_bytes());
                bytes[12] ^= 0x01;
            }
            _ => {}
        }
    }
    if let Ok(capture) = framewise_format::read::from_bytes(bytes) {
        let _ = capture.verify();
        for frame in capture.frames().flatten() {
            let _ = capture.unresolved(&frame);
        }
        let _ = capture.counter_tracks();
        let _ = capture.censuses();
        for d in capture.defects() {
            let _ = d.to_string();
        }
    }
});
