//! The builders: find the IPv4 datagram in the received frame, decide whether an error may
//! be sent about it, and write the reply frame.

use super::{IcmpConfig, IcmpError, MplsReply, Reply, SendVia};
use crate::fib::{Fib, RouteTarget};
use crate::wire::ethernet::{EthernetFrame, ETHERTYPE_IPV4, ETHERTYPE_MPLS, HEADER_LEN as ETH_LEN};
use crate::wire::icmp::{
    Icmpv4Packet, Icmpv4Repr, CODE_FRAG_NEEDED, CODE_TTL_EXCEEDED, ORIGINAL_LEN_WITH_EXTENSION,
    TYPE_ECHO_REQUEST,
};
use crate::wire::ipv4::{Ipv4Packet, Ipv4Repr, PROTO_ICMP};
use crate::wire::mpls::{LabelStack, DEFAULT_MAX_DEPTH, ENTRY_LEN};

/// Most of the offending datagram quoted without an extension (RFC 1812 §4.3.2.3: the
/// whole error within 576 bytes).
const MAX_QUOTE: usize = 576 - 20 - 8;

/// Largest frame an error builder writes (with a stack of the default depth).
pub const MAX_ERROR_FRAME: usize =
    ETH_LEN + 2 * ENTRY_LEN * DEFAULT_MAX_DEPTH + 20 + 8 + MAX_QUOTE + 8;

/// The parts of a received frame a reply needs.
struct Received<'a> {
    eth_dst: [u8; 6],
    stack: Option<LabelStack<'a>>,
    /// The IPv4 datagram, `total_len` bytes (padding excluded).
    ip: Ipv4Packet<&'a [u8]>,
}

/// The destination MAC, the label stack (if labelled) and what follows it (or the
/// Ethernet header) of a frame whose ethertype is `ip_ethertype` or MPLS.
pub(super) type L2Parts<'a> = ([u8; 6], Option<LabelStack<'a>>, &'a [u8]);

pub(super) fn split_l2(frame: &[u8], max_depth: usize, ip_ethertype: u16) -> Option<L2Parts<'_>> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    let l3 = &frame[eth.header_len()..];
    match eth.ethertype() {
        et if et == ip_ethertype => Some((eth.dst_addr(), None, l3)),
        ETHERTYPE_MPLS => {
            let s = LabelStack::new_checked(l3, max_depth).ok()?;
            Some((eth.dst_addr(), Some(s), &l3[s.len()..]))
        }
        _ => None,
    }
}

fn locate(frame: &[u8], max_depth: usize) -> Result<Received<'_>, IcmpError> {
    let (eth_dst, stack, ip) =
        split_l2(frame, max_depth, ETHERTYPE_IPV4).ok_or(IcmpError::NotIpv4)?;
    let ip = Ipv4Packet::new_checked(ip).map_err(|_| IcmpError::NotIpv4)?;
    let tl = ip.total_len() as usize;
    let ip = Ipv4Packet::new_unchecked(&ip.into_inner()[..tl]);
    Ok(Received { eth_dst, stack, ip })
}

/// RFC 1812 §4.3.2.7: no error about errors, broadcasts, multicasts, later fragments, or
/// packets whose source is not a unique host.
fn check_may_send_error(r: &Received) -> Result<(), IcmpError> {
    let ip = &r.ip;
    if r.eth_dst[0] & 1 != 0 {
        return Err(IcmpError::Suppressed("link-layer broadcast or multicast"));
    }
    let (s, d) = (ip.src_addr(), ip.dst_addr());
    if d[0] >= 224 {
        return Err(IcmpError::Suppressed("multicast or broadcast destination"));
    }
    if s[0] == 0 || s[0] == 127 || s[0] >= 224 {
        return Err(IcmpError::Suppressed("source is not a unique host"));
    }
    if ip.frag_offset() != 0 {
        return Err(IcmpError::Suppressed("not the first fragment"));
    }
    if ip.protocol() == PROTO_ICMP {
        if let Ok(icmp) = Icmpv4Packet::new_checked(ip.payload()) {
            if icmp.is_error() {
                return Err(IcmpError::Suppressed("the packet is an ICMP error"));
            }
        }
    }
    Ok(())
}

fn source(fib: &Fib, in_port: u16) -> Result<[u8; 4], IcmpError> {
    fib.port_address(in_port)
        .ok_or(IcmpError::NoSourceAddress(in_port))
}

fn has_route(fib: &Fib, dst: [u8; 4]) -> bool {
    usable(fib, fib.lookup_ipv4(u32::from_be_bytes(dst)))
}

/// Writes placeholder Ethernet, optional label stack (TTL 255), IPv4 and ICMP.
fn write_frame(
    cfg: &IcmpConfig,
    stack: Option<&LabelStack>,
    src: [u8; 4],
    dst: [u8; 4],
    icmp: &Icmpv4Repr,
    out: &mut [u8],
) -> Result<usize, IcmpError> {
    let labels = stack.map_or(0, |s| s.len());
    let ip = Ipv4Repr {
        src,
        dst,
        protocol: PROTO_ICMP,
        ttl: cfg.ttl,
        tos: 0xc0, // precedence 6 (internetwork control), as for other router-originated traffic
        ident: 0,
        dont_frag: false,
        payload_len: icmp.buffer_len(),
    };
    let need = ETH_LEN + labels + 20 + icmp.buffer_len();
    if out.len() < need {
        return Err(IcmpError::BufferTooSmall {
            need,
            have: out.len(),
        });
    }
    let out = &mut out[..need];
    let l3 = write_l2(out, stack, ETHERTYPE_IPV4);
    ip.emit(&mut out[l3..])
        .and_then(|_| icmp.emit(&mut out[l3 + 20..]))
        .map_err(|_| IcmpError::BufferTooSmall { need, have: need })?;
    Ok(need)
}

/// Writes the placeholder Ethernet header (zero MACs) and, if there is one, the received
/// label stack with TTL 255 at the start of `out` (sized by the caller); returns the
/// offset of the IP header. `ethertype` is the IP family's, used when there is no stack.
pub(super) fn write_l2(out: &mut [u8], stack: Option<&LabelStack>, ethertype: u16) -> usize {
    out[..12].fill(0);
    let et = if stack.is_some() {
        ETHERTYPE_MPLS
    } else {
        ethertype
    };
    out[12..14].copy_from_slice(&et.to_be_bytes());
    let mut at = ETH_LEN;
    for e in stack.iter().flat_map(|s| s.iter()) {
        // Cannot fail: the caller sized `out` for the stack.
        let _ = e.with_ttl(255).write(&mut out[at..]);
        at += ENTRY_LEN;
    }
    at
}

/// How an error about a packet travels: routed when it was not labelled (or when
/// [`MplsReply::Direct`] and `routed_back` says this router has a route to its source),
/// else along the LSP.
pub(super) fn error_via(
    labelled: bool,
    mode: MplsReply,
    routed_back: impl FnOnce() -> bool,
) -> SendVia {
    match (labelled, mode) {
        (false, _) => SendVia::Route,
        (true, MplsReply::Direct) if routed_back() => SendVia::Route,
        (true, _) => SendVia::LabelSwitch,
    }
}

/// Whether the route `id` leads somewhere (a blackhole does not).
pub(super) fn usable(fib: &Fib, id: Option<crate::fib::RouteId>) -> bool {
    id.is_some_and(|id| !matches!(fib.route(id).target, RouteTarget::Blackhole))
}

fn error_reply(
    cfg: &IcmpConfig,
    fib: &Fib,
    in_port: u16,
    received: &[u8],
    out: &mut [u8],
    make: impl for<'a> FnOnce(&'a [u8], Option<&'a [u8]>) -> Icmpv4Repr<'a>,
) -> Result<Reply, IcmpError> {
    let r = locate(received, cfg.max_label_depth)?;
    check_may_send_error(&r)?;
    let src = source(fib, in_port)?;
    let dst = r.ip.src_addr();
    let datagram = r.ip.into_inner();
    // RFC 4950 object: the stack as received.
    let mut stack_bytes = [0u8; ENTRY_LEN * 64];
    let (quote_len, stack_obj) = match &r.stack {
        Some(s) => {
            let n = s.len().min(stack_bytes.len());
            stack_bytes[..n].copy_from_slice(&s.as_bytes()[..n]);
            (ORIGINAL_LEN_WITH_EXTENSION, Some(&stack_bytes[..n]))
        }
        None => (MAX_QUOTE, None),
    };
    let quote = &datagram[..datagram.len().min(quote_len)];
    let via = error_via(r.stack.is_some(), cfg.mpls_reply, || has_route(fib, dst));
    let icmp = make(quote, stack_obj);
    let stack = (via == SendVia::LabelSwitch).then_some(r.stack).flatten();
    let len = write_frame(cfg, stack.as_ref(), src, dst, &icmp, out)?;
    Ok(Reply { len, via })
}

/// Time exceeded (TTL exceeded in transit) about `received`, the frame as punted with
/// `PuntReason::TtlExpired` (Ethernet header first, IPv4 or labelled IPv4).
pub fn time_exceeded(
    cfg: &IcmpConfig,
    fib: &Fib,
    in_port: u16,
    received: &[u8],
    out: &mut [u8],
) -> Result<Reply, IcmpError> {
    error_reply(cfg, fib, in_port, received, out, |original, mpls| {
        Icmpv4Repr::TimeExceeded {
            code: CODE_TTL_EXCEEDED,
            original,
            mpls,
        }
    })
}

/// Destination unreachable, fragmentation needed, with `mtu` as next-hop MTU (from
/// `PuntReason::FragNeeded`, which already accounts for the label bytes).
pub fn frag_needed(
    cfg: &IcmpConfig,
    fib: &Fib,
    in_port: u16,
    received: &[u8],
    mtu: u16,
    out: &mut [u8],
) -> Result<Reply, IcmpError> {
    error_reply(cfg, fib, in_port, received, out, |original, mpls| {
        Icmpv4Repr::DstUnreachable {
            code: CODE_FRAG_NEEDED,
            next_hop_mtu: mtu,
            original,
            mpls,
        }
    })
}

/// Echo reply to an echo request for one of the router's addresses (punted as
/// `LocalDelivery`, possibly below labels). The reply's source is the address that was
/// pinged (RFC 1122 §3.2.2.6); it is routed, never label-switched back.
pub fn echo_reply(cfg: &IcmpConfig, received: &[u8], out: &mut [u8]) -> Result<Reply, IcmpError> {
    let r = locate(received, cfg.max_label_depth)?;
    if r.ip.protocol() != PROTO_ICMP || r.ip.is_fragment() {
        return Err(IcmpError::NotEchoRequest);
    }
    let icmp = Icmpv4Packet::new_checked(r.ip.payload()).map_err(|_| IcmpError::NotEchoRequest)?;
    if icmp.msg_type() != TYPE_ECHO_REQUEST || !icmp.verify_checksum() {
        return Err(IcmpError::NotEchoRequest);
    }
    let reply = Icmpv4Repr::EchoReply {
        ident: icmp.echo_ident(),
        seq: icmp.echo_seq(),
        data: icmp.data(),
    };
    let len = write_frame(cfg, None, r.ip.dst_addr(), r.ip.src_addr(), &reply, out)?;
    Ok(Reply {
        len,
        via: SendVia::Route,
    })
}
