//! Prefix lists (one IPv4 CIDR per line, plain or gzip) and random destinations inside the
//! space they announce: the inputs of LPM tests, benchmarks and `mplsrouter bench-lookup`.
//!
//! Pure: it takes bytes and returns vectors; reading the file is the caller's business.

use std::io::Read;

/// Why a prefix list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PrefixListError {
    #[error("line {line}: `{text}` is not an IPv4 prefix (expected a.b.c.d/len, len <= 32)")]
    BadLine { line: usize, text: String },
    #[error("the data starts like gzip but does not decompress: {0}")]
    Gzip(std::io::Error),
    #[error("the list is not UTF-8 text")]
    NotText,
}

/// Parses a prefix list: one `a.b.c.d/len` per line; blank lines and `#` comments are
/// skipped; host bits are cleared. Gzip input (by its magic bytes) is decompressed first.
pub fn parse_prefix_list(bytes: &[u8]) -> Result<Vec<(u32, u8)>, PrefixListError> {
    let text = read_text(bytes)?;
    parse_lines(&text, 32, |a: std::net::Ipv4Addr, len| {
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
        (u32::from(a) & mask, len)
    })
    .map_err(|(line, text)| PrefixListError::BadLine { line, text })
}

/// The `addr/len` lines of a prefix list of either family (blank lines and `#` comments
/// skipped; `len` at most `max_len`), each made an entry by `entry`; `Err` names the
/// first bad line (1-based) and its text.
pub(crate) fn parse_lines<A: std::str::FromStr, T>(
    text: &str,
    max_len: u8,
    entry: impl Fn(A, u8) -> T,
) -> Result<Vec<T>, (usize, String)> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = || (i + 1, raw.to_owned());
        let (a, l) = line.split_once('/').ok_or_else(bad)?;
        let addr: A = a.parse().map_err(|_| bad())?;
        let len: u8 = l.parse().map_err(|_| bad())?;
        if len > max_len {
            return Err(bad());
        }
        out.push(entry(addr, len));
    }
    Ok(out)
}

/// The list as text: gzip (by its magic bytes) is decompressed, plain text taken as is.
pub(crate) fn read_text(bytes: &[u8]) -> Result<String, PrefixListError> {
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(bytes)
            .read_to_string(&mut text)
            .map_err(PrefixListError::Gzip)?;
        Ok(text)
    } else {
        Ok(std::str::from_utf8(bytes)
            .map_err(|_| PrefixListError::NotText)?
            .to_owned())
    }
}

/// SplitMix64: a small, fast, deterministic generator (no dependency needed).
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `n` destinations drawn uniformly from the union of the address space the prefixes
/// cover (every key has a route), reproducible from `seed`. Empty if `prefixes` is.
pub fn random_keys_in(prefixes: &[(u32, u8)], n: usize, seed: u64) -> Vec<u32> {
    // Disjoint intervals [start, end) of the union, as u64 to hold 2^32.
    let mut iv: Vec<(u64, u64)> = prefixes
        .iter()
        .map(|&(a, l)| (u64::from(a), u64::from(a) + (1u64 << (32 - l))))
        .collect();
    iv.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (s, e) in iv {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    if merged.is_empty() {
        return Vec::new();
    }
    // cum[i]: addresses in intervals before i.
    let mut cum = Vec::with_capacity(merged.len());
    let mut total = 0u64;
    for &(s, e) in &merged {
        cum.push(total);
        total += e - s;
    }
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let r = rng.next_u64() % total;
            let i = cum.partition_point(|&c| c <= r) - 1;
            (merged[i].0 + (r - cum[i])) as u32
        })
        .collect()
}

/// Gives each prefix one of `distinct` values by a fixed hash, the way a benchmark spreads
/// a realistic number of next hops (a few hundred) over a table without next hops.
pub fn spread_values(prefixes: &[(u32, u8)], distinct: u32) -> Vec<(u32, u8, u32)> {
    prefixes
        .iter()
        .map(|&(a, l)| (a, l, spread_value(a, l, distinct)))
        .collect()
}

/// The value [`spread_values`] gives prefix `addr/len`: one of `distinct` (at least 1).
pub fn spread_value(addr: u32, len: u8, distinct: u32) -> u32 {
    assert!(distinct > 0);
    let h = SplitMix64(u64::from(addr) << 8 | u64::from(len)).next_u64();
    (h % u64::from(distinct)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_values_use_every_value_on_aligned_prefixes() {
        // /24s and /16s have zero low bits: a hash that kept them would give few values.
        let prefixes: Vec<(u32, u8)> = (0..20_000u32)
            .map(|i| (i << 8, 24))
            .chain((0..2_000u32).map(|i| (i << 16, 16)))
            .collect();
        for distinct in [4, 254, 256, 300] {
            let seen: std::collections::BTreeSet<u32> = spread_values(&prefixes, distinct)
                .into_iter()
                .map(|(_, _, v)| v)
                .collect();
            assert_eq!(seen.len() as u32, distinct);
            assert!(seen.iter().all(|&v| v < distinct));
        }
    }

    #[test]
    fn parses_plain_and_gzip() {
        let text = "# comment\n10.0.0.0/8\n\n192.168.1.7/24 # host bits\n0.0.0.0/0\n";
        let want = vec![(0x0a00_0000, 8), (0xc0a8_0100, 24), (0, 0)];
        assert_eq!(parse_prefix_list(text.as_bytes()).unwrap(), want);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
        assert_eq!(parse_prefix_list(&gz.finish().unwrap()).unwrap(), want);
    }

    #[test]
    fn rejects_bad_lines_with_line_number() {
        for bad in ["10.0.0.0/33", "10.0.0/8", "10.0.0.0", "x/8"] {
            let text = format!("1.0.0.0/8\n{bad}\n");
            match parse_prefix_list(text.as_bytes()) {
                Err(PrefixListError::BadLine { line: 2, text }) => assert_eq!(text, bad),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn random_keys_stay_inside_and_cover_every_interval() {
        let prefixes = [(0x0a00_0000, 30), (0x0a00_0002, 31), (0xc000_0000, 32)];
        let keys = random_keys_in(&prefixes, 2000, 7);
        assert_eq!(keys.len(), 2000);
        let mut seen = std::collections::HashSet::new();
        for k in &keys {
            assert!(
                (0x0a00_0000..0x0a00_0004).contains(k) || *k == 0xc000_0000,
                "{k:x}"
            );
            seen.insert(*k);
        }
        // 5 addresses in the union, each drawn with probability 1/5.
        assert_eq!(seen.len(), 5);
        assert_eq!(random_keys_in(&prefixes, 10, 7), keys[..10]);
        assert!(random_keys_in(&[], 10, 7).is_empty());
        assert_eq!(random_keys_in(&[(0, 0)], 3, 1).len(), 3);
    }
}
