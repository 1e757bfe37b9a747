//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).

/// One's-complement sum of `data` (odd trailing byte padded with zero), folded to 16 bits,
/// not inverted. Chain several buffers with [`combine`].
pub fn sum(data: &[u8]) -> u16 {
    let mut acc: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        acc += (*last as u64) << 8;
    }
    fold(acc)
}

/// One's-complement addition of partial sums.
pub fn combine(sums: &[u16]) -> u16 {
    fold(sums.iter().map(|&s| s as u64).sum())
}

#[inline]
fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The checksum to store in a header covering `data` (its checksum field zeroed).
pub fn compute(data: &[u8]) -> u16 {
    !sum(data)
}

/// RFC 1624 eqn. 3: the new checksum after one 16-bit word changed from `old` to `new`:
/// `HC' = ~(~HC + ~m + m')`, with end-around carry. Never yields 0xFFFF from a valid sum
/// the way eqn. 2 (`HC - ~m - m'`) can.
#[inline]
pub fn update16(checksum: u16, old: u16, new: u16) -> u16 {
    let acc = (!checksum) as u32 + (!old) as u32 + new as u32;
    let acc = (acc & 0xffff) + (acc >> 16);
    let acc = (acc & 0xffff) + (acc >> 16);
    !(acc as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the sum of these words is 0xddf2.
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(sum(&d), 0xddf2);
        assert_eq!(compute(&d), !0xddf2);
    }

    #[test]
    fn incremental_matches_full_recompute() {
        let mut h = [
            0x45u8, 0, 0, 0x54, 0x12, 0x34, 0x40, 0, 0x40, 0x01, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let c = compute(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        for ttl in (0u8..=0x40).rev() {
            let old = u16::from_be_bytes([h[8], h[9]]);
            h[8] = ttl;
            let new = u16::from_be_bytes([h[8], h[9]]);
            let inc = update16(u16::from_be_bytes([h[10], h[11]]), old, new);
            h[10..12].copy_from_slice(&[0, 0]);
            assert_eq!(inc, compute(&h), "ttl {ttl}");
            h[10..12].copy_from_slice(&inc.to_be_bytes());
        }
    }
}
