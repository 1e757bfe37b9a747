//! Control traffic first, then budgets: what a worker punts is classified before it is
//! queued, into a control queue (ARP, link-local multicast and IS-IS, TCP/UDP/OSPF to the router)
//! and the data queue (TTL expiry, glean, fragmentation needed, ICMP to the router, ...),
//! so a flood of punted data can fill its own queue but never take the control queue's
//! places, and the slow path drains the control queue first.
//!
//! Before a packet is queued, the worker drops what the slow path would only drop later:
//! packets towards a neighbour whose ARP request is outstanding ([`marks`]), and punts
//! over their reason's per-worker budget ([`budget`]). Routing protocols, link-local
//! multicast and ARP or NDP from a neighbour being resolved are classified first: no
//! budget.
//!
//! The check reads at most the Ethernet, one VLAN tag, any labels and the IPv4, IPv6
//! (and NDP target) or ARP header of a packet that is already leaving the fast path: no
//! allocation, no lock, no atomic RMW.

pub mod budget;
pub mod marks;

use std::sync::Arc;

use crossbeam_channel::{Sender, TrySendError};
use net::packet::PacketBuf;
use net::pipeline::PuntReason;
use net::wire::arp::ArpPacket;
use net::wire::ethernet::{EthernetFrame, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use net::wire::ipv4;

use crate::counters::RuntimeDrop;
use crate::worker::Punted;
pub use budget::{Budget, Budgets};
pub use marks::{Mark, NeighborMarks};

/// Which queue a punted packet goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PuntClass {
    Control,
    Data,
}

/// IP protocol number of ICMP: packets to the router that the slow path answers (echo)
/// or hands up, but never control-plane protocol traffic.
const PROTO_ICMP: u8 = 1;

/// IPv6 next header of ICMPv6 (echo requests, like ICMP: data).
const NH_ICMPV6: u8 = 58;

/// Whether the protocol of an untagged or single-tagged IPv4 or IPv6 frame (the IPv6
/// fixed header's next header) is ICMP or ICMPv6; `None` for other frames.
fn is_icmp(frame: &[u8]) -> Option<bool> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    let l3 = eth.header_len();
    match eth.ethertype() {
        ETHERTYPE_IPV4 => Some(*frame.get(l3 + ipv4::field::PROTOCOL)? == PROTO_ICMP),
        ETHERTYPE_IPV6 => Some(*frame.get(l3 + 6)? == NH_ICMPV6),
        _ => None,
    }
}

/// The class of a packet punted for `reason`.
pub fn punt_class(reason: PuntReason, frame: &[u8]) -> PuntClass {
    match reason {
        PuntReason::Arp | PuntReason::LinkLocalMulticast | PuntReason::Ndp => PuntClass::Control,
        PuntReason::LocalDelivery => match is_icmp(frame) {
            Some(false) => PuntClass::Control,
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

/// First IPv6 destination in a frame (below one VLAN tag and any labels).
pub fn ipv6_dst(frame: &[u8]) -> Option<u128> {
    let ip = net::wire::ip_packet(frame)?;
    (ip.first()? >> 4 == 6).then_some(())?;
    Some(u128::from_be_bytes(ip.get(24..40)?.try_into().ok()?))
}

/// The address an NDP message speaks for: an advertisement's target, a solicitation's
/// source (a neighbour resolving the router while the router resolves it).
fn ndp_subject(frame: &[u8]) -> Option<u128> {
    let ip = net::wire::ip_packet(frame)?;
    if ip.first()? >> 4 != 6 || *ip.get(6)? != net::wire::ipv6::NH_ICMPV6 {
        return None;
    }
    let at = match *ip.get(40)? {
        net::wire::ndp::TYPE_NEIGHBOR_ADVERT => 48..64,
        net::wire::ndp::TYPE_NEIGHBOR_SOLICIT => 8..24,
        _ => return None,
    };
    Some(u128::from_be_bytes(ip.get(at)?.try_into().ok()?))
}

/// First IPv4 destination in a frame (below one VLAN tag and any labels).
pub fn ipv4_dst(frame: &[u8]) -> Option<u32> {
    // The pipeline checked the header before it punted: only the version and the
    // address's bytes are read here.
    let ip = net::wire::ip_packet(frame)?;
    (ip.first()? >> 4 == 4).then_some(())?;
    Some(u32::from_be_bytes(
        ip.get(ipv4::field::DST_ADDR)?.try_into().ok()?,
    ))
}

/// The sender IPv4 address of an (untagged or single-tagged) ARP frame.
fn arp_sender(frame: &[u8]) -> Option<u32> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    let arp = ArpPacket::new_checked(frame.get(eth.header_len()..)?).ok()?;
    Some(u32::from_be_bytes(arp.sender_ip()))
}

/// How a punt is admitted: without a budget (control traffic), against a budget, or
/// not at all (its neighbour is incomplete).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Priority,
    Budgeted(Budget),
    Drop(RuntimeDrop),
}

/// Decides how packet `frame`, punted for `reason` after arriving on `in_port`, is
/// admitted, given the incomplete neighbours in `marks`.
pub fn admission(
    marks: &NeighborMarks,
    reason: PuntReason,
    in_port: u16,
    frame: &[u8],
) -> Admission {
    let incomplete = |m| match marks.contains(m) {
        true => Admission::Drop(RuntimeDrop::NeighborIncomplete),
        false => Admission::Budgeted(Budget::Glean),
    };
    match reason {
        PuntReason::Arp => match arp_sender(frame) {
            Some(ip) if marks.contains(Mark::Addr { port: in_port, ip }) => Admission::Priority,
            _ => Admission::Budgeted(Budget::Arp),
        },
        PuntReason::LinkLocalMulticast => Admission::Priority,
        PuntReason::LocalDelivery => match punt_class(reason, frame) {
            PuntClass::Control => Admission::Priority,
            PuntClass::Data => Admission::Budgeted(Budget::Echo),
        },
        PuntReason::TtlExpired { .. } => Admission::Budgeted(Budget::TtlExpired),
        PuntReason::FragNeeded { .. } => Admission::Budgeted(Budget::FragNeeded),
        PuntReason::Glean { port } => match (ipv4_dst(frame), ipv6_dst(frame)) {
            (Some(ip), _) => incomplete(Mark::Addr { port, ip }),
            (_, Some(ip)) => incomplete(Mark::Addr6 { port, ip }),
            _ => Admission::Budgeted(Budget::Glean),
        },
        PuntReason::ArpNeeded { adj } => incomplete(Mark::Adj(adj)),
        // NDP is budgeted as ARP, except from a neighbour being resolved.
        PuntReason::Ndp => match ndp_subject(frame) {
            Some(ip) if marks.contains(Mark::Addr6 { port: in_port, ip }) => Admission::Priority,
            _ => Admission::Budgeted(Budget::Arp),
        },
        PuntReason::Unreachable { .. } => Admission::Budgeted(Budget::Unreachable),
        PuntReason::RouterAlert | PuntReason::IpOptions => Admission::Budgeted(Budget::Other),
    }
}

/// Why a punt was not queued.
pub enum Refused {
    /// Its queue was full (the packet is given back with its class).
    Full(Punted, PuntClass),
    /// Dropped in the worker, counted under this reason.
    Dropped(Punted, RuntimeDrop),
}

/// One worker's way to the slow path: the two queues, its budgets, and the incomplete
/// neighbours the slow path marked.
#[derive(Clone)]
pub struct PuntQueues {
    pub control: Sender<Punted>,
    pub data: Sender<Punted>,
    pub budgets: Budgets,
    pub marks: Arc<NeighborMarks>,
}

impl PuntQueues {
    /// The TSC at the start of the burst about to be dispatched (for the budgets).
    #[inline]
    pub fn begin_burst(&mut self, tsc: u64) {
        self.budgets.begin_burst(tsc);
    }

    /// Queues `p` by its class, unless its neighbour is incomplete or it is over budget.
    #[inline]
    pub fn try_send(&mut self, p: Punted) -> Result<(), Refused> {
        let frame = p.mbuf.data();
        match admission(&self.marks, p.reason, p.in_port, frame) {
            Admission::Priority => {}
            Admission::Budgeted(b) if self.budgets.admit(b) => {}
            Admission::Budgeted(b) => return Err(Refused::Dropped(p, b.throttled())),
            Admission::Drop(why) => return Err(Refused::Dropped(p, why)),
        }
        let class = punt_class(p.reason, frame);
        let q = match class {
            PuntClass::Control => &self.control,
            PuntClass::Data => &self.data,
        };
        q.try_send(p).map_err(|e| match e {
            TrySendError::Full(p) | TrySendError::Disconnected(p) => Refused::Full(p, class),
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

    fn arp_from(sender: [u8; 4]) -> Vec<u8> {
        let mut f = vec![0u8; 42];
        f[12..14].copy_from_slice(&[0x08, 0x06]);
        // Ethernet/IPv4 ARP: hardware type 1, protocol 0x0800, lengths 6 and 4.
        f[14..20].copy_from_slice(&[0, 1, 8, 0, 6, 4]);
        f[28..32].copy_from_slice(&sender);
        f
    }

    #[test]
    fn control_first_incomplete_dropped_the_rest_budgeted() {
        use Admission::*;
        let marks = NeighborMarks::default();
        let ip = u32::from_be_bytes([10, 1, 0, 9]);
        marks.insert(Mark::Addr { port: 1, ip });
        marks.insert(Mark::Adj(4));
        let mut to_marked = ipv4(17, false);
        to_marked[30..34].copy_from_slice(&[10, 1, 0, 9]);
        let mut labelled = to_marked.clone();
        labelled.splice(12..14, [0x88, 0x47, 0, 0, 0x11, 0x40]);
        let incomplete = Drop(RuntimeDrop::NeighborIncomplete);
        let glean = |port| PuntReason::Glean { port };
        for (reason, in_port, frame, want) in [
            // ARP from a neighbour being resolved is control traffic: no budget.
            (PuntReason::Arp, 1, arp_from([10, 1, 0, 9]), Priority),
            (
                PuntReason::Arp,
                0,
                arp_from([10, 1, 0, 9]),
                Budgeted(Budget::Arp),
            ),
            (
                PuntReason::Arp,
                1,
                arp_from([10, 1, 0, 8]),
                Budgeted(Budget::Arp),
            ),
            (PuntReason::LinkLocalMulticast, 0, ipv4(89, false), Priority),
            (PuntReason::LocalDelivery, 0, ipv4(6, false), Priority),
            (
                PuntReason::LocalDelivery,
                0,
                ipv4(1, false),
                Budgeted(Budget::Echo),
            ),
            (glean(1), 0, to_marked.clone(), incomplete),
            (glean(1), 0, labelled, incomplete),
            (glean(2), 0, to_marked.clone(), Budgeted(Budget::Glean)),
            (glean(1), 0, vec![0; 20], Budgeted(Budget::Glean)),
            (
                PuntReason::ArpNeeded { adj: 4 },
                0,
                ipv4(6, false),
                incomplete,
            ),
            (
                PuntReason::ArpNeeded { adj: 5 },
                0,
                ipv4(6, false),
                Budgeted(Budget::Glean),
            ),
            (
                PuntReason::TtlExpired { in_port: 0 },
                0,
                ipv4(6, false),
                Budgeted(Budget::TtlExpired),
            ),
            (
                PuntReason::FragNeeded { in_port: 0, mtu: 1 },
                0,
                ipv4(6, false),
                Budgeted(Budget::FragNeeded),
            ),
            (
                PuntReason::IpOptions,
                0,
                ipv4(6, false),
                Budgeted(Budget::Other),
            ),
        ] {
            assert_eq!(
                admission(&marks, reason, in_port, &frame),
                want,
                "{reason:?}"
            );
        }
    }

    /// An Ethernet/IPv6 frame from `src` to `dst` with `icmp` as ICMPv6 message.
    fn ipv6(src: [u8; 16], dst: [u8; 16], icmp: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0, 0, icmp.len() as u8, 58, 255]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        f.extend_from_slice(icmp);
        f
    }

    #[test]
    fn ipv6_ndp_from_a_neighbour_being_resolved_first_unreachable_budgeted() {
        use Admission::*;
        let marks = NeighborMarks::default();
        let (us, nb, other) = (
            [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7],
            [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8],
        );
        marks.insert(Mark::Addr6 {
            port: 1,
            ip: u128::from_be_bytes(nb),
        });
        let mut na = vec![136, 0, 0, 0, 0x60, 0, 0, 0];
        na.extend_from_slice(&nb);
        let mut ns = vec![135, 0, 0, 0, 0, 0, 0, 0];
        ns.extend_from_slice(&us);
        let ndp = PuntReason::Ndp;
        let arp = Budgeted(Budget::Arp);
        // BGP over IPv6 to the router: control traffic, like over IPv4.
        let mut tcp6 = ipv6(nb, us, &[0; 20]);
        tcp6[14 + 6] = 6;
        let glean = PuntReason::Glean { port: 1 };
        for (reason, in_port, frame, want) in [
            (ndp, 1, ipv6(nb, us, &na), Priority),
            (ndp, 0, ipv6(nb, us, &na), arp),
            (ndp, 1, ipv6(nb, us, &ns), Priority),
            (ndp, 1, ipv6(other, us, &ns), arp),
            (
                PuntReason::LocalDelivery,
                0,
                ipv6(nb, us, &na),
                Budgeted(Budget::Echo),
            ),
            (PuntReason::LocalDelivery, 0, tcp6.clone(), Priority),
            (
                glean,
                0,
                ipv6(other, nb, &[]),
                Drop(RuntimeDrop::NeighborIncomplete),
            ),
            (glean, 0, ipv6(nb, other, &[]), Budgeted(Budget::Glean)),
            (
                PuntReason::Unreachable { in_port: 0 },
                0,
                ipv6(nb, other, &[]),
                Budgeted(Budget::Unreachable),
            ),
        ] {
            assert_eq!(
                admission(&marks, reason, in_port, &frame),
                want,
                "{reason:?} {in_port}"
            );
        }
    }
}
