//! Stage 2: the label stack. Walks reserved labels and label table entries until the
//! packet is swapped, popped towards a next hop, disposed of to IPv4 or IPv6, punted or
//! dropped.

use super::ipv6::{self, Source};
use super::{ipv4, DropReason, Fix, Next, PipelineConfig, PuntReason, Verdict, Work};
use crate::fib::{Fib, LabelOp, TtlMode};
use crate::wire::ipv4::{field, Ipv4Packet, MIN_HEADER_LEN, VER_IHL_NO_OPTIONS};
use crate::wire::mpls::{
    is_reserved, LabelStack, ENTRY_LEN, LABEL_ELI, LABEL_IPV4_EXPLICIT_NULL,
    LABEL_IPV6_EXPLICIT_NULL, LABEL_ROUTER_ALERT,
};
use crate::wire::WireError;
use crate::wire::{be16, checksum};

pub(crate) fn resolve(cfg: &PipelineConfig, fib: &Fib, in_port: u16, data: &[u8], w: &mut Work) {
    let stack = match LabelStack::new_checked(&data[w.l3..], cfg.max_label_depth) {
        Ok(s) => s,
        Err(WireError::TooDeep(_)) => return w.done(Verdict::Drop(DropReason::StackTooDeep)),
        Err(_) => return w.done(Verdict::Drop(DropReason::Truncated)),
    };
    w.stack_end = w.l3 + stack.len();
    // The payload is not looked at here: a label-switched packet is forwarded with all the
    // bytes after its stack, as any LSR does. Only the decisions that need the payload
    // probe it (PHP towards IPv4 below, the ECMP hash and DF in `rewrite`).
    let expired = Verdict::SlowPath(PuntReason::TtlExpired { in_port });
    let mut in_ttl = stack.get(0).map_or(0, |e| e.ttl());
    let mut i = 0;
    while let Some(e) = stack.get(i) {
        let off = w.l3 + ENTRY_LEN * i;
        match e.label() {
            l @ (LABEL_IPV4_EXPLICIT_NULL | LABEL_IPV6_EXPLICIT_NULL) => {
                // Popped in uniform mode (RFC 4182 allows it at any depth); at the bottom
                // it names the payload's family.
                i += 1;
                if e.bos() {
                    let family = match l {
                        LABEL_IPV4_EXPLICIT_NULL => Some(4),
                        _ => Some(6),
                    };
                    return dispose(cfg, data, w, TtlMode::Uniform, in_ttl, family);
                }
                in_ttl = stack.get(i).map_or(in_ttl, |n| in_ttl.min(n.ttl()));
            }
            LABEL_ROUTER_ALERT => return w.done(Verdict::SlowPath(PuntReason::RouterAlert)),
            LABEL_ELI => {
                // The entropy label indicator and its entropy label go together.
                match stack.get(i + 1) {
                    Some(el) if !e.bos() => {
                        i += 2;
                        if el.bos() {
                            return dispose(cfg, data, w, TtlMode::Uniform, in_ttl, None);
                        }
                    }
                    _ => return w.done(Verdict::Drop(DropReason::ReservedLabel)),
                }
            }
            l if is_reserved(l) => return w.done(Verdict::Drop(DropReason::ReservedLabel)),
            l => {
                let Some(entry) = fib.lookup_label(l) else {
                    return w.done(Verdict::Drop(DropReason::NoLabel));
                };
                let uniform = entry.ttl_mode == TtlMode::Uniform;
                match (entry.op, entry.next_hop) {
                    (LabelOp::PopAndLookup, _) => {
                        i += 1;
                        if e.bos() {
                            return dispose(cfg, data, w, entry.ttl_mode, in_ttl, None);
                        }
                        if let Some(next) = stack.get(i) {
                            in_ttl = if uniform {
                                in_ttl.min(next.ttl())
                            } else {
                                next.ttl()
                            };
                        }
                    }
                    (op, Some(nh)) => {
                        let out = in_ttl.saturating_sub(1);
                        if out == 0 {
                            return w.done(expired);
                        }
                        w.out_ttl = out;
                        w.tc = e.tc();
                        w.mode = entry.ttl_mode;
                        w.keep = off + ENTRY_LEN;
                        w.bos = e.bos();
                        w.swap = op == LabelOp::Swap;
                        w.fix = Fix::None;
                        if op == LabelOp::Pop {
                            // Penultimate hop: the exposed header's TTL per the mode.
                            let (exposed, fix): (u8, MakeFix) = if e.bos() {
                                match exposed_ip(cfg, data, w) {
                                    Ok(x) => x,
                                    Err(v) => return w.done(v),
                                }
                            } else {
                                (stack.get(i + 1).map_or(0, |n| n.ttl()), Fix::LabelTtl)
                            };
                            let ttl = if uniform { exposed.min(out) } else { exposed };
                            if ttl == 0 {
                                return w.done(expired);
                            }
                            w.fix = fix(ttl);
                        }
                        w.next = Next::NextHop(nh);
                        return;
                    }
                    // The builder refuses swap/pop without a next hop.
                    (_, None) => return w.done(Verdict::Drop(DropReason::NoLabel)),
                }
            }
        }
    }
    // A checked stack ends with a bottom-of-stack entry, handled above.
    w.done(Verdict::Drop(DropReason::Truncated))
}

/// The fix that writes a TTL into the first kept header.
type MakeFix = fn(u8) -> Fix;

/// The IP header a penultimate-hop pop exposes at `w.keep` (the version nibble says
/// which family; the adjacency must carry that family, checked in `rewrite`): sets
/// `w.ip` and `w.end`, returns its TTL or hop limit and the fix that writes it.
fn exposed_ip(cfg: &PipelineConfig, data: &[u8], w: &mut Work) -> Result<(u8, MakeFix), Verdict> {
    if data.get(w.keep).is_some_and(|b| b >> 4 == 6) {
        w.end = ipv6::header(data, w.keep)?;
        w.ip = Some(w.keep);
        return Ok((data[w.keep + ipv6::HOP_LIMIT], Fix::Ipv6Hop));
    }
    match data.get(w.keep..).and_then(exposed_ipv4) {
        Some(len) => {
            w.ip = Some(w.keep);
            w.end = w.keep + len;
            Ok((data[w.keep + field::TTL], Fix::Ipv4Ttl))
        }
        None => Err(not_ipv4(cfg, data, w.keep)),
    }
}

/// Total length of the IPv4 datagram starting `ip` when its header is sound and its
/// checksum verifies (an IPv4 header exposed by a pop is forwarded as IPv4 and trimmed to
/// it, so a payload that merely starts with a 4 nibble must not pass). The staged path's
/// test; the fast path takes [`exposed_plain_ipv4`], its half for headers without options.
#[inline]
pub(super) fn exposed_ipv4(ip: &[u8]) -> Option<usize> {
    match ip.first() {
        Some(&VER_IHL_NO_OPTIONS) => exposed_plain_ipv4(ip),
        _ => exposed_ipv4_with_options(ip),
    }
}

/// [`exposed_ipv4`] for a header without options (fixed-size code); `None` for any other.
#[inline]
pub(super) fn exposed_plain_ipv4(ip: &[u8]) -> Option<usize> {
    let hdr = ip.first_chunk::<MIN_HEADER_LEN>()?;
    let total = be16(hdr, field::LENGTH.start) as usize;
    let sound =
        hdr[field::VER_IHL] == VER_IHL_NO_OPTIONS && total >= MIN_HEADER_LEN && total <= ip.len();
    (sound && checksum::ipv4_header_verifies(hdr)).then_some(total)
}

#[inline(never)]
fn exposed_ipv4_with_options(ip: &[u8]) -> Option<usize> {
    let ip = Ipv4Packet::new_checked(ip).ok()?;
    ip.verify_checksum().then_some(ip.total_len() as usize)
}

/// Why the payload exposed at `off` cannot be forwarded as IPv4.
fn not_ipv4(cfg: &PipelineConfig, data: &[u8], off: usize) -> Verdict {
    match data.get(off) {
        Some(b) if b >> 4 == 4 => match ipv4::check(cfg, data, off, true, None) {
            Err(v) => v,
            Ok(_) => Verdict::Drop(DropReason::BadIpv4Header),
        },
        _ => Verdict::Drop(DropReason::UnsupportedPayload),
    }
}

/// Bottom of stack popped: the IP packet below goes to the lookup of its family with its
/// TTL (hop limit) for this hop already decided (uniform: from the label; pipe: as
/// received). `family`: the IP version an explicit null label names, else the payload's
/// first nibble decides.
fn dispose(
    cfg: &PipelineConfig,
    data: &[u8],
    w: &mut Work,
    mode: TtlMode,
    in_ttl: u8,
    family: Option<u8>,
) {
    let version = data.get(w.stack_end).map(|b| b >> 4);
    if version.is_some() && family.is_some_and(|f| Some(f) != version) {
        return w.done(Verdict::Drop(DropReason::UnsupportedPayload));
    }
    let out = move |ttl: u8| mode.popped_ttl(ttl, in_ttl.saturating_sub(1));
    match version {
        Some(6) => return ipv6::input(data, w, Source::Label, out),
        Some(4) | None => {}
        Some(_) => return w.done(Verdict::Drop(DropReason::UnsupportedPayload)),
    }
    match ipv4::check(cfg, data, w.stack_end, false, None) {
        Err(v) => w.done(v),
        Ok((dst, end)) => {
            let ip_ttl = data[w.stack_end + field::TTL];
            w.ip = Some(w.stack_end);
            w.end = end;
            w.keep = w.stack_end;
            w.out_ttl = out(ip_ttl);
            w.next = Next::Ipv4 { dst };
        }
    }
}
