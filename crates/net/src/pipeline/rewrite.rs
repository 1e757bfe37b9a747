//! Stage 4: ECMP member, adjacency state, MTU, then the in-place rewrite: strip what was
//! consumed, copy the adjacency's header template in one go, fill TTL/TC/S of the pushed
//! labels and fix the first kept header.

use super::{hash, ipv6, DropReason, Fix, PuntReason, Verdict, Work};
use crate::fib::{Adjacency, Family, Fib, NextHop};
use crate::packet::PacketBuf;
use crate::wire::ethernet::field as eth;
use crate::wire::ethernet::{ETHERTYPE_MPLS, HEADER_LEN};
use crate::wire::ipv4::{field as ip4, set_ttl, Ipv4Packet, DF_HIGH_BYTE};
use crate::wire::mpls::{field as lse, ENTRY_LEN, TC_SHIFT};
use crate::wire::put16;

#[inline]
pub(crate) fn forward<P: PacketBuf>(
    fib: &Fib,
    in_port: u16,
    pkt: &mut P,
    w: &Work,
    nh: NextHop,
) -> Verdict {
    let data = pkt.data();
    let flow = match nh {
        NextHop::Adjacency(_) => 0,
        // A label-switched payload is hashed as IP when it parses as IPv4 or IPv6 (no
        // checksum check: a damaged header only moves its own flow).
        NextHop::Ecmp(_) => hash::flow_hash(
            &data[w.l3..w.stack_end],
            Some(&data[w.ip.unwrap_or(w.stack_end)..w.end]),
        ),
    };
    let adj_id = fib.resolve(nh, flow);
    let adj = fib.adjacency(adj_id);
    let kept_labels = w.stack_end.saturating_sub(w.keep);
    if kept_labels == 0 && !bare_family_fits(adj, w.fix) {
        return Verdict::Drop(DropReason::UnsupportedPayload);
    }
    if !adj.is_resolved() {
        return Verdict::SlowPath(PuntReason::ArpNeeded { adj: adj_id });
    }
    let l3_len = adj.push_bytes() + (w.end - w.keep);
    if l3_len > adj.mtu as usize {
        return too_big(data, w, adj, in_port, kept_labels);
    }
    let tl = HEADER_LEN + adj.push_bytes();
    if tl > w.keep && pkt.headroom() < tl - w.keep {
        return Verdict::Drop(DropReason::NoHeadroom);
    }
    let pad = pkt.len() - w.end;
    // None of these can fail: bounds were checked above. A swap keeps the frame's extent.
    if pad > 0 {
        let _ = pkt.trim(pad);
    }
    if tl > w.keep {
        let _ = pkt.prepend(tl - w.keep);
    } else if tl < w.keep {
        let _ = pkt.adj(w.keep - tl);
    }
    let d = pkt.data_mut();
    let (hdr, _) = d.split_at_mut(tl);
    let (eth, lses) = hdr.split_at_mut(HEADER_LEN);
    eth.copy_from_slice(adj.ethernet_template());
    let labels = adj.labels();
    if labels.is_empty() && kept_labels > 0 {
        put16(eth, eth::ETHERTYPE.start, ETHERTYPE_MPLS);
    }
    let outer = w.mode.pushed_ttl(w.out_ttl);
    // Pushed labels are written as whole words: label, TC, S (bottom, when nothing is kept
    // below) and TTL (the swapped label's own on the bottom of a swap). One label (a swap,
    // or one push) is the common case and gets straight-line code.
    let tc = (w.tc as u32 & 7) << TC_SHIFT;
    let bottom_ttl = if w.swap { w.out_ttl } else { outer };
    let bottom = |label: u32| label << 12 | tc | (w.bos as u32) << 8 | bottom_ttl as u32;
    match labels {
        [] => {}
        [label] => lses[..ENTRY_LEN].copy_from_slice(&bottom(*label).to_be_bytes()),
        [upper @ .., label] => {
            for (e, &l) in lses.chunks_exact_mut(ENTRY_LEN).zip(upper) {
                e.copy_from_slice(&(l << 12 | tc | outer as u32).to_be_bytes());
            }
            let at = ENTRY_LEN * upper.len();
            lses[at..at + ENTRY_LEN].copy_from_slice(&bottom(*label).to_be_bytes());
        }
    }
    match w.fix {
        Fix::None => {}
        Fix::LabelTtl(t) => d[tl + lse::TTL] = t,
        Fix::Ipv4Ttl(t) => set_ttl(&mut d[tl..], t),
        Fix::Ipv6Hop(t) => d[tl + ipv6::HOP_LIMIT] = t,
    }
    Verdict::Forward { port: adj.port }
}

/// Whether a packet that leaves without labels below the adjacency's (`fix` says which
/// family it is) may take it ([`Adjacency::carries`]; a penultimate-hop pop checks the
/// payload's version against the entry's next hop here).
#[inline]
fn bare_family_fits(adj: &Adjacency, fix: Fix) -> bool {
    let family = match fix {
        Fix::Ipv4Ttl(_) => Family::Ipv4,
        Fix::Ipv6Hop(_) => Family::Ipv6,
        Fix::None | Fix::LabelTtl(_) => return true,
    };
    adj.carries(family)
}

/// A packet too big for the adjacency's link: IPv4 with DF and every IPv6 packet (an
/// IPv6 router never fragments) get an ICMP error with the MTU left for the IP packet;
/// others are dropped.
#[cold]
fn too_big(data: &[u8], w: &Work, adj: &Adjacency, in_port: u16, kept_labels: usize) -> Verdict {
    let labels = (adj.push_bytes() + kept_labels).min(u16::MAX as usize) as u16;
    let frag_needed = Verdict::SlowPath(PuntReason::FragNeeded {
        in_port,
        mtu: adj.mtu.saturating_sub(labels),
    });
    match payload_ip(data, w) {
        Some((4, ip)) if data[ip + ip4::FLG_OFF.start] & DF_HIGH_BYTE != 0 => frag_needed,
        Some((6, _)) => frag_needed,
        _ => Verdict::Drop(DropReason::MtuExceeded),
    }
}

/// The version and offset of the IP header of a packet too big for its link, if it has
/// a sound one. Label-switched packets are probed here, off the fast path.
fn payload_ip(data: &[u8], w: &Work) -> Option<(u8, usize)> {
    if let Some(ip) = w.ip {
        return Some((data[ip] >> 4, ip));
    }
    let at = w.stack_end;
    match data.get(at)? >> 4 {
        6 => ipv6::header(data, at).ok().map(|_| (6, at)),
        _ => {
            let ip = Ipv4Packet::new_checked(data.get(at..)?).ok()?;
            ip.verify_checksum().then_some((4, at))
        }
    }
}
