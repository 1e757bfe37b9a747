//! The lookup layout of an [`super::Lpm4`]: one top array indexed by the top 18 bits of
//! the address, and one arena of variable-size node records, both in hugepage-capable
//! mappings ([`super::huge`]).
//!
//! A top entry is either an encoded value or `NODE | [KIDS] | offset` of a record in the
//! arena. A record is a Poptrie node followed by everything the lookup reads next:
//!
//! ```text
//! word 0-1   leafvec  (u64) bit j set: leaf slot j starts a new run of equal leaves
//! with KIDS: vector   (u64) bit j set: slot j has a child record
//!            one u32 per child, its offset from this record (| KIDS if it has children)
//! then       the leaves: a byte each when every value fits one, else u16, else u32
//! ```
//!
//! so a lookup is: top entry, record, where the leaf sits in the record's cache line
//! (records that fit a line are packed into lines, best fit, without straddling two;
//! larger ones start a line) or the next one. Leaf value 0 means "no prefix of this /8
//! block"; the lookup then takes the block's inherited value from prefixes shorter than /8.
//!
//! Updates never modify memory a published snapshot can read. The arena is append-only
//! and shared by a table and the clones derived from it: a change writes the new records
//! of the /18 chunks it touched into free tails of lines already handed out, else
//! appends them (space reserved by an atomic cursor or taken from the tails under a
//! lock, so clones changed independently never collide) and writes their top entries
//! into the table's own top array, which is copied first if a clone still shares it.
//! When the arena is full, the table is laid out afresh in a new arena, which drops the
//! garbage.

use std::hint::select_unpredictable;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::block::{Block, Node, CHUNKS, NODE};
use super::huge::{HugeBuf, SharedBuf};
use crate::prefetch::prefetch;

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Entries of the top array: one per /18.
pub(super) const TOP_LEN: usize = 1 << 18;
/// Words of the leaf-run bitmap that starts every record.
const LEAFVEC: usize = 2;
/// Words of the child bitmap that follows it in a record with children.
const VEC: usize = 2;
/// In a top entry (beside [`NODE`]) and in a child offset: the record has children, so
/// its child bitmap and child offsets follow the leaf-run bitmap. Without it (nearly
/// every record: a /18 with /19-/24s only) the leaves follow at once.
const KIDS: u32 = 1 << 30;
/// Words per cache line. Arena allocations are whole lines, so scratch offsets that are
/// line-aligned stay line-aligned in the arena.
const LINE: usize = 16;
/// Free space a fresh arena gets beyond its contents, at least (words: 64 KiB), and as
/// a multiple of the contents: changes append until it runs out. Proportional to the
/// table so that a small table is small; the slack is never written until used, so it
/// costs address space, not memory.
const MIN_SLACK: usize = if cfg!(test) { 1 << 10 } else { 1 << 14 };
/// A table laid out afresh because its arena filled gets at least twice the old arena's
/// size as slack, up to this (words: 4 MiB): a table grown from empty by single inserts
/// (mostly garbage: each change appends its chunk's whole record) then lays out a few
/// times on its way up instead of every 64 KiB of changes, which cost 15% more time
/// building the full view by inserts.
const GROWN_SLACK: usize = if cfg!(test) { 1 << 12 } else { 1 << 20 };
/// Tables whose written part (top array pages of non-empty /8 blocks and records) reaches
/// this many bytes go on hugepages; smaller ones on plain pages (see `huge.rs`).
const HUGE_MIN_BYTES: usize = 2 << 20;

/// Top arrays of dropped tables, kept for the next change to copy into: a fresh mapping
/// costs a hugepage fault (zeroing 2 MiB, sometimes compaction) that took a one-route
/// change from 67 to 400 us median. Only changes and drops (control plane) take the lock.
/// Fresh layouts take a fresh zeroed mapping instead, which they write only where a /8
/// block has prefixes.
static SPARE_TOPS: Mutex<Vec<HugeBuf>> = Mutex::new(Vec::new());
/// Spare top arrays kept at most (1 MiB each).
const MAX_SPARE_TOPS: usize = 4;

/// A top array: `TOP_LEN` entries, recycled through `SPARE_TOPS` when dropped.
#[derive(Debug)]
struct Top(Option<HugeBuf>);

impl Top {
    /// A top array of zeroes ("no route": each lookup takes its block's inherited value).
    fn zeroed(huge: bool) -> Top {
        Top(Some(HugeBuf::zeroed(TOP_LEN, huge)))
    }

    /// A top array with unspecified contents (callers overwrite every entry).
    fn any(huge: bool) -> Top {
        let spare = SPARE_TOPS.lock().ok().and_then(|mut s| {
            let i = s.iter().position(|b| b.huge() == huge)?;
            Some(s.swap_remove(i))
        });
        Top(Some(
            spare.unwrap_or_else(|| HugeBuf::zeroed(TOP_LEN, huge)),
        ))
    }

    fn buf(&self) -> &HugeBuf {
        self.0.as_ref().expect("a live top array has its buffer")
    }

    fn buf_mut(&mut self) -> &mut HugeBuf {
        self.0.as_mut().expect("a live top array has its buffer")
    }
}

impl Drop for Top {
    fn drop(&mut self) {
        if let (Some(b), Ok(mut spare)) = (self.0.take(), SPARE_TOPS.lock()) {
            if spare.len() < MAX_SPARE_TOPS {
                spare.push(b);
            }
        }
    }
}

/// Append-only store of records, shared by the snapshots derived from one another.
#[derive(Debug)]
pub(super) struct Arena {
    buf: SharedBuf,
    /// Words handed out; a multiple of `LINE`.
    used: AtomicUsize,
    /// Lines handed out whose last words no record holds: `tails[k]` lists the lines
    /// (indices) whose last `k` words are free. A change places its small records there
    /// first, so that records appended a chunk at a time share lines as a fresh layout's
    /// do (with a line each, a table grown by inserts took 1.5 times the lines). A tail
    /// is handed to one change only; only changes take the lock.
    tails: Mutex<Tails>,
}

/// See [`Arena::tails`].
type Tails = [Vec<usize>; LINE];

/// Fewest words a record takes (its leafvec and one word of leaves): tails shorter than
/// this are not kept.
const MIN_RECORD: usize = LEAFVEC + 1;

impl Arena {
    fn with_capacity(words: usize, huge: bool) -> Arena {
        Arena {
            buf: SharedBuf::new(HugeBuf::zeroed(
                words.next_multiple_of(LINE).max(LINE),
                huge,
            )),
            used: AtomicUsize::new(0),
            tails: Mutex::new(Default::default()),
        }
    }

    /// Reserves `n` words (rounded up to whole lines) for the caller alone; `None` when
    /// the arena is full.
    fn alloc(&self, n: usize) -> Option<usize> {
        let n = n.next_multiple_of(LINE);
        let mut cur = self.used.load(Ordering::Relaxed);
        loop {
            if cur + n > self.buf.buf().len() {
                return None;
            }
            match self.used.compare_exchange_weak(
                cur,
                cur + n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(cur),
                Err(now) => cur = now,
            }
        }
    }

    /// Stores `words` at `at`, a range the caller reserved with `alloc` (or took from
    /// `tails`) and has not yet made reachable from any top array.
    fn write(&self, at: usize, words: &[u32]) {
        assert!(at + words.len() <= self.used.load(Ordering::Relaxed));
        // SAFETY: the range is inside the buffer (`used` <= len, checked above), `alloc`
        // (or `tails`, under its lock) handed it to this caller alone, and no top array
        // points into it yet, so no one reads it while it is written (lookups may read
        // other records of its line: other words). Lookups reach it only through a top
        // array that a `&mut Lpm4` updated after this write; sharing that table with
        // other threads (net::rcu publishes with a release store) orders this write
        // before their reads.
        unsafe { self.buf.write(at, words) };
    }

    fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The free tails, locked. A change that panicked while holding them at worst took
    /// tails it never wrote: lost space, never a tail handed out twice.
    fn tails(&self) -> MutexGuard<'_, Tails> {
        self.tails.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Words of the record of `node` alone (header, child offsets, leaves).
fn record_words(node: &Node, width: usize) -> usize {
    let nl = node.leafvec.count_ones() as usize;
    let nc = node.vector.count_ones() as usize;
    let kids = if nc == 0 { 0 } else { VEC + nc };
    LEAFVEC + kids + leaf_words(nl, width)
}

/// Words that `n` leaves of `width` bytes take.
fn leaf_words(n: usize, width: usize) -> usize {
    (n * width).div_ceil(4)
}

/// Appends the record of block node `n` and its descendants to `out` (whose start will
/// be line-aligned in the arena) and returns where the record starts, with [`KIDS`] set
/// when it has children. A record moves to the next cache line when that keeps it, or
/// its header, from straddling two lines.
fn emit(blk: &Block, n: usize, width: usize, out: &mut Vec<u32>) -> u32 {
    let node = blk.nodes[n];
    let size = record_words(&node, width);
    let in_line = out.len() % LINE;
    if in_line != 0 && (size > LINE || in_line + size > LINE) {
        out.resize(out.len().next_multiple_of(LINE), 0);
    }
    let at = out.len();
    let nc = node.vector.count_ones() as usize;
    let nl = node.leafvec.count_ones() as usize;
    out.extend([node.leafvec as u32, (node.leafvec >> 32) as u32]);
    if nc > 0 {
        out.extend([node.vector as u32, (node.vector >> 32) as u32]);
        out.resize(at + LEAFVEC + VEC + nc, 0);
    }
    pack_leaves(&blk.leaves[node.base0 as usize..][..nl], width, out);
    for k in 0..nc {
        let child = emit(blk, node.base1 as usize + k, width, out);
        out[at + LEAFVEC + VEC + k] = child - at as u32;
    }
    at as u32 | if nc > 0 { KIDS } else { 0 }
}

/// Appends `leaves`, `width` bytes each (1, 2 or 4), to `out`: the bytes in memory are
/// each leaf's little-endian bytes in order, which `read_leaf` reads back.
fn pack_leaves(leaves: &[u32], width: usize, out: &mut Vec<u32>) {
    let mut bytes: Vec<u8> = leaves
        .iter()
        .flat_map(|v| v.to_le_bytes().into_iter().take(width))
        .collect();
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    out.extend(
        bytes
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes(b.try_into().expect("4 bytes"))),
    );
}

/// The leaf of slot `bit` (a one-bit mask) in the record at word `o` of arena `a`, whose
/// leaves, `W` bytes each, start at word `leaves`.
///
/// # Safety
/// `o` is a record of `a` and `leaves` where its leaves start. The leaf's index is below
/// the record's leaf count since bit 0 of every leafvec is set (the first run starts
/// there).
#[inline(always)]
unsafe fn leaf_of_slot<const W: usize>(a: *const u32, o: usize, leaves: usize, bit: u64) -> u32 {
    // SAFETY: the caller's promise.
    unsafe {
        let leafvec = a.add(o).cast::<u64>().read_unaligned();
        let i = (leafvec & (bit | (bit - 1))).count_ones() as usize - 1;
        read_leaf::<W>(a.add(leaves), i)
    }
}

/// Leaf `i` of the leaves at `leaves`, `W` bytes each (see `pack_leaves`).
///
/// # Safety
/// `leaves` starts the leaves of a record that has more than `i` of them, `W` bytes each.
#[inline(always)]
unsafe fn read_leaf<const W: usize>(leaves: *const u32, i: usize) -> u32 {
    let p = leaves.cast::<u8>();
    // SAFETY: leaf `i` is inside the record (the caller's promise).
    unsafe {
        match W {
            1 => u32::from(*p.add(i)),
            2 => u32::from(u16::from_le_bytes(
                p.add(i * 2).cast::<[u8; 2]>().read_unaligned(),
            )),
            _ => u32::from_le_bytes(p.add(i * 4).cast::<[u8; 4]>().read_unaligned()),
        }
    }
}

/// The largest value `blk` stores (encoded), in leaves or top entries: any of them can
/// become a leaf when a change makes its chunk a record.
fn largest(blk: &Block) -> u32 {
    let tops = blk.top.iter().filter(|&&t| t & NODE == 0);
    blk.leaves.iter().chain(tops).copied().max().unwrap_or(0)
}

/// Bytes per leaf for a table whose largest encoded value is `max`.
fn width_for(max: u32) -> usize {
    if max <= u32::from(u8::MAX) {
        1
    } else if max <= u32::from(u16::MAX) {
        2
    } else {
        4
    }
}

/// The lookup form of an [`super::Lpm4`]; see the module docs.
#[derive(Debug, Clone)]
pub(super) struct Flat {
    top: Arc<Top>,
    arena: Arc<Arena>,
    /// Per /8 block: the encoded value of the longest prefix shorter than /8 covering it.
    inherit: Box<[u32; 256]>,
    /// Bytes per leaf: 1, 2 or 4 (as few as the largest value stored needs).
    width: usize,
}

/// The records of some chunks laid out in scratch space: each chunk's subtree is emitted
/// on its own, then `pack` places them, largest first: a subtree of a line or less goes
/// into the fullest line it fits (best fit), a larger one starts a line.
struct Layout {
    /// Subtrees as emitted, each starting on a line.
    scratch: Vec<u32>,
    /// `(top index, start in scratch, words, KIDS or 0)` of each subtree.
    pending: Vec<(usize, usize, usize, u32)>,
    /// Value entries: `(top index, encoded value)`.
    values: Vec<(usize, u32)>,
}

/// The packed records of a [`Layout`]: `words` (a new run of lines) and each top entry's
/// record offset in it; `placed`, records put in free tails of the arena's lines
/// (`(top index, arena offset, start in scratch, words, KIDS or 0)`); `tails`, the free
/// tails `words` leaves.
struct Packed {
    words: Vec<u32>,
    entries: Vec<(usize, u32)>,
    placed: Vec<(usize, usize, usize, usize, u32)>,
    tails: Tails,
}

/// Takes room for `n` words from the fullest line of `tails` that has it (best fit) and
/// returns its word offset; what the line has left stays listed.
fn take_tail(tails: &mut Tails, n: usize) -> Option<usize> {
    let k = (n..LINE).find(|&k| !tails[k].is_empty())?;
    let line = tails[k].pop().expect("checked non-empty");
    if k - n >= MIN_RECORD {
        tails[k - n].push(line);
    }
    Some(line * LINE + LINE - k)
}

impl Layout {
    fn new() -> Layout {
        Layout {
            scratch: Vec::new(),
            pending: Vec::new(),
            values: Vec::new(),
        }
    }

    fn add_chunk(&mut self, blocks: &[Arc<Block>], i: usize, width: usize) {
        let blk = &blocks[i / CHUNKS];
        let e = blk.top[i % CHUNKS];
        if e & NODE == 0 {
            self.values.push((i, e));
        } else {
            self.add_record(blk, e, i, width);
        }
    }

    /// Emits the record of top entry `i` (`e` points at a node of `blk`).
    fn add_record(&mut self, blk: &Block, e: u32, i: usize, width: usize) {
        self.scratch
            .resize(self.scratch.len().next_multiple_of(LINE), 0);
        let start = self.scratch.len();
        let at = emit(blk, (e & !NODE) as usize, width, &mut self.scratch);
        debug_assert_eq!(at & !KIDS, start as u32);
        self.pending
            .push((i, start, self.scratch.len() - start, at & KIDS));
    }

    /// Places the emitted subtrees, largest first (see [`Layout`]): a subtree smaller
    /// than a line into the arena's free tails `arena` when it fits one, else into new
    /// lines.
    fn pack(&mut self, arena: &mut Tails) -> Packed {
        self.pending
            .sort_unstable_by_key(|p| std::cmp::Reverse(p.2));
        let mut p = Packed {
            words: Vec::new(),
            entries: Vec::with_capacity(self.pending.len()),
            placed: Vec::new(),
            tails: Default::default(),
        };
        for &(i, start, n, kids) in &self.pending {
            if let Some(at) = take_tail(arena, n) {
                p.placed.push((i, at, start, n, kids));
                continue;
            }
            let at = take_tail(&mut p.tails, n).unwrap_or_else(|| {
                let at = p.words.len();
                p.words.resize(at + n.next_multiple_of(LINE), 0);
                let tail = p.words.len() - at - n;
                if tail >= MIN_RECORD {
                    p.tails[tail].push(p.words.len() / LINE - 1);
                }
                at
            });
            p.words[at..at + n].copy_from_slice(&self.scratch[start..start + n]);
            p.entries.push((i, at as u32 | kids));
        }
        p
    }

    /// Copies the records into `arena` (into free tails of its lines first) and the
    /// entries into `top`; `false` (and no entry written) if the arena is full.
    fn commit(&mut self, arena: &Arena, top: &mut [u32]) -> bool {
        let packed = self.pack(&mut arena.tails());
        self.commit_packed(&packed, arena, top)
    }

    /// [`Layout::commit`] of records already packed.
    fn commit_packed(&self, packed: &Packed, arena: &Arena, top: &mut [u32]) -> bool {
        let base = if packed.words.is_empty() {
            0
        } else {
            match arena.alloc(packed.words.len()) {
                Some(b) => b,
                None => return false,
            }
        };
        if base + packed.words.len() >= KIDS as usize {
            return false;
        }
        arena.write(base, &packed.words);
        for &(i, at, start, n, kids) in &packed.placed {
            arena.write(at, &self.scratch[start..start + n]);
            top[i] = NODE | kids | at as u32;
        }
        for &(i, v) in &self.values {
            top[i] = v;
        }
        for &(i, r) in &packed.entries {
            top[i] = NODE | (base as u32 + r);
        }
        let mut tails = arena.tails();
        for (k, lines) in packed.tails.iter().enumerate() {
            tails[k].extend(lines.iter().map(|l| l + base / LINE));
        }
        true
    }
}

impl Flat {
    /// Lays out all `blocks` in a fresh arena.
    pub(super) fn build(blocks: &[Arc<Block>], inherit: &[u32; 256]) -> Flat {
        Flat::build_with_slack(blocks, inherit, MIN_SLACK)
    }

    /// Lays out all `blocks` again, in an arena with room for more changes than the
    /// current one had (see `GROWN_SLACK`).
    fn rebuild(&mut self, blocks: &[Arc<Block>]) {
        let slack = (2 * self.arena.buf.buf().len()).clamp(MIN_SLACK, GROWN_SLACK);
        *self = Flat::build_with_slack(blocks, &self.inherit, slack);
    }

    /// Lays out all `blocks` in a fresh arena with free space for at least `min_slack`
    /// words of changes (and at least as much as the contents).
    fn build_with_slack(blocks: &[Arc<Block>], inherit: &[u32; 256], min_slack: usize) -> Flat {
        // Only blocks with prefixes are visited: the top array starts zeroed ("no route")
        // and untouched pages of it cost nothing, so a table of a few routes builds in
        // microseconds. Value entries go straight into the top array; only node records
        // pass through the layout (a scratch entry for each of the 2^18 chunks made even
        // a two-prefix table cost milliseconds to build).
        let used: Vec<usize> = (0..blocks.len())
            .filter(|&b| !blocks[b].prefixes().is_empty())
            .collect();
        let width = width_for(used.iter().map(|&b| largest(&blocks[b])).max().unwrap_or(0));
        let mut layout = Layout::new();
        for &b in &used {
            let blk = &blocks[b];
            for (c, &e) in blk.top.iter().enumerate() {
                if e & NODE != 0 {
                    layout.add_record(blk, e, b * CHUNKS + c, width);
                }
            }
        }
        // A fresh arena has no tails yet.
        let packed = layout.pack(&mut Tails::default());
        let live = packed.words.len();
        let huge = (used.len() * CHUNKS + live) * 4 >= HUGE_MIN_BYTES;
        let mut top = Top::zeroed(huge);
        let t = top.buf_mut().as_mut_slice();
        for &b in &used {
            for (slot, &e) in t[b * CHUNKS..][..CHUNKS].iter_mut().zip(&blocks[b].top) {
                if e != 0 && e & NODE == 0 {
                    *slot = e;
                }
            }
        }
        let arena = Arena::with_capacity(live + live.max(min_slack), huge);
        assert!(
            layout.commit_packed(&packed, &arena, t),
            "a fresh LPM arena holds its contents"
        );
        Flat {
            top: Arc::new(top),
            arena: Arc::new(arena),
            inherit: Box::new(*inherit),
            width,
        }
    }

    /// Lays out again the /18 chunks `chunks` (top indices) of `blocks`, after they
    /// changed; the whole table when the arena is full or a value no longer fits.
    pub(super) fn update(
        &mut self,
        blocks: &[Arc<Block>],
        chunks: std::ops::Range<usize>,
        widest: u32,
    ) {
        if width_for(widest) > self.width {
            self.rebuild(blocks);
            return;
        }
        let mut layout = Layout::new();
        for i in chunks {
            layout.add_chunk(blocks, i, self.width);
        }
        if Arc::get_mut(&mut self.top).is_none() {
            let mut top = Top::any(self.top.buf().huge());
            top.buf_mut()
                .as_mut_slice()
                .copy_from_slice(self.top.buf().as_slice());
            self.top = Arc::new(top);
        }
        let top = Arc::get_mut(&mut self.top).expect("top array unshared just above");
        if !layout.commit(&self.arena, top.buf_mut().as_mut_slice()) {
            self.rebuild(blocks);
        }
    }

    pub(super) fn set_inherit(&mut self, block: usize, enc: u32) {
        self.inherit[block] = enc;
    }

    /// Bytes lookups can read: the top array, the arena's used part (records of this
    /// table, and garbage and other clones' records until the next fresh layout), and
    /// the inherited values.
    pub(super) fn bytes(&self) -> usize {
        (TOP_LEN + self.arena.used() + self.inherit.len()) * 4
    }

    /// Where lookups read: `(name, address, bytes)` of the top array and of the arena's
    /// used part, for reports of the pages backing them (`bench-lookup`).
    pub(super) fn regions(&self) -> [(&'static str, usize, usize); 2] {
        let top = self.top.buf();
        [
            ("top", top.as_ptr() as usize, top.len() * 4),
            (
                "arena",
                self.arena.buf.buf().as_ptr() as usize,
                self.arena.used() * 4,
            ),
        ]
    }

    /// Bytes per leaf.
    pub(super) fn leaf_width(&self) -> usize {
        self.width
    }

    #[inline(always)]
    fn top_entry(&self, addr: u32) -> u32 {
        debug_assert_eq!(self.top.buf().len(), TOP_LEN);
        // SAFETY: the top array has 2^18 entries and `addr >> 14` < 2^18.
        unsafe { *self.top.buf().as_ptr().add((addr >> 14) as usize) }
    }

    /// Encoded value for `addr` (value + 1, 0: no route).
    #[inline(always)]
    pub(super) fn lookup(&self, addr: u32) -> u32 {
        let t = self.top_entry(addr);
        let v = if t & NODE == 0 {
            t
        } else {
            self.walk((t & !NODE) as usize, addr)
        };
        self.or_inherit(v, addr)
    }

    #[inline(always)]
    fn or_inherit(&self, v: u32, addr: u32) -> u32 {
        if v == 0 {
            self.inherit[(addr >> 24) as usize]
        } else {
            v
        }
    }

    /// Finishes a lookup at record `r` (its word offset, with [`KIDS`] if it has
    /// children).
    #[inline(always)]
    fn walk(&self, mut r: usize, addr: u32) -> u32 {
        let a = self.arena.buf.buf().as_ptr();
        // Debug builds check every read against the arena's written part.
        let used = self.arena.used();
        let in_arena = |word: usize, words: usize| word + words <= used;
        // The 14 bits below the /18, left-aligned in 18 so that each level takes 6.
        let x = (addr & 0x3FFF) << 4;
        let mut shift = 12u32;
        loop {
            let o = r & !(KIDS as usize);
            let bit = 1u64 << ((x >> shift) & 63);
            let mut leaves = o + LEAFVEC;
            // SAFETY: `o` is a record reachable from this table's top array, so it was
            // written inside the arena before that entry was (and is never written
            // again); its child bitmap is there when KIDS says so, and child offsets and
            // leaf positions stay inside the record and its descendants by construction
            // (`emit`).
            unsafe {
                if r & KIDS as usize != 0 {
                    debug_assert!(in_arena(o, LEAFVEC + VEC), "record at {o} past {used}");
                    let vector = a.add(o + LEAFVEC).cast::<u64>().read_unaligned();
                    let kids = o + LEAFVEC + VEC;
                    if vector & bit != 0 {
                        let child = kids + (vector & (bit - 1)).count_ones() as usize;
                        debug_assert!(in_arena(child, 1), "child offset at {child} past {used}");
                        r = o + *a.add(child) as usize;
                        shift = shift.wrapping_sub(6);
                        continue;
                    }
                    leaves = kids + vector.count_ones() as usize;
                }
                debug_assert!(in_arena(o, LEAFVEC), "record at {o} past {used}");
                debug_assert!(
                    {
                        let leafvec = a.add(o).cast::<u64>().read_unaligned();
                        let n = (leafvec & (bit | (bit - 1))).count_ones() as usize;
                        in_arena(leaves, leaf_words(n, self.width))
                    },
                    "a leaf of the record at {o} past {used}"
                );
                return match self.width {
                    1 => leaf_of_slot::<1>(a, o, leaves, bit),
                    2 => leaf_of_slot::<2>(a, o, leaves, bit),
                    _ => leaf_of_slot::<4>(a, o, leaves, bit),
                };
            }
        }
    }

    /// Batched lookup; see `batch.rs`.
    #[inline(always)]
    pub(super) fn lookup_batch(&self, addrs: &[u32], out: &mut [u32]) {
        match self.width {
            1 => self.lookup_batch_of::<1>(addrs, out),
            2 => self.lookup_batch_of::<2>(addrs, out),
            _ => self.lookup_batch_of::<4>(addrs, out),
        }
    }

    /// [`Flat::lookup_batch`] sixteen keys a step in AVX-512 (`avx512.rs`).
    ///
    /// # Safety
    /// The CPU has AVX-512 F and VPOPCNTDQ.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    pub(super) unsafe fn lookup_batch_wide(&self, addrs: &[u32], out: &mut [u32]) {
        // SAFETY: the caller's promise (`Lpm4::lookup_batch` checked the lengths; the
        // batch stops at the shorter slice in any case).
        unsafe {
            match self.width {
                1 => self.lookup_batch_avx512::<1>(addrs, out),
                2 => self.lookup_batch_avx512::<2>(addrs, out),
                _ => self.lookup_batch_avx512::<4>(addrs, out),
            }
        }
    }

    /// A pass prefetches every key's top entry; the first pass then answers every key
    /// from its top entry, without a branch on the kind of entry, and lists the keys
    /// whose entry is a record (prefetched); the second pass finishes only those.
    #[inline(always)]
    fn lookup_batch_of<const W: usize>(&self, addrs: &[u32], out: &mut [u32]) {
        const B: usize = 64;
        let a = self.arena.buf.buf().as_ptr();
        for (ks, os) in addrs.chunks(B).zip(out.chunks_mut(B)) {
            let mut at = [0u8; B];
            let mut rec = [0u32; B];
            let mut n = 0;
            let top = self.top.buf().as_ptr();
            for &k in ks {
                prefetch(top.wrapping_add((k >> 14) as usize));
            }
            for (i, (&k, o)) in ks.iter().zip(os.iter_mut()).enumerate() {
                let e = self.top_entry(k);
                let node = e & NODE != 0;
                // Value entries prefetch the arena's first line: harmless, and no branch.
                // A record with children (rare) is not prefetched: KIDS puts the address
                // 4 GiB past its record, and a prefetch never faults.
                let r = select_unpredictable(node, e & !NODE, 0);
                prefetch(a.wrapping_add(r as usize));
                *o = self.or_inherit(e, k).wrapping_sub(1);
                // SAFETY: `n` counts the keys before this one that are records, so
                // `n <= i < B`.
                unsafe {
                    *at.get_unchecked_mut(n) = i as u8;
                    *rec.get_unchecked_mut(n) = r;
                }
                n += usize::from(node);
            }
            for (&i, &r) in at[..n].iter().zip(&rec[..n]) {
                let i = usize::from(i);
                // SAFETY: `i` is the position of a key of this chunk (first pass).
                let (k, o) = unsafe { (*ks.get_unchecked(i), os.get_unchecked_mut(i)) };
                *o = self
                    .or_inherit(self.leaf::<W>(r as usize, k), k)
                    .wrapping_sub(1);
            }
        }
    }

    /// Encoded value for `addr` from record `r` (offset, and [`KIDS`]): its leaf, or for
    /// a record with children (rare: a /25 or longer in the /18) a walk from it.
    #[inline(always)]
    fn leaf<const W: usize>(&self, r: usize, addr: u32) -> u32 {
        if r & KIDS as usize != 0 {
            return self.walk(r, addr);
        }
        let a = self.arena.buf.buf().as_ptr();
        let bit = 1u64 << ((addr >> 8) & 63);
        // SAFETY: `r` is a record without children reachable from this table's top array
        // (see `walk`): its leaf bitmap, then its leaves.
        unsafe { leaf_of_slot::<W>(a, r, r + LEAFVEC, bit) }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Lpm4, MAX_VALUE};
    use super::*;

    /// The lookup form against the blocks' own Poptrie arrays (the form it is laid out
    /// from), on every address of the /18s `keys` fall in plus `keys` themselves.
    fn check(lpm: &Lpm4, keys: &[u32]) {
        let mut out = vec![0; keys.len()];
        lpm.lookup_batch(keys, &mut out);
        // Both batches, whichever `lookup_batch` picks on this CPU.
        let mut scalar = vec![0; keys.len()];
        lpm.flat.lookup_batch(keys, &mut scalar);
        assert_eq!(out, scalar, "scalar batch");
        #[cfg(target_arch = "x86_64")]
        if crate::fib::avx512_batches() {
            let mut wide = vec![0; keys.len()];
            // SAFETY: the CPU has AVX-512 F and VPOPCNTDQ (checked just above).
            unsafe { lpm.flat.lookup_batch_wide(keys, &mut wide) };
            assert_eq!(wide, scalar, "AVX-512 batch");
        }
        for (&k, &o) in keys.iter().zip(&out) {
            let b = (k >> 24) as usize;
            let v = lpm.blocks[b].lookup(k);
            let want = if v == 0 { lpm.inherit[b] } else { v };
            assert_eq!(lpm.flat.lookup(k), want, "{k:#010x}");
            assert_eq!(o, want.wrapping_sub(1), "batch {k:#010x}");
        }
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 32) as u32
        }
    }

    fn random_prefix(r: &mut Rng) -> (u32, u8) {
        // Crowd a few /8s so that chunks get deep records and many updates hit them.
        let a = (r.next() & 0x03ff_ffff) | 0x0a00_0000;
        let len = [8, 12, 16, 18, 19, 22, 24, 24, 24, 25, 28, 30, 31, 32][r.next() as usize % 14];
        (a, len)
    }

    #[test]
    fn updates_on_clones_share_the_arena_until_it_fills_then_relayout() {
        let mut r = Rng(7);
        let mut snaps: Vec<(Lpm4, Vec<u32>, Vec<u32>)> = Vec::new();
        let mut lpm = Lpm4::new();
        let mut relayouts = 0;
        for step in 0..3000u32 {
            let mut next = lpm.clone();
            let (a, l) = random_prefix(&mut r);
            let changed = if step % 4 == 3 {
                next.remove(a, l).is_some()
            } else {
                next.insert(a, l, r.next() % 300);
                true
            };
            if !Arc::ptr_eq(&next.flat.arena, &lpm.flat.arena) {
                relayouts += 1;
            } else if changed {
                // A change copies the shared top array, never writes into it.
                assert!(!Arc::ptr_eq(&next.flat.top, &lpm.flat.top));
            }
            let keys: Vec<u32> = (0..64)
                .map(|_| (r.next() & 0x03ff_ffff) | 0x0a00_0000)
                .collect();
            check(&next, &keys);
            if step % 500 == 0 {
                let mut want = vec![0; keys.len()];
                next.lookup_batch(&keys, &mut want);
                snaps.push((next.clone(), keys, want));
            }
            lpm = next;
        }
        assert!(
            relayouts > 2,
            "the small test arena filled only {relayouts} times"
        );
        // Old snapshots still answer as they did, whatever was appended since.
        for (old, keys, want) in &snaps {
            let mut out = vec![0; keys.len()];
            old.lookup_batch(keys, &mut out);
            assert_eq!(&out, want);
            check(old, keys);
        }
        // Values up to 299 (encoded 300): the table widened from bytes to u16 on the way.
        assert_eq!(lpm.leaf_bytes(), 2);
    }

    #[test]
    fn leaves_widen_from_bytes_to_u16_to_u32_as_values_grow() {
        // 1000 (encoded 1001) sits in top entries only, until a /24 in its /16 makes that
        // chunk a record with 1001 among its leaves.
        let mut lpm = Lpm4::from_prefixes([(0x0a00_0000, 8, 1), (0x0a01_0200, 24, 2)]);
        assert_eq!(lpm.leaf_bytes(), 1);
        lpm.insert(0x0a01_0300, 24, 254);
        assert_eq!(lpm.leaf_bytes(), 1);
        assert_eq!(lpm.lookup(0x0a01_0301), Some(254));
        let mut wide = Lpm4::from_prefixes([(0x0a01_0200, 24, 2), (0x0c00_0000, 16, 1000)]);
        assert_eq!(wide.leaf_bytes(), 2);
        wide.insert(0x0c00_0100, 24, 3);
        assert_eq!(wide.lookup(0x0c00_0001), Some(1000));
        assert_eq!(wide.lookup(0x0c00_0101), Some(3));
        check(&wide, &[0x0a01_0201, 0x0c00_0001, 0x0c00_0101]);
        lpm.insert(0x0a01_0400, 24, 255);
        assert_eq!(lpm.leaf_bytes(), 2);
        assert_eq!(lpm.lookup(0x0a01_0401), Some(255));
        assert_eq!(lpm.lookup(0x0a01_0301), Some(254));
        check(&lpm, &[0x0a01_0201, 0x0a01_0301, 0x0a01_0401, 0x0a02_0000]);
        lpm.insert(0x0a01_0280, 25, 70_000);
        assert_eq!(lpm.leaf_bytes(), 4);
        lpm.insert(0x0b00_0000, 18, MAX_VALUE);
        let keys = [
            0x0a01_0281,
            0x0a01_0201,
            0x0a02_0000,
            0x0b00_0001,
            0x0b00_4000,
        ];
        check(&lpm, &keys);
        assert_eq!(lpm.lookup(0x0a01_0281), Some(70_000));
        assert_eq!(lpm.lookup(0x0b00_0001), Some(MAX_VALUE));
        assert_eq!(lpm.lookup(0x0a01_0201), Some(2));
        assert_eq!(lpm.lookup(0x0b00_4000), None);
    }

    /// Pages of `buf` the process has backed (mincore).
    fn resident_pages(buf: &HugeBuf) -> usize {
        let page = 4096;
        let pages = (buf.len() * 4).div_ceil(page);
        let mut vec = vec![0u8; pages];
        // SAFETY: `buf` starts on a page boundary (its own mapping) and covers `pages`
        // pages of it; mincore only reports on them.
        let rc = unsafe {
            libc::mincore(
                buf.as_ptr() as *mut libc::c_void,
                pages * page,
                vec.as_mut_ptr(),
            )
        };
        assert_eq!(rc, 0, "mincore: {}", std::io::Error::last_os_error());
        vec.iter().filter(|&&v| v & 1 != 0).count()
    }

    #[test]
    fn a_small_table_writes_only_the_top_pages_of_its_blocks() {
        let lpm = Lpm4::from_prefixes([
            (0x0a00_0000, 8, 1),
            (0x0a01_0200, 24, 2),
            (0x0a01_0280, 25, 3),
            (0xc0a8_0000, 16, 4),
            (0, 0, 5),
            (0x8000_0000, 4, 6),
        ]);
        let top = lpm.flat.top.buf();
        assert!(!top.huge() && !lpm.flat.arena.buf.buf().huge());
        // Blocks 10 and 192, one 4 KiB page of top entries each.
        assert_eq!(resident_pages(top), 2);
        assert!(lpm.flat.arena.buf.buf().len() <= lpm.flat.arena.used() + MIN_SLACK + LINE);
        assert_eq!(lpm.lookup(0x0a01_0281), Some(3));
        assert_eq!(lpm.lookup(0x0a01_0201), Some(2));
        assert_eq!(lpm.lookup(0x0aff_0000), Some(1));
        assert_eq!(lpm.lookup(0xc0a8_0101), Some(4));
        assert_eq!(lpm.lookup(0x8100_0000), Some(6));
        assert_eq!(lpm.lookup(0x0b00_0000), Some(5));
        // A table that writes over 2 MiB goes on hugepages.
        let mut r = Rng(3);
        let big = Lpm4::from_prefixes((0..150_000).map(|i| (r.next(), 24, i)));
        assert!(big.flat.top.buf().huge() && big.flat.arena.buf.buf().huge());
    }

    /// Every record of `lpm` as `(word offset, words)`, depth first from the top array.
    fn records(lpm: &Lpm4) -> Vec<(usize, usize)> {
        fn visit(a: *const u32, r: usize, width: usize, out: &mut Vec<(usize, usize)>) {
            let o = r & !(KIDS as usize);
            // SAFETY: reads a record of this table, inside the arena's used part.
            let (leafvec, vector) = unsafe {
                let p = a.add(o).cast::<u64>();
                let v = if r & KIDS as usize != 0 {
                    p.add(1).read_unaligned()
                } else {
                    0
                };
                (p.read_unaligned(), v)
            };
            let nc = vector.count_ones() as usize;
            let kids = if nc == 0 { 0 } else { VEC + nc };
            let words = LEAFVEC + kids + leaf_words(leafvec.count_ones() as usize, width);
            out.push((o, words));
            for k in 0..nc {
                // SAFETY: as above: child offsets follow the child bitmap.
                let off = unsafe { *a.add(o + LEAFVEC + VEC + k) } as usize;
                visit(a, o + off, width, out);
            }
        }
        let a = lpm.flat.arena.buf.buf().as_ptr();
        let mut out = Vec::new();
        for &e in lpm.flat.top.buf().as_slice() {
            if e & NODE != 0 {
                visit(a, (e & !NODE) as usize, lpm.flat.width, &mut out);
            }
        }
        out
    }

    #[test]
    fn records_are_packed_into_lines_without_straddling_them() {
        let mut r = Rng(11);
        let prefixes: Vec<(u32, u8, u32)> = (0..20_000)
            .map(|_| {
                let (a, l) = random_prefix(&mut r);
                (a, l, r.next() % 300)
            })
            .collect();
        let lpm = Lpm4::from_prefixes(prefixes);
        let recs = records(&lpm);
        for &(o, words) in &recs {
            if words <= LINE {
                assert_eq!(o / LINE, (o + words - 1) / LINE, "record at {o} straddles");
            } else {
                assert_eq!(
                    o % LINE,
                    0,
                    "a record of {words} words starts inside a line"
                );
            }
        }
        assert!(recs.len() > 100);
        assert!(recs.iter().any(|&(_, w)| w > LINE), "no large record tried");
        // And every record is where the lookups find it.
        let keys: Vec<u32> = (0..4096)
            .map(|_| (r.next() & 0x03ff_ffff) | 0x0a00_0000)
            .collect();
        check(&lpm, &keys);
        // A table of /19-/24s (one record per /18, as in a full view): best fit, largest
        // first, leaves few words of its lines unused.
        let flat = Lpm4::from_prefixes((0..40_000).map(|i| {
            let len = 19 + (r.next() % 6) as u8;
            (r.next() & super::super::block::mask(len), len, i % 300)
        }));
        let recs = records(&flat);
        let live: usize = recs.iter().map(|&(_, w)| w).sum();
        let used = flat.flat.arena.used();
        assert!(
            used <= live + live / 50 + LINE,
            "{used} words for {live} of records"
        );
    }

    /// Lines that hold at least one of `lpm`'s records.
    fn lines_used(lpm: &Lpm4) -> usize {
        let mut lines: Vec<usize> = records(lpm)
            .iter()
            .flat_map(|&(o, w)| o / LINE..=(o + w - 1) / LINE)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines.len()
    }

    #[test]
    fn records_inserted_one_at_a_time_share_lines_as_a_fresh_layout_packs_them() {
        let mut r = Rng(5);
        let prefixes: Vec<(u32, u8, u32)> = (0..30_000)
            .map(|i| {
                let len = 19 + (r.next() % 6) as u8;
                (r.next() & super::super::block::mask(len), len, i % 200)
            })
            .collect();
        let fresh = Lpm4::from_prefixes(prefixes.iter().copied());
        let mut grown = Lpm4::new();
        let mut published = grown.clone();
        for (n, &(a, l, v)) in prefixes.iter().enumerate() {
            grown.insert(a, l, v);
            // As the control plane derives: clones share the arena and its free tails.
            if n % 1000 == 0 {
                published = grown.clone();
            }
        }
        assert_eq!(grown.to_vec(), fresh.to_vec());
        let keys: Vec<u32> = prefixes
            .iter()
            .step_by(4)
            .map(|&(a, l, _)| a | (r.next() & !super::super::block::mask(l)))
            .collect();
        check(&grown, &keys);
        check(&published, &keys);
        // Appended one chunk at a time, each record took a line of its own: 1.5 times
        // the lines of the fresh layout here.
        let (grown_lines, fresh_lines) = (lines_used(&grown), lines_used(&fresh));
        assert!(
            grown_lines * 100 <= fresh_lines * 105,
            "{grown_lines} lines hold the grown table's records, {fresh_lines} the fresh one's"
        );
    }

    #[test]
    fn sibling_clones_changed_in_turn_never_write_over_each_others_records() {
        let mut r = Rng(9);
        let base = Lpm4::from_prefixes((0..2000).map(|i| {
            let (a, l) = random_prefix(&mut r);
            (a, l, i % 200)
        }));
        // In turn, until the small test arena fills and one is laid out afresh, both
        // siblings take the tails the bulk layout left and each other's.
        let mut pair = [base.clone(), base.clone()];
        let mut shared = 0;
        while shared < 2000 && Arc::ptr_eq(&pair[0].flat.arena, &pair[1].flat.arena) {
            let (a, l) = random_prefix(&mut r);
            pair[shared % 2].insert(a, l, r.next() % 200);
            shared += 1;
        }
        assert!(shared > 50, "only {shared} changes before a fresh layout");
        let before = base.flat.arena.used();
        let old: Vec<usize> = records(&base).iter().map(|&(o, _)| o).collect();
        for lpm in &pair {
            assert!(
                records(lpm)
                    .iter()
                    .any(|&(o, _)| o < before && !old.contains(&o)),
                "no record went into a tail of the bulk layout's lines"
            );
        }
        let keys: Vec<u32> = (0..8192)
            .map(|_| (r.next() & 0x03ff_ffff) | 0x0a00_0000)
            .collect();
        for lpm in pair.iter().chain([&base]) {
            check(lpm, &keys);
        }
    }
}
