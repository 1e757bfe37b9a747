//! NDP frames (RFC 4861): reading a neighbour solicitation or advertisement for the
//! router, and building the solicitations (to resolve and to probe) and the solicited
//! advertisements the slow path sends; the ports' own IPv6 addresses (their configured
//! ones and their link-local one, configured or EUI-64 from the MAC). Pure; what to
//! learn from a message is decided in [`super::neighbors`].
//!
//! Router advertisements are never sent: a router that advertises itself must be
//! configured to (issue #20), and nothing configures it yet. Router solicitations are
//! counted and dropped (`ndp_router_solicitation`), router advertisements from other
//! routers dropped (`ndp_router_advertisement`): the router does not autoconfigure.

use config::startup::PortIface;
use net::wire::ethernet::{EthernetFrame, EthernetRepr, ETHERTYPE_IPV6, HEADER_LEN as ETH_LEN};
use net::wire::icmpv6::{Icmpv6Packet, Icmpv6Repr};
use net::wire::ipv6::{self, Ipv6Packet, Ipv6Repr, HEADER_LEN as IP6_LEN, NH_ICMPV6};
use net::wire::ndp::NdpRepr;

/// Hop limit of every NDP message, sent and accepted (RFC 4861 §6.1, §7.1).
pub const NDP_HOP_LIMIT: u8 = 255;
/// `ff02::1`, where an answer to a duplicate address detection probe goes.
const ALL_NODES: [u8; 16] = [0xff, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

/// The link-local address of `port`: the first fe80::/10 address of its config, else
/// the EUI-64 one from its MAC.
pub fn link_local(port: &PortIface) -> [u8; 16] {
    port.addresses6
        .iter()
        .map(|c| c.addr.to_be_bytes())
        .find(ipv6::is_link_local)
        .unwrap_or_else(|| ipv6::link_local_from_mac(port.mac))
}

/// Whether `a` is one of `port`'s IPv6 addresses (its link-local one included).
pub fn is_port_address6(port: &PortIface, a: &[u8; 16]) -> bool {
    *a == link_local(port) || port.addresses6.iter().any(|c| c.addr.to_be_bytes() == *a)
}

/// Whether `a` is one of the router's IPv6 addresses on any port.
pub fn own_address6(ports: &[PortIface], a: &[u8; 16]) -> bool {
    ports.iter().any(|p| is_port_address6(p, a))
}

/// Whether `a` may be a neighbour on `port`: a unicast link-local address, or an
/// address of one of the port's global prefixes.
pub fn on_link6(port: &PortIface, a: &[u8; 16]) -> bool {
    if ipv6::is_multicast(a) || ipv6::is_unspecified(a) || ipv6::is_loopback(a) {
        return false;
    }
    let n = u128::from_be_bytes(*a);
    ipv6::is_link_local(a) || port.addresses6.iter().any(|c| c.len < 128 && c.contains(n))
}

/// The router's address on `port` to solicit `target` from: one of the port's global
/// addresses on the target's prefix, else the link-local one.
pub fn source_for6(port: &PortIface, target: &[u8; 16]) -> [u8; 16] {
    let t = u128::from_be_bytes(*target);
    port.addresses6
        .iter()
        .find(|c| !ipv6::is_link_local(&c.addr.to_be_bytes()) && c.contains(t))
        .map(|c| c.addr.to_be_bytes())
        .unwrap_or_else(|| link_local(port))
}

/// A received NDP message with the addresses the rules need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdpIn {
    pub eth_src: [u8; 6],
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub msg: NdpRepr,
}

/// Reads an NDP message from an Ethernet frame, validated as RFC 4861 §6.1.2, §7.1.1 and
/// §7.1.2 say (hop limit 255, checksum, code 0, lengths, an unspecified source only for
/// a solicitation to a solicited-node group without a link-layer option, no solicited
/// flag on a multicast advertisement). `None` for anything else.
pub fn parse(frame: &[u8]) -> Option<NdpIn> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    (eth.ethertype() == ETHERTYPE_IPV6).then_some(())?;
    let ip = Ipv6Packet::new_checked(frame.get(eth.header_len()..)?).ok()?;
    if ip.hop_limit() != NDP_HOP_LIMIT || ip.next_header() != NH_ICMPV6 {
        return None;
    }
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let icmp = Icmpv6Packet::new_checked(ip.payload()).ok()?;
    let Ok(Icmpv6Repr::Ndp(msg)) = Icmpv6Repr::parse(&icmp, &src, &dst) else {
        return None;
    };
    let ok = match msg {
        NdpRepr::NeighborSolicit { lladdr, .. } if ipv6::is_unspecified(&src) => {
            ipv6::is_solicited_node(&dst) && lladdr.is_none()
        }
        NdpRepr::NeighborAdvert { solicited, .. } => !(solicited && ipv6::is_multicast(&dst)),
        _ => true,
    };
    ok.then_some(NdpIn {
        eth_src: eth.src_addr(),
        src,
        dst,
        msg,
    })
}

/// An Ethernet + IPv6 + NDP frame.
fn frame(dst_mac: [u8; 6], src_mac: [u8; 6], src: [u8; 16], dst: [u8; 16], m: NdpRepr) -> Vec<u8> {
    let icmp = Icmpv6Repr::Ndp(m);
    let len = icmp.buffer_len();
    let mut f = vec![0u8; ETH_LEN + IP6_LEN + len];
    let eth = EthernetRepr {
        dst: dst_mac,
        src: src_mac,
        vlan: None,
        ethertype: ETHERTYPE_IPV6,
    };
    let ip = Ipv6Repr {
        src,
        dst,
        next_header: NH_ICMPV6,
        hop_limit: NDP_HOP_LIMIT,
        traffic_class: 0,
        flow_label: 0,
        payload_len: len,
    };
    eth.emit(&mut f)
        .expect("buffer sized for one Ethernet header");
    ip.emit(&mut f[ETH_LEN..])
        .expect("buffer sized for the IPv6 header");
    icmp.emit(&src, &dst, &mut f[ETH_LEN + IP6_LEN..])
        .expect("buffer sized for the NDP message");
    f
}

/// A neighbour solicitation for `target` from `port`: to its solicited-node group to
/// resolve it (`dst_mac` None), or unicast to its known MAC to probe a binding.
pub fn solicit(port: &PortIface, target: &[u8; 16], dst_mac: Option<[u8; 6]>) -> Vec<u8> {
    let (dst, mac) = match dst_mac {
        None => {
            let group = ipv6::solicited_node(target);
            (group, ipv6::multicast_mac(&group))
        }
        Some(mac) => (*target, mac),
    };
    let ns = NdpRepr::NeighborSolicit {
        target: *target,
        lladdr: Some(port.mac),
    };
    frame(mac, port.mac, source_for6(port, target), dst, ns)
}

/// The solicited advertisement from `port` answering `ns`, a solicitation for
/// `target`, one of the port's addresses. A duplicate address detection probe (from
/// `::`) is answered to all nodes, unsolicited (RFC 4861 §7.2.4).
pub fn advertise(
    port: &PortIface,
    ns: &NdpIn,
    target: &[u8; 16],
    lladdr: Option<[u8; 6]>,
) -> Vec<u8> {
    let dad = ipv6::is_unspecified(&ns.src);
    let (dst, mac) = match dad {
        true => (ALL_NODES, ipv6::multicast_mac(&ALL_NODES)),
        false => (ns.src, lladdr.unwrap_or(ns.eth_src)),
    };
    let na = NdpRepr::NeighborAdvert {
        router: true,
        solicited: !dad,
        override_: true,
        target: *target,
        lladdr: Some(port.mac),
    };
    frame(mac, port.mac, *target, dst, na)
}

#[cfg(test)]
#[path = "ndp_tests.rs"]
mod tests;
