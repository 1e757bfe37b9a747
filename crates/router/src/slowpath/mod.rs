//! The slow path: everything a worker punts (ARP, packets for the router, ICMP to
//! generate, packets waiting for a neighbor's MAC), on its own thread.
//!
//! It transmits through a worker (which owns the TX queues, so there are no TX locks and
//! a device with one TX queue per worker suffices), reads the table through its own
//! RCU reader (offline while it waits for work), allocates reply frames from the shared
//! mempool, and sends what it generates through the same pipeline as forwarded traffic,
//! so an ICMP reply to a labelled packet is label-switched like the packet was.
//! It never blocks a worker: workers hand it packets over a bounded queue.

mod arp;

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use config::startup::PortIface;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use dpdk::{Mbuf, Mempool};
use net::fib::Fib;
use net::icmp::{self, IcmpConfig, TokenBucket, MAX_ERROR_FRAME};
use net::packet::PacketBuf;
use net::pipeline::{Pipeline, PuntReason, Verdict, ORIGINATED};
use net::rcu::{OfflineReader, Rcu};

use crate::metrics::{ControlStats, IcmpKind};
use crate::worker::{Injected, Punted};
use arp::{ArpInput, Held, Resolver};

/// What the slow path tells the control side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowPathEvent {
    /// A neighbor's MAC was learned by ARP: republish the table with it.
    NeighborLearned { port: u16, ip: u32, mac: [u8; 6] },
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
    pub stats: Arc<ControlStats>,
    pub events: Sender<SlowPathEvent>,
    pub stop: Arc<AtomicBool>,
}

/// First IPv4 destination in a frame (below any labels).
fn ipv4_dst(frame: &[u8]) -> Option<u32> {
    let mut off = 12;
    let mut et = u16::from_be_bytes([*frame.get(off)?, *frame.get(off + 1)?]);
    off += 2;
    if et == 0x8100 {
        et = u16::from_be_bytes([*frame.get(off + 2)?, *frame.get(off + 3)?]);
        off += 4;
    }
    if et == 0x8847 {
        loop {
            let w = u32::from_be_bytes(frame.get(off..off + 4)?.try_into().ok()?);
            off += 4;
            if w & 0x100 != 0 {
                break;
            }
        }
    } else if et != 0x0800 {
        return None;
    }
    if frame.get(off)? >> 4 != 4 {
        return None;
    }
    Some(u32::from_be_bytes(
        frame.get(off + 16..off + 20)?.try_into().ok()?,
    ))
}

struct State {
    sp: SlowPath,
    resolver: Resolver,
    bucket: TokenBucket,
    start: Instant,
    scratch: Vec<u8>,
}

impl State {
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn send_frame(&mut self, port: u16, frame: &[u8]) {
        match self.sp.pool.alloc_with(frame) {
            Some(m) => self.transmit(port, m),
            None => {
                self.sp.stats.slow_path_alloc_failures.fetch_add(1, Relaxed);
            }
        }
    }

    /// Sends an mbuf through the pipeline's decision (already made: `v`).
    fn route(&mut self, fib: &Fib, m: Mbuf, in_port: u16, v: Verdict) {
        match v {
            Verdict::Forward { port } => self.transmit(port, m),
            Verdict::SlowPath(PuntReason::ArpNeeded { adj }) => {
                let a = fib.adjacency(adj);
                let ip = u32::from_be_bytes(a.neighbor);
                let port = a.port;
                self.hold(port, ip, Held { mbuf: m, in_port });
            }
            Verdict::SlowPath(PuntReason::Glean { port }) => match ipv4_dst(m.data()) {
                Some(ip) => self.hold(port, ip, Held { mbuf: m, in_port }),
                None => drop(m),
            },
            _ => {
                self.sp.stats.slow_path_dropped.fetch_add(1, Relaxed);
                drop(m);
            }
        }
    }

    fn transmit(&mut self, port: u16, mbuf: Mbuf) {
        if self.sp.inject.try_send(Injected { port, mbuf }).is_err() {
            self.sp.stats.slow_path_dropped.fetch_add(1, Relaxed);
        }
    }

    fn hold(&mut self, port: u16, ip: u32, h: Held) {
        let (ask, rejected) = self.resolver.hold(port, ip, h, Instant::now());
        if rejected.is_some() {
            self.sp.stats.slow_path_dropped.fetch_add(1, Relaxed);
        }
        if ask {
            self.arp_request(port, ip);
        }
        self.sp
            .stats
            .arp_pending
            .store(self.resolver.pending_count() as u64, Relaxed);
    }

    fn arp_request(&mut self, port: u16, ip: u32) {
        if let Some(p) = self.sp.ports.get(port as usize) {
            if let Some(f) = arp::request(p, ip) {
                self.send_frame(port, &f);
            }
        }
    }

    /// Builds and sends an ICMP message with `build`, rate limited.
    fn icmp(
        &mut self,
        fib: &Fib,
        in_port: u16,
        kind: IcmpKind,
        limited: bool,
        build: impl FnOnce(&IcmpConfig, &Fib, &mut [u8]) -> Result<icmp::Reply, icmp::IcmpError>,
    ) {
        if limited && !self.bucket.allow(self.now_ns()) {
            self.sp.stats.icmp_rate_limited.fetch_add(1, Relaxed);
            return;
        }
        let mut out = std::mem::take(&mut self.scratch);
        let r = build(&self.sp.icmp, fib, &mut out);
        if let Ok(reply) = r {
            if let Some(mut m) = self.sp.pool.alloc_with(&out[..reply.len]) {
                let v = icmp::send(&self.sp.pipeline, fib, in_port, reply.via, &mut m);
                if matches!(v, Verdict::Forward { .. }) {
                    self.sp.stats.icmp(kind);
                }
                // Held under ORIGINATED until ARP resolves, so that it is retried as the
                // router's own packet, not checked as one received from outside.
                let held_port = match reply.via {
                    icmp::SendVia::Route => ORIGINATED,
                    icmp::SendVia::LabelSwitch => in_port,
                };
                self.route(fib, m, held_port, v);
            }
        }
        self.scratch = out;
    }

    fn handle(&mut self, fib: &Fib, p: Punted) {
        self.sp.stats.slow_path_packets.fetch_add(1, Relaxed);
        let Punted {
            mbuf,
            reason,
            in_port,
        } = p;
        match reason {
            PuntReason::Arp => {
                let Some(port) = self.sp.ports.get(in_port as usize).cloned() else {
                    return;
                };
                let mut learned = None;
                if let ArpInput::Reply(f) = self.resolver.input(&port, mbuf.data(), &mut learned) {
                    self.send_frame(in_port, &f);
                }
                if let Some((ip, mac)) = learned {
                    self.sp
                        .stats
                        .arp_entries
                        .store(self.resolver.known_count() as u64, Relaxed);
                    let _ = self.sp.events.try_send(SlowPathEvent::NeighborLearned {
                        port: in_port,
                        ip,
                        mac,
                    });
                }
            }
            PuntReason::LocalDelivery => {
                let data = mbuf.data().to_vec();
                self.icmp(fib, in_port, IcmpKind::EchoReply, false, |cfg, _, out| {
                    icmp::echo_reply(cfg, &data, out)
                });
            }
            PuntReason::TtlExpired { in_port: ip } => {
                let data = mbuf.data().to_vec();
                self.icmp(fib, ip, IcmpKind::TimeExceeded, true, |cfg, fib, out| {
                    icmp::time_exceeded(cfg, fib, ip, &data, out)
                });
            }
            PuntReason::FragNeeded { in_port: ip, mtu } => {
                let data = mbuf.data().to_vec();
                self.icmp(fib, ip, IcmpKind::DestUnreachable, true, |cfg, fib, out| {
                    icmp::frag_needed(cfg, fib, ip, &data, mtu, out)
                });
            }
            PuntReason::ArpNeeded { .. } | PuntReason::Glean { .. } => {
                self.route(fib, mbuf, in_port, Verdict::SlowPath(reason));
            }
            PuntReason::RouterAlert | PuntReason::IpOptions => {
                self.sp.stats.slow_path_dropped.fetch_add(1, Relaxed);
            }
        }
    }

    /// Retries held packets against a new table.
    fn retry_held(&mut self, fib: &Fib) {
        for h in self.resolver.take_all() {
            let Held { mut mbuf, in_port } = h;
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
        self.sp
            .stats
            .arp_pending
            .store(self.resolver.pending_count() as u64, Relaxed);
    }
}

impl SlowPath {
    /// Runs until `stop` is set. Packets left in the queue are freed on return.
    pub fn run(self, rx: Receiver<Punted>) {
        let bucket = TokenBucket::new(self.icmp.rate_per_sec, self.icmp.burst);
        let mut reader: Option<OfflineReader<Fib>> = Some(
            self.rcu
                .register()
                .expect("a reader slot for the slow path")
                .offline(),
        );
        let mut st = State {
            sp: self,
            resolver: Resolver::default(),
            bucket,
            start: Instant::now(),
            scratch: vec![0u8; MAX_ERROR_FRAME.max(2048)],
        };
        let mut last_gen = 0;
        while !st.sp.stop.load(Relaxed) {
            let first = match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(p) => Some(p),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let online = reader.take().expect("reader present").online();
            {
                let fib = online.load();
                if fib.generation() != last_gen {
                    last_gen = fib.generation();
                    st.retry_held(fib);
                }
                if let Some(p) = first {
                    st.handle(fib, p);
                    for p in rx.try_iter().take(256) {
                        st.handle(fib, p);
                    }
                }
                let (dropped, ask) = st.resolver.expire(Instant::now());
                if !dropped.is_empty() {
                    st.sp
                        .stats
                        .slow_path_dropped
                        .fetch_add(dropped.len() as u64, Relaxed);
                }
                for (port, ip) in ask {
                    st.arp_request(port, ip);
                }
            }
            reader = Some(online.offline());
        }
        drop(st.resolver.take_all());
        for p in rx.try_iter() {
            drop(p);
        }
    }
}
