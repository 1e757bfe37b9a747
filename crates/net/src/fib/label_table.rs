//! The label table: 20-bit label -> label entry index, in a two-level array.
//!
//! A label splits into 10 high bits (the page) and 10 low bits (the slot). `dir[page]` is
//! the offset of that page's 1024 slots in `slots`; pages without any bound label all
//! point at page 0, which is all empty, so a lookup is two dependent loads and no branch
//! on the way. Memory: the 4 KiB directory plus 4 KiB per page in use; a page is freed
//! when its last label is unbound. A flat 2^20 array (4 MiB) would cost one load less,
//! but would not stay in cache next to the LPM; labels in use are usually clustered
//! (allocated from a few ranges), so few pages are live.
//!
//! This module must never allocate or lock in a lookup.

const SLOT_BITS: u32 = 10;
const SLOTS: usize = 1 << SLOT_BITS;
const PAGES: usize = 1 << (20 - SLOT_BITS);
/// Slot content for an unbound label.
const EMPTY: u32 = u32::MAX;

/// Maps labels to `u32` values (indexes into the snapshot's label entries).
#[derive(Clone, Debug)]
pub struct LabelTable {
    /// Per page: offset of its slots in `slots` (0: the shared empty page).
    dir: Box<[u32; PAGES]>,
    /// Page 0 (always empty), then the live pages.
    slots: Vec<u32>,
    /// Per live page (index = offset / SLOTS): bound labels, and which directory entry
    /// points at it.
    used: Vec<(u16, u16)>,
    len: usize,
}

impl Default for LabelTable {
    fn default() -> LabelTable {
        LabelTable::new()
    }
}

impl LabelTable {
    /// An empty table.
    pub fn new() -> LabelTable {
        LabelTable {
            dir: Box::new([0; PAGES]),
            slots: vec![EMPTY; SLOTS],
            used: vec![(0, 0)],
            len: 0,
        }
    }

    fn split(label: u32) -> (usize, usize) {
        assert!(label < (1 << 20), "label {label} is over 20 bits");
        ((label >> SLOT_BITS) as usize, label as usize & (SLOTS - 1))
    }

    /// Binds `label` (< 2^20) to `value`, replacing any earlier binding.
    /// `value` must not be `u32::MAX` (the empty marker).
    pub fn insert(&mut self, label: u32, value: u32) {
        assert_ne!(value, EMPTY, "label table value u32::MAX is reserved");
        let (page, slot) = LabelTable::split(label);
        if self.dir[page] == 0 {
            self.dir[page] = self.slots.len() as u32;
            self.slots.resize(self.slots.len() + SLOTS, EMPTY);
            self.used.push((0, page as u16));
        }
        let off = self.dir[page] as usize;
        let cell = &mut self.slots[off + slot];
        if *cell == EMPTY {
            self.used[off / SLOTS].0 += 1;
            self.len += 1;
        }
        *cell = value;
    }

    /// Unbinds `label`; returns its value if it was bound.
    pub fn remove(&mut self, label: u32) -> Option<u32> {
        let (page, slot) = LabelTable::split(label);
        let off = self.dir[page] as usize;
        if off == 0 || self.slots[off + slot] == EMPTY {
            return None;
        }
        let old = std::mem::replace(&mut self.slots[off + slot], EMPTY);
        self.len -= 1;
        let p = off / SLOTS;
        self.used[p].0 -= 1;
        if self.used[p].0 == 0 {
            // Free the page: move the last page into its place.
            self.dir[page] = 0;
            let last = self.used.len() - 1;
            if p != last {
                self.slots
                    .copy_within(last * SLOTS..(last + 1) * SLOTS, off);
                self.used[p] = self.used[last];
                self.dir[self.used[p].1 as usize] = off as u32;
            }
            self.used.pop();
            self.slots.truncate(last * SLOTS);
        }
        Some(old)
    }

    /// The value bound to `label` (labels over 20 bits are never bound).
    #[inline]
    pub fn lookup(&self, label: u32) -> Option<u32> {
        let page = (label >> SLOT_BITS) as usize;
        let off = *self.dir.get(page)? as usize;
        let v = self.slots[off + (label as usize & (SLOTS - 1))];
        (v != EMPTY).then_some(v)
    }

    /// Number of bound labels.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no label is bound.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Approximate heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.dir) + self.slots.capacity() * 4 + self.used.capacity() * 4
    }
}
