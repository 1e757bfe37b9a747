//! Down: what the kernel sends on a control interface goes out of its port, through an
//! inject queue of its own that the worker (which owns the TX queues) takes before the
//! slow path's, so ICMP for a flood never delays it; counted and rate limited per
//! port so the control side can never starve forwarding. Too-big and runt frames, and
//! the kernel's ARP replies (the router answers ARP for its addresses itself, so the
//! link sees one answer), are dropped and counted.
//!
//! The interface's carrier follows the port's link state (checked every [`POLL`]).
//! An interface deleted from outside (read fails with EBADFD) is logged and recreated,
//! at most once per [`RECREATE_EVERY`]; the thread sleeps in `poll(2)`, never spins.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Sender, TrySendError};
use dpdk::Mempool;
use net::icmp::TokenBucket;
use net::wire::arp::{ArpPacket, OP_REPLY};
use net::wire::ethernet::{EthernetFrame, ETHERTYPE_ARP, ETHERTYPE_IPV6};
use net::wire::ipv6::{HEADER_LEN as IP6_LEN, NH_ICMPV6};
use net::wire::ndp::TYPE_NEIGHBOR_ADVERT;

use super::stats::DownDrop;
use super::tap::{ControlIfaces, Tap};
use crate::worker::Injected;

/// How long the thread sleeps in `poll` at most (it checks `stop` this often).
const POLL: Duration = Duration::from_millis(100);
/// How often a deleted interface is created again.
pub const RECREATE_EVERY: Duration = Duration::from_secs(1);
/// Frames per second (and burst) one control interface may send down.
pub const RATE_PER_SEC: u32 = 20_000;
pub const RATE_BURST: u32 = 2_000;
/// Frames read from one interface per wake-up, so one cannot starve the others.
const READ_BUDGET: usize = 64;

/// Ethernet header plus one VLAN tag: a frame may be this much longer than the MTU.
const L2_OVERHEAD: usize = 18;

/// Whether a frame the kernel sent may go out of a port with `mtu`.
pub fn admit(frame: &[u8], mtu: u16) -> Result<(), DownDrop> {
    let eth = EthernetFrame::new_checked(frame).map_err(|_| DownDrop::Runt)?;
    if frame.len() > mtu as usize + L2_OVERHEAD {
        return Err(DownDrop::TooBig);
    }
    let arp_reply = eth.ethertype() == ETHERTYPE_ARP
        && ArpPacket::new_checked(eth.payload()).is_ok_and(|a| a.operation() == OP_REPLY);
    if arp_reply {
        return Err(DownDrop::ArpReplyByRouter);
    }
    // The kernel sees the router's NDP too (mirrored up); the router answers it.
    let ip = eth.payload();
    let advert = eth.ethertype() == ETHERTYPE_IPV6
        && ip.get(6) == Some(&NH_ICMPV6)
        && ip.get(IP6_LEN) == Some(&TYPE_NEIGHBOR_ADVERT);
    if advert {
        return Err(DownDrop::NaByRouter);
    }
    Ok(())
}

/// The down thread's setup.
pub struct Down {
    pub ifs: Arc<ControlIfaces>,
    pub pool: Arc<Mempool>,
    pub inject: Sender<Injected>,
    pub stop: Arc<AtomicBool>,
    /// DPDK port id of each port index (for its link state).
    pub dev_ids: Vec<u16>,
    /// `mplsrouter capture --direction tx`: what the kernel sends is transmitted too.
    pub capture: std::cell::RefCell<Option<crate::trace::TraceTap>>,
}

impl Down {
    /// Runs until `stop` is set.
    pub fn run(self) {
        let start = Instant::now();
        let mut buckets: Vec<TokenBucket> = self
            .ifs
            .taps
            .iter()
            .map(|_| TokenBucket::new(RATE_PER_SEC, RATE_BURST))
            .collect();
        let mut next_try: Vec<Option<Instant>> = vec![None; self.ifs.taps.len()];
        let mut buf = vec![0u8; 65_536];
        let mut carrier: Vec<Option<bool>> = vec![None; self.ifs.taps.len()];
        while !self.stop.load(Relaxed) {
            self.recreate_due(&mut next_try, &mut carrier);
            self.sync_carrier(&mut carrier);
            let open: Vec<(usize, Arc<File>)> = (self.ifs.taps.iter().enumerate())
                .filter_map(|(i, t)| Some((i, t.file()?)))
                .collect();
            let files: Vec<&File> = open.iter().map(|(_, f)| &**f).collect();
            let mut ready = vec![false; files.len()];
            if files.is_empty() {
                std::thread::sleep(POLL);
                continue;
            }
            if let Err(e) = dpdk::tap::poll_readable(&files, &mut ready, POLL) {
                eprintln!("cpif: poll failed ({e}); retrying");
                std::thread::sleep(POLL);
                continue;
            }
            for ((i, f), r) in open.iter().zip(&ready) {
                if *r {
                    let now = start.elapsed().as_nanos() as u64;
                    self.read_from(&self.ifs.taps[*i], f, &mut buckets[*i], now, &mut buf);
                    if self.ifs.taps[*i].file().is_none() {
                        next_try[*i] = Some(Instant::now() + RECREATE_EVERY);
                    }
                }
            }
        }
    }

    /// Reads up to [`READ_BUDGET`] frames from `tap` and sends them down.
    fn read_from(&self, tap: &Tap, f: &File, bucket: &mut TokenBucket, now: u64, buf: &mut [u8]) {
        let mtu = self.ifs.ports[tap.port as usize].mtu;
        for _ in 0..READ_BUDGET {
            let n = match (&*f).read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    eprintln!(
                        "cpif: control interface {:?} of port {:?} is gone ({e}); recreating it",
                        tap.name, self.ifs.ports[tap.port as usize].name
                    );
                    self.ifs.stats().lost.fetch_add(1, Relaxed);
                    tap.lost();
                    return;
                }
            };
            self.ifs.stats().down.fetch_add(1, Relaxed);
            if let Err(why) = self.send(tap.port, &buf[..n], mtu, bucket, now) {
                self.ifs.stats().drop(why);
            }
        }
    }

    fn send(
        &self,
        port: u16,
        frame: &[u8],
        mtu: u16,
        bucket: &mut TokenBucket,
        now: u64,
    ) -> Result<(), DownDrop> {
        admit(frame, mtu)?;
        if !bucket.allow(now) {
            return Err(DownDrop::RateLimited);
        }
        let mbuf = self.pool.alloc_with(frame).ok_or(DownDrop::NoMbuf)?;
        self.inject
            .try_send(Injected { port, mbuf })
            .map_err(|e| match e {
                TrySendError::Full(_) => DownDrop::InjectFull,
                // The worker is gone: the router is stopping.
                TrySendError::Disconnected(_) => DownDrop::Shutdown,
            })?;
        self.ifs.stats().down_sent.fetch_add(1, Relaxed);
        if let Some(t) = self.capture.borrow_mut().as_mut() {
            t.sent(port, frame);
        }
        Ok(())
    }

    /// Gives each interface its port's link state when that changed (or is not set yet).
    fn sync_carrier(&self, carrier: &mut [Option<bool>]) {
        for (i, t) in self.ifs.taps.iter().enumerate() {
            let (Some(f), Some(&dev)) = (t.file(), self.dev_ids.get(t.port as usize)) else {
                continue;
            };
            let up = dpdk::link(dev).up;
            if carrier[i] == Some(up) {
                continue;
            }
            match dpdk::tap::set_carrier(&f, up) {
                Ok(()) => {
                    if carrier[i].is_some() {
                        println!(
                            "cpif: {:?}: port link {}",
                            t.name,
                            if up { "up" } else { "down" }
                        );
                    }
                    carrier[i] = Some(up);
                }
                Err(e) => {
                    eprintln!(
                        "cpif: {:?}: cannot set the carrier ({e}); link state not mirrored",
                        t.name
                    );
                    carrier[i] = Some(up);
                }
            }
        }
    }

    /// Creates again the interfaces whose time has come; a failure is logged and retried.
    fn recreate_due(&self, next_try: &mut [Option<Instant>], carrier: &mut [Option<bool>]) {
        let now = Instant::now();
        for (i, t) in self.ifs.taps.iter().enumerate() {
            if t.file().is_some() || next_try[i].is_some_and(|at| now < at) {
                continue;
            }
            match self.ifs.recreate(t) {
                Ok(()) => {
                    println!(
                        "cpif: control interface {:?} recreated (ifindex {})",
                        t.name,
                        t.ifindex()
                    );
                    next_try[i] = None;
                    carrier[i] = None;
                }
                Err(e) => {
                    eprintln!("cpif: {e}; retrying in {RECREATE_EVERY:?}");
                    next_try[i] = Some(now + RECREATE_EVERY);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(len: usize, ethertype: [u8; 2], op: [u8; 2]) -> Vec<u8> {
        let mut f = vec![0u8; len.max(14)];
        f[12..14].copy_from_slice(&ethertype);
        f.truncate(len);
        if len >= 22 {
            // Ethernet/IPv4 ARP: hardware type 1, protocol 0x0800, lengths 6 and 4.
            f[14..20].copy_from_slice(&[0, 1, 8, 0, 6, 4]);
            f[20..22].copy_from_slice(&op);
        }
        f
    }

    #[test]
    fn admits_what_the_port_can_carry() {
        assert_eq!(admit(&frame(60, [8, 0], [0, 0]), 1500), Ok(()));
        assert_eq!(admit(&frame(1518, [8, 0], [0, 0]), 1500), Ok(()));
        assert_eq!(
            admit(&frame(1519, [8, 0], [0, 0]), 1500),
            Err(DownDrop::TooBig)
        );
        assert_eq!(admit(&frame(13, [8, 0], [0, 0]), 1500), Err(DownDrop::Runt));
        // ARP request from the kernel goes; its replies are the router's to send.
        assert_eq!(admit(&frame(42, [8, 6], [0, 1]), 1500), Ok(()));
        assert_eq!(
            admit(&frame(42, [8, 6], [0, 2]), 1500),
            Err(DownDrop::ArpReplyByRouter)
        );
        // Its neighbour solicitations go, its advertisements are the router's to send.
        let mut ndp = frame(86, [0x86, 0xdd], [0, 0]);
        ndp[14 + 6] = 58;
        ndp[54] = 135;
        assert_eq!(admit(&ndp, 1500), Ok(()));
        ndp[54] = 136;
        assert_eq!(admit(&ndp, 1500), Err(DownDrop::NaByRouter));
    }
}
