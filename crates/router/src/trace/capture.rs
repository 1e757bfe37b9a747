//! Capture's side of the taps: frames copied whole (up to the snap length) with a TSC
//! stamp, at most one rate shared by every tap, and the frames not taken counted.
//! Called only while a capture is armed; it must never block or allocate.

use std::sync::atomic::{AtomicU64, Ordering::*};

use super::{TraceTap, CAPTURE_BURST, MAX_SNAP, MODE_TX};

/// One captured frame.
#[derive(Clone, Copy, Debug)]
pub struct CaptureRecord {
    pub session: u32,
    pub lcore: u32,
    /// Transmitted (true) or received.
    pub tx: bool,
    /// TSC when the worker copied it.
    pub tsc: u64,
    /// The frame's length, and the bytes kept of it.
    pub len: u32,
    pub caplen: u32,
    pub data: [u8; MAX_SNAP],
}

impl CaptureRecord {
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.caplen as usize]
    }
}

/// Frames a worker did not capture: over the rate, or the queue was full. Written by its
/// worker only (one store per burst), summed by the control side.
#[derive(Debug, Default)]
pub struct Skipped {
    pub rate: AtomicU64,
    pub queue_full: AtomicU64,
}

/// What a capture takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapturePlan {
    pub port: u16,
    pub rx: bool,
    pub tx: bool,
    pub snaplen: u32,
    /// Frames per second, all workers together.
    pub pps: u32,
}

impl TraceTap {
    /// A frame the slow path hands a worker for `port` (ARP, ICMP it built): captured
    /// while a capture of `port`'s transmitted frames is armed (one flag test if not).
    pub fn sent(&mut self, port: u16, data: &[u8]) {
        if !self.plan.armed.load(Acquire) {
            return;
        }
        self.now = self.plan.read();
        let wanted = self.now.mode & MODE_TX != 0 && self.now.port == u32::from(port);
        if wanted && self.now.filter.matches(data) {
            let mut skip = (0, 0);
            self.capture(true, data, &mut skip);
            self.count_skipped(skip);
        }
    }

    /// Whether the capture's rate lets one more frame through now: a GCRA shared by
    /// every tap (the theoretical arrival time in TSC cycles, `plan.tat`): a frame over
    /// the rate costs one load, a frame taken one compare-and-swap.
    fn allow(&mut self) -> bool {
        let now = dpdk::rdtsc();
        self.last_tsc = now;
        let cost = (self.tsc_hz / self.now.pps).max(1);
        let tolerance = cost * (CAPTURE_BURST.min(self.now.pps) - 1);
        let tat = &self.plan.tat.0;
        let mut cur = tat.load(Relaxed);
        loop {
            let t = cur.max(now);
            if t - now > tolerance {
                return false;
            }
            match tat.compare_exchange_weak(cur, t + cost, Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(x) => cur = x,
            }
        }
    }

    pub(super) fn capture(&mut self, tx: bool, data: &[u8], skip: &mut (u64, u64)) {
        if !self.allow() {
            skip.0 += 1;
            return;
        }
        let n = data.len().min(self.now.snaplen);
        let mut r = CaptureRecord {
            session: self.now.session,
            lcore: self.lcore,
            tx,
            tsc: self.last_tsc,
            len: data.len() as u32,
            caplen: n as u32,
            data: [0; MAX_SNAP],
        };
        r.data[..n].copy_from_slice(&data[..n]);
        if self.frames.try_send(r).is_err() {
            skip.1 += 1;
        }
    }

    /// Publishes a burst's skipped frames (this worker is the only writer).
    pub(super) fn count_skipped(&self, (rate, full): (u64, u64)) {
        let s = &self.skipped;
        if rate > 0 {
            s.rate.store(s.rate.load(Relaxed) + rate, Relaxed);
        }
        if full > 0 {
            s.queue_full
                .store(s.queue_full.load(Relaxed) + full, Relaxed);
        }
    }
}
