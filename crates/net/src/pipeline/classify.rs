//! Stage 1: destination MAC, Ethernet and ethertype; RFC 1812 input checks for plain IPv4,
//! RFC 8200 ones for plain IPv6.

use super::family::Family;
use super::ipv6::{self, Source};
use super::local::{LocalAddrs, MacKey};
use super::{ipv4, DropReason, Next, PipelineConfig, PuntReason, Verdict, Work};
use crate::wire::ethernet::{
    field, ETHERTYPE_ARP, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MPLS, ETHERTYPE_VLAN,
    HEADER_LEN, VLAN_TAG_LEN,
};
use crate::wire::ipv4::field as ipv4_field;
use crate::wire::{be16, be32};

/// Fills `w` (which holds [`Work::EMPTY`]) in place: building a `Work` here and copying it
/// out made the copy's wide loads wait on the narrow field stores (a store-forwarding
/// stall that cost a fifth of the stage).
///
/// `mac` is the input port's MAC (`None`: the port has none). A frame for another station is
/// dropped before anything else is read; a broadcast or multicast frame is only for local
/// handling (ARP, NDP, control multicast), so the IP or labelled packet in one is dropped,
/// never forwarded or answered. Packets the router originates have a placeholder header
/// and skip both.
#[inline]
pub(crate) fn classify(
    cfg: &PipelineConfig,
    local: &LocalAddrs,
    in_port: u16,
    mac: Option<MacKey>,
    data: &[u8],
    originate: bool,
    w: &mut Work,
) -> Family {
    w.end = data.len();
    let Some(first8) = data.first_chunk::<8>().filter(|_| data.len() >= HEADER_LEN) else {
        return Family::Other; // Done(Drop(Truncated))
    };
    let to_us = originate || mac.is_some_and(|m| m.matches(first8));
    let mut et = be16(data, field::ETHERTYPE.start);
    // The group bit of the destination: broadcast or multicast.
    if !to_us && data[field::DESTINATION.start] & 1 == 0 {
        w.done(Verdict::Drop(DropReason::OtherHost));
        return Family::of(et);
    }
    w.l3 = HEADER_LEN;
    if et == ETHERTYPE_VLAN {
        if !cfg.accept_vlan {
            w.done(Verdict::Drop(DropReason::VlanTagged));
            return Family::Other;
        }
        if data.len() < HEADER_LEN + VLAN_TAG_LEN {
            return Family::Other;
        }
        et = be16(data, field::VLAN_ETHERTYPE.start);
        w.l3 = HEADER_LEN + VLAN_TAG_LEN;
    }
    w.stack_end = w.l3;
    w.keep = w.l3;
    match et {
        ETHERTYPE_ARP if !originate => w.done(Verdict::SlowPath(PuntReason::Arp)),
        ETHERTYPE_IPV4 if !to_us && control_multicast_frame(data, w.l3) => {
            ipv4::input(cfg, Some(local), data, w, false)
        }
        ETHERTYPE_IPV6 if !to_us && control_multicast_frame6(data, w.l3) => {
            ipv6_input(local, in_port, data, w)
        }
        ETHERTYPE_IPV4 | ETHERTYPE_IPV6 | ETHERTYPE_MPLS if !to_us => {
            w.done(Verdict::Drop(DropReason::L2Multicast))
        }
        ETHERTYPE_IPV4 => ipv4::input(cfg, (!originate).then_some(local), data, w, originate),
        ETHERTYPE_IPV6 if originate => ipv6::input(data, w, Source::Router, |hop| hop),
        ETHERTYPE_IPV6 => ipv6_input(local, in_port, data, w),
        ETHERTYPE_MPLS if !originate => w.next = Next::Mpls,
        _ if !originate && is_isis_frame(data, et, w.l3) => {
            w.done(Verdict::SlowPath(PuntReason::LinkLocalMulticast))
        }
        _ => w.done(Verdict::Drop(DropReason::UnsupportedEthertype)),
    }
    Family::of(et)
}

/// Plain IPv6 received on `in_port`: the hop limit to emit is one less.
fn ipv6_input(local: &LocalAddrs, in_port: u16, data: &[u8], w: &mut Work) {
    let from = Source::Port {
        local,
        port: in_port,
    };
    ipv6::input(data, w, from, |hop| hop.saturating_sub(1))
}

/// Whether a frame the router received as link-layer multicast (not broadcast, which IPv6
/// never uses) carries IPv6 to an ff02:: group: it goes through the IPv6 input checks,
/// which punt NDP and control traffic (see [`ipv6::is_control_multicast`]); any other IPv6
/// in such a frame is dropped.
#[inline]
fn control_multicast_frame6(data: &[u8], l3: usize) -> bool {
    const DST: usize = 24;
    let ff = data.first().is_some_and(|&b| b == 0xff);
    let dst = data.get(l3 + DST..l3 + DST + 2);
    !ff && dst.is_some_and(ipv6::is_control_multicast)
}

/// Whether a frame is IS-IS (ISO 10589): an 802.3 length, not an ethertype; LLC DSAP and
/// SSAP 0xfe (OSI); sent to AllL1ISs 01:80:c2:00:00:14, AllL2ISs 01:80:c2:00:00:15 or
/// AllISs 09:00:2b:00:00:05 (point-to-point hellos). Control traffic for the port's
/// control interface, where FRR's isisd runs; only reached by frames no other arm takes.
#[inline]
pub(crate) fn is_isis_frame(data: &[u8], len_or_type: u16, l3: usize) -> bool {
    const ALL_L1_ISS: [u8; 6] = [0x01, 0x80, 0xc2, 0, 0, 0x14];
    const ALL_L2_ISS: [u8; 6] = [0x01, 0x80, 0xc2, 0, 0, 0x15];
    const ALL_ISS: [u8; 6] = [0x09, 0x00, 0x2b, 0, 0, 0x05];
    len_or_type < 0x0600
        && data.get(l3..l3 + 2) == Some(&[0xfe, 0xfe])
        && data
            .get(..6)
            .is_some_and(|d| d == ALL_L1_ISS || d == ALL_L2_ISS || d == ALL_ISS)
}

/// Whether a frame the router received as link-layer multicast carries IPv4 to a
/// link-local control group (OSPF and LDP hellos): it goes through the IPv4 input checks,
/// which punt it (see [`is_control_multicast`]); any other IPv4 in such a frame is dropped.
#[inline]
fn control_multicast_frame(data: &[u8], l3: usize) -> bool {
    let ff = data.first().is_some_and(|&b| b == 0xff);
    let dst = ipv4_field::DST_ADDR;
    let dst = data.get(l3 + dst.start..l3 + dst.end);
    !ff && dst.is_some_and(|d| is_control_multicast(be32(d, 0)))
}

/// Whether an IPv4 multicast destination is link-local control traffic (224.0.0.0/24:
/// OSPF 224.0.0.5/6, LDP hellos 224.0.0.2, ...) that the slow path hands to the port's
/// control interface, rather than multicast to drop (the router does not forward
/// multicast). The one place that decides it.
#[inline]
pub(crate) fn is_control_multicast(dst: u32) -> bool {
    dst >> 8 == 0xe0_00_00
}
