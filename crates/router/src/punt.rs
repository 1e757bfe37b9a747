//! Control traffic first: what a worker punts is classified before it is queued, into a
//! control queue (ARP, link-local multicast and IS-IS, TCP/UDP/OSPF to the router) and the
//! data queue (TTL expiry, glean, fragmentation needed, ICMP to the router, ...), so a
//! flood of punted data can fill its own queue but never take the control queue's
//! places, and the slow path drains the control queue first.
//!
//! The check reads at most the Ethernet, one VLAN tag and the IPv4 protocol byte of a
//! packet that is already leaving the fast path: no allocation, no lookup.

use crossbeam_channel::{Sender, TrySendError};
use net::packet::PacketBuf;
use net::pipeline::PuntReason;

use crate::worker::Punted;

/// Which queue a punted packet goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PuntClass {
    Control,
    Data,
}

/// IP protocol number of ICMP: packets to the router that the slow path answers (echo)
/// or hands up, but never control-plane protocol traffic.
const PROTO_ICMP: u8 = 1;

/// The IPv4 protocol of an untagged or single-tagged IPv4 frame.
fn ipv4_proto(frame: &[u8]) -> Option<u8> {
    let (et, l3) = match frame.get(12..14)? {
        [0x81, 0x00] => (frame.get(16..18)?, 18),
        et => (et, 14),
    };
    (et == [0x08, 0x00]).then_some(())?;
    frame.get(l3 + 9).copied()
}

/// The class of a packet punted for `reason`.
pub fn punt_class(reason: PuntReason, frame: &[u8]) -> PuntClass {
    match reason {
        PuntReason::Arp | PuntReason::LinkLocalMulticast => PuntClass::Control,
        PuntReason::LocalDelivery => match ipv4_proto(frame) {
            Some(p) if p != PROTO_ICMP => PuntClass::Control,
            _ => PuntClass::Data,
        },
        _ => PuntClass::Data,
    }
}

/// Control-traffic slots, as many as the data queue's: ARP is control traffic, and a
/// burst of ARP from a whole subnet (after a link flap on a /16) must reach the
/// neighbour table, not overflow here (`tests/slow_path.rs` sends 1,000 in one burst).
/// Each costs the slow path little, so draining them first does not starve data.
pub const CONTROL_QUEUE: usize = 1024;

/// The two queues to the slow path.
#[derive(Clone)]
pub struct PuntQueues {
    pub control: Sender<Punted>,
    pub data: Sender<Punted>,
}

impl PuntQueues {
    /// Queues `p` by its class; gives it back, with its class, when that queue is full.
    #[inline]
    pub fn try_send(&self, p: Punted) -> Result<(), (Punted, PuntClass)> {
        let class = punt_class(p.reason, p.mbuf.data());
        let q = match class {
            PuntClass::Control => &self.control,
            PuntClass::Data => &self.data,
        };
        q.try_send(p).map_err(|e| match e {
            TrySendError::Full(p) | TrySendError::Disconnected(p) => (p, class),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(proto: u8, vlan: bool) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        if vlan {
            f.extend_from_slice(&[0x81, 0, 0, 7]);
        }
        f.extend_from_slice(&[0x08, 0x00, 0x45]);
        f.extend_from_slice(&[0; 19]);
        let l3 = f.len() - 20;
        f[l3 + 9] = proto;
        f
    }

    #[test]
    fn protocols_and_hellos_are_control_floods_of_data_are_not() {
        use PuntClass::*;
        let local = PuntReason::LocalDelivery;
        for (reason, frame, class) in [
            (PuntReason::Arp, vec![0u8; 42], Control),
            (PuntReason::LinkLocalMulticast, ipv4(89, false), Control),
            (local, ipv4(6, false), Control),  // BGP, LDP sessions
            (local, ipv4(17, true), Control),  // LDP discovery, BFD
            (local, ipv4(89, false), Control), // OSPF unicast
            (local, ipv4(1, false), Data),     // echo floods
            (local, vec![0u8; 20], Data),      // not IPv4
            (PuntReason::TtlExpired { in_port: 0 }, ipv4(6, false), Data),
            (PuntReason::Glean { port: 0 }, ipv4(6, false), Data),
            (
                PuntReason::FragNeeded { in_port: 0, mtu: 1 },
                ipv4(6, false),
                Data,
            ),
            (PuntReason::IpOptions, ipv4(6, false), Data),
        ] {
            assert_eq!(punt_class(reason, &frame), class, "{reason:?}");
        }
    }
}
