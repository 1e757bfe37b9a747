//! Stage 3 (and the IPv4 half of stage 1): RFC 1812 input checks and route targets.

use super::local::LocalAddrs;
use super::{DropReason, Fix, Next, PipelineConfig, PuntReason, Verdict, Work};
use crate::fib::{Fib, RouteId, NO_ROUTE};
use crate::wire::ipv4::{field, MIN_HEADER_LEN};
use crate::wire::{be16, be32, checksum};

/// Checks the IPv4 header at `w.stack_end` (RFC 1812 §5.2.2 and §5.3.7) and queues the
/// packet for the LPM lookup. Sets `w.ip`, `w.end`, `w.keep`; `w.out_ttl` becomes the TTL
/// to emit (decremented unless the router originated the packet). `own` is given for
/// packets received as plain IPv4: their source must not be one of the router's addresses.
pub(crate) fn input(
    cfg: &PipelineConfig,
    own: Option<&LocalAddrs>,
    data: &[u8],
    w: &mut Work,
    originate: bool,
) {
    match check(cfg, data, w.stack_end, originate, own) {
        Err(v) => w.done(v),
        Ok((dst, end)) => {
            let off = w.stack_end;
            w.ip = Some(off);
            w.end = end;
            w.keep = off;
            let ttl = data[off + field::TTL];
            w.out_ttl = if originate {
                ttl
            } else {
                ttl.saturating_sub(1)
            };
            w.next = Next::Ipv4 { dst };
        }
    }
}

/// The header checks; `Ok((destination, end of datagram))`. With `own`, a source that is
/// one of those addresses is dropped (`own_source`). Not for datagrams exposed by a label
/// pop: an ICMP reply the router sends along an LSP it terminates comes back that way.
pub(crate) fn check(
    cfg: &PipelineConfig,
    data: &[u8],
    off: usize,
    originate: bool,
    own: Option<&LocalAddrs>,
) -> Result<(u32, usize), Verdict> {
    let drop = |r| Err(Verdict::Drop(r));
    let b = data.get(off..).unwrap_or(&[]);
    if b.len() < MIN_HEADER_LEN {
        return drop(DropReason::Truncated);
    }
    let ver_ihl = b[field::VER_IHL];
    let hl = ((ver_ihl & 0xf) as usize) * 4;
    let tl = be16(b, field::LENGTH.start) as usize;
    if ver_ihl >> 4 != 4 || hl < MIN_HEADER_LEN || tl < hl {
        return drop(DropReason::BadIpv4Header);
    }
    if tl > b.len() {
        return drop(DropReason::Truncated);
    }
    // The common 20-byte header gets a fixed-length (unrolled) sum.
    let sum = if hl == MIN_HEADER_LEN {
        checksum::sum(&b[..MIN_HEADER_LEN])
    } else {
        checksum::sum(&b[..hl])
    };
    if sum != 0xffff {
        return drop(DropReason::BadChecksum);
    }
    let src = be32(b, field::SRC_ADDR.start);
    let dst = be32(b, field::DST_ADDR.start);
    if !originate {
        let (s8, d8) = (src >> 24, dst >> 24);
        if s8 == 0 || s8 == 127 || s8 >= 224 || d8 == 0 || d8 == 127 || d8 >= 240 {
            return drop(DropReason::MartianAddress);
        }
        if super::classify::is_control_multicast(dst) {
            return Err(Verdict::SlowPath(PuntReason::LinkLocalMulticast));
        }
        if d8 >= 224 {
            return drop(DropReason::Multicast);
        }
        if own.is_some_and(|l| l.is_own(src)) {
            return drop(DropReason::OwnSource);
        }
        if hl > MIN_HEADER_LEN && cfg.punt_ip_options {
            return Err(Verdict::SlowPath(PuntReason::IpOptions));
        }
    }
    Ok((dst, off + tl))
}

/// Applies the route found for a packet queued by [`input`] (or by label disposition).
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
        return w.done(Verdict::Drop(DropReason::NoRoute));
    }
    let ip = w.keep;
    let tc = || data[ip + field::DSCP_ECN] >> 5; // DSCP class selector (RFC 3270)
    super::apply_route(w, fib, id, in_port, originate, tc, Fix::Ipv4Ttl);
}
