//! The fast path of an egress LER: a single label (S set, TTL above 1) that is an
//! explicit null (0 over IPv4, 2 over IPv6) or a pop-and-lookup entry, popped, and the
//! exposed datagram looked up in its family's table (batched) and forwarded to a resolved
//! adjacency, with the TTL the stages give it: `min(IP TTL, label TTL - 1)` in uniform
//! mode (explicit null always), the IP TTL as received in pipe mode.
//!
//! A path of its own, run on what the label, IPv4 and IPv6 loops turned away, rather
//! than an offset per key in their queues: those loops stay as they were (a swap burst
//! never reaches here); labelled packets left for the stages pay its check (~37 Ir), others
//! only the ethertype test that skips it (`fast6::burst`, ~10 Ir).
//! The exposed header must pass what the stages check under a label (`mpls::dispose`):
//! an IPv4 header without options that verifies, with no martian or multicast address
//! (no own-source check below a label); a sound IPv6 header with no address of a special
//! scope (see [`super::fast6`]). Anything else (deeper stacks, TTL 1, wrong family
//! under 0 or 2, routes other than a next hop, unresolved or wrong-family adjacencies,
//! packets too big, short headroom) returns to the stages untouched: nothing is written
//! before the verdict. The ECMP hash covers the popped label, as the stages' does.
//!
//! It must only ever give the staged path's result: `tests/pipeline_fast_path.rs`
//! compares both on random tables and frames. Never allocates, locks or blocks.

use super::fast::{adjacency, SPECIAL_FIRST_OCTET};
use super::fast6::special;
use super::local::MacKey;
use super::{Verdict, CHUNK};
use crate::fib::{Family, Fib, LabelOp, RouteId, RouteTarget, TtlMode, NO_ROUTE};
use crate::packet::PacketBuf;
use crate::wire::ethernet::{field as eth, ETHERTYPE_MPLS, HEADER_LEN};
use crate::wire::ipv4::{field as ip4, set_ttl, MIN_HEADER_LEN as IPV4_LEN, VER_IHL_NO_OPTIONS};
use crate::wire::ipv6::{field as ip6, HEADER_LEN as IPV6_LEN};
use crate::wire::mpls::{
    is_reserved, BOS_BIT as BOS, ENTRY_LEN as LSE, LABEL_IPV4_EXPLICIT_NULL,
    LABEL_IPV6_EXPLICIT_NULL,
};
use crate::wire::{be16, be32, checksum};

/// Offset of the exposed IP header: Ethernet and the one label.
const IP: usize = HEADER_LEN + LSE;

/// Egress LER packets among `pkts[which[k]]` (received on a port whose MAC is `mac`):
/// each forwarded (its verdict written) or its index appended to `fail[..n]` for the
/// stages. Out of line: its arrays are only set up for bursts the other loops left.
#[inline(never)]
pub(crate) fn burst<P: PacketBuf>(
    fib: &Fib,
    mac: MacKey,
    pkts: &mut [P],
    verdicts: &mut [Verdict],
    which: &[u8],
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) {
    let mut dsts = [0u32; CHUNK];
    let mut idx4 = [0u8; CHUNK];
    let mut ttl4 = [0u8; CHUNK];
    let mut idx6 = [0u8; CHUNK];
    let mut ttl6 = [0u8; CHUNK];
    let (mut q4, mut q6) = (0, 0);
    for &i in which {
        match input(fib, mac, pkts[i as usize].data()) {
            Some(Exposed::Ipv4 { dst, ttl }) => {
                dsts[q4] = dst;
                idx4[q4] = i;
                ttl4[q4] = ttl;
                q4 += 1;
            }
            Some(Exposed::Ipv6 { hop }) => {
                idx6[q6] = i;
                ttl6[q6] = hop;
                q6 += 1;
            }
            None => {
                fail[*n] = i;
                *n += 1;
            }
        }
    }
    if q4 > 0 {
        let mut routes = [NO_ROUTE; CHUNK];
        fib.lookup_ipv4_batch(&dsts[..q4], &mut routes[..q4]);
        for k in 0..q4 {
            let i = idx4[k];
            match forward(fib, &mut pkts[i as usize], routes[k], Family::Ipv4, ttl4[k]) {
                Some(v) => verdicts[i as usize] = v,
                None => {
                    fail[*n] = i;
                    *n += 1;
                }
            }
        }
    }
    if q6 > 0 {
        burst6(fib, pkts, verdicts, &idx6[..q6], &ttl6[..q6], fail, n);
    }
}

/// The IPv6 half of [`burst`]: the batched lookup of the exposed destinations, then the
/// forward. Out of line, so that IPv4 egress pays nothing for its 16-byte keys.
#[inline(never)]
fn burst6<P: PacketBuf>(
    fib: &Fib,
    pkts: &mut [P],
    verdicts: &mut [Verdict],
    idx: &[u8],
    hops: &[u8],
    fail: &mut [u8; CHUNK],
    n: &mut usize,
) {
    let mut dsts = [0u128; CHUNK];
    for (d, &i) in dsts.iter_mut().zip(idx) {
        // The destination ends the fixed header ([`input`] checked its length).
        let hdr = pkts[i as usize].data().first_chunk::<{ IP + IPV6_LEN }>();
        if let Some((_, dst)) = hdr.and_then(|h| h.split_last_chunk::<16>()) {
            *d = u128::from_be_bytes(*dst);
        }
    }
    let mut routes = [NO_ROUTE; CHUNK];
    fib.lookup_ipv6_batch(&dsts[..idx.len()], &mut routes[..idx.len()]);
    for ((&i, &hop), &route) in idx.iter().zip(hops).zip(&routes) {
        match forward(fib, &mut pkts[i as usize], route, Family::Ipv6, hop) {
            Some(v) => verdicts[i as usize] = v,
            None => {
                fail[*n] = i;
                *n += 1;
            }
        }
    }
}

/// What [`input`] found below the label: the destination to look up (IPv6 reads it from
/// the packet again) and the TTL or hop limit to emit (above 0).
enum Exposed {
    Ipv4 { dst: u32, ttl: u8 },
    Ipv6 { hop: u8 },
}

/// The exposed datagram of a frame this path may forward once its route is known (see
/// the module docs); `None` leaves it to the stages.
#[inline(always)]
fn input(fib: &Fib, mac: MacKey, data: &[u8]) -> Option<Exposed> {
    // Ethernet, the label and the shorter (IPv4) fixed header: one length check.
    let frame: &[u8; IP + IPV4_LEN] = data.first_chunk()?;
    let (top, ip) = frame.split_first_chunk::<IP>()?;
    let ip: &[u8; IPV4_LEN] = ip.try_into().ok()?;
    if be16(top, eth::ETHERTYPE.start) != ETHERTYPE_MPLS || !mac.matches(top.first_chunk()?) {
        return None;
    }
    let lse = be32(top, HEADER_LEN);
    let (label, label_ttl) = (lse >> 12, lse as u8);
    if lse & BOS == 0 || label_ttl <= 1 {
        return None;
    }
    // The family an explicit null names (else the first nibble decides), the TTL mode.
    let (family, mode) = match label {
        LABEL_IPV4_EXPLICIT_NULL => (4, TtlMode::Uniform),
        LABEL_IPV6_EXPLICIT_NULL => (6, TtlMode::Uniform),
        l if is_reserved(l) => return None,
        l => {
            let e = fib.lookup_label(l)?;
            if e.op != LabelOp::PopAndLookup {
                return None;
            }
            (0, e.ttl_mode)
        }
    };
    let version = ip[0] >> 4;
    if family != 0 && family != version {
        return None;
    }
    let out = |ttl: u8| mode.popped_ttl(ttl, label_ttl - 1);
    let room = data.len() - IP;
    if version == 4 {
        // A sound header without options; no own-source check below a label.
        let (src, dst) = (ip4::SRC_ADDR.start, ip4::DST_ADDR.start);
        let total = be16(ip, ip4::LENGTH.start) as usize;
        let ttl = out(ip[ip4::TTL]);
        if ip[ip4::VER_IHL] != VER_IHL_NO_OPTIONS
            || total < IPV4_LEN
            || total > room
            || !checksum::ipv4_header_verifies(ip)
            || SPECIAL_FIRST_OCTET[ip[src] as usize] | SPECIAL_FIRST_OCTET[ip[dst] as usize]
            || ttl == 0
        {
            return None;
        }
        return Some(Exposed::Ipv4 {
            dst: be32(ip, dst),
            ttl,
        });
    }
    let frame: &[u8; IP + IPV6_LEN] = data.first_chunk()?;
    let (_, hdr) = frame.split_last_chunk::<IPV6_LEN>()?;
    let hop = out(hdr[ip6::HOP_LIMIT]);
    let len = IPV6_LEN + be16(hdr, ip6::PAYLOAD_LEN) as usize;
    if version != 6
        || len > room
        || special(hdr[ip6::SRC.start]) | special(hdr[ip6::DST.start])
        || hop == 0
    {
        return None;
    }
    Some(Exposed::Ipv6 { hop })
}

/// Pops the label of a packet [`input`] accepted and forwards its datagram (of `family`,
/// to emit with TTL or hop limit `out`) when `route` leads to a resolved adjacency that
/// carries the family (or pushes labels) and the datagram fits its MTU and headroom, as
/// the stages' rewrite would; `None` (untouched) otherwise.
#[inline(always)]
fn forward<P: PacketBuf>(
    fib: &Fib,
    pkt: &mut P,
    route: RouteId,
    family: Family,
    out: u8,
) -> Option<Verdict> {
    // No entry for `NO_ROUTE`.
    let direct = match family {
        Family::Ipv4 => fib.direct(route)?,
        Family::Ipv6 => fib.direct6(route)?,
    };
    let data = pkt.data();
    let ip: &[u8; IP + 8] = data.first_chunk()?;
    let (end, tc) = match family {
        Family::Ipv4 => (
            IP + be16(ip, IP + ip4::LENGTH.start) as usize,
            ip[IP + ip4::DSCP_ECN] >> 5,
        ),
        Family::Ipv6 => (
            IP + IPV6_LEN + be16(ip, IP + ip6::PAYLOAD_LEN) as usize,
            (ip[IP] >> 1) & 7,
        ),
    };
    // A route to one adjacency carrying the family without labels, from the route's
    // copy of its fields: resolved and within the MTU in one compare.
    if end - IP < direct.limit as usize && direct.push == 0 {
        let pad = data.len() - end;
        let d = pkt.shrink(LSE, pad);
        if let Some((eth, ip)) = d.split_first_chunk_mut::<HEADER_LEN>() {
            eth.copy_from_slice(&direct.eth);
            set_out(ip, family, out);
        }
        return Some(Verdict::Forward { port: direct.port });
    }
    // Every other route: decoded from the route and its adjacency.
    let route = fib.route(route);
    let RouteTarget::NextHop(nh) = route.target else {
        return None;
    };
    let adj = adjacency(fib, nh, data, IP, end);
    let push = adj.push_bytes();
    if (push == 0 && adj.payload != family)
        || end - IP >= adj.limit()
        || (push > LSE && pkt.headroom() < push - LSE)
    {
        return None;
    }
    let pad = data.len() - end;
    let d = if push == 0 {
        pkt.shrink(LSE, pad)
    } else {
        if pad > 0 {
            let _ = pkt.trim(pad);
        }
        if push > LSE {
            let _ = pkt.prepend(push - LSE);
        }
        pkt.data_mut()
    };
    let (hdr, ip) = d.split_at_mut(HEADER_LEN + push);
    let (eth, lses) = hdr.split_at_mut(HEADER_LEN);
    let (template_eth, template_lses) = adj.header_template().split_at(HEADER_LEN);
    eth.copy_from_slice(template_eth);
    if push > 0 {
        let outer = route.ttl_mode.pushed_ttl(out);
        super::fast::write_stack(lses, template_lses, tc, outer);
    }
    set_out(ip, family, out);
    Some(Verdict::Forward { port: adj.port })
}

/// Gives the datagram starting `ip` (of `family`) the TTL or hop limit `out`. A datagram
/// of its family's fixed header or more is there ([`input`] checked it).
#[inline(always)]
fn set_out(ip: &mut [u8], family: Family, out: u8) {
    match family {
        Family::Ipv4 => {
            if let Some(ip) = ip.first_chunk_mut::<IPV4_LEN>() {
                set_ttl(ip, out);
            }
        }
        Family::Ipv6 => {
            if let Some(hop) = ip.get_mut(ip6::HOP_LIMIT) {
                *hop = out;
            }
        }
    }
}
