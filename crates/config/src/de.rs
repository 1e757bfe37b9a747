//! serde over [`crate::yaml::Node`]: typed decoding that knows where every value came from.
//!
//! Every error carries the node's line:column and its key path (`mpls[3].in_label`).
//! Unknown keys (`deny_unknown_fields` on every model type) are all reported, with a
//! "did you mean" hint, instead of stopping at the first; the section decoders in
//! [`Decoder`] keep going after a bad list element so `check` can list every error.
//! [`Spanned`] captures the position of a value for the semantic checks that run after
//! decoding. This module knows nothing about routes or ports.

use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde::Deserialize;

use crate::yaml::{Mark, Node, NodeKind};

/// A decoding error with its position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeError {
    pub mark: Option<Mark>,
    pub path: Option<String>,
    pub message: String,
    pub hint: Option<String>,
}

impl DeError {
    fn new(message: impl Into<String>) -> DeError {
        DeError {
            mark: None,
            path: None,
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> DeError {
        self.hint = Some(hint.into());
        self
    }

    fn at(mut self, mark: Mark, path: &Path) -> DeError {
        if self.mark.is_none() {
            self.mark = Some(mark);
            self.path = Some(path.to_string());
        }
        self
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> DeError {
        let message = msg.to_string();
        let hint = message
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'))
            .map(|f| format!("add `{f}:` here"));
        DeError {
            hint,
            ..DeError::new(message)
        }
    }
}

/// A key path, built on the stack while descending; rendered only for errors.
#[derive(Clone, Copy, Debug)]
pub enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Key(Path::Root, k) => write!(f, "{k}"),
            Path::Key(p, k) => write!(f, "{p}.{k}"),
            Path::Index(p, i) => write!(f, "{p}[{i}]"),
        }
    }
}

/// A value plus the position it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub value: T,
    pub mark: Mark,
}

impl<T> Spanned<T> {
    pub fn new(value: T, mark: Mark) -> Spanned<T> {
        Spanned { value, mark }
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

const SPANNED: &str = "$config::Spanned";
const SPANNED_FIELDS: &[&str] = &["$line", "$col", "$value"];

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Spanned<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value read from a YAML node")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut m: A) -> Result<Spanned<T>, A::Error> {
                let mut line = 0u32;
                let mut col = 0u32;
                let mut value = None;
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "$line" => line = m.next_value()?,
                        "$col" => col = m.next_value()?,
                        _ => value = Some(m.next_value()?),
                    }
                }
                let value = value.ok_or_else(|| de::Error::custom("spanned value missing"))?;
                Ok(Spanned {
                    value,
                    mark: Mark { line, col },
                })
            }
        }
        d.deserialize_struct(SPANNED, SPANNED_FIELDS, V(PhantomData))
    }
}

/// Decodes values out of one document and collects every error found.
pub struct Decoder {
    errors: RefCell<Vec<DeError>>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder {
            errors: RefCell::new(Vec::new()),
        }
    }

    /// Records an error found outside serde (e.g. a semantic check).
    pub fn push(&self, e: DeError) {
        self.errors.borrow_mut().push(e);
    }

    /// Records an error at `mark`/`path`.
    pub fn error(&self, mark: Mark, path: &Path, message: impl Into<String>, hint: Option<String>) {
        self.push(DeError {
            mark: Some(mark),
            path: Some(path.to_string()),
            message: message.into(),
            hint,
        });
    }

    /// Records an error at `mark` with an already rendered key path.
    pub fn error_at(
        &self,
        mark: Mark,
        path: String,
        message: impl Into<String>,
        hint: Option<String>,
    ) {
        self.push(DeError {
            mark: Some(mark),
            path: Some(path),
            message: message.into(),
            hint,
        });
    }

    /// All errors so far.
    pub fn into_errors(self) -> Vec<DeError> {
        self.errors.into_inner()
    }

    pub fn error_count(&self) -> usize {
        self.errors.borrow().len()
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.borrow().is_empty()
    }

    /// Decodes `node` as a `T`; on failure the error is recorded and `None` returned.
    pub fn value<T: DeserializeOwned>(&self, node: &Node, path: &Path) -> Option<T> {
        let before = self.errors.borrow().len();
        let r = T::deserialize(NodeDe {
            node,
            path,
            sink: &self.errors,
        });
        match r {
            Ok(v) if self.errors.borrow().len() == before => Some(v),
            Ok(_) => None,
            Err(e) => {
                self.push(e.at(node.mark, path));
                None
            }
        }
    }

    /// Decodes a list element by element: a bad element is recorded and skipped.
    pub fn list<T: DeserializeOwned>(&self, node: &Node, path: &Path) -> Vec<T> {
        self.items(node, path).into_iter().map(|(_, v)| v).collect()
    }

    /// Like [`Decoder::list`], keeping each element's index for later messages.
    pub fn items<T: DeserializeOwned>(&self, node: &Node, path: &Path) -> Vec<(usize, T)> {
        match &node.kind {
            NodeKind::Seq(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| Some((i, self.value(n, &Path::Index(path, i))?)))
                .collect(),
            _ if node.is_null() => Vec::new(),
            _ => {
                self.error(
                    node.mark,
                    path,
                    format!("expected a list, found {}", node.kind_name()),
                    Some("write the entries as `- item` lines or `[a, b]`".into()),
                );
                Vec::new()
            }
        }
    }

    /// Checks that `node` is a mapping whose keys are all in `allowed`, reporting the others.
    /// Returns the (key, value) pairs with known keys.
    pub fn top_level<'n>(
        &self,
        node: &'n Node,
        allowed: &[&str],
        what: &str,
    ) -> Vec<(&'n str, &'n Node)> {
        let pairs = match &node.kind {
            NodeKind::Map(p) => p,
            _ => {
                self.error(
                    node.mark,
                    &Path::Root,
                    format!(
                        "expected {what} (a mapping of keys), found {}",
                        node.kind_name()
                    ),
                    Some(format!(
                        "start the file with one of: {}",
                        allowed.join(", ")
                    )),
                );
                return Vec::new();
            }
        };
        let mut out: Vec<(&str, &Node)> = Vec::new();
        for (k, v) in pairs {
            let name = k.as_str().unwrap_or("");
            if !allowed.contains(&name) {
                self.push(unknown_key(name, allowed).at(k.mark, &Path::Key(&Path::Root, name)));
            } else if out.iter().any(|(n, _)| *n == name) {
                self.push(duplicate_key(name).at(k.mark, &Path::Key(&Path::Root, name)));
            } else {
                out.push((name, v));
            }
        }
        out
    }
}

fn unknown_key(name: &str, allowed: &[&str]) -> DeError {
    let e = DeError::new(format!("unknown key `{name}`"));
    match closest(name, allowed) {
        Some(s) => e.hint(format!("did you mean `{s}`?")),
        None => e.hint(format!("allowed keys here: {}", allowed.join(", "))),
    }
}

fn duplicate_key(name: &str) -> DeError {
    DeError::new(format!("duplicate key `{name}`")).hint("remove one of the two entries")
}

/// The allowed name nearest to `name` by edit distance, if it is close.
fn closest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    fn dist(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let sub = prev[j] + usize::from(ca != *cb);
                cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }
    allowed
        .iter()
        .map(|a| (dist(name, a), *a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 3))
        .min()
        .map(|(_, a)| a)
}

struct NodeDe<'a> {
    node: &'a Node,
    path: &'a Path<'a>,
    sink: &'a RefCell<Vec<DeError>>,
}

impl<'a> NodeDe<'a> {
    fn err(&self, message: impl Into<String>) -> DeError {
        DeError::new(message).at(self.node.mark, self.path)
    }

    fn scalar(&self, expected: &str) -> Result<&'a str, DeError> {
        match &self.node.kind {
            NodeKind::Scalar { value, .. } => Ok(value),
            _ => Err(self.err(format!(
                "expected {expected}, found {}",
                self.node.kind_name()
            ))),
        }
    }

    fn int<T: TryFrom<i128>>(&self, what: &str, min: i128, max: i128) -> Result<T, DeError> {
        let s = self.scalar(&format!("an integer ({what})"))?;
        let t = s.replace('_', "");
        let parsed = if let Some(h) = t.strip_prefix("0x") {
            i128::from_str_radix(h, 16).ok()
        } else if let Some(o) = t.strip_prefix("0o") {
            i128::from_str_radix(o, 8).ok()
        } else {
            t.parse::<i128>().ok()
        };
        match parsed {
            Some(v) if (min..=max).contains(&v) => {
                T::try_from(v).map_err(|_| self.err(format!("`{s}` is out of range for {what}")))
            }
            Some(_) => Err(self
                .err(format!("{s} is out of range for {what}"))
                .hint(format!("use a value in {min}..={max}"))),
            None => Err(self
                .err(format!("expected an integer ({what}), found `{s}`"))
                .hint(format!("use a whole number in {min}..={max}"))),
        }
    }

    fn locate<T>(&self, r: Result<T, DeError>) -> Result<T, DeError> {
        r.map_err(|e| e.at(self.node.mark, self.path))
    }
}

macro_rules! int_method {
    ($method:ident, $visit:ident, $t:ty) => {
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
            let x: $t = self.int(stringify!($t), <$t>::MIN as i128, <$t>::MAX as i128)?;
            self.locate(v.$visit(x))
        }
    };
}

impl<'de, 'a> de::Deserializer<'de> for NodeDe<'a> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.node.kind {
            NodeKind::Seq(_) => self.deserialize_seq(v),
            NodeKind::Map(_) => self.deserialize_map(v),
            NodeKind::Scalar { value, plain } => {
                if !plain {
                    return self.locate(v.visit_str(value));
                }
                if self.node.is_null() {
                    return self.locate(v.visit_unit());
                }
                let r = match value.as_str() {
                    "true" | "True" | "TRUE" => v.visit_bool(true),
                    "false" | "False" | "FALSE" => v.visit_bool(false),
                    s => {
                        if let Ok(u) = s.parse::<u64>() {
                            v.visit_u64(u)
                        } else if let Ok(i) = s.parse::<i64>() {
                            v.visit_i64(i)
                        } else if let Ok(f) = s.parse::<f64>() {
                            v.visit_f64(f)
                        } else {
                            v.visit_str(s)
                        }
                    }
                };
                self.locate(r)
            }
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        let s = self.scalar("true or false")?;
        let b = match s {
            "true" | "True" | "TRUE" | "yes" => true,
            "false" | "False" | "FALSE" | "no" => false,
            _ => {
                return Err(self
                    .err(format!("expected true or false, found `{s}`"))
                    .hint("write `true` or `false`"))
            }
        };
        self.locate(v.visit_bool(b))
    }

    int_method!(deserialize_i8, visit_i8, i8);
    int_method!(deserialize_i16, visit_i16, i16);
    int_method!(deserialize_i32, visit_i32, i32);
    int_method!(deserialize_i64, visit_i64, i64);
    int_method!(deserialize_u8, visit_u8, u8);
    int_method!(deserialize_u16, visit_u16, u16);
    int_method!(deserialize_u32, visit_u32, u32);
    int_method!(deserialize_u64, visit_u64, u64);

    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(v)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        let s = self.scalar("a number")?;
        match s.parse::<f64>() {
            Ok(f) => self.locate(v.visit_f64(f)),
            Err(_) => Err(self.err(format!("expected a number, found `{s}`"))),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        let s = self.scalar("a string")?;
        self.locate(v.visit_str(s))
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        if self.node.is_null() {
            self.locate(v.visit_none())
        } else {
            v.visit_some(self)
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        if self.node.is_null() {
            self.locate(v.visit_unit())
        } else {
            Err(self.err(format!("expected nothing, found {}", self.node.kind_name())))
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(v)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, DeError> {
        v.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.node.kind {
            NodeKind::Seq(items) => {
                let r = v.visit_seq(SeqAcc {
                    items,
                    i: 0,
                    path: self.path,
                    sink: self.sink,
                });
                self.locate(r)
            }
            _ => Err(self
                .err(format!("expected a list, found {}", self.node.kind_name()))
                .hint("write a list as `[a, b]` or as `- item` lines")),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        v: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_seq(v)
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        match &self.node.kind {
            NodeKind::Map(pairs) => {
                let pairs: Vec<&(Node, Node)> = pairs.iter().collect();
                self.visit_pairs(pairs, v)
            }
            _ => Err(self.err(format!(
                "expected a mapping (`key: value` lines), found {}",
                self.node.kind_name()
            ))),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        if name == SPANNED {
            return v.visit_map(SpannedAcc {
                de: Some(self),
                step: 0,
            });
        }
        let pairs = match &self.node.kind {
            NodeKind::Map(pairs) => pairs,
            _ => {
                return Err(self
                    .err(format!(
                        "expected a mapping (`key: value` lines), found {}",
                        self.node.kind_name()
                    ))
                    .hint(format!("allowed keys: {}", fields.join(", "))))
            }
        };
        let mut kept: Vec<&(Node, Node)> = Vec::with_capacity(pairs.len());
        for p in pairs {
            let key = p.0.as_str().unwrap_or("");
            let kp = Path::Key(self.path, key);
            if !fields.contains(&key) {
                self.sink
                    .borrow_mut()
                    .push(unknown_key(key, fields).at(p.0.mark, &kp));
            } else if kept.iter().any(|q| q.0.as_str() == Some(key)) {
                self.sink
                    .borrow_mut()
                    .push(duplicate_key(key).at(p.0.mark, &kp));
            } else {
                kept.push(p);
            }
        }
        self.visit_pairs(kept, v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        match &self.node.kind {
            NodeKind::Scalar { value, .. } => {
                if !variants.contains(&value.as_str()) {
                    return Err(self
                        .err(format!("unknown value `{value}`"))
                        .hint(format!("use one of: {}", variants.join(", "))));
                }
                let r = v.visit_enum(value.as_str().into_deserializer());
                self.locate(r)
            }
            NodeKind::Map(pairs) if pairs.len() == 1 => {
                let (k, val) = &pairs[0];
                let key = k.as_str().unwrap_or("");
                if !variants.contains(&key) {
                    return Err(DeError::new(format!("unknown value `{key}`"))
                        .hint(format!("use one of: {}", variants.join(", ")))
                        .at(k.mark, self.path));
                }
                let r = v.visit_enum(EnumAcc {
                    key,
                    val: NodeDe {
                        node: val,
                        path: &Path::Key(self.path, key),
                        sink: self.sink,
                    },
                });
                self.locate(r)
            }
            _ => Err(self
                .err(format!(
                    "expected one of {} (or a mapping with one of them as its only key), found {}",
                    variants.join(", "),
                    self.node.kind_name()
                ))
                .hint(format!("use one of: {}", variants.join(", ")))),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        self.deserialize_str(v)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, DeError> {
        v.visit_unit()
    }
}

impl<'a> NodeDe<'a> {
    fn visit_pairs<'de, V: Visitor<'de>>(
        self,
        pairs: Vec<&'a (Node, Node)>,
        v: V,
    ) -> Result<V::Value, DeError> {
        let r = v.visit_map(MapAcc {
            pairs,
            i: 0,
            path: self.path,
            sink: self.sink,
        });
        self.locate(r)
    }
}

struct SeqAcc<'a> {
    items: &'a [Node],
    i: usize,
    path: &'a Path<'a>,
    sink: &'a RefCell<Vec<DeError>>,
}

impl<'de> de::SeqAccess<'de> for SeqAcc<'_> {
    type Error = DeError;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        let Some(node) = self.items.get(self.i) else {
            return Ok(None);
        };
        let path = Path::Index(self.path, self.i);
        self.i += 1;
        seed.deserialize(NodeDe {
            node,
            path: &path,
            sink: self.sink,
        })
        .map(Some)
        .map_err(|e| e.at(node.mark, &path))
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.i)
    }
}

struct MapAcc<'a> {
    pairs: Vec<&'a (Node, Node)>,
    i: usize,
    path: &'a Path<'a>,
    sink: &'a RefCell<Vec<DeError>>,
}

impl<'de> de::MapAccess<'de> for MapAcc<'_> {
    type Error = DeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let Some((k, _)) = self.pairs.get(self.i) else {
            return Ok(None);
        };
        seed.deserialize(NodeDe {
            node: k,
            path: self.path,
            sink: self.sink,
        })
        .map(Some)
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, DeError> {
        let (k, val) = self.pairs[self.i];
        self.i += 1;
        let key = k.as_str().unwrap_or("?");
        let path = Path::Key(self.path, key);
        seed.deserialize(NodeDe {
            node: val,
            path: &path,
            sink: self.sink,
        })
        .map_err(|e| e.at(val.mark, &path))
    }
}

struct SpannedAcc<'a> {
    de: Option<NodeDe<'a>>,
    step: usize,
}

impl<'de> de::MapAccess<'de> for SpannedAcc<'_> {
    type Error = DeError;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match SPANNED_FIELDS.get(self.step) {
            Some(f) => seed.deserialize(f.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, DeError> {
        let step = self.step;
        self.step += 1;
        let de = self.de.as_ref().expect("value read once");
        match step {
            0 => seed.deserialize(de.node.mark.line.into_deserializer()),
            1 => seed.deserialize(de.node.mark.col.into_deserializer()),
            _ => seed.deserialize(self.de.take().expect("value read once")),
        }
    }
}

struct EnumAcc<'a> {
    key: &'a str,
    val: NodeDe<'a>,
}

impl<'de, 'a> de::EnumAccess<'de> for EnumAcc<'a> {
    type Error = DeError;
    type Variant = NodeDe<'a>;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, NodeDe<'a>), DeError> {
        let k: de::value::StrDeserializer<DeError> = self.key.into_deserializer();
        Ok((seed.deserialize(k)?, self.val))
    }
}

impl<'de> de::VariantAccess<'de> for NodeDe<'_> {
    type Error = DeError;
    fn unit_variant(self) -> Result<(), DeError> {
        if self.node.is_null() {
            Ok(())
        } else {
            Err(self.err("this value takes no settings"))
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, DeError> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_seq(self, v)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, DeError> {
        de::Deserializer::deserialize_struct(self, "", fields, v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse;

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Item {
        name: String,
        #[serde(default)]
        mtu: Option<u16>,
        at: Option<Spanned<u32>>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "snake_case")]
    enum Mode {
        Fast,
        Slow { wait_us: u32 },
    }

    fn decode_list(text: &str) -> (Vec<Item>, Vec<DeError>) {
        let n = parse(text).unwrap();
        let d = Decoder::new();
        let v = d.list::<Item>(&n, &Path::Key(&Path::Root, "items"));
        (v, d.into_errors())
    }

    #[test]
    fn every_bad_element_is_reported_with_path_and_position() {
        let (v, e) = decode_list("- {name: a, mtu: 70000}\n- {name: b}\n- {nme: c, colour: 1}\n");
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].name, "b");
        assert_eq!(e.len(), 4, "{e:#?}");
        assert_eq!(e[0].path.as_deref(), Some("items[0].mtu"));
        assert_eq!(e[0].mark, Some(Mark { line: 1, col: 18 }));
        assert!(e[0].message.contains("out of range"), "{}", e[0].message);
        assert_eq!(e[1].path.as_deref(), Some("items[2].nme"));
        assert_eq!(e[1].hint.as_deref(), Some("did you mean `name`?"));
        assert_eq!(e[2].path.as_deref(), Some("items[2].colour"));
        assert_eq!(e[3].message, "missing field `name`");
        assert_eq!(e[3].mark, Some(Mark { line: 3, col: 4 }));
    }

    #[test]
    fn spanned_values_know_their_position() {
        let (v, e) = decode_list("- name: x\n  at: 42\n");
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(
            v[0].at,
            Some(Spanned {
                value: 42,
                mark: Mark { line: 2, col: 7 }
            })
        );
    }

    #[test]
    fn enums_from_scalars_and_single_key_maps() {
        let d = Decoder::new();
        let n = parse("[fast, {slow: {wait_us: 5}}, medium]").unwrap();
        let NodeKind::Seq(items) = &n.kind else {
            panic!()
        };
        assert_eq!(d.value::<Mode>(&items[0], &Path::Root), Some(Mode::Fast));
        assert_eq!(
            d.value::<Mode>(&items[1], &Path::Root),
            Some(Mode::Slow { wait_us: 5 })
        );
        assert_eq!(d.value::<Mode>(&items[2], &Path::Root), None);
        let e = d.into_errors();
        assert_eq!(e[0].message, "unknown value `medium`");
        assert_eq!(e[0].mark, Some(Mark { line: 1, col: 30 }));
    }

    #[test]
    fn wrong_types_are_explained() {
        let (_, e) = decode_list("- name: [1]\n");
        assert_eq!(e[0].message, "expected a string, found a list");
        assert_eq!(e[0].path.as_deref(), Some("items[0].name"));
    }
}
