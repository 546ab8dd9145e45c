//! The distinct cache lines (data and code) one thread's scopes touch in one frame: what a
//! frame's first scopes fetch again when the thread comes back from its wait between frames
//! (see "The scopes, eighth pass" in `docs/performance/recorder-passes-scopes.md`).
//! Deterministic: the memory trace of valgrind's `lackey`, the lines counted between two markers.
//!
//! ```text
//! cargo build --release -p framewise --example frame_lines
//! valgrind --tool=lackey --trace-mem=yes --log-file=/tmp/lackey.out \
//!   target/release/examples/frame_lines > /tmp/frame_lines.out
//! nm -S -C target/release/examples/frame_lines > /tmp/frame_lines.nm
//! target/release/examples/frame_lines analyze /tmp/lackey.out /tmp/frame_lines.out /tmp/frame_lines.nm
//! ```
//!
//! The recorded frame is a worker's share of the `game_loop` bench's frame: a `job` scope
//! wrapping 7 systems of 1 + 3 × 2 nested scopes, one `counter!` per system (50 scopes).
//! Frames are closed untimed between the thread's shares; before the traced frame the writer
//! has drained and sleeps, so nothing else runs while it is traced. The analysis prints the
//! distinct 64-byte lines of instructions and of data the traced frame touched, the data ones
//! sorted into the executable's statics (named by `nm`), the thread-local block, the stack
//! and the rest (the thread's buffer and ring, and the session's state, on the heap).
//!
//! `close` traces one frame close instead (see "Frame close on the game thread, tenth pass" in
//! `docs/performance/recorder-passes-close.md`): the game thread of the bench's `realtime`
//! mode, a realtime session whose game thread records its share of the frame (a `frame` scope
//! wrapping 10 systems of 1 + 2 × 2 scopes, one `counter!` per system, a `mark!`; 51 scopes)
//! and closes it, and `end_frame` alone is traced between the markers. With
//! `FRAME_LINES_VERBOSE=1` the analysis lists each code line with its function.
//!
//! ```text
//! valgrind --tool=lackey --trace-mem=yes --log-file=/tmp/lackey.close \
//!   target/release/examples/frame_lines close > /tmp/close_lines.out
//! FRAME_LINES_VERBOSE=1 target/release/examples/frame_lines analyze /tmp/lackey.close \
//!   /tmp/close_lines.out /tmp/frame_lines.nm
//! ```

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a measuring tool fails loudly"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::io::BufRead;

use framewise::{counter, mark, scope, Session, Sink, WriterMode};

const LINE: u64 = 64;

/// A worker's share of the frame, as `game_loop`'s `systems` records it.
#[inline(never)]
fn systems(systems: usize, pairs: usize) {
    for _ in 0..systems {
        let _system = scope!("system");
        for _ in 0..pairs {
            let _query = scope!("system.query");
            let _iter = scope!("system.query.iter");
            black_box(0);
        }
        counter!("draw_calls", 1);
    }
}

#[inline(never)]
fn worker_frame() {
    let _job = scope!("job");
    systems(7, 3);
}

/// Marks where the traced frame starts (its first instruction's address is printed).
#[inline(never)]
#[no_mangle]
pub extern "C" fn frame_lines_start() {
    black_box(1u8);
}

/// Marks where the traced frame ends.
#[inline(never)]
#[no_mangle]
pub extern "C" fn frame_lines_end() {
    black_box(2u16);
}

/// The game thread's share of the bench's frame, before its close: 51 scopes and a mark.
#[inline(never)]
fn game_frame() {
    {
        let _frame = scope!("frame");
        systems(10, 2);
    }
    mark!("tick");
}

thread_local! {
    static PROBE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Prints the markers' addresses and the probes the analysis sorts data lines by.
fn print_addresses(stack_probe: &u64) {
    println!("start {:x}", frame_lines_start as *const () as usize);
    println!("end {:x}", frame_lines_end as *const () as usize);
    println!("stack {:x}", std::ptr::from_ref(stack_probe) as usize);
    println!("tls {:x}", PROBE.with(|p| p.as_ptr() as usize));
}

/// Records 20 frames untimed, lets the writer drain and sleep, then traces one frame between
/// the markers: a worker's share of the frame, or with `close`, the close of the game thread's
/// share (recorded before the markers, in a realtime session as the bench's `realtime` mode).
fn record(close: bool) -> Result<(), Box<dyn std::error::Error>> {
    let (mode, frame): (WriterMode, fn()) = if close {
        (WriterMode::Realtime, game_frame)
    } else {
        (WriterMode::Lossless, worker_frame)
    };
    let session = Session::builder()
        .writer_mode(mode)
        .start(Sink::stream(std::io::sink()))?;
    for _ in 0..20 {
        frame();
        session.end_frame();
    }
    if close {
        game_frame();
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let stack_probe = 0u64;
    print_addresses(&stack_probe);
    frame_lines_start();
    if close {
        black_box(session.end_frame());
    } else {
        worker_frame();
    }
    frame_lines_end();
    black_box(&stack_probe);
    if !close {
        session.end_frame();
    }
    session.stop()?;
    Ok(())
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim(), 16).unwrap()
}

/// `nm -S -C` symbols with an address and a size: (start, end, kind, name), by start.
fn symbols(nm: &str) -> Vec<(u64, u64, String, String)> {
    let mut out = Vec::new();
    for line in std::fs::read_to_string(nm).unwrap().lines() {
        let mut parts = line.splitn(4, ' ');
        let (Some(a), Some(s), Some(k), Some(n)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(a), Ok(s)) = (u64::from_str_radix(a, 16), u64::from_str_radix(s, 16)) else {
            continue;
        };
        out.push((a, a + s.max(1), k.to_owned(), n.to_owned()));
    }
    out.sort();
    out
}

fn name_of(symbols: &[(u64, u64, String, String)], addr: u64) -> Option<&str> {
    let i = symbols.partition_point(|s| s.0 <= addr);
    let s = symbols.get(i.checked_sub(1)?)?;
    (addr < s.1).then_some(s.3.as_str())
}

fn analyze(trace: &str, out: &str, nm: &str) {
    let mut addrs = BTreeMap::new();
    for line in std::fs::read_to_string(out).unwrap().lines() {
        if let Some((k, v)) = line.split_once(' ') {
            addrs.insert(k.to_owned(), hex(v));
        }
    }
    let symbols = symbols(nm);
    let link = |name: &str| {
        symbols
            .iter()
            .find(|s| s.3 == name)
            .map(|s| s.0)
            .expect("marker in nm")
    };
    let bias = addrs["start"] - link("frame_lines_start");
    let (start, end) = (addrs["start"], addrs["end"]);
    let (stack, tls) = (addrs["stack"], addrs["tls"]);
    let mut inside = false;
    let mut code = BTreeSet::new();
    let mut data = BTreeMap::new();
    let mut last_instruction = 0u64;
    let (mut instructions, mut accesses) = (0u64, 0u64);
    let file = std::io::BufReader::new(std::fs::File::open(trace).unwrap());
    for line in file.lines() {
        let line = line.unwrap();
        let t = line.trim_start();
        let (kind, rest) = match t.split_once(' ') {
            Some(x) => x,
            None => continue,
        };
        let Some((a, size)) = rest.trim().split_once(',') else {
            continue;
        };
        let Ok(a) = u64::from_str_radix(a, 16) else {
            continue;
        };
        let size: u64 = size.parse().unwrap_or(1);
        if kind == "I" {
            if a == start {
                inside = true;
            } else if a == end {
                inside = false;
            }
        }
        if !inside {
            continue;
        }
        let lines = (a / LINE)..=((a + size.max(1) - 1) / LINE);
        if kind == "I" {
            instructions += 1;
            last_instruction = a;
            code.extend(lines);
        } else {
            accesses += 1;
            for l in lines {
                data.entry(l).or_insert((kind.to_owned(), last_instruction));
            }
        }
    }
    let mut code_by_fn: BTreeMap<String, usize> = BTreeMap::new();
    for l in &code {
        let name = (0..LINE)
            .find_map(|o| name_of(&symbols, (l * LINE + o).checked_sub(bias)?))
            .unwrap_or("?");
        if std::env::var_os("FRAME_LINES_VERBOSE").is_some() {
            // Link address, for `objdump --start-address`; the function that holds its start.
            println!("  code {:x} {name}", l * LINE - bias);
        }
        *code_by_fn.entry(name.to_owned()).or_default() += 1;
    }
    let mut data_by_kind: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let verbose = std::env::var_os("FRAME_LINES_VERBOSE").is_some();
    for (&l, (access, by)) in &data {
        let addr = l * LINE;
        let kind = if addr.abs_diff(stack) < 1 << 16 {
            "stack".to_owned()
        } else if addr.abs_diff(tls) < 1 << 12 {
            "thread-local block".to_owned()
        } else if let Some(name) = (0..LINE)
            .step_by(4)
            .find_map(|o| name_of(&symbols, (addr + o).checked_sub(bias)?))
        {
            format!("static: {name}")
        } else {
            "heap (the thread's buffer and ring, the session's state)".to_owned()
        };
        if verbose {
            // The instruction that first touched the line, as a link address for `addr2line`.
            println!("  data {addr:x} {access} by {:x}: {kind}", by - bias);
        }
        data_by_kind.entry(kind).or_default().push(addr);
    }
    println!("traced frame: {instructions} instructions, {accesses} data accesses");
    println!("distinct code lines: {}", code.len());
    for (name, n) in &code_by_fn {
        println!("  {n:4}  {name}");
    }
    println!("distinct data lines: {}", data.len());
    for (kind, lines) in &data_by_kind {
        println!("  {:4}  {kind}", lines.len());
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("analyze") => {
            analyze(&args[2], &args[3], &args[4]);
            Ok(())
        }
        Some("close") => record(true),
        _ => record(false),
    }
}
