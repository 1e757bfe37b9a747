//! The fast path for IPv6: plain forwarding and LER imposition (6PE included) towards a
//! resolved adjacency, directly or through an ECMP group (input checks, the batched
//! `Lpm6` lookup, then the rewrite), and the penultimate-hop pop that exposes IPv6.
//!
//! Built as [`super::fast`] is: fixed-size views so that one length check covers every
//! header byte read, the verdict decided before the packet's one write. Anything the
//! plain case does not meet returns `None` untouched and the stages decide it: a hop
//! limit of 1 or 0, a hop-by-hop header, addresses of a special scope (first octet 0x00,
//! 0xfe or 0xff: unspecified, loopback, link-local, multicast), a source or destination
//! that may be the router's own (NDP to it is punted, [`LocalAddrs::may_be_own6`]),
//! adjacencies unresolved or of the other family, packets too big. The route targets
//! other than a next hop (none, local, connected, blackhole) are decided here as the
//! stages decide them once the input checks have passed.
//!
//! It must only ever give the staged path's result: `tests/pipeline_fast_path.rs`
//! compares both on random tables and frames. Never allocates; the lookup's arrays live
//! in [`burst`]'s frame, so chunks that the IPv4 and label loops settle whole do not pay
//! for them.

use super::local::{LocalAddrs, MacKey};
use super::{hash, DropReason, PuntReason, Verdict, CHUNK};
use crate::fib::{Direct, Fib, NextHop, RouteId, RouteTarget, TtlMode, NO_ROUTE};
use crate::packet::PacketBuf;
use crate::wire::ethernet::{
    field as eth, ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MPLS, HEADER_LEN,
};
use crate::wire::ipv6::{field, HEADER_LEN as IPV6_LEN, NH_HOP_BY_HOP};
use crate::wire::mpls::{field as lse_field, ENTRY_LEN as LSE, TC_SHIFT};
use crate::wire::{be16, be32};

/// A plain frame: Ethernet and the fixed IPv6 header.
const FRAME: usize = HEADER_LEN + IPV6_LEN;

/// Whether an address starting with `first` is of a scope the stages decide: 0x00
/// (unspecified, loopback, ::/8), 0xfe (link-local among fe00::/8), 0xff (multicast).
/// One add and compare.
#[inline(always)]
pub(super) fn special(first: u8) -> bool {
    first.wrapping_add(2) <= 2
}

/// Fast-path IPv6 for the packets `pkts[which[k]]`, received on `in_port` whose MAC is
/// `mac`: each is decided (its verdict written) or its index appended to `fail[..n]`;
/// the egress LER ([`super::egress`]) then takes its pick of those, and the rest are for
/// the stages. Returns how many the egress LER forwarded (labelled packets, for the
/// family counts). Out of line: its arrays are only set up for bursts that carry IPv6.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(crate) fn burst<P: PacketBuf>(
    fib: &Fib,
    local: &LocalAddrs,
    mac: MacKey,
    in_port: u16,
    pkts: &mut [P],
    verdicts: &mut [Verdict],
    which: &[u8],
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) -> usize {
    let mut dsts = [0u128; CHUNK];
    let mut idx = [0u8; CHUNK];
    let mut q = 0;
    for &i in which {
        match input(pkts[i as usize].data(), mac, local) {
            Some(dst) => {
                dsts[q] = dst;
                idx[q] = i;
                q += 1;
            }
            None => {
                fail[*n] = i;
                *n += 1;
            }
        }
    }
    if q == 0 {
        return egress(fib, mac, pkts, verdicts, fail, n);
    }
    route_and_forward(fib, in_port, pkts, verdicts, &dsts[..q], &idx[..q], fail, n);
    egress(fib, mac, pkts, verdicts, fail, n)
}

/// The batched lookup of `dsts` (of the packets `pkts[idx[k]]`), then each packet
/// forwarded or punted from its route, or its index appended to `fail[..n]`: the second
/// half of [`burst`] and [`first`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn route_and_forward<P: PacketBuf>(
    fib: &Fib,
    in_port: u16,
    pkts: &mut [P],
    verdicts: &mut [Verdict],
    dsts: &[u128],
    idx: &[u8],
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) {
    let mut routes = [NO_ROUTE; CHUNK];
    let routes = &mut routes[..dsts.len()];
    fib.lookup_ipv6_batch(dsts, routes);
    for (&i, &route) in idx.iter().zip(routes.iter()) {
        let v = match forward(fib, &mut pkts[i as usize], route) {
            Some(v) => Some(v),
            None => other_target(fib, route, in_port),
        };
        match v {
            Some(v) => verdicts[i as usize] = v,
            None => {
                fail[*n] = i;
                *n += 1;
            }
        }
    }
}

/// [`burst`] over every packet of `pkts`, without the egress LER (a chunk of a burst of
/// IPv6): what it turns away, in no particular order, is for the other fast paths. Its
/// input loop copies `burst`'s (over every packet, not a list): sharing the whole loops
/// made `burst` slower in mixed bursts (worker-ir +5 Ir a packet); sharing
/// [`route_and_forward`] cost nothing (session 12).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(crate) fn first<P: PacketBuf>(
    fib: &Fib,
    local: &LocalAddrs,
    mac: MacKey,
    in_port: u16,
    pkts: &mut [P],
    verdicts: &mut [Verdict],
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) {
    let mut dsts = [0u128; CHUNK];
    let mut idx = [0u8; CHUNK];
    let mut q = 0;
    for (i, pkt) in pkts.iter().enumerate() {
        match input(pkt.data(), mac, local) {
            Some(dst) => {
                dsts[q] = dst;
                idx[q] = i as u8;
                q += 1;
            }
            None => {
                fail[*n] = i as u8;
                *n += 1;
            }
        }
    }
    route_and_forward(fib, in_port, pkts, verdicts, &dsts[..q], &idx[..q], fail, n);
}

/// [`super::egress::burst`] on the packets left in `fail[..n]`, which it leaves there
/// if it turns them away: the number it settled.
#[inline(always)]
fn egress<P: PacketBuf>(
    fib: &Fib,
    mac: MacKey,
    pkts: &mut [P],
    verdicts: &mut [Verdict],
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) -> usize {
    // Only a labelled frame can be the egress LER's: chunks of ARP, TTL 1 or other
    // traffic for the stages skip its setup (~18 Ir a packet in punt-ir's mixes).
    let labelled = |&i: &u8| {
        let d = pkts[i as usize].data();
        d.len() > HEADER_LEN && be16(d, eth::ETHERTYPE.start) == ETHERTYPE_MPLS
    };
    if !fail[..*n].iter().any(labelled) {
        return 0;
    }
    let left = *fail;
    let l = core::mem::replace(n, 0);
    super::egress::burst(fib, mac, pkts, verdicts, &left[..l], fail, n);
    l - *n
}

/// The IPv6 header of a packet the fast path can forward once its route is known: plain
/// Ethernet addressed to `mac`, version 6, a payload inside the frame, hop limit above 1,
/// no hop-by-hop header, source and destination of global scope and certainly not the
/// router's. Returns the destination for the batched lookup; `None` leaves the packet to
/// the stages.
#[inline(always)]
fn input(data: &[u8], mac: MacKey, local: &LocalAddrs) -> Option<u128> {
    let frame: &[u8; FRAME] = data.first_chunk()?;
    let (_, ip) = frame.split_last_chunk::<IPV6_LEN>()?;
    if be16(frame, eth::ETHERTYPE.start) != ETHERTYPE_IPV6
        || !mac.matches(frame.first_chunk()?)
        || ip[0] >> 4 != 6
        || ip[field::HOP_LIMIT] <= 1
        || ip[field::NEXT_HEADER] == NH_HOP_BY_HOP
    {
        return None;
    }
    let (_, src) = ip.split_first_chunk::<{ field::SRC.start }>()?;
    let src: &[u8; 16] = src.first_chunk()?;
    let (_, dst) = ip.split_last_chunk::<{ IPV6_LEN - field::DST.start }>()?;
    let len = IPV6_LEN + be16(ip, field::PAYLOAD_LEN) as usize;
    if len > data.len() - HEADER_LEN
        || special(src[0]) | special(dst[0])
        || local.may_be_own6(src)
        || local.may_be_own6(dst)
    {
        return None;
    }
    Some(u128::from_be_bytes(*dst))
}

/// The verdict for a packet [`input`] accepted whose route is not a next hop, as the
/// stages give it (the hop limit, above 1, does not expire here): no route, local,
/// connected (glean), blackhole. `None` for a next hop (declined by [`forward`]).
#[inline(never)]
fn other_target(fib: &Fib, route: RouteId, in_port: u16) -> Option<Verdict> {
    if route == NO_ROUTE {
        return Some(Verdict::SlowPath(PuntReason::Unreachable { in_port }));
    }
    Some(match fib.route(route).target {
        RouteTarget::Local => Verdict::SlowPath(PuntReason::LocalDelivery),
        RouteTarget::Blackhole => Verdict::Drop(DropReason::NoRoute),
        RouteTarget::Connected { port } => Verdict::SlowPath(PuntReason::Glean { port }),
        RouteTarget::NextHop(_) => return None,
    })
}

/// Forwards a packet [`input`] accepted when `route` leads to a resolved adjacency
/// (directly or by the flow hash through an ECMP group) that carries IPv6 or pushes
/// labels, and the datagram (with those labels) fits its MTU and headroom; `None`
/// (untouched) otherwise.
#[inline(always)]
fn forward<P: PacketBuf>(fib: &Fib, pkt: &mut P, route: RouteId) -> Option<Verdict> {
    // A route to one adjacency carrying IPv6 without labels from the route's copy of its
    // fields: resolved and within the MTU in one compare (the limit is 0 for every
    // other route), and no Ethernet padding ([`input`] checked that the datagram fits).
    let direct = fib.direct6(route)?;
    let data = pkt.data_mut();
    let len = data.len();
    let frame: &mut [u8; FRAME] = data.first_chunk_mut()?;
    let payload = be16(frame, HEADER_LEN + field::PAYLOAD_LEN) as usize;
    if IPV6_LEN + payload < direct.limit as usize && len - FRAME == payload {
        frame[..HEADER_LEN].copy_from_slice(&direct.eth);
        frame[HEADER_LEN + field::HOP_LIMIT] -= 1;
        return Some(Verdict::Forward { port: direct.port });
    }
    // 6PE to one adjacency pushing one or two labels, from the same entry: its limit
    // apart (`push_limit`), so that the plain forward above keeps its one compare (a
    // label-count test there cost plain IPv6 8 instructions, session 24).
    if IPV6_LEN + payload < direct.push_limit as usize && len - FRAME == payload {
        let tc = (frame[HEADER_LEN] >> 1) & 7;
        let hop = frame[HEADER_LEN + field::HOP_LIMIT] - 1;
        return push_direct(pkt, direct, tc, hop);
    }
    // Every other route: decoded from the route and its adjacency.
    let route = fib.route(route);
    let RouteTarget::NextHop(nh) = route.target else {
        return None;
    };
    let adj_id = match nh {
        NextHop::Adjacency(a) => a,
        NextHop::Ecmp(_) => ecmp_member(fib, nh, data.get(HEADER_LEN..)?)?,
    };
    let frame: &mut [u8; FRAME] = data.first_chunk_mut()?;
    let adj = fib.adjacency(adj_id);
    let push = adj.push_bytes();
    // Without labels the template's ethertype names the family the adjacency carries.
    if IPV6_LEN + payload >= adj.limit()
        || be16(adj.ethernet_template(), eth::ETHERTYPE.start) == ETHERTYPE_IPV4
    {
        return None;
    }
    let hop = frame[HEADER_LEN + field::HOP_LIMIT] - 1;
    let pad = len - FRAME - payload;
    if push == 0 && pad == 0 {
        frame[..HEADER_LEN].copy_from_slice(adj.ethernet_template());
        frame[HEADER_LEN + field::HOP_LIMIT] = hop;
        return Some(Verdict::Forward { port: adj.port });
    }
    // The label's TC from the traffic class's class selector bits (its top three).
    let tc = ((frame[HEADER_LEN] >> 1) & 7) as u32;
    // Checked here, off the plain forward's way.
    if pkt.headroom() < push {
        return None;
    }
    if pad > 0 {
        let _ = pkt.trim(pad);
    }
    if push > 0 {
        let _ = pkt.prepend(push);
    }
    let outer = route.ttl_mode.pushed_ttl(hop) as u32;
    let d = pkt.data_mut();
    let (hdr, ip) = d.split_at_mut(HEADER_LEN + push);
    let (eth, lses) = hdr.split_at_mut(HEADER_LEN);
    let (template_eth, template_lses) = adj.header_template().split_at(HEADER_LEN);
    eth.copy_from_slice(template_eth);
    // Template words have TC, S and TTL clear.
    for (lse, t) in lses
        .chunks_exact_mut(LSE)
        .zip(template_lses.chunks_exact(LSE))
    {
        lse.copy_from_slice(&(be32(t, 0) | tc << TC_SHIFT | outer).to_be_bytes());
    }
    if push > 0 {
        lses[push - LSE + lse_field::S_BYTE] |= 1; // S on the bottom label
    }
    ip[field::HOP_LIMIT] = hop;
    Some(Verdict::Forward { port: adj.port })
}

/// Pushes `direct`'s labels onto a datagram [`input`] accepted whose length its
/// `push_limit` passed, with TC `tc` and, in uniform mode, TTL `hop` (the hop limit, one
/// less, which the datagram gets too); `None` (untouched) when the headroom is short.
/// [`super::fast`]'s IPv4 push has the same steps with its checksummed TTL: one generic
/// push taking the TTL write as a closure cost swap, PHP and plain IPv6 1-3
/// instructions a packet and 6PE 6 (worker-ir, session 32), so each family keeps its own.
#[inline(always)]
fn push_direct<P: PacketBuf>(pkt: &mut P, direct: &Direct, tc: u8, hop: u8) -> Option<Verdict> {
    let push = direct.push as usize;
    if !pkt.prepend(push) {
        return None;
    }
    let d = pkt.data_mut();
    let ip_at = super::fast::store_stack(d, direct, push, tc, hop);
    if let Some(hop_limit) = d.get_mut(ip_at + field::HOP_LIMIT) {
        *hop_limit = hop; // a datagram of 40 bytes or more (checked at input)
    }
    Some(Verdict::Forward { port: direct.port })
}

/// The member of an ECMP group for the IPv6 datagram starting `ip` (its fixed header
/// checked by [`input`], the frame's rest after it): the stages' hash without the checks
/// already made, on the payload up to its length. Inlined, as for IPv4.
#[inline(always)]
fn ecmp_member(fib: &Fib, group: NextHop, ip: &[u8]) -> Option<crate::fib::AdjId> {
    let (header, rest) = ip.split_first_chunk::<IPV6_LEN>()?;
    let payload = rest.get(..be16(header, field::PAYLOAD_LEN) as usize)?;
    Some(fib.resolve(group, hash::ipv6_flow_hash(header, payload)))
}

/// A penultimate-hop pop of the only label (TTL `label_ttl`, above 1; entry of `mode`
/// towards `next_hop`) that exposes IPv6, towards a resolved adjacency that carries
/// IPv6 bare: the hop limit becomes `min(hop limit, label TTL - 1)` in uniform mode, is
/// kept in pipe mode. `None` (untouched) for anything else, [`super::fast::label`]'s
/// caller then hands it to the stages. Out of line: the IPv4 pop stays as short as it was.
#[cold]
#[inline(never)]
pub(crate) fn php<P: PacketBuf>(
    fib: &Fib,
    next_hop: NextHop,
    mode: TtlMode,
    label_ttl: u8,
    pkt: &mut P,
) -> Option<Verdict> {
    const STACK_END: usize = HEADER_LEN + LSE;
    let data = pkt.data_mut();
    let (_, after) = data.split_first_chunk::<STACK_END>()?;
    let ip: &[u8; IPV6_LEN] = after.first_chunk()?;
    let end = STACK_END + IPV6_LEN + be16(ip, field::PAYLOAD_LEN) as usize;
    if ip[0] >> 4 != 6 || end > data.len() {
        return None;
    }
    let hop = mode.popped_ttl(ip[field::HOP_LIMIT], label_ttl - 1);
    let adj = super::fast::adjacency(fib, next_hop, data, STACK_END, end);
    let bare_ipv6 = be16(adj.ethernet_template(), eth::ETHERTYPE.start) == ETHERTYPE_IPV6;
    if !bare_ipv6 || hop == 0 || end - STACK_END >= adj.limit() {
        return None;
    }
    let pad = data.len() - end;
    let d = pkt.shrink(LSE, pad);
    // A datagram of 40 bytes or more follows (checked above).
    if let Some((eth, ip)) = d.split_first_chunk_mut::<HEADER_LEN>() {
        eth.copy_from_slice(adj.ethernet_template());
        if let Some(hop_limit) = ip.get_mut(field::HOP_LIMIT) {
            *hop_limit = hop;
        }
    }
    Some(Verdict::Forward { port: adj.port })
}
