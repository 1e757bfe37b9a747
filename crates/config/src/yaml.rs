//! A YAML document as a tree of nodes that each know their line and column.
//!
//! Why not `serde_yaml`: it reports positions only for the first error it hits and drops
//! them for values that parsed fine, but semantic checks (duplicate prefix, next hop off
//! every subnet, ...) need the position of any node, and `check` must list every error.
//! So we run `yaml-rust2`'s event parser (maintained, pure Rust, marks on every event)
//! and build this small tree ourselves; [`crate::de`] then drives serde derives over it.
//! This module never interprets values: a scalar stays a string until a type asks for it.
//!
//! Routes files arrive from outside while the router runs, so the tree is bounded as it
//! is built: nesting ([`MAX_DEPTH`]; the builder, clone, drop and decoder recurse) and
//! what anchors and aliases copy ([`MAX_ALIASES`], [`MAX_COPIED_NODES`],
//! [`MAX_COPIED_BYTES`]: an "alias bomb" of 300 bytes expands to 10^9 nodes). It never
//! recurses over the event stream and never makes a copy before charging it.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A position in a source file, both 1-based.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mark {
    pub line: u32,
    pub col: u32,
}

impl Mark {
    fn from_marker(m: Marker) -> Mark {
        // yaml-rust2 counts lines from 1 and columns from 0.
        Mark {
            line: m.line() as u32,
            col: m.col() as u32 + 1,
        }
    }
}

/// One YAML node.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub mark: Mark,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A scalar; `plain` is false for quoted and block scalars, which are always strings.
    Scalar {
        value: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    /// Key/value pairs in source order (duplicates are reported by the decoder).
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// True for an empty plain scalar, `~` or `null`.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { value, plain: true }
            if value.is_empty() || value == "~" || value == "null" || value == "Null" || value == "NULL")
    }

    /// The scalar text, if this is a scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The value under `key` when this is a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// A word for the node's kind, for "expected X, found Y" messages.
    pub fn kind_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar { .. } if self.is_null() => "nothing (null)",
            NodeKind::Scalar { .. } => "a scalar",
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
        }
    }
}

/// Deepest nesting of lists and mappings accepted. A routes file nests 6 deep at most
/// (`ipv4[i].nexthops[j].push[k]`) and a startup config 5; deeper is hostile or broken.
/// The tree is built, cloned, decoded and dropped by recursion, so this also bounds the
/// stack those take.
pub const MAX_DEPTH: usize = 64;
/// Most alias uses (`*name`) in one document.
pub const MAX_ALIASES: usize = 10_000;
/// Most nodes that anchors and aliases may copy in one document (an alias is expanded
/// by copying its anchor's node; so is the anchored node itself, once).
pub const MAX_COPIED_NODES: usize = 1_000_000;
/// Most scalar text that anchors and aliases may copy in one document.
pub const MAX_COPIED_BYTES: usize = 16 << 20;

/// Why a document was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyntaxKind {
    /// Not well-formed YAML.
    Malformed,
    /// Lists and mappings nest deeper than [`MAX_DEPTH`].
    TooDeep,
    /// More than [`MAX_ALIASES`] aliases.
    TooManyAliases,
    /// Aliases would copy more than [`MAX_COPIED_NODES`] or [`MAX_COPIED_BYTES`].
    AliasExpansion,
}

/// A syntax error: the document is not well-formed YAML, or exceeds a bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub mark: Mark,
    pub message: String,
    pub kind: SyntaxKind,
}

impl SyntaxError {
    fn new(mark: Mark, kind: SyntaxKind, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            mark,
            message: message.into(),
            kind,
        }
    }
}

/// Parses the first YAML document of `text`. An empty document yields a null scalar
/// at 1:1.
///
/// The events are pulled one by one in a loop (`yaml-rust2`'s own `load` recurses once
/// per nesting level, and 40,000 nested `- ` overflow the stack before any check could
/// run); nesting depth and alias expansion are bounded as the events arrive, so a
/// hostile document stops at the first event past a bound, with its position.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    loop {
        let (ev, marker) = parser.next_token().map_err(|e| {
            let mark = Mark::from_marker(*e.marker());
            match e.info() {
                // The scanner looks ahead for keys and counts flow levels itself; past
                // 255 it stops, which may come before the parser's events reach ours.
                "recursion limit exceeded" => too_deep(mark),
                info => SyntaxError::new(mark, SyntaxKind::Malformed, info),
            }
        })?;
        if matches!(ev, Event::DocumentEnd | Event::StreamEnd) {
            break;
        }
        b.on_event(ev, Mark::from_marker(marker))?;
    }
    Ok(b.root.unwrap_or(Node {
        mark: Mark { line: 1, col: 1 },
        kind: NodeKind::Scalar {
            value: String::new(),
            plain: true,
        },
    }))
}

fn too_deep(mark: Mark) -> SyntaxError {
    SyntaxError::new(
        mark,
        SyntaxKind::TooDeep,
        format!("lists and mappings nest more than {MAX_DEPTH} deep"),
    )
}

/// The size of a subtree: what copying it costs.
#[derive(Clone, Copy, Debug, Default)]
struct Weight {
    nodes: usize,
    bytes: usize,
}

impl Weight {
    fn add(&mut self, w: Weight) {
        self.nodes = self.nodes.saturating_add(w.nodes);
        self.bytes = self.bytes.saturating_add(w.bytes);
    }
}

enum Open {
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>, Option<Node>),
}

/// A list or mapping being built.
struct Frame {
    mark: Mark,
    anchor: usize,
    /// Of the children so far.
    weight: Weight,
    open: Open,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    /// By anchor id (`yaml-rust2` gives each anchor definition a fresh id).
    anchors: HashMap<usize, (Node, Weight)>,
    aliases: usize,
    copied: Weight,
}

impl Builder {
    /// Charges a copy of `w` to the document's budget.
    fn copy(&mut self, w: Weight, mark: Mark) -> Result<(), SyntaxError> {
        self.copied.add(w);
        if self.copied.nodes > MAX_COPIED_NODES || self.copied.bytes > MAX_COPIED_BYTES {
            return Err(SyntaxError::new(
                mark,
                SyntaxKind::AliasExpansion,
                format!(
                    "anchors and aliases expand to more than {MAX_COPIED_NODES} nodes or \
                     {} MiB of text (an alias bomb?)",
                    MAX_COPIED_BYTES >> 20
                ),
            ));
        }
        Ok(())
    }

    fn push_node(&mut self, node: Node, anchor: usize, w: Weight) -> Result<(), SyntaxError> {
        if anchor != 0 {
            self.copy(w, node.mark)?;
            self.anchors.insert(anchor, (node.clone(), w));
        }
        let Some(f) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        f.weight.add(w);
        match &mut f.open {
            Open::Seq(items) => items.push(node),
            Open::Map(pairs, key) => match key.take() {
                None => *key = Some(node),
                Some(k) => pairs.push((k, node)),
            },
        }
        Ok(())
    }

    fn open(&mut self, mark: Mark, anchor: usize, open: Open) -> Result<(), SyntaxError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(too_deep(mark));
        }
        self.stack.push(Frame {
            mark,
            anchor,
            weight: Weight::default(),
            open,
        });
        Ok(())
    }

    fn close(&mut self) -> Result<(), SyntaxError> {
        let Some(f) = self.stack.pop() else {
            return Ok(());
        };
        let node = match f.open {
            Open::Seq(items) => Node {
                mark: f.mark,
                kind: NodeKind::Seq(items),
            },
            // A block mapping's start mark sits one column after its first key;
            // the first key is where a reader looks.
            Open::Map(pairs, _) => Node {
                mark: pairs.first().map_or(f.mark, |(k, _)| k.mark),
                kind: NodeKind::Map(pairs),
            },
        };
        let mut w = f.weight;
        w.add(Weight { nodes: 1, bytes: 0 });
        self.push_node(node, f.anchor, w)
    }

    fn alias(&mut self, id: usize, mark: Mark) -> Result<(), SyntaxError> {
        self.aliases += 1;
        if self.aliases > MAX_ALIASES {
            return Err(SyntaxError::new(
                mark,
                SyntaxKind::TooManyAliases,
                format!("more than {MAX_ALIASES} aliases"),
            ));
        }
        let Some(&(_, w)) = self.anchors.get(&id) else {
            return Err(SyntaxError::new(
                mark,
                SyntaxKind::Malformed,
                "alias refers to an unknown anchor",
            ));
        };
        // Charged before the copy is made: a bomb stops here, not in the allocator.
        self.copy(w, mark)?;
        let mut n = self.anchors[&id].0.clone();
        n.mark = mark;
        self.push_node(n, 0, w)
    }

    fn on_event(&mut self, ev: Event, mark: Mark) -> Result<(), SyntaxError> {
        match ev {
            Event::Scalar(value, style, anchor, _tag) => {
                let plain = style == TScalarStyle::Plain;
                let w = Weight {
                    nodes: 1,
                    bytes: value.len(),
                };
                self.push_node(
                    Node {
                        mark,
                        kind: NodeKind::Scalar { value, plain },
                    },
                    anchor,
                    w,
                )
            }
            Event::SequenceStart(anchor, _) => self.open(mark, anchor, Open::Seq(Vec::new())),
            Event::MappingStart(anchor, _) => self.open(mark, anchor, Open::Map(Vec::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => self.close(),
            Event::Alias(id) => self.alias(id, mark),
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart
            | Event::DocumentEnd => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path as FsPath;

    #[test]
    fn marks_are_one_based_and_point_at_nodes() {
        let n = parse("a: 1\nlist:\n  - x\n  - {k: 'v'}\n").unwrap();
        let a = n.get("a").unwrap();
        assert_eq!(a.mark, Mark { line: 1, col: 4 });
        let NodeKind::Seq(items) = &n.get("list").unwrap().kind else {
            panic!("not a list")
        };
        assert_eq!(items[0].mark, Mark { line: 3, col: 5 });
        let v = items[1].get("k").unwrap();
        assert_eq!(v.mark, Mark { line: 4, col: 9 });
        assert_eq!(
            v.kind,
            NodeKind::Scalar {
                value: "v".into(),
                plain: false
            }
        );
    }

    #[test]
    fn syntax_errors_carry_a_position() {
        let e = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.mark.line >= 2, "{e:?}");
        assert!(!e.message.is_empty());
    }

    #[test]
    fn empty_document_is_null() {
        assert!(parse("").unwrap().is_null());
        assert!(parse("# only a comment\n").unwrap().is_null());
    }

    #[test]
    fn aliases_are_copied() {
        let n = parse("a: &x [1]\nb: *x\n").unwrap();
        assert!(matches!(&n.get("b").unwrap().kind, NodeKind::Seq(v) if v.len() == 1));
    }

    /// The classic "billion laughs": 9 levels of 9 aliases each, 10^9 scalars expanded.
    pub(crate) fn alias_bomb() -> String {
        let mut s = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (p, c) in "abcdefgh".chars().zip("bcdefghi".chars()) {
            let items = vec![format!("*{p}"); 9].join(",");
            s.push_str(&format!("{c}: &{c} [{items}]\n"));
        }
        s
    }

    /// Runs `f` on a thread with the default test-thread stack (2 MiB), so a parser that
    /// recursed once per level would overflow it.
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn an_alias_bomb_is_refused_before_it_is_expanded() {
        let bomb = alias_bomb();
        let e = parse(&bomb).unwrap_err();
        assert_eq!(e.kind, SyntaxKind::AliasExpansion, "{e:?}");
        // Refused at a deep level (an alias, or the list holding them): the kind says the
        // expansion budget stopped it (no wall-clock bound: the suite runs on busy boxes).
        assert!(e.mark.line >= 5, "{e:?}");
        let line = bomb.lines().nth(e.mark.line as usize - 1).unwrap();
        assert!(
            matches!(line.as_bytes()[e.mark.col as usize - 1], b'*' | b'['),
            "{e:?}"
        );
        // Many small aliases, each cheap: the count is bounded too.
        let many: String = std::iter::once("x: &x 1\nl:\n".to_string())
            .chain((0..MAX_ALIASES + 1).map(|_| "  - *x\n".to_string()))
            .collect();
        let e = parse(&many).unwrap_err();
        assert_eq!(e.kind, SyntaxKind::TooManyAliases, "{e:?}");
        assert_eq!(e.mark.line as usize, MAX_ALIASES + 3);
        // A long text anchored and aliased: bounded by bytes.
        let big = "y".repeat(1 << 20);
        let text: String = std::iter::once(format!("x: &x {big}\nl:\n"))
            .chain((0..20).map(|_| "  - *x\n".to_string()))
            .collect();
        assert_eq!(parse(&text).unwrap_err().kind, SyntaxKind::AliasExpansion);
    }

    #[test]
    fn nesting_is_bounded_at_max_depth() {
        let seq = |n: usize| format!("{}x\n", "- ".repeat(n));
        assert!(parse(&seq(MAX_DEPTH)).is_ok());
        let e = parse(&seq(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(e.kind, SyntaxKind::TooDeep);
        assert_eq!(
            e.mark,
            Mark {
                line: 1,
                col: 2 * MAX_DEPTH as u32 + 1
            }
        );
        let flow = |n: usize| format!("{}{}\n", "[".repeat(n), "]".repeat(n));
        assert!(parse(&flow(MAX_DEPTH)).is_ok());
        let e = parse(&flow(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(
            (e.kind, e.mark.col),
            (SyntaxKind::TooDeep, MAX_DEPTH as u32 + 1)
        );
    }

    #[test]
    fn a_megabyte_of_nesting_is_refused_on_a_small_stack() {
        // Block nesting needs indentation: each level one line, indented one more step.
        let indented = |step: usize, item: &str| {
            let mut s = String::new();
            let mut i = 0;
            while s.len() < 1 << 20 {
                s.push_str(&" ".repeat(i * step));
                s.push_str(item);
                i += 1;
            }
            s
        };
        let shapes = [
            ("block lists", "- ".repeat(1 << 19)),
            ("flow lists", "[".repeat(1 << 20)),
            ("flow mappings", "{a: ".repeat(1 << 18)),
            ("block mappings", indented(1, "a:\n")),
            ("mappings in lists", indented(2, "- a:\n")),
        ];
        for (what, text) in shapes {
            let e = on_small_stack(move || parse(&text).map(|_| ()));
            let e = e.expect_err(what);
            // The scanner's own flow limit (255) is not what stops it: the depth check is.
            assert_eq!(e.kind, SyntaxKind::TooDeep, "{what}: {e:?}");
        }
        // The 40,000-deep file of the report, through a whole routes-file check.
        let text = format!("ipv4:\n{}x\n", "- ".repeat(40_000));
        let r = on_small_stack(move || {
            crate::parse_routes(
                FsPath::new("r.yaml"),
                &text,
                &crate::RouteContext::standalone(),
            )
            .map(|_| ())
        });
        let d = r.unwrap_err().diagnostics().unwrap().0[0].clone();
        assert_eq!((d.line, d.col), (2, 2 * MAX_DEPTH as u32 - 1));
        assert!(d.message.contains("nest more than 64 deep"), "{d}");
    }
}
