//! Any bytes, as Chrome Trace Event JSON: importing never panics (nor do the analyses that
//! read what was imported).
#![no_main]

use framewise_analysis::import::chrome;
use framewise_analysis::{
    attribute, find_hitches, summarize, write_trace, AttributeTarget, HitchOptions, LoadOptions,
    TraceOptions,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the options; the rest is the document.
    let Some((&pick, text)) = data.split_first() else {
        return;
    };
    let options = LoadOptions::default()
        .with_spans(pick & 1 != 0)
        .with_frame_span((pick & 2 != 0).then(|| "frame".to_owned()));
    let Ok(capture) = chrome::import(text, &options) else {
        return;
    };
    let summary = summarize(&capture);
    let _ = serde_json::to_string(&summary).expect("a summary serializes");
    let _ = find_hitches(&capture, &HitchOptions::default());
    let _ = attribute(&capture, AttributeTarget::P95Excess);
    if let Some(first) = capture.frames().index.first() {
        let _ = attribute(&capture, AttributeTarget::Frame(*first));
    }
    if options.with_spans {
        let _ = write_trace(
            &capture,
            TraceOptions {
                normalize: pick & 4 != 0,
            },
            std::io::sink(),
        );
    }
});
