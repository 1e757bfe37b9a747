//! NDP the router receives (punted as `PuntReason::Ndp`): a neighbour solicitation for
//! one of a port's addresses is answered with a solicited advertisement carrying the
//! port's MAC, and teaches the sender's MAC when it carries one; an advertisement
//! teaches its target's MAC ([`super::neighbors`] decides). Router solicitations and
//! advertisements are counted and dropped: the router never advertises itself (see
//! [`super::ndp`]). Every message ends handled or dropped under a named reason; valid
//! solicitations and advertisements are mirrored to the port's control interface.

use std::sync::atomic::Ordering::Relaxed;

use dpdk::Mbuf;
use net::packet::PacketBuf;
use net::wire::ipv6;
use net::wire::ndp::NdpRepr;

use super::addr::NbrAddr;
use super::ndp::{self, NdpIn};
use super::neighbors::{ArpIgnored, NdpSeen};
use super::State;
use crate::metrics::{NdpCount, SlowDrop};

fn ignored_reason(why: ArpIgnored) -> SlowDrop {
    match why {
        ArpIgnored::InvalidSenderMac => SlowDrop::NdpInvalidLladdr,
        ArpIgnored::OwnAddress => SlowDrop::NdpOwnAddress,
        ArpIgnored::OffLink => SlowDrop::NdpOffLink,
        ArpIgnored::StaticNeighbor => SlowDrop::NdpStaticNeighbor,
        ArpIgnored::Unsolicited => SlowDrop::NdpUnsolicited,
        ArpIgnored::TableFull => SlowDrop::NdpTableFull,
        ArpIgnored::Locked => SlowDrop::NdpNoOverride,
    }
}

impl State {
    pub(super) fn ndp_input(&mut self, m: Mbuf, in_port: u16) {
        if self.sp.ports.get(in_port as usize).is_none() {
            return self.discard(m, SlowDrop::NdpUnknownPort);
        }
        let Some(n) = ndp::parse(m.data()) else {
            return self.discard(m, SlowDrop::NdpInvalid);
        };
        if matches!(
            n.msg,
            NdpRepr::NeighborSolicit { .. } | NdpRepr::NeighborAdvert { .. }
        ) {
            // The kernel resolves its own neighbours too (its advertisements are
            // dropped on the way down: the router answers).
            self.mirror_arp(in_port, m.data());
        }
        let outcome = match n.msg {
            NdpRepr::RouterSolicit { .. } => {
                self.stats().ndp(NdpCount::RsReceived);
                Err(SlowDrop::NdpRouterSolicitation)
            }
            NdpRepr::RouterAdvert { .. } => {
                self.stats().ndp(NdpCount::RaReceived);
                Err(SlowDrop::NdpRouterAdvertisement)
            }
            NdpRepr::NeighborSolicit { target, lladdr } => {
                self.stats().ndp(NdpCount::NsReceived);
                self.solicitation(in_port, &n, target, lladdr)
            }
            NdpRepr::NeighborAdvert {
                target,
                lladdr,
                override_,
                ..
            } => {
                self.stats().ndp(NdpCount::NaReceived);
                self.advertisement(in_port, target, lladdr, override_)
            }
        };
        match outcome {
            Err(why) => self.discard(m, why),
            Ok(()) => {
                self.stats().handled.fetch_add(1, Relaxed);
                drop(m);
            }
        }
        self.neighbors.flush(&self.sp.events);
        self.gauges();
    }

    /// Answers a solicitation for one of `in_port`'s addresses and learns its sender.
    fn solicitation(
        &mut self,
        in_port: u16,
        n: &NdpIn,
        target: [u8; 16],
        lladdr: Option<[u8; 6]>,
    ) -> Result<(), SlowDrop> {
        let iface = &self.sp.ports[in_port as usize];
        if !ndp::is_port_address6(iface, &target) {
            return Err(SlowDrop::NdpNotForUs);
        }
        let na = ndp::advertise(iface, n, &target, lladdr);
        self.stats().ndp(NdpCount::NaSent);
        self.send_frame(in_port, &na);
        if ipv6::is_unspecified(&n.src) {
            return Ok(()); // duplicate address detection: nobody to learn
        }
        self.learn6(in_port, n.src, lladdr, false, false)
    }

    fn advertisement(
        &mut self,
        in_port: u16,
        target: [u8; 16],
        lladdr: Option<[u8; 6]>,
        override_: bool,
    ) -> Result<(), SlowDrop> {
        self.learn6(in_port, target, lladdr, true, override_)
    }

    /// Applies what an NDP message says about `addr` to the learned table; a neighbour
    /// now known is no longer incomplete for the workers.
    fn learn6(
        &mut self,
        port: u16,
        addr: [u8; 16],
        mac: Option<[u8; 6]>,
        advert: bool,
        override_: bool,
    ) -> Result<(), SlowDrop> {
        let key = NbrAddr::v6(addr);
        let seen = NdpSeen {
            port,
            addr,
            mac,
            advert,
            override_,
            solicited: self.pending.contains(port, key),
            static_mac: self.sp.statics.get6(port, u128::from_be_bytes(addr)),
        };
        let known = self.neighbors.get_addr(port, key).is_some();
        let ignored = self.neighbors.input6(&self.sp.ports, &seen, self.now_ns());
        if self.neighbors.get_addr(port, key).is_some() {
            if seen.solicited && !known {
                self.stats().ndp(NdpCount::Resolved);
            }
            self.unmark(port, key);
        }
        ignored.map_or(Ok(()), |why| Err(ignored_reason(why)))
    }
}
