//! ARP frames: reading one, and building the requests, probes and replies the slow path
//! sends. Pure; what to learn from a packet is decided in [`super::neighbors`].

use config::startup::PortIface;
use net::wire::arp::{ArpPacket, ArpRepr, OP_REPLY, OP_REQUEST, PACKET_LEN};

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
    let pkt = ArpPacket::new_checked(frame.get(14..)?).ok()?;
    let arp = ArpRepr::parse(&pkt).ok()?;
    matches!(arp.operation, OP_REQUEST | OP_REPLY).then_some(arp)
}

/// An Ethernet + ARP frame.
pub fn arp_frame(dst_mac: [u8; 6], repr: &ArpRepr) -> Vec<u8> {
    let mut f = vec![0u8; 14 + PACKET_LEN];
    f[0..6].copy_from_slice(&dst_mac);
    f[6..12].copy_from_slice(&repr.sender_mac);
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    repr.emit(&mut f[14..])
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
