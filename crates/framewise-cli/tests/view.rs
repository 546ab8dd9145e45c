//! `framewise view`: the binary prints the address line, serves the API on loopback with
//! the token (the same hitches JSON as the `hitches` verb), and refuses an unreadable
//! capture or a taken port with one line and exit 4.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use crate::support::{write_game, Dir, Game};
use serde_json::Value;

/// GETs `path` over a raw HTTP/1.1 connection; the status line and the body's bytes.
fn get_bytes(addr: &str, path: &str) -> (String, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("write the request");
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .expect("read the response");
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head and a body");
    let head = String::from_utf8_lossy(&response[..split]);
    (
        head.lines().next().unwrap_or("").to_owned(),
        response[split + 4..].to_vec(),
    )
}

/// GETs `path` once the capture is loaded (`view` serves a closed capture while it loads
/// it behind, answering 503 meanwhile); the status line and the body.
fn get(addr: &str, path: &str) -> (String, String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let (status, body) = get_bytes(addr, path);
        if !status.contains("503") || std::time::Instant::now() > deadline {
            return (status, String::from_utf8(body).expect("a text body"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A running `framewise view`, killed when dropped.
struct Viewer(std::process::Child);

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `framewise view game.sgpt` on a synthetic capture; the viewer and its first
/// stdout line.
fn start(dir: &Dir) -> (Viewer, String) {
    start_with(dir, &[])
}

/// The same with extra arguments.
fn start_with(dir: &Dir, extra: &[&str]) -> (Viewer, String) {
    write_game(&dir.path("game.sgpt"), &Game::default());
    spawn_view(dir, "game.sgpt", extra)
}

/// Starts `framewise view FILE EXTRA…` in `dir`; the viewer and its first stdout line.
fn spawn_view(dir: &Dir, file: &str, extra: &[&str]) -> (Viewer, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_framewise"))
        .args(["view", file])
        .args(extra)
        .current_dir(dir.tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn framewise view");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the address line");
    (Viewer(child), line)
}

/// Serves `file` (in `dir`) with `framewise view` and returns its `/api/capture` JSON.
pub(crate) fn served_capture(dir: &Dir, file: &str) -> Value {
    let (_viewer, line) = spawn_view(dir, file, &[]);
    let url = line
        .trim_end()
        .strip_prefix("inspector: http://")
        .unwrap_or_else(|| panic!("address line: {line:?}"));
    let (addr, token) = url.split_once("/?token=").expect("a token");
    let (status, body) = get(addr, &format!("/api/capture?token={token}"));
    assert!(status.contains("200"), "{status}");
    serde_json::from_str(&body).expect("JSON")
}

#[test]
fn view_prints_its_address_and_serves_the_capture() {
    let dir = Dir::new();
    let (viewer, line) = start(&dir);
    let url = line
        .trim_end()
        .strip_prefix("inspector: http://")
        .unwrap_or_else(|| panic!("address line: {line:?}"));
    let (addr, token) = url.split_once("/?token=").unwrap();
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    assert_eq!(token.len(), 32);
    // The strip is served at once, from the file's directory while the rest loads behind.
    let (status, strip) = get_bytes(addr, &format!("/api/strip?token={token}"));
    assert!(status.contains("200"), "{status}");
    assert!(strip.starts_with(b"FWSTRIP2"), "{strip:?}");
    let (status, loading) = get_bytes(addr, &format!("/api/loading?token={token}"));
    assert!(status.contains("200"), "{status}");
    let loading: Value = serde_json::from_slice(&loading).unwrap();
    assert_eq!(loading["frame_count"], 300, "{loading}");

    let (status, body) = get(addr, &format!("/api/capture?token={token}"));
    assert!(status.contains("200"), "{status}");
    let capture: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(capture["frame_count"], 300);
    assert_eq!(capture["file"], "game.sgpt");

    let (status, _) = get(addr, "/api/capture");
    assert!(status.contains("403"), "{status}");

    // The inspector's hitches are the `hitches` verb's JSON.
    let (_, body) = get(addr, &format!("/api/hitches?token={token}"));
    let served: Value = serde_json::from_str(&body).unwrap();
    let cli = dir
        .run(&["hitches", "game.sgpt", "--format", "json"])
        .expect(1)
        .json();
    assert_eq!(served, cli);
    // And its statistics are `summarize`'s, plus the range.
    let (_, body) = get(addr, &format!("/api/stats?token={token}"));
    let mut served: Value = serde_json::from_str(&body).unwrap();
    served.as_object_mut().unwrap().remove("range");
    let cli = dir
        .run(&["summarize", "game.sgpt", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(served, cli);
    drop(viewer);
}

#[test]
fn view_compare_serves_the_diff_verbs_json() {
    let dir = Dir::new();
    let slower = Game {
        render_extra_ns: 2_000_000,
        ..Game::default()
    };
    write_game(&dir.path("slow.sgpt"), &slower);
    let (_viewer, line) = start_with(&dir, &["--compare", "slow.sgpt"]);
    let url = line
        .trim_end()
        .strip_prefix("inspector: http://")
        .unwrap_or_else(|| panic!("address line: {line:?}"));
    let (addr, token) = url.split_once("/?token=").expect("a token");
    let (status, body) = get(addr, &format!("/api/diff?token={token}"));
    assert!(status.contains("200"), "{status}");
    let served: Value = serde_json::from_str(&body).expect("JSON");
    let cli = dir
        .run(&["diff", "game.sgpt", "slow.sgpt", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(served, cli);
    let (_, body) = get(addr, &format!("/api/capture?token={token}"));
    let capture: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(capture["compare"]["file"], "slow.sgpt");
}

#[test]
fn demo_view_serves_the_capture_it_just_wrote() {
    let dir = Dir::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_framewise"))
        .args([
            "demo",
            "--frames",
            "120",
            "--threads",
            "2",
            "-o",
            "d.sgpt",
            "--view",
        ])
        .current_dir(dir.tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn framewise demo --view");
    let stdout = child.stdout.take().expect("piped stdout");
    let _viewer = Viewer(child);
    let mut report = String::new();
    let mut address = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read stdout");
        if let Some(url) = line.strip_prefix("inspector: http://") {
            address = Some(url.to_owned());
            break;
        }
        report.push_str(&line);
        report.push('\n');
    }
    let url = address.unwrap_or_else(|| panic!("no address line after:\n{report}"));
    // The demo's own report comes first, then the inspector's section.
    assert!(report.contains("── framewise hitches d.sgpt"), "{report}");
    assert!(report.ends_with("── framewise view d.sgpt\n"), "{report}");
    let (addr, token) = url.split_once("/?token=").expect("a token");
    let (status, body) = get(addr, &format!("/api/capture?token={token}"));
    assert!(status.contains("200"), "{status}");
    let capture: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(capture["frame_count"], 120);
    assert_eq!(capture["file"], "d.sgpt");
}

#[cfg(unix)]
#[test]
fn view_stops_cleanly_on_sigterm() {
    let dir = Dir::new();
    let (mut viewer, line) = start(&dir);
    assert!(line.starts_with("inspector: "), "{line:?}");
    let status = Command::new("kill")
        .args(["-TERM", &viewer.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = viewer.0.wait().unwrap().code();
    let mut stderr = String::new();
    if let Some(mut e) = viewer.0.stderr.take() {
        e.read_to_string(&mut stderr).unwrap();
    }
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn view_refuses_a_file_that_is_not_a_capture() {
    let dir = Dir::new();
    dir.write("notes.txt", "hello\n");
    let run = dir.run(&["view", "notes.txt"]).expect(4);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let line = run.one_error_line();
    assert!(line.starts_with("framewise: error: notes.txt: "), "{line}");
    let run = dir.run(&["view", "missing.sgpt"]).expect(4);
    run.one_error_line();
    // A FIFO cannot be tailed: it is read once (no writer is needed to refuse it).
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path("game.fifo"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(made, "mkfifo");
    let run = dir.run(&["view", "game.fifo", "--follow"]).expect(4);
    assert_eq!(
        run.one_error_line(),
        "framewise: error: game.fifo: --follow tails a file a running game writes; a pipe or a FIFO is read once, whole (drop --follow)"
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    // A --web-dir without the web app's files would serve a 404 for every page.
    write_game(&dir.path("game.sgpt"), &Game::default());
    for web in ["missing-dir", "notes.txt", "."] {
        let run = dir.run(&["view", "game.sgpt", "--web-dir", web]).expect(4);
        assert_eq!(
            run.one_error_line(),
            format!("framewise: error: --web-dir {web}: no index.html there (it names a copy of the web app's files, crates/framewise-inspector/web)")
        );
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
}

#[test]
fn view_refuses_a_port_in_use() {
    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let run = dir.run(&["view", "game.sgpt", "--port", &port]).expect(4);
    let line = run.one_error_line();
    assert!(
        line.starts_with(&format!(
            "framewise: error: cannot listen on 127.0.0.1:{port}"
        )),
        "{line}"
    );
    assert!(run.stdout.is_empty());
}

/// A capture recovered from a cut says so on stderr (stdout stays the one address line a
/// script reads), as the page's banner does; an intact one prints nothing there.
#[cfg(unix)]
#[test]
fn view_names_a_recovered_captures_defects_on_stderr() {
    fn stderr_after_sigterm(dir: &Dir, file: &str) -> (String, String) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_framewise"))
            .args(["view", file])
            .current_dir(dir.tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn framewise view");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("read the address line");
        let mut viewer = Viewer(child);
        let status = Command::new("kill")
            .args(["-TERM", &viewer.0.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(viewer.0.wait().unwrap().code(), Some(0));
        let mut stderr = String::new();
        if let Some(mut e) = viewer.0.stderr.take() {
            e.read_to_string(&mut stderr).unwrap();
        }
        (line, stderr)
    }

    let dir = Dir::new();
    write_game(&dir.path("game.sgpt"), &Game::default());
    let bytes = std::fs::read(dir.path("game.sgpt")).unwrap();
    std::fs::write(dir.path("cut.sgpt"), &bytes[..bytes.len() * 7 / 10]).unwrap();

    let (line, stderr) = stderr_after_sigterm(&dir, "cut.sgpt");
    assert!(line.starts_with("inspector: http://127.0.0.1:"), "{line:?}");
    assert!(
        stderr.starts_with("cut.sgpt: capture defects ("),
        "{stderr}"
    );
    assert!(stderr.contains("truncated"), "{stderr}");

    let (_, stderr) = stderr_after_sigterm(&dir, "game.sgpt");
    assert!(!stderr.contains("defect"), "{stderr}");
}
