//! Stage 4: ECMP member, adjacency state, MTU, then the in-place rewrite: strip what was
//! consumed, copy the adjacency's header template in one go, fill TTL/TC/S of the pushed
//! labels and fix the first kept header.

use super::{hash, DropReason, Fix, PuntReason, Verdict, Work};
use crate::fib::{Fib, NextHop, TtlMode, DEFAULT_PIPE_TTL};
use crate::packet::PacketBuf;
use crate::wire::ethernet::{ETHERTYPE_MPLS, HEADER_LEN};
use crate::wire::{be16, checksum, put16};

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
        NextHop::Ecmp(_) => {
            hash::flow_hash(&data[w.l3..w.stack_end], w.ip.map(|ip| &data[ip..w.end]))
        }
    };
    let adj_id = fib.resolve(nh, flow);
    let adj = fib.adjacency(adj_id);
    if !adj.is_resolved() {
        return Verdict::SlowPath(PuntReason::ArpNeeded { adj: adj_id });
    }
    let kept_labels = w.stack_end.saturating_sub(w.keep);
    let l3_len = adj.push_bytes() + (w.end - w.keep);
    if l3_len > adj.mtu as usize {
        return match w.ip {
            Some(ip) if data[ip + 6] & 0x40 != 0 => {
                let labels = (adj.push_bytes() + kept_labels).min(u16::MAX as usize) as u16;
                Verdict::SlowPath(PuntReason::FragNeeded {
                    in_port,
                    mtu: adj.mtu.saturating_sub(labels),
                })
            }
            _ => Verdict::Drop(DropReason::MtuExceeded),
        };
    }
    let template = adj.header_template();
    let tl = template.len();
    if tl > w.keep && pkt.headroom() < tl - w.keep {
        return Verdict::Drop(DropReason::NoHeadroom);
    }
    let pad = pkt.len() - w.end;
    // Both cannot fail: bounds were checked above.
    let _ = pkt.trim(pad);
    let _ = if tl > w.keep {
        pkt.prepend(tl - w.keep)
    } else {
        pkt.adj(w.keep - tl)
    };
    let d = pkt.data_mut();
    d[..tl].copy_from_slice(template);
    let pushed = adj.labels().len();
    if pushed == 0 && kept_labels > 0 {
        put16(d, 12, ETHERTYPE_MPLS);
    }
    let outer = match w.mode {
        TtlMode::Uniform => w.out_ttl,
        TtlMode::Pipe(0) => DEFAULT_PIPE_TTL,
        TtlMode::Pipe(t) => t,
    };
    for k in 0..pushed {
        let at = HEADER_LEN + 4 * k;
        let bottom = k + 1 == pushed;
        d[at + 2] |= (w.tc & 7) << 1 | (bottom && w.bos) as u8;
        d[at + 3] = if bottom && w.swap { w.out_ttl } else { outer };
    }
    match w.fix {
        Fix::None => {}
        Fix::LabelTtl(t) => d[tl + 3] = t,
        Fix::Ipv4Ttl(t) => {
            let old = be16(d, tl + 8);
            d[tl + 8] = t;
            let new = be16(d, tl + 8);
            if old != new {
                let c = checksum::update16(be16(d, tl + 10), old, new);
                put16(d, tl + 10, c);
            }
        }
    }
    Verdict::Forward { port: adj.port }
}
