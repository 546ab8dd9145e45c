//! Where a ring's slots live: halves of 2 MiB-aligned 2 MiB chunks that Linux may back with
//! one transparent huge page each.
//!
//! A thread's ring is 1 MiB, 256 pages of 4 KiB: a frame's events reach a new page every few
//! frames, and after the game's own work (or its sleep between frames) has pushed the ring's
//! translations out of the TLB, each page costs a page walk, dear on a VM where nested paging
//! walks two tables. In a huge page the whole ring is one TLB entry. A huge page backs only a
//! 2 MiB-aligned 2 MiB range of one mapping, so a chunk is allocated 2 MiB-aligned and advised
//! `MADV_HUGEPAGE` (the kernel's `transparent_hugepage` setting `madvise`, a common default,
//! gives huge pages only to ranges so advised; `always` gives them to any such range, `never`
//! to none: then the chunk is plain 4 KiB pages, as before), and two rings share it, so the
//! huge page holds no memory that no ring uses, but for the other half of the newest chunk
//! until a second thread records (at most 1 MiB in the process).

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

/// A huge page's size on x86-64 and aarch64 with 4 KiB base pages.
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// One allocation that ring slots are carved from; freed when its last ring is.
struct Chunk {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a chunk is plain memory, owned by the rings carved from it; each ring's slots are
// accessed under the ring's own protocol (`ThreadBuffer`'s safety comment).
unsafe impl Send for Chunk {}
// SAFETY: as above; the chunk itself is never read or written through `&Chunk`.
unsafe impl Sync for Chunk {}

impl Chunk {
    /// A zeroed allocation of `layout`, advised for huge pages when it is a whole one.
    fn new(layout: Layout) -> Self {
        // SAFETY: every layout passed here has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            std::alloc::handle_alloc_error(layout)
        };
        #[cfg(target_os = "linux")]
        if layout.size() == HUGE_PAGE_BYTES && layout.align() == HUGE_PAGE_BYTES {
            // Before the first write, so that the first fault can map a huge page. Advice:
            // when it fails (THP off, an old kernel) the chunk is 4 KiB pages, as any memory.
            // SAFETY: the range is exactly the allocation just made.
            let _ = unsafe { libc::madvise(raw.cast(), layout.size(), libc::MADV_HUGEPAGE) };
        }
        Self { ptr, layout }
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: allocated in `Chunk::new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

/// A ring's `len` slots, zeroed, in a chunk it may share with one other ring.
pub(super) struct Slots<T> {
    ptr: NonNull<UnsafeCell<T>>,
    len: usize,
    _chunk: Arc<Chunk>,
}

// SAFETY: the slots are memory of the chunk's that no other `Slots` covers; `T: Send` values
// may move between threads through it.
unsafe impl<T: Send> Send for Slots<T> {}
// SAFETY: shared access is `&[UnsafeCell<T>]`, whose users keep their own protocol.
unsafe impl<T: Send> Sync for Slots<T> {}

/// The unused half of the newest shared chunk, for the next ring of the same size.
static SPARE: Mutex<Option<(Arc<Chunk>, usize)>> = Mutex::new(None);

impl<T: Copy + Default> Slots<T> {
    /// `len` slots of `T`, each `T::default()` (which must be all-zero bytes: the slots'
    /// integers). A ring of half a huge page takes half of a shared 2 MiB chunk; any other
    /// size gets an allocation of its own.
    pub(super) fn new(len: usize) -> Self {
        let bytes = len * std::mem::size_of::<T>();
        let align = std::mem::align_of::<T>().max(64);
        let (chunk, offset) = if bytes * 2 == HUGE_PAGE_BYTES {
            let mut spare = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
            match spare.take() {
                Some(half) => half,
                None => {
                    let layout = Layout::from_size_align(HUGE_PAGE_BYTES, HUGE_PAGE_BYTES)
                        .unwrap_or_else(|_| unreachable!("a power of two, far below isize::MAX"));
                    let chunk = Arc::new(Chunk::new(layout));
                    *spare = Some((Arc::clone(&chunk), bytes));
                    (chunk, 0)
                }
            }
        } else {
            let layout = Layout::from_size_align(bytes.max(1), align)
                .unwrap_or_else(|_| panic!("a ring of {len} slots is too large"));
            (Arc::new(Chunk::new(layout)), 0)
        };
        // SAFETY: `offset + bytes` is within the chunk (a half, or the whole of it), aligned
        // for `T` (chunks are aligned to at least 64 and `offset` is 0 or 1 MiB).
        let ptr = unsafe { chunk.ptr.as_ptr().add(offset) };
        // All-zero bytes are `T::default()` for the slots' plain integers: the memory is
        // initialised before any reference to it exists.
        // SAFETY: as above; no one else covers this range.
        unsafe { std::ptr::write_bytes(ptr, 0, bytes) };
        let ptr = NonNull::new(ptr.cast::<UnsafeCell<T>>())
            .unwrap_or_else(|| unreachable!("inside a non-null allocation"));
        Self {
            ptr,
            len,
            _chunk: chunk,
        }
    }
}

impl<T> std::ops::Deref for Slots<T> {
    type Target = [UnsafeCell<T>];

    #[inline(always)]
    fn deref(&self) -> &[UnsafeCell<T>] {
        // SAFETY: `len` initialised slots of this ring's own range, alive as long as `self`
        // holds the chunk.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field of `/proc/self/smaps` for the mapping holding `addr` (Linux), as a number.
    fn smaps_field(addr: usize, field: &str) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut holds = false;
        for line in smaps.lines() {
            let mut fields = line.split_whitespace();
            let first = fields.next().unwrap_or("");
            if let Some((from, to)) = first.split_once('-') {
                if let (Ok(from), Ok(to)) = (
                    usize::from_str_radix(from, 16),
                    usize::from_str_radix(to, 16),
                ) {
                    holds = (from..to).contains(&addr);
                    continue;
                }
            }
            if holds && first.strip_suffix(':') == Some(field) {
                return fields.next().and_then(|v| v.parse().ok());
            }
        }
        None
    }

    #[test]
    fn rings_of_half_a_huge_page_take_zeroed_halves_of_aligned_chunks() {
        // Slots of 16 bytes: half a huge page.
        const HALF: usize = HUGE_PAGE_BYTES / 32;
        let rings: Vec<Slots<[u64; 2]>> = (0..3).map(|_| Slots::new(HALF)).collect();
        let mut starts: Vec<usize> = rings.iter().map(|r| r.as_ptr() as usize).collect();
        for (ring, &start) in rings.iter().zip(&starts) {
            assert_eq!(ring.len(), HALF);
            assert_eq!(
                start % (HUGE_PAGE_BYTES / 2),
                0,
                "a half of a 2 MiB-aligned chunk"
            );
            // SAFETY: no one writes these slots.
            assert!(ring.iter().all(|slot| unsafe { *slot.get() } == [0, 0]));
        }
        starts.sort_unstable();
        assert!(
            starts
                .windows(2)
                .all(|w| w[1] - w[0] >= HUGE_PAGE_BYTES / 2),
            "rings overlap: {starts:x?}"
        );
        // Another size gets memory of its own, aligned to a line.
        let small = Slots::<[u64; 2]>::new(16);
        assert_eq!(small.len(), 16);
        assert_eq!(small.as_ptr() as usize % 64, 0);
    }

    /// Where the kernel can give huge pages at all, a ring's mapping is eligible for them
    /// (advised and 2 MiB-aligned: whether one is granted at the first fault depends on free
    /// memory, so only eligibility is asserted).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_ring_chunk_is_eligible_for_a_transparent_huge_page() {
        let setting = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if setting.is_empty() || setting.contains("[never]") {
            return;
        }
        let ring = Slots::<[u64; 2]>::new(HUGE_PAGE_BYTES / 32);
        let start = ring.as_ptr() as usize;
        if let Some(eligible) = smaps_field(start, "THPeligible") {
            assert_eq!(eligible, 1, "THP {setting:?}");
        }
    }
}
