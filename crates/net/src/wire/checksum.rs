//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).

/// One's-complement sum of `data` (odd trailing byte padded with zero), folded to 16 bits,
/// not inverted. Chain several buffers with [`combine`].
#[inline]
pub fn sum(data: &[u8]) -> u16 {
    // 32-bit words: 2^16 = 1 (mod 0xffff), so a word adds the same as its two halves, and a
    // 20-byte header is five loads.
    let mut acc: u64 = 0;
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let mut pairs = words.remainder().chunks_exact(2);
    for c in &mut pairs {
        acc += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = pairs.remainder() {
        acc += (*last as u64) << 8;
    }
    fold(acc)
}

/// One's-complement addition of partial sums.
pub fn combine(sums: &[u16]) -> u16 {
    fold(sums.iter().map(|&s| s as u64).sum())
}

/// Folds a 64-bit sum to 16 bits with end-around carry, without a loop (a 20-byte header
/// took three rounds of a data-dependent loop): 64 -> 33 -> 18 -> 17 -> 16 bits.
#[inline]
fn fold(acc: u64) -> u16 {
    let a = (acc & 0xffff_ffff) + (acc >> 32);
    let a = (a & 0xffff) + (a >> 16);
    let a = (a & 0xffff) + (a >> 16);
    let a = (a & 0xffff) + (a >> 16);
    a as u16
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

/// Whether an option-less IPv4 header verifies: the same answer as
/// `sum(header) == 0xffff`, in fewer instructions for the fast path. The words are summed
/// in native byte order: a byte swap multiplies a sum by 256 modulo 0xffff, which is
/// invertible, so a sum is a multiple of 0xffff in either order or in neither. A nonzero
/// multiple of 0xffff folds to 0xffff; only the all-zero header sums to 0.
///
/// The test for a nonzero multiple is one multiply and one compare: for odd `d`, `x` is a
/// multiple of `d` exactly when `x * d⁻¹ mod 2⁶⁴` is at most `(2⁶⁴ - 1) / d` (the
/// product is then `x / d`), and subtracting 1 first also turns 0 away. LLVM's
/// `is_multiple_of(0xffff)` took a high multiply and four more instructions here.
#[inline]
pub fn ipv4_header_verifies(header: &[u8; 20]) -> bool {
    let acc: u64 = header
        .chunks_exact(4)
        .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]) as u64)
        .sum();
    acc.wrapping_mul(FFFF_INVERSE).wrapping_sub(1) < u64::MAX / 0xffff
}

/// 0xffff's inverse modulo 2⁶⁴, by Newton's iteration: an odd `d` is its own inverse
/// modulo 8, and each step doubles the bits that are right (3, 6, ..., 96).
const FFFF_INVERSE: u64 = {
    let mut inverse: u64 = 0xffff;
    let mut step = 0;
    while step < 5 {
        inverse = inverse.wrapping_mul(2u64.wrapping_sub(0xffffu64.wrapping_mul(inverse)));
        step += 1;
    }
    inverse
};

/// The checksum after the TTL (the high byte of its 16-bit word) went down by one, as
/// [`update16`] computes it (RFC 1624 eqn. 3), in fewer instructions: `~m + m'` is the
/// constant `0xfeff` whatever the word (the TTL was at least 1), so one end-around carry
/// suffices; and a one's-complement sum does not depend on byte order (RFC 1071 §2), so
/// `stored` is the checksum field as two bytes in memory order, and so is the result.
#[inline]
pub fn after_ttl_decrement(stored: [u8; 2]) -> [u8; 2] {
    // 0xfeff with its bytes swapped, as a native-order read sees them on either endianness.
    let add = u16::from_ne_bytes(0xfeffu16.to_be_bytes()) as u32;
    let acc = (!u16::from_ne_bytes(stored)) as u32 + add;
    let acc = (acc & 0xffff) + (acc >> 16);
    (!(acc as u16)).to_ne_bytes()
}

/// The checksum after the TTL (the high byte of its 16-bit word, first in memory) changed
/// from `old` to `new`, as [`update16`] computes it, in fewer instructions: `~m + m'` is
/// `0xffff + (new - old) * 256`, and, the sum not depending on byte order (RFC 1071 §2),
/// `stored` and the result are the checksum field as two bytes in memory order, where the
/// TTL byte weighs `u16::from_ne_bytes([1, 0])`. The sum stays positive (at least
/// `0xffff - 255 * 256`) and under 2^18: two end-around carries fold it.
#[inline]
pub fn after_ttl_change(stored: [u8; 2], old: u8, new: u8) -> [u8; 2] {
    let weight = i32::from(u16::from_ne_bytes([1, 0]));
    let delta = (i32::from(new) - i32::from(old)) * weight;
    let acc = (i32::from(!u16::from_ne_bytes(stored)) + 0xffff + delta) as u32;
    let acc = (acc & 0xffff) + (acc >> 16);
    let acc = (acc & 0xffff) + (acc >> 16);
    (!(acc as u16)).to_ne_bytes()
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

    /// The textbook definition: 16-bit words, end-around carry after every addition.
    fn reference(data: &[u8]) -> u16 {
        let mut acc: u32 = 0;
        for c in data.chunks(2) {
            let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
            acc += w;
            acc = (acc & 0xffff) + (acc >> 16);
        }
        acc as u16
    }

    proptest::proptest! {
        #[test]
        fn word_sum_equals_the_16_bit_definition(data in proptest::collection::vec(0u8..=255, 0..80)) {
            proptest::prop_assert_eq!(sum(&data), reference(&data));
        }

        #[test]
        fn fold_equals_repeated_end_around_carry(acc in proptest::prelude::any::<u64>()) {
            let mut r = acc;
            while r > 0xffff {
                r = (r & 0xffff) + (r >> 16);
            }
            proptest::prop_assert_eq!(fold(acc), r as u16);
        }

        #[test]
        fn native_order_verification_equals_the_folded_sum(
            mut h in proptest::array::uniform20(0u8..=255),
            fix in proptest::prelude::any::<bool>(),
        ) {
            // Half the cases get a correct checksum, so both answers are exercised.
            if fix {
                h[10] = 0;
                h[11] = 0;
                let c = compute(&h);
                h[10..12].copy_from_slice(&c.to_be_bytes());
            }
            proptest::prop_assert_eq!(ipv4_header_verifies(&h), sum(&h) == 0xffff);
        }

        #[test]
        fn all_ones_words_fold_to_ffff(n in 1usize..40) {
            // A nonzero multiple of 0xffff must give 0xffff, never 0.
            proptest::prop_assert_eq!(sum(&vec![0xff; n * 2]), 0xffff);
        }
    }

    #[test]
    fn fold_extremes() {
        assert_eq!(fold(u64::MAX), 0xffff);
        assert_eq!(fold(0xffff), 0xffff);
        assert_eq!(fold(0x1_0000), 1);
        assert_eq!(fold(0), 0);
    }

    #[test]
    fn the_inverse_of_ffff() {
        assert_eq!(FFFF_INVERSE.wrapping_mul(0xffff), 1);
    }

    proptest::proptest! {
        #[test]
        fn multiple_test_equals_the_remainder(acc in 0u64..=5 * u32::MAX as u64, k in 0u64..0x5_0005) {
            // Any sum of five u32 words, and (k) multiples of 0xffff and their neighbours
            // in that range, which random sums would seldom hit.
            for x in [acc, k * 0xffff, (k * 0xffff).saturating_sub(1), k * 0xffff + 1] {
                // Five words that add up to x: each takes up to u32::MAX of what is left.
                let max = u32::MAX as u64;
                let mut h = [0u8; 20];
                for (i, w) in h.chunks_exact_mut(4).enumerate() {
                    let v = x.saturating_sub(i as u64 * max).min(max);
                    w.copy_from_slice(&(v as u32).to_ne_bytes());
                }
                proptest::prop_assert_eq!(ipv4_header_verifies(&h), x != 0 && x % 0xffff == 0, "sum {}", x);
            }
        }
    }

    #[test]
    fn header_verification_extremes() {
        assert!(
            !ipv4_header_verifies(&[0; 20]),
            "all zero sums to 0, not 0xffff"
        );
        assert!(ipv4_header_verifies(&[0xff; 20]));
        let mut h = [0u8; 20];
        h[0] = 0x45;
        let c = compute(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        assert!(ipv4_header_verifies(&h));
        h[19] ^= 1;
        assert!(!ipv4_header_verifies(&h));
    }

    #[test]
    fn ttl_decrement_update_equals_the_general_one_for_every_checksum() {
        for checksum in 0..=u16::MAX {
            for (ttl, proto) in [(1u8, 0u8), (2, 6), (64, 17), (255, 255)] {
                let old = u16::from_be_bytes([ttl, proto]);
                let new = u16::from_be_bytes([ttl - 1, proto]);
                assert_eq!(
                    after_ttl_decrement(checksum.to_be_bytes()),
                    update16(checksum, old, new).to_be_bytes(),
                    "checksum {checksum:#06x} ttl {ttl}"
                );
            }
        }
    }

    #[test]
    fn ttl_change_update_equals_the_general_one_for_every_checksum() {
        for checksum in 0..=u16::MAX {
            for (old, new, proto) in [
                (64u8, 63u8, 17u8),
                (255, 0, 6),
                (0, 255, 1),
                (1, 1, 0),
                (9, 200, 255),
            ] {
                let (m, m2) = (
                    u16::from_be_bytes([old, proto]),
                    u16::from_be_bytes([new, proto]),
                );
                assert_eq!(
                    after_ttl_change(checksum.to_be_bytes(), old, new),
                    update16(checksum, m, m2).to_be_bytes(),
                    "checksum {checksum:#06x} ttl {old} -> {new}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn ttl_change_update_equals_the_general_one(checksum: u16, old: u8, new: u8, proto: u8) {
            let (m, m2) = (u16::from_be_bytes([old, proto]), u16::from_be_bytes([new, proto]));
            proptest::prop_assert_eq!(
                after_ttl_change(checksum.to_be_bytes(), old, new),
                update16(checksum, m, m2).to_be_bytes()
            );
        }
    }

    #[test]
    fn zero_sums_to_zero() {
        assert_eq!(sum(&[0; 20]), 0);
        assert_eq!(sum(&[]), 0);
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
