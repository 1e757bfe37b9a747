//! The fast path for the commonest packets: a plain label swap or a penultimate-hop pop
//! (one pass), and IPv4 forwarding or LER imposition (input checks, the batched lookup,
//! then the rewrite), each towards a resolved adjacency, directly or through an ECMP
//! group.
//!
//! The staged path ([`super::classify`] .. [`super::rewrite`]) carries a general per-packet
//! state between four stages; for a swap that costs ~340 instructions per packet, most of
//! them bookkeeping for cases the plain packet never meets. Here every condition of the
//! plain case is checked, and the packet is rewritten once its verdict is known (so the
//! rule that nothing is written before the verdict still holds). Anything else (reserved
//! labels, TTL 1, IP options, martians, frames not addressed to the input port's MAC,
//! sources that may be the router's own, swap-and-push, pops that expose a label,
//! unresolved next hops, a packet too big, a stack the staged walk would refuse) returns
//! `None` untouched, and the staged path decides it (after [`super::egress`] has taken
//! the explicit nulls and pop-and-lookup labels it forwards).
//!
//! Written for instruction count (the stage's cost is about proportional to it): fixed-size
//! views so that one length check covers every header byte read, the packet's bytes taken
//! mutably once where the decision ends in a write, and checks folded where an equivalent
//! form is cheaper (see `wire::checksum`).
//!
//! Two punts are decided here, from the route alone: IPv4 to one of the router's
//! addresses (local delivery) and to a connected subnet's host without an adjacency
//! (glean), so that an echo flood or a scan of the subnet costs no more than a no-route
//! drop.
//! It must only ever give the staged path's result: `tests/pipeline_fast_path.rs` runs
//! random tables and frames through both ([`super::Pipeline::process_burst_staged`]) and
//! compares verdicts and bytes.

use super::local::{LocalAddrs, MacKey};
use super::mpls::exposed_plain_ipv4;
use super::{hash, PuntReason, Verdict};
use crate::fib::{
    AdjId, Adjacency, Direct, Family, Fib, LabelOp, NextHop, RouteId, RouteTarget, DIRECT_PUSH_MAX,
};
use crate::packet::PacketBuf;
use crate::wire::ethernet::{field as eth, ETHERTYPE_IPV4, ETHERTYPE_MPLS, HEADER_LEN};
use crate::wire::ipv4::{
    decrement_ttl, field as ip4, set_ttl, MIN_HEADER_LEN as IPV4_LEN, VER_IHL_NO_OPTIONS,
};
use crate::wire::mpls::{
    field as lse_field, is_reserved, LabelStack, BOS_BIT as BOS, ENTRY_LEN as LSE, TC_MASK,
};
use crate::wire::{be16, be32, checksum};

/// Decides and rewrites a label-switched packet in one pass when it is a plain swap, or
/// a penultimate-hop pop exposing IPv4 (IPv6: [`super::fast6::php`]), towards a resolved adjacency (directly or through
/// an ECMP group), and its frame is addressed to `mac` (the input port's); `None`
/// (untouched) otherwise.
#[inline(always)]
pub(crate) fn label<P: PacketBuf>(
    fib: &Fib,
    max_depth: usize,
    mac: MacKey,
    pkt: &mut P,
) -> Option<Verdict> {
    // Mutable from the start, so that the swap writes through the slice it checked (read
    // again from the buffer, it was bounds-checked again). Nothing is written before the
    // verdict is known.
    let data = pkt.data_mut();
    let top: &[u8; HEADER_LEN + LSE] = data.get(..HEADER_LEN + LSE)?.try_into().ok()?;
    if be16(top, eth::ETHERTYPE.start) != ETHERTYPE_MPLS || !mac.matches(top.first_chunk()?) {
        return None;
    }
    let lse = be32(top, eth::PAYLOAD);
    let (label, ttl) = (lse >> 12, lse as u8);
    if is_reserved(label) || ttl <= 1 {
        return None;
    }
    // Deeper stacks are walked as the staged path walks them (it refuses the same ones).
    let stack_end = if lse & BOS != 0 {
        HEADER_LEN + LSE
    } else {
        HEADER_LEN
            + LabelStack::new_checked(&data[HEADER_LEN..], max_depth)
                .ok()?
                .len()
    };
    let entry = fib.lookup_label(label)?;
    let next_hop = entry.next_hop?;
    match entry.op {
        LabelOp::Swap => {
            let adj = adjacency(fib, next_hop, data, stack_end, data.len());
            // The swapped label replaces the received one: the frame keeps its length.
            if adj.push_bytes() != LSE || data.len() - HEADER_LEN - LSE >= adj.limit() {
                return None;
            }
            let port = adj.port;
            let (eth, label) = adj.header_template().split_at(HEADER_LEN);
            let d = &mut data[..HEADER_LEN + LSE];
            d[..HEADER_LEN].copy_from_slice(eth);
            // The template's label word has TC, S and TTL clear: TC and S as received,
            // TTL one less.
            let out = be32(label, 0) | (lse & (TC_MASK | BOS)) | (ttl - 1) as u32;
            d[HEADER_LEN..HEADER_LEN + LSE].copy_from_slice(&out.to_be_bytes());
            Some(Verdict::Forward { port })
        }
        LabelOp::Pop if lse & BOS != 0 => {
            // PHP: the exposed datagram is forwarded (its extent also bounds the ECMP hash).
            // Options are left to the stages (they may punt them).
            let Some(total) = exposed_plain_ipv4(&data[stack_end..]) else {
                return super::fast6::php(fib, next_hop, entry.ttl_mode, ttl, pkt);
            };
            let adj = adjacency(fib, next_hop, data, stack_end, stack_end + total);
            let ip_ttl = data[stack_end + ip4::TTL];
            let ttl = entry.ttl_mode.popped_ttl(ip_ttl, ttl - 1);
            // The template's ethertype is IPv4 only when the adjacency pushes no label
            // and carries IPv4 (the staged path drops a payload of another family).
            let bare_ipv4 = be16(adj.ethernet_template(), eth::ETHERTYPE.start) == ETHERTYPE_IPV4;
            if !bare_ipv4 || ttl == 0 || total >= adj.limit() {
                return None;
            }
            let pad = data.len() - HEADER_LEN - LSE - total;
            // In one call: trim, adj and data_mut apart read the mbuf back after each
            // write (docs/benchmarks.md, h-php).
            let d = pkt.shrink(LSE, pad);
            d[..HEADER_LEN].copy_from_slice(adj.ethernet_template());
            set_ttl(&mut d[HEADER_LEN..], ttl);
            Some(Verdict::Forward { port: adj.port })
        }
        _ => None,
    }
}

/// The adjacency `next_hop` leads to, through its ECMP group by the hash of the label
/// stack (`data[HEADER_LEN..stack_end]`) and the payload up to `end`. Resolved or not:
/// the caller's compare with [`Adjacency::limit`] refuses an unresolved one.
#[inline(always)]
pub(super) fn adjacency<'f>(
    fib: &'f Fib,
    next_hop: NextHop,
    data: &[u8],
    stack_end: usize,
    end: usize,
) -> &'f Adjacency {
    fib.adjacency(match next_hop {
        NextHop::Adjacency(a) => a,
        nh @ NextHop::Ecmp(_) => {
            ecmp_member(fib, nh, &data[HEADER_LEN..stack_end], &data[stack_end..end])
        }
    })
}

/// The member of an ECMP group for this packet's flow. Inlined, as are the IPv4 and IPv6
/// ones: since the hash is three multiplies that wins (docs/benchmarks.md, session 13).
#[inline(always)]
fn ecmp_member(fib: &Fib, group: NextHop, stack: &[u8], payload: &[u8]) -> AdjId {
    fib.resolve(group, hash::flow_hash(stack, Some(payload)))
}

/// [`ecmp_member`] for a datagram [`ipv4_input`] accepted (a 20-byte `header`, then
/// `payload` up to its total length): the hash without the header checks already made.
#[inline(always)]
fn ipv4_ecmp_member(fib: &Fib, group: NextHop, header: &[u8; IPV4_LEN], payload: &[u8]) -> AdjId {
    fib.resolve(group, hash::ipv4_flow_hash(header, payload))
}

/// First octets of martian and multicast addresses (0/8, 127/8, 224/3): the stages count
/// those, so the fast path leaves them alone. One table load instead of three compares.
pub(super) static SPECIAL_FIRST_OCTET: [bool; 256] = {
    let mut t = [false; 256];
    let mut o = 0;
    while o < 256 {
        t[o] = o == 0 || o == 127 || o >= 224;
        o += 1;
    }
    t
};

/// The IPv4 header of a packet the fast path can forward once its route is known: plain
/// Ethernet addressed to `mac` (the input port's), a 20-byte
/// header that passes every input check, TTL above 1, a source that is certainly not one
/// of the router's addresses (`local`'s filter). Returns the destination for the batched
/// lookup; `None` leaves the packet to the stages.
#[inline]
pub(crate) fn ipv4_input(data: &[u8], mac: MacKey, local: &LocalAddrs) -> Option<u32> {
    let frame: &[u8; HEADER_LEN + IPV4_LEN] = data.get(..HEADER_LEN + IPV4_LEN)?.try_into().ok()?;
    let (_, ip) = frame.split_at(HEADER_LEN);
    let ip: &[u8; IPV4_LEN] = ip.try_into().ok()?;
    if be16(frame, eth::ETHERTYPE.start) != ETHERTYPE_IPV4
        || !mac.matches(frame.first_chunk()?)
        || ip[ip4::VER_IHL] != VER_IHL_NO_OPTIONS
        || ip[ip4::TTL] <= 1
    {
        return None;
    }
    let (src, dst) = (ip4::SRC_ADDR.start, ip4::DST_ADDR.start);
    let total = be16(ip, ip4::LENGTH.start) as usize;
    if total < IPV4_LEN
        || total > data.len() - HEADER_LEN
        || !checksum::ipv4_header_verifies(ip)
        || SPECIAL_FIRST_OCTET[ip[src] as usize] | SPECIAL_FIRST_OCTET[ip[dst] as usize]
        || local.may_be_own(u32::from_ne_bytes([
            ip[src],
            ip[src + 1],
            ip[src + 2],
            ip[src + 3],
        ]))
    {
        return None;
    }
    Some(be32(ip, dst))
}

/// The verdict for a packet [`ipv4_input`] accepted that [`ipv4_forward`] turned away,
/// when it is a punt the stages would decide from the route alone: to one of the
/// router's addresses (`local` route: delivered, whatever the TTL) or to an on-link host
/// without an adjacency (connected subnet: glean; [`ipv4_input`] lets only TTL above 1
/// through, so it has not expired). Decided here without walking the stages, so that an
/// echo flood or a scan of a connected subnet costs no more than a no-route drop; `None`
/// (to the stages) otherwise. Apart from [`ipv4_forward`]: there, even as a cold call,
/// the check cost forwarded packets 11 instructions; inlined (a call in the caller's
/// loop made it spill).
#[inline(always)]
pub(crate) fn punt(fib: &Fib, route: RouteId) -> Option<Verdict> {
    let target = fib.found_route(route)?.target;
    // One test per variant: a match on both decoded the niche-packed tag first.
    if let RouteTarget::Connected { port } = target {
        Some(Verdict::SlowPath(PuntReason::Glean { port }))
    } else if target == RouteTarget::Local {
        Some(Verdict::SlowPath(PuntReason::LocalDelivery))
    } else {
        None
    }
}

/// Forwards a packet [`ipv4_input`] accepted, when `route` leads to a resolved adjacency
/// (directly or by the flow hash through an ECMP group) and the datagram (with the labels
/// the adjacency pushes: LER imposition) fits its MTU and headroom; `None` (untouched)
/// otherwise.
#[inline]
pub(crate) fn ipv4_forward<P: PacketBuf>(
    fib: &Fib,
    pkt: &mut P,
    route: RouteId,
) -> Option<Verdict> {
    // Mutable from the start: a plain forward writes through the slice it checked.
    let data = pkt.data_mut();
    let len = data.len();
    let (frame, rest) = data.split_first_chunk_mut::<{ HEADER_LEN + IPV4_LEN }>()?;
    let total = be16(frame, HEADER_LEN + ip4::LENGTH.start) as usize;
    // The commonest forwards from the route's copy of its adjacency's fields: resolved
    // and within the MTU in one compare (the limit is 0 for every route that is not to
    // one adjacency carrying IPv4 without labels or pushing one or two), and no
    // Ethernet padding ([`ipv4_input`] checked that the datagram fits the frame).
    let direct = fib.direct(route)?;
    if total < direct.limit as usize && len - HEADER_LEN == total {
        if direct.push == 0 {
            rewrite_plain(frame, &direct.eth);
            return Some(Verdict::Forward { port: direct.port });
        }
        let ip = &frame[HEADER_LEN..];
        let (tc, ttl) = (ip[ip4::DSCP_ECN] >> 5, ip[ip4::TTL] - 1);
        return push_direct(pkt, direct, tc, ttl);
    }
    // Every other route: decoded from the route and its adjacency.
    let route = fib.found_route(route)?;
    let RouteTarget::NextHop(nh) = route.target else {
        return None;
    };
    let adj_id = match nh {
        NextHop::Adjacency(a) => a,
        NextHop::Ecmp(_) => {
            let header = frame[HEADER_LEN..].try_into().ok()?;
            let payload = rest.get(..total.checked_sub(IPV4_LEN)?)?;
            ipv4_ecmp_member(fib, nh, header, payload)
        }
    };
    let adj = fib.adjacency(adj_id);
    // Resolved, and the datagram with the labels pushed within the MTU, in one compare.
    if total >= adj.limit() {
        return None;
    }
    let push = adj.push_bytes();
    // A table may route IPv4 to an adjacency that carries IPv6 without labels (the config
    // and FPM refuse such routes, the table does not): the stages drop it there.
    if !adj.carries(Family::Ipv4) {
        return None;
    }
    // Ethernet padding after the datagram is not forwarded ([`ipv4_input`] checked that
    // the datagram fits the frame).
    let pad = len - HEADER_LEN - total;
    if (push | pad) == 0 {
        rewrite_plain(frame, adj.ethernet_template());
        return Some(Verdict::Forward { port: adj.port });
    }
    // The label's TC from the DSCP's class selector bits.
    let tc = frame[HEADER_LEN + ip4::DSCP_ECN] >> 5;
    let ttl = frame[HEADER_LEN + ip4::TTL] - 1;
    // Checked here, off the plain forward's way.
    if pkt.headroom() < push {
        return None;
    }
    if pad > 0 {
        let _ = pkt.trim(pad);
    }
    if push == 0 {
        rewrite_plain(pkt.data_mut(), adj.ethernet_template());
    } else {
        let _ = pkt.prepend(push);
        let outer = route.ttl_mode.pushed_ttl(ttl);
        let d = pkt.data_mut();
        let (hdr, ip) = d.split_at_mut(HEADER_LEN + push);
        let (eth, lses) = hdr.split_at_mut(HEADER_LEN);
        let (template_eth, template_lses) = adj.header_template().split_at(HEADER_LEN);
        eth.copy_from_slice(template_eth);
        write_stack(lses, template_lses, tc, outer);
        if let Some(ip) = ip.first_chunk_mut() {
            decrement_ttl(ip); // a datagram of 20 bytes or more (checked at input)
        }
    }
    Some(Verdict::Forward { port: adj.port })
}

/// Pushes `direct`'s labels onto a datagram [`ipv4_input`] accepted whose length its
/// limit passed, with TC `tc` and, in uniform mode, TTL `ttl` (the datagram's, one less);
/// `None` (untouched) when the headroom is short.
#[inline(always)]
fn push_direct<P: PacketBuf>(pkt: &mut P, direct: &Direct, tc: u8, ttl: u8) -> Option<Verdict> {
    let push = direct.push as usize;
    if !pkt.prepend(push) {
        return None;
    }
    let d = pkt.data_mut();
    let ip_at = store_stack(d, direct, push, tc, ttl);
    if let Some(ip) = d[ip_at..].first_chunk_mut() {
        decrement_ttl(ip); // a datagram of 20 bytes or more (checked at input)
    }
    Some(Verdict::Forward { port: direct.port })
}

/// Writes `direct`'s Ethernet header and label stack, with TC `tc` and, in uniform mode,
/// TTL `ttl`, at the start of `d`: a frame whose `push` bytes of room (`direct.push`,
/// read once by the caller) were just prepended. Returns where the datagram starts.
/// Shared by the IPv4 push and 6PE ([`super::fast6`]).
#[inline(always)]
pub(super) fn store_stack(d: &mut [u8], direct: &Direct, push: usize, tc: u8, ttl: u8) -> usize {
    let outer = if direct.pipe_ttl == 0 {
        ttl
    } else {
        direct.pipe_ttl
    };
    // Both words' TC and TTL; the template has S on the bottom one.
    let fill = u64::from(tc_ttl_bits(tc, outer));
    let fill = fill | fill << 32;
    let stack = u64::from_ne_bytes(direct.lses) | fill;
    // The stack in one store of 8 bytes ending at the datagram: for one label its first
    // word falls on the Ethernet header's last 4 bytes, which the header's copy then
    // overwrites (push is 4 or 8, so the store starts at byte 10 or 14).
    debug_assert!(
        push == LSE || push == DIRECT_PUSH_MAX,
        "a Direct pushes 1 or 2 labels"
    );
    let ip_at = HEADER_LEN + push;
    d[ip_at - DIRECT_PUSH_MAX..ip_at].copy_from_slice(&stack.to_ne_bytes());
    d[..HEADER_LEN].copy_from_slice(&direct.eth);
    ip_at
}

/// Rewrites a frame that leaves as it came, Ethernet and IPv4: the Ethernet header
/// `eth`, and the TTL one less with its checksum (a datagram of 20 bytes or more,
/// checked at input).
#[inline(always)]
fn rewrite_plain(frame: &mut [u8], eth: &[u8; HEADER_LEN]) {
    let (dst, ip) = frame.split_at_mut(HEADER_LEN);
    dst.copy_from_slice(eth);
    if let Some(ip) = ip.first_chunk_mut() {
        decrement_ttl(ip);
    }
}

/// A label stack entry's TC (0..=7) and TTL bits, as a word in memory order (to OR into
/// a template word read with `from_ne_bytes`: no byte swap).
#[inline(always)]
fn tc_ttl_bits(tc: u8, ttl: u8) -> u32 {
    u32::from_ne_bytes([0, 0, tc << 1, ttl])
}

/// Writes a pushed label stack over `lses`: the adjacency's template words (`template`,
/// as long as `lses`, with TC, S and TTL clear) with TC `tc` (0..=7) and TTL `ttl`, and S
/// on the bottom one (nothing is kept below). The words are combined in memory order,
/// so no byte is swapped: here the loop over words with swaps cost a two-label push 17
/// more instructions (docs/benchmarks.md, session 12). `fast6` keeps that loop, which
/// the compiler made cheaper there than this (6PE +12 instructions with this one).
#[inline(always)]
pub(super) fn write_stack(lses: &mut [u8], template: &[u8], tc: u8, ttl: u8) {
    debug_assert!(tc <= 7, "a TC of 3 bits, not {tc}");
    let fill = tc_ttl_bits(tc, ttl);
    let word = |t: &[u8; LSE]| (u32::from_ne_bytes(*t) | fill).to_ne_bytes();
    // One and two labels in straight-line code: the compiler's unrolled and vectorised
    // loop took 20 instructions to reach its tail for two.
    match (lses.as_chunks_mut::<LSE>().0, template.as_chunks::<LSE>().0) {
        ([a], [ta, ..]) => *a = word(ta),
        ([a, b], [ta, tb, ..]) => (*a, *b) = (word(ta), word(tb)),
        (words, template) => {
            for (lse, t) in words.iter_mut().zip(template) {
                *lse = word(t);
            }
        }
    }
    if let Some(s) = lses.len().checked_sub(LSE - lse_field::S_BYTE) {
        lses[s] |= 1;
    }
}
