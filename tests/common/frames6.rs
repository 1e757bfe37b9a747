//! IPv6 test frames built with the wire module's emitters (`Ipv6Repr`, `Icmpv6Repr`):
//! Ethernet from [`HOST`] to the router, optionally labelled; ICMPv6 with its checksum;
//! neighbour solicitations to the target's solicited-node group. For tests whose oracle
//! is the router's answer, not these bytes.
#![allow(dead_code)]

use std::net::Ipv6Addr;

use net::wire::ethernet::{EthernetRepr, ETHERTYPE_IPV6, ETHERTYPE_MPLS};
use net::wire::icmpv6::Icmpv6Repr;
use net::wire::ipv6::{Ipv6Repr, NH_ICMPV6, NH_UDP};
use net::wire::ndp::NdpRepr;

pub const ROUTER: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const HOST: [u8; 6] = [2, 0, 0, 0, 0, 7];

/// An address's bytes.
pub fn o(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

/// An Ethernet/IPv6 frame to the router carrying `payload` as `next_header`, below
/// `labels` (label, TTL) when there are some.
pub fn frame(dst_mac: [u8; 6], ip: Ipv6Repr, payload: &[u8], labels: &[(u32, u8)]) -> Vec<u8> {
    let et = if labels.is_empty() {
        ETHERTYPE_IPV6
    } else {
        ETHERTYPE_MPLS
    };
    let eth = EthernetRepr {
        dst: dst_mac,
        src: HOST,
        vlan: None,
        ethertype: et,
    };
    let mut f = vec![0u8; 14];
    eth.emit(&mut f).unwrap();
    for (i, &(l, ttl)) in labels.iter().enumerate() {
        let bos = (i + 1 == labels.len()) as u32;
        f.extend_from_slice(&(l << 12 | bos << 8 | ttl as u32).to_be_bytes());
    }
    let at = f.len();
    f.resize(at + 40, 0);
    ip.emit(&mut f[at..]).unwrap();
    f.extend_from_slice(payload);
    f
}

pub fn icmp(dst_mac: [u8; 6], src: &str, dst: &str, hop: u8, m: Icmpv6Repr) -> Vec<u8> {
    let (s, d) = (o(src), o(dst));
    let mut b = vec![0u8; m.buffer_len()];
    m.emit(&s, &d, &mut b).unwrap();
    let ip = Ipv6Repr {
        src: s,
        dst: d,
        next_header: NH_ICMPV6,
        hop_limit: hop,
        traffic_class: 0,
        flow_label: 0,
        payload_len: b.len(),
    };
    frame(dst_mac, ip, &b, &[])
}

pub fn udp(src: &str, dst: &str, hop: u8, labels: &[(u32, u8)]) -> Vec<u8> {
    let mut u = vec![0u8; 16];
    u[0..2].copy_from_slice(&40000u16.to_be_bytes());
    u[2..4].copy_from_slice(&33434u16.to_be_bytes());
    u[4..6].copy_from_slice(&16u16.to_be_bytes()); // checksum left 0: nobody checks it here
    let ip = Ipv6Repr {
        src: o(src),
        dst: o(dst),
        next_header: NH_UDP,
        hop_limit: hop,
        traffic_class: 0,
        flow_label: 0,
        payload_len: u.len(),
    };
    frame(ROUTER, ip, &u, labels)
}

pub fn ns(src: &str, target: &str) -> Vec<u8> {
    let group = net::wire::ipv6::solicited_node(&o(target));
    let m = Icmpv6Repr::Ndp(NdpRepr::NeighborSolicit {
        target: o(target),
        lladdr: Some(HOST),
    });
    let dst = Ipv6Addr::from(group).to_string();
    icmp(net::wire::ipv6::multicast_mac(&group), src, &dst, 255, m)
}
