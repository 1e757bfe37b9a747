//! Reading the routes file against the last text: what changed, without copying it all.
//!
//! A full view is ~28 MB. Reading it into a buffer, validating it as UTF-8 and then
//! comparing it with the last text walked the data four times (page cache copy, the
//! buffer's own page writes, UTF-8, compare) and took most of the reload budget. Here
//! the file is read in small chunks that stay in cache and compared as they come, from
//! the front until the first differing byte, then from the back until the last; only
//! the bytes in between are kept. The result is widened to whole lines, so it can be
//! validated as UTF-8 on its own and spliced into the last text.
//!
//! The file is read with `pread`, not mapped: the routes file is often rewritten in
//! place (truncate, then write), and touching a mapped page past a concurrent truncate
//! raises SIGBUS, which would take the router down. A read that comes up short (the file
//! shrank while being read), or a file whose size or modification time moved between the
//! start and the end of the comparison, falls back to reading the whole file; a file
//! that changes during that read gives some mix of versions, as any read would, and the
//! change's own file event triggers another reload.
//!
//! The file is opened through [`crate::read::open`]: only a regular file, never blocking,
//! and neither the comparison (bounded by the size at open) nor the whole read (bounded
//! by `take`) reads past the routes file limit.

use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::str::Utf8Error;

use super::diff::{self, Hunk};
use super::splice::{splice_runs, Run};
use crate::diag::ConfigError;
use crate::read::{self, Limit};

/// Chunk size: small enough to stay in L2, big enough that syscalls do not matter.
const CHUNK: usize = 256 * 1024;

/// The new text as changed runs of whole lines of the old: each hunk's `old` range (line
/// starts of the old text, or its end) is replaced by the hunk's `new` range of `text`.
/// Every piece is whole lines, so valid UTF-8 on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Edit {
    /// In order, not overlapping, separated by at least one unchanged line.
    pub hunks: Vec<Hunk>,
    /// The new lines of every hunk, back to back.
    pub text: String,
}

impl Edit {
    /// The edit between two texts, `None` if they are equal.
    pub fn between(old: &str, new: &str) -> Option<Edit> {
        let (a, b) = (old.as_bytes(), new.as_bytes());
        let p = common_prefix(a, b);
        if p == a.len() && p == b.len() {
            return None;
        }
        let s = common_suffix(a, b, a.len().min(b.len()) - p);
        let (start, old_end) = widen(a, p, a.len() - s);
        let new_end = old_end + b.len() - a.len();
        let e = Edit::of_middles(start, &a[start..old_end], &b[start..new_end]);
        Some(e.expect("hunks of valid text are whole lines"))
    }

    /// The edit that turns `old_mid` (the old text from byte `start`) into `new_mid`.
    fn of_middles(start: usize, old_mid: &[u8], new_mid: &[u8]) -> Result<Edit, Utf8Error> {
        let mut hunks = diff::hunks(old_mid, new_mid);
        let mut text = Vec::with_capacity(hunks.iter().map(|h| h.new.len()).sum());
        for h in &mut hunks {
            let at = text.len();
            text.extend_from_slice(&new_mid[h.new.clone()]);
            h.old = h.old.start + start..h.old.end + start;
            h.new = at..text.len();
        }
        // Outside the hunks the new text is the old one: valid already.
        let text = String::from_utf8(text).map_err(|e| e.utf8_error())?;
        Ok(Edit { hunks, text })
    }

    /// The new lines of hunk `k`.
    pub fn new_text(&self, k: usize) -> &str {
        &self.text[self.hunks[k].new.clone()]
    }

    /// Length of the new text.
    pub fn new_len(&self, old: &str) -> usize {
        self.hunks
            .iter()
            .fold(old.len(), |n, h| n - h.old.len() + h.new.len())
    }

    /// Every hunk keeps its length: applying the edit moves no other byte.
    pub fn in_place(&self) -> bool {
        self.hunks.iter().all(|h| h.old.len() == h.new.len())
    }

    /// Builds the whole new text.
    pub fn assemble(&self, old: &str) -> String {
        let mut t = String::with_capacity(self.new_len(old));
        let mut at = 0;
        for (k, h) in self.hunks.iter().enumerate() {
            t.push_str(&old[at..h.old.start]);
            t.push_str(self.new_text(k));
            at = h.old.end;
        }
        t.push_str(&old[at..]);
        t
    }

    /// Turns `old` into the new text in place: each unchanged stretch moves at most once.
    pub fn apply_to(self, old: &mut String) {
        if self.in_place() {
            for (k, h) in self.hunks.iter().enumerate() {
                old.replace_range(h.old.clone(), self.new_text(k));
            }
            return;
        }
        let runs: Vec<Run> = self
            .hunks
            .iter()
            .map(|h| Run {
                old: h.old.clone(),
                new_len: h.new.len(),
            })
            .collect();
        let mut bytes = std::mem::take(old).into_bytes();
        splice_runs(&mut bytes, &runs, 0, |k, slot| {
            slot.copy_from_slice(self.new_text(k).as_bytes())
        });
        *old = String::from_utf8(bytes).expect("whole lines of valid text");
    }
}

/// What reading the file found.
#[derive(Debug)]
pub(super) enum Found {
    /// Byte for byte the last text.
    Same,
    Edit(Edit),
    /// The whole file (no last text to compare with, or it changed while being read).
    Whole(String),
}

/// Reads `path` (at most `limit`), comparing it with `old` when there is one; `scratch`
/// is a reused buffer.
pub(super) fn read(
    path: &Path,
    old: Option<&str>,
    scratch: &mut Vec<u8>,
    limit: Limit,
) -> Result<Found, ConfigError> {
    let (mut f, meta) = read::open(path, limit)?;
    if let Some(old) = old {
        // Invalid UTF-8 in the changed bytes: the whole read below reports where it is.
        if let Ok(Some(r)) = compare(&f, &meta, old, scratch) {
            return Ok(r);
        }
    }
    // From the start: `compare` may have moved the file position.
    f.seek(SeekFrom::Start(0))
        .map_err(|e| ConfigError::io(path, e))?;
    read::read_rest(path, &f, meta.len(), limit).map(Found::Whole)
}

fn invalid_utf8(e: Utf8Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// `None`: the file changed while being read (shrank under a read, or its size or
/// modification time moved): the caller reads it whole instead of stitching pieces of two
/// versions together. `before` is the file's metadata at open.
fn compare(
    f: &File,
    before: &Metadata,
    old: &str,
    scratch: &mut Vec<u8>,
) -> io::Result<Option<Found>> {
    let a = old.as_bytes();
    let n = usize::try_from(before.len()).unwrap_or(usize::MAX);
    scratch.resize(CHUNK, 0);
    let short = |r: io::Result<()>| match r {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
        Ok(()) => Ok(true),
    };
    let lim = n.min(a.len());
    let mut p = 0;
    while p < lim {
        let len = CHUNK.min(lim - p);
        if !short(f.read_exact_at(&mut scratch[..len], p as u64))? {
            return Ok(None);
        }
        let c = common_prefix(&scratch[..len], &a[p..p + len]);
        p += c;
        if c < len {
            break;
        }
    }
    if p == n && n == a.len() {
        return Ok(Some(Found::Same));
    }
    let max = lim - p;
    let mut s = 0;
    while s < max {
        let len = CHUNK.min(max - s);
        if !short(f.read_exact_at(&mut scratch[..len], (n - s - len) as u64))? {
            return Ok(None);
        }
        let c = common_suffix(&scratch[..len], &a[a.len() - s - len..a.len() - s], len);
        s += c;
        if c < len {
            break;
        }
    }
    let (start, old_end) = widen(a, p, a.len() - s);
    // The new bytes between the line boundaries: old's line head, the file's changed
    // bytes, old's line tail (both ends are common to the two texts). Kept in `scratch`
    // (a spread edit of a full view spans most of the file: no new buffer each time).
    let want = n - s - p;
    scratch.clear();
    scratch.reserve(p - start + want + old_end - (a.len() - s));
    scratch.extend_from_slice(&a[start..p]);
    // Read straight into the spare capacity (no zeroing of megabytes first).
    let mut r = f;
    r.seek(SeekFrom::Start(p as u64))?;
    if r.take(want as u64).read_to_end(scratch)? < want {
        return Ok(None);
    }
    scratch.extend_from_slice(&a[a.len() - s..old_end]);
    let after = f.metadata()?;
    if after.len() != before.len() || after.modified().ok() != before.modified().ok() {
        return Ok(None);
    }
    let e = Edit::of_middles(start, &a[start..old_end], scratch).map_err(invalid_utf8)?;
    Ok(Some(Found::Edit(e)))
}

/// Widens the differing bytes `old[p..q]` to whole lines: back to the start of `p`'s
/// line, forward past the first newline at or after `q` (that newline lies in the common
/// suffix, so it ends a line in the new text too).
fn widen(old: &[u8], p: usize, q: usize) -> (usize, usize) {
    let start = old[..p]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let end = old[q..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(old.len(), |i| q + i + 1);
    (start, end)
}

/// First differing byte, comparing in blocks (memcmp) before narrowing down.
pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const B: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + B <= n && a[i..i + B] == b[i..i + B] {
        i += B;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Length of the common end, at most `max`.
fn common_suffix(a: &[u8], b: &[u8], max: usize) -> usize {
    const B: usize = 4096;
    let mut s = 0;
    while s + B <= max && a[a.len() - s - B..a.len() - s] == b[b.len() - s - B..b.len() - s] {
        s += B;
    }
    while s < max && a[a.len() - 1 - s] == b[b.len() - 1 - s] {
        s += 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn via_file(old: &str, new: &str) -> Option<Edit> {
        let dir = std::env::temp_dir().join(format!(
            "source-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, new).unwrap();
        let r = read(&p, Some(old), &mut Vec::new(), Limit::routes(1 << 30)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        match r {
            Found::Same => None,
            Found::Edit(e) => Some(e),
            Found::Whole(_) => panic!("compare fell back to a whole read"),
        }
    }

    #[test]
    fn edits_are_whole_lines_and_rebuild_the_new_text() {
        let big: String = (0..40_000).map(|i| format!("  - line {i}\n")).collect();
        let cases = [
            ("a\nb\nc\n", "a\nX\nc\n"),
            ("a\nb\nc\n", "a\nbb\nc\n"),
            ("a\nb\nc\n", "a\nc\n"),
            ("a\nb\nc\n", "a\nb\nc\nd\n"),
            ("a\nb\nc", "a\nb\nd"),
            ("abc", "xbc"),
            ("", "a\n"),
            ("a\n", ""),
            ("a\nb\n", "a\nb\n\n"),
            ("é\nb\n", "è\nb\n"),
        ];
        let owned: Vec<(String, String)> = cases
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .chain([
                (big.clone(), big.replace("line 30000\n", "line 3000x\n")),
                (big.clone(), big.replace("line 7\n", "")),
                (big.clone(), format!("{big}tail\n")),
                (big.clone(), big[..big.len() - 300_000].to_string()),
            ])
            .collect();
        for (old, new) in &owned {
            for e in [Edit::between(old, new), via_file(old, new)] {
                let e = e.expect("texts differ");
                for h in &e.hunks {
                    assert!(h.old.start == 0 || old.as_bytes()[h.old.start - 1] == b'\n');
                    assert!(
                        h.old.end == old.len() || old.as_bytes()[h.old.end - 1] == b'\n',
                        "{e:?}"
                    );
                }
                assert_eq!(e.assemble(old), *new);
                assert_eq!(e.new_len(old), new.len());
                let mut t = old.clone();
                e.apply_to(&mut t);
                assert_eq!(t, *new);
            }
        }
        assert_eq!(via_file(&big, &big), None);
        assert_eq!(Edit::between(&big, &big), None);
        // One changed line of a big text: only that line is kept.
        let e = via_file(&big, &owned[10].1).unwrap();
        assert_eq!(e.text, "  - line 3000x\n");
        // Changes spread over the text: one hunk each, only the changed lines kept.
        let spread = big
            .replace("line 10\n", "line 10x\n")
            .replace("  - line 20000\n", "")
            .replace("line 39990\n", "line 39990\n  - new\n");
        let e = via_file(&big, &spread).unwrap();
        assert_eq!(e.hunks.len(), 3);
        assert_eq!(e.text, "  - line 10x\n  - new\n");
        assert!(!e.in_place());
        let mut t = big.clone();
        e.apply_to(&mut t);
        assert_eq!(t, spread);
    }

    #[test]
    fn invalid_utf8_in_the_changed_bytes_is_an_error() {
        let dir = std::env::temp_dir().join(format!("source-utf8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, b"a\n\xff\nc\n").unwrap();
        let lim = Limit::routes(1 << 20);
        for old in [Some("a\nb\nc\n"), None] {
            let e = read(&p, old, &mut Vec::new(), lim).unwrap_err();
            let d = &e.diagnostics().expect("a positioned error").0[0];
            assert_eq!((d.line, d.col), (2, 1), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
