use framewise_analysis::import::litecap;
use framewise_analysis::load::{self, detect, FileKind, LoadError};
use framewise_analysis::LoadOptions;

fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("framewise-analysis-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn detects_by_content() {
    assert_eq!(detect(b"SGPT\x01\x00"), Some(FileKind::Sgpt));
    assert_eq!(detect(b"LCAP\x02"), Some(FileKind::Litecap));
    assert_eq!(detect(b"  \n[{"), Some(FileKind::ChromeJson));
    assert_eq!(detect(b"\xEF\xBB\xBF{"), Some(FileKind::ChromeJson));
    assert_eq!(detect(b"PK\x03\x04"), None);
}

/// A file whose first bytes decide it is no capture is refused from them: nothing of the
/// rest is read (a 10 GB file of garbage was read whole into memory, then refused).
#[test]
fn a_file_of_garbage_is_refused_from_its_first_bytes() {
    // Its own directory: the other tests remove theirs when done.
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = dir.path().join("big-garbage.bin");
    let mut bytes = b"garbage!".to_vec();
    bytes.resize(8 << 20, 0);
    std::fs::write(&garbage, &bytes).expect("write");
    let mut read = 0u64;
    let e = load::open_with_progress(&garbage, &LoadOptions::default(), |p| {
        read = read.max(p.done);
    })
    .expect_err("garbage");
    assert!(
        e.to_string()
            .contains(r#"67 61 72 62 61 67 65 21 = "garbage!""#),
        "{e}"
    );
    assert_eq!(read, 0, "the file was read on after its first bytes");
}

#[test]
fn bad_files_are_errors_naming_the_problem() {
    let dir = temp_dir();
    let opts = LoadOptions::default();
    let e = load::open(&dir, &opts).expect_err("directory");
    assert!(matches!(e, LoadError::IsDirectory { .. }), "{e}");
    assert!(e.to_string().contains("is a directory"));

    let empty = dir.join("empty.litecap");
    std::fs::write(&empty, b"").expect("write");
    assert!(matches!(load::open(&empty, &opts), Err(LoadError::Empty)));

    let garbage = dir.join("garbage.bin");
    std::fs::write(&garbage, b"\x00\x01\x02garbage").expect("write");
    let e = load::open(&garbage, &opts).expect_err("garbage");
    assert!(e.to_string().starts_with("not a capture"), "{e}");

    let missing = dir.join("missing.sgpt");
    let e = load::open(&missing, &opts).expect_err("missing");
    assert!(e.to_string().contains("missing.sgpt"), "{e}");

    let bad_version = dir.join("v9.litecap");
    std::fs::write(&bad_version, b"LCAP\x09\0\0\0\0\0").expect("write");
    let e = load::open(&bad_version, &opts).expect_err("version");
    assert_eq!(
        e.to_string(),
        "litecap: unsupported version 9 (supported 1..=4)"
    );

    let lc = dir.join("ok.litecap");
    std::fs::write(&lc, litecap::encode(&crate::litecap::sample(2, 5, 1))).expect("write");
    assert_eq!(load::open(&lc, &opts).expect("valid").frame_count(), 5);

    let json = dir.join("trace.json");
    std::fs::write(&json, crate::chrome::trace(4)).expect("write");
    assert_eq!(load::open(&json, &opts).expect("valid").frame_count(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `.litecap` is read no further than its header sizes it and 1 MiB after: a file or a
/// stream that goes on (`cat /dev/zero` after `LCAP`, read into memory until the process
/// died) is refused with one line; a few bytes after it are read, as a defect.
#[test]
fn a_litecap_that_goes_on_past_its_sections_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = LoadOptions::default();
    let mut lc = litecap::encode(&litecap::Litecap {
        version: 1,
        frames_ms: vec![16.0; 4],
        phase_tags: vec![],
        phases_ms: vec![],
        meta: None,
        meta_invalid: false,
        counter_tags: vec![],
        counters: vec![],
        timeline: None,
        trailing_bytes: 0,
    });
    let sized = lc.len();
    lc.resize(sized + 1000, 0);
    let short = dir.path().join("short-tail.litecap");
    std::fs::write(&short, &lc).expect("write");
    let c = load::open(&short, &opts).expect("a tail of 1000 bytes is read");
    assert!(
        c.defects().iter().any(|d| d
            .message
            .starts_with("1000 bytes after the last litecap section")),
        "{:?}",
        c.defects()
    );
    lc.resize(sized + (2 << 20), 0);
    let long = dir.path().join("long-tail.litecap");
    std::fs::write(&long, &lc).expect("write");
    let e = load::open(&long, &opts).expect_err("refused");
    assert!(
        matches!(e, LoadError::LitecapOverlong { sized: 26, .. }),
        "{e}"
    );

    // A FIFO fed `LCAP`, v2, then zeros.
    let fifo = dir.path().join("endless.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&fifo)
                .expect("open the FIFO");
            let _ = f.write_all(b"LCAP\x02");
            let zeros = vec![0u8; 1 << 20];
            // 64 MiB at most, so that a reader without the bound ends too; the reader
            // closing its end stops the writer.
            for _ in 0..64 {
                if f.write_all(&zeros).is_err() {
                    break;
                }
            }
        })
    };
    let e = load::open(&fifo, &opts).expect_err("refused");
    assert!(
        matches!(e, LoadError::LitecapOverlong { sized: 14, .. }),
        "{e}"
    );
    writer.join().expect("the writer ends");
}
