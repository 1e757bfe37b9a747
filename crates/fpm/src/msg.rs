//! The typed messages the decoder yields: what zebra said, before next hops are mapped to
//! ports. Kept apart from the netlink structs so the session logic never sees wire bytes.

/// Add/replace or delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `RTM_NEWROUTE` / `RTM_NEWNEXTHOP`: zebra always means "install or replace".
    New,
    /// `RTM_DELROUTE` / `RTM_DELNEXTHOP`.
    Del,
}

/// What a route message is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// An IPv4 prefix, host byte order, host bits clear.
    Ipv4 { addr: u32, len: u8 },
    /// An IPv6 prefix, host byte order (big-endian integer), host bits clear.
    Ipv6 { addr: u128, len: u8 },
    /// An MPLS in-label (label table entry).
    Label(u32),
}

/// A next hop's address. zebra writes an IPv6 route's next hop in either family: an
/// IPv4 one (6PE, RFC 4798: IPv6 over an IPv4 LSP) arrives as a 4-byte gateway or as an
/// IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2), which is the same
/// IPv4 next hop and is decoded as one ([`Gateway::from_v6`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Gateway {
    /// Host byte order.
    V4(u32),
    /// Host byte order (big-endian integer); never IPv4-mapped.
    V6(u128),
}

/// `::ffff:0:0/96`.
const V4_MAPPED: u128 = 0xffff << 32;

impl Gateway {
    /// An IPv6 address from the wire; an IPv4-mapped one is its IPv4 address.
    pub fn from_v6(a: u128) -> Gateway {
        if a >> 32 == V4_MAPPED >> 32 {
            Gateway::V4(a as u32)
        } else {
            Gateway::V6(a)
        }
    }

    /// An address of 4 or 16 bytes (network order), or `None` for another length.
    pub fn from_bytes(b: &[u8]) -> Option<Gateway> {
        match b.len() {
            4 => Some(Gateway::V4(u32::from_be_bytes(b.try_into().ok()?))),
            16 => Some(Gateway::from_v6(u128::from_be_bytes(b.try_into().ok()?))),
            _ => None,
        }
    }

    /// An IPv6 link-local address (fe80::/10): meaningful only with its interface.
    pub fn is_link_local(self) -> bool {
        matches!(self, Gateway::V6(a) if a >> 118 == 0x3fa)
    }
}

impl From<u32> for Gateway {
    fn from(a: u32) -> Gateway {
        Gateway::V4(a)
    }
}

impl std::fmt::Display for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match *self {
            Gateway::V4(a) => std::net::Ipv4Addr::from(a).fmt(f),
            Gateway::V6(a) => std::net::Ipv6Addr::from(a).fmt(f),
        }
    }
}

/// One path as zebra names it: a gateway and/or an interface index, the labels written
/// on egress (push for IP routes, the out-stack for label entries; implicit null
/// already removed) and its weight (1 when none was given).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    /// Gateway; `None` for an interface route.
    pub gateway: Option<Gateway>,
    /// Linux ifindex; 0 when not given.
    pub ifindex: u32,
    pub labels: Vec<u32>,
    pub weight: u32,
}

/// Where a route sends packets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RouteBody {
    /// Blackhole, unreachable or prohibit: all are dropped (no ICMP is generated for
    /// unreachable/prohibit; the data path counts them as `no_route`).
    Drop,
    /// One or more paths (ECMP with weights).
    Paths(Vec<Path>),
    /// The paths of the next-hop group (or single next hop) with this id (`RTA_NH_ID`).
    Group(u32),
}

/// A next-hop object (`RTM_NEWNEXTHOP`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NexthopBody {
    /// A single next hop.
    Single(Path),
    /// `NHA_BLACKHOLE`.
    Blackhole,
    /// A group: member next-hop ids with weights (1..=256).
    Group(Vec<(u32, u32)>),
}

/// One decoded netlink message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// A route; `body` is `None` for deletes.
    Route {
        op: Op,
        key: Key,
        body: Option<RouteBody>,
    },
    /// A next-hop object; `body` is `None` for deletes.
    Nexthop {
        op: Op,
        id: u32,
        body: Option<NexthopBody>,
    },
    /// A message type this router does not use (neighbours, links, ...), by type.
    Other(u16),
}

impl Message {
    /// Metric label of the message type.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Route { op: Op::New, .. } => "route_add",
            Message::Route { op: Op::Del, .. } => "route_del",
            Message::Nexthop { op: Op::New, .. } => "nexthop_add",
            Message::Nexthop { op: Op::Del, .. } => "nexthop_del",
            Message::Other(_) => "other",
        }
    }
}

/// Every message kind label, in a fixed order (for metrics).
pub const MESSAGE_KINDS: [&str; 5] = [
    "route_add",
    "route_del",
    "nexthop_add",
    "nexthop_del",
    "other",
];
