//! Resolving next hops, for both families: a packet the pipeline could not send for want
//! of a MAC is held ([`super::pending`]) while the address is asked for (an ARP request,
//! or an NDP solicitation to the solicited-node group), and the workers are told which
//! neighbours are incomplete ([`crate::punt::marks`]: IPv4 addresses and adjacencies of
//! either family). It never waits: answers arrive as punted ARP or NDP, and a new table
//! retries what is held.

use dpdk::Mbuf;
use net::fib::Fib;
use net::packet::PacketBuf;
use net::pipeline::{PuntReason, Verdict};

use super::addr::NbrAddr;
use super::pending::Hold;
use super::{arp, ndp, neighbors, Held, State};
use crate::metrics::{NdpCount, SlowDrop};
use crate::punt::Mark;

/// The workers' mark of an address being resolved on `port`.
fn addr_mark(port: u16, a: NbrAddr) -> Mark {
    match a {
        NbrAddr::V4(ip) => Mark::Addr { port, ip },
        NbrAddr::V6(ip) => Mark::Addr6 { port, ip },
    }
}

/// The first IP destination of a frame (below one VLAN tag and any labels).
fn ip_dst(frame: &[u8]) -> Option<NbrAddr> {
    let ip = net::wire::ip_packet(frame)?;
    match ip.first()? >> 4 {
        4 => Some(NbrAddr::V4(u32::from_be_bytes(
            ip.get(16..20)?.try_into().ok()?,
        ))),
        6 => Some(NbrAddr::v6(ip.get(24..40)?.try_into().ok()?)),
        _ => None,
    }
}

impl State {
    /// Sends an mbuf the way the pipeline decided (`v`).
    pub(super) fn route(&mut self, fib: &Fib, m: Mbuf, in_port: u16, v: Verdict) {
        match v {
            Verdict::Forward { port } => self.transmit(port, m),
            Verdict::SlowPath(PuntReason::ArpNeeded { adj }) => {
                let a = fib.adjacency(adj);
                let to = match a.neighbor6 {
                    Some(n) => NbrAddr::v6(n),
                    None => NbrAddr::V4(u32::from_be_bytes(a.neighbor)),
                };
                let port = a.port;
                self.hold(port, to, m, in_port);
                self.mark_adj(port, to, adj);
            }
            Verdict::SlowPath(PuntReason::Glean { port }) => match ip_dst(m.data()) {
                Some(to) => self.hold(port, to, m, in_port),
                None => self.discard(m, SlowDrop::GleanNoIpv4),
            },
            Verdict::Drop(_) => self.discard(m, SlowDrop::PipelineDrop),
            Verdict::SlowPath(_) => self.discard(m, SlowDrop::PuntedAgain),
        }
    }

    /// Holds `m` until `to` on `port` resolves, asking for it when due.
    fn hold(&mut self, port: u16, to: NbrAddr, m: Mbuf, in_port: u16) {
        let ndp = matches!(to, NbrAddr::V6(_));
        let Some(iface) = self.sp.ports.get(port as usize) else {
            let why = [SlowDrop::ArpUnknownPort, SlowDrop::NdpUnknownPort][ndp as usize];
            return self.discard(m, why);
        };
        let target_ok = match to {
            NbrAddr::V4(ip) => neighbors::arp_target_ok(iface, ip),
            NbrAddr::V6(a) => ndp::on_link6(iface, &a.to_be_bytes()),
        };
        if !target_ok {
            let why = [SlowDrop::ArpBroadcastTarget, SlowDrop::NdpBadTarget][ndp as usize];
            return self.discard(m, why);
        }
        let h = Held {
            mbuf: m,
            in_port,
            ndp,
        };
        let ask = match self.pending.hold(port, to, h, self.now_ns()) {
            Hold::Held { ask } => ask,
            Hold::Full { h, ask } => {
                let why = [SlowDrop::ArpHoldFull, SlowDrop::NdpHoldFull][ndp as usize];
                self.discard(h.mbuf, why);
                ask
            }
        };
        // A learned address only waits for the table: no need to ask again.
        let learned = self.neighbors.get_addr(port, to).is_some();
        if ask && !learned {
            self.solicit(port, to, None);
        }
        let mark = addr_mark(port, to);
        if !learned && self.pending.contains(port, to) && self.sp.marks.insert(mark) {
            self.marked.insert(mark);
        }
        self.gauges();
    }

    /// Marks adjacency `adj` (towards `to` on `port`) incomplete while `to` is resolved.
    fn mark_adj(&mut self, port: u16, to: NbrAddr, adj: u32) {
        if !self.pending.contains(port, to) || self.neighbors.get_addr(port, to).is_some() {
            return;
        }
        let adjs = self.marked_adjs.entry((port, to)).or_default();
        if !adjs.contains(&adj) && self.sp.marks.insert(Mark::Adj(adj)) {
            adjs.push(adj);
        }
    }

    /// Takes the incomplete marks of `a` on `port` away (resolved or given up).
    pub(super) fn unmark(&mut self, port: u16, a: NbrAddr) {
        let mark = addr_mark(port, a);
        if self.marked.remove(&mark) {
            self.sp.marks.remove(mark);
        }
        for adj in self.marked_adjs.remove(&(port, a)).unwrap_or_default() {
            self.sp.marks.remove(Mark::Adj(adj));
        }
    }

    /// A new table may number its adjacencies differently: their marks go (held
    /// packets, retried next, mark them again under the new numbers).
    pub(super) fn unmark_adjs(&mut self) {
        for (_, adjs) in self.marked_adjs.drain() {
            for adj in adjs {
                self.sp.marks.remove(Mark::Adj(adj));
            }
        }
    }

    /// Asks for `a` out of `port`: broadcast ARP or NDP to the solicited-node group to
    /// resolve it (`known` None), unicast to the known MAC to probe a binding.
    pub(super) fn solicit(&mut self, port: u16, a: NbrAddr, known: Option<[u8; 6]>) {
        let Some(p) = self.sp.ports.get(port as usize) else {
            return;
        };
        let f = match a {
            NbrAddr::V4(ip) => arp::request(p, ip, known.unwrap_or([0xff; 6])),
            NbrAddr::V6(t) => {
                self.stats().ndp(NdpCount::NsSent);
                Some(ndp::solicit(p, &t.to_be_bytes(), known))
            }
        };
        if let Some(f) = f {
            self.send_frame(port, &f);
        }
    }
}
