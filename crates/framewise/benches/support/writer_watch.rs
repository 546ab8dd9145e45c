//! How long the writer thread went without running (`realtime` mode): the game thread reads
//! the writer's `/proc/self/task/TID/schedstat` (run time, time spent waiting for a CPU) once
//! a frame, after the frame's timed close (a `pread` on a file kept open, outside the timed
//! region), and keeps the longest stretch of frames in which the writer's run time did not
//! move. A realtime writer that does not run for longer than its hand-off ring lasts
//! (`queue_frames` − 1 frames at 1,000 frames/s) drops frames.
//!
//! The `throughput` mode reads it only before and after its loop: the writer's time on a CPU
//! and waiting for one ([`WriterWatch::totals`]), and its CPU time in user space and in the
//! kernel ([`WriterWatch::user_and_kernel_s`]).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// The writer's `schedstat`, read once a frame.
pub struct WriterWatch {
    tid: Option<libc::pid_t>,
    schedstat: Option<File>,
    buf: [u8; 128],
    first: (u64, u64),
    last: (u64, u64),
    moved_at: Option<Instant>,
    longest_still_ns: u64,
    stills_over_100_ms: u32,
    still_since_counted: bool,
}

impl WriterWatch {
    /// Watches the thread named `framewise-writer`, if there is one.
    pub fn find() -> Self {
        let mut watch = Self {
            tid: None,
            schedstat: None,
            buf: [0; 128],
            first: (0, 0),
            last: (0, 0),
            moved_at: None,
            longest_still_ns: 0,
            stills_over_100_ms: 0,
            still_since_counted: false,
        };
        watch.open();
        watch
    }

    /// Opens the writer's `schedstat` if the thread has its name yet (it names itself as it
    /// starts: the first frames may come before).
    fn open(&mut self) {
        self.tid = crate::close_detail::writer_tid();
        self.schedstat = self
            .tid
            .and_then(|tid| File::open(format!("/proc/self/task/{tid}/schedstat")).ok());
        self.first = self.read();
        self.last = self.first;
    }

    /// (run time, time waiting for a CPU), in ns.
    fn read(&mut self) -> (u64, u64) {
        let Some(file) = &self.schedstat else {
            return (0, 0);
        };
        let n = file.read_at(&mut self.buf, 0).unwrap_or(0);
        let text = String::from_utf8_lossy(&self.buf[..n]);
        let mut fields = text.split_whitespace().map(|v| v.parse().unwrap_or(0));
        (fields.next().unwrap_or(0), fields.next().unwrap_or(0))
    }

    /// Once a frame, outside the timed close.
    pub fn sample(&mut self) {
        if self.schedstat.is_none() {
            self.open();
            if self.schedstat.is_none() {
                return;
            }
        }
        let now = Instant::now();
        let seen = self.read();
        let moved_at = *self.moved_at.get_or_insert(now);
        if seen.0 != self.last.0 {
            self.moved_at = Some(now);
            self.still_since_counted = false;
        } else {
            let still_ns = now.duration_since(moved_at).as_nanos() as u64;
            self.longest_still_ns = self.longest_still_ns.max(still_ns);
            if still_ns > 100_000_000 && !self.still_since_counted {
                self.stills_over_100_ms += 1;
                self.still_since_counted = true;
            }
        }
        self.last = seen;
    }

    /// The writer's run time and its wait for a CPU since it was found, in ns (after a last
    /// [`sample`](Self::sample)).
    pub fn totals(&self) -> Option<(u64, u64)> {
        self.schedstat.as_ref()?;
        Some((self.last.0 - self.first.0, self.last.1 - self.first.1))
    }

    /// The writer's CPU time so far in user space and in the kernel, in seconds (`stat`'s
    /// `utime` and `stime`, in clock ticks: 10 ms steps at the usual 100 a second).
    pub fn user_and_kernel_s(&self) -> Option<(f64, f64)> {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{}/stat", self.tid?)).ok()?;
        // The fields after the name, which is in parentheses and may hold spaces: state is
        // the first, utime the 12th, stime the 13th.
        let mut fields = stat
            .get(stat.rfind(')')? + 1..)?
            .split_whitespace()
            .skip(11);
        let utime: u64 = fields.next()?.parse().ok()?;
        let stime: u64 = fields.next()?.parse().ok()?;
        // SAFETY: sysconf reads a constant of the system.
        let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        Some((utime as f64 / ticks_per_s, stime as f64 / ticks_per_s))
    }

    /// One line: the writer's run time and wait for a CPU over the run, and its longest
    /// stretch without running.
    pub fn print(&self) {
        if self.schedstat.is_none() {
            println!("  writer thread: not found");
            return;
        }
        println!(
            "  writer thread: ran {:.1} ms, waited for a CPU {:.1} ms; longest without running {:.1} ms; {} stretches over 100 ms",
            (self.last.0 - self.first.0) as f64 / 1e6,
            (self.last.1 - self.first.1) as f64 / 1e6,
            self.longest_still_ns as f64 / 1e6,
            self.stills_over_100_ms,
        );
    }
}
