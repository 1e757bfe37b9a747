//! Stage 1: Ethernet and ethertype; RFC 1812 input checks for plain IPv4.

use super::{ipv4, DropReason, Next, PipelineConfig, PuntReason, Verdict, Work};
use crate::wire::be16;
use crate::wire::ethernet::{
    ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_MPLS, ETHERTYPE_VLAN, HEADER_LEN, VLAN_TAG_LEN,
};

/// Fills `w` (which holds [`Work::EMPTY`]) in place: building a `Work` here and copying it
/// out made the copy's wide loads wait on the narrow field stores (a store-forwarding
/// stall that cost a fifth of the stage).
#[inline]
pub(crate) fn classify(cfg: &PipelineConfig, data: &[u8], originate: bool, w: &mut Work) {
    w.end = data.len();
    if data.len() < HEADER_LEN {
        return; // Done(Drop(Truncated))
    }
    let mut et = be16(data, 12);
    w.l3 = HEADER_LEN;
    if et == ETHERTYPE_VLAN {
        if !cfg.accept_vlan {
            return w.done(Verdict::Drop(DropReason::VlanTagged));
        }
        if data.len() < HEADER_LEN + VLAN_TAG_LEN {
            return;
        }
        et = be16(data, 16);
        w.l3 = HEADER_LEN + VLAN_TAG_LEN;
    }
    w.stack_end = w.l3;
    w.keep = w.l3;
    match et {
        ETHERTYPE_IPV4 => ipv4::input(cfg, data, w, originate),
        ETHERTYPE_MPLS if !originate => w.next = Next::Mpls,
        ETHERTYPE_ARP if !originate => w.done(Verdict::SlowPath(PuntReason::Arp)),
        _ => w.done(Verdict::Drop(DropReason::UnsupportedEthertype)),
    }
}

/// Whether an IPv4 multicast destination is link-local control traffic (224.0.0.0/24:
/// OSPF 224.0.0.5/6, LDP hellos 224.0.0.2, ...) that the slow path hands to the port's
/// control interface, rather than multicast to drop (the router does not forward
/// multicast). The one place that decides it.
#[inline]
pub(crate) fn is_control_multicast(dst: u32) -> bool {
    dst >> 8 == 0xe0_00_00
}
