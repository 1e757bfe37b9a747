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
    /// An MPLS in-label (label table entry).
    Label(u32),
}

/// One path as zebra names it: a gateway and/or an interface index, the labels written
/// on egress (push for IPv4 routes, the out-stack for label entries; implicit null
/// already removed) and its weight (1 when none was given).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    /// IPv4 gateway, host byte order; `None` for an interface route.
    pub gateway: Option<u32>,
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
