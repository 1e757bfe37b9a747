//! The batch's first two passes in AVX-512, sixteen keys a gather: every key's top entry
//! and second entry (dense or top), and under a mini node its mini entry and direct leaf,
//! in passes over all the burst's groups so that their loads are in flight together.
//! Keys at a Poptrie root go through the scalar second pass (which lists them for the
//! walk), then the scalar walk finishes them. The keys come in by plain loads, not
//! gathers, and a gather no lane needs is skipped (both for AMD Zen 4, session 27).
//!
//! It must give exactly the scalar batch's answers: the tests of `lpm6_reference.rs` and
//! the lookup tests run it on AVX-512 CPUs and compare with single lookups. Every index
//! a gather reads is checked against its array's length first (one compare for sixteen
//! lanes; a failure panics as a slice index would), so its safety rests on no layout
//! invariant. Valgrind has no AVX-512: callgrind sees the scalar batch only.

use std::arch::x86_64::*;

use super::super::layout::{Arrays, DENSE, DENSE_BITS, KIND, LEAVES, NODE};
use super::{second_entry, Walking, BURST};

/// Groups of sixteen keys in a burst.
const GROUPS: usize = BURST / 16;

/// Panics unless every lane of `idx` under `m` is below `len`.
#[inline]
#[target_feature(enable = "avx512f")]
fn check_below(m: __mmask16, idx: __m512i, len: usize, what: &str) {
    let len = _mm512_set1_epi32(len.min(u32::MAX as usize) as i32);
    let bad = _mm512_mask_cmpge_epu32_mask(m, idx, len);
    assert!(bad == 0, "lpm6: a {what} index past its array");
}

/// Address bits 0-32 and 32-64 (dwords 3 and 2 of each `u128`) of the `n` keys (1 to
/// 16) that `keys` starts, one lane a key; lanes from `n` on are zero. Four plain loads
/// of four keys each and four permutes, not gathers, which are slow on AMD
/// (docs/benchmarks.md, "Session 27").
///
/// # Safety
/// `keys` starts at least `n` keys, `n <= 16`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn key_words(n: usize, keys: *const u128) -> (__m512i, __m512i) {
    let quad = |q: usize| {
        // Dwords of keys 4q..4q+4 that are among the first `n`.
        let m = (1u32 << (4 * n.saturating_sub(4 * q).min(4))) - 1;
        // `wrapping_add`, not `add`: with `m` empty the address may lie past the
        // slice's allocation, which `add` must not make.
        let at = keys.wrapping_add(4 * q).cast();
        // SAFETY: the lanes under `m` are dwords of the first `n` keys (the caller's
        // promise); masked-off lanes read nothing.
        unsafe { _mm512_maskz_loadu_epi32(m as __mmask16, at) }
    };
    let (a, b, c, d) = (quad(0), quad(1), quad(2), quad(3));
    // Of two quads: dword 3 of their eight keys in lanes 0-7, dword 2 in lanes 8-15.
    let pick = _mm512_setr_epi32(3, 7, 11, 15, 19, 23, 27, 31, 2, 6, 10, 14, 18, 22, 26, 30);
    let (ab, cd) = (
        _mm512_permutex2var_epi32(a, pick, b),
        _mm512_permutex2var_epi32(c, pick, d),
    );
    let lo = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    let hi = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    (
        _mm512_permutex2var_epi32(ab, lo, cd),
        _mm512_permutex2var_epi32(ab, hi, cd),
    )
}

/// The scalar batch's first two passes over one burst (at most `BURST` keys): `out`
/// gets every key's value (`NO_ROUTE` for none) and `w` the keys that walk on, as
/// `second_entry` leaves them; `at` gets each key's second index.
///
/// # Safety
/// The CPU has AVX-512 F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn first_passes(
    a: &Arrays,
    keys: &[u128],
    out: &mut [u32],
    at: &mut [u32; BURST],
    w: &mut Walking,
) {
    let n = keys.len().min(out.len()).min(BURST);
    let zero = _mm512_setzero_si512();
    let (direct, mini, leaves) = (a.direct.as_ptr(), a.mini.as_ptr(), a.leaves.as_ptr());
    let count = n.div_ceil(16);
    let mut masks = [0u16; GROUPS];
    let mut mid = [zero; GROUPS];
    let mut second = [zero; GROUPS];
    // Pass 1: address bits 0-32 and 32-64, the top entry, the second index.
    for g in 0..count {
        let left = n - 16 * g;
        let m = if left >= 16 {
            0xffff
        } else {
            (1u16 << left) - 1
        };
        masks[g] = m;
        let base = keys[16 * g..].as_ptr();
        // SAFETY: `keys[16 g..]` holds `left.min(16)` keys or more.
        let (h, md) = unsafe { key_words(left.min(16), base) };
        let ti = _mm512_srli_epi32::<DENSE_BITS>(h);
        // Always below CHUNKS, which `direct` starts with.
        check_below(m, ti, a.direct.len(), "top");
        // SAFETY: checked just above; masked-off lanes read nothing.
        let t = unsafe { _mm512_mask_i32gather_epi32::<4>(zero, m, ti, direct.cast()) };
        let dense = _mm512_or_si512(
            _mm512_andnot_si512(_mm512_set1_epi32(NODE as i32), t),
            _mm512_and_si512(h, _mm512_set1_epi32(DENSE as i32 - 1)),
        );
        let node = _mm512_mask_cmplt_epi32_mask(m, t, zero);
        second[g] = _mm512_mask_mov_epi32(ti, node, dense);
        mid[g] = md;
    }
    // Pass 2: every group's second entry (the gathers that miss) before any mini entry,
    // which depends on it; then under a mini node the mini entry.
    let mut entries = [zero; GROUPS];
    let mut minis = [zero; GROUPS];
    let mut bits = [zero; GROUPS];
    for g in 0..count {
        let m = masks[g];
        check_below(m, second[g], a.direct.len(), "dense");
        // SAFETY: checked just above.
        entries[g] = unsafe { _mm512_mask_i32gather_epi32::<4>(zero, m, second[g], direct.cast()) };
    }
    for g in 0..count {
        let (m, e) = (masks[g], entries[g]);
        let node = _mm512_mask_cmplt_epi32_mask(m, e, zero);
        // Bits of the mini node: (e & KIND) * 2.
        let b = _mm512_slli_epi32::<1>(_mm512_and_si512(e, _mm512_set1_epi32(KIND as i32)));
        let off = _mm512_andnot_si512(_mm512_set1_epi32((NODE | KIND) as i32), e);
        let shift = _mm512_sub_epi32(_mm512_set1_epi32(32), b);
        let mi = _mm512_add_epi32(off, _mm512_srlv_epi32(mid[g], shift));
        check_below(node, mi, a.mini.len(), "mini");
        // Skipped when no lane is under a mini node (and the leaves' below when none
        // has a direct leaf): docs/benchmarks.md, "Session 27".
        if node != 0 {
            // SAFETY: checked just above.
            minis[g] = unsafe { _mm512_mask_i32gather_epi32::<4>(zero, node, mi, mini.cast()) };
        }
        bits[g] = b;
    }
    // Pass 3: direct leaves, the answers, and the keys at a Poptrie root.
    for g in 0..count {
        let (m, e, mm, b) = (masks[g], entries[g], minis[g], bits[g]);
        let node = _mm512_mask_cmplt_epi32_mask(m, e, zero);
        let mini_node = _mm512_mask_cmplt_epi32_mask(node, mm, zero);
        let leafy = _mm512_mask_test_epi32_mask(mini_node, mm, _mm512_set1_epi32(LEAVES as i32));
        let root = mini_node & !leafy;
        // The slot below the mini node: address bits 32 + b .. 38 + b.
        let slot = _mm512_and_si512(
            _mm512_srlv_epi32(mid[g], _mm512_sub_epi32(_mm512_set1_epi32(26), b)),
            _mm512_set1_epi32(63),
        );
        let l = _mm512_add_epi32(
            _mm512_andnot_si512(_mm512_set1_epi32((NODE | LEAVES) as i32), mm),
            slot,
        );
        check_below(leafy, l, a.leaves.len(), "leaf");
        let leaf = if leafy != 0 {
            // SAFETY: checked just above.
            unsafe { _mm512_mask_i32gather_epi32::<4>(zero, leafy, l, leaves.cast()) }
        } else {
            zero
        };
        let v = _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(e, node, mm), leafy, leaf);
        let res = _mm512_sub_epi32(v, _mm512_set1_epi32(1));
        let i = 16 * g;
        // SAFETY: lanes under `m` are inside `out[i..n]` and `at[i..n]` (n <= BURST).
        unsafe {
            _mm512_mask_storeu_epi32(out[i..].as_mut_ptr().cast(), m, res);
            _mm512_mask_storeu_epi32(at[i..].as_mut_ptr().cast(), m, second[g]);
        }
        let mut r = root;
        while r != 0 {
            let j = i + r.trailing_zeros() as usize;
            r &= r - 1;
            out[j] = second_entry(a, keys[j], at[j], j, w);
        }
    }
}
