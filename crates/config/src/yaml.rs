//! A YAML document as a tree of nodes that each know their line and column.
//!
//! Why not `serde_yaml`: it reports positions only for the first error it hits and drops
//! them for values that parsed fine, but semantic checks (duplicate prefix, next hop off
//! every subnet, ...) need the position of any node, and `check` must list every error.
//! So we run `yaml-rust2`'s event parser (maintained, pure Rust, marks on every event)
//! and build this small tree ourselves; [`crate::de`] then drives serde derives over it.
//! This module never interprets values: a scalar stays a string until a type asks for it.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
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

/// A syntax error: the document is not well-formed YAML.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub mark: Mark,
    pub message: String,
}

/// Parses one YAML document. An empty document yields a null scalar at 1:1.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut b, false).map_err(|e| SyntaxError {
        mark: Mark::from_marker(*e.marker()),
        message: e.info().to_string(),
    })?;
    if let Some(err) = b.error {
        return Err(err);
    }
    Ok(b.root.unwrap_or(Node {
        mark: Mark { line: 1, col: 1 },
        kind: NodeKind::Scalar {
            value: String::new(),
            plain: true,
        },
    }))
}

enum Open {
    Seq(Mark, usize, Vec<Node>),
    Map(Mark, usize, Vec<(Node, Node)>, Option<Node>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    root: Option<Node>,
    anchors: Vec<(usize, Node)>,
    error: Option<SyntaxError>,
}

impl Builder {
    fn push_node(&mut self, node: Node, anchor: usize) {
        if anchor != 0 {
            self.anchors.push((anchor, node.clone()));
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Open::Seq(_, _, items)) => items.push(node),
            Some(Open::Map(_, _, pairs, key)) => match key.take() {
                None => *key = Some(node),
                Some(k) => pairs.push((k, node)),
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, marker: Marker) {
        let mark = Mark::from_marker(marker);
        match ev {
            Event::Scalar(value, style, anchor, _tag) => {
                let plain = style == TScalarStyle::Plain;
                self.push_node(
                    Node {
                        mark,
                        kind: NodeKind::Scalar { value, plain },
                    },
                    anchor,
                );
            }
            Event::SequenceStart(anchor, _) => self.stack.push(Open::Seq(mark, anchor, Vec::new())),
            Event::MappingStart(anchor, _) => {
                self.stack.push(Open::Map(mark, anchor, Vec::new(), None))
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Open::Seq(mark, anchor, items)) => (
                        Node {
                            mark,
                            kind: NodeKind::Seq(items),
                        },
                        anchor,
                    ),
                    // A block mapping's start mark sits one column after its first key;
                    // the first key is where a reader looks.
                    Some(Open::Map(mark, anchor, pairs, _)) => (
                        Node {
                            mark: pairs.first().map_or(mark, |(k, _)| k.mark),
                            kind: NodeKind::Map(pairs),
                        },
                        anchor,
                    ),
                    None => return,
                };
                self.push_node(node, anchor);
            }
            Event::Alias(id) => {
                // Aliases are expanded by copy; tables are small where they are used.
                match self.anchors.iter().rev().find(|(a, _)| *a == id) {
                    Some((_, n)) => {
                        let mut n = n.clone();
                        n.mark = mark;
                        self.push_node(n, 0);
                    }
                    None => {
                        if self.error.is_none() {
                            self.error = Some(SyntaxError {
                                mark,
                                message: "alias refers to an unknown anchor".into(),
                            });
                        }
                    }
                }
            }
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart
            | Event::DocumentEnd => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
