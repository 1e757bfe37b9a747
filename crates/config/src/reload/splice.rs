//! Replacing many runs of a large vector in one pass, in place.
//!
//! A multi-hunk edit of a full view changes a few thousand runs of its 28 MB text, its
//! 900k routes and its 900k line starts. Splicing each run in turn would move the tail
//! once per run (gigabytes); copying into a new vector costs a second buffer and its page
//! faults. Here every unchanged segment is moved once, straight to its final place:
//! segments that move left are moved front to back and segments that move right back to
//! front, so no segment is overwritten before it has moved (destinations and sources
//! keep their order, and a segment's destination never reaches a segment that has yet to
//! move in the other direction).

use std::ops::Range;

/// One run to replace: `old` (in the vector before the splice) by `new_len` elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Run {
    pub old: Range<usize>,
    pub new_len: usize,
}

/// Replaces each run of `v` (ordered, not overlapping) by `new_len` elements written by
/// `fill(k, slot)` for run `k`; `fill` is called once per run, in order. `pad` is any
/// value, to grow the vector with before the moves.
pub(super) fn splice_runs<T: Copy>(
    v: &mut Vec<T>,
    runs: &[Run],
    pad: T,
    mut fill: impl FnMut(usize, &mut [T]),
) {
    let old_len = v.len();
    let new_len = runs
        .iter()
        .fold(old_len, |n, r| n - r.old.len() + r.new_len);
    if new_len > old_len {
        v.resize(new_len, pad);
    }
    // Segment k is the unchanged stretch before run k (k == runs.len(): after the last).
    let shifts = shifts(runs);
    for (k, &shift) in shifts.iter().enumerate() {
        if shift < 0 {
            let src = segment_range(runs, k, old_len);
            v.copy_within(src.clone(), (src.start as isize + shift) as usize);
        }
    }
    for (k, &shift) in shifts.iter().enumerate().rev() {
        if shift > 0 {
            let src = segment_range(runs, k, old_len);
            v.copy_within(src.clone(), (src.start as isize + shift) as usize);
        }
    }
    for (k, r) in runs.iter().enumerate() {
        let at = (r.old.start as isize + shifts[k]) as usize;
        fill(k, &mut v[at..at + r.new_len]);
    }
    v.truncate(new_len);
}

/// Shift of each segment (see [`splice_runs`]): the growth of all runs before it.
fn shifts(runs: &[Run]) -> Vec<isize> {
    let mut out = Vec::with_capacity(runs.len() + 1);
    let mut s = 0isize;
    out.push(0);
    for r in runs {
        s += r.new_len as isize - r.old.len() as isize;
        out.push(s);
    }
    out
}

fn segment_range(runs: &[Run], k: usize, old_len: usize) -> Range<usize> {
    let start = if k == 0 { 0 } else { runs[k - 1].old.end };
    let end = runs.get(k).map_or(old_len, |r| r.old.start);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same splice done run by run with `Vec::splice`.
    fn slow(v: &[u32], runs: &[Run], new: &[Vec<u32>]) -> Vec<u32> {
        let mut out = v.to_vec();
        for (r, n) in runs.iter().zip(new).rev() {
            out.splice(r.old.clone(), n.iter().copied());
        }
        out
    }

    #[test]
    fn matches_splicing_run_by_run() {
        let mut seed = 0x9e37_79b9_u64;
        let mut rnd = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for case in 0..2000 {
            let len = rnd(60);
            let v: Vec<u32> = (0..len as u32).collect();
            let mut runs = Vec::new();
            let mut new = Vec::new();
            let mut at = 0;
            while at <= len && rnd(4) != 0 {
                let start = at + rnd(len - at + 1);
                let end = start + rnd(len - start + 1).min(5);
                let n = rnd(7);
                new.push(
                    (0..n as u32)
                        .map(|x| 1000 * (runs.len() as u32 + 1) + x)
                        .collect(),
                );
                runs.push(Run {
                    old: start..end,
                    new_len: n,
                });
                at = end;
                if at == len {
                    break;
                }
            }
            let want = slow(&v, &runs, &new);
            let mut got = v.clone();
            let mut calls = 0;
            splice_runs(&mut got, &runs, 0, |k, slot: &mut [u32]| {
                assert_eq!(k, calls);
                calls += 1;
                slot.copy_from_slice(&new[k]);
            });
            assert_eq!(calls, runs.len());
            assert_eq!(got, want, "case {case}: {runs:?}");
        }
    }
}
