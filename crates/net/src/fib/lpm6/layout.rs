//! The lookup arrays of an [`super::Lpm6`] and how a /16 chunk's subtree is laid out in
//! them.
//!
//! `top[c]` is either an encoded value (no prefix longer than /16 in chunk `c`) or
//! `NODE | n` of the chunk's dense node `n`. A dense node covers 8 address bits: 256
//! entries `dense[n * 256..]`, each an encoded value or `NODE |` the next node, a dense
//! node for the node at bit 16, a Poptrie node for the node at bit 24 (so the depth says
//! which array an entry points into). Below bit 32, a Poptrie node covers 6 bits: bit `j`
//! of `vector` says slot `j` has a child (at `base_child + rank`), otherwise the slot's
//! leaf is `leaves[base_leaf + rank of the run]`, where a set bit of `leafvec` starts a
//! run of equal leaves (children are skipped, so runs continue across them). Values are
//! leaf-pushed within the chunk (a child inherits the value of its slot).

/// Bits resolved by the top array.
pub(super) const TOP_BITS: u32 = 16;
/// Top entries.
pub(super) const CHUNKS: usize = 1 << TOP_BITS;
/// Bits per dense node, and entries in one.
pub(super) const DENSE_BITS: u32 = 8;
pub(super) const DENSE: usize = 1 << DENSE_BITS;
/// Depth where the dense levels end and Poptrie nodes start.
pub(super) const DENSE_END: u32 = TOP_BITS + 2 * DENSE_BITS;
/// Bits per Poptrie node.
pub(super) const STRIDE: u32 = 6;
/// Entry flag: the rest is a node index.
pub(super) const NODE: u32 = 1 << 31;
/// Garbage allowed before a relayout, beyond the live part (entries, nodes or leaves).
const SLACK: usize = 1 << 16;

/// A Poptrie node: 24 bytes.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(super) struct Node {
    pub vector: u64,
    pub leafvec: u64,
    pub base_child: u32,
    pub base_leaf: u32,
}

/// The slot of `addr` in a Poptrie node at bit depth `d` (< 128): bits `d..d+6`,
/// zero-padded past bit 127.
#[inline(always)]
pub(super) fn slot(addr: u128, d: u32) -> u32 {
    ((addr << d) >> (128 - STRIDE)) as u32
}

/// The entry of `addr` in a dense node at bit depth `d` (< 120): bits `d..d+8`.
#[inline(always)]
pub(super) fn byte(addr: u128, d: u32) -> usize {
    ((addr >> (128 - DENSE_BITS - d)) as usize) & (DENSE - 1)
}

/// Space a chunk's subtree takes: dense entries, Poptrie nodes, leaves.
type Cost = [usize; 3];

#[derive(Clone, Debug)]
pub(super) struct Arrays {
    pub top: Box<[u32; CHUNKS]>,
    pub dense: Vec<u32>,
    pub nodes: Vec<Node>,
    pub leaves: Vec<u32>,
    /// Per chunk: what its current subtree takes.
    cost: Box<[Cost]>,
    live: Cost,
}

impl Arrays {
    pub fn new() -> Arrays {
        Arrays {
            top: zeroed(),
            // Node 0: the dummy that branch-free steps read once a walk has ended.
            dense: vec![0; DENSE],
            nodes: Vec::new(),
            leaves: Vec::new(),
            cost: vec![[0; 3]; CHUNKS].into_boxed_slice(),
            live: [0; 3],
        }
    }

    fn used(&self) -> Cost {
        [self.dense.len(), self.nodes.len(), self.leaves.len()]
    }

    pub fn bytes(&self) -> usize {
        (self.top.len() + self.dense.len() + self.leaves.len()) * 4
            + self.nodes.len() * size_of::<Node>()
    }

    /// (dense and Poptrie nodes, leaves), the dummy dense node left out.
    pub fn shape(&self) -> (usize, usize) {
        (
            self.dense.len() / DENSE - 1 + self.nodes.len(),
            self.leaves.len(),
        )
    }

    pub fn too_much_garbage(&self) -> bool {
        let used = self.used();
        (0..3).any(|i| used[i] > 2 * self.live[i] + SLACK)
    }

    /// Lays out chunk `c` from its prefixes longer than /16 (encoded values, sorted by
    /// address then length), or points its top entry at `short` if there are none.
    pub fn rebuild_chunk(&mut self, c: usize, prefixes: Vec<(u128, u8, u32)>, short: u32) {
        let before = self.used();
        self.top[c] = if prefixes.is_empty() {
            short
        } else {
            self.build_dense(&prefixes, TOP_BITS, 0)
        };
        let after = self.used();
        let new: Cost = std::array::from_fn(|i| after[i] - before[i]);
        let old = std::mem::replace(&mut self.cost[c], new);
        for i in 0..3 {
            self.live[i] = self.live[i] + new[i] - old[i];
        }
    }

    /// Builds the dense node at depth `d` for `pfx` (all longer than `d`, inside the
    /// node's range, sorted), its descendants first; returns its entry (`NODE | n`).
    fn build_dense(&mut self, pfx: &[(u128, u8, u32)], d: u32, inherited: u32) -> u32 {
        let end = d + DENSE_BITS;
        let mut entry = [inherited; DENSE];
        paint(&mut entry, pfx, d, end);
        let long = longer(pfx, end);
        for (s, from, to) in groups(&long, |a| byte(a, d) as u32) {
            let inh = entry[s as usize];
            entry[s as usize] = if end < DENSE_END {
                self.build_dense(&long[from..to], end, inh)
            } else {
                let root = self.build_node(&long[from..to], end, inh);
                self.nodes.push(root);
                index(self.nodes.len() - 1)
            };
        }
        self.dense.extend_from_slice(&entry);
        index(self.dense.len() / DENSE - 1)
    }

    /// Builds the Poptrie node at depth `d` for `pfx` (all longer than `d`, inside the
    /// node's range, sorted), its children appended first; returns it for the caller to
    /// place.
    fn build_node(&mut self, pfx: &[(u128, u8, u32)], d: u32, inherited: u32) -> Node {
        let end = d + STRIDE;
        let mut leaf = [inherited; 64];
        paint(&mut leaf, pfx, d, end);
        let long = longer(pfx, end);
        let groups = groups(&long, |a| slot(a, d));
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

/// `NODE | i`, checking that `i` fits.
fn index(i: usize) -> u32 {
    assert!(i < NODE as usize, "Lpm6: more than 2^31 nodes");
    NODE | i as u32
}

/// Writes into `slots` (the node at depth `d`, ending at `end`) the values of the
/// prefixes of `pfx` that end inside it, shorter first so that longer ones win.
fn paint(slots: &mut [u32], pfx: &[(u128, u8, u32)], d: u32, end: u32) {
    let bits = end - d;
    let mut here: Vec<&(u128, u8, u32)> = pfx.iter().filter(|p| p.1 as u32 <= end).collect();
    here.sort_by_key(|p| p.1);
    for &(a, l, v) in here {
        let s = ((a << d) >> (128 - bits)) as usize;
        slots[s..s + (1 << (end - l as u32))].fill(v);
    }
}

/// The prefixes of `pfx` longer than `end`: those that go on below the node ending there.
fn longer(pfx: &[(u128, u8, u32)], end: u32) -> Vec<(u128, u8, u32)> {
    pfx.iter().copied().filter(|p| p.1 as u32 > end).collect()
}

/// Runs of `long` (sorted by address) by slot: `(slot, from, to)`.
fn groups(long: &[(u128, u8, u32)], slot_of: impl Fn(u128) -> u32) -> Vec<(u32, usize, usize)> {
    let mut out: Vec<(u32, usize, usize)> = Vec::new();
    for (i, p) in long.iter().enumerate() {
        let s = slot_of(p.0);
        match out.last_mut() {
            Some(g) if g.0 == s => g.2 = i + 1,
            _ => out.push((s, i, i + 1)),
        }
    }
    out
}

/// A boxed array of `CHUNKS` zeroes (built on the heap: 256 KiB would strain a stack).
pub(super) fn zeroed() -> Box<[u32; CHUNKS]> {
    vec![0; CHUNKS]
        .into_boxed_slice()
        .try_into()
        .expect("CHUNKS entries")
}
