//! Where a slow frame close's time went (`FRAMEWISE_BENCH_CLOSE_DETAIL`, realtime mode): for
//! every close, what the game thread and the machine did around it, and three controls timed
//! the same way in the same frame, just before the close, that touch nothing the recorder
//! shares with another thread.
//!
//! - `empty`: two clock reads, nothing between them (the timer's own cost and interruptions);
//! - `compute`: a chain of 100 dependent multiply-adds, about 400 instructions like a close,
//!   touching no memory;
//! - `cold`: 12 loads from lines of a private 16 MiB buffer not read for many frames (12
//!   lines from memory, about what a close fetched that another core wrote).
//!
//! Per close: the CPU it started and ended on (`rdtscp`'s processor id, no system call),
//! whether worker threads were still recording their share, and at level 2 the thread's
//! involuntary and voluntary context switches and minor page faults across the controls and
//! the close (`getrusage(RUSAGE_THREAD)`, two system calls a frame, outside the timed
//! regions), and at level 3 also the writer thread's state and processor before the controls
//! and after the close (`/proc/self/task/TID/stat`, read with `pread` on a file kept open:
//! two more system calls a frame) and whether it ran in between (its run time in
//! `schedstat`, which the kernel updates when the thread stops running).

use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// Worker threads inside their share of the frame (incremented and decremented around it).
pub static WORKERS_BUSY: AtomicU32 = AtomicU32::new(0);

const COLD_BYTES: usize = 16 << 20;
const COLD_LINES: usize = 12;

/// What the thread did, as the kernel counts it.
#[derive(Clone, Copy, Default)]
struct Usage {
    involuntary: i64,
    voluntary: i64,
    minor_faults: i64,
}

fn usage() -> Usage {
    // SAFETY: `getrusage` writes only into the struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
        Usage {
            involuntary: usage.ru_nivcsw,
            voluntary: usage.ru_nvcsw,
            minor_faults: usage.ru_minflt,
        }
    }
}

/// The processor the calling thread runs on (Linux keeps it in `TSC_AUX`).
fn cpu() -> u32 {
    let mut aux = 0u32;
    // SAFETY: `rdtscp` has no preconditions on x86_64.
    #[allow(
        unused_unsafe,
        reason = "`__rdtscp` is an unsafe fn on some toolchains only"
    )]
    unsafe {
        core::arch::x86_64::__rdtscp(&mut aux);
    }
    aux & 0xfff
}

/// The writer thread as `/proc` shows it.
#[derive(Clone, Copy, Default)]
struct WriterSeen {
    /// `R`: running or waiting for a CPU.
    running: bool,
    cpu: u32,
    run_ns: u64,
}

/// The thread id of the thread named `framewise-writer` in this process.
pub fn writer_tid() -> Option<libc::pid_t> {
    std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .find(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|comm| comm.trim().starts_with("framewise-writ"))
        })
        .and_then(|task| task.file_name().to_str()?.parse::<libc::pid_t>().ok())
}

/// Gives the writer thread the lowest priority, nice 19 (`FRAMEWISE_BENCH_PIN=2`): whether a
/// writer that never preempts the game thread changes the close's tail. Returns whether it
/// was set.
pub fn nice_writer() -> bool {
    // SAFETY: `setpriority` on a thread id of this process changes only its priority.
    writer_tid().is_some_and(|tid| unsafe {
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19) == 0
    })
}

/// Pins the calling thread (the game thread) to CPU 0 and the thread named
/// `framewise-writer` to CPU 1 (`FRAMEWISE_BENCH_PIN=1`): whether a writer kept off the game
/// thread's CPU changes the close's tail. Returns whether both were pinned.
pub fn pin_game_and_writer_apart() -> bool {
    let pin = |tid: libc::pid_t, cpu: usize| {
        // SAFETY: `cpu_set_t` is plain data; the calls only read the set they are given.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    };
    match writer_tid() {
        Some(tid) => pin(0, 0) && pin(tid, 1),
        None => false,
    }
}

/// The writer thread's `stat` and `schedstat`, kept open.
struct WriterProc {
    stat: File,
    schedstat: File,
    buf: [u8; 512],
}

impl WriterProc {
    /// The thread named `framewise-writer` in this process (`comm` keeps 15 bytes of a name).
    fn find() -> Option<Self> {
        for task in std::fs::read_dir("/proc/self/task").ok()? {
            let path = task.ok()?.path();
            let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            if comm.trim().starts_with("framewise-writ") {
                return Some(Self {
                    stat: File::open(path.join("stat")).ok()?,
                    schedstat: File::open(path.join("schedstat")).ok()?,
                    buf: [0; 512],
                });
            }
        }
        None
    }

    fn read(&mut self) -> WriterSeen {
        let n = self.stat.read_at(&mut self.buf, 0).unwrap_or(0);
        let stat = String::from_utf8_lossy(&self.buf[..n]).into_owned();
        // After the command's closing parenthesis: state is field 3, processor field 39.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let n = self.schedstat.read_at(&mut self.buf, 0).unwrap_or(0);
        let run_ns = String::from_utf8_lossy(&self.buf[..n])
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        WriterSeen {
            running: fields.first() == Some(&"R"),
            cpu: fields
                .get(36)
                .and_then(|v| v.parse().ok())
                .unwrap_or(u32::MAX),
            run_ns,
        }
    }
}

/// One close and what happened around it.
#[derive(Clone, Copy, Default)]
struct Record {
    close_ns: u64,
    empty_ns: u64,
    compute_ns: u64,
    cold_ns: u64,
    migrated: bool,
    workers_busy: u32,
    usage: Usage,
    cpu: u32,
    writer_before: WriterSeen,
    writer_after: WriterSeen,
}

/// The probe: the cold buffer and every close's record.
pub struct Detail {
    level: u64,
    cold: Vec<u8>,
    next_cold: usize,
    records: Vec<Record>,
    whole_run_before: Usage,
    writer: Option<WriterProc>,
}

fn ns(from: Instant) -> u64 {
    from.elapsed().as_nanos() as u64
}

impl Detail {
    /// A probe for `frames` closes; `level` 2 also counts context switches and page faults
    /// around every close.
    pub fn new(level: u64, frames: u64) -> Self {
        Self {
            level,
            // Written once, so that every page is mapped before the first frame.
            cold: vec![1; COLD_BYTES],
            next_cold: 0,
            records: Vec::with_capacity(frames as usize),
            whole_run_before: usage(),
            writer: None,
        }
    }

    /// Times the controls, then `close`; returns the close's time.
    pub fn close(&mut self, close: impl FnOnce()) -> u64 {
        if self.level >= 3 && self.writer.is_none() {
            self.writer = WriterProc::find();
        }
        let writer_before = self
            .writer
            .as_mut()
            .map(WriterProc::read)
            .unwrap_or_default();
        let before = if self.level >= 2 {
            usage()
        } else {
            Usage::default()
        };
        let cpu_before = cpu();
        let t = Instant::now();
        let empty_ns = ns(t);
        let t = Instant::now();
        let mut x = black_box(3u64);
        for _ in 0..100 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        black_box(x);
        let compute_ns = ns(t);
        let stride = COLD_BYTES / COLD_LINES;
        let t = Instant::now();
        let mut sum = 0u8;
        for line in 0..COLD_LINES {
            sum = sum.wrapping_add(self.cold[line * stride + self.next_cold]);
        }
        black_box(sum);
        let cold_ns = ns(t);
        // The next frame reads lines one page further on: a line comes back to the same
        // offset after stride / 4096 frames.
        self.next_cold = (self.next_cold + 4096 + 64) % stride;
        let workers_busy = WORKERS_BUSY.load(Ordering::Relaxed);
        let t = Instant::now();
        close();
        let close_ns = ns(t);
        let cpu_after = cpu();
        let migrated = cpu_after != cpu_before;
        let usage = if self.level >= 2 {
            let after = usage();
            Usage {
                involuntary: after.involuntary - before.involuntary,
                voluntary: after.voluntary - before.voluntary,
                minor_faults: after.minor_faults - before.minor_faults,
            }
        } else {
            Usage::default()
        };
        let writer_after = self
            .writer
            .as_mut()
            .map(WriterProc::read)
            .unwrap_or_default();
        self.records.push(Record {
            close_ns,
            empty_ns,
            compute_ns,
            cold_ns,
            migrated,
            workers_busy,
            usage,
            cpu: cpu_after,
            writer_before,
            writer_after,
        });
        close_ns
    }

    /// Prints the distributions and what the slowest 1 % of closes had in common.
    pub fn print(&self) {
        let whole = usage();
        let sorted = |f: fn(&Record) -> u64| {
            let mut v: Vec<u64> = self.records.iter().map(f).collect();
            v.sort_unstable();
            v
        };
        println!(
            "  close detail ({} closes), ns: p50 / p90 / p99 / p99.9 / max",
            self.records.len()
        );
        for (name, values) in [
            ("end_frame", sorted(|r| r.close_ns)),
            ("control: empty", sorted(|r| r.empty_ns)),
            (
                "control: compute (400 instructions)",
                sorted(|r| r.compute_ns),
            ),
            ("control: 12 cold lines", sorted(|r| r.cold_ns)),
        ] {
            let p = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
            println!(
                "    {name:<38} {:>6} / {:>6} / {:>6} / {:>7} / {:>8}",
                p(0.5),
                p(0.9),
                p(0.99),
                p(0.999),
                values[values.len() - 1]
            );
        }
        let closes = sorted(|r| r.close_ns);
        let p99 = closes[((closes.len() - 1) as f64 * 0.99).round() as usize];
        let (slow, rest): (Vec<&Record>, Vec<&Record>) =
            self.records.iter().partition(|r| r.close_ns > p99);
        println!(
            "  closes over the p99 ({p99} ns): {} of them; the others: {}",
            slow.len(),
            rest.len()
        );
        type Row = (&'static str, fn(&[&Record]) -> String);
        let rows: [Row; 11] = [
            ("migrated CPU during the close (%)", |s| {
                share(s, |r| r.migrated)
            }),
            ("a worker still recording at close (%)", |s| {
                share(s, |r| r.workers_busy > 0)
            }),
            ("involuntary switch around it (%)", |s| {
                share(s, |r| r.usage.involuntary > 0)
            }),
            ("voluntary switch around it (%)", |s| {
                share(s, |r| r.usage.voluntary > 0)
            }),
            ("minor page fault around it (%)", |s| {
                share(s, |r| r.usage.minor_faults > 0)
            }),
            ("writer runnable before or after it (%)", |s| {
                share(s, |r| r.writer_before.running || r.writer_after.running)
            }),
            ("writer ran in between (%)", |s| {
                share(s, |r| r.writer_after.run_ns > r.writer_before.run_ns)
            }),
            ("writer ran in between, last on the game's CPU (%)", |s| {
                share(s, |r| {
                    r.writer_after.run_ns > r.writer_before.run_ns && r.writer_after.cpu == r.cpu
                })
            }),
            ("writer runnable on the game's CPU (%)", |s| {
                share(s, |r| {
                    (r.writer_before.running && r.writer_before.cpu == r.cpu)
                        || (r.writer_after.running && r.writer_after.cpu == r.cpu)
                })
            }),
            ("control compute, same frame, median ns", |s| {
                median(s, |r| r.compute_ns)
            }),
            ("control 12 cold lines, same frame, median ns", |s| {
                median(s, |r| r.cold_ns)
            }),
        ];
        for (name, row) in rows {
            println!(
                "    {name:<46} slow {:>6}   others {:>6}",
                row(&slow),
                row(&rest)
            );
        }
        {
            println!(
                "  whole run, game thread: {} minor faults, {} involuntary and {} voluntary switches",
                whole.minor_faults - self.whole_run_before.minor_faults,
                whole.involuntary - self.whole_run_before.involuntary,
                whole.voluntary - self.whole_run_before.voluntary
            );
        }
    }
}

/// The share of `set` for which `f` holds, in percent.
fn share(set: &[&Record], f: fn(&Record) -> bool) -> String {
    let share = 100.0 * set.iter().filter(|r| f(r)).count() as f64 / set.len().max(1) as f64;
    format!("{share:.1}")
}

/// The median of `f` over `set`.
fn median(set: &[&Record], f: fn(&Record) -> u64) -> String {
    let mut values: Vec<u64> = set.iter().map(|r| f(r)).collect();
    values.sort_unstable();
    values
        .get(values.len() / 2)
        .copied()
        .unwrap_or(0)
        .to_string()
}
