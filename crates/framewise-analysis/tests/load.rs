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
