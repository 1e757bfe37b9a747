//! Up: what the router does not answer itself goes to the port's control interface
//! (TCP/UDP/OSPF to its addresses, link-local multicast, ICMP other than echo requests),
//! and every ARP frame is mirrored there so the kernel resolves its own neighbours. A
//! frame written to the kernel counts as handled; without a control interface it is
//! dropped as before (`no_control_interface`, or echo handling for local delivery).

use std::sync::atomic::Ordering::Relaxed;

use dpdk::Mbuf;
use net::fib::Fib;
use net::packet::PacketBuf;
use net::wire::ethernet::{EthernetFrame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use net::wire::{icmp, icmpv6, ipv4, ipv6};

use super::State;
use crate::cpif::UpError;
use crate::metrics::SlowDrop;

/// The IP header offset of an untagged or single-tagged IPv4 or IPv6 frame.
fn ip_at(frame: &[u8]) -> Option<usize> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    matches!(eth.ethertype(), ETHERTYPE_IPV4 | ETHERTYPE_IPV6).then(|| eth.header_len())
}

/// Whether an IPv4 or IPv6 frame carries an ICMP or ICMPv6 echo request (which the
/// router answers; an IPv6 one with extension headers goes up).
fn is_echo_request(frame: &[u8], l3: usize) -> bool {
    let Some(&vihl) = frame.get(l3 + ipv4::field::VER_IHL) else {
        return false;
    };
    if vihl >> 4 == 6 {
        return frame.get(l3 + 6) == Some(&ipv6::NH_ICMPV6)
            && frame.get(l3 + ipv6::HEADER_LEN) == Some(&icmpv6::TYPE_ECHO_REQUEST);
    }
    let ihl = (vihl & 0xf) as usize * 4;
    frame.get(l3 + ipv4::field::PROTOCOL) == Some(&ipv4::PROTO_ICMP)
        && frame.get(l3 + ihl) == Some(&icmp::TYPE_ECHO_REQUEST)
}

impl State {
    /// A packet for one of the router's addresses: echo requests (and anything that is not
    /// plain IPv4 or IPv6, e.g. still labelled) are answered here, the rest goes to the
    /// kernel.
    pub(super) fn local(&mut self, fib: &Fib, m: Mbuf, in_port: u16) {
        let up = self.sp.cpif.is_some()
            && ip_at(m.data()).is_some_and(|l3| !is_echo_request(m.data(), l3));
        if up {
            self.up(m, in_port);
        } else {
            self.echo_reply(fib, m, in_port);
        }
    }

    /// Writes the frame to `in_port`'s control interface.
    pub(super) fn up(&mut self, m: Mbuf, in_port: u16) {
        let r = match &self.sp.cpif {
            Some(c) => c.to_kernel(in_port, m.data()),
            None => Err(UpError::NoInterface),
        };
        match r {
            Ok(()) => {
                self.stats().handled.fetch_add(1, Relaxed);
                drop(m);
            }
            Err(UpError::NoInterface) => self.discard(m, SlowDrop::NoControlInterface),
            Err(UpError::WriteFailed) => self.discard(m, SlowDrop::ControlInterfaceWrite),
        }
    }

    /// Gives the kernel a copy of an ARP (or NDP) frame received on `in_port` (if it has
    /// a control interface; a failed write is counted by the interface's stats).
    pub(super) fn mirror_arp(&self, in_port: u16, frame: &[u8]) {
        if let Some(c) = &self.sp.cpif {
            let _ = c.to_kernel(in_port, frame);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(proto: u8, icmp_type: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8];
        f[12..14].copy_from_slice(&[8, 0]);
        f[14] = 0x45;
        f[14 + 9] = proto;
        f[34] = icmp_type;
        f
    }

    #[test]
    fn echo_requests_stay_other_icmp_goes_up() {
        assert!(is_echo_request(&ipv4(1, 8), 14));
        assert!(!is_echo_request(&ipv4(1, 0), 14), "echo reply");
        assert!(!is_echo_request(&ipv4(1, 3), 14), "unreachable");
        assert!(!is_echo_request(&ipv4(6, 8), 14), "TCP");
        assert_eq!(ip_at(&ipv4(6, 0)), Some(14));
        let mut mpls = ipv4(6, 0);
        mpls[12..14].copy_from_slice(&[0x88, 0x47]);
        assert_eq!(ip_at(&mpls), None);
        let mut v6 = vec![0u8; 14 + 40 + 8];
        v6[12..14].copy_from_slice(&[0x86, 0xdd]);
        v6[14] = 0x60;
        v6[14 + 6] = 58;
        v6[54] = 128;
        assert_eq!(ip_at(&v6), Some(14));
        assert!(is_echo_request(&v6, 14));
        v6[54] = 129;
        assert!(!is_echo_request(&v6, 14), "echo reply");
        v6[54] = 128;
        v6[14 + 6] = 0;
        assert!(!is_echo_request(&v6, 14), "behind a hop-by-hop header");
    }
}
