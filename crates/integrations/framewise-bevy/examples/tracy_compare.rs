//! What a Bevy app's frame costs with framewise's plugin, without any profiler, and with
//! Bevy's own Tracy integration (`bevy/trace_tracy`) while a real Tracy server drains it: the
//! same app run each way in one run, in interleaved rounds. Built only with the
//! `tracy-compare` feature (Bevy's `trace_tracy`, so the one binary has both):
//!
//! ```sh
//! cargo build --release -p framewise-bevy --features tracy-compare --example tracy_compare -j2
//! FRAMEWISE_BENCH_TRACY_CAPTURE=/path/to/tracy-capture \
//!   target/release/examples/tracy_compare systems 7 2000
//! ```
//!
//! `tracy_compare [APP] [ROUNDS] [UPDATES]` (defaults: `systems`, 7, 2000). The apps
//! (`examples/support/apps.rs`): `systems`, the 60 small systems of `system_overhead` on the
//! single-threaded executor, and `game`, 112 systems on Bevy's multi-threaded executor. A
//! process has one global `tracing` subscriber and Tracy's client starts with the process, so
//! every mode runs in a process of its own (this binary, run as `tracy_compare child MODE APP
//! UPDATES`); every round runs each mode once, in a rotated order, and the table gives the
//! median over rounds. The modes:
//!
//! - `none`: no subscriber (Bevy's `trace` spans compiled in, recording nothing);
//! - `framewise`: [`framewise_bevy::FramewisePlugin`] recording a capture file (its own
//!   subscriber; the writer thread in this process);
//! - `framewise-logplugin`: the plugin recording through its layer
//!   ([`framewise_bevy::tracing_layer`]) in the registry Bevy's `LogPlugin` builds, with the
//!   recorder's layer where `trace_tracy` puts Tracy's (what an app with `LogPlugin` runs; this
//!   binary's `LogPlugin` would add Tracy's layer too, so the registry is built here as it
//!   builds it);
//! - `tracy`: Bevy's `LogPlugin` as `trace_tracy` builds it (a registry with an `EnvFilter`,
//!   `tracing-error`'s layer, the log formatter and `tracing-tracy`'s layer), a Tracy frame
//!   mark per update, and a Tracy `capture` (Tracy 0.14.0, the protocol of the
//!   `tracy-client-sys` 0.29 Bevy's `tracy-client` 0.18 uses) named by
//!   `FRAMEWISE_BENCH_TRACY_CAPTURE` draining it from another process, started before the
//!   first update; after the last, the capture is stopped and must have received every zone
//!   made. `tracing-tracy` makes a zone per span entry, and how often Bevy's instrumented
//!   tasks are entered varies from run to run, so the zones made are counted in the same
//!   process, by one more layer in the registry (`custom_layer`: a relaxed atomic add per
//!   span entry);
//! - `tracy-no-viewer`: the same, counting layer included, with nothing connected (the
//!   client's queue only grows).
//!
//! Without `FRAMEWISE_BENCH_TRACY_CAPTURE` the `tracy` mode is left out. Every update is timed
//! (`Instant` around `App::update`); a process runs 100 updates untimed first. Figures per
//! mode: the per-update mean, p50 and p99 of each round, their medians over rounds, and the
//! mean's difference from `none` divided by the app's systems (per system run).

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bevy::log::tracing_subscriber::{registry::Registry, Layer};
use bevy::log::{BoxedLayer, LogPlugin};
use bevy::prelude::*;
use framewise_bevy::FramewisePlugin;

#[path = "support/apps.rs"]
mod apps;

// The benches' harness for a real Tracy server; this example uses its capture, not its
// environment helper.
#[allow(dead_code, reason = "the example does not use the benches' from_env")]
#[path = "../../../framewise/benches/support/tracy_capture.rs"]
mod tracy_capture;

/// Updates every process runs before the timed ones.
const WARM_UP_UPDATES: u32 = 100;

/// One way of running the app.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    None,
    Framewise,
    FramewiseLogPlugin,
    Tracy,
    TracyNoViewer,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Framewise => "framewise",
            Mode::FramewiseLogPlugin => "framewise-logplugin",
            Mode::Tracy => "tracy",
            Mode::TracyNoViewer => "tracy-no-viewer",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [
            Mode::None,
            Mode::Framewise,
            Mode::FramewiseLogPlugin,
            Mode::Tracy,
            Mode::TracyNoViewer,
        ]
        .into_iter()
        .find(|mode| mode.name() == name)
    }

    /// The label of its row in the table.
    fn label(self) -> &'static str {
        match self {
            Mode::None => "none (trace compiled in, no subscriber)",
            Mode::Framewise => "framewise plugin (file, in-process writer)",
            Mode::FramewiseLogPlugin => "framewise layer in LogPlugin's registry (file)",
            Mode::Tracy => "bevy/trace_tracy, drained by Tracy's capture",
            Mode::TracyNoViewer => "bevy/trace_tracy, no viewer",
        }
    }
}

/// Which app.
#[derive(Clone, Copy, Debug)]
enum AppKind {
    Systems,
    Game,
}

impl AppKind {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "systems" => Some(AppKind::Systems),
            "game" => Some(AppKind::Game),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            AppKind::Systems => "systems",
            AppKind::Game => "game",
        }
    }

    fn systems(self) -> usize {
        match self {
            AppKind::Systems => apps::SYSTEMS,
            AppKind::Game => apps::GAME_SYSTEMS,
        }
    }

    fn add_to(self, app: &mut App) {
        match self {
            AppKind::Systems => apps::add_systems_app(app),
            AppKind::Game => apps::add_game_app(app),
        }
    }
}

fn usage(message: &str) -> ! {
    eprintln!("tracy_compare: {message}");
    eprintln!("usage: tracy_compare [systems|game] [ROUNDS] [UPDATES]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("child") {
        let mode = args.get(1).and_then(|name| Mode::parse(name));
        let app = args.get(2).and_then(|name| AppKind::parse(name));
        let updates = args.get(3).and_then(|n| n.parse::<u32>().ok());
        match (mode, app, updates) {
            (Some(mode), Some(app), Some(updates)) if updates > 0 => child(mode, app, updates),
            _ => usage("child: expected MODE APP UPDATES"),
        }
        return;
    }
    let app = match args.first() {
        Some(name) => AppKind::parse(name)
            .unwrap_or_else(|| usage(&format!("unknown app {name:?}: expected systems or game"))),
        None => AppKind::Systems,
    };
    let number = |index: usize, default: u32| match args.get(index) {
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .unwrap_or_else(|| usage(&format!("expected a positive number, got {text:?}"))),
        None => default,
    };
    drive(app, number(1, 7), number(2, 2000));
}

/// Span entries the Tracy modes' counting layer saw.
static SPANS_ENTERED: AtomicU64 = AtomicU64::new(0);

/// Counts span entries: one Tracy zone is made per entry.
struct CountEntries;

impl Layer<Registry> for CountEntries {
    fn on_enter(
        &self,
        _: &bevy::log::tracing::span::Id,
        _: bevy::log::tracing_subscriber::layer::Context<'_, Registry>,
    ) {
        SPANS_ENTERED.fetch_add(1, Ordering::Relaxed);
    }
}

fn count_layer(_: &mut App) -> Option<BoxedLayer> {
    Some(Box::new(CountEntries))
}

/// The global subscriber Bevy 0.19.1's `LogPlugin` builds (its `build`, with the default
/// filter and formatter), with the recorder's layer where `trace_tracy` puts Tracy's.
fn install_log_plugin_registry() {
    use bevy::log::tracing_subscriber::layer::SubscriberExt as _;
    use bevy::log::tracing_subscriber::{filter, fmt, EnvFilter, Layer as _};
    let env_filter = EnvFilter::builder().parse_lossy(format!(
        "{},{}",
        bevy::log::Level::INFO,
        bevy::log::DEFAULT_FILTER
    ));
    let formatter = fmt::Layer::default()
        .with_writer(std::io::stderr)
        .with_filter(filter::FilterFn::new(|meta| {
            meta.fields().field("tracy.frame_mark").is_none()
        }));
    let subscriber = Registry::default()
        .with(env_filter)
        .with(tracing_error::ErrorLayer::default())
        .with(formatter)
        .with(framewise_bevy::tracing_layer());
    if bevy::log::tracing::subscriber::set_global_default(subscriber).is_err() {
        eprintln!("tracy_compare: a subscriber is already set");
        std::process::exit(2);
    }
}

/// One mode in this process: builds the app, runs it, prints one `key=value` line.
fn child(mode: Mode, kind: AppKind, updates: u32) {
    let capture_dir = tempfile::tempdir().expect("a temporary directory for the capture");
    let capture_path = capture_dir.path().join("tracy_compare.sgpt");
    let mut app = App::new();
    // The subscriber first: Bevy makes a system's span when the system is added.
    match mode {
        Mode::None => {}
        Mode::Framewise => {
            app.add_plugins(FramewisePlugin::default().capture(&capture_path));
        }
        Mode::FramewiseLogPlugin => {
            install_log_plugin_registry();
            app.add_plugins(
                FramewisePlugin::default()
                    .capture(&capture_path)
                    .install_subscriber(false),
            );
        }
        Mode::Tracy | Mode::TracyNoViewer => {
            app.add_plugins(LogPlugin {
                custom_layer: count_layer,
                ..default()
            });
        }
    }
    app.add_plugins(MinimalPlugins);
    kind.add_to(&mut app);
    app.finish();
    app.cleanup();
    let tracy_marks = matches!(mode, Mode::Tracy | Mode::TracyNoViewer);
    let drain = (mode == Mode::Tracy).then(|| {
        let binary = std::env::var_os(tracy_capture::TRACY_CAPTURE_ENV)
            .filter(|binary| !binary.is_empty())
            .unwrap_or_else(|| usage("the tracy mode needs FRAMEWISE_BENCH_TRACY_CAPTURE"));
        tracy_capture::TracyCapture::connect(std::path::Path::new(&binary))
    });
    let update = |app: &mut App| {
        app.update();
        if tracy_marks {
            tracy_client::frame_mark();
        }
    };
    for _ in 0..WARM_UP_UPDATES {
        update(&mut app);
    }
    let mut update_ns = Vec::with_capacity(updates as usize);
    for _ in 0..updates {
        let start = Instant::now();
        update(&mut app);
        update_ns.push(start.elapsed().as_nanos() as u64);
    }
    let tracy_threads = tracy_threads();
    app.world_mut().write_message(AppExit::Success);
    app.update();
    drop(app);
    let mut line = format!(
        "mode={} app={} updates={updates} {} tracy_threads={tracy_threads}",
        mode.name(),
        kind.name(),
        Stats::of(&mut update_ns).fields()
    );
    match mode {
        Mode::Framewise | Mode::FramewiseLogPlugin => {
            let bytes = std::fs::metadata(&capture_path).map_or(0, |meta| meta.len());
            line.push_str(&format!(" capture_bytes={bytes}"));
        }
        Mode::Tracy | Mode::TracyNoViewer => {
            line.push_str(&format!(
                " zones_made={}",
                SPANS_ENTERED.load(Ordering::Relaxed)
            ));
        }
        Mode::None => {}
    }
    if let Some(capture) = drain {
        let report = capture.stop();
        line.push_str(&format!(
            " zones_received={} trace_bytes={} capture_peak_memory={} drained_after_ms={} saved={}",
            report
                .zones_received
                .map_or_else(|| "unknown".to_owned(), |zones| zones.to_string()),
            report.trace_bytes,
            report.peak_memory.replace(' ', ""),
            report.drained_after.as_millis(),
            report.saved()
        ));
    }
    println!("{line}");
}

/// The threads of Tracy's client in this process (`Tracy Sampling`, `Tracy Symbol Worker`…:
/// which ones run says whether its sampling and system tracing started), comma-separated.
fn tracy_threads() -> String {
    let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().replace(' ', "_"))
        .filter(|name| name.starts_with("Tracy"))
        .collect();
    names.sort();
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(",")
    }
}

/// Per-update wall-clock figures of one process.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    mean_ns: f64,
    p50_ns: f64,
    p99_ns: f64,
}

impl Stats {
    fn of(update_ns: &mut [u64]) -> Self {
        update_ns.sort_unstable();
        let at = |quantile: f64| {
            let index = ((update_ns.len() - 1) as f64 * quantile).round() as usize;
            update_ns[index] as f64
        };
        Stats {
            mean_ns: update_ns.iter().sum::<u64>() as f64 / update_ns.len() as f64,
            p50_ns: at(0.5),
            p99_ns: at(0.99),
        }
    }

    fn fields(self) -> String {
        format!(
            "mean_ns={:.0} p50_ns={:.0} p99_ns={:.0}",
            self.mean_ns, self.p50_ns, self.p99_ns
        )
    }

    fn parse(fields: &BTreeMap<String, String>) -> Option<Self> {
        let get = |key: &str| fields.get(key)?.parse::<f64>().ok();
        Some(Stats {
            mean_ns: get("mean_ns")?,
            p50_ns: get("p50_ns")?,
            p99_ns: get("p99_ns")?,
        })
    }
}

/// Runs `mode` in a child process and returns its `key=value` fields.
fn run_child(mode: Mode, kind: AppKind, updates: u32) -> BTreeMap<String, String> {
    let exe = std::env::current_exe().expect("this example's path");
    // This process's Tracy client listens too, and its socket is inherited by the child: the
    // child's client gets a port of its own (a free one the system picks), which is the one
    // the capture must drain.
    let tracy_port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port for the child's Tracy client");
    let output = Command::new(exe)
        .args(["child", mode.name(), kind.name(), &updates.to_string()])
        .env("TRACY_PORT", tracy_port.to_string())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|error| panic!("run the {} child: {error}", mode.name()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the {} child failed ({}): {stdout}",
        mode.name(),
        output.status
    );
    stdout
        .split_whitespace()
        .filter_map(|field| field.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// The driver: every round runs each mode once, rotated; then the table.
fn drive(kind: AppKind, rounds: u32, updates: u32) {
    let drained = std::env::var_os(tracy_capture::TRACY_CAPTURE_ENV).is_some_and(|v| !v.is_empty());
    let mut modes = vec![Mode::None, Mode::Framewise, Mode::FramewiseLogPlugin];
    if drained {
        modes.push(Mode::Tracy);
    } else {
        eprintln!(
            "tracy_compare: {} unset: the drained Tracy mode is left out",
            tracy_capture::TRACY_CAPTURE_ENV
        );
    }
    modes.push(Mode::TracyNoViewer);
    println!(
        "app={} systems={} rounds={rounds} updates={updates} (+{WARM_UP_UPDATES} untimed) \
         load_average_before={}",
        kind.name(),
        kind.systems(),
        load_average()
    );
    let mut results: BTreeMap<&str, Vec<BTreeMap<String, String>>> = BTreeMap::new();
    for round in 0..rounds as usize {
        for offset in 0..modes.len() {
            let mode = modes[(round + offset) % modes.len()];
            results
                .entry(mode.name())
                .or_default()
                .push(run_child(mode, kind, updates));
        }
    }
    println!("load_average_after={}", load_average());
    let stats = |mode: Mode| -> Vec<Stats> {
        results[mode.name()]
            .iter()
            .map(|fields| Stats::parse(fields).expect("a child's figures"))
            .collect()
    };
    let medians = |mode: Mode| {
        let rows = stats(mode);
        let pick = |f: fn(&Stats) -> f64| median(&mut rows.iter().map(f).collect::<Vec<_>>());
        Stats {
            mean_ns: pick(|s| s.mean_ns),
            p50_ns: pick(|s| s.p50_ns),
            p99_ns: pick(|s| s.p99_ns),
        }
    };
    let none = medians(Mode::None);
    let none_rounds = stats(Mode::None);
    println!(
        "| per update, µs (median of {rounds} rounds) | mean | p50 | p99 | mean over none, \
         ns per system run | mean ÷ same round's none (median) | per-round means, µs |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|");
    for &mode in &modes {
        let m = medians(mode);
        let per_system_ns = (m.mean_ns - none.mean_ns) / kind.systems() as f64;
        let rounds = stats(mode);
        let mut ratios: Vec<f64> = rounds
            .iter()
            .zip(&none_rounds)
            .map(|(mine, none)| mine.mean_ns / none.mean_ns)
            .collect();
        let rounds_text = rounds
            .iter()
            .map(|s| format!("{:.1}", s.mean_ns / 1e3))
            .collect::<Vec<_>>()
            .join(" ");
        let (over_none, ratio) = if mode == Mode::None {
            ("—".to_owned(), "—".to_owned())
        } else {
            (
                format!("{per_system_ns:.0}"),
                format!("{:.2}", median(&mut ratios)),
            )
        };
        println!(
            "| {} | {:.1} | {:.1} | {:.1} | {over_none} | {ratio} | {rounds_text} |",
            mode.label(),
            m.mean_ns / 1e3,
            m.p50_ns / 1e3,
            m.p99_ns / 1e3,
        );
    }
    for &mode in &modes {
        let threads = results[mode.name()]
            .first()
            .and_then(|fields| fields.get("tracy_threads"))
            .map_or("?", String::as_str);
        println!("{}: Tracy's threads in the process: {threads}", mode.name());
    }
    if let Some(capture) = results.get(Mode::Framewise.name()) {
        let bytes: Vec<&str> = capture
            .iter()
            .filter_map(|fields| fields.get("capture_bytes").map(String::as_str))
            .collect();
        println!("framewise capture bytes per round: {}", bytes.join(" "));
    }
    if let Some(tracy) = results.get(Mode::Tracy.name()) {
        let mut all_received = true;
        for fields in tracy {
            let made = fields.get("zones_made").map_or("unknown", String::as_str);
            let received = fields
                .get("zones_received")
                .map_or("unknown", String::as_str);
            all_received &=
                received == made && fields.get("saved").map(String::as_str) == Some("true");
            println!(
                "tracy capture: received {received} zones of {made} made; trace {} bytes; \
                 capture peak memory {}; drained {} ms after the last update; saved {}",
                fields.get("trace_bytes").map_or("?", String::as_str),
                fields
                    .get("capture_peak_memory")
                    .map_or("?", String::as_str),
                fields.get("drained_after_ms").map_or("?", String::as_str),
                fields.get("saved").map_or("?", String::as_str),
            );
        }
        if !all_received {
            eprintln!("tracy_compare: a Tracy capture did not receive every zone made");
            std::process::exit(1);
        }
    }
}
