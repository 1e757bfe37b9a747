//! Shared by the LPM tests: the naive reference and the reference data.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;

/// Longest match by scanning every prefix: slow, obviously right.
#[derive(Default, Clone, Debug)]
pub struct ScanRef {
    pub prefixes: Vec<(u32, u8, u32)>,
}

pub fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len)
    }
}

impl ScanRef {
    pub fn insert(&mut self, addr: u32, len: u8, v: u32) {
        let addr = addr & mask(len);
        self.prefixes.retain(|p| (p.0, p.1) != (addr, len));
        self.prefixes.push((addr, len, v));
    }
    pub fn remove(&mut self, addr: u32, len: u8) -> Option<u32> {
        let addr = addr & mask(len);
        let i = self
            .prefixes
            .iter()
            .position(|p| (p.0, p.1) == (addr, len))?;
        Some(self.prefixes.remove(i).2)
    }
    pub fn lookup(&self, key: u32) -> Option<u32> {
        self.prefixes
            .iter()
            .filter(|p| key & mask(p.1) == p.0)
            .max_by_key(|p| p.1)
            .map(|p| p.2)
    }
}

/// Per-length hash maps: fast enough for a full table, still independent of the trie.
pub struct HashRef {
    by_len: Vec<HashMap<u32, u32>>,
}

impl HashRef {
    pub fn new(prefixes: &[(u32, u8, u32)]) -> HashRef {
        let mut by_len = vec![HashMap::new(); 33];
        for &(a, l, v) in prefixes {
            by_len[l as usize].insert(a & mask(l), v);
        }
        HashRef { by_len }
    }
    pub fn lookup(&self, key: u32) -> Option<u32> {
        (0..=32u8)
            .rev()
            .find_map(|l| self.by_len[l as usize].get(&(key & mask(l))).copied())
    }
}

/// `shared/data/<name>`: beside the repository (CI clones it there), inside it, or where
/// `MPLSROUTER_DATA_DIR` says. `None` (with a message) when absent.
pub fn data_file(name: &str) -> Option<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut candidates: Vec<PathBuf> = std::env::var_os("MPLSROUTER_DATA_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.push(manifest.join("../../../shared/data"));
    candidates.push(manifest.join("../../shared/data"));
    for dir in candidates {
        let p = dir.join(name);
        if p.is_file() {
            return Some(p);
        }
    }
    println!(
        "SKIP: {name} not found beside the repository (../shared/data) nor in MPLSROUTER_DATA_DIR"
    );
    None
}
