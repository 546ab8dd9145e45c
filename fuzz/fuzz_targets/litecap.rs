//! Any bytes, as a `.litecap`: decoding and importing never panic (nor do the analyses
//! that read what was imported), and whatever decodes re-encodes to bytes that decode to
//! the same buffer.
#![no_main]

use framewise_analysis::import::litecap::{self, Litecap};
use framewise_analysis::{
    find_hitches, summarize, write_trace, HitchOptions, LoadOptions, TraceOptions,
};
use libfuzzer_sys::fuzz_target;

/// Whether a decoded buffer can round trip through `encode`: tags are read as lossy UTF-8
/// (invalid bytes become U+FFFD, three bytes each), and `encode` writes at most 255 bytes
/// per tag, so a tag that grew past 255 bytes cannot come back.
fn tags_fit(lc: &Litecap) -> bool {
    let timeline_tags = lc.timeline.iter().flat_map(|t| {
        t.spans
            .iter()
            .map(|l| &l.tag)
            .chain(t.instants.iter().map(|l| &l.tag))
    });
    lc.phase_tags
        .iter()
        .chain(&lc.counter_tags)
        .chain(timeline_tags)
        .all(|t| t.len() <= 255)
}

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    // Most inputs get a valid magic and version so the fuzzer spends its time on sections.
    if let Some(&first) = data.first() {
        if first & 3 != 0 && bytes.len() >= 5 {
            bytes[..4].copy_from_slice(&litecap::MAGIC);
            bytes[4] = 1 + (first >> 2) % litecap::MAX_VERSION;
        }
    }
    let Ok(lc) = litecap::decode(&bytes) else {
        return;
    };
    if tags_fit(&lc) {
        let encoded = litecap::encode(&lc);
        let again = litecap::decode(&encoded).expect("a re-encoded buffer decodes");
        // Bytes, not `==`: NaN samples are kept bit for bit but compare unequal.
        assert_eq!(litecap::encode(&again), encoded);
        assert_eq!(again.trailing_bytes, 0);
        // What encoding cannot carry: the bytes after the last section, and a meta blob that
        // was not JSON (written back as "no meta").
        let mut expected = lc.clone();
        expected.trailing_bytes = 0;
        expected.meta_invalid = false;
        assert_eq!(format!("{again:?}"), format!("{expected:?}"));
    }
    for options in [
        LoadOptions::default(),
        LoadOptions::default().with_spans(true),
        LoadOptions::default().with_summary_only(true),
    ] {
        let capture = litecap::build(&lc, &options);
        let summary = summarize(&capture);
        let _ = serde_json::to_string(&summary).expect("a summary serializes");
        if !options.summary_only {
            let _ = find_hitches(&capture, &HitchOptions::default());
        }
        if options.with_spans {
            let _ = write_trace(&capture, TraceOptions { normalize: true }, std::io::sink());
        }
    }
    let _ = litecap::import(&bytes, &LoadOptions::default());
});
