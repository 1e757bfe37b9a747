//! Packet trace (`mplsrouter trace`): the next packets a worker decides, copied with
//! their verdict for the control socket to explain.
//!
//! The worker tests one flag per burst ([`TraceTap::armed_for`]); only while a trace is
//! armed does it copy the first [`SNAP`] bytes of each packet before and after the
//! decision and hand the record over a bounded queue (preallocated: no allocation, no
//! blocking; a full queue drops the record). It must never cost an unarmed worker more
//! than that flag test, and never hold a packet back.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use dpdk::{Mbuf, BURST_MAX};
use net::packet::PacketBuf;
use net::pipeline::Verdict;

/// Bytes kept of each traced frame (headers: Ethernet, a label stack, IPv4, L4 ports).
pub const SNAP: usize = 128;
/// Records queued between the workers and the control socket.
pub const QUEUE: usize = 1024;
/// Port filter value meaning "any port".
const ANY_PORT: u32 = u32::MAX;

/// One traced packet.
#[derive(Clone, Copy, Debug)]
pub struct TraceRecord {
    pub lcore: u32,
    pub in_port: u16,
    /// Frame lengths (the copies hold at most [`SNAP`] bytes).
    pub in_len: u16,
    pub out_len: u16,
    pub frame_in: [u8; SNAP],
    pub verdict: Verdict,
    pub frame_out: [u8; SNAP],
}

impl TraceRecord {
    pub fn input(&self) -> &[u8] {
        &self.frame_in[..(self.in_len as usize).min(SNAP)]
    }
    pub fn output(&self) -> &[u8] {
        &self.frame_out[..(self.out_len as usize).min(SNAP)]
    }
}

/// The control side's handle: arm, filter, collect.
#[derive(Clone)]
pub struct TraceControl {
    pub armed: Arc<AtomicBool>,
    pub port: Arc<AtomicU32>,
    pub records: Receiver<TraceRecord>,
}

/// A worker's end.
pub struct TraceTap {
    lcore: u32,
    armed: Arc<AtomicBool>,
    port: Arc<AtomicU32>,
    tx: Sender<TraceRecord>,
    /// Input copies of the burst being decided, and their lengths.
    before: Box<[([u8; SNAP], u16)]>,
}

/// The shared state and one tap per worker lcore.
pub fn channel(lcores: &[u32]) -> (TraceControl, Vec<TraceTap>) {
    let (tx, rx) = crossbeam_channel::bounded(QUEUE);
    let armed = Arc::new(AtomicBool::new(false));
    let port = Arc::new(AtomicU32::new(ANY_PORT));
    let taps = lcores
        .iter()
        .map(|&lcore| TraceTap {
            lcore,
            armed: armed.clone(),
            port: port.clone(),
            tx: tx.clone(),
            before: vec![([0u8; SNAP], 0u16); BURST_MAX].into_boxed_slice(),
        })
        .collect();
    let ctl = TraceControl {
        armed,
        port,
        records: rx,
    };
    (ctl, taps)
}

impl TraceControl {
    /// Arms every worker for packets received on `port` (None: any).
    pub fn arm(&self, port: Option<u16>) {
        self.port.store(port.map_or(ANY_PORT, u32::from), Relaxed);
        self.armed.store(true, Relaxed);
    }
    pub fn disarm(&self) {
        self.armed.store(false, Relaxed);
    }
}

fn snap(p: &Mbuf, into: &mut [u8; SNAP]) -> u16 {
    let d = p.data();
    let n = d.len().min(SNAP);
    into[..n].copy_from_slice(&d[..n]);
    d.len().min(u16::MAX as usize) as u16
}

impl TraceTap {
    /// The one test per burst: whether this burst from `port` is traced.
    #[inline(always)]
    pub fn armed_for(&self, port: u16) -> bool {
        self.armed.load(Relaxed) && {
            let p = self.port.load(Relaxed);
            p == ANY_PORT || p == u32::from(port)
        }
    }

    /// Copies the burst as received (call before the decision).
    pub fn before(&mut self, pkts: &[Mbuf]) {
        for (p, b) in pkts.iter().zip(self.before.iter_mut()) {
            b.1 = snap(p, &mut b.0);
        }
    }

    /// Hands over one record per packet (call after the decision).
    pub fn after(&mut self, in_port: u16, pkts: &[Mbuf], verdicts: &[Verdict]) {
        for ((p, v), b) in pkts.iter().zip(verdicts).zip(self.before.iter()) {
            let mut r = TraceRecord {
                lcore: self.lcore,
                in_port,
                in_len: b.1,
                out_len: 0,
                frame_in: b.0,
                verdict: *v,
                frame_out: [0; SNAP],
            };
            if let Verdict::Forward { .. } = v {
                r.out_len = snap(p, &mut r.frame_out);
            }
            if self.tx.try_send(r).is_err() {
                return; // full: the collector has what it asked for
            }
        }
    }
}
