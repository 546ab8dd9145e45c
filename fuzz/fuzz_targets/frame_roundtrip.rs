//! Any bytes, decoded as payloads: whatever decodes re-encodes to something that decodes
//! to the same value.
#![no_main]

use framewise_format::payload;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok((symbols, frame)) = payload::decode_frame(data) {
        let mut out = Vec::new();
        payload::encode_frame(&mut out, &frame, symbols.iter())
            .expect("a decoded frame re-encodes");
        let (symbols2, frame2) = payload::decode_frame(&out).expect("a re-encoded frame decodes");
        assert_eq!(frame, frame2);
        assert_eq!(symbols, symbols2);
    }
    if let Ok((symbols, topo)) = payload::decode_topology(data) {
        let mut out = Vec::new();
        payload::encode_topology(&mut out, &topo, symbols.iter());
        assert_eq!(
            payload::decode_topology(&out).expect("re-decodes"),
            (symbols, topo)
        );
    }
    if let Ok((symbols, meta)) = payload::decode_meta(data) {
        let mut out = Vec::new();
        payload::encode_meta(&mut out, &meta, symbols.iter());
        let (s2, m2) = payload::decode_meta(&out).expect("re-decodes");
        assert_eq!(s2, symbols);
        // NaN clock resolutions compare unequal to themselves; compare bit patterns.
        assert_eq!(format!("{m2:?}"), format!("{meta:?}"));
    }
    if let Ok((records, table)) = payload::decode_directory(data) {
        let entries: Vec<_> = table.iter().collect();
        let dir = framewise_format::model::Directory {
            frames: entries.iter().map(|(e, _)| *e).collect(),
            records: records.clone(),
        };
        let defines: Vec<bool> = entries.iter().map(|(_, d)| *d).collect();
        let mut out = Vec::new();
        payload::encode_directory(&mut out, &dir, &defines);
        let (records2, table2) = payload::decode_directory(&out).expect("re-decodes");
        assert_eq!(records2, records);
        assert_eq!(table2.iter().collect::<Vec<_>>(), entries);
    }
});
