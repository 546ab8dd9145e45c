//! Any bytes, as the recorder's environment (`FRAMEWISE_*`): split at NUL bytes, one value
//! per variable in `framewise::env`'s order. Reading never panics; a value that does not parse
//! is an error naming the variable, on one line; what parses is within its documented range.
#![no_main]

use framewise::env::{self, EnvConfig, MAX_RESOLUTION_PX};
use libfuzzer_sys::fuzz_target;

const VARS: [&str; 10] = [
    env::CAPTURE,
    env::FRAMES,
    env::LEVEL,
    env::NOTE,
    env::BUILD,
    env::WRITER,
    env::FIXED_DT,
    env::GOLDEN_FRAME,
    env::SEED,
    env::RESOLUTION,
];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let values: Vec<&str> = text.split('\0').collect();
    let lookup = |name: &str| {
        let at = VARS.iter().position(|v| *v == name)?;
        values.get(at).map(|v| (*v).to_owned())
    };
    match EnvConfig::from_lookup(lookup) {
        Ok(config) => {
            assert!(config.frames.is_none_or(|f| f > 0));
            assert!(config
                .fixed_dt
                .is_none_or(|dt| !dt.is_zero() && dt.as_secs() < 3600));
            if let Some((w, h)) = config.resolution {
                assert!((1..=MAX_RESOLUTION_PX).contains(&w));
                assert!((1..=MAX_RESOLUTION_PX).contains(&h));
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(!message.contains('\n'), "a multi-line error: {message:?}");
            assert!(VARS.iter().any(|v| message.contains(v)), "{message}");
        }
    }
    if let Some(resolution) = values.last() {
        let _ = env::parse_resolution(resolution);
    }
});
