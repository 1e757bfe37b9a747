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

/// What the fast path changed in the set (patched in place: copying a full view's
/// ~900k routes would cost more than the rest of the edit); the layout has already
/// been updated to match. [`Patched::undo`] restores the set.
pub(super) struct Patched {
    pub removed: Vec<(Cidr, u32)>,
    pub added: Vec<(Cidr, u32)>,
    /// Index in `RouteSet::ipv4` of the first replaced route.
    at: usize,
    old_specs: Vec<RouteSpec>,
}

impl Patched {
    /// Puts `set` back as it was before [`apply`].
    pub fn undo(self, set: &mut RouteSet) {
        set.ipv4
            .splice(self.at..self.at + self.added.len(), self.removed);
        set.specs = self.old_specs;
    }
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
    let (start, old_end) = (edit.start, edit.old_end);
    let new_region = edit.region.as_str();
    // Whole lines on both sides (a last line without a newline is left to the full path).
    let old_region = &old[start..old_end];
    if !old_region.is_empty() && !old_region.ends_with('\n')
        || !new_region.is_empty() && !new_region.ends_with('\n')
    {
        return None;
    }
    let line_a = lay.line_starts.partition_point(|&x| x <= start) - 1;
    if lay.line_starts[line_a] != start {
        return None;
    }
    let grow = new_region.len() as isize - old_region.len() as isize;
    let old_lines = old_region.matches('\n').count();
    if !(lay.first <= line_a && line_a + old_lines <= lay.first + lay.count) {
        return None;
    }
    let d = Decoder::new();
    let mut v = Validator::seeded(&d, ctx, &set.specs);
    let col0 = lay.indent.len() as u32 + 1;
    let mut new_lines = 0;
    for (k, line) in new_region.lines().enumerate() {
        let item = line.strip_prefix(lay.indent.as_str())?;
        if !plain_item(item) {
            return None;
        }
        v.compact_item(item, (line_a + k + 1) as u32, col0, &String::new);
        new_lines += 1;
    }
    if d.has_errors() {
        return None;
    }
    // Seeding interned the running specs first, in order: their ids are unchanged.
    let (added, specs) = v.take_ipv4();
    if added.len() != new_lines {
        return None;
    }
    let k0 = lay.ipv4_offset + (line_a - lay.first);
    let removed: Vec<(Cidr, u32)> = set.ipv4[k0..k0 + old_lines].to_vec();
    let gone: FastSet<Cidr> = removed.iter().map(|(c, _)| *c).collect();
    if added
        .iter()
        .any(|(c, _)| lay.prefixes.contains(c) && !gone.contains(c))
    {
        return None;
    }
    // Point of no return: patch the set and the layout.
    set.ipv4.splice(k0..k0 + old_lines, added.iter().copied());
    let old_specs = std::mem::replace(&mut set.specs, specs);
    lay.count = lay.count + new_lines - old_lines;
    for c in &gone {
        lay.prefixes.remove(c);
    }
    lay.prefixes.extend(added.iter().map(|(c, _)| *c));
    let starts = new_region.match_indices('\n').map(|(i, _)| start + i + 1);
    let after = line_a + old_lines + 1;
    let tail_from = line_a + 1 + new_lines;
    lay.line_starts.splice(line_a + 1..after, starts);
    if grow != 0 {
        for x in &mut lay.line_starts[tail_from..] {
            *x = (*x as isize + grow) as usize;
        }
    }
    Some(Patched {
        removed,
        added,
        at: k0,
        old_specs,
    })
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
