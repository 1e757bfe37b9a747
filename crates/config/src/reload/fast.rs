//! The reload fast path: an edit confined to `routes_compact` lines is applied without
//! reparsing the file.
//!
//! A full view is ~30 MB of YAML; reparsing it takes most of a second, far over the
//! budget for a one-line edit. After every full parse we record where the compact block
//! sits (one item per line, consecutive lines, same indent). On the next reload the
//! changed lines come from [`super::source`]; when they lie inside that block and every
//! new line is a plain item the compact parser accepts as is, only those lines are
//! parsed and validated, and the last good [`RouteSet`] is patched.
//!
//! The fast path only ever succeeds with the result the full path would give; anything
//! it is not sure about (errors, comments, quoting, edits elsewhere, duplicates) returns
//! `None`, and the caller runs the full path, which also produces the diagnostics.

use crate::de::Decoder;
use crate::routes::validate::Validator;
use crate::routes::{RouteContext, RouteSet, RouteSpec};
use crate::types::{Cidr, FastSet};
use crate::yaml::{Node, NodeKind};

use super::source::Edit;
use super::splice::{splice_runs, Run};

/// Where the compact block is, in the text of the last good file.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// 0-based line index of the first item.
    first: usize,
    count: usize,
    /// Bytes before the item text on each line (`  - `).
    indent: String,
    /// Index in `RouteSet::ipv4` of the first compact route.
    ipv4_offset: usize,
    /// Byte offset of every line start.
    line_starts: Vec<usize>,
    /// Every prefix of the set (duplicate checks for added lines).
    prefixes: FastSet<Cidr>,
}

/// Records the layout after a successful full parse, if the fast path can use it.
pub(super) fn layout(text: &str, root: &Node, set: &RouteSet) -> Option<Layout> {
    let NodeKind::Seq(items) = &root.get("routes_compact")?.kind else {
        return None;
    };
    let first_item = items.first()?;
    let first = first_item.mark.line as usize - 1;
    let col = first_item.mark.col as usize - 1;
    let mut line_starts = Vec::with_capacity(text.len() / 24);
    line_starts.push(0);
    line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let line_of = |l: usize| {
        let s = line_starts[l];
        let e = line_starts.get(l + 1).map_or(text.len(), |&e| e - 1);
        &text[s..e]
    };
    let indent = line_of(first).get(..col)?.to_string();
    if !indent.trim_start().starts_with('-')
        || indent.trim_start() != "- " && indent.trim_start() != "-"
    {
        return None;
    }
    for (k, it) in items.iter().enumerate() {
        let NodeKind::Scalar { value, plain: true } = &it.kind else {
            return None;
        };
        // IPv6 lines go to `RouteSet::ipv6`: the block is no longer one run of `ipv4`.
        if value.contains(':') {
            return None;
        }
        let l = first + k;
        if it.mark.line as usize - 1 != l || line_of(l).get(col..) != Some(value.as_str()) {
            return None;
        }
        if !line_of(l).starts_with(indent.as_str()) {
            return None;
        }
    }
    let ipv4_offset = match root.get("ipv4") {
        None => 0,
        Some(n) => match &n.kind {
            NodeKind::Seq(v) => v.len(),
            _ if n.is_null() => 0,
            _ => return None,
        },
    };
    Some(Layout {
        first,
        count: items.len(),
        indent,
        ipv4_offset,
        line_starts,
        prefixes: set.ipv4.iter().map(|(c, _)| *c).collect(),
    })
}

/// A plain YAML scalar that means exactly its text: starts with a digit, no comment,
/// quote, flow or mapping syntax.
fn plain_item(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b" ./,_-".contains(&c))
        && !s.ends_with(' ')
}

/// Most new lines the fast path parses. More is a rewrite of much of the block, or an
/// edit the diff gave up on (its rest is one hunk, up to the whole file): far past the
/// derive limit, so a full compile follows anyway. The full path is taken, which keeps
/// the fast path's own cost (its bookkeeping grows with the edit) bounded.
pub(super) const MAX_LINES: usize = 1 << 16;

/// What the fast path changed in the set (patched in place: copying a full view's
/// ~900k routes would cost more than the rest of the edit); the layout has already
/// been updated to match. [`Patched::undo`] restores the set.
pub(super) struct Patched {
    /// The routes of the changed lines, every hunk's back to back, before and after.
    pub removed: Vec<(Cidr, u32)>,
    pub added: Vec<(Cidr, u32)>,
    /// Per hunk: index in `RouteSet::ipv4` (before the patch) of its first route, routes
    /// removed, routes added.
    runs: Vec<(usize, usize, usize)>,
    old_specs: Vec<RouteSpec>,
}

impl Patched {
    /// Puts `set` back as it was before [`apply`].
    pub fn undo(self, set: &mut RouteSet) {
        // The patch in reverse: each run of added routes, where it lies now, goes back
        // to the removed ones.
        let mut shift = 0isize;
        let runs: Vec<Run> = self
            .runs
            .iter()
            .map(|&(at, n_old, n_new)| {
                let start = (at as isize + shift) as usize;
                shift += n_new as isize - n_old as isize;
                Run {
                    old: start..start + n_new,
                    new_len: n_old,
                }
            })
            .collect();
        splice_routes(&mut set.ipv4, &runs, &self.removed);
        set.specs = self.old_specs;
    }
}

/// Replaces the runs of `routes` by `new`, taken in order.
fn splice_routes(routes: &mut Vec<(Cidr, u32)>, runs: &[Run], new: &[(Cidr, u32)]) {
    let pad = (Cidr { addr: 0, len: 0 }, 0);
    let mut from = 0;
    splice_runs(routes, runs, pad, |_, slot| {
        slot.copy_from_slice(&new[from..from + slot.len()]);
        from += slot.len();
    });
}

/// One hunk located in the compact block.
struct Located {
    /// 0-based index of its first line in the old text.
    line: usize,
    old_lines: usize,
    new_lines: usize,
}

/// Applies `edit` to the state built from `old`; `None` means "use the full path" (and
/// leaves `lay` untouched). On success `lay` describes the new text.
pub(super) fn apply(
    old: &str,
    edit: &Edit,
    lay: &mut Layout,
    set: &mut RouteSet,
    ctx: &RouteContext,
) -> Option<Patched> {
    let d = Decoder::new();
    let mut v = Validator::seeded(&d, ctx, &set.specs);
    let col0 = lay.indent.len() as u32 + 1;
    let mut hunks = Vec::with_capacity(edit.hunks.len());
    let (mut old_total, mut new_total) = (0, 0);
    for (k, h) in edit.hunks.iter().enumerate() {
        let old_region = &old[h.old.clone()];
        let new_region = edit.new_text(k);
        // Whole lines on both sides (a last line without a newline is left to the full
        // path).
        if !old_region.is_empty() && !old_region.ends_with('\n')
            || !new_region.is_empty() && !new_region.ends_with('\n')
        {
            return None;
        }
        let line = lay.line_starts.partition_point(|&x| x <= h.old.start) - 1;
        if lay.line_starts[line] != h.old.start {
            return None;
        }
        let old_lines = old_region.bytes().filter(|&c| c == b'\n').count();
        if !(lay.first <= line && line + old_lines <= lay.first + lay.count) {
            return None;
        }
        // Line numbers in the new text (for the validator's marks).
        let new_line = line + new_total - old_total;
        let mut new_lines = 0;
        for l in new_region.lines() {
            let item = l.strip_prefix(lay.indent.as_str())?;
            if !plain_item(item) || new_total + new_lines >= MAX_LINES {
                return None;
            }
            v.compact_item(item, (new_line + new_lines + 1) as u32, col0, &String::new);
            new_lines += 1;
        }
        old_total += old_lines;
        new_total += new_lines;
        hunks.push(Located {
            line,
            old_lines,
            new_lines,
        });
    }
    // The block keeps at least one item (an empty one is null, not a sequence).
    if d.has_errors() || lay.count + new_total == old_total {
        return None;
    }
    // Seeding interned the running specs first, in order: their ids are unchanged.
    let (added, specs) = v.take_ipv4();
    if added.len() != new_total {
        return None;
    }
    let at = |h: &Located| lay.ipv4_offset + (h.line - lay.first);
    let mut removed: Vec<(Cidr, u32)> = Vec::with_capacity(old_total);
    for h in &hunks {
        removed.extend_from_slice(&set.ipv4[at(h)..at(h) + h.old_lines]);
    }
    let gone: FastSet<Cidr> = removed.iter().map(|(c, _)| *c).collect();
    if added
        .iter()
        .any(|(c, _)| lay.prefixes.contains(c) && !gone.contains(c))
    {
        return None;
    }
    // Point of no return: patch the set and the layout.
    let runs: Vec<Run> = hunks
        .iter()
        .map(|h| Run {
            old: at(h)..at(h) + h.old_lines,
            new_len: h.new_lines,
        })
        .collect();
    splice_routes(&mut set.ipv4, &runs, &added);
    let old_specs = std::mem::replace(&mut set.specs, specs);
    lay.count = lay.count + new_total - old_total;
    for c in &gone {
        lay.prefixes.remove(c);
    }
    lay.prefixes.extend(added.iter().map(|(c, _)| *c));
    move_line_starts(&mut lay.line_starts, edit, &hunks);
    Some(Patched {
        removed,
        added,
        runs: hunks
            .iter()
            .map(|h| (at(h), h.old_lines, h.new_lines))
            .collect(),
        old_specs,
    })
}

/// Updates the line starts of the old text to the new one: each hunk's lines replaced by
/// the new lines' starts, every line after a hunk moved by the bytes the hunks before it
/// added.
fn move_line_starts(starts: &mut Vec<usize>, edit: &Edit, hunks: &[Located]) {
    // Entry `line + 1 + j` is the start of the line after the hunk's line j: the hunk's
    // own first entry (its start) stays.
    let runs: Vec<Run> = hunks
        .iter()
        .map(|h| Run {
            old: h.line + 1..h.line + 1 + h.old_lines,
            new_len: h.new_lines,
        })
        .collect();
    let mut grow = 0isize;
    splice_runs(starts, &runs, 0, |k, slot| {
        let h = &edit.hunks[k];
        let at = (h.old.start as isize + grow) as usize;
        let ends = edit
            .new_text(k)
            .match_indices('\n')
            .map(|(i, _)| at + i + 1);
        for (s, e) in slot.iter_mut().zip(ends) {
            *s = e;
        }
        grow += h.new.len() as isize - h.old.len() as isize;
    });
    // The unchanged lines after each hunk, in the new indices.
    let mut grow = 0isize;
    let mut line_shift = 0isize;
    for (k, h) in hunks.iter().enumerate() {
        grow += edit.hunks[k].new.len() as isize - edit.hunks[k].old.len() as isize;
        line_shift += h.new_lines as isize - h.old_lines as isize;
        let from = (h.line as isize + 1 + h.old_lines as isize + line_shift) as usize;
        let to = hunks.get(k + 1).map_or(starts.len(), |n| {
            (n.line as isize + 1 + line_shift) as usize
        });
        if grow != 0 {
            for x in &mut starts[from..to] {
                *x = (*x as isize + grow) as usize;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_restores_the_set_patched_in_place() {
        let path = std::path::Path::new("/x/r.yaml");
        let ctx = RouteContext::standalone();
        let text = "routes_compact:\n  - 1.0.0.0/24 via 10.0.1.2\n  - 1.0.1.0/24 via 10.0.1.3\n  - 1.0.2.0/24 blackhole\n";
        let root = crate::yaml::parse(text).unwrap();
        let mut set = crate::routes::routes_from_node(path, &root, &ctx).unwrap();
        let mut lay = layout(text, &root, &set).unwrap();
        let before = set.clone();
        let new = text.replace(
            "  - 1.0.1.0/24 via 10.0.1.3\n",
            "  - 1.0.1.0/24 via 10.0.1.9 push 100\n  - 1.0.3.0/24 local\n",
        );
        let edit = Edit::between(text, &new).unwrap();
        let p = apply(text, &edit, &mut lay, &mut set, &ctx)
            .expect("a compact-only edit takes the fast path");
        assert_eq!(set.ipv4.len(), 4);
        assert_eq!(set.specs.len(), before.specs.len() + 2);
        assert_eq!((p.removed.len(), p.added.len()), (1, 2));
        p.undo(&mut set);
        assert_eq!(set, before);
    }
}
