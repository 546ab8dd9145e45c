//! A path that is this process's own stdout or stderr (`/dev/stdout`, `/dev/fd/2`,
//! `/proc/self/fd/1`, or the file's own name) is written through that very stream, even when
//! the stream is a regular file (`tool --json=/dev/stdout > out.txt`): never renamed over,
//! and what the process prints there after follows the bytes instead of overwriting them.
//!
//! The test runs its own binary again with the stream redirected to a regular file; in that
//! child, [`child`] writes through the crate and then prints on the stream directly.

#![expect(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Stdio};

use framewise_output::{destination, standard_stream, write_file, Destination, Stream};

/// Set in the child: `<stream>:<path>`, where `stream` is `1` or `2`.
const CHILD: &str = "FRAMEWISE_OUTPUT_STANDARD_STREAM_CHILD";

/// In the child: `path` is the stream, written through; `json\n` written by the crate's
/// rule, then `report\n` printed straight on the stream.
fn child(spec: &str) {
    let (stream, path) = spec.split_once(':').unwrap();
    let path = Path::new(path);
    let expected = if stream == "1" {
        Stream::Stdout
    } else {
        Stream::Stderr
    };
    assert_eq!(standard_stream(path), Some(expected));
    assert!(matches!(
        destination(path).unwrap(),
        Destination::Through(_)
    ));
    write_file(path, |w| w.write_all(b"json\n")).unwrap();
    if stream == "1" {
        let mut out = std::io::stdout().lock();
        out.write_all(b"report\n").unwrap();
        out.flush().unwrap();
    } else {
        std::io::stderr().write_all(b"report\n").unwrap();
    }
}

#[test]
fn the_file_a_standard_stream_is_open_on_is_written_through() {
    if let Ok(spec) = std::env::var(CHILD) {
        child(&spec);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    let own_name = out.display().to_string();
    let cases = [
        ("1", "/dev/stdout"),
        ("1", "/dev/fd/1"),
        ("1", "/proc/self/fd/1"),
        ("1", own_name.as_str()),
        ("2", "/dev/stderr"),
        ("2", "/dev/fd/2"),
    ];
    for (stream, path) in cases {
        for append in [false, true] {
            std::fs::write(&out, "before\n").unwrap();
            let inode = std::fs::metadata(&out).unwrap().ino();
            let file = std::fs::OpenOptions::new()
                .write(true)
                .append(append)
                .truncate(!append)
                .open(&out)
                .unwrap();
            let mut cmd = Command::new(std::env::current_exe().unwrap());
            cmd.args([
                "--exact",
                "the_file_a_standard_stream_is_open_on_is_written_through",
                "--test-threads=1",
                "--quiet",
            ])
            .env(CHILD, format!("{stream}:{path}"));
            if stream == "1" {
                cmd.stdout(file).stderr(Stdio::piped());
            } else {
                cmd.stderr(file).stdout(Stdio::piped());
            }
            let run = cmd.output().unwrap();
            let text = std::fs::read_to_string(&out).unwrap();
            assert!(
                run.status.success(),
                "{path}: the child failed\n{text}\n{}{}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            );
            let what = format!("{path} (append {append}): {text:?}");
            assert_eq!(std::fs::metadata(&out).unwrap().ino(), inode, "{what}");
            // The JSON, and the report after it: nothing overwritten, nothing lost.
            assert!(text.contains("json\nreport\n"), "{what}");
            assert_eq!(text.starts_with("before\n"), append, "{what}");
            let partials: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .ends_with(".partial")
                })
                .collect();
            assert!(partials.is_empty(), "{what}");
        }
    }
}

#[test]
fn a_file_no_stream_is_open_on_is_no_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.txt");
    std::fs::write(&path, "x").unwrap();
    assert_eq!(standard_stream(&path), None);
    assert_eq!(standard_stream(&dir.path().join("missing")), None);
    assert_eq!(destination(&path).unwrap(), Destination::File(path.clone()));
}
