//! One /8 block of the [`super::Lpm4`]: its prefixes (the control-plane copy) and the
//! Poptrie arrays built from them, from which the lookup form (`flat.rs`) lays out the
//! chunks that changed. Lookups never read a block.
//!
//! A block is the unit of copy-on-write: cloning an `Lpm4` shares all 256 blocks, and an
//! update copies only the block it touches. Inside a block, an update rebuilds only the /18
//! chunks whose answer changed and appends their new subtrees; the space of the old
//! subtrees is reclaimed by rebuilding the block's arrays once garbage outweighs live data.
//!
//! Encoding of values in the arrays: `value + 1`, with 0 meaning "no prefix of this block
//! covers the address" (the lookup then falls back to the block's inherited route, from
//! prefixes shorter than /8).

/// Top-level entry flag: the low 31 bits are a node index, not an encoded value.
pub(super) const NODE: u32 = 1 << 31;
/// /18 chunks per /8 block.
pub(super) const CHUNKS: usize = 1 << 10;
/// Prefix length resolved by the top-level (direct-pointing) array.
pub(super) const TOP_BITS: u8 = 18;
/// Bits per Poptrie node level.
const STRIDE: u8 = 6;

/// A stored prefix. `enc` is the encoded value (`value + 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pfx {
    pub(super) addr: u32,
    pub(super) len: u8,
    pub(super) enc: u32,
}

impl Pfx {
    pub(super) fn key(&self) -> (u32, u8) {
        (self.addr, self.len)
    }
}

/// A Poptrie internal node (24 bytes): 64 slots, each a child node or a leaf.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(super) struct Node {
    /// Bit j set: slot j is a child node, at `base1 + popcount(vector below j)`.
    pub(super) vector: u64,
    /// Bit j set: leaf slot j starts a new run of equal leaves. A leaf slot's value is
    /// `leaves[base0 + popcount(leafvec up to and including j) - 1]`.
    pub(super) leafvec: u64,
    pub(super) base0: u32,
    pub(super) base1: u32,
}

/// Prefix mask of length `len` (0..=32).
pub(super) fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len))
    }
}

/// Index of the /18 chunk of `addr` inside its block.
#[inline(always)]
pub(super) fn chunk_of(addr: u32) -> usize {
    ((addr >> 14) as usize) & (CHUNKS - 1)
}

/// The 14 address bits below the chunk, left-aligned in an 18-bit window so that every
/// node level consumes exactly 6 bits (the last level sees 2 real bits and 4 zeros).
#[inline(always)]
pub(super) fn below_chunk(addr: u32) -> u32 {
    (addr & 0x3FFF) << 4
}

#[derive(Clone, Debug)]
#[repr(C)]
pub(super) struct Block {
    // Data plane: read by lookups. Header fields first so they share one cache line.
    pub(super) nodes: Vec<Node>,
    pub(super) leaves: Vec<u32>,
    pub(super) top: [u32; CHUNKS],
    // Control plane: never touched by lookups.
    /// Prefixes of length 8..=32 inside this block, sorted by (addr, len).
    rib: Vec<Pfx>,
    /// Per chunk: encoded value of the longest prefix of length 8..=18 covering it (0: none)
    dflt: Box<[u32; CHUNKS]>,
    /// ... and its length (0: none).
    dlen: Box<[u8; CHUNKS]>,
    live_nodes: usize,
    live_leaves: usize,
}

impl Block {
    pub(super) fn empty() -> Block {
        Block::build(Vec::new())
    }

    /// Builds a block from its prefixes, sorted by (addr, len) without duplicates.
    pub(super) fn build(rib: Vec<Pfx>) -> Block {
        let mut b = Block {
            nodes: Vec::new(),
            leaves: Vec::new(),
            top: [0; CHUNKS],
            rib,
            dflt: Box::new([0; CHUNKS]),
            dlen: Box::new([0; CHUNKS]),
            live_nodes: 0,
            live_leaves: 0,
        };
        for i in 0..b.rib.len() {
            let p = b.rib[i];
            if p.len <= TOP_BITS {
                let first = chunk_of(p.addr);
                for c in first..first + (1 << (TOP_BITS - p.len)) {
                    if b.dlen[c] < p.len {
                        b.dlen[c] = p.len;
                        b.dflt[c] = p.enc;
                    }
                }
            }
        }
        b.rebuild_arrays();
        b
    }

    /// Rebuilds the node and leaf arrays from scratch (drops all garbage).
    fn rebuild_arrays(&mut self) {
        self.nodes = Vec::new();
        self.leaves = Vec::new();
        let rib = std::mem::take(&mut self.rib);
        self.top.copy_from_slice(&self.dflt[..]);
        let mut k = 0;
        while k < rib.len() {
            let c = chunk_of(rib[k].addr);
            let n = rib[k..].partition_point(|p| chunk_of(p.addr) == c);
            let run = &rib[k..k + n];
            if run.iter().any(|p| p.len > TOP_BITS) {
                self.top[c] = NODE | self.build_chunk(run, self.dflt[c]);
            }
            k += n;
        }
        self.rib = rib;
        self.nodes.shrink_to_fit();
        self.leaves.shrink_to_fit();
        self.live_nodes = self.nodes.len();
        self.live_leaves = self.leaves.len();
    }

    fn build_chunk(&mut self, run: &[Pfx], dflt: u32) -> u32 {
        let root = self.nodes.len();
        self.nodes.push(Node::default());
        self.build_node(root, run, TOP_BITS, dflt, 0);
        u32::try_from(root)
            .ok()
            .filter(|&r| r < NODE)
            .expect("LPM block node index overflow")
    }

    /// Fills `nodes[at]` from `pfx` (sorted, all inside this node's range; only prefixes
    /// longer than `s` matter here), then builds its children, appended contiguously.
    fn build_node(&mut self, at: usize, pfx: &[Pfx], s: u8, dflt: u32, depth: u32) {
        let e = s + STRIDE;
        let shift = 12 - 6 * depth;
        let slot = |a: u32| ((below_chunk(a) >> shift) & 63) as usize;
        let mut val = [dflt; 64];
        let mut plen = [s; 64];
        let mut vector = 0u64;
        for p in pfx.iter().filter(|p| p.len > s) {
            let j = slot(p.addr);
            if p.len <= e {
                for k in j..j + (1 << (e - p.len)) {
                    if plen[k] < p.len {
                        plen[k] = p.len;
                        val[k] = p.enc;
                    }
                }
            } else {
                vector |= 1 << j;
            }
        }
        let base0 = self.leaves.len();
        let mut leafvec = 0u64;
        let mut prev = None;
        for (j, &v) in val.iter().enumerate() {
            if vector & (1 << j) == 0 && prev != Some(v) {
                leafvec |= 1 << j;
                self.leaves.push(v);
                prev = Some(v);
            }
        }
        let base1 = self.nodes.len();
        self.nodes
            .resize(base1 + vector.count_ones() as usize, Node::default());
        self.nodes[at] = Node {
            vector,
            leafvec,
            base0: u32::try_from(base0).expect("LPM leaf index overflow"),
            base1: u32::try_from(base1).expect("LPM node index overflow"),
        };
        let mut bits = vector;
        let mut child = base1;
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let start = pfx.partition_point(|p| slot(p.addr) < j);
            let end = pfx.partition_point(|p| slot(p.addr) <= j);
            self.build_node(child, &pfx[start..end], e, val[j], depth + 1);
            child += 1;
        }
    }

    /// Encoded value for `addr` (0: no prefix of this block covers it), read from the
    /// block's own arrays: the reference the lookup form is checked against.
    #[cfg(test)]
    pub(super) fn lookup(&self, addr: u32) -> u32 {
        let t = self.top[chunk_of(addr)];
        if t & NODE == 0 {
            t
        } else {
            self.walk(t, addr)
        }
    }

    /// Finishes a lookup whose top entry `t` points at a node.
    #[cfg(test)]
    fn walk(&self, t: u32, addr: u32) -> u32 {
        let x = below_chunk(addr);
        let mut n = &self.nodes[(t & !NODE) as usize];
        let mut shift = 12u32;
        loop {
            let bit = 1u64 << ((x >> shift) & 63);
            if n.vector & bit != 0 {
                n = &self.nodes[n.base1 as usize + (n.vector & (bit - 1)).count_ones() as usize];
                shift = shift.wrapping_sub(6);
            } else {
                let i = n.base0 as usize + (n.leafvec & (bit | (bit - 1))).count_ones() as usize;
                return self.leaves[i - 1];
            }
        }
    }

    fn find(&self, addr: u32, len: u8) -> Result<usize, usize> {
        self.rib.binary_search_by(|p| p.key().cmp(&(addr, len)))
    }

    /// Exact-match value of `addr/len` (encoded).
    pub(super) fn get(&self, addr: u32, len: u8) -> Option<u32> {
        self.find(addr, len).ok().map(|i| self.rib[i].enc)
    }

    /// Inserts or replaces `p` (length 8..=32, host bits clear); returns the old encoding.
    pub(super) fn insert(&mut self, p: Pfx) -> Option<u32> {
        let old = match self.find(p.addr, p.len) {
            Ok(i) if self.rib[i].enc == p.enc => return Some(p.enc),
            Ok(i) => Some(std::mem::replace(&mut self.rib[i].enc, p.enc)),
            Err(i) => {
                self.rib.insert(i, p);
                None
            }
        };
        if p.len > TOP_BITS {
            self.refresh_chunk(p.addr, chunk_of(p.addr));
        } else {
            let first = chunk_of(p.addr);
            for c in first..first + (1 << (TOP_BITS - p.len)) {
                if self.dlen[c] <= p.len {
                    self.dlen[c] = p.len;
                    self.dflt[c] = p.enc;
                    self.refresh_chunk(p.addr, c);
                }
            }
        }
        self.maybe_compact();
        old
    }

    /// Removes `addr/len` (length 8..=32, host bits clear); returns its encoding.
    pub(super) fn remove(&mut self, addr: u32, len: u8) -> Option<u32> {
        let i = self.find(addr, len).ok()?;
        let old = self.rib.remove(i).enc;
        if len > TOP_BITS {
            self.refresh_chunk(addr, chunk_of(addr));
        } else {
            // Every chunk this prefix painted falls back to the same covering prefix.
            let (fenc, flen) = (8..len)
                .rev()
                .find_map(|l| self.get(addr & mask(l), l).map(|e| (e, l)))
                .unwrap_or((0, 0));
            let first = chunk_of(addr);
            for c in first..first + (1 << (TOP_BITS - len)) {
                if self.dlen[c] == len {
                    self.dlen[c] = flen;
                    self.dflt[c] = fenc;
                    self.refresh_chunk(addr, c);
                }
            }
        }
        self.maybe_compact();
        Some(old)
    }

    /// Recomputes the top entry of chunk `c` (and its subtree) after a change; `addr` is
    /// any address of this block.
    fn refresh_chunk(&mut self, addr: u32, c: usize) {
        let old = self.top[c];
        if old & NODE != 0 {
            let (n, l) = self.subtree_size((old & !NODE) as usize);
            self.live_nodes -= n;
            self.live_leaves -= l;
        }
        // Chunk id within the whole address space, to find the chunk's run of prefixes.
        let gc = (addr >> 24 << 10) | c as u32;
        let start = self.rib.partition_point(|p| p.addr >> 14 < gc);
        let end = start + self.rib[start..].partition_point(|p| p.addr >> 14 == gc);
        let rib = std::mem::take(&mut self.rib);
        let run = &rib[start..end];
        if run.iter().any(|p| p.len > TOP_BITS) {
            let (n0, l0) = (self.nodes.len(), self.leaves.len());
            self.top[c] = NODE | self.build_chunk(run, self.dflt[c]);
            self.live_nodes += self.nodes.len() - n0;
            self.live_leaves += self.leaves.len() - l0;
        } else {
            self.top[c] = self.dflt[c];
        }
        self.rib = rib;
    }

    fn subtree_size(&self, at: usize) -> (usize, usize) {
        let n = self.nodes[at];
        let mut size = (1, n.leafvec.count_ones() as usize);
        for k in 0..n.vector.count_ones() as usize {
            let (a, b) = self.subtree_size(n.base1 as usize + k);
            size.0 += a;
            size.1 += b;
        }
        size
    }

    fn maybe_compact(&mut self) {
        if self.nodes.len() > 2 * self.live_nodes + 64
            || self.leaves.len() > 2 * self.live_leaves + 256
        {
            self.compact();
        }
    }

    /// Copies the live subtrees into fresh arrays, dropping the garbage. Copying is several
    /// times cheaper than rebuilding from the prefixes, which keeps the rare update that
    /// triggers it short.
    fn compact(&mut self) {
        let mut nodes = Vec::with_capacity(self.live_nodes);
        let mut leaves = Vec::with_capacity(self.live_leaves);
        for c in 0..CHUNKS {
            let t = self.top[c];
            if t & NODE != 0 {
                let root = nodes.len();
                nodes.push(Node::default());
                self.copy_subtree((t & !NODE) as usize, root, &mut nodes, &mut leaves);
                self.top[c] = NODE | root as u32;
            }
        }
        self.nodes = nodes;
        self.leaves = leaves;
        self.live_nodes = self.nodes.len();
        self.live_leaves = self.leaves.len();
    }

    fn copy_subtree(&self, from: usize, to: usize, nodes: &mut Vec<Node>, leaves: &mut Vec<u32>) {
        let n = self.nodes[from];
        let base0 = leaves.len();
        let l = n.base0 as usize;
        leaves.extend_from_slice(&self.leaves[l..l + n.leafvec.count_ones() as usize]);
        let base1 = nodes.len();
        let children = n.vector.count_ones() as usize;
        nodes.resize(base1 + children, Node::default());
        nodes[to] = Node {
            base0: base0 as u32,
            base1: base1 as u32,
            ..n
        };
        for k in 0..children {
            self.copy_subtree(n.base1 as usize + k, base1 + k, nodes, leaves);
        }
    }

    pub(super) fn prefixes(&self) -> &[Pfx] {
        &self.rib
    }

    /// Heap and inline bytes read by lookups.
    pub(super) fn lookup_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.leaves.capacity() * 4
            + std::mem::size_of_val(&self.top)
            + 2 * std::mem::size_of::<Vec<u32>>()
    }

    /// Bytes of the control-plane copy (prefixes and per-chunk defaults).
    pub(super) fn control_bytes(&self) -> usize {
        self.rib.capacity() * std::mem::size_of::<Pfx>() + CHUNKS * 5
    }
}
