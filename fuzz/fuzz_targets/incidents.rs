//! Any bytes, as the game's memory: `perf.jsonl` up to the first NUL byte, `fixes.jsonl`
//! after it. Reading never panics, nor do the folds `framewise issues`, `history` and the
//! inspector's `/api/issues` make of what was read; a record that reads writes back as JSON
//! that reads as a record of the same type and footprint.
#![no_main]

use framewise_incidents::fold::{
    catalogue, history, latest_builds, summarize_window, CatalogueOptions, HistoryOptions, Ledger,
    LedgerFiles, Occurrences,
};
use framewise_incidents::{parse_bytes, parse_line, read_all};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (perf, fixes) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let read = parse_bytes(perf, 7);
    assert!(read.next_offset <= 7 + perf.len() as u64);
    assert!(read.records.len() as u64 + read.malformed + read.unknown_type <= perf.len() as u64);
    for record in &read.records {
        let json = serde_json::to_vec(record).expect("a record serializes");
        let back = parse_line(&json).expect("a written record reads back");
        assert_eq!(back.type_name(), record.type_name());
        assert_eq!(
            back.footprint().map(|f| &f.id),
            record.footprint().map(|f| &f.id)
        );
    }

    // The files as `framewise issues` reads them: from a `.framewise/` directory.
    let dir = std::env::temp_dir().join(format!("framewise-fuzz-incidents-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    std::fs::write(dir.join(framewise_incidents::PERF_FILE), perf).expect("write perf.jsonl");
    std::fs::write(dir.join(framewise_incidents::FIXES_FILE), fixes).expect("write fixes.jsonl");
    let from_file = read_all(&dir.join(framewise_incidents::PERF_FILE)).expect("reads");
    assert_eq!(from_file.records, read.records);
    let files = LedgerFiles::read(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(files) = files else {
        return;
    };
    let (ledger, _) = files.ledger();
    let now_ms = files
        .records
        .first()
        .and_then(|r| framewise_incidents::fold::unix_ms_from_iso(&r.common().at))
        .unwrap_or(0);
    for occurrences in [Occurrences::None, Occurrences::All] {
        let options = CatalogueOptions {
            include_automated: now_ms & 1 == 0,
            now_ms,
            occurrences,
            ..CatalogueOptions::default()
        };
        let issues = files.issues(&options);
        let _ = serde_json::to_string(&issues).expect("issues serialize");
        let again = catalogue(&Ledger::new(&files.records), &files.fixes, &options);
        assert_eq!(again, issues.catalogue);
    }
    for buckets in [1, 48] {
        let h = history(
            &ledger,
            &files.fixes,
            &HistoryOptions {
                buckets,
                ..HistoryOptions::default()
            },
        );
        let _ = serde_json::to_string(&h).expect("a history serializes");
    }
    let _ = latest_builds(&ledger);
    let _ = summarize_window(&ledger, i64::MIN, i64::MAX);
    let _ = summarize_window(&ledger, now_ms.saturating_sub(60_000), now_ms);
});
