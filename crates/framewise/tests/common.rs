//! Helpers shared by the tests.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{self, Cursor, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use framewise_format::model::{Frame, SymId, SymbolKind};
use framewise_format::read::{self, Capture};

static SERIAL: Mutex<()> = Mutex::new(());

/// Serialises tests that start sessions (one session per process at a time).
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A temporary directory and a capture path inside it.
pub fn temp_capture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.sgpt"));
    (dir, path)
}

/// Opens a capture and checks it has no defects beyond the listed kinds.
pub fn open(path: &Path) -> Capture {
    read::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

/// Every frame of a capture, all of which must decode.
pub fn frames(capture: &Capture) -> Vec<Frame> {
    capture
        .frames()
        .map(|f| f.unwrap_or_else(|d| panic!("frame does not decode: {d}")))
        .collect()
}

/// A symbol's name; panics when undefined.
pub fn name(capture: &Capture, id: SymId) -> String {
    capture
        .symbols()
        .name(id)
        .unwrap_or_else(|| panic!("symbol {id} undefined"))
        .to_owned()
}

/// A scope symbol's call site.
pub fn site(capture: &Capture, id: SymId) -> (String, u32) {
    match &capture.symbols().get(id).unwrap().kind {
        SymbolKind::Scope { file, line } => (file.clone(), *line),
        other => panic!("symbol {id} is not a scope: {other:?}"),
    }
}

/// An in-memory seekable sink the test can read back while the session owns a clone.
#[derive(Clone, Default)]
pub struct SharedCursor(pub Arc<Mutex<Cursor<Vec<u8>>>>);

impl SharedCursor {
    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap().get_ref().clone()
    }
}

impl Write for SharedCursor {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for SharedCursor {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.0.lock().unwrap().seek(pos)
    }
}

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Bytes allocated and not yet freed, by every thread of the process.
static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);

/// The most `LIVE_BYTES` reached since the last `reset_peak_heap_bytes`.
static PEAK_BYTES: AtomicI64 = AtomicI64::new(0);

/// Heap bytes the whole process holds now (every thread), by allocation accounting.
pub fn live_heap_bytes() -> i64 {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// The most heap bytes the process held at once since the last reset.
pub fn peak_heap_bytes() -> i64 {
    PEAK_BYTES.load(Ordering::Relaxed)
}

/// Starts a new peak from what the process holds now.
pub fn reset_peak_heap_bytes() {
    PEAK_BYTES.store(live_heap_bytes(), Ordering::Relaxed);
}

fn grow_live(bytes: i64) {
    let live = LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
}

/// The system allocator, counting allocations on threads inside `count_allocations` and the
/// bytes every thread holds.
pub struct CountingAllocator;

impl CountingAllocator {
    fn note(&self) {
        // `try_with`: the allocator runs during thread teardown too.
        let counting = COUNTING.try_with(Cell::get).unwrap_or(false);
        if counting {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    }
}

// SAFETY: defers every operation to `System`; counting touches only const thread-locals.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.note();
        grow_live(layout.size() as i64);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.note();
        grow_live(layout.size() as i64);
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        self.note();
        grow_live(new_size as i64 - layout.size() as i64);
        // SAFETY: forwarded unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Runs `body` and returns how many heap allocations (and reallocations) the calling thread
/// made inside it.
pub fn count_allocations(body: impl FnOnce()) -> u64 {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    body();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

/// A seekable in-memory sink whose writes block while the gate is shut: a writer thread
/// stuck on I/O, for as long as a test wants.
#[derive(Clone)]
pub struct GatedSink {
    pub inner: SharedCursor,
    shut: Arc<(Mutex<bool>, Condvar)>,
}

impl GatedSink {
    pub fn new() -> Self {
        Self {
            inner: SharedCursor::default(),
            shut: Arc::new((Mutex::new(false), Condvar::new())),
        }
    }

    pub fn set_shut(&self, shut: bool) {
        *self.shut.0.lock().unwrap() = shut;
        self.shut.1.notify_all();
    }

    fn wait_open(&self) {
        let mut shut = self.shut.0.lock().unwrap();
        while *shut {
            shut = self.shut.1.wait(shut).unwrap();
        }
    }
}

impl Write for GatedSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.wait_open();
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for GatedSink {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}
