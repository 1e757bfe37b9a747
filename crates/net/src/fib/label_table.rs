//! The label table: 20-bit label -> label entry index.
//!
//! PLACEHOLDER: a hash map so the rest of the crate builds; the forwarding-tables issue
//! replaces it with a flat / two-level array (O(1), one or two dependent loads).
//! The public API below is the contract the pipeline and the config compiler code against.

use std::collections::HashMap;

/// Maps labels to `u32` values (indexes into the snapshot's label entries).
#[derive(Clone, Debug, Default)]
pub struct LabelTable {
    map: HashMap<u32, u32>,
}

impl LabelTable {
    /// An empty table.
    pub fn new() -> LabelTable {
        LabelTable::default()
    }

    /// Binds `label` (< 2^20) to `value`, replacing any earlier binding.
    pub fn insert(&mut self, label: u32, value: u32) {
        assert!(label < (1 << 20));
        self.map.insert(label, value);
    }

    /// Unbinds `label`; returns its value if it was bound.
    pub fn remove(&mut self, label: u32) -> Option<u32> {
        self.map.remove(&label)
    }

    /// The value bound to `label`.
    #[inline]
    pub fn lookup(&self, label: u32) -> Option<u32> {
        self.map.get(&label).copied()
    }

    /// Number of bound labels.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when no label is bound.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Approximate heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.map.capacity() * 12
    }
}
