//! The ICMPv6 builders (RFC 4443): find the IPv6 packet in the received frame (below any
//! labels), decide whether an error may be sent about it (§2.4 (e)), and write the reply
//! frame. Same shape as the IPv4 builders ([`super::build`]), whose Ethernet and label
//! stack writer and reply routing they share, as they share the RFC 4884/4950 extension
//! of [`crate::wire::icmp_ext`] through [`Icmpv6Repr`].
//!
//! An error quotes as much of the offending packet as fits in the IPv6 minimum MTU
//! (§2.4 (c)); its source is the ingress port's global address, else its link-local one.
//! A reply to a link-local address cannot be routed (the address alone does not say
//! which port), so it is written complete, from the ingress port's link-local address
//! and MAC to the requester's MAC, and sent straight back out of that port
//! ([`SendVia::Direct`]).

use super::build::{error_via, split_l2, usable, write_l2};
use super::{IcmpConfig, IcmpError, Reply, SendVia};
use crate::fib::Fib;
use crate::pipeline::LocalAddrs;
use crate::wire::ethernet::{ETHERTYPE_IPV6, HEADER_LEN as ETH_LEN};
use crate::wire::icmp_ext::extension_len;
use crate::wire::icmpv6::{
    Icmpv6Packet, Icmpv6Repr, CODE_HOP_LIMIT_EXCEEDED, CODE_NO_ROUTE, HEADER_LEN as ICMP_LEN,
    MAX_ERROR_LEN, TYPE_ECHO_REQUEST,
};
use crate::wire::ipv6::{self, Ipv6Packet, Ipv6Repr, HEADER_LEN as IP6_LEN, NH_ICMPV6};
use crate::wire::ipv6_ext;
use crate::wire::mpls::{LabelStack, DEFAULT_MAX_DEPTH, ENTRY_LEN};

/// ICMPv6 redirect: no error is sent about one either (RFC 4443 §2.4 (e.2)).
const TYPE_REDIRECT: u8 = 137;

/// The IPv6 minimum MTU (RFC 8200 §5), which bounds an error message.
pub const MIN_MTU6: usize = 1280;

/// Largest frame an ICMPv6 error builder writes (with a stack of the default depth).
pub const MAX_ERROR_FRAME6: usize = ETH_LEN + ENTRY_LEN * DEFAULT_MAX_DEPTH + MIN_MTU6;

/// The parts of a received frame a reply needs.
struct Received<'a> {
    eth_dst: [u8; 6],
    stack: Option<LabelStack<'a>>,
    /// The IPv6 packet, header and `payload_len` bytes (padding excluded).
    ip: Ipv6Packet<&'a [u8]>,
}

fn locate(frame: &[u8], max_depth: usize) -> Result<Received<'_>, IcmpError> {
    let (eth_dst, stack, ip) =
        split_l2(frame, max_depth, ETHERTYPE_IPV6).ok_or(IcmpError::NotIpv6)?;
    let ip = Ipv6Packet::new_checked(ip).map_err(|_| IcmpError::NotIpv6)?;
    let end = IP6_LEN + ip.payload_len() as usize;
    let ip = Ipv6Packet::new_unchecked(&ip.into_inner()[..end]);
    Ok(Received { eth_dst, stack, ip })
}

/// The ICMPv6 message a packet carries (after its extension headers), if it starts in
/// this packet.
fn icmpv6_of<'a>(ip: &Ipv6Packet<&'a [u8]>) -> Option<Icmpv6Packet<&'a [u8]>> {
    let payload: &'a [u8] = &ip.clone().into_inner()[IP6_LEN..];
    let ul = ipv6_ext::walk(ip.next_header(), payload).ok()?;
    if ul.protocol != NH_ICMPV6 || !ul.has_header() {
        return None;
    }
    Icmpv6Packet::new_checked(payload.get(ul.offset..)?).ok()
}

/// RFC 4443 §2.4 (e): no error about an ICMPv6 error or a redirect, a packet sent to a
/// multicast address (or as link-layer multicast or broadcast), or a packet whose source
/// is not a unique host (unspecified, multicast, loopback).
fn check_may_send_error(r: &Received) -> Result<(), IcmpError> {
    if r.eth_dst[0] & 1 != 0 {
        return Err(IcmpError::Suppressed("link-layer broadcast or multicast"));
    }
    let (s, d) = (r.ip.src_addr(), r.ip.dst_addr());
    if ipv6::is_multicast(&d) {
        return Err(IcmpError::Suppressed("multicast destination"));
    }
    if ipv6::is_unspecified(&s) || ipv6::is_multicast(&s) || ipv6::is_loopback(&s) {
        return Err(IcmpError::Suppressed("source is not a unique host"));
    }
    if let Some(icmp) = icmpv6_of(&r.ip) {
        if icmp.is_error() || icmp.msg_type() == TYPE_REDIRECT {
            return Err(IcmpError::Suppressed(
                "the packet is an ICMPv6 error or redirect",
            ));
        }
    }
    Ok(())
}

/// The source of an error sent about a packet received on `in_port`: the port's global
/// address (`Fib::port_address6` gives it first), else its link-local one (configured,
/// or EUI-64 from its MAC: `LocalAddrs::link_local`). `local` is the router's addresses
/// as the pipeline sees them (the table's, `Fib::local`, else the pipeline's own).
pub fn source6(fib: &Fib, local: &LocalAddrs, in_port: u16) -> Result<[u8; 16], IcmpError> {
    fib.port_address6(in_port)
        .or_else(|| local.link_local(in_port))
        .ok_or(IcmpError::NoSourceAddress(in_port))
}

/// The addresses of a reply sent straight back out of the ingress port.
struct Direct {
    src: [u8; 16],
    eth_src: [u8; 6],
    eth_dst: [u8; 6],
}

/// How a reply to `dst` about `r` (received as `received` on `in_port`) is addressed
/// when `dst` is link-local and `r` was not labelled: from the port's link-local address
/// and MAC to the MAC the request came from. `None` when the reply is routed.
fn direct(
    local: &LocalAddrs,
    in_port: u16,
    received: &[u8],
    r: &Received,
    dst: &[u8; 16],
) -> Result<Option<Direct>, IcmpError> {
    if !ipv6::is_link_local(dst) || r.stack.is_some() {
        return Ok(None);
    }
    let (Some(src), Some(eth_src)) = (local.link_local(in_port), local.port_mac(in_port)) else {
        return Err(IcmpError::NoSourceAddress(in_port));
    };
    let mut eth_dst = [0u8; 6];
    eth_dst.copy_from_slice(&received[6..12]); // `locate` checked the Ethernet header
    Ok(Some(Direct {
        src,
        eth_src,
        eth_dst,
    }))
}

/// Fills in the Ethernet addresses of a frame sent [`SendVia::Direct`].
fn address_direct(d: &Direct, out: &mut [u8]) {
    out[..6].copy_from_slice(&d.eth_dst);
    out[6..12].copy_from_slice(&d.eth_src);
}

/// Writes placeholder Ethernet, optional label stack (TTL 255), IPv6 and ICMPv6.
fn write_frame(
    cfg: &IcmpConfig,
    stack: Option<&LabelStack>,
    src: [u8; 16],
    dst: [u8; 16],
    icmp: &Icmpv6Repr,
    out: &mut [u8],
) -> Result<usize, IcmpError> {
    let labels = stack.map_or(0, |s| s.len());
    let ip = Ipv6Repr {
        src,
        dst,
        next_header: NH_ICMPV6,
        hop_limit: cfg.ttl,
        traffic_class: 0xc0, // class selector 6, as for other router-originated traffic
        flow_label: 0,
        payload_len: icmp.buffer_len(),
    };
    let need = ETH_LEN + labels + IP6_LEN + icmp.buffer_len();
    if out.len() < need {
        return Err(IcmpError::BufferTooSmall {
            need,
            have: out.len(),
        });
    }
    let out = &mut out[..need];
    let l3 = write_l2(out, stack, ETHERTYPE_IPV6);
    ip.emit(&mut out[l3..])
        .and_then(|_| icmp.emit(&src, &dst, &mut out[l3 + IP6_LEN..]))
        .map_err(|_| IcmpError::BufferTooSmall { need, have: need })?;
    Ok(need)
}

/// Bytes of the offending packet an error quotes: all that fits in the minimum MTU
/// beside the extension (a multiple of 8 bytes when one follows, RFC 4884).
fn quote_len(datagram: usize, stack: Option<&[u8]>) -> usize {
    let room = MAX_ERROR_LEN - ICMP_LEN;
    match stack {
        None => datagram.min(room),
        Some(s) => datagram.min((room - extension_len(s)) & !7),
    }
}

fn error_reply(
    cfg: &IcmpConfig,
    fib: &Fib,
    local: &LocalAddrs,
    in_port: u16,
    received: &[u8],
    out: &mut [u8],
    make: impl for<'a> FnOnce(&'a [u8], Option<&'a [u8]>) -> Icmpv6Repr<'a>,
) -> Result<Reply, IcmpError> {
    let r = locate(received, cfg.max_label_depth)?;
    check_may_send_error(&r)?;
    let dst = r.ip.src_addr();
    let direct = direct(local, in_port, received, &r, &dst)?;
    let src = match &direct {
        Some(d) => d.src,
        None => source6(fib, local, in_port)?,
    };
    let datagram = r.ip.into_inner();
    // RFC 4950 object: the stack as received (as deep as the minimum MTU allows).
    let stack_obj = r.stack.map(|s| {
        let b = s.as_bytes();
        &b[..b.len().min(ENTRY_LEN * 64)]
    });
    let quote = &datagram[..quote_len(datagram.len(), stack_obj)];
    let via = match direct {
        Some(_) => SendVia::Direct,
        None => error_via(r.stack.is_some(), cfg.mpls_reply, || {
            usable(fib, fib.lookup_ipv6(u128::from_be_bytes(dst)))
        }),
    };
    let icmp = make(quote, stack_obj);
    let stack = (via == SendVia::LabelSwitch).then_some(r.stack).flatten();
    let len = write_frame(cfg, stack.as_ref(), src, dst, &icmp, out)?;
    if let Some(d) = &direct {
        address_direct(d, out);
    }
    Ok(Reply { len, via })
}

/// Time exceeded (hop limit exceeded in transit) about `received`, the frame as punted
/// with `PuntReason::TtlExpired` (IPv6, or IPv6 below labels: then with the RFC 4950
/// label stack object).
pub fn time_exceeded6(
    cfg: &IcmpConfig,
    fib: &Fib,
    local: &LocalAddrs,
    in_port: u16,
    received: &[u8],
    out: &mut [u8],
) -> Result<Reply, IcmpError> {
    error_reply(cfg, fib, local, in_port, received, out, |original, mpls| {
        Icmpv6Repr::TimeExceeded {
            code: CODE_HOP_LIMIT_EXCEEDED,
            original,
            mpls,
        }
    })
}

/// Packet too big with `mtu` (from `PuntReason::FragNeeded`, net of pushed labels).
pub fn packet_too_big(
    cfg: &IcmpConfig,
    fib: &Fib,
    local: &LocalAddrs,
    in_port: u16,
    received: &[u8],
    mtu: u16,
    out: &mut [u8],
) -> Result<Reply, IcmpError> {
    error_reply(cfg, fib, local, in_port, received, out, |original, _| {
        Icmpv6Repr::PacketTooBig {
            mtu: mtu.into(),
            original,
        }
    })
}

/// Destination unreachable, no route to destination (`PuntReason::Unreachable`).
pub fn no_route6(
    cfg: &IcmpConfig,
    fib: &Fib,
    local: &LocalAddrs,
    in_port: u16,
    received: &[u8],
    out: &mut [u8],
) -> Result<Reply, IcmpError> {
    error_reply(cfg, fib, local, in_port, received, out, |original, mpls| {
        Icmpv6Repr::DstUnreachable {
            code: CODE_NO_ROUTE,
            original,
            mpls,
        }
    })
}

/// Echo reply to an echo request for one of the router's unicast addresses (punted as
/// `LocalDelivery` on `in_port`, possibly below labels). The reply's source is the
/// address that was pinged; it is routed, never label-switched back, except that a reply
/// to a link-local address goes straight back out of `in_port`, from the port's
/// link-local address.
pub fn echo_reply6(
    cfg: &IcmpConfig,
    local: &LocalAddrs,
    in_port: u16,
    received: &[u8],
    out: &mut [u8],
) -> Result<Reply, IcmpError> {
    let r = locate(received, cfg.max_label_depth)?;
    let (src, dst) = (r.ip.src_addr(), r.ip.dst_addr());
    if ipv6::is_multicast(&dst) || ipv6::is_unspecified(&src) || ipv6::is_multicast(&src) {
        return Err(IcmpError::NotEchoRequest);
    }
    let icmp = icmpv6_of(&r.ip).ok_or(IcmpError::NotEchoRequest)?;
    if icmp.msg_type() != TYPE_ECHO_REQUEST || !icmp.verify_checksum(&src, &dst) {
        return Err(IcmpError::NotEchoRequest);
    }
    let reply = Icmpv6Repr::EchoReply {
        ident: icmp.echo_ident(),
        seq: icmp.echo_seq(),
        data: icmp.data(),
    };
    let Some(d) = direct(local, in_port, received, &r, &src)? else {
        let len = write_frame(cfg, None, dst, src, &reply, out)?;
        let via = SendVia::Route;
        return Ok(Reply { len, via });
    };
    let len = write_frame(cfg, None, d.src, src, &reply, out)?;
    address_direct(&d, out);
    Ok(Reply {
        len,
        via: SendVia::Direct,
    })
}

#[cfg(test)]
#[path = "build6_tests.rs"]
mod tests;
