//! A real Tracy server draining this process's Tracy client, shared by the benches that
//! compare framewise with Tracy "drained" (and by framewise-bevy's `tracy_compare` example,
//! for Bevy's `trace_tracy`): Tracy's headless `capture` (Tracy 0.14.0, protocol
//! 82, as bundled by `tracy-client-sys` 0.29), named by `FRAMEWISE_BENCH_TRACY_CAPTURE`, is
//! started against the client's port on 127.0.0.1, the bench waits until the client reports it
//! connected, and after the timed work it stops the capture with SIGINT and asserts the capture
//! received and saved every zone made.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Names a Tracy `capture` binary (protocol 82, Tracy 0.14.0, as bundled by
/// `tracy-client-sys` 0.29); when set, Tracy is measured while that capture drains it.
pub const TRACY_CAPTURE_ENV: &str = "FRAMEWISE_BENCH_TRACY_CAPTURE";

/// How long the capture may take to connect, and to save its trace once told to stop.
const TRACY_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
const TRACY_SAVE_TIMEOUT: Duration = Duration::from_secs(180);
/// How long the capture must stay idle before it is told to stop (the client's queue has
/// emptied into it), and the longest that may take.
const TRACY_DRAINED_QUIET: Duration = Duration::from_secs(1);
const TRACY_DRAIN_TIMEOUT: Duration = Duration::from_secs(120);

/// The TCP port this process's Tracy client listens on. The client starts when the process
/// loads, before `main`, and binds `TRACY_PORT` if that is set, or else the first free port of
/// 8086..=8105; so the port is found among this process's own listening sockets, which also
/// keeps the capture from draining another process's client.
fn tracy_client_port() -> Option<u16> {
    let tracy_port = std::env::var("TRACY_PORT")
        .ok()
        .and_then(|port| port.parse::<u16>().ok());
    let own_socket_inodes: Vec<u64> = std::fs::read_dir("/proc/self/fd")
        .ok()?
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_str()?;
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect();
    ["/proc/self/net/tcp6", "/proc/self/net/tcp"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    // Fields: sl, local "ADDR:PORT" in hex, remote, state ("0A" is LISTEN),
                    // tx:rx queues, timer, retransmits, uid, timeout, inode.
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let inode: u64 = fields.get(9)?.parse().ok()?;
                    if fields.get(3) != Some(&"0A") || !own_socket_inodes.contains(&inode) {
                        return None;
                    }
                    u16::from_str_radix(fields.get(1)?.rsplit(':').next()?, 16).ok()
                })
                .collect::<Vec<_>>()
        })
        .find(|port| tracy_port.map_or((8086..=8105).contains(port), |tracy| *port == tracy))
}

/// A Tracy `capture` process connected to this process's Tracy client over loopback,
/// writing what it drains to a temporary file. Dropping it kills the capture if it still runs,
/// so a failed benchmark leaves no capture behind.
pub struct TracyCapture {
    child: Child,
    /// The capture's stdout, read to its end by a named thread (it prints its totals there).
    stdout: Option<std::thread::JoinHandle<String>>,
    trace_path: PathBuf,
    _trace_dir: tempfile::TempDir,
}

impl TracyCapture {
    /// Starts `binary` against this process's Tracy client and returns once the client reports
    /// it connected; panics, never hangs, if that takes longer than `TRACY_CONNECT_TIMEOUT`.
    pub fn connect(binary: &Path) -> Self {
        let started = Instant::now();
        let port = loop {
            if let Some(port) = tracy_client_port() {
                break port;
            }
            assert!(
                started.elapsed() < TRACY_CONNECT_TIMEOUT,
                "{TRACY_CAPTURE_ENV}: found no listening Tracy client port in this process"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let trace_dir = tempfile::tempdir().expect("a temporary directory for the Tracy trace");
        let trace_path = trace_dir.path().join("drained.tracy");
        let mut child = Command::new(binary)
            .arg("-o")
            .arg(&trace_path)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "{TRACY_CAPTURE_ENV}: cannot start {}: {error}",
                    binary.display()
                )
            });
        let mut pipe = child.stdout.take().expect("the capture's piped stdout");
        let stdout = std::thread::Builder::new()
            .name("tracy-capture-stdout".into())
            .spawn(move || {
                let mut text = String::new();
                let _ = pipe.read_to_string(&mut text);
                text
            })
            .expect("spawn the capture's stdout reader");
        let mut capture = Self {
            child,
            stdout: Some(stdout),
            trace_path,
            _trace_dir: trace_dir,
        };
        while !tracy_client::Client::is_connected() {
            if let Ok(Some(status)) = capture.child.try_wait() {
                panic!(
                    "{TRACY_CAPTURE_ENV}: the Tracy capture exited ({status}) before connecting; \
                     its output:\n{}",
                    capture.output()
                );
            }
            assert!(
                started.elapsed() < TRACY_CONNECT_TIMEOUT,
                "{TRACY_CAPTURE_ENV}: the Tracy capture did not connect to 127.0.0.1:{port} \
                 within {TRACY_CONNECT_TIMEOUT:?}; is it Tracy 0.14.0's (protocol 82)?"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        eprintln!(
            "tracy capture: {} connected to 127.0.0.1:{port} after {} ms",
            binary.display(),
            started.elapsed().as_millis()
        );
        capture
    }

    /// What the capture printed, once it has exited.
    fn output(&mut self) -> String {
        self.stdout
            .take()
            .and_then(|reader| reader.join().ok())
            .unwrap_or_default()
    }

    /// The CPU time the capture has used so far, all its threads, in clock ticks (`utime` +
    /// `stime` of `/proc/PID/stat`). It works while data arrives (decompressing and indexing
    /// it) and sleeps once none does; it prints no progress to a pipe, and its socket reads
    /// are not counted in `/proc/PID/io`, so its CPU time is what tells.
    fn cpu_ticks(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // Fields after the command name (which is in parentheses and may hold spaces):
        // state is field 3, utime 14 and stime 15.
        let after_name = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        Some(utime + stime)
    }

    /// Waits until the capture has used at most one clock tick of CPU over the last
    /// `TRACY_DRAINED_QUIET`: the client's queue has emptied into it. Gives up after
    /// `TRACY_DRAIN_TIMEOUT` (the zone count checked after the stop then says what is missing).
    fn wait_until_drained(&self) {
        let started = Instant::now();
        let mut since = (Instant::now(), self.cpu_ticks());
        while started.elapsed() < TRACY_DRAIN_TIMEOUT {
            std::thread::sleep(Duration::from_millis(100));
            let now = self.cpu_ticks();
            let busy = match (since.1, now) {
                (Some(before), Some(now)) => now > before + 1,
                _ => false,
            };
            if busy {
                since = (Instant::now(), now);
            } else if since.0.elapsed() >= TRACY_DRAINED_QUIET {
                return;
            }
        }
    }

    /// Stops the capture the way Ctrl-C does (it disconnects, then saves its trace) once the
    /// client's queue has emptied into it, waits for it, and says what it received.
    pub fn stop(mut self) -> DrainReport {
        // Let the client's queue empty into the capture before it disconnects.
        let started_draining = Instant::now();
        self.wait_until_drained();
        let drained_after = started_draining.elapsed();
        let pid = self.child.id().to_string();
        // The capture, not this process, now holds every zone: its peak memory, for the record.
        let peak_memory = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|status| {
                let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
                Some(line.trim_start_matches("VmHWM:").trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".to_owned());
        let signalled = Command::new("kill").args(["-INT", &pid]).status();
        assert!(
            matches!(signalled, Ok(status) if status.success()),
            "send SIGINT to the Tracy capture (pid {pid}): {signalled:?}"
        );
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the Tracy capture") {
                break status;
            }
            assert!(
                started.elapsed() < TRACY_SAVE_TIMEOUT,
                "the Tracy capture did not save and exit within {TRACY_SAVE_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let stdout = self.output();
        let zones_received = stdout
            .lines()
            .find_map(|line| line.strip_prefix("Zones: "))
            .map(|count| {
                count
                    .chars()
                    .filter(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|digits| digits.parse::<u64>().ok());
        let trace_bytes = std::fs::metadata(&self.trace_path).map_or(0, |meta| meta.len());
        DrainReport {
            status,
            zones_received,
            drained_after,
            peak_memory,
            trace_bytes,
            stdout,
        }
    }

    /// [`TracyCapture::stop`], then asserts the capture received every one of the
    /// `zones_made` zones and wrote a trace.
    pub fn stop_and_check(self, zones_made: u64) {
        let report = self.stop();
        eprintln!(
            "tracy capture: {}; received {:?} zones of {zones_made} made \
             (drained and idle {:.1?} after the timed work); peak memory {}; \
             trace file {} bytes",
            report.status,
            report.zones_received,
            report.drained_after,
            report.peak_memory,
            report.trace_bytes
        );
        assert!(
            report.saved() && report.zones_received == Some(zones_made),
            "the Tracy capture must receive every zone the benchmark made and save them; \
             its output:\n{}",
            report.stdout
        );
    }
}

/// What a stopped capture received and saved.
pub struct DrainReport {
    /// How the capture exited.
    pub status: std::process::ExitStatus,
    /// The zones it says it received (its `Zones:` line), if it printed one.
    pub zones_received: Option<u64>,
    /// How long the client's queue took to empty into it after the timed work.
    pub drained_after: Duration,
    /// Its peak resident memory (`VmHWM`), as `/proc` prints it.
    pub peak_memory: String,
    /// The size of the trace it saved.
    pub trace_bytes: u64,
    /// Everything it printed.
    pub stdout: String,
}

impl DrainReport {
    /// The capture exited successfully and saved a non-empty trace.
    pub fn saved(&self) -> bool {
        self.status.success() && self.trace_bytes > 0
    }
}

impl Drop for TracyCapture {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The capture named by `FRAMEWISE_BENCH_TRACY_CAPTURE`, connected to this process's Tracy
/// client (which must have been started), or `None` when the variable is unset or empty.
pub fn from_env() -> Option<TracyCapture> {
    std::env::var_os(TRACY_CAPTURE_ENV)
        .filter(|binary| !binary.is_empty())
        .map(|binary| TracyCapture::connect(Path::new(&binary)))
}
