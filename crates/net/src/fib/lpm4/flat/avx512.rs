//! The batched lookup in AVX-512, sixteen keys a step: a gather of the top entries, then
//! for the keys whose entry is a record (without children) a gather of the leaf-run
//! bitmaps, a population count per lane, and a gather of the leaves. Records with
//! children (rare: a /25 or longer in the /18) finish one by one in the scalar walk.
//!
//! The passes are the scalar batch's, each a gather: every group's top entries, then
//! every group's bitmaps, then each group's leaves, so that the loads of four groups are
//! in flight together (one pass per group ran 25% slower on the full view).
//!
//! It must give exactly the scalar batch's answers: `flat.rs`'s tests compare the two on
//! every table they build. It never reads outside a record: a leaf is read as the
//! aligned word that holds it (leaves end on a word), and masked-off lanes of a gather
//! read nothing. Valgrind has no AVX-512, so callgrind (worker-ir) sees only the scalar
//! batch; measure this one on the wall clock.

use std::arch::x86_64::*;

use super::super::block::NODE;
use super::{Flat, KIDS, LEAFVEC};

/// Sixteen keys after the first two passes.
#[derive(Clone, Copy)]
struct Group {
    /// Lanes that hold a key.
    mask: __mmask16,
    keys: __m512i,
    /// Their top entries.
    entries: __m512i,
    /// The leaf-run bitmaps of their records without children, lanes 0-7 then 8-15.
    bitmaps: (__m512i, __m512i),
}

/// Of the top entries `e` (lanes under `m`): the lanes that point at a record without
/// children, those that point at one with children, and every lane's record offset
/// (without the flags).
#[inline]
#[target_feature(enable = "avx512f")]
fn records(e: __m512i, m: __mmask16) -> (__mmask16, __mmask16, __m512i) {
    let node = _mm512_mask_cmplt_epi32_mask(m, e, _mm512_setzero_si512());
    let kids = _mm512_mask_test_epi32_mask(node, e, _mm512_set1_epi32(KIDS as i32));
    let offset = _mm512_and_si512(e, _mm512_set1_epi32(!(NODE | KIDS) as i32));
    (node & !kids, kids, offset)
}

impl Flat {
    /// [`Flat::lookup_batch`] for leaves of `W` bytes, sixteen keys a step.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and VPOPCNTDQ.
    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    pub(super) unsafe fn lookup_batch_avx512<const W: usize>(
        &self,
        addrs: &[u32],
        out: &mut [u32],
    ) {
        const GROUPS: usize = 4;
        let n = addrs.len().min(out.len());
        let top = self.top.buf().as_ptr();
        let zero = _mm512_setzero_si512();
        let mut base = 0;
        while base < n {
            // Separate arrays, not an array of `Group`s: that form ran the full view 20%
            // slower (the compiler kept the groups in memory).
            let mut keys = [zero; GROUPS];
            let mut entries = [zero; GROUPS];
            let mut masks = [0u16; GROUPS];
            let count = (n - base).div_ceil(16).min(GROUPS);
            for g in 0..count {
                let i = base + 16 * g;
                let left = n - i;
                masks[g] = if left >= 16 {
                    0xffff
                } else {
                    (1u16 << left) - 1
                };
                // SAFETY: lanes under the mask are keys `i..i + 16` of `addrs`; the top
                // array has 2^18 entries and `key >> 14` < 2^18.
                unsafe {
                    keys[g] = _mm512_maskz_loadu_epi32(masks[g], addrs.as_ptr().add(i).cast());
                    entries[g] = _mm512_mask_i32gather_epi32::<4>(
                        zero,
                        masks[g],
                        _mm512_srli_epi32::<14>(keys[g]),
                        top.cast(),
                    );
                }
            }
            let mut bitmaps = [(zero, zero); GROUPS];
            for g in 0..count {
                // SAFETY: the caller's promise.
                bitmaps[g] = unsafe { self.leaf_bitmaps(entries[g], masks[g]) };
            }
            for g in 0..count {
                let group = Group {
                    mask: masks[g],
                    keys: keys[g],
                    entries: entries[g],
                    bitmaps: bitmaps[g],
                };
                // SAFETY: the caller's promise; `base + 16 * g` starts the group's keys.
                unsafe { self.finish_group::<W>(&group, base + 16 * g, addrs, out) };
            }
            base += 16 * GROUPS;
        }
    }

    /// The answers for group `g` (keys `addrs[i..]`), stored at `out[i..]`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and VPOPCNTDQ; `g`'s lanes are keys of `addrs[i..]`, with room
    /// in `out[i..]`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    unsafe fn finish_group<const W: usize>(
        &self,
        g: &Group,
        i: usize,
        addrs: &[u32],
        out: &mut [u32],
    ) {
        let (m, keys, e, (lv_lo, lv_hi)) = (g.mask, g.keys, g.entries, g.bitmaps);
        let arena = self.arena.buf.buf().as_ptr();
        let inherit = self.inherit.as_ptr();
        let zero = _mm512_setzero_si512();
        let width_mask = if W == 4 {
            u32::MAX
        } else {
            (1u32 << (8 * W)) - 1
        };
        // SAFETY: record offsets and leaf words are inside the arena (see `Flat::walk`);
        // the inherit array has 256 entries and `key >> 24` < 256; lanes under `m` are
        // inside `out`.
        unsafe {
            let (rec, kids, r) = records(e, m);
            let mut v = e;
            if rec != 0 {
                let slot = _mm512_and_si512(_mm512_srli_epi32::<8>(keys), _mm512_set1_epi32(63));
                let s_lo = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(slot));
                let s_hi = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(slot));
                // Bits 0..=slot: (2 << slot) - 1 (slot 63 wraps to all ones).
                let two = _mm512_set1_epi64(2);
                let one = _mm512_set1_epi64(1);
                let c_lo = _mm512_popcnt_epi64(_mm512_and_si512(
                    lv_lo,
                    _mm512_sub_epi64(_mm512_sllv_epi64(two, s_lo), one),
                ));
                let c_hi = _mm512_popcnt_epi64(_mm512_and_si512(
                    lv_hi,
                    _mm512_sub_epi64(_mm512_sllv_epi64(two, s_hi), one),
                ));
                let count = _mm512_inserti64x4::<1>(
                    _mm512_castsi256_si512(_mm512_cvtepi64_epi32(c_lo)),
                    _mm512_cvtepi64_epi32(c_hi),
                );
                // Leaf `count - 1`, `W` bytes each, after the leaf-run bitmap.
                let index = _mm512_sub_epi32(count, _mm512_set1_epi32(1));
                let byte = match W {
                    1 => index,
                    2 => _mm512_slli_epi32::<1>(index),
                    _ => _mm512_slli_epi32::<2>(index),
                };
                let word = _mm512_add_epi32(
                    _mm512_add_epi32(r, _mm512_set1_epi32(LEAFVEC as i32)),
                    _mm512_srli_epi32::<2>(byte),
                );
                #[cfg(debug_assertions)]
                self.check_leaf_words(rec, r, word);
                let dw = _mm512_mask_i32gather_epi32::<4>(zero, rec, word, arena.cast());
                let leaf = if W == 4 {
                    dw
                } else {
                    let sh = _mm512_slli_epi32::<3>(_mm512_and_si512(byte, _mm512_set1_epi32(3)));
                    _mm512_and_si512(
                        _mm512_srlv_epi32(dw, sh),
                        _mm512_set1_epi32(width_mask as i32),
                    )
                };
                v = _mm512_mask_mov_epi32(v, rec, leaf);
            }
            let none = _mm512_mask_cmpeq_epi32_mask(m & !kids, v, zero);
            if none != 0 {
                v = _mm512_mask_i32gather_epi32::<4>(
                    v,
                    none,
                    _mm512_srli_epi32::<24>(keys),
                    inherit.cast(),
                );
            }
            let res = _mm512_sub_epi32(v, _mm512_set1_epi32(1));
            _mm512_mask_storeu_epi32(out.as_mut_ptr().add(i).cast(), m, res);
            let mut k = kids;
            while k != 0 {
                let j = i + k.trailing_zeros() as usize;
                k &= k - 1;
                let key = *addrs.get_unchecked(j);
                let r = self.top_entry(key) & !NODE;
                *out.get_unchecked_mut(j) = self
                    .or_inherit(self.walk(r as usize, key), key)
                    .wrapping_sub(1);
            }
        }
    }

    /// The leaf-run bitmaps of the records (without children) that top entries `e` (lanes
    /// under `m`) point to, lanes 0-7 then 8-15; zero in the other lanes.
    ///
    /// # Safety
    /// The CPU has AVX-512 F and VPOPCNTDQ; `e` are top entries of this table.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
    unsafe fn leaf_bitmaps(&self, e: __m512i, m: __mmask16) -> (__m512i, __m512i) {
        let arena = self.arena.buf.buf().as_ptr();
        let zero = _mm512_setzero_si512();
        let (rec, _, r) = records(e, m);
        // SAFETY: records are inside the arena (see `Flat::walk`), and masked-off lanes
        // read nothing.
        unsafe {
            (
                _mm512_mask_i32gather_epi64::<4>(
                    zero,
                    rec as u8,
                    _mm512_castsi512_si256(r),
                    arena.cast(),
                ),
                _mm512_mask_i32gather_epi64::<4>(
                    zero,
                    (rec >> 8) as u8,
                    _mm512_extracti64x4_epi64::<1>(r),
                    arena.cast(),
                ),
            )
        }
    }

    /// Debug builds: every lane under `rec` reads its record's bitmap (at `r`) and a leaf
    /// word (at `word`) inside the arena's written part.
    #[cfg(debug_assertions)]
    #[target_feature(enable = "avx512f")]
    fn check_leaf_words(&self, rec: __mmask16, r: __m512i, word: __m512i) {
        let (mut records, mut words) = ([0u32; 16], [0u32; 16]);
        // SAFETY: each array holds sixteen u32s, the width of a vector.
        unsafe {
            _mm512_storeu_si512(records.as_mut_ptr().cast(), r);
            _mm512_storeu_si512(words.as_mut_ptr().cast(), word);
        }
        let used = self.arena.used();
        for j in (0..16).filter(|j| rec & (1 << j) != 0) {
            let (o, w) = (records[j] as usize, words[j] as usize);
            debug_assert!(o + LEAFVEC <= used, "record at {o} past {used}");
            debug_assert!(
                o + LEAFVEC <= w && w < used,
                "leaf word {w} of record {o}, {used} used"
            );
        }
    }
}
