//! Which lines changed between two texts: every changed run, not one span from the first
//! change to the last.
//!
//! BGP-like churn touches a few thousand routes spread over a 900k-line full view. Taken
//! as one span, that edit is nearly the whole file, and the reload fast path would parse
//! all of it again (1.7 s). Here both texts are walked together: equal bytes are skipped
//! with block compares, and at a mismatch the two line sequences are resynchronised on
//! the nearest pair of equal lines (a changed line, lines inserted, lines deleted), so
//! only the changed runs ([`Hunk`]s) are left to parse.
//!
//! Any alignment of equal lines gives a correct result (the hunks rebuild the new text
//! exactly); the search only tries to keep the hunks small. It is bounded: a mismatch
//! first compares every pair of the [`NEAR`] lines ahead on each side, then looks for
//! equal lines through a hash table over windows growing to [`FAR`] lines; past that, or
//! past [`MAX_HUNKS`], the rest of the texts is one hunk (the caller decides whether that
//! is still worth a fast path).

use std::hash::{BuildHasher, BuildHasherDefault};
use std::ops::Range;

use super::source::common_prefix;
use crate::types::{FastHasher, FastMap};

/// Lines looked at on each side before the hash table search (every pair is compared).
const NEAR: usize = 8;
/// Lines looked at on each side by the hash table search.
pub(super) const FAR: usize = 4096;
/// Most hunks kept; the rest of the texts after that many is one more hunk.
pub(super) const MAX_HUNKS: usize = 1 << 16;

/// One changed run of whole lines: `old[old]` became `new[new]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Hunk {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// The changed runs between `a` and `b`, in order; empty when they are equal. Line
/// boundaries are `\n` (kept with their line); a last line may lack one.
pub(super) fn hunks(a: &[u8], b: &[u8]) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    let (mut i, mut j) = (0, 0);
    let mut look = Lookahead::default();
    loop {
        let p = common_prefix(&a[i..], &b[j..]);
        if i + p == a.len() && j + p == b.len() {
            return out;
        }
        // Back to the start of the line holding the first differing byte.
        let back = a[i..i + p]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |k| k + 1);
        let (hi, hj) = (i + back, j + back);
        let sync = if out.len() < MAX_HUNKS {
            look.resync(&a[hi..], &b[hj..])
        } else {
            None
        };
        let (ni, nj) = match sync {
            Some((da, db)) => (hi + da, hj + db),
            None => (a.len(), b.len()),
        };
        match out.last_mut() {
            // Touching the previous hunk (no equal line between): one hunk.
            Some(h) if h.old.end == hi && h.new.end == hj => {
                h.old.end = ni;
                h.new.end = nj;
            }
            _ => out.push(Hunk {
                old: hi..ni,
                new: hj..nj,
            }),
        }
        (i, j) = (ni, nj);
    }
}

/// Line ends and hashes of the lines ahead of a mismatch, on both sides; the buffers
/// are kept between mismatches.
#[derive(Default)]
struct Lookahead {
    a: Lines,
    b: Lines,
    table: FastMap<u64, u32>,
}

#[derive(Default)]
struct Lines {
    /// End offset (past the `\n`) of each line scanned so far.
    ends: Vec<usize>,
    hashes: Vec<u64>,
}

impl Lines {
    /// Scans lines of `t` until `n` are known (fewer at the end of `t`).
    fn fill(&mut self, t: &[u8], n: usize) {
        let hasher = BuildHasherDefault::<FastHasher>::default();
        while self.ends.len() < n {
            let s = self.ends.last().copied().unwrap_or(0);
            if s == t.len() {
                return;
            }
            let e = t[s..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(t.len(), |k| s + k + 1);
            self.ends.push(e);
            self.hashes.push(hasher.hash_one(&t[s..e]));
        }
    }

    fn start(&self, k: usize) -> usize {
        if k == 0 {
            0
        } else {
            self.ends[k - 1]
        }
    }

    fn line<'t>(&self, t: &'t [u8], k: usize) -> &'t [u8] {
        &t[self.start(k)..self.ends[k]]
    }

    fn clear(&mut self) {
        self.ends.clear();
        self.hashes.clear();
    }
}

impl Lookahead {
    /// Where `a` and `b` (both starting with differing lines) meet again: byte offsets of
    /// the first equal line on each side, or of both ends. `None`: not within the bounds.
    fn resync(&mut self, a: &[u8], b: &[u8]) -> Option<(usize, usize)> {
        self.a.clear();
        self.b.clear();
        self.a.fill(a, NEAR);
        self.b.fill(b, NEAR);
        // Nearest first: d lines skipped in all.
        for d in 1..=2 * NEAR {
            for da in d.saturating_sub(NEAR)..=d.min(NEAR) {
                if let Some(m) = self.meet(a, b, da, d - da) {
                    return Some(m);
                }
            }
        }
        // Then through a hash table of `b`'s lines, over windows growing to FAR lines: the
        // cost follows the distance to the next equal line, not the bound.
        let ended = |l: &Lines, t: &[u8]| l.ends.last().copied().unwrap_or(0) == t.len();
        let mut w = 4 * NEAR;
        loop {
            w = w.min(FAR);
            if let Some(m) = self.search(a, b, w) {
                return Some(m);
            }
            if w == FAR || ended(&self.a, a) && ended(&self.b, b) {
                break;
            }
            w *= 8;
        }
        // Both texts end within reach: the rest is the hunk.
        (ended(&self.a, a) && ended(&self.b, b)).then_some((a.len(), b.len()))
    }

    /// The equal pair of lines nearest the start among the first `w` lines of each side,
    /// as byte offsets.
    fn search(&mut self, a: &[u8], b: &[u8], w: usize) -> Option<(usize, usize)> {
        self.a.fill(a, w);
        self.b.fill(b, w);
        self.table.clear();
        for (k, h) in self.b.hashes.iter().enumerate().rev() {
            self.table.insert(*h, k as u32);
        }
        let mut best: Option<(usize, usize)> = None;
        for (da, h) in self.a.hashes.iter().enumerate() {
            if best.is_some_and(|(x, y)| da >= x + y) {
                break;
            }
            let Some(&db) = self.table.get(h) else {
                continue;
            };
            let db = db as usize;
            if self.a.line(a, da) == self.b.line(b, db) && best.is_none_or(|(x, y)| da + db < x + y)
            {
                best = Some((da, db));
            }
        }
        best.map(|(da, db)| (self.a.start(da), self.b.start(db)))
    }

    /// Byte offsets of line `da` of `a` and `db` of `b` if they are equal lines, or both
    /// the ends of their texts.
    fn meet(&self, a: &[u8], b: &[u8], da: usize, db: usize) -> Option<(usize, usize)> {
        let (na, nb) = (self.a.ends.len(), self.b.ends.len());
        if da < na && db < nb {
            (self.a.hashes[da] == self.b.hashes[db] && self.a.line(a, da) == self.b.line(b, db))
                .then(|| (self.a.start(da), self.b.start(db)))
        } else if da == na && db == nb && self.a.start(da) == a.len() && self.b.start(db) == b.len()
        {
            Some((a.len(), b.len()))
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rebuilds `b` from `a` and the hunks, checking they are whole lines, ordered and
    /// separated by equal lines.
    fn check(a: &str, b: &str) -> Vec<Hunk> {
        let hs = hunks(a.as_bytes(), b.as_bytes());
        let mut out = String::new();
        let (mut i, mut j) = (0, 0);
        for h in &hs {
            assert!(h.old.start >= i && h.new.start >= j, "{hs:?}");
            assert_eq!(&a[i..h.old.start], &b[j..h.new.start], "{hs:?}");
            if !out.is_empty() {
                assert!(h.old.start > i, "touching hunks not merged: {hs:?}");
            }
            for (t, r) in [(a, &h.old), (b, &h.new)] {
                assert!(r.start == 0 || t.as_bytes()[r.start - 1] == b'\n', "{hs:?}");
                assert!(
                    r.is_empty() || r.end == t.len() || t.as_bytes()[r.end - 1] == b'\n',
                    "{hs:?}"
                );
            }
            assert!(!h.old.is_empty() || !h.new.is_empty());
            out.push_str(&a[i..h.old.start]);
            out.push_str(&b[h.new.clone()]);
            (i, j) = (h.old.end, h.new.end);
        }
        assert_eq!(&a[i..], &b[j..], "{hs:?}");
        out.push_str(&a[i..]);
        assert_eq!(out, b);
        hs
    }

    fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("  - line {i}\n")).collect()
    }

    /// Old and new line counts of each hunk.
    fn shape(a: &str, b: &str) -> Vec<(usize, usize)> {
        check(a, b)
            .iter()
            .map(|h| {
                (
                    a[h.old.clone()].lines().count(),
                    b[h.new.clone()].lines().count(),
                )
            })
            .collect()
    }

    #[test]
    fn equal_texts_have_no_hunks() {
        assert_eq!(check("", ""), vec![]);
        assert_eq!(check("a\nb\n", "a\nb\n"), vec![]);
        assert_eq!(check("a\nb", "a\nb"), vec![]);
    }

    #[test]
    fn changed_inserted_and_deleted_lines_are_separate_hunks() {
        let a = lines(1000);
        let mut b = a.clone();
        b[10] = "  - line 10 changed\n".into();
        b.remove(500);
        b.insert(700, "  - new a\n".into());
        b.insert(700, "  - new b\n".into());
        b[900] = "x\n".into();
        let (a, b) = (a.concat(), b.concat());
        assert_eq!(shape(&a, &b), vec![(1, 1), (1, 0), (0, 2), (1, 1)]);
    }

    #[test]
    fn edits_at_the_start_and_end() {
        let l = lines(50);
        let a = l.concat();
        let (first, last) = (l[0].len(), l[49].len());
        assert_eq!(shape(&a, &format!("x\n{a}")), vec![(0, 1)]);
        assert_eq!(shape(&a, &a[first..]), vec![(1, 0)]);
        assert_eq!(shape(&a, &a[first + 1..]), vec![(2, 1)]);
        assert_eq!(shape(&a, &format!("{a}y\n")), vec![(0, 1)]);
        assert_eq!(shape(&a, &a[..a.len() - last]), vec![(1, 0)]);
        assert_eq!(shape(&a, &a[..a.len() - last - 1]), vec![(2, 1)]);
        assert_eq!(shape(&a, &format!("{a}y")), vec![(0, 1)]);
        // A last line without a newline gains one: that line changed.
        assert_eq!(shape("a\nb", "a\nb\n"), vec![(1, 1)]);
        assert_eq!(shape("a\nb\n", "a\nb"), vec![(1, 1)]);
        assert_eq!(shape("a\nb", "a\nc"), vec![(1, 1)]);
        assert_eq!(shape("", "a\n"), vec![(0, 1)]);
        assert_eq!(shape("a\n", ""), vec![(1, 0)]);
    }

    #[test]
    fn adjacent_changes_are_one_hunk() {
        let a = lines(100);
        let mut b = a.clone();
        b[20] = "x\n".into();
        b[21] = "y\n".into();
        b.remove(22);
        b[40] = "z\n".into();
        b.insert(41, "w\n".into());
        let (a, b) = (a.concat(), b.concat());
        assert_eq!(shape(&a, &b), vec![(3, 2), (1, 2)]);
    }

    #[test]
    fn a_long_insertion_or_deletion_is_found_through_the_table() {
        let a = lines(5000);
        let mut b = a.clone();
        let block: Vec<String> = (0..1000).map(|i| format!("ins {i}\n")).collect();
        b.splice(100..100, block.iter().cloned());
        b.drain(3000..3500);
        let (a, b) = (a.concat(), b.concat());
        assert_eq!(shape(&a, &b), vec![(0, 1000), (500, 0)]);
    }

    #[test]
    fn past_the_bounds_the_rest_is_one_hunk() {
        // Every line changed: no equal line within reach of the first mismatch.
        let a = lines(2 * FAR).concat();
        let b = a.replace("line", "LINE");
        let hs = check(&a, &b);
        assert_eq!(
            hs,
            vec![Hunk {
                old: 0..a.len(),
                new: 0..b.len()
            }]
        );
        // A block of FAR + 1 changed lines, then equal ones: beyond the table's reach.
        let a = lines(3 * FAR);
        let mut b = a.clone();
        for l in &mut b[10..FAR + 11] {
            *l = l.replace("line", "LINE");
        }
        b[2 * FAR] = "x\n".into();
        let (a, b) = (a.concat(), b.concat());
        assert_eq!(shape(&a, &b), vec![(3 * FAR - 10, 3 * FAR - 10)]);
    }

    #[test]
    fn runs_longer_than_the_near_search_are_found() {
        let a = lines(3000);
        let mut b = a.clone();
        let mut want = Vec::new();
        for (r, at) in (0..3000).step_by(100).enumerate() {
            let n = 9 + r % 40;
            for l in &mut b[at..at + n] {
                *l = l.replace("line", "LINE");
            }
            want.push((n, n));
        }
        let (a, b) = (a.concat(), b.concat());
        assert_eq!(shape(&a, &b), want);
    }

    #[test]
    fn repeated_lines_still_rebuild_the_text() {
        let a = "x\nx\ny\nx\n\n\nx\n";
        for b in [
            "x\ny\nx\n\n",
            "x\nx\nx\ny\nx\n\n\nx\n",
            "\n\n\n",
            "y\n",
            "x\nx\ny\nx\n\nz\n\nx\n",
        ] {
            check(a, b);
            check(b, a);
        }
    }
}
