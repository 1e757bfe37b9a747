//! The lookup arrays of an [`super::Lpm6`] and how a /16 chunk's subtree is laid out in
//! them.
//!
//! `top[c]` is either an encoded value (no prefix longer than /16 in chunk `c`) or
//! `NODE | index` of the chunk's root node. A node covers 6 address bits: bit `j` of
//! `vector` says slot `j` has a child (at `base_child + rank`), otherwise the slot's
//! leaf is `leaves[base_leaf + rank of the run]`, where a set bit of `leafvec` starts a
//! run of equal leaves (children are skipped, so runs continue across them). Leaves are
//! leaf-pushed within the chunk (a child inherits the value of its slot).

/// Bits resolved by the top array.
pub(super) const TOP_BITS: u32 = 16;
/// Top entries.
pub(super) const CHUNKS: usize = 1 << TOP_BITS;
/// Bits per node.
pub(super) const STRIDE: u32 = 6;
/// Top entry flag: the rest is a node index.
pub(super) const NODE: u32 = 1 << 31;
/// Garbage allowed before a relayout, beyond the live part (nodes or leaves).
const SLACK: usize = 1 << 12;

/// A Poptrie node: 24 bytes.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(super) struct Node {
    pub vector: u64,
    pub leafvec: u64,
    pub base_child: u32,
    pub base_leaf: u32,
}

/// The slot of `addr` in a node at bit depth `d` (< 128): bits `d..d+6`, zero-padded
/// past bit 127.
#[inline(always)]
pub(super) fn slot(addr: u128, d: u32) -> u32 {
    ((addr << d) >> (128 - STRIDE)) as u32
}

#[derive(Clone, Debug)]
pub(super) struct Arrays {
    pub top: Box<[u32]>,
    pub nodes: Vec<Node>,
    pub leaves: Vec<u32>,
    /// Per chunk: (nodes, leaves) of its current subtree.
    cost: Box<[(u32, u32)]>,
    live: (usize, usize),
}

impl Arrays {
    pub fn new() -> Arrays {
        Arrays {
            top: vec![0; CHUNKS].into_boxed_slice(),
            nodes: Vec::new(),
            leaves: Vec::new(),
            cost: vec![(0, 0); CHUNKS].into_boxed_slice(),
            live: (0, 0),
        }
    }

    pub fn bytes(&self) -> usize {
        self.top.len() * 4 + self.nodes.len() * size_of::<Node>() + self.leaves.len() * 4
    }

    pub fn shape(&self) -> (usize, usize) {
        (self.nodes.len(), self.leaves.len())
    }

    pub fn too_much_garbage(&self) -> bool {
        self.nodes.len() > 2 * self.live.0 + SLACK || self.leaves.len() > 2 * self.live.1 + SLACK
    }

    /// Lays out chunk `c` from its prefixes longer than /16 (encoded values, sorted by
    /// address then length), or points its top entry at `short` if there are none.
    pub fn rebuild_chunk(&mut self, c: usize, prefixes: Vec<(u128, u8, u32)>, short: u32) {
        let (n0, l0) = (self.nodes.len(), self.leaves.len());
        self.top[c] = if prefixes.is_empty() {
            short
        } else {
            let root = self.build_node(&prefixes, TOP_BITS, 0);
            self.nodes.push(root);
            assert!(
                self.nodes.len() < NODE as usize,
                "Lpm6: more than 2^31 nodes"
            );
            NODE | (self.nodes.len() - 1) as u32
        };
        let new = (
            (self.nodes.len() - n0) as u32,
            (self.leaves.len() - l0) as u32,
        );
        let old = std::mem::replace(&mut self.cost[c], new);
        self.live.0 = self.live.0 + new.0 as usize - old.0 as usize;
        self.live.1 = self.live.1 + new.1 as usize - old.1 as usize;
    }

    /// Builds the node at depth `d` for `pfx` (all longer than `d`, inside the node's
    /// range, sorted), its children appended first; returns it for the caller to place.
    fn build_node(&mut self, pfx: &[(u128, u8, u32)], d: u32, inherited: u32) -> Node {
        let end = d + STRIDE;
        let mut leaf = [inherited; 64];
        let mut here: Vec<&(u128, u8, u32)> = pfx.iter().filter(|p| p.1 as u32 <= end).collect();
        here.sort_by_key(|p| p.1);
        for &(a, l, v) in here {
            let s = slot(a, d) as usize;
            leaf[s..s + (1 << (end - l as u32))].fill(v);
        }
        let long: Vec<(u128, u8, u32)> = pfx.iter().copied().filter(|p| p.1 as u32 > end).collect();
        let mut groups: Vec<(u32, usize, usize)> = Vec::new();
        for (i, p) in long.iter().enumerate() {
            let s = slot(p.0, d);
            match groups.last_mut() {
                Some(g) if g.0 == s => g.2 = i + 1,
                _ => groups.push((s, i, i + 1)),
            }
        }
        let base_child = self.nodes.len();
        self.nodes
            .resize(base_child + groups.len(), Node::default());
        let mut vector = 0u64;
        for (i, &(s, from, to)) in groups.iter().enumerate() {
            vector |= 1 << s;
            self.nodes[base_child + i] = self.build_node(&long[from..to], end, leaf[s as usize]);
        }
        let base_leaf = self.leaves.len();
        let (mut leafvec, mut prev) = (0u64, None);
        for (j, &v) in leaf.iter().enumerate() {
            if vector & (1 << j) == 0 && prev != Some(v) {
                leafvec |= 1 << j;
                self.leaves.push(v);
                prev = Some(v);
            }
        }
        Node {
            vector,
            leafvec,
            base_child: base_child as u32,
            base_leaf: base_leaf as u32,
        }
    }
}
