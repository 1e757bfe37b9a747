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
use net::pipeline::PuntReason;
use net::wire::arp::ArpPacket;
use net::wire::ethernet::{EthernetFrame, ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
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
#[inline]
fn is_icmp(frame: &[u8]) -> Option<bool> {
    // Untagged IPv4 (an echo flood's frames) is read in place: the pipeline checked the
    // header before it punted the packet.
    if let Some(h) = frame.first_chunk::<{ UNTAGGED_PROTOCOL + 1 }>() {
        if u16::from_be_bytes([h[12], h[13]]) == ETHERTYPE_IPV4 {
            return Some(h[UNTAGGED_PROTOCOL] == PROTO_ICMP);
        }
    }
    is_icmp_walked(frame)
}

#[cold]
fn is_icmp_walked(frame: &[u8]) -> Option<bool> {
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

/// Offset of the IPv4 destination address in an untagged IPv4 frame.
const UNTAGGED_DST: usize = net::wire::ethernet::HEADER_LEN + 16;

/// Offset of the IPv4 protocol in an untagged IPv4 frame.
const UNTAGGED_PROTOCOL: usize = net::wire::ethernet::HEADER_LEN + ipv4::field::PROTOCOL;

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
#[inline]
pub fn ipv4_dst(frame: &[u8]) -> Option<u32> {
    // The pipeline checked the header before it punted: only the version and the
    // address's bytes are read here. Untagged IPv4 (the glean flood's frames) is read
    // in place; anything else is walked to its IPv4 header.
    if let Some(h) = frame.first_chunk::<{ UNTAGGED_DST + 4 }>() {
        if u16::from_be_bytes([h[12], h[13]]) == ETHERTYPE_IPV4 && h[14] >> 4 == 4 {
            let dst = &h[UNTAGGED_DST..];
            return Some(u32::from_be_bytes([dst[0], dst[1], dst[2], dst[3]]));
        }
    }
    ipv4_dst_walked(frame)
}

#[cold]
fn ipv4_dst_walked(frame: &[u8]) -> Option<u32> {
    let ip = net::wire::ip_packet(frame)?;
    (ip.first()? >> 4 == 4).then_some(())?;
    Some(u32::from_be_bytes(
        ip.get(ipv4::field::DST_ADDR)?.try_into().ok()?,
    ))
}

/// The sender IPv4 address of an (untagged or single-tagged) Ethernet/IPv4 ARP frame.
#[inline]
fn arp_sender(frame: &[u8]) -> Option<u32> {
    // Untagged (an ARP flood's frames): checked and read in place. The pipeline punts
    // any ARP ethertype, so the hardware and protocol fields are checked here too.
    const ETH_IPV4: [u8; 6] = [0, 1, 0x08, 0x00, 6, 4];
    const AT: usize = net::wire::ethernet::HEADER_LEN;
    if let Some(h) = frame.first_chunk::<{ AT + net::wire::arp::PACKET_LEN }>() {
        if u16::from_be_bytes([h[12], h[13]]) == ETHERTYPE_ARP {
            let a = &h[AT..];
            return (a[..6] == ETH_IPV4).then(|| u32::from_be_bytes([a[14], a[15], a[16], a[17]]));
        }
    }
    arp_sender_walked(frame)
}

#[cold]
fn arp_sender_walked(frame: &[u8]) -> Option<u32> {
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

    /// Whether `frame`, punted for `reason` after arriving on `in_port`, may be queued:
    /// the queue it goes to, or the reason it is dropped in the worker (its neighbour is
    /// incomplete, or its budget is spent: a token is taken when admitted).
    #[inline]
    pub fn admit(
        &mut self,
        reason: PuntReason,
        in_port: u16,
        frame: &[u8],
    ) -> Result<PuntClass, RuntimeDrop> {
        match reason {
            PuntReason::Glean { port } => return self.admit_glean(port, frame),
            PuntReason::LocalDelivery => return self.admit_local(frame),
            _ => {}
        }
        match admission(&self.marks, reason, in_port, frame) {
            Admission::Priority => {}
            Admission::Budgeted(b) if self.budgets.admit(b) => {}
            Admission::Budgeted(b) => return Err(b.throttled()),
            Admission::Drop(why) => return Err(why),
        }
        Ok(punt_class(reason, frame))
    }

    /// [`PuntQueues::admit`] for a glean ([`admission`]'s arm, inlined: a scan of a
    /// connected subnet sends every packet here).
    #[inline(always)]
    fn admit_glean(&mut self, port: u16, frame: &[u8]) -> Result<PuntClass, RuntimeDrop> {
        let marked = match ipv4_dst(frame) {
            Some(ip) => self.marks.contains(Mark::Addr { port, ip }),
            None => ipv6_dst(frame).is_some_and(|ip| self.marks.contains(Mark::Addr6 { port, ip })),
        };
        if marked {
            Err(RuntimeDrop::NeighborIncomplete)
        } else if self.budgets.admit(Budget::Glean) {
            Ok(PuntClass::Data)
        } else {
            Err(RuntimeDrop::GleanThrottled)
        }
    }

    /// [`PuntQueues::admit`] for a packet to the router ([`admission`]'s arm, inlined,
    /// the class read once: an echo flood sends every packet here).
    #[inline(always)]
    fn admit_local(&mut self, frame: &[u8]) -> Result<PuntClass, RuntimeDrop> {
        match punt_class(PuntReason::LocalDelivery, frame) {
            PuntClass::Control => Ok(PuntClass::Control),
            PuntClass::Data if self.budgets.admit(Budget::Echo) => Ok(PuntClass::Data),
            PuntClass::Data => Err(RuntimeDrop::EchoThrottled),
        }
    }

    /// Queues `p`, admitted as `class` ([`PuntQueues::admit`]); a full queue gives it
    /// back.
    #[inline]
    pub fn send(&self, class: PuntClass, p: Punted) -> Result<(), Punted> {
        let q = match class {
            PuntClass::Control => &self.control,
            PuntClass::Data => &self.data,
        };
        q.try_send(p).map_err(|e| match e {
            TrySendError::Full(p) | TrySendError::Disconnected(p) => p,
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
            // The protocol read in place (untagged IPv4) is the one walked to.
            assert_eq!(is_icmp(&frame), is_icmp_walked(&frame), "{reason:?}");
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
    fn an_arp_sender_read_in_place_is_the_one_walked_to() {
        let mut tagged = arp_from([10, 1, 0, 9]);
        tagged.splice(12..12, [0x81, 0, 0, 7]);
        let mut not_ipv4 = arp_from([10, 1, 0, 9]);
        not_ipv4[16] = 0x86; // protocol 0x86dd
        let mut short = arp_from([10, 1, 0, 9]);
        short.truncate(41);
        for f in [
            arp_from([10, 1, 0, 9]),
            tagged,
            not_ipv4,
            short,
            ipv4(1, false),
        ] {
            assert_eq!(arp_sender(&f), arp_sender_walked(&f), "{f:02x?}");
        }
        assert_eq!(
            arp_sender(&arp_from([10, 1, 0, 9])),
            Some(u32::from_be_bytes([10, 1, 0, 9]))
        );
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

    fn queues(marks: NeighborMarks, glean: budget::Rate) -> PuntQueues {
        let mut rates = [budget::Rate {
            pps: 1000,
            burst: 1000,
        }; Budget::ALL.len()];
        rates[Budget::Glean as usize] = glean;
        let (control, _) = crossbeam_channel::bounded(1);
        let (data, _) = crossbeam_channel::bounded(1);
        PuntQueues {
            control,
            data,
            budgets: Budgets::new(&rates, 1_000_000, 1),
            marks: Arc::new(marks),
        }
    }

    #[test]
    fn a_glean_is_admitted_as_admission_says_and_a_marked_one_takes_no_token() {
        let marks = NeighborMarks::default();
        marks.insert(Mark::Addr {
            port: 1,
            ip: u32::from_be_bytes([10, 1, 0, 9]),
        });
        let mut q = queues(marks, budget::Rate { pps: 1, burst: 2 });
        let mut to_marked = ipv4(17, false);
        to_marked[30..34].copy_from_slice(&[10, 1, 0, 9]);
        let mut tagged = ipv4(17, true);
        tagged[34..38].copy_from_slice(&[10, 1, 0, 9]);
        let mut labelled = to_marked.clone();
        labelled.splice(12..14, [0x88, 0x47, 0, 0, 0x11, 0x40]);
        let mut other = to_marked.clone();
        other[33] = 8;
        let glean = PuntReason::Glean { port: 1 };
        q.begin_burst(1);
        for f in [&to_marked, &tagged, &labelled, &to_marked, &tagged] {
            // What `admission` decides, without the budget (the bucket holds 2).
            assert_eq!(
                admission(&q.marks, glean, 0, f),
                Admission::Drop(RuntimeDrop::NeighborIncomplete)
            );
            assert_eq!(q.admit(glean, 0, f), Err(RuntimeDrop::NeighborIncomplete));
        }
        assert_eq!(
            admission(&q.marks, glean, 0, &other),
            Admission::Budgeted(Budget::Glean)
        );
        let got: Vec<_> = (0..3).map(|_| q.admit(glean, 0, &other)).collect();
        assert_eq!(
            got,
            [
                Ok(PuntClass::Data),
                Ok(PuntClass::Data),
                Err(RuntimeDrop::GleanThrottled)
            ],
            "the marked packets took none of the 2 tokens"
        );
        // The destination read in place (untagged) is the one walked to.
        for f in [&to_marked, &tagged, &labelled, &other] {
            assert_eq!(ipv4_dst(f), ipv4_dst_walked(f));
        }
        assert_eq!(ipv4_dst(&other), Some(u32::from_be_bytes([10, 1, 0, 8])));
    }

    #[test]
    fn a_packet_to_the_router_is_admitted_as_admission_says() {
        let local = PuntReason::LocalDelivery;
        let (echo, echo_tagged) = (ipv4(1, false), ipv4(1, true));
        let (tcp, udp_tagged) = (ipv4(6, false), ipv4(17, true));
        let frames = [&echo, &echo_tagged, &tcp, &udp_tagged];
        // Budgets to spare: the queue `admission` and the class say.
        let mut q = queues(NeighborMarks::default(), budget::Rate { pps: 1, burst: 1 });
        q.begin_burst(1);
        for f in frames {
            let want = match admission(&q.marks, local, 0, f) {
                Admission::Priority => PuntClass::Control,
                Admission::Budgeted(Budget::Echo) => PuntClass::Data,
                other => panic!("{other:?}"),
            };
            assert_eq!(want, punt_class(local, f));
            assert_eq!(q.admit(local, 0, f), Ok(want), "{f:?}");
        }
        // Echo requests spend the echo budget (one token); TCP and UDP to the router
        // take none.
        let mut rates = [budget::Rate {
            pps: 1000,
            burst: 1000,
        }; Budget::ALL.len()];
        rates[Budget::Echo as usize] = budget::Rate { pps: 1, burst: 1 };
        q.budgets = Budgets::new(&rates, 1_000_000, 1);
        q.begin_burst(1);
        let got = [&echo, &tcp, &udp_tagged, &echo_tagged].map(|f| q.admit(local, 0, f));
        assert_eq!(
            got,
            [
                Ok(PuntClass::Data),
                Ok(PuntClass::Control),
                Ok(PuntClass::Control),
                Err(RuntimeDrop::EchoThrottled)
            ]
        );
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
        // The worker's inlined glean arm agrees for IPv6.
        let mut q = queues(marks, budget::Rate { pps: 1, burst: 1 });
        q.begin_burst(1);
        let to_marked = ipv6(other, nb, &[]);
        assert_eq!(
            q.admit(glean, 0, &to_marked),
            Err(RuntimeDrop::NeighborIncomplete)
        );
        assert_eq!(
            q.admit(glean, 0, &ipv6(nb, other, &[])),
            Ok(PuntClass::Data)
        );
    }
}
