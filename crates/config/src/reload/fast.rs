//! The reload fast path: an edit confined to `routes_compact` lines is applied without
//! reparsing the file.
//!
//! A full view is ~30 MB of YAML; reparsing it takes most of a second, far over the
//! budget for a one-line edit. After every full parse we record where the compact block
//! sits (one item per line, consecutive lines, same indent). On the next reload the old
//! and new texts are compared; when the changed lines lie inside that block and every
//! new line is a plain item the compact parser accepts as is, only those lines are
//! parsed and validated, and the last good [`RouteSet`] is patched.
//!
//! The fast path only ever succeeds with the result the full path would give; anything
//! it is not sure about (errors, comments, quoting, edits elsewhere, duplicates) returns
//! `None`, and the caller runs the full path, which also produces the diagnostics.

use crate::de::Decoder;
use crate::routes::validate::Validator;
use crate::routes::{RouteContext, RouteSet};
use crate::types::{Cidr, FastSet};
use crate::yaml::{Node, NodeKind};

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

/// A plain YAML scalar that means exactly its text: starts with a digit, no comment,
/// quote, flow or mapping syntax.
fn plain_item(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b" ./,_-".contains(&c))
        && !s.ends_with(' ')
}

/// What the fast path produced; the layout has already been updated to match.
pub(super) struct Patched {
    pub set: RouteSet,
    pub removed: Vec<(Cidr, u32)>,
    pub added: Vec<(Cidr, u32)>,
}

/// Applies `new` to the state built from `old`; `None` means "use the full path" (and
/// leaves `lay` untouched). On success `lay` describes `new`.
/// `p` is `common_prefix(old, new)`.
pub(super) fn apply(
    old: &str,
    new: &str,
    p: usize,
    lay: &mut Layout,
    set: &RouteSet,
    ctx: &RouteContext,
) -> Option<Patched> {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    if p == 0 || (p == a.len() && p == b.len()) {
        return None;
    }
    let s = common_suffix(a, b, a.len().min(b.len()) - p);
    // Widen to whole lines: from the start of p's line to a common suffix that starts a
    // line in both texts.
    let line_a = lay.line_starts.partition_point(|&x| x <= p) - 1;
    let start = lay.line_starts[line_a];
    let grow = b.len() as isize - a.len() as isize;
    let mut old_end = a.len() - s;
    let new_end = |oe: usize| (oe as isize + grow) as usize;
    while old_end < a.len() && !(a[old_end - 1] == b'\n' && b[new_end(old_end) - 1] == b'\n') {
        old_end += 1;
    }
    let ne = new_end(old_end);
    if a[old_end - 1] != b'\n' || b[ne - 1] != b'\n' || old_end < start || ne < start {
        return None;
    }
    let old_lines = old[start..old_end].matches('\n').count();
    let new_region = &new[start..ne];
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
    let mut ipv4 = Vec::with_capacity(set.ipv4.len() + added.len());
    ipv4.extend_from_slice(&set.ipv4[..k0]);
    ipv4.extend_from_slice(&added);
    ipv4.extend_from_slice(&set.ipv4[k0 + old_lines..]);
    let new_set = RouteSet {
        neighbors: set.neighbors.clone(),
        specs,
        ipv4,
        labels: set.labels.clone(),
        ports_checked: set.ports_checked,
    };
    lay.count = lay.count + new_lines - old_lines;
    for c in &gone {
        lay.prefixes.remove(c);
    }
    lay.prefixes.extend(added.iter().map(|(c, _)| *c));
    let starts = new_region.match_indices('\n').map(|(i, _)| start + i + 1);
    let after = line_a + old_lines + 1;
    let tail_from = line_a + 1 + new_lines;
    lay.line_starts.splice(line_a + 1..after, starts);
    for x in &mut lay.line_starts[tail_from..] {
        *x = (*x as isize + grow) as usize;
    }
    Some(Patched {
        set: new_set,
        removed,
        added,
    })
}
