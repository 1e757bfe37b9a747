//! Reading prefix lists (plain or gzip) such as `../shared/data/*.txt.gz`.

use std::path::Path;

use anyhow::{Context, Result};

/// Reads and parses a prefix list; `.gz` content is decompressed.
pub fn load(path: &Path) -> Result<Vec<(u32, u8)>> {
    let raw = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    net::fib::prefix_list::parse_prefix_list(&raw)
        .with_context(|| format!("parse {}", path.display()))
}
