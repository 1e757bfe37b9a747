//! serde model of the routes file, as written (before validation).
//!
//! Kept separate from the validated form ([`super::RouteSet`]) because the same route can
//! be written three ways (an `ipv4` entry, a `routes_compact` line, a `prefix_groups`
//! member) and all of them must be checked by the same code.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer};

use crate::de::Spanned;
use crate::types::{Cidr, Cidr6, IpAny, MacAddr};

/// Top-level keys of a routes file.
pub const ROUTES_KEYS: &[&str] = &[
    "neighbors",
    "ipv4",
    "ipv6",
    "mpls",
    "routes_compact",
    "prefix_groups",
];

/// A static neighbor: its MAC is known, no ARP needed.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NeighborCfg {
    pub ip: Spanned<IpAny>,
    pub mac: Spanned<MacAddr>,
    /// Defaults to the port whose subnet holds `ip`.
    pub port: Option<Spanned<String>>,
}

/// One member of an ECMP set.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NextHopCfg {
    pub via: Spanned<IpAny>,
    pub port: Option<Spanned<String>>,
    /// Labels written on egress, outermost first (pushed for IPv4; replace the in-label
    /// for swap). `3` alone means "no label" (implicit null).
    pub push: Option<Spanned<Vec<Spanned<u32>>>>,
    pub weight: Option<Spanned<u32>>,
}

/// TTL handling written in a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TtlModeCfg {
    Uniform,
    Pipe,
}

/// An `ipv4` entry.
pub type Ipv4RouteCfg = RouteCfg<Cidr>;
/// An `ipv6` entry: the same fields; `via` may be an IPv6 neighbor, or an IPv4 one with
/// a label stack (6PE, RFC 4798).
pub type Ipv6RouteCfg = RouteCfg<Cidr6>;

/// An `ipv4` or `ipv6` entry, by its prefix type.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteCfg<P> {
    pub prefix: Spanned<P>,
    pub via: Option<Spanned<IpAny>>,
    pub port: Option<Spanned<String>>,
    pub push: Option<Spanned<Vec<Spanned<u32>>>>,
    pub nexthops: Option<Spanned<Vec<NextHopCfg>>>,
    pub blackhole: Option<Spanned<bool>>,
    pub local: Option<Spanned<bool>>,
    pub ttl_mode: Option<Spanned<TtlModeCfg>>,
    pub pipe_ttl: Option<Spanned<u8>>,
}

/// What an `mpls` entry does with the top label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MplsAction {
    /// Replace the label (`push` of every next hop: the out-label, or several = swap and push).
    Swap,
    /// Swap, requiring at least two out-labels per next hop.
    SwapAndPush,
    /// Penultimate-hop pop: remove the label and forward to the next hop.
    Pop,
    /// Remove the label and look up what is below (egress LER).
    PopAndLookup,
}

/// The family of the packet a penultimate-hop pop exposes (`payload:` of an `mpls` pop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PayloadCfg {
    Ipv4,
    Ipv6,
}

/// An `mpls` entry.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MplsEntryCfg {
    pub in_label: Spanned<u32>,
    pub action: Spanned<MplsAction>,
    pub via: Option<Spanned<IpAny>>,
    pub port: Option<Spanned<String>>,
    pub push: Option<Spanned<Vec<Spanned<u32>>>>,
    pub nexthops: Option<Spanned<Vec<NextHopCfg>>>,
    pub ttl_mode: Option<Spanned<TtlModeCfg>>,
    pub pipe_ttl: Option<Spanned<u8>>,
    /// For `pop`: what the exposed packet is (default: the family of the next hop).
    pub payload: Option<Spanned<PayloadCfg>>,
}

/// Many prefixes sharing one target: the densest form for large tables.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefixGroupCfg {
    pub via: Option<Spanned<IpAny>>,
    pub port: Option<Spanned<String>>,
    pub push: Option<Spanned<Vec<Spanned<u32>>>>,
    pub nexthops: Option<Spanned<Vec<NextHopCfg>>>,
    pub blackhole: Option<Spanned<bool>>,
    pub ttl_mode: Option<Spanned<TtlModeCfg>>,
    pub pipe_ttl: Option<Spanned<u8>>,
    pub prefixes: Spanned<PrefixList>,
}

/// `prefixes:` as a YAML list, or as one string of whitespace-separated prefixes (a `|`
/// block with one prefix per line keeps exact line numbers in errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrefixList {
    Text(String),
    List(Vec<Spanned<String>>),
}

impl<'de> Deserialize<'de> for PrefixList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PrefixList, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PrefixList;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of prefixes or a block of prefixes separated by whitespace")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<PrefixList, E> {
                Ok(PrefixList::Text(s.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<PrefixList, E> {
                Ok(PrefixList::List(Vec::new()))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut s: A) -> Result<PrefixList, A::Error> {
                let mut v = Vec::with_capacity(s.size_hint().unwrap_or(0));
                while let Some(x) = s.next_element()? {
                    v.push(x);
                }
                Ok(PrefixList::List(v))
            }
        }
        d.deserialize_any(V)
    }
}
