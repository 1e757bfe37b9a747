//! The slow path: everything a worker punts (ARP and NDP, packets for the router, ICMP
//! and ICMPv6 to generate, packets waiting for a neighbor's MAC), on its own thread.
//!
//! It transmits through a worker (which owns the TX queues, so there are no TX locks and
//! a device with one TX queue per worker suffices), reads the table through its own
//! RCU reader (offline while it waits for work), allocates reply frames from the shared
//! mempool, and sends what it generates through the same pipeline as forwarded traffic,
//! so an ICMP reply to a labelled packet is label-switched like the packet was.
//! It never blocks a worker: workers hand it packets over a bounded queue. Every mbuf it
//! gets or makes is transmitted, held, consumed or dropped under a named reason
//! ([`crate::metrics::SlowPathStats`]); neighbor updates for the control side are queued
//! until the channel takes them, never dropped.

mod addr;
mod arp;
mod icmp;
mod ndp;
mod ndp_in;
mod neighbors;
mod pending;
mod resolve;
mod show;
mod statics;
mod up;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use config::startup::PortIface;
use crossbeam_channel::{Receiver, Sender};
use dpdk::{Mbuf, Mempool};
use net::fib::Fib;
use net::icmp::{IcmpConfig, TokenBucket, MAX_ERROR_FRAME};
use net::packet::PacketBuf;
use net::pipeline::{Pipeline, PuntReason, Verdict, ORIGINATED};
use net::rcu::{OfflineReader, Rcu};
use net::wire::arp::OP_REQUEST;

use crate::cpif::ControlIfaces;
use crate::metrics::{ControlStats, NdpCount, SlowDrop, SlowPathStats};
use crate::punt::{Mark, NeighborMarks};
use crate::worker::{Injected, Punted};
pub use addr::NbrAddr;
pub use neighbors::ArpPolicy;
use neighbors::{ArpIgnored, ArpSeen, Neighbors};
use pending::Pending;
pub use pending::{GIVE_UP_NS, HOLD_TOTAL, MAX_PENDING};
pub use statics::StaticNeighbors;

/// What the slow path tells the control side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowPathEvent {
    /// A neighbor's MAC was learned (or changed) by ARP: republish the table with it.
    NeighborLearned { port: u16, ip: u32, mac: [u8; 6] },
    /// A learned neighbor aged out or was evicted: take its MAC out of the table.
    NeighborGone { port: u16, ip: u32 },
    /// An IPv6 neighbor's MAC was learned (or changed) by NDP.
    Neighbor6Learned {
        port: u16,
        ip: [u8; 16],
        mac: [u8; 6],
    },
    /// A learned IPv6 neighbor aged out or was evicted.
    Neighbor6Gone { port: u16, ip: [u8; 16] },
}

impl SlowPathEvent {
    /// The update for `a` on `port`: learned with `mac`, or gone.
    pub fn of(port: u16, a: NbrAddr, mac: Option<[u8; 6]>) -> SlowPathEvent {
        match (a, mac) {
            (NbrAddr::V4(ip), Some(mac)) => SlowPathEvent::NeighborLearned { port, ip, mac },
            (NbrAddr::V4(ip), None) => SlowPathEvent::NeighborGone { port, ip },
            (NbrAddr::V6(ip), Some(mac)) => SlowPathEvent::Neighbor6Learned {
                port,
                ip: ip.to_be_bytes(),
                mac,
            },
            (NbrAddr::V6(ip), None) => SlowPathEvent::Neighbor6Gone {
                port,
                ip: ip.to_be_bytes(),
            },
        }
    }
}

impl ArpPolicy {
    /// The policy of the startup config's `arp:` section.
    pub fn from_config(c: &config::startup::ArpConfig) -> ArpPolicy {
        ArpPolicy {
            accept_unsolicited: c.accept_unsolicited,
            reachable_ns: c.reachable_ms as u64 * 1_000_000,
            max_entries: c.max_entries as usize,
        }
    }
}

/// Fixed setup of the slow path.
pub struct SlowPath {
    pub ports: Vec<PortIface>,
    /// Frames to transmit, handed to a worker (which owns the TX queues).
    pub inject: Sender<Injected>,
    pub pool: Arc<Mempool>,
    pub rcu: Arc<Rcu<Fib>>,
    pub pipeline: Pipeline,
    pub icmp: IcmpConfig,
    pub arp: ArpPolicy,
    /// The routes file's neighbors (ARP never changes them).
    pub statics: Arc<StaticNeighbors>,
    pub stats: Arc<ControlStats>,
    pub events: Sender<SlowPathEvent>,
    pub stop: Arc<AtomicBool>,
    /// The ports' control interfaces (up: what the router does not answer itself).
    pub cpif: Option<Arc<ControlIfaces>>,
    /// Incomplete neighbours, for the workers ([`crate::punt::marks`]): marked while a
    /// resolution is in progress, so their packets are not punted one by one.
    pub marks: Arc<NeighborMarks>,
    /// `mplsrouter trace`: what happened to traced packets ([`crate::trace::slow`]).
    pub trace: Option<crate::trace::slow::SlowTap>,
    /// New port views (addresses changed on a reload), taken between batches.
    pub port_updates: Receiver<Vec<PortIface>>,
}

/// The slow path's two queues ([`crate::punt`]): control traffic is taken first.
pub struct PuntReceivers {
    pub control: Receiver<Punted>,
    pub data: Receiver<Punted>,
    /// Test only (`MPLSROUTER_TEST_FAULT=slow-data`): a sleep per data-queue packet.
    pub data_delay: Option<Duration>,
}

impl PuntReceivers {
    /// The next punted packet, control traffic first.
    fn try_next(&self) -> Option<Punted> {
        match self.control.try_recv() {
            Ok(p) => Some(p),
            Err(_) => self.data.try_recv().ok().map(|p| self.delayed(p)),
        }
    }

    /// A data-queue packet, after the test delay if there is one.
    fn delayed(&self, p: Punted) -> Punted {
        if let Some(d) = self.data_delay {
            std::thread::sleep(d);
        }
        p
    }

    /// Waits up to `timeout` for a packet; `Err` once the workers are gone.
    fn wait(&self, timeout: Duration) -> Result<Option<Punted>, ()> {
        if let Some(p) = self.try_next() {
            return Ok(Some(p));
        }
        crossbeam_channel::select! {
            recv(self.control) -> p => p.map(Some).map_err(|_| ()),
            recv(self.data) -> p => p.map(|p| Some(self.delayed(p))).map_err(|_| ()),
            default(timeout) => Ok(None),
        }
    }
}

/// A packet waiting for a resolution, to be sent again through the pipeline.
struct Held {
    mbuf: Mbuf,
    in_port: u16,
    /// Waiting for NDP (else ARP): which reason counts it if it is given up.
    ndp: bool,
}

fn ignored_reason(why: ArpIgnored) -> SlowDrop {
    match why {
        ArpIgnored::InvalidSenderMac => SlowDrop::ArpInvalidSenderMac,
        ArpIgnored::OwnAddress => SlowDrop::ArpOwnAddress,
        ArpIgnored::OffLink => SlowDrop::ArpOffLink,
        ArpIgnored::StaticNeighbor => SlowDrop::ArpStaticNeighbor,
        ArpIgnored::Unsolicited => SlowDrop::ArpUnsolicited,
        ArpIgnored::TableFull => SlowDrop::ArpTableFull,
        ArpIgnored::Locked => SlowDrop::ArpLocked,
    }
}

struct State {
    sp: SlowPath,
    neighbors: Neighbors,
    pending: Pending<Held>,
    /// Addresses marked incomplete for the workers.
    marked: HashSet<Mark>,
    /// Adjacencies marked incomplete, by the address they resolve to (cleared with it).
    marked_adjs: HashMap<(u16, NbrAddr), Vec<u32>>,
    errors: TokenBucket,
    echo: TokenBucket,
    start: Instant,
    scratch: Vec<u8>,
}

impl State {
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn stats(&self) -> &SlowPathStats {
        &self.sp.stats.slow
    }

    /// Frees a punted or generated mbuf, counted under `why`.
    fn discard(&self, m: Mbuf, why: SlowDrop) {
        self.stats().drop(why, 1);
        drop(m);
    }

    /// Allocates and transmits a frame the slow path built.
    fn send_frame(&mut self, port: u16, frame: &[u8]) {
        self.stats().generated.fetch_add(1, Relaxed);
        match self.sp.pool.alloc_with(frame) {
            Some(m) => self.transmit(port, m),
            None => self.stats().drop(SlowDrop::NoMbuf, 1),
        }
    }

    fn transmit(&mut self, port: u16, mbuf: Mbuf) {
        if let Some(t) = self.sp.trace.as_mut() {
            t.sent(port, mbuf.data());
        }
        match self.sp.inject.try_send(Injected { port, mbuf }) {
            Ok(()) => {
                self.stats().transmitted.fetch_add(1, Relaxed);
            }
            Err(e) => self.discard(e.into_inner().mbuf, SlowDrop::InjectFull),
        }
    }

    fn gauges(&self) {
        let c = &self.sp.stats;
        c.arp_entries.store(self.neighbors.len() as u64, Relaxed);
        c.arp_pending
            .store(self.pending.addresses() as u64, Relaxed);
        c.arp_incomplete.store(self.marked.len() as u64, Relaxed);
        c.slow.held.store(self.pending.held() as u64, Relaxed);
    }

    fn arp_input(&mut self, m: Mbuf, in_port: u16) {
        if self.sp.ports.get(in_port as usize).is_none() {
            return self.discard(m, SlowDrop::ArpUnknownPort);
        }
        let Some(a) = arp::parse(m.data()) else {
            return self.discard(m, SlowDrop::ArpMalformed);
        };
        let sender_ip = u32::from_be_bytes(a.sender_ip);
        let seen = ArpSeen {
            port: in_port,
            request: a.operation == OP_REQUEST,
            sender_ip,
            sender_mac: a.sender_mac,
            target_ip: u32::from_be_bytes(a.target_ip),
            solicited: self.pending.contains(in_port, NbrAddr::V4(sender_ip)),
            static_mac: self.sp.statics.get(in_port, sender_ip),
        };
        self.mirror_arp(in_port, m.data());
        let d = self.neighbors.input(&self.sp.ports, &seen, self.now_ns());
        if self.neighbors.get(in_port, sender_ip).is_some() {
            self.unmark(in_port, NbrAddr::V4(sender_ip));
        }
        match d.ignored {
            Some(why) => self.discard(m, ignored_reason(why)),
            None => {
                self.stats().handled.fetch_add(1, Relaxed);
                drop(m);
            }
        }
        if d.reply {
            let f = arp::reply(&self.sp.ports[in_port as usize], &a);
            self.send_frame(in_port, &f);
        }
        self.neighbors.flush(&self.sp.events);
        self.gauges();
    }

    fn handle(&mut self, fib: &Fib, p: Punted) {
        let t = self.sp.trace.as_ref();
        let traced = t.and_then(|t| t.begin(p.in_port, p.mbuf.data(), &self.sp.stats));
        self.handle_punted(fib, p);
        if let Some(t) = &self.sp.trace {
            t.end(traced, &self.sp.stats);
        }
    }

    fn handle_punted(&mut self, fib: &Fib, p: Punted) {
        self.stats().packets.fetch_add(1, Relaxed);
        let Punted {
            mbuf,
            reason,
            in_port,
        } = p;
        match reason {
            PuntReason::Arp => self.arp_input(mbuf, in_port),
            PuntReason::Ndp => self.ndp_input(mbuf, in_port),
            PuntReason::LocalDelivery => self.local(fib, mbuf, in_port),
            PuntReason::LinkLocalMulticast => self.up(mbuf, in_port),
            PuntReason::TtlExpired { in_port } => self.time_exceeded(fib, mbuf, in_port),
            PuntReason::FragNeeded { in_port, mtu } => self.frag_needed(fib, mbuf, in_port, mtu),
            PuntReason::Unreachable { in_port } => self.unreachable(fib, mbuf, in_port),
            PuntReason::ArpNeeded { .. } | PuntReason::Glean { .. } => {
                self.route(fib, mbuf, in_port, Verdict::SlowPath(reason));
            }
            PuntReason::RouterAlert | PuntReason::IpOptions => {
                self.discard(mbuf, SlowDrop::Unhandled)
            }
        }
    }

    /// Retries held packets against a new table.
    fn retry_held(&mut self, fib: &Fib) {
        self.unmark_adjs();
        for h in self.pending.take_all() {
            let Held {
                mut mbuf, in_port, ..
            } = h;
            let mut v = [Verdict::Forward { port: 0 }];
            if in_port == ORIGINATED {
                v[0] = self.sp.pipeline.originate(fib, &mut mbuf);
            } else {
                self.sp.pipeline.process_burst(
                    fib,
                    in_port,
                    std::slice::from_mut(&mut mbuf),
                    &mut v,
                );
            }
            self.route(fib, mbuf, in_port, v[0]);
        }
        self.gauges();
    }

    /// Periodic work: gives up on old resolutions, asks again, probes and ages learned
    /// neighbors, and hands queued updates to the control side.
    fn tick(&mut self) {
        let now = self.now_ns();
        let neighbors = &self.neighbors;
        let (dropped, ask, ended) = self
            .pending
            .expire(now, |port, a| neighbors.get_addr(port, a).is_some());
        for h in dropped {
            let why = match h.ndp {
                true => SlowDrop::NdpUnresolved,
                false => SlowDrop::ArpUnresolved,
            };
            self.discard(h.mbuf, why);
        }
        for (port, a) in ended {
            if matches!(a, NbrAddr::V6(_)) && self.neighbors.get_addr(port, a).is_none() {
                self.stats().ndp(NdpCount::ResolutionFailed);
            }
            self.unmark(port, a);
        }
        for (port, a) in ask {
            self.solicit(port, a, None);
        }
        for (port, a, mac) in self.neighbors.age(now) {
            self.solicit(port, a, Some(mac));
        }
        self.neighbors.flush(&self.sp.events);
        self.gauges();
        self.family_gauges();
        self.publish_neighbors();
    }

    /// Learned and resolving neighbours by family: a walk of both tables, so on the
    /// tick (which walks the learned ones to age them anyway), never per packet.
    fn family_gauges(&self) {
        let c = &self.sp.stats;
        let fam = |a: &NbrAddr| matches!(a, NbrAddr::V6(_)) as usize;
        let mut learned = [0u64; 2];
        for a in self.neighbors.addresses() {
            learned[fam(&a)] += 1;
        }
        let mut resolving = [0u64; 2];
        for ((_, a), _) in self.pending.resolving() {
            resolving[fam(&a)] += 1;
        }
        for i in 0..2 {
            c.neighbors[i].store(learned[i], Relaxed);
            c.resolving[i].store(resolving[i], Relaxed);
        }
    }

    /// Frees what is left at shutdown, counted.
    fn shut_down(&mut self, rx: &PuntReceivers) {
        for h in self.pending.take_all() {
            self.discard(h.mbuf, SlowDrop::Shutdown);
        }
        for p in rx.control.try_iter().chain(rx.data.try_iter()) {
            self.stats().packets.fetch_add(1, Relaxed);
            self.discard(p.mbuf, SlowDrop::Shutdown);
        }
        self.gauges();
    }
}

impl SlowPath {
    /// Runs until `stop` is set. Packets left in the queue are freed on return.
    pub fn run(self, rx: PuntReceivers) {
        let errors = TokenBucket::new(self.icmp.rate_per_sec, self.icmp.burst);
        let echo = TokenBucket::new(self.icmp.echo_rate_per_sec, self.icmp.echo_burst);
        let mut reader: Option<OfflineReader<Fib>> = Some(
            self.rcu
                .register()
                .expect("a reader slot for the slow path")
                .offline(),
        );
        let mut st = State {
            neighbors: Neighbors::new(self.arp),
            sp: self,
            pending: Pending::default(),
            marked: HashSet::new(),
            marked_adjs: HashMap::new(),
            errors,
            echo,
            start: Instant::now(),
            scratch: vec![0u8; MAX_ERROR_FRAME.max(2048)],
        };
        let mut last_gen = 0;
        while !st.sp.stop.load(Relaxed) {
            let Ok(first) = rx.wait(Duration::from_millis(50)) else {
                // Every worker is gone (they hold the senders): one died, or the runtime
                // is stopping and sets `stop` next. Ending here raced the runtime's check
                // of the dead worker, which then named this thread as the one that died.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            if let Some(ports) = st.sp.port_updates.try_iter().last() {
                st.sp.ports = ports;
            }
            let online = reader.take().expect("reader present").online();
            {
                let fib = online.load();
                if fib.generation() != last_gen {
                    last_gen = fib.generation();
                    st.retry_held(fib);
                }
                if let Some(p) = first {
                    st.handle(fib, p);
                    for p in std::iter::from_fn(|| rx.try_next()).take(256) {
                        st.handle(fib, p);
                    }
                }
                st.tick();
            }
            reader = Some(online.offline());
        }
        st.shut_down(&rx);
    }
}
