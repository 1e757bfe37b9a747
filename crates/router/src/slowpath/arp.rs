//! ARP frames: reading one, and building the requests, probes and replies the slow path
//! sends. Pure; what to learn from a packet is decided in [`super::neighbors`].

use config::startup::PortIface;
use net::wire::arp::{ArpPacket, ArpRepr, OP_REPLY, OP_REQUEST, PACKET_LEN};
use net::wire::ethernet::{EthernetRepr, ETHERTYPE_ARP, HEADER_LEN};

/// The router's address on `port` in the subnet of `ip`, else its first address.
pub fn source_for(port: &PortIface, ip: u32) -> Option<u32> {
    port.addresses
        .iter()
        .find(|c| c.contains(ip))
        .or(port.addresses.first())
        .map(|c| c.addr)
}

/// The ARP packet of an Ethernet frame: Ethernet/IPv4, a request or a reply.
pub fn parse(frame: &[u8]) -> Option<ArpRepr> {
    let pkt = ArpPacket::new_checked(frame.get(HEADER_LEN..)?).ok()?;
    let arp = ArpRepr::parse(&pkt).ok()?;
    matches!(arp.operation, OP_REQUEST | OP_REPLY).then_some(arp)
}

/// An Ethernet + ARP frame.
pub fn arp_frame(dst_mac: [u8; 6], repr: &ArpRepr) -> Vec<u8> {
    let eth = EthernetRepr {
        dst: dst_mac,
        src: repr.sender_mac,
        vlan: None,
        ethertype: ETHERTYPE_ARP,
    };
    let mut f = vec![0u8; HEADER_LEN + PACKET_LEN];
    eth.emit(&mut f)
        .expect("buffer sized for one Ethernet header");
    repr.emit(&mut f[HEADER_LEN..])
        .expect("buffer sized for one ARP packet");
    f
}

/// A who-has request for `target` from `port`, to `dst_mac` (broadcast to resolve, the
/// known MAC to probe a binding).
pub fn request(port: &PortIface, target: u32, dst_mac: [u8; 6]) -> Option<Vec<u8>> {
    let src = source_for(port, target)?;
    let repr = ArpRepr {
        operation: OP_REQUEST,
        sender_mac: port.mac,
        sender_ip: src.to_be_bytes(),
        target_mac: [0; 6],
        target_ip: target.to_be_bytes(),
    };
    Some(arp_frame(dst_mac, &repr))
}

/// The reply from `port` to a request for one of its addresses.
pub fn reply(port: &PortIface, req: &ArpRepr) -> Vec<u8> {
    arp_frame(req.sender_mac, &req.reply(port.mac))
}
