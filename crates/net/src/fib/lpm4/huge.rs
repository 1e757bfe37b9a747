//! Zeroed `u32` buffers in their own anonymous mappings, which transparent hugepages can
//! back when the table is large enough to want them.
//!
//! The lookup arrays of a large [`super::Lpm4`] (a few MiB) are read at random. On 4 KiB
//! pages they span more pages than the first-level TLB holds, so many lookups add a page
//! walk to their cache misses; a 2 MiB-aligned anonymous mapping advised with
//! `MADV_HUGEPAGE` is backed by 2 MiB pages when the kernel has them (THP in `always` or
//! `madvise` mode), and a whole table then needs a handful of TLB entries. Where the
//! kernel says no, the mapping simply stays on 4 KiB pages.
//!
//! A small table asks for plain pages instead: its first write into a hugepage-advised
//! mapping would make the kernel zero a whole 2 MiB page (and maybe compact memory for
//! it), which dominated the cost of building a table of a few routes.
//!
//! Either way the mapping is reserved with `MAP_NORESERVE` and only the pages written are
//! ever backed (pages only read map the kernel's shared zero page), so a buffer can be
//! sized for growth, and a top array that is mostly "no route" (0), costs nothing.

use std::ptr::NonNull;

/// Hugepage size on x86-64 and aarch64 with 4 KiB base pages.
const HUGE: usize = 2 << 20;
/// Base page size (the mapping granularity on the targets above).
const PAGE: usize = 4 << 10;
/// The mapping's flags. Miri maps only `MAP_PRIVATE | MAP_ANONYMOUS`, so under Miri the
/// mapping is reserved in full (no `MAP_NORESERVE`); nothing else changes.
const MAP_FLAGS: libc::c_int = if cfg!(miri) {
    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS
} else {
    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE
};

/// A zero-initialised array of `u32` in its own anonymous mapping; 2 MiB-aligned and
/// advised `MADV_HUGEPAGE` when made with `huge`.
#[derive(Debug)]
pub(super) struct HugeBuf {
    ptr: NonNull<u32>,
    len: usize,
    /// Start and length of the whole mapping (more than the buffer when aligned).
    map: NonNull<libc::c_void>,
    map_len: usize,
    huge: bool,
}

// SAFETY: HugeBuf owns its mapping like a Box<[u32]> owns its allocation; moving it to,
// or sharing `&HugeBuf` with, another thread is as safe as for a Box<[u32]>.
unsafe impl Send for HugeBuf {}
// SAFETY: see above; `&HugeBuf` only allows reads (writes need `&mut HugeBuf`, or a
// `SharedBuf` whose unsafe `write` states its own exclusivity).
unsafe impl Sync for HugeBuf {}

impl HugeBuf {
    /// A buffer of `len` zeroed words, on hugepages if `huge` (and the kernel agrees).
    /// Panics if the mapping fails (out of address space or memory), as an allocation
    /// failure would.
    pub(super) fn zeroed(len: usize, huge: bool) -> HugeBuf {
        let (bytes, map_len) = if huge {
            // One extra hugepage to align the start.
            let bytes = (len.max(1) * 4).next_multiple_of(HUGE);
            (bytes, bytes + HUGE)
        } else {
            let bytes = (len.max(1) * 4).next_multiple_of(PAGE);
            (bytes, bytes)
        };
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                MAP_FLAGS,
                -1,
                0,
            )
        };
        assert!(
            raw != libc::MAP_FAILED,
            "mmap of {map_len} bytes for an LPM table failed: {}",
            std::io::Error::last_os_error()
        );
        // The buffer starts `offset` bytes into the mapping (a pointer derived from the
        // mapping's, so it keeps its provenance).
        let offset = if huge {
            (raw as usize).next_multiple_of(HUGE) - raw as usize
        } else {
            0
        };
        let start = raw.cast::<u8>().wrapping_add(offset);
        if huge && !cfg!(miri) {
            // SAFETY: `start..start + bytes` lies inside the mapping just made (we mapped
            // one extra hugepage for the alignment). madvise only changes how it is
            // backed; its failure (no THP support) leaves ordinary pages, which is fine.
            unsafe { libc::madvise(start.cast(), bytes, libc::MADV_HUGEPAGE) };
        }
        HugeBuf {
            ptr: NonNull::new(start.cast::<u32>()).expect("mmap never returns null on success"),
            len,
            map: NonNull::new(raw).expect("mmap never returns null on success"),
            map_len,
            huge,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer was made for hugepages.
    pub(super) fn huge(&self) -> bool {
        self.huge
    }

    pub(super) fn as_ptr(&self) -> *const u32 {
        self.ptr.as_ptr()
    }

    /// The buffer's start, for writes: only through `&mut self` (see [`SharedBuf`] for
    /// writes through a shared reference).
    pub(super) fn as_mut_ptr(&mut self) -> *mut u32 {
        self.ptr.as_ptr()
    }

    pub(super) fn as_slice(&self) -> &[u32] {
        // SAFETY: `len` initialised (zeroed) words at `ptr`, alive as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(super) fn as_mut_slice(&mut self) -> &mut [u32] {
        // SAFETY: as above, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HugeBuf {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `zeroed`, which nothing uses any more.
        unsafe { libc::munmap(self.map.as_ptr(), self.map_len) };
    }
}

/// A [`HugeBuf`] written through `&self`, in ranges that no one else reads or writes
/// meanwhile: the LPM arena, where clones of one table append records in disjoint ranges
/// that they reserved and have not yet published. Reads go through [`SharedBuf::buf`];
/// the only write is the unsafe [`SharedBuf::write`], whose caller proves exclusivity.
#[derive(Debug)]
pub(super) struct SharedBuf {
    buf: HugeBuf,
    /// `buf`'s start, taken once through `&mut` when the buffer was still unshared.
    write: NonNull<u32>,
}

// SAFETY: a SharedBuf owns its HugeBuf (Send, see above); the write pointer is only used
// by `write`, whose contract makes each write exclusive to its range.
unsafe impl Send for SharedBuf {}
// SAFETY: `&SharedBuf` gives reads of the buffer and the unsafe `write`, whose caller
// guarantees no concurrent access to the range written.
unsafe impl Sync for SharedBuf {}

impl SharedBuf {
    pub(super) fn new(mut buf: HugeBuf) -> SharedBuf {
        let write = NonNull::new(buf.as_mut_ptr()).expect("a HugeBuf is never null");
        SharedBuf { buf, write }
    }

    /// The buffer, for reads.
    pub(super) fn buf(&self) -> &HugeBuf {
        &self.buf
    }

    /// Copies `words` to word `at`.
    ///
    /// # Safety
    /// `at..at + words.len()` is inside the buffer, and no other thread reads or writes
    /// that range during the call (the arena: reserved for this caller alone by its
    /// atomic cursor, and not yet reachable from any published table).
    pub(super) unsafe fn write(&self, at: usize, words: &[u32]) {
        debug_assert!(at + words.len() <= self.buf.len());
        // SAFETY: in bounds and exclusive, by the caller's contract; `words` is a
        // separate allocation (a `&[u32]` cannot alias memory written through `write`).
        unsafe {
            std::ptr::copy_nonoverlapping(words.as_ptr(), self.write.as_ptr().add(at), words.len())
        };
    }
}
