//! The lookup arrays of an [`super::Lpm6`] and how a top chunk's subtree is laid out in
//! them.
//!
//! `direct` is one array: the `CHUNKS` top entries (bits 0-18), then dense nodes of
//! `DENSE` entries (bits 18-32). A top entry is an encoded value, or `NODE | o` where `o`
//! is the offset in `direct` of its chunk's dense node (a multiple of `DENSE`, so a key's
//! entry is `o | bits 18-32`). A dense entry is an encoded value or `NODE | o | b / 2`,
//! `o` the offset in `mini` of the /32's mini node of `b` bits: 4 (bits 32-36, one cache
//! line) or 10 (a /32 with `WIDE_MIN` longer prefixes or more), so a /48 ends 6 bits below
//! the mini node (bit 42) or 12 (bit 48). A mini entry is an encoded value; `NODE |
//! LEAVES | l`, the 64 leaves `leaves[l..l + 64]` of the 6 bits below (where nothing goes
//! deeper); or `NODE | n`, the Poptrie root `nodes[n]`. A Poptrie node covers 6 bits: bit
//! `j` of `vector` says slot `j` has a child (at `base_child + rank`), otherwise the
//! slot's leaf is `leaves[base_leaf + rank of the run]`, where a set bit of `leafvec`
//! starts a run of equal leaves (children are skipped, so runs continue across them).
//! Every value is leaf-pushed, prefixes of /18 or shorter included: the entry a lookup
//! ends at is the answer, with no fallback.

use std::collections::BTreeMap;

/// Bits resolved by the top entries.
pub(super) const TOP_BITS: u32 = 18;
/// Top entries.
pub(super) const CHUNKS: usize = 1 << TOP_BITS;
/// Depth where the dense level ends and Poptrie nodes start.
pub(super) const DENSE_END: u32 = 32;
/// Bits per dense node, and entries in one.
pub(super) const DENSE_BITS: u32 = DENSE_END - TOP_BITS;
pub(super) const DENSE: usize = 1 << DENSE_BITS;
/// Bits per Poptrie node.
pub(super) const STRIDE: u32 = 6;
/// Entry flag: the rest is a dense offset (top entries), a mini offset and kind (dense
/// entries) or a Poptrie node index (mini entries).
pub(super) const NODE: u32 = 1 << 31;
/// Mini entry flag beside `NODE`: the rest is the index in `leaves` of 64 direct leaves
/// (the 6 bits below the mini node), where the Poptrie root would have no child.
pub(super) const LEAVES: u32 = 1 << 30;
/// Low bits of a dense entry pointing at a mini node: half its bits (mini nodes are
/// multiples of 16 entries, so their offsets leave these bits clear).
pub(super) const KIND: u32 = 15;
/// Bits of a narrow and of a wide mini node.
pub(super) const NARROW_BITS: u32 = 4;
pub(super) const WIDE_BITS: u32 = 10;
/// Prefixes longer than /32 inside a /32 from which its mini node is wide.
pub(super) const WIDE_MIN: usize = 16;
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

/// The top chunk of `addr`.
pub(super) fn chunk_of(addr: u128) -> usize {
    (addr >> (128 - TOP_BITS)) as usize
}

/// Space a chunk's subtree takes: dense entries, Poptrie nodes, leaves, mini entries.
type Cost = [usize; 4];

/// A chunk with a subtree: what it takes, and the value it inherited from the prefixes
/// of /18 or shorter (leaf-pushed into it).
#[derive(Clone, Debug)]
struct Chunk {
    cost: Cost,
    inherited: u32,
}

#[derive(Clone, Debug)]
pub(super) struct Arrays {
    /// Top entries, then dense nodes.
    pub direct: Vec<u32>,
    pub nodes: Vec<Node>,
    pub leaves: Vec<u32>,
    /// Mini nodes (bits 32-36 or 32-42).
    pub mini: Vec<u32>,
    /// Mini nodes in `mini`, garbage included.
    mini_nodes: usize,
    /// The chunks with a subtree.
    chunks: BTreeMap<usize, Chunk>,
    live: Cost,
}

impl Arrays {
    /// Arrays whose top entries are `top` (encoded values), with no subtrees.
    pub fn new(top: Vec<u32>) -> Arrays {
        assert_eq!(top.len(), CHUNKS);
        Arrays {
            direct: top,
            nodes: Vec::new(),
            leaves: Vec::new(),
            mini: Vec::new(),
            mini_nodes: 0,
            chunks: BTreeMap::new(),
            live: [0; 4],
        }
    }

    /// The top entries.
    #[inline(always)]
    pub fn top(&self) -> &[u32; CHUNKS] {
        self.direct[..CHUNKS]
            .try_into()
            .expect("CHUNKS top entries")
    }

    fn used(&self) -> Cost {
        [
            self.direct.len() - CHUNKS,
            self.nodes.len(),
            self.leaves.len(),
            self.mini.len(),
        ]
    }

    pub fn bytes(&self) -> usize {
        (self.direct.len() + self.leaves.len() + self.mini.len()) * 4
            + self.nodes.len() * size_of::<Node>()
    }

    /// (dense, mini and Poptrie nodes, leaves).
    pub fn shape(&self) -> (usize, usize) {
        (
            (self.direct.len() - CHUNKS) / DENSE + self.mini_nodes + self.nodes.len(),
            self.leaves.len(),
        )
    }

    pub fn too_much_garbage(&self) -> bool {
        let used = self.used();
        (0..4).any(|i| used[i] > 2 * self.live[i] + SLACK)
    }

    /// The value chunk `c` inherits from the prefixes of /18 or shorter.
    pub fn inherited(&self, c: usize) -> u32 {
        match self.chunks.get(&c) {
            Some(ch) => ch.inherited,
            None => self.direct[c],
        }
    }

    /// Sets what chunk `c` inherits to `v`, rebuilding its subtree (from `prefixes()`)
    /// only if it has one and the value changed.
    pub fn set_inherited(
        &mut self,
        c: usize,
        v: u32,
        prefixes: impl FnOnce() -> Vec<(u128, u8, u32)>,
    ) {
        match self.chunks.get(&c) {
            Some(ch) if ch.inherited != v => self.rebuild_chunk(c, prefixes(), v),
            Some(_) => {}
            None => self.direct[c] = v,
        }
    }

    /// Lays out chunk `c` from its prefixes longer than /18 (encoded values, sorted by
    /// address then length) over `inherited`, or sets its top entry to `inherited` if
    /// there are none.
    pub fn rebuild_chunk(&mut self, c: usize, prefixes: Vec<(u128, u8, u32)>, inherited: u32) {
        if let Some(old) = self.chunks.remove(&c) {
            for (live, old) in self.live.iter_mut().zip(old.cost) {
                *live -= old;
            }
        }
        if prefixes.is_empty() {
            self.direct[c] = inherited;
            return;
        }
        let before = self.used();
        self.direct[c] = self.build_dense(&prefixes, inherited);
        let after = self.used();
        let cost: Cost = std::array::from_fn(|i| after[i] - before[i]);
        for (live, new) in self.live.iter_mut().zip(cost) {
            *live += new;
        }
        self.chunks.insert(c, Chunk { cost, inherited });
    }

    /// Builds the dense node for `pfx` (all longer than /18, inside one chunk, sorted),
    /// its mini nodes first; returns its top entry (`NODE | offset`).
    fn build_dense(&mut self, pfx: &[(u128, u8, u32)], inherited: u32) -> u32 {
        let mut entry = vec![inherited; DENSE];
        paint(&mut entry, pfx, TOP_BITS, DENSE_END);
        let long = longer(pfx, DENSE_END);
        let dense_slot = |a: u128| ((a << TOP_BITS) >> (128 - DENSE_BITS)) as u32;
        for (s, from, to) in groups(&long, dense_slot) {
            entry[s as usize] = self.build_mini(&long[from..to], entry[s as usize]);
        }
        let at = self.direct.len();
        assert!(
            at + DENSE <= NODE as usize,
            "Lpm6: dense nodes past 2^31 entries"
        );
        self.direct.extend_from_slice(&entry);
        NODE | at as u32
    }

    /// Builds the mini node of one /32 for `pfx` (all longer than /32, inside it, sorted),
    /// its Poptrie roots first; returns its dense entry (`NODE | offset | bits / 2`).
    fn build_mini(&mut self, pfx: &[(u128, u8, u32)], inherited: u32) -> u32 {
        let bits = if pfx.len() >= WIDE_MIN {
            WIDE_BITS
        } else {
            NARROW_BITS
        };
        let end = DENSE_END + bits;
        let mut entry = vec![inherited; 1 << bits];
        paint(&mut entry, pfx, DENSE_END, end);
        let long = longer(pfx, end);
        let mini_slot = |a: u128| ((a << DENSE_END) >> (128 - bits)) as u32;
        for (s, from, to) in groups(&long, mini_slot) {
            let (group, inherited) = (&long[from..to], entry[s as usize]);
            entry[s as usize] = if group.iter().all(|p| u32::from(p.1) <= end + STRIDE) {
                // Nothing below the root: its 64 leaves, uncompressed.
                let mut leaf = [inherited; 64];
                paint(&mut leaf, group, end, end + STRIDE);
                self.leaves.extend_from_slice(&leaf);
                index(self.leaves.len() - 64) | LEAVES
            } else {
                let root = self.build_node(group, end, inherited);
                self.nodes.push(root);
                index(self.nodes.len() - 1)
            };
        }
        let at = self.mini.len();
        assert!(
            at + entry.len() <= NODE as usize,
            "Lpm6: mini nodes past 2^31 entries"
        );
        debug_assert_eq!(at as u32 & KIND, 0);
        self.mini.extend_from_slice(&entry);
        self.mini_nodes += 1;
        NODE | at as u32 | (bits / 2)
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

/// `NODE | i`, checking that `i` fits beside `LEAVES`.
fn index(i: usize) -> u32 {
    assert!(i < LEAVES as usize, "Lpm6: more than 2^30 nodes or leaves");
    NODE | i as u32
}

/// Writes into `slots` (the node at depth `d`, ending at `end`) the values of the
/// prefixes of `pfx` that end inside it, shorter first so that longer ones win.
pub(super) fn paint(slots: &mut [u32], pfx: &[(u128, u8, u32)], d: u32, end: u32) {
    let bits = end - d;
    let mut here: Vec<&(u128, u8, u32)> = pfx.iter().filter(|p| p.1 as u32 <= end).collect();
    here.sort_by_key(|p| p.1);
    for &(a, l, v) in here {
        let s = if bits == 0 {
            0
        } else {
            ((a << d) >> (128 - bits)) as usize
        };
        let n = 1usize << (end - (l as u32).max(d));
        slots[s..s + n].fill(v);
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
