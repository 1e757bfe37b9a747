//! Reload edits spread over the routes file (many changed runs of lines): the fast path
//! must give exactly what a full parse of the new text gives, or fall back to it.
#![forbid(unsafe_code)]

mod common;

use common::ctx;
use std::path::Path;

use config::routes::RouteSpec;
use config::{ReloadOutcome, ReloadState, RouteSet};
use proptest::prelude::*;

/// What a set means, independent of spec numbering (the fast path appends new specs to
/// the running ones; a full parse numbers them by first use).
type Meaning = (
    Vec<(String, RouteSpec)>,
    Vec<config::routes::NeighborSpec>,
    Vec<(u32, config::routes::LabelSpec)>,
);

fn meaning(s: &RouteSet) -> Meaning {
    let ipv4 = s
        .ipv4
        .iter()
        .map(|(c, id)| (c.to_string(), s.specs[*id as usize].clone()))
        .collect();
    (ipv4, s.neighbors.clone(), s.labels.clone())
}

const HEADER: &str = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n";
const IPV4: &str =
    "ipv4:\n  - {prefix: 9.9.0.0/16, via: 10.0.0.2}\n  - {prefix: 9.8.0.0/16, blackhole: true}\n";
const FOOTER: &str = "prefix_groups:\n  - via: 10.0.0.3\n    prefixes: [8.0.0.0/8]\n";

/// Valid targets of a compact line.
const TARGETS: [&str; 5] = [
    "via 10.0.1.2",
    "via 10.0.1.3",
    "via 10.0.0.2 push 100",
    "blackhole",
    "via 10.0.1.4 push 200,300",
];

#[derive(Clone, Debug)]
struct Table {
    ipv4: bool,
    footer: bool,
    lines: Vec<String>,
}

impl Table {
    fn text(&self) -> String {
        let mut t = String::from(HEADER);
        if self.ipv4 {
            t += IPV4;
        }
        t += "routes_compact:\n";
        for l in &self.lines {
            t += l;
            t += "\n";
        }
        if self.footer {
            t += FOOTER;
        }
        t
    }
}

fn line(prefix: u32, target: usize) -> String {
    format!(
        "  - 20.{}.{}.0/24 {}",
        prefix >> 8 & 255,
        prefix & 255,
        TARGETS[target % TARGETS.len()]
    )
}

/// One change to the lines; positions are taken modulo the current length.
#[derive(Clone, Debug)]
enum Op {
    Retarget(usize, usize),
    Delete(usize),
    Insert(usize, usize),
    /// A prefix removed in one place and added in another.
    Move(usize, usize),
    /// Not a plain compact edit: the full path decides (and may refuse).
    Duplicate(usize, usize),
    Comment(usize),
    Quoted(usize),
    BadTarget(usize),
    Header,
}

impl Op {
    fn plain(&self) -> bool {
        matches!(
            self,
            Op::Retarget(..) | Op::Delete(_) | Op::Insert(..) | Op::Move(..)
        )
    }
}

fn op() -> impl Strategy<Value = Op> {
    let n = 0..10_000usize;
    prop_oneof![
        6 => (n.clone(), 0..TARGETS.len()).prop_map(|(k, t)| Op::Retarget(k, t)),
        3 => n.clone().prop_map(Op::Delete),
        3 => (n.clone(), 0..TARGETS.len()).prop_map(|(k, t)| Op::Insert(k, t)),
        1 => (n.clone(), n.clone()).prop_map(|(a, b)| Op::Move(a, b)),
        1 => (n.clone(), n.clone()).prop_map(|(a, b)| Op::Duplicate(a, b)),
        1 => n.clone().prop_map(Op::Comment),
        1 => n.clone().prop_map(Op::Quoted),
        1 => n.clone().prop_map(Op::BadTarget),
        1 => Just(Op::Header),
    ]
}

/// Applies `ops` to `t`; `next` numbers the prefixes of inserted lines.
fn edit(t: &Table, ops: &[Op], next: &mut u32) -> (String, bool) {
    let mut lines = t.lines.clone();
    let mut header = false;
    let at = |k: usize, len: usize| k % len.max(1);
    for op in ops {
        let len = lines.len();
        match *op {
            Op::Retarget(k, tg) if len > 0 => {
                let l = &mut lines[at(k, len)];
                let prefix = l.split(' ').nth(3).unwrap().to_string();
                *l = format!("  - {prefix} {}", TARGETS[tg]);
            }
            Op::Delete(k) if len > 0 => {
                lines.remove(at(k, len));
            }
            Op::Insert(k, tg) => {
                *next += 1;
                lines.insert(k % (len + 1), line(*next, tg));
            }
            Op::Move(a, b) if len > 0 => {
                let l = lines.remove(at(a, len));
                lines.insert(b % len, l);
            }
            Op::Duplicate(a, b) if len > 0 => {
                let l = lines[at(a, len)].clone();
                lines.insert(b % (len + 1), l);
            }
            Op::Comment(k) => lines.insert(k % (len + 1), "  # a comment".into()),
            Op::Quoted(k) if len > 0 => {
                let l = &mut lines[at(k, len)];
                *l = format!("  - \"{}\"", &l[4..]);
            }
            Op::BadTarget(k) if len > 0 => {
                let l = &mut lines[at(k, len)];
                let prefix = l.split(' ').nth(3).unwrap().to_string();
                *l = format!("  - {prefix} via 10.9.9.9");
            }
            Op::Header => header = true,
            _ => {}
        }
    }
    let mut text = Table { lines, ..t.clone() }.text();
    if header {
        text = text.replace(
            "neighbors:\n",
            "neighbors:\n  - {ip: 10.0.1.9, mac: \"02:00:00:00:01:09\"}\n",
        );
    }
    (text, header)
}

/// The lines of the compact block of `text` (to carry an accepted edit on).
fn compact_lines(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| *l != "routes_compact:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.contains('#') && !l.contains('"'))
        .map(str::to_string)
        .collect()
}

fn table() -> impl Strategy<Value = Table> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(0..TARGETS.len(), 1..150),
    )
        .prop_map(|(ipv4, footer, targets)| Table {
            ipv4,
            footer,
            lines: targets
                .iter()
                .enumerate()
                .map(|(i, t)| line(i as u32, *t))
                .collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A run of multi-region edits on one state: after each, the state means what a
    /// full parse of the text means; a refused text leaves the state as it was.
    #[test]
    fn spread_edits_agree_with_a_full_parse(
        start in table(),
        edits in prop::collection::vec(prop::collection::vec(op(), 0..12), 1..6),
    ) {
        let ctx = ctx();
        let path = Path::new("/x/routes.yaml");
        let mut st = ReloadState::new(path, ctx.clone());
        st.apply_text(start.text()).unwrap();
        let mut cur = start;
        let mut next = 1000;
        for ops in &edits {
            let old = cur.text();
            let (text, header) = edit(&cur, ops, &mut next);
            let oracle = config::parse_routes(path, &text, &ctx);
            let before = st.current().cloned();
            match (st.apply_text(text.clone()), oracle) {
                (Ok(out), Ok(o)) => {
                    prop_assert_eq!(meaning(st.current().unwrap()), meaning(&o));
                    let (ReloadOutcome::Updated { timings, .. }
                        | ReloadOutcome::Unchanged { timings }) = out;
                    // A plain compact edit of a non-empty block that keeps it non-empty
                    // never needs the full parse (an emptied block has no recorded line
                    // positions to patch: refilling it is a full parse).
                    let plain = !header && ops.iter().all(Op::plain);
                    let lines = compact_lines(&text);
                    let was_empty = compact_lines(&old).is_empty();
                    if plain && text != old && !lines.is_empty() && !was_empty {
                        prop_assert!(timings.fast_path, "full path for {:?}", ops);
                    }
                    if header {
                        prop_assert!(!timings.fast_path);
                    }
                    // Later edits start from the accepted text without comments,
                    // quoted lines or the extra neighbor: the state is brought there too.
                    cur.lines = lines;
                    if cur.text() != text {
                        st.apply_text(cur.text()).unwrap();
                    }
                }
                (Err(_), Err(_)) => prop_assert_eq!(st.current().cloned(), before),
                (a, b) => prop_assert!(false, "fast {:?} vs full {:?}", a.is_ok(), b.is_ok()),
            }
        }
    }

    /// Identical text, and a rewrite of every line, through the same state.
    #[test]
    fn identical_and_whole_rewrites(start in table(), tg in 0..TARGETS.len()) {
        let ctx = ctx();
        let path = Path::new("/x/routes.yaml");
        let mut st = ReloadState::new(path, ctx.clone());
        st.apply_text(start.text()).unwrap();
        let same = st.apply_text(start.text()).unwrap();
        prop_assert!(matches!(same, ReloadOutcome::Unchanged { .. }), "unchanged");
        let mut all = start.clone();
        for (i, l) in all.lines.iter_mut().enumerate() {
            *l = line(i as u32 + 5000, tg);
        }
        // Every line and the header changed: one region over the whole file.
        let text = all.text().replace("neighbors:\n", "neighbors: \n");
        let out = st.apply_text(text.clone()).unwrap();
        let o = config::parse_routes(path, &text, &ctx).unwrap();
        prop_assert_eq!(meaning(st.current().unwrap()), meaning(&o));
        let ReloadOutcome::Updated { timings, .. } = out else {
            panic!("every prefix changed");
        };
        prop_assert!(!timings.fast_path);
        // Only the header line differs: a full parse, same routes.
        let out = st.apply_text(all.text()).unwrap();
        prop_assert!(matches!(out, ReloadOutcome::Unchanged { .. }), "unchanged");
        // Every compact line changed, nothing else: one hunk, still the fast path.
        let out = st.apply_text(start.text()).unwrap();
        let ReloadOutcome::Updated { timings, .. } = out else {
            panic!("every prefix changed");
        };
        prop_assert!(timings.fast_path);
        let o = config::parse_routes(path, &start.text(), &ctx).unwrap();
        prop_assert_eq!(meaning(st.current().unwrap()), meaning(&o));
    }
}

/// The soak's churn in miniature: a few hundred changes spread over a large table (next
/// hops moved, routes withdrawn, and back), each way on the fast path and equal to the
/// full parse.
#[test]
fn spread_churn_takes_the_fast_path_both_ways() {
    let ctx = ctx();
    let path = Path::new("/x/routes.yaml");
    let a = Table {
        ipv4: true,
        footer: true,
        lines: (0..30_000).map(|i| line(i, i as usize)).collect(),
    };
    let mut b = a.clone();
    let mut gone = Vec::new();
    for (k, l) in b.lines.iter_mut().enumerate() {
        if k % 100 == 7 {
            if k % 300 == 7 {
                gone.push(k);
            } else {
                *l = line(k as u32, k + 1);
            }
        }
    }
    for k in gone.iter().rev() {
        b.lines.remove(*k);
    }
    let mut st = ReloadState::new(path, ctx.clone());
    st.apply_text(a.text()).unwrap();
    for t in [&b, &a, &b] {
        let out = st.apply_text(t.text()).unwrap();
        let ReloadOutcome::Updated { timings, diff, .. } = out else {
            panic!("the tables differ");
        };
        assert!(timings.fast_path);
        assert_eq!(diff.ipv4_added + diff.ipv4_removed, 100);
        assert_eq!(diff.ipv4_changed, 200);
        let o = config::parse_routes(path, &t.text(), &ctx).unwrap();
        assert_eq!(meaning(st.current().unwrap()), meaning(&o));
        st.settle();
    }
}
