//! IPv4 longest-prefix match: a Poptrie (Asai & Ohara, SIGCOMM 2015) with an 18-bit
//! direct-pointing top level, kept in two forms: copy-on-write /8 blocks (the control
//! plane) and a flat lookup form laid out from them (`flat.rs`).
//!
//! Why this structure: on uniformly random destinations the cost of a lookup is its cache
//! and TLB misses, so the table must be small and the chain of dependent loads short.
//! DIR-24-8 (`rte_lpm`) reads one entry of a 64 MiB table: one miss to L3 (or memory) and,
//! on 4 KiB pages, a TLB miss per lookup. Poptrie keeps the full view in 3.5 MiB:
//! a top array indexed by the top 18 bits (1 MiB) answers directly when no /19+ prefix
//! falls in that /18, and otherwise points at a 64-ary node whose children and leaves are
//! found by a popcount over a bitmap, with runs of equal leaves stored once. /19-/24
//! resolve in one node, /25-/30 in two. DXR is as small but ends in a binary search
//! (several dependent loads); a Tree Bitmap needs more loads per level.
//!
//! The lookup form (one top array and one arena of records packed into cache lines on
//! hugepage-capable mappings, a batched lookup that prefetches) is what the
//! measurements shaped; they, and the variants that lost, are in
//! docs/measurements.md ("IPv4 LPM").
//!
//! Updates: each /8 block keeps its prefixes and its own Poptrie arrays; a change
//! rebuilds only the /18 chunks whose answer changed inside the block, then lays out just
//! those chunks again in the lookup form: their records go into free tails of the shared
//! arena's lines, or are appended to it, and their top entries are written into this
//! table's top array (copied first, 1 MiB, if a clone still shares it). Published
//! snapshots never see a write to words they read. When the arena is full
//! (its slack is as large as its contents, and at least 64 KiB after a bulk build, twice
//! the old arena up to 4 MiB after the arena filled) the whole table is laid out afresh,
//! which drops the records of replaced chunks. Cloning an `Lpm4` costs 256
//! reference counts for the blocks and two for the lookup form: the way to derive the
//! next snapshot from the published one. Prefixes shorter than /8 are kept apart (at
//! most 255 of them) and resolved per block by `inherit`, so a default route change
//! never lays out a block again.
//!
//! Values are stored as `value + 1` (0: no route), so the largest value is [`MAX_VALUE`];
//! leaves are a byte each while every value is below 255, u16 below 65535, else u32.
//! Bulk loads should use [`Lpm4::from_prefixes`] (the full view builds in about 0.2 s);
//! repeated [`Lpm4::insert`] is correct but rebuilds a chunk per prefix.
//!
//! This module must never allocate or lock in a lookup.

mod batch;
mod block;
mod flat;
mod huge;
mod walk;

use std::sync::Arc;

use block::{mask, Block, Pfx, TOP_BITS};
use flat::Flat;

/// Sentinel written by [`Lpm4::lookup_batch`] for a destination with no route.
pub const NO_ROUTE: u32 = u32::MAX;

/// Largest value an [`Lpm4`] can store (values are route ids; a few hundred in practice):
/// the lookup form's top entries keep two flag bits.
pub const MAX_VALUE: u32 = (1 << 30) - 2;

/// Number of /8 blocks.
const BLOCKS: usize = 256;
/// Prefixes shorter than this live in `short`, not in a block.
const BLOCK_LEN: u8 = 8;

/// An IPv4 longest-prefix-match table mapping prefixes to `u32` values (route ids).
#[derive(Clone, Debug)]
pub struct Lpm4 {
    blocks: Box<[Arc<Block>; BLOCKS]>,
    /// Per block: encoded value of the longest prefix shorter than /8 covering it.
    inherit: Box<[u32; BLOCKS]>,
    /// Prefixes shorter than /8, sorted by (addr, len).
    short: Vec<Pfx>,
    len: usize,
    flat: Flat,
}

impl Default for Lpm4 {
    fn default() -> Lpm4 {
        Lpm4::new()
    }
}

fn encode(value: u32) -> u32 {
    assert!(
        value <= MAX_VALUE,
        "LPM value {value} is over the maximum {MAX_VALUE}"
    );
    value + 1
}

impl Lpm4 {
    /// An empty table.
    pub fn new() -> Lpm4 {
        let blocks = Lpm4::empty_blocks();
        Lpm4 {
            flat: Flat::build(&blocks[..], &[0; BLOCKS]),
            blocks,
            inherit: Box::new([0; BLOCKS]),
            short: Vec::new(),
            len: 0,
        }
    }

    /// Builds a table from `(addr, len, value)` in one pass, much faster than repeated
    /// [`Lpm4::insert`]. Host bits are ignored; of duplicate prefixes the last one wins.
    /// Panics on a length over 32 or a value over [`MAX_VALUE`].
    pub fn from_prefixes<I: IntoIterator<Item = (u32, u8, u32)>>(prefixes: I) -> Lpm4 {
        let mut all: Vec<Pfx> = prefixes
            .into_iter()
            .map(|(addr, len, value)| {
                assert!(len <= 32, "prefix length {len} is over 32");
                Pfx {
                    addr: addr & mask(len),
                    len,
                    enc: encode(value),
                }
            })
            .collect();
        // Stable sort keeps insertion order among duplicates; keep the last of each run.
        all.sort_by_key(Pfx::key);
        let mut dedup: Vec<Pfx> = Vec::with_capacity(all.len());
        for p in all {
            match dedup.last_mut() {
                Some(last) if last.key() == p.key() => *last = p,
                _ => dedup.push(p),
            }
        }
        let len = dedup.len();
        let (short, long): (Vec<Pfx>, Vec<Pfx>) =
            dedup.into_iter().partition(|p| p.len < BLOCK_LEN);
        let mut blocks = Lpm4::empty_blocks();
        let mut k = 0;
        while k < long.len() {
            let b = (long[k].addr >> 24) as usize;
            let n = long[k..].partition_point(|p| (p.addr >> 24) as usize == b);
            blocks[b] = Arc::new(Block::build(long[k..k + n].to_vec()));
            k += n;
        }
        let mut inherit = Box::new([0; BLOCKS]);
        for (b, i) in inherit.iter_mut().enumerate() {
            *i = Lpm4::inherited(&short, b);
        }
        Lpm4 {
            flat: Flat::build(&blocks[..], &inherit),
            blocks,
            inherit,
            short,
            len,
        }
    }

    /// 256 references to one empty block.
    fn empty_blocks() -> Box<[Arc<Block>; BLOCKS]> {
        let empty = Arc::new(Block::empty());
        Box::new(std::array::from_fn(|_| empty.clone()))
    }

    /// Encoded value of the longest of `short` covering block `b` (0: none).
    fn inherited(short: &[Pfx], b: usize) -> u32 {
        let base = (b as u32) << 24;
        short
            .iter()
            .filter(|p| base & mask(p.len) == p.addr)
            .max_by_key(|p| p.len)
            .map_or(0, |p| p.enc)
    }

    /// Recomputes `inherit` for blocks `first..first + count`.
    fn refresh_inherit(&mut self, first: usize, count: usize) {
        for b in first..first + count {
            self.inherit[b] = Lpm4::inherited(&self.short, b);
            self.flat.set_inherit(b, self.inherit[b]);
        }
    }

    /// Lays out again, in the lookup form, the /18 chunks a change of `addr/len` (length
    /// 8..=32) with encoded value `enc` may have touched.
    fn relayout(&mut self, addr: u32, len: u8, enc: u32) {
        let first = (addr >> 14) as usize;
        let count = 1 << (TOP_BITS - len.min(TOP_BITS));
        self.flat
            .update(&self.blocks[..], first..first + count, enc);
    }

    fn short_range(addr: u32, len: u8) -> (usize, usize) {
        ((addr >> 24) as usize, 1 << (BLOCK_LEN - len))
    }

    /// Inserts or replaces `addr/len` -> `value`. Host bits of `addr` are ignored.
    /// `value` must not be [`NO_ROUTE`] and at most [`MAX_VALUE`].
    pub fn insert(&mut self, addr: u32, len: u8, value: u32) {
        assert!(len <= 32, "prefix length {len} is over 32");
        let p = Pfx {
            addr: addr & mask(len),
            len,
            enc: encode(value),
        };
        let fresh = if len < BLOCK_LEN {
            let fresh = match self.short.binary_search_by_key(&p.key(), Pfx::key) {
                Ok(i) => {
                    self.short[i] = p;
                    false
                }
                Err(i) => {
                    self.short.insert(i, p);
                    true
                }
            };
            let (first, count) = Lpm4::short_range(p.addr, len);
            self.refresh_inherit(first, count);
            fresh
        } else {
            let fresh = Arc::make_mut(&mut self.blocks[(p.addr >> 24) as usize])
                .insert(p)
                .is_none();
            self.relayout(p.addr, len, p.enc);
            fresh
        };
        self.len += usize::from(fresh);
    }

    /// Removes `addr/len`; returns its value if it was present.
    pub fn remove(&mut self, addr: u32, len: u8) -> Option<u32> {
        assert!(len <= 32, "prefix length {len} is over 32");
        let addr = addr & mask(len);
        let enc = if len < BLOCK_LEN {
            let i = self
                .short
                .binary_search_by_key(&(addr, len), Pfx::key)
                .ok()?;
            let enc = self.short.remove(i).enc;
            let (first, count) = Lpm4::short_range(addr, len);
            self.refresh_inherit(first, count);
            enc
        } else {
            let b = (addr >> 24) as usize;
            self.blocks[b].get(addr, len)?;
            let enc = Arc::make_mut(&mut self.blocks[b]).remove(addr, len)?;
            self.relayout(addr, len, 0);
            enc
        };
        self.len -= 1;
        Some(enc - 1)
    }

    /// The value stored for exactly `addr/len` (host bits ignored).
    pub fn get(&self, addr: u32, len: u8) -> Option<u32> {
        assert!(len <= 32, "prefix length {len} is over 32");
        let addr = addr & mask(len);
        let enc = if len < BLOCK_LEN {
            let i = self
                .short
                .binary_search_by_key(&(addr, len), Pfx::key)
                .ok()?;
            self.short[i].enc
        } else {
            self.blocks[(addr >> 24) as usize].get(addr, len)?
        };
        Some(enc - 1)
    }

    /// The value of the longest prefix covering `addr`.
    #[inline]
    pub fn lookup(&self, addr: u32) -> Option<u32> {
        batch::lookup(self, addr).checked_sub(1)
    }

    /// Looks up every address in `addrs`; `out[i]` gets the value or [`NO_ROUTE`].
    /// `out` must be at least as long as `addrs`. Several lookups are kept in flight.
    #[inline]
    pub fn lookup_batch(&self, addrs: &[u32], out: &mut [u32]) {
        batch::lookup_batch(self, addrs, out)
    }

    /// [`Lpm4::lookup_batch`] without its AVX-512 form, whatever the CPU: for tests and
    /// examples that compare the two forms on a CPU that takes the AVX-512 one.
    #[doc(hidden)]
    pub fn lookup_batch_scalar(&self, addrs: &[u32], out: &mut [u32]) {
        batch::lookup_batch_scalar(self, addrs, out)
    }

    /// Number of prefixes stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no prefix is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the structure lookups read: the top array and the used part of the
    /// record arena (see `flat.rs`: it includes records of replaced chunks until the next
    /// fresh layout).
    pub fn memory_bytes(&self) -> usize {
        self.flat.bytes()
    }

    /// Bytes of the control-plane form (the prefixes and the per-block Poptrie arrays the
    /// lookup form is laid out from), counting blocks shared by several /8s once. Lookups
    /// never read it.
    pub fn control_bytes(&self) -> usize {
        self.distinct_blocks()
            .map(|b| b.control_bytes() + b.lookup_bytes())
            .sum::<usize>()
            + std::mem::size_of_val(&*self.blocks)
            + std::mem::size_of_val(&*self.inherit)
            + self.short.capacity() * std::mem::size_of::<Pfx>()
    }

    /// Where lookups read: `(name, address, bytes)` of the top array and of the used part
    /// of the record arena; for reports of the pages backing them (`bench-lookup`).
    pub fn memory_regions(&self) -> [(&'static str, usize, usize); 2] {
        self.flat.regions()
    }

    /// Bytes per leaf in the lookup form: 1 while every value is below 255, 2 below
    /// 65535, else 4.
    pub fn leaf_bytes(&self) -> usize {
        self.flat.leaf_width()
    }

    /// Node and leaf counts (distinct blocks, nodes, leaves), for tuning and reports.
    pub fn shape(&self) -> (usize, usize, usize) {
        self.distinct_blocks().fold((0, 0, 0), |(a, b, c), x| {
            (a + 1, b + x.nodes.len(), c + x.leaves.len())
        })
    }

    fn distinct_blocks(&self) -> impl Iterator<Item = &Block> {
        self.blocks
            .iter()
            .enumerate()
            .filter(|(i, b)| !self.blocks[..*i].iter().any(|o| Arc::ptr_eq(o, b)))
            .map(|(_, b)| &**b)
    }

    /// All stored prefixes as `(addr, len, value)`, sorted by address then length.
    pub fn to_vec(&self) -> Vec<(u32, u8, u32)> {
        let mut all: Vec<(u32, u8, u32)> = self
            .short
            .iter()
            .chain(self.blocks.iter().flat_map(|b| b.prefixes()))
            .map(|p| (p.addr, p.len, p.enc - 1))
            .collect();
        all.sort_unstable();
        all
    }
}
