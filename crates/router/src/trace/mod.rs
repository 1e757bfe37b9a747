//! Packet trace (`mplsrouter trace`) and capture (`mplsrouter capture`): the next
//! packets a worker decides, copied with their verdict, or the frames a port receives or
//! transmits, for the control socket to explain or write to a pcap.
//!
//! The worker tests one flag per burst ([`TraceTap::armed_for`]); only while armed does
//! it read the plan (mode, port, [`filter::Filter`] as plain data), test the filter on
//! each packet of the burst and copy the ones that pass into a preallocated bounded queue
//! (no allocation, no lock, no blocking; a full queue drops the record, counted for a
//! capture). Captures take at most one rate shared by all taps (GCRA on the TSC: a
//! compare-and-swap per frame taken, a load per frame refused). It must
//! never cost an unarmed worker more than that flag test, and never hold a packet back.

mod capture;
pub mod filter;
pub mod slow;

pub use capture::{CapturePlan, CaptureRecord, Skipped};

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use dpdk::{Mbuf, BURST_MAX};
use net::packet::PacketBuf;
use net::pipeline::Verdict;

use filter::{Filter, FilterCell};

/// Bytes kept of each traced frame (headers: Ethernet, a label stack, IPv4, L4 ports).
pub const SNAP: usize = 128;
/// Records queued between the workers and the control socket.
pub const QUEUE: usize = 1024;
/// Most bytes a capture keeps of a frame (a jumbo frame's worth); the default.
pub const MAX_SNAP: usize = 9216;
/// Captured frames queued between the workers and the control socket.
pub const CAPTURE_QUEUE: usize = 256;
/// Port value meaning "any port".
const ANY_PORT: u32 = u32::MAX;
/// Frames a capture may take at once before its rate applies.
const CAPTURE_BURST: u64 = 32;

/// What an armed worker does.
const MODE_TRACE: u32 = 0;
const MODE_RX: u32 = 1;
const MODE_TX: u32 = 2;

/// One traced packet.
#[derive(Clone, Copy, Debug)]
pub struct TraceRecord {
    /// The arming it belongs to (a worker may finish a burst of the previous one).
    pub session: u32,
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

/// What the control side sets before it arms the workers.
#[derive(Debug, Default)]
struct Plan {
    armed: AtomicBool,
    /// Bumped at each arming, after the fields below are written (Release): a worker
    /// reads it first (Acquire) and tags its records with it, so the collector drops
    /// records of an earlier arming.
    session: AtomicU32,
    mode: AtomicU32,
    port: AtomicU32,
    filter: FilterCell,
    snaplen: AtomicU32,
    /// Frames per second a capture takes, all taps together.
    pps: AtomicU32,
    /// The rate's theoretical arrival time, TSC ([`TraceTap::allow`]; 0 at arming),
    /// on a cache line of its own: the only field written while armed.
    tat: Padded,
}

#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded(AtomicU64);

/// The plan as one armed burst reads it.
#[derive(Clone, Copy, Debug, Default)]
struct Armed {
    session: u32,
    mode: u32,
    port: u32,
    filter: Filter,
    snaplen: usize,
    pps: u64,
}

impl Plan {
    fn read(&self) -> Armed {
        Armed {
            session: self.session.load(Acquire),
            mode: self.mode.load(Relaxed),
            port: self.port.load(Relaxed),
            filter: self.filter.load(),
            snaplen: (self.snaplen.load(Relaxed) as usize).clamp(1, MAX_SNAP),
            pps: u64::from(self.pps.load(Relaxed)).max(1),
        }
    }
}

/// The control side's handle: arm, filter, collect.
#[derive(Clone)]
pub struct TraceControl {
    plan: Arc<Plan>,
    pub records: Receiver<TraceRecord>,
    pub frames: Receiver<CaptureRecord>,
    pub skipped: Vec<Arc<Skipped>>,
    /// The slow path's records of what it did with punted packets ([`slow`]).
    pub slow: slow::SlowControl,
    pub tsc_hz: u64,
    /// The capture tap for what the kernel sends down the control interfaces, taken
    /// once by their down thread ([`TraceControl::take_control_if_tap`]).
    control_if: Arc<std::sync::Mutex<Option<TraceTap>>>,
}

/// A worker's end.
pub struct TraceTap {
    lcore: u32,
    plan: Arc<Plan>,
    tx: Sender<TraceRecord>,
    frames: Sender<CaptureRecord>,
    skipped: Arc<Skipped>,
    tsc_hz: u64,
    /// The plan of the burst being decided.
    now: Armed,
    /// Packets of the burst being traced (bit i: packet i), and their input copies.
    picked: u64,
    before: Box<[([u8; SNAP], u16)]>,
    /// When the last capture decision was taken (TSC).
    last_tsc: u64,
}

/// The lcore of the frames the slow path sends ([`TraceTap::sent`]).
pub const SLOW_PATH_LCORE: u32 = u32::MAX;
/// The "lcore" of the control interfaces' down thread's capture tap.
pub const CONTROL_IF_LCORE: u32 = u32::MAX - 1;

/// The shared state, one tap per worker lcore and the slow path's tap.
pub fn channel(lcores: &[u32]) -> (TraceControl, Vec<TraceTap>) {
    let (tx, rx) = crossbeam_channel::bounded(QUEUE);
    let (ftx, frx) = crossbeam_channel::bounded(CAPTURE_QUEUE);
    let plan = Arc::new(Plan::default());
    let tsc_hz = dpdk::tsc_hz().max(1);
    let all: Vec<u32> = lcores
        .iter()
        .copied()
        .chain([SLOW_PATH_LCORE, CONTROL_IF_LCORE])
        .collect();
    let skipped: Vec<Arc<Skipped>> = all.iter().map(|_| Arc::default()).collect();
    let mut taps: Vec<TraceTap> = all
        .iter()
        .zip(&skipped)
        .map(|(&lcore, s)| TraceTap {
            lcore,
            plan: plan.clone(),
            tx: tx.clone(),
            frames: ftx.clone(),
            skipped: s.clone(),
            tsc_hz,
            now: Armed::default(),
            picked: 0,
            before: vec![([0u8; SNAP], 0u16); BURST_MAX].into_boxed_slice(),
            last_tsc: 0,
        })
        .collect();
    let control_if = Arc::new(std::sync::Mutex::new(taps.pop()));
    let sent = taps.pop();
    let ctl = TraceControl {
        control_if,
        plan,
        records: rx,
        frames: frx,
        skipped,
        slow: slow::SlowControl::new(sent),
        tsc_hz,
    };
    (ctl, taps)
}

impl TraceControl {
    /// The capture tap for the frames the kernel sends down the control interfaces
    /// (`None` after the first call).
    pub fn take_control_if_tap(&self) -> Option<TraceTap> {
        self.control_if
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Arms the workers; returns the session their records will carry.
    fn arm_with(&self, mode: u32, port: u32, filter: &Filter) -> u32 {
        let p = &self.plan;
        p.mode.store(mode, Relaxed);
        p.port.store(port, Relaxed);
        p.filter.store(filter);
        let session = p.session.fetch_add(1, Release).wrapping_add(1);
        // Releases the plan to the workers (they load `armed` with Acquire).
        p.armed.store(true, Release);
        session
    }

    /// Arms every worker to trace packets received on `port` (None: any) that pass
    /// `filter`; the slow path says what it did with those it gets.
    /// Returns (the workers' session, the slow path's session).
    pub fn arm(&self, port: Option<u16>, filter: &Filter) -> (u32, u32) {
        let slow = self.slow.arm(port, filter);
        (
            self.arm_with(MODE_TRACE, port.map_or(ANY_PORT, u32::from), filter),
            slow,
        )
    }

    /// Arms every worker to capture `c.port`'s frames that pass `filter`.
    /// Returns the session the workers' records will carry.
    pub fn arm_capture(&self, c: CapturePlan, filter: &Filter) -> u32 {
        self.plan.snaplen.store(c.snaplen, Relaxed);
        self.plan.pps.store(c.pps, Relaxed);
        self.plan.tat.0.store(0, Relaxed);
        let mode = (u32::from(c.rx) * MODE_RX) | (u32::from(c.tx) * MODE_TX);
        self.arm_with(mode, u32::from(c.port), filter)
    }

    /// Stops the workers (the slow path stays armed until [`slow::SlowControl::disarm`]).
    pub fn disarm(&self) {
        self.plan.armed.store(false, Relaxed);
    }

    /// Frames not captured so far, all workers: (over the rate, queue full).
    pub fn skipped(&self) -> (u64, u64) {
        self.skipped.iter().fold((0, 0), |(r, q), s| {
            (r + s.rate.load(Relaxed), q + s.queue_full.load(Relaxed))
        })
    }
}

fn snap(p: &Mbuf, into: &mut [u8; SNAP]) -> u16 {
    let d = p.data();
    let n = d.len().min(SNAP);
    into[..n].copy_from_slice(&d[..n]);
    d.len().min(u16::MAX as usize) as u16
}

impl TraceTap {
    /// The one test per burst: whether this burst from `port` is traced or captured.
    #[inline(always)]
    pub fn armed_for(&self, port: u16) -> bool {
        self.plan.armed.load(Acquire) && {
            let p = &self.plan;
            let m = p.mode.load(Relaxed);
            let at = p.port.load(Relaxed);
            m & MODE_TX != 0 || at == ANY_PORT || at == u32::from(port)
        }
    }

    /// Reads the plan and copies what the burst received on `port` holds for it (call
    /// before the decision).
    pub fn before(&mut self, port: u16, pkts: &[Mbuf]) {
        self.now = self.plan.read();
        self.picked = 0;
        let here = self.now.port == ANY_PORT || self.now.port == u32::from(port);
        if !here {
            return;
        }
        match self.now.mode {
            MODE_TRACE => {
                for (i, (p, b)) in pkts.iter().zip(self.before.iter_mut()).enumerate() {
                    if self.now.filter.matches(p.data()) {
                        self.picked |= 1 << i;
                        b.1 = snap(p, &mut b.0);
                    }
                }
            }
            m if m & MODE_RX != 0 => {
                let mut skip = (0, 0);
                for p in pkts {
                    if self.now.filter.matches(p.data()) {
                        self.capture(false, p.data(), &mut skip);
                    }
                }
                self.count_skipped(skip);
            }
            _ => {}
        }
    }

    /// Hands over the traced packets, or captures the transmitted ones (call after the
    /// decision).
    pub fn after(&mut self, in_port: u16, pkts: &[Mbuf], verdicts: &[Verdict]) {
        match self.now.mode {
            MODE_TRACE => self.traced(in_port, pkts, verdicts),
            m if m & MODE_TX != 0 => {
                let mut skip = (0, 0);
                for (p, v) in pkts.iter().zip(verdicts) {
                    let out =
                        matches!(*v, Verdict::Forward { port } if u32::from(port) == self.now.port);
                    if out && self.now.filter.matches(p.data()) {
                        self.capture(true, p.data(), &mut skip);
                    }
                }
                self.count_skipped(skip);
            }
            _ => {}
        }
    }

    fn traced(&mut self, in_port: u16, pkts: &[Mbuf], verdicts: &[Verdict]) {
        let mut left = self.picked;
        while left != 0 {
            let i = left.trailing_zeros() as usize;
            left &= left - 1;
            let (Some(p), Some(v), Some(b)) = (pkts.get(i), verdicts.get(i), self.before.get(i))
            else {
                return;
            };
            let mut r = TraceRecord {
                session: self.now.session,
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
