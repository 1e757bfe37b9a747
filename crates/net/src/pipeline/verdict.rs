//! What the pipeline decided for each packet, and why packets are dropped or punted.
//!
//! The `as_str` names are stable: they are Prometheus label values. Add variants at the
//! end of `ALL`; never rename one.

use crate::fib::AdjId;

/// The outcome for one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Rewritten in place; transmit on `port`.
    Forward { port: u16 },
    /// Free and count under the reason.
    Drop(DropReason),
    /// Hand to the slow path, unmodified (as received, Ethernet header first).
    SlowPath(PuntReason),
}

macro_rules! reasons {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident => $s:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $v,)* }

        impl $name {
            /// Every reason, in counter-index order.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];
            /// Number of reasons (size of a per-reason counter array).
            pub const COUNT: usize = $name::ALL.len();

            /// The stable snake_case name (a metric label value).
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)* }
            }

            /// Position in [`Self::ALL`], for per-reason counter arrays.
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

reasons! {
    /// Why a packet was dropped by the data path.
    DropReason {
        /// Shorter than the headers it announces (Ethernet, IPv4 total length, labels).
        Truncated => "truncated",
        /// IPv4 version, IHL or total length invalid (RFC 1812 §5.2.2).
        BadIpv4Header => "bad_ipv4_header",
        /// IPv4 header checksum does not verify.
        BadChecksum => "bad_checksum",
        /// Source or destination address that must not be forwarded (0/8, 127/8,
        /// limited broadcast, multicast source; RFC 1812 §5.3.7).
        MartianAddress => "martian_address",
        /// Multicast destination: multicast forwarding is not supported.
        Multicast => "multicast",
        /// Neither IPv4, MPLS unicast nor ARP.
        UnsupportedEthertype => "unsupported_ethertype",
        /// 802.1Q-tagged frame while VLANs are not accepted.
        VlanTagged => "vlan_tagged",
        /// No IPv4 route, or a blackhole route.
        NoRoute => "no_route",
        /// Top label not in the label table.
        NoLabel => "no_label",
        /// Reserved label 3 or 4..=15 (other than the entropy label indicator).
        ReservedLabel => "reserved_label",
        /// Payload this router cannot handle (not IP after a pop, not the family an
        /// explicit null label or the next hop names).
        UnsupportedPayload => "unsupported_payload",
        /// Label stack deeper than the configured limit.
        StackTooDeep => "stack_too_deep",
        /// Too big for the egress MTU and not IPv4 with DF (no fragmentation).
        MtuExceeded => "mtu_exceeded",
        /// Not enough headroom in the buffer to push the labels.
        NoHeadroom => "no_headroom",
        /// Unicast frame for another station's MAC (RFC 1812 §5.2.1): seen on a shared
        /// segment or by a promiscuous port, never routed.
        OtherHost => "other_host",
        /// IPv4 or labelled packet in a link-layer broadcast or multicast frame: never
        /// forwarded and never answered with an ICMP error (RFC 1812 §5.3.4).
        L2Multicast => "l2_multicast",
        /// IPv4 packet from outside with one of the router's own addresses as source
        /// (spoofed or looped; RFC 1812 §5.3.7).
        OwnSource => "own_source",
        /// IPv6 version or payload length invalid, or more extension headers than the
        /// walk allows (RFC 8200).
        BadIpv6Header => "bad_ipv6_header",
        /// IPv6 link-local source or destination (fe80::/10) that would leave its link:
        /// never forwarded (RFC 4291 §2.5.6).
        LinkLocalScope => "link_local_scope",
    }
}

/// Why a packet goes to the slow path. Carries what the slow path needs to act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PuntReason {
    /// An ARP packet.
    Arp,
    /// Addressed to the router (a `Local` route), possibly after label disposition.
    LocalDelivery,
    /// IPv4 or label TTL would reach 0: send ICMP time exceeded (source: the address of
    /// `in_port`).
    TtlExpired { in_port: u16 },
    /// IPv4 with DF too big for the egress link: send ICMP fragmentation needed with this
    /// next-hop MTU (the link MTU minus the label bytes the packet would carry).
    FragNeeded { in_port: u16, mtu: u16 },
    /// MPLS router alert label (1).
    RouterAlert,
    /// The adjacency's MAC is unresolved: ARP for its neighbor.
    ArpNeeded { adj: AdjId },
    /// Connected route with no neighbor entry: ARP for the destination on `port`.
    Glean { port: u16 },
    /// IPv4 options present and `punt_ip_options` is set.
    IpOptions,
    /// Link-local multicast (224.0.0.0/24: OSPF, LDP hellos, ...; and IS-IS frames, see
    /// `classify::is_isis_frame`): control traffic for the port's control interface (see
    /// `classify::is_control_multicast`).
    LinkLocalMulticast,
    /// IPv6 Neighbor Discovery (RFC 4861: RS, RA, NS, NA, redirect) for the router, with
    /// hop limit 255: the slow path answers or learns from it.
    Ndp,
    /// IPv6 with no route: send ICMPv6 destination unreachable, no route (RFC 4443 §3.1;
    /// source: the address of `in_port`).
    Unreachable { in_port: u16 },
}

impl PuntReason {
    /// Stable names, in counter-index order.
    pub const NAMES: &'static [&'static str] = &[
        "arp",
        "local_delivery",
        "ttl_expired",
        "frag_needed",
        "router_alert",
        "arp_needed",
        "glean",
        "ip_options",
        "link_local_multicast",
        "ndp",
        "unreachable",
    ];
    /// Number of kinds (size of a per-reason counter array).
    pub const COUNT: usize = PuntReason::NAMES.len();

    /// Position in [`Self::NAMES`].
    pub const fn index(self) -> usize {
        match self {
            PuntReason::Arp => 0,
            PuntReason::LocalDelivery => 1,
            PuntReason::TtlExpired { .. } => 2,
            PuntReason::FragNeeded { .. } => 3,
            PuntReason::RouterAlert => 4,
            PuntReason::ArpNeeded { .. } => 5,
            PuntReason::Glean { .. } => 6,
            PuntReason::IpOptions => 7,
            PuntReason::LinkLocalMulticast => 8,
            PuntReason::Ndp => 9,
            PuntReason::Unreachable { .. } => 10,
        }
    }

    /// The stable snake_case name (a metric label value).
    pub const fn as_str(self) -> &'static str {
        PuntReason::NAMES[self.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_indexed() {
        let mut seen = std::collections::HashSet::new();
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
            assert!(r
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
            assert!(seen.insert(r.as_str()));
        }
        assert_eq!(DropReason::NoRoute.as_str(), "no_route");
        assert_eq!(
            PuntReason::FragNeeded { in_port: 1, mtu: 2 }.as_str(),
            "frag_needed"
        );
        assert_eq!(
            PuntReason::Unreachable { in_port: 0 }.index(),
            PuntReason::COUNT - 1
        );
    }
}
