//! Why one message was skipped. The stream goes on; each reason is counted and logged.

/// A message that was decoded but cannot be applied, or could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MsgError {
    #[error("netlink message header claims {claimed} bytes but {left} are left in the frame")]
    Truncated { claimed: u32, left: usize },
    #[error("malformed route message: {0}")]
    MalformedRoute(String),
    #[error("malformed nexthop message: {0}")]
    MalformedNexthop(String),
    #[error("address family {0} is not supported (only AF_INET, AF_INET6 and AF_MPLS routes)")]
    UnsupportedFamily(u8),
    #[error("route in table {0}; only the main table (254) is forwarded")]
    OtherTable(u32),
    #[error("route type {0} is not supported (unicast, blackhole, unreachable, prohibit are)")]
    UnsupportedRouteType(u8),
    #[error("encapsulation type {0} is not supported (only LWTUNNEL_ENCAP_MPLS)")]
    UnsupportedEncap(u16),
    #[error("{got} labels on one path, more than the {max} this router pushes")]
    LabelDepth { got: usize, max: usize },
    #[error("in-label {0} is reserved (0..=15) and cannot be bound")]
    ReservedInLabel(u32),
    #[error("no port for next hop via {gateway} ifindex {ifindex}: map the ifindex in fpm.interfaces or use a gateway in a port's subnet")]
    NoPort { gateway: String, ifindex: u32 },
    #[error("route uses next-hop group {0}, which zebra has not sent")]
    UnknownGroup(u32),
    #[error("label entry mixes pop and swap paths")]
    MixedLabelOps,
    #[error("next-hop group {0} has no usable member")]
    EmptyGroup(u32),
    #[error("{route} route via {gateway}: {why}")]
    GatewayFamily {
        route: &'static str,
        gateway: String,
        why: &'static str,
    },
}

impl MsgError {
    /// Metric label of this error.
    pub fn reason(&self) -> &'static str {
        match self {
            MsgError::Truncated { .. } => "truncated_netlink",
            MsgError::MalformedRoute(_) => "malformed_route",
            MsgError::MalformedNexthop(_) => "malformed_nexthop",
            MsgError::UnsupportedFamily(_) => "unsupported_family",
            MsgError::OtherTable(_) => "other_table",
            MsgError::UnsupportedRouteType(_) => "unsupported_route_type",
            MsgError::UnsupportedEncap(_) => "unsupported_encap",
            MsgError::LabelDepth { .. } => "label_depth",
            MsgError::ReservedInLabel(_) => "reserved_in_label",
            MsgError::NoPort { .. } => "no_port",
            MsgError::UnknownGroup(_) => "unknown_nexthop_group",
            MsgError::MixedLabelOps => "mixed_label_ops",
            MsgError::EmptyGroup(_) => "empty_nexthop_group",
            MsgError::GatewayFamily { .. } => "gateway_family",
        }
    }
}

/// Every error label: the message errors above, `unknown_attribute` (counted, ignored:
/// the message is applied), then the framing errors (which close the session) and a
/// frame cut by a closed connection.
pub const ERROR_REASONS: [&str; 19] = [
    "truncated_netlink",
    "malformed_route",
    "malformed_nexthop",
    "unsupported_family",
    "other_table",
    "unsupported_route_type",
    "unsupported_encap",
    "label_depth",
    "reserved_in_label",
    "no_port",
    "unknown_nexthop_group",
    "mixed_label_ops",
    "empty_nexthop_group",
    "gateway_family",
    "unknown_attribute",
    "bad_version",
    "bad_type",
    "short_length",
    "truncated_frame",
];
