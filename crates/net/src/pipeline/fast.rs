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
//! sources that may be the router's own, swap-and-push, pops that expose a label, local
//! and connected routes, unresolved neighbours, a packet too big, a stack the staged walk
//! would refuse) returns `None` untouched, and the staged path decides it.
//!
//! Written for instruction count (the stage's cost is about proportional to it): fixed-size
//! views so that one length check covers every header byte read, the packet's bytes taken
//! mutably once where the decision ends in a write, and checks folded where an equivalent
//! form is cheaper (see `wire::checksum`).
//!
//! It must only ever give the staged path's result: `tests/pipeline_fast_path.rs` runs
//! random tables and frames through both ([`super::Pipeline::process_burst_staged`]) and
//! compares verdicts and bytes.

use super::local::{LocalAddrs, MacKey};
use super::{hash, Verdict};
use crate::fib::{
    AdjId, Adjacency, Fib, LabelOp, NextHop, RouteId, RouteTarget, TtlMode, DEFAULT_PIPE_TTL,
    NO_ROUTE,
};
use crate::packet::PacketBuf;
use crate::wire::checksum;
use crate::wire::ethernet::{ETHERTYPE_IPV4, ETHERTYPE_MPLS, HEADER_LEN};
use crate::wire::mpls::{is_reserved, LabelStack};

/// Bytes of one label stack entry.
const LSE: usize = 4;
/// Bytes of an IPv4 header without options.
const IPV4_LEN: usize = 20;
/// S (bottom of stack) bit of a label stack entry.
const BOS: u32 = 1 << 8;

/// Decides and rewrites a label-switched packet in one pass when it is a plain swap, or
/// a penultimate-hop pop exposing IPv4, towards a resolved adjacency (directly or through
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
    if u16::from_be_bytes([top[12], top[13]]) != ETHERTYPE_MPLS || !mac.matches(top.first_chunk()?)
    {
        return None;
    }
    let lse = u32::from_be_bytes([top[14], top[15], top[16], top[17]]);
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
            let adj = resolved_adjacency(fib, next_hop, data, stack_end, data.len())?;
            // The swapped label replaces the received one: the frame keeps its length.
            if adj.push_bytes() != LSE || data.len() - HEADER_LEN > adj.mtu as usize {
                return None;
            }
            let port = adj.port;
            let (eth, label) = adj.header_template().split_at(HEADER_LEN);
            let d = &mut data[..HEADER_LEN + LSE];
            d[..HEADER_LEN].copy_from_slice(eth);
            // The template's label word has TC, S and TTL clear: TC and S as received,
            // TTL one less.
            let out = be32(label) | (lse & 0xf00) | (ttl - 1) as u32;
            d[HEADER_LEN..HEADER_LEN + LSE].copy_from_slice(&out.to_be_bytes());
            Some(Verdict::Forward { port })
        }
        LabelOp::Pop if lse & BOS != 0 => {
            // PHP: the exposed datagram is forwarded (its extent also bounds the ECMP hash).
            let total = exposed_ipv4(&data[stack_end..])?;
            let adj = resolved_adjacency(fib, next_hop, data, stack_end, stack_end + total)?;
            let ip_ttl = data[HEADER_LEN + LSE + 8];
            let ttl = match entry.ttl_mode {
                TtlMode::Uniform => ip_ttl.min(ttl - 1),
                TtlMode::Pipe(_) => ip_ttl,
            };
            if adj.push_bytes() != 0 || ttl == 0 || total > adj.mtu as usize {
                return None;
            }
            let pad = data.len() - HEADER_LEN - LSE - total;
            if pad > 0 {
                let _ = pkt.trim(pad);
            }
            let _ = pkt.adj(LSE);
            let d = pkt.data_mut();
            d[..HEADER_LEN].copy_from_slice(adj.ethernet_template());
            set_ttl(&mut d[HEADER_LEN..], ttl);
            Some(Verdict::Forward { port: adj.port })
        }
        _ => None,
    }
}

/// The adjacency `next_hop` leads to, through its ECMP group by the hash of the label
/// stack (`data[HEADER_LEN..stack_end]`) and the payload up to `end`; `None` while the
/// neighbour is unresolved.
#[inline(always)]
fn resolved_adjacency<'f>(
    fib: &'f Fib,
    next_hop: NextHop,
    data: &[u8],
    stack_end: usize,
    end: usize,
) -> Option<&'f Adjacency> {
    let adj = fib.adjacency(match next_hop {
        NextHop::Adjacency(a) => a,
        nh @ NextHop::Ecmp(_) => {
            ecmp_member(fib, nh, &data[HEADER_LEN..stack_end], &data[stack_end..end])
        }
    });
    adj.is_resolved().then_some(adj)
}

/// The member of an ECMP group for this packet's flow (kept out of line: inlined, the
/// hash made the plain cases' code longer).
#[inline(never)]
fn ecmp_member(fib: &Fib, group: NextHop, stack: &[u8], payload: &[u8]) -> AdjId {
    fib.resolve(group, hash::flow_hash(stack, Some(payload)))
}

/// [`ecmp_member`] for a datagram [`ipv4_input`] accepted (a 20-byte `header`, then
/// `payload` up to its total length): the hash without the header checks already made.
#[inline(never)]
fn ipv4_ecmp_member(fib: &Fib, group: NextHop, header: &[u8; IPV4_LEN], payload: &[u8]) -> AdjId {
    fib.resolve(group, hash::ipv4_flow_hash(header, payload))
}

#[inline]
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Total length of the option-less IPv4 datagram starting `ip`, when its header is sound
/// and its checksum verifies.
#[inline]
fn exposed_ipv4(ip: &[u8]) -> Option<usize> {
    let hdr: &[u8; IPV4_LEN] = ip.get(..IPV4_LEN)?.try_into().ok()?;
    let total = u16::from_be_bytes([hdr[2], hdr[3]]) as usize;
    let sound = hdr[0] == 0x45 && total >= IPV4_LEN && total <= ip.len();
    (sound && checksum::ipv4_header_verifies(hdr)).then_some(total)
}

/// Writes the TTL of the IPv4 header `ip` and updates its checksum (RFC 1624).
#[inline(always)]
fn set_ttl(ip: &mut [u8], ttl: u8) {
    let old = u16::from_be_bytes([ip[8], ip[9]]);
    ip[8] = ttl;
    let new = u16::from_be_bytes([ip[8], ip[9]]);
    if old != new {
        let sum = checksum::update16(u16::from_be_bytes([ip[10], ip[11]]), old, new);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
    }
}

/// First octets of martian and multicast addresses (0/8, 127/8, 224/3): the stages count
/// those, so the fast path leaves them alone. One table load instead of three compares.
static SPECIAL_FIRST_OCTET: [bool; 256] = {
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
    let (eth, ip) = frame.split_at(HEADER_LEN);
    let ip: &[u8; IPV4_LEN] = ip.try_into().ok()?;
    if u16::from_be_bytes([eth[12], eth[13]]) != ETHERTYPE_IPV4
        || !mac.matches(frame.first_chunk()?)
        || ip[0] != 0x45
        || ip[8] <= 1
    {
        return None;
    }
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if total < IPV4_LEN
        || total > data.len() - HEADER_LEN
        || !checksum::ipv4_header_verifies(ip)
        || SPECIAL_FIRST_OCTET[ip[12] as usize] | SPECIAL_FIRST_OCTET[ip[16] as usize]
        || local.may_be_own(u32::from_ne_bytes([ip[12], ip[13], ip[14], ip[15]]))
    {
        return None;
    }
    Some(u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]))
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
    if route == NO_ROUTE {
        return None;
    }
    let route = fib.route(route);
    let RouteTarget::NextHop(nh) = route.target else {
        return None;
    };
    let headroom = pkt.headroom();
    // Mutable from the start: a plain forward writes through the slice it checked.
    let data = pkt.data_mut();
    let len = data.len();
    let (frame, rest) = data.split_first_chunk_mut::<{ HEADER_LEN + IPV4_LEN }>()?;
    let total = u16::from_be_bytes([frame[HEADER_LEN + 2], frame[HEADER_LEN + 3]]) as usize;
    let adj_id = match nh {
        NextHop::Adjacency(a) => a,
        NextHop::Ecmp(_) => {
            let header = frame[HEADER_LEN..].try_into().ok()?;
            let payload = rest.get(..total.checked_sub(IPV4_LEN)?)?;
            ipv4_ecmp_member(fib, nh, header, payload)
        }
    };
    let adj = fib.adjacency(adj_id);
    let push = adj.push_bytes();
    if !adj.is_resolved() || push + total > adj.mtu as usize || headroom < push {
        return None;
    }
    // Ethernet padding after the datagram is not forwarded ([`ipv4_input`] checked that
    // the datagram fits the frame).
    let pad = len - HEADER_LEN - total;
    if push == 0 && pad == 0 {
        let (eth, ip) = frame.split_at_mut(HEADER_LEN);
        eth.copy_from_slice(adj.ethernet_template());
        decrement_ttl(ip);
        return Some(Verdict::Forward { port: adj.port });
    }
    let tc = (frame[HEADER_LEN + 1] >> 5) as u32;
    let ttl = frame[HEADER_LEN + 8] - 1;
    if pad > 0 {
        let _ = pkt.trim(pad);
    }
    if push == 0 {
        let (eth, ip) = pkt.data_mut().split_at_mut(HEADER_LEN);
        eth.copy_from_slice(adj.ethernet_template());
        decrement_ttl(ip);
    } else {
        let _ = pkt.prepend(push);
        let outer = match route.ttl_mode {
            TtlMode::Uniform => ttl,
            TtlMode::Pipe(0) => DEFAULT_PIPE_TTL,
            TtlMode::Pipe(t) => t,
        } as u32;
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
            lse.copy_from_slice(&(be32(t) | tc << 9 | outer).to_be_bytes());
        }
        lses[push - LSE + 2] |= 1; // S on the bottom label
        decrement_ttl(ip);
    }
    Some(Verdict::Forward { port: adj.port })
}

/// Takes one off the TTL of the IPv4 header at the start of `ip` (at least 2, as
/// [`ipv4_input`] checked) and updates its checksum.
#[inline]
fn decrement_ttl(ip: &mut [u8]) {
    let Some(ip) = ip.get_mut(..IPV4_LEN) else {
        return;
    };
    ip[8] -= 1;
    let sum = checksum::after_ttl_decrement([ip[10], ip[11]]);
    ip[10..12].copy_from_slice(&sum);
}
