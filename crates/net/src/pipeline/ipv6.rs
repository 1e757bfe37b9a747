//! Stage 3 for IPv6 (and its half of stage 1): RFC 8200 / RFC 4291 input checks, NDP
//! and control multicast for the slow path, and route targets.
//!
//! Never forwards link-local sources or destinations, multicast, the unspecified or
//! loopback address; never fragments (too big: packet too big from the slow path).

use super::local::LocalAddrs;
use super::{DropReason, Fix, Next, PuntReason, Verdict, Work};
use crate::fib::{Fib, RouteId, NO_ROUTE};
use crate::wire::ipv6::{
    field, is_link_local, is_loopback, is_multicast, is_unspecified, HEADER_LEN, NH_ICMPV6,
};
use crate::wire::{be16, ipv6_ext, WireError};

/// NDP's ICMPv6 types: router solicitation .. redirect (RFC 4861 §4).
const NDP_TYPES: core::ops::RangeInclusive<u8> = 133..=137;
/// The hop limit NDP messages must carry (RFC 4861 §6.1.1, §7.1.1).
const NDP_HOP_LIMIT: u8 = 255;

/// Where a packet comes from, for the input checks.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Plain IPv6 received on `port`; the router's addresses are `local`.
    Port { local: &'a LocalAddrs, port: u16 },
    /// Exposed by a label pop: the LSP's ingress decided it may travel, only what can
    /// never be forwarded is refused.
    Label,
    /// Originated by the router (the slow path): routed as is.
    Router,
}

/// The fixed header at `off`, its version and length checked: `Ok(end of the datagram)`
/// (Ethernet padding after it is not part of it).
#[inline]
pub(crate) fn header(data: &[u8], off: usize) -> Result<usize, Verdict> {
    let b = data.get(off..).unwrap_or(&[]);
    if b.len() < HEADER_LEN {
        return Err(Verdict::Drop(DropReason::Truncated));
    }
    if b[0] >> 4 != 6 {
        return Err(Verdict::Drop(DropReason::BadIpv6Header));
    }
    let len = HEADER_LEN + be16(b, field::PAYLOAD_LEN) as usize;
    if len > b.len() {
        return Err(Verdict::Drop(DropReason::Truncated));
    }
    Ok(off + len)
}

/// The destination of the header at `ip` (a big-endian value, as the table keys it).
#[inline]
pub(crate) fn dst(data: &[u8], ip: usize) -> u128 {
    u128::from_be_bytes(addr(data, ip + field::DST.start))
}

fn addr(data: &[u8], at: usize) -> [u8; 16] {
    data[at..at + 16].try_into().expect("a checked header")
}

/// Checks the IPv6 header at `w.stack_end` and queues the packet for the lookup, or
/// settles it. Sets `w.ip`, `w.end`, `w.keep`, and `w.out_ttl` to the hop limit to emit
/// (decremented unless the router originated the packet; from a label pop: `label_ttl`
/// for uniform mode, as for IPv4).
pub(crate) fn input(data: &[u8], w: &mut Work, from: Source, out_hop: impl Fn(u8) -> u8) {
    let off = w.stack_end;
    let end = match header(data, off) {
        Ok(end) => end,
        Err(v) => return w.done(v),
    };
    if let Err(v) = check(data, off, end, from) {
        return w.done(v);
    }
    w.ip = Some(off);
    w.end = end;
    w.keep = off;
    w.out_ttl = out_hop(data[off + field::HOP_LIMIT]);
    w.next = Next::Ipv6;
}

/// The address rules; `Err` settles the packet (punted or dropped).
fn check(data: &[u8], off: usize, end: usize, from: Source) -> Result<(), Verdict> {
    let drop = |r| Err(Verdict::Drop(r));
    let (src, dst) = (
        addr(data, off + field::SRC.start),
        addr(data, off + field::DST.start),
    );
    if let Source::Router = from {
        // No port to send it from: the slow path sends link-scope traffic itself.
        return match () {
            _ if is_multicast(&dst) => drop(DropReason::Multicast),
            _ if is_link_local(&dst) => drop(DropReason::LinkLocalScope),
            _ => Ok(()),
        };
    }
    if is_multicast(&src) || is_loopback(&src) || is_loopback(&dst) || is_unspecified(&dst) {
        return drop(DropReason::MartianAddress);
    }
    let Source::Port { local, port } = from else {
        // Below labels: never to the slow path's link-scope handling.
        return match () {
            _ if is_multicast(&dst) => drop(DropReason::Multicast),
            _ if is_unspecified(&src) => drop(DropReason::MartianAddress),
            _ if is_link_local(&src) || is_link_local(&dst) => drop(DropReason::LinkLocalScope),
            _ => Ok(()),
        };
    };
    if is_multicast(&dst) {
        // The unspecified source is allowed here: duplicate address detection (RFC 4862)
        // and MLD reports use it.
        return Err(multicast(data, off, end, &dst)?);
    }
    if is_unspecified(&src) {
        return drop(DropReason::MartianAddress);
    }
    let (s, d) = (u128::from_be_bytes(src), u128::from_be_bytes(dst));
    if local.is_own6(s) {
        return drop(DropReason::OwnSource);
    }
    if is_link_local(&dst) {
        return match local.is_port_link_local(port, d) {
            true if is_ndp(data, off, end)? => Err(Verdict::SlowPath(PuntReason::Ndp)),
            true => Err(Verdict::SlowPath(PuntReason::LocalDelivery)),
            false => drop(DropReason::LinkLocalScope),
        };
    }
    if local.is_own6(d) && is_ndp(data, off, end)? {
        return Err(Verdict::SlowPath(PuntReason::Ndp));
    }
    if is_link_local(&src) {
        // To one of the router's addresses, else it would leave its link.
        return match local.is_own6(d) {
            true => Err(Verdict::SlowPath(PuntReason::LocalDelivery)),
            false => drop(DropReason::LinkLocalScope),
        };
    }
    Ok(())
}

/// What becomes of a packet to a multicast group: NDP and the other ff02:: (link-local
/// scope) groups are the slow path's, the rest is dropped (no multicast forwarding).
fn multicast(data: &[u8], off: usize, end: usize, dst: &[u8; 16]) -> Result<Verdict, Verdict> {
    Ok(if is_ndp(data, off, end)? {
        Verdict::SlowPath(PuntReason::Ndp)
    } else if is_control_multicast(dst) {
        Verdict::SlowPath(PuntReason::LinkLocalMulticast)
    } else {
        Verdict::Drop(DropReason::Multicast)
    })
}

/// ff02::/16: all-nodes, all-routers, solicited-node, OSPFv3, MLDv2, ... (RFC 4291
/// §2.7): control traffic for the port's control interface. The one place that decides
/// it for IPv6.
#[inline]
pub(crate) fn is_control_multicast(dst: &[u8]) -> bool {
    dst.starts_with(&[0xff, 0x02])
}

/// Whether the datagram at `off..end` is an NDP message (ICMPv6 133..=137 with hop
/// limit 255), found by the bounded walk of its extension headers. A chain the walk
/// refuses is dropped.
fn is_ndp(data: &[u8], off: usize, end: usize) -> Result<bool, Verdict> {
    let payload = &data[off + HEADER_LEN..end];
    let upper = match ipv6_ext::walk(data[off + field::NEXT_HEADER], payload) {
        Ok(u) => u,
        Err(WireError::Truncated) => return Err(Verdict::Drop(DropReason::Truncated)),
        Err(_) => return Err(Verdict::Drop(DropReason::BadIpv6Header)),
    };
    Ok(upper.protocol == NH_ICMPV6
        && upper.has_header()
        && data[off + field::HOP_LIMIT] == NDP_HOP_LIMIT
        && payload
            .get(upper.offset)
            .is_some_and(|t| NDP_TYPES.contains(t)))
}

/// Applies the route found for a packet queued by [`input`]. No route: ICMPv6
/// destination unreachable from the slow path (RFC 4443 §3.1), except for the router's
/// own packets.
#[inline]
pub(crate) fn route(
    fib: &Fib,
    in_port: u16,
    data: &[u8],
    w: &mut Work,
    id: RouteId,
    originate: bool,
) {
    if id == NO_ROUTE {
        return w.done(match originate {
            true => Verdict::Drop(DropReason::NoRoute),
            false => Verdict::SlowPath(PuntReason::Unreachable { in_port }),
        });
    }
    // TC from the traffic class's class selector bits (the DSCP's top three).
    let ip = w.keep;
    let tc = || traffic_class(data, ip) >> 5;
    super::apply_route(w, fib, id, in_port, originate, tc, Fix::Ipv6Hop);
}

/// The traffic class of the header at `ip`.
fn traffic_class(data: &[u8], ip: usize) -> u8 {
    (be16(data, ip) >> 4) as u8
}

/// The hop limit field's offset in the header (for the rewrite).
pub(crate) const HOP_LIMIT: usize = field::HOP_LIMIT;
