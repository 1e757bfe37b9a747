//! Reading prefix lists (plain or gzip) such as `../shared/data/*.txt.gz`.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};

/// Reads and parses a prefix list; `.gz` files are decompressed.
pub fn load(path: &Path) -> Result<Vec<(u32, u8)>> {
    let raw = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_string(&mut s)
            .with_context(|| format!("gunzip {}", path.display()))?;
        s
    } else {
        String::from_utf8(raw).with_context(|| format!("{} is not UTF-8 text", path.display()))?
    };
    router::traffic::parse_prefix_list(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
