//! IPv6 prefix lists (one `addr/len` per line, plain or gzip, as `prefix_list` reads
//! IPv4 ones) and destinations drawn from them: the inputs of the `Lpm6` tests and
//! benchmarks.
//!
//! Pure: it takes bytes and returns vectors; reading the file is the caller's business.

use super::lpm6::mask6;
use super::prefix_list::{parse_lines, read_text, PrefixListError, SplitMix64};

/// Why an IPv6 prefix list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PrefixList6Error {
    #[error("line {line}: `{text}` is not an IPv6 prefix (expected addr/len, len <= 128)")]
    BadLine { line: usize, text: String },
    #[error(transparent)]
    Read(#[from] PrefixListError),
}

/// Parses an IPv6 prefix list: blank lines and `#` comments are skipped, host bits are
/// cleared, gzip input (by its magic bytes) is decompressed first.
pub fn parse_prefix_list6(bytes: &[u8]) -> Result<Vec<(u128, u8)>, PrefixList6Error> {
    let text = read_text(bytes)?;
    parse_lines(&text, 128, |a: std::net::Ipv6Addr, len| {
        (u128::from(a) & mask6(len), len)
    })
    .map_err(|(line, text)| PrefixList6Error::BadLine { line, text })
}

fn next_u128(rng: &mut SplitMix64) -> u128 {
    (rng.next_u64() as u128) << 64 | rng.next_u64() as u128
}

/// `n` destinations drawn uniformly from the union of the space the prefixes cover
/// (every key has a route; the short prefixes get nearly all keys), from `seed`.
pub fn random_keys_in6(prefixes: &[(u128, u8)], n: usize, seed: u64) -> Vec<u128> {
    let mut rng = SplitMix64(seed);
    if prefixes.iter().any(|p| p.1 == 0) {
        return (0..n).map(|_| next_u128(&mut rng)).collect();
    }
    let mut iv: Vec<(u128, u128)> = prefixes.iter().map(|&(a, l)| (a, a | !mask6(l))).collect();
    iv.sort_unstable();
    let mut merged: Vec<(u128, u128)> = Vec::new();
    for (s, e) in iv {
        match merged.last_mut() {
            Some(last) if s <= last.1.saturating_add(1) => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    if merged.is_empty() {
        return Vec::new();
    }
    // No /0, so the union is smaller than 2^128 and the sizes add up in a u128.
    let (mut cum, mut total) = (Vec::with_capacity(merged.len()), 0u128);
    for &(s, e) in &merged {
        cum.push(total);
        total += e - s + 1;
    }
    (0..n)
        .map(|_| {
            let r = next_u128(&mut rng) % total;
            let i = cum.partition_point(|&c| c <= r) - 1;
            merged[i].0 + (r - cum[i])
        })
        .collect()
}

/// `n` destinations each inside a prefix picked uniformly (host bits random): every
/// prefix length is drawn as often as it appears in the table, so deep prefixes are
/// exercised (the longest match may be a longer prefix inside the one picked).
pub fn random_keys_per_prefix6(prefixes: &[(u128, u8)], n: usize, seed: u64) -> Vec<u128> {
    if prefixes.is_empty() {
        return Vec::new();
    }
    let mut rng = SplitMix64(seed);
    (0..n)
        .map(|_| {
            let (a, l) = prefixes[(rng.next_u64() % prefixes.len() as u64) as usize];
            a | (next_u128(&mut rng) & !mask6(l))
        })
        .collect()
}

/// Gives each prefix one of `distinct` values by a fixed hash (as `spread_values` does).
pub fn spread_values6(prefixes: &[(u128, u8)], distinct: u32) -> Vec<(u128, u8, u32)> {
    assert!(distinct > 0);
    prefixes
        .iter()
        .map(|&(a, l)| {
            let h = SplitMix64((a >> 64) as u64 ^ (a as u64) << 8 ^ u64::from(l)).next_u64();
            (a, l, (h % u64::from(distinct)) as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plain_and_gzip_with_line_numbers() {
        let text = "# c\n2001:db8::/32\n\n2001:db8:1:2::7/48 # host bits\n::/0\n";
        let want = vec![
            (0x2001_0db8u128 << 96, 32),
            (0x2001_0db8_0001u128 << 80, 48),
            (0, 0),
        ];
        assert_eq!(parse_prefix_list6(text.as_bytes()).unwrap(), want);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
        assert_eq!(parse_prefix_list6(&gz.finish().unwrap()).unwrap(), want);
        for bad in ["2001:db8::/129", "10.0.0.0/8", "2001:db8::", "x/8"] {
            match parse_prefix_list6(format!("::/0\n{bad}\n").as_bytes()) {
                Err(PrefixList6Error::BadLine { line: 2, text }) => assert_eq!(text, bad),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn random_keys_stay_inside() {
        let p = [
            (0x2001_0db8u128 << 96, 126),
            (0x2001_0db8u128 << 96 | 4, 127),
            (1, 128),
        ];
        let keys = random_keys_in6(&p, 1000, 3);
        let mut seen = std::collections::HashSet::new();
        for k in &keys {
            assert!(*k == 1 || (*k >> 3) == (0x2001_0db8u128 << 93), "{k:x}");
            seen.insert(*k);
        }
        assert_eq!(seen.len(), 7);
        for k in random_keys_per_prefix6(&p, 1000, 3) {
            assert!(p.iter().any(|&(a, l)| k & mask6(l) == a), "{k:x}");
        }
        assert_eq!(random_keys_in6(&[(0, 0)], 4, 1).len(), 4);
    }
}
