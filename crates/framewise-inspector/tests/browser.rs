//! The web app in a real browser: a demo capture is recorded, served by the inspector on
//! loopback, and `tests/browser/inspector.test.mjs` drives Debian's chromium through it
//! (playwright-core, never a browser it downloads), checking what the page renders against
//! the API. A truncated copy of the capture must show the recovered banner. What cannot be read
//! (an unreadable incident log, a frame of a file cut short after the page opened) is said
//! where it belongs while the rest of the page works; zoomed out over thousands of frames, the
//! counter tracks read every frame.
//!
//! Needs node, `npm ci` in tests/browser and chromium: `scripts/install-test-deps` installs
//! them. Without them the tests skip with a note, unless `CI` or `FRAMEWISE_REQUIRE_BROWSER`
//! is set, where a missing browser is a failure (a suite must not turn green by skipping).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use framewise::{Session, WriterMode};
use framewise_analysis::LoadOptions;
use framewise_demo::{DemoConfig, Scale, Schedule};
use framewise_inspector::{Background, Follow, Inspector, Server};

#[path = "common/gpu.rs"]
mod gpu;
#[path = "common/ledger.rs"]
mod ledger;

/// How long one run of the browser script may take before it is killed.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(180);

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| {
        let value = value.trim().to_ascii_lowercase();
        !value.is_empty() && value != "false" && value != "0"
    })
}

/// Whether a missing browser must fail the test rather than skip it.
fn browser_required() -> bool {
    flag("CI") || flag("FRAMEWISE_REQUIRE_BROWSER")
}

fn script_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// What is missing of node, the script's node_modules and chromium; `None` when nothing.
fn browser_missing() -> Option<String> {
    let mut missing = Vec::new();
    if !on_path("node") {
        missing.push("node");
    }
    if !script_dir().join("node_modules/playwright-core").is_dir() {
        missing.push("tests/browser/node_modules (npm ci)");
    }
    if std::env::var_os("FRAMEWISE_CHROMIUM").is_none()
        && !on_path("chromium")
        && !on_path("chromium-browser")
    {
        missing.push("chromium");
    }
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// Whether the browser tests can run; panics under CI when they cannot.
fn browser_available() -> bool {
    match browser_missing() {
        None => true,
        Some(missing) if browser_required() => panic!(
            "the inspector's browser tests need {missing}; run scripts/install-test-deps \
             (CI or FRAMEWISE_REQUIRE_BROWSER is set, so this fails rather than skips)"
        ),
        Some(missing) => {
            eprintln!(
                "skipping the inspector's browser tests: no {missing}; run \
                 scripts/install-test-deps, or set CI=true to make this a failure"
            );
            false
        }
    }
}

/// A process records one session at a time.
static SESSION: Mutex<()> = Mutex::new(());

struct Recorded {
    _dir: tempfile::TempDir,
    capture: PathBuf,
    truncated: PathBuf,
}

/// One demo run for every test here (a process records one session at a time): a small
/// world, 300 frames with every injected hitch and the pause, and a copy cut off mid-file.
fn recorded() -> &'static Recorded {
    static RUN: OnceLock<Recorded> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let capture = dir.path().join("demo.sgpt");
        let frames = 300;
        // A small world and a small streamed texture: quick, and every hitch still fires.
        let scale = Scale {
            agents: 600,
            wave_agents: 1000,
            detail_texture_px: 512,
            ..Scale::default()
        };
        let config = DemoConfig {
            seed: 7,
            frames,
            threads: 2,
            schedule: Schedule::for_run(frames, scale.agents),
            scale,
            fixed_dt: Some(Duration::from_secs_f64(1.0 / 60.0)),
            output: Some(capture.clone()),
            use_env: false,
            ..DemoConfig::default()
        };
        {
            let _session = SESSION.lock().unwrap_or_else(PoisonError::into_inner);
            framewise_demo::run(config).expect("the demo runs");
        }
        // Cut off at 70% of the file: mid-record, with no directory, as after a crash; and
        // damaged at 35%, so that frames between two surviving ones are lost too.
        let mut bytes = std::fs::read(&capture).expect("read the capture");
        bytes.truncate(bytes.len() * 7 / 10);
        let damaged = bytes.len() / 2;
        bytes[damaged..damaged + 64].fill(0xA5);
        let truncated = dir.path().join("demo-truncated.sgpt");
        std::fs::write(&truncated, &bytes).expect("write the copy");
        Recorded {
            _dir: dir,
            capture,
            truncated,
        }
    })
}

/// Serves `capture` (compared with `compare`) on a background thread, with the issues
/// catalogue of the `.framewise/` directory `project` only: never the nearest one above the
/// capture's temp dir, which is whatever the machine holds (another program's
/// `/tmp/.framewise`); the address `framewise view` would print.
fn serve(capture: &Path, compare: Option<&Path>, project: Option<&Path>) -> String {
    let inspector = Inspector::open(capture, compare)
        .expect("the capture loads")
        .with_project(project.map(Path::to_owned));
    let server = Server::new(inspector, 0).expect("the inspector binds");
    let url = server.url();
    server.spawn().expect("the server thread starts");
    url
}

/// Where a run's screenshots of every view (1280×720) are saved: `target/tmp/
/// inspector-shots/NAME/` (artefacts; docs/INSPECTOR.md shows a few of them).
fn shots_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("inspector-shots")
        .join(name);
    std::fs::create_dir_all(&dir).expect("the screenshot directory");
    dir
}

/// Runs the browser script against `url` (its screenshots in [`shots_dir`]`(shots)`);
/// panics with its output unless it exits 0.
fn run_script(url: &str, extra: &[&str], screenshot: bool, shots: &str) {
    let mut child = start_script_with(url, extra, screenshot, Some(&shots_dir(shots)));
    let stdout = child.stdout.take().expect("node's stdout");
    finish_script(
        child,
        stdout,
        String::new(),
        &format!("{extra:?} against {url}"),
    );
}

/// Starts the browser script against `url`, its stdout piped.
fn start_script(url: &str, extra: &[&str], screenshot: bool) -> std::process::Child {
    start_script_with(url, extra, screenshot, None)
}

/// [`start_script`], saving screenshots of every view in `shots` when given.
fn start_script_with(
    url: &str,
    extra: &[&str],
    screenshot: bool,
    shots: Option<&Path>,
) -> std::process::Child {
    let mut command = Command::new("node");
    match shots {
        Some(dir) => command.env("FRAMEWISE_BROWSER_SHOTS", dir),
        None => command.env_remove("FRAMEWISE_BROWSER_SHOTS"),
    };
    command
        .current_dir(script_dir())
        .arg("inspector.test.mjs")
        .arg(url)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if !screenshot {
        command.env_remove("FRAMEWISE_BROWSER_SHOT");
    }
    command.spawn().expect("node starts")
}

/// Starts the browser script against `url` with `mode` and reads its output up to the line
/// that starts with `signal` (the script waits there for the test): the script, the rest of
/// its output, what it printed so far, and whether the signal came (else it ended first).
fn start_until(
    url: &str,
    mode: &str,
    signal: &str,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    String,
    bool,
) {
    use std::io::BufRead;
    let mut child = start_script(url, &[mode], false);
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("node's stdout"));
    let mut output = String::new();
    let mut line = String::new();
    while stdout.read_line(&mut line).expect("read node's output") > 0 {
        output.push_str(&line);
        if line.starts_with(signal) {
            return (child, stdout, output, true);
        }
        line.clear();
    }
    (child, stdout, output, false)
}

/// Waits for the script (killed past [`SCRIPT_TIMEOUT`]), adds the rest of `stdout` to
/// `output`, prints it, and panics with it unless the script exited 0.
fn finish_script(
    mut child: std::process::Child,
    mut stdout: impl std::io::Read,
    mut output: String,
    what: &str,
) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for node") {
            break status;
        }
        if started.elapsed() > SCRIPT_TIMEOUT {
            let _ = child.kill();
            panic!("inspector.test.mjs ran past {SCRIPT_TIMEOUT:?} ({what}): {output}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    stdout
        .read_to_string(&mut output)
        .expect("read node's output");
    println!("{}", output.trim_end());
    assert!(
        status.success(),
        "inspector.test.mjs {what} exited {status}: {}",
        output.trim_end()
    );
}

#[test]
fn the_page_renders_a_demo_capture() {
    if !browser_available() {
        return;
    }
    let url = serve(&recorded().capture, None, None);
    run_script(&url, &[], true, "demo");
}

#[test]
fn a_truncated_capture_shows_the_recovered_banner_and_the_capture_comparison() {
    if !browser_available() {
        return;
    }
    let recorded = recorded();
    // The damage must have cost frames between surviving ones, or the banner's count of
    // lost frames is not exercised.
    let capture = framewise_analysis::load::open(
        &recorded.truncated,
        &framewise_analysis::LoadOptions::new(),
    )
    .expect("the damaged copy loads");
    let index = &capture.frames().index;
    assert!(
        index.windows(2).any(|w| w[1] > w[0] + 1),
        "the damaged copy lost no frame between surviving ones: {:?}",
        capture.defects()
    );
    let url = serve(&recorded.truncated, Some(&recorded.capture), None);
    run_script(&url, &["--expect-recovered"], false, "recovered-compared");
}

/// The capture in a game project whose `.framewise/perf.jsonl` holds its hitches: the page
/// shows the Issues panel, and a click on one of this capture's occurrences selects its
/// frame.
#[test]
fn the_issues_panel_shows_the_games_catalogue() {
    if !browser_available() {
        return;
    }
    let (project, capture) = ledger::project_around(&recorded().capture);
    let url = serve(&capture, None, Some(&project.path().join(".framewise")));
    run_script(&url, &["--expect-issues"], false, "issues");
}

#[test]
fn a_gpu_capture_has_a_nominal_gpu_track() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = {
        let _session = SESSION.lock().unwrap_or_else(PoisonError::into_inner);
        gpu::gpu_recording(dir.path())
    };
    let url = serve(&path, None, None);
    run_script(&url, &["--expect-gpu"], false, "gpu");
}

/// `framewise view` of a capture that loads behind: the load is held until the page has
/// painted the strip from the file's directory (the script prints "painted N"), then
/// released; the page must then render every view.
#[test]
fn the_strip_paints_while_the_capture_loads() {
    if !browser_available() {
        return;
    }
    let (release, held) = std::sync::mpsc::channel::<()>();
    let background = Background::open(&recorded().capture, LoadOptions::new())
        .expect("the capture's directory reads")
        .expect("a closed capture has a directory")
        .with_project(None)
        .before_loading(move || {
            // Released by the test, or let go when the test ends.
            let _ = held.recv_timeout(SCRIPT_TIMEOUT);
        });
    let server = Server::background(background, 0).expect("the inspector binds");
    let url = server.url();
    server.spawn().expect("the server thread starts");
    let (child, stdout, output, _) = start_until(&url, "--loading", "painted ");
    let _ = release.send(());
    finish_script(child, stdout, output, "--loading");
}

/// `framewise view --follow`: a recorder session writes `game.sgpt` while the test copies
/// its bytes into the followed `live.sgpt` (appended, the header patched in place at close,
/// as the writer lands them). Once the page shows the first frames live and says so
/// ("ready N" on the script's stdout), more frames are written and the file is closed; the
/// script checks the strip grew and the page says closed.
#[test]
fn a_followed_capture_grows_in_the_page_until_closed() {
    if !browser_available() {
        return;
    }
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let (game, live) = (dir.path().join("game.sgpt"), dir.path().join("live.sgpt"));
    let _session = SESSION.lock().unwrap_or_else(PoisonError::into_inner);
    let session = Session::builder()
        .writer_mode(WriterMode::Lossless)
        .build_id("browser-follow-test")
        .start(game.as_path())
        .expect("the session starts");
    let mut written = 0;
    let mut copied = 0;
    let mut frames = |count: u64| {
        for _ in 0..count {
            let _frame = session.frame();
            let _update = framewise::scope!("update");
            std::thread::sleep(Duration::from_millis(1));
        }
        written += count;
        let deadline = Instant::now() + Duration::from_secs(20);
        while session.frames_written() < written {
            assert!(Instant::now() < deadline, "the recorder fell behind");
            std::thread::sleep(Duration::from_millis(5));
        }
        let bytes = std::fs::read(&game).expect("read the recording");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&live)
            .expect("open the followed file");
        file.write_all(&bytes[copied..]).expect("append");
        copied = bytes.len();
    };
    frames(40);

    let follow = Follow::open(&live, None)
        .expect("the capture loads")
        .with_project(None);
    let server = Server::following(follow, 0).expect("the inspector binds");
    let url = server.url();
    server.spawn().expect("the server thread starts");
    let (child, stdout, output, ready) = start_until(&url, "--follow", "ready ");
    if ready {
        for _ in 0..3 {
            frames(20);
            std::thread::sleep(Duration::from_millis(300));
        }
        session.stop().expect("the session stops");
        let bytes = std::fs::read(&game).expect("read the finished recording");
        std::fs::OpenOptions::new()
            .write(true)
            .open(&live)
            .and_then(|mut file| file.write_all(&bytes))
            .expect("write the finished file in place");
    }
    finish_script(child, stdout, output, "--follow");
}

/// Runs the browser script against `url` in `mode` (a mode that saves no screenshots);
/// panics with its output unless it exits 0.
fn run_mode(url: &str, mode: &str) {
    let mut child = start_script(url, &[mode], false);
    let stdout = child.stdout.take().expect("node's stdout");
    finish_script(
        child,
        stdout,
        String::new(),
        &format!("{mode} against {url}"),
    );
}

/// The game's `.framewise/` cannot be read (a directory where `perf.jsonl` belongs), so
/// `/api/issues` answers 500: the Issues panel says so, with the server's reason, and every
/// other view loads (the page says ready, and shows no error).
#[test]
fn an_unreadable_incident_log_is_said_in_the_issues_panel_alone() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let fw = dir.path().join(".framewise");
    std::fs::create_dir_all(fw.join("perf.jsonl")).expect("a directory where perf.jsonl belongs");
    let capture = dir.path().join("game.sgpt");
    std::fs::copy(&recorded().capture, &capture).expect("copy the capture");
    let url = serve(&capture, None, Some(&fw));
    run_mode(&url, "--issues-broken");
}

/// The capture's file is cut short after the page opened on it ("ready N" from the script):
/// a selection of a frame the cut lost (`/api/frame` answers 500) leaves every view on the
/// frame shown, says which frame could not be shown and why, and throws nothing uncaught; the
/// next frame that reads is selected and clears the message.
#[test]
fn a_frame_that_no_longer_reads_back_leaves_every_view_on_the_frame_shown() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let capture = dir.path().join("changing.sgpt");
    std::fs::copy(&recorded().capture, &capture).expect("copy the capture");
    let url = serve(&capture, None, None);
    let (child, stdout, output, ready) = start_until(&url, "--file-changed", "ready ");
    if ready {
        // Cut short in place: the frames past 45% of the file no longer read back.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&capture)
            .expect("open the capture");
        let len = file.metadata().expect("the capture's length").len();
        file.set_len(len * 45 / 100).expect("cut the capture short");
    }
    finish_script(child, stdout, output, "--file-changed");
}

/// Thousands of short frames, each with a `ticks` counter: zoomed out past the frames whose
/// spans the timeline draws, the counter tracks still read every frame's value (from
/// `/api/series`), never "not recorded" for one fetched at no zoom.
#[test]
fn zoomed_out_the_counter_tracks_cover_every_frame_in_view() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("counters.sgpt");
    {
        let _session = SESSION.lock().unwrap_or_else(PoisonError::into_inner);
        let session = Session::builder()
            .writer_mode(WriterMode::Lossless)
            .build_id("browser-counters-test")
            .start(path.as_path())
            .expect("the session starts");
        for i in 0..3000_u64 {
            let _frame = session.frame();
            let _update = framewise::scope!("update");
            framewise::counter!("ticks", i % 89 + 1);
            let begun = Instant::now();
            while begun.elapsed() < Duration::from_micros(20) {
                std::hint::spin_loop();
            }
        }
        session.stop().expect("the session stops");
    }
    let url = serve(&path, None, None);
    run_mode(&url, "--zoomed-out");
}

/// A `.litecap` v3 (per-frame phase times, no spans): the flame graph and the search say
/// the spans were not recorded rather than show nothing as if it were everything.
#[test]
fn a_capture_without_spans_says_so_in_the_flame_graph_and_search() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("phases.litecap");
    std::fs::write(&path, litecap_v3(120)).expect("write the litecap");
    let url = serve(&path, None, None);
    run_mode(&url, "--no-spans");
}

/// A `.litecap` v3 buffer in lite-profiler's layout: `frames` frames with phases `update`
/// and `render` (times only) and a `drawCalls` counter.
fn litecap_v3(frames: usize) -> Vec<u8> {
    let mut out = b"LCAP".to_vec();
    out.push(3);
    out.extend_from_slice(&u32::try_from(frames).expect("frames").to_le_bytes());
    out.push(2);
    let times = |base: f32, step: f32, every: usize| -> Vec<f32> {
        (0..frames)
            .map(|i| base + (i % every) as f32 * step)
            .collect()
    };
    for v in [times(12.0, 0.5, 4), times(3.0, 0.25, 3), times(6.0, 0.5, 2)].concat() {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for tag in ["update", "render"] {
        out.push(u8::try_from(tag.len()).expect("a short tag"));
        out.extend_from_slice(tag.as_bytes());
    }
    let meta = br#"{"label":"browser","budgetMs":16.7}"#;
    out.extend_from_slice(&u32::try_from(meta.len()).expect("meta").to_le_bytes());
    out.extend_from_slice(meta);
    out.push(1);
    for v in times(100.0, 1.0, 3) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.push(9);
    out.extend_from_slice(b"drawCalls");
    out
}

/// Two recordings in one file (the first's records, then the second's): frame indices
/// repeat, and each hitch is listed, marked and selected on the row it was found on.
#[test]
fn hitches_stay_on_their_rows_when_frame_indices_repeat() {
    if !browser_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let records = |path: &Path| {
        let bytes = std::fs::read(path).expect("read the capture");
        let directory = usize::try_from(u64::from_le_bytes(
            bytes[16..24].try_into().expect("eight bytes"),
        ))
        .expect("an offset");
        bytes[..directory].to_vec()
    };
    let capture = &recorded().capture;
    let mut joined = records(capture);
    joined.extend_from_slice(&records(capture)[32..]);
    let path = dir.path().join("joined.sgpt");
    std::fs::write(&path, joined).expect("write the joined capture");
    let url = serve(&path, None, None);
    run_mode(&url, "--repeated-indices");
}
