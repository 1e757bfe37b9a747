//! Per-worker counters: written by one worker only, read by the control side.
//!
//! Each worker owns one cache-line-aligned [`WorkerCounters`]. The worker adds with a
//! relaxed load and a relaxed store (plain moves, no locked read-modify-write: it is the
//! only writer); readers sum snapshots at report or scrape time.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Room for the pipeline's drop reasons (indexed by the reason's discriminant).
pub const MAX_DROP_REASONS: usize = 32;

/// Upper bounds of the burst-size histogram buckets (received packets per non-empty poll).
pub const BURST_BUCKETS: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The histogram bucket of a burst of `n` packets (n >= 1).
#[inline]
pub fn burst_bucket(n: usize) -> usize {
    (usize::BITS - (n.max(1) - 1).leading_zeros()).min(BURST_BUCKETS.len() as u32 - 1) as usize
}

/// Counters of one worker.
#[repr(align(64))]
#[derive(Debug)]
pub struct WorkerCounters {
    pub lcore: u32,
    pub rx_packets: AtomicU64,
    /// Packets handed to a PMD's TX queue and accepted.
    pub tx_packets: AtomicU64,
    /// Packets a PMD refused (queue full), freed.
    pub tx_refused: AtomicU64,
    /// Frames from the slow path (ICMP, ARP) this worker queued for transmission; they
    /// are included in `tx_packets`.
    pub injected: AtomicU64,
    /// Packets handed to the slow path.
    pub slow_path: AtomicU64,
    /// Packets for the slow path dropped because its queue was full.
    pub punt_overflow: AtomicU64,
    /// Packets dropped by the pipeline, by reason index.
    pub drops: [AtomicU64; MAX_DROP_REASONS],
    /// Non-empty bursts received.
    pub bursts: AtomicU64,
    /// Non-empty bursts by size bucket ([`BURST_BUCKETS`]), not cumulative.
    pub burst_sizes: [AtomicU64; BURST_BUCKETS.len()],
    /// TSC cycles spent on non-empty polls / on empty polls.
    pub busy_cycles: AtomicU64,
    /// TSC cycles spent in the forwarding stage alone (classify, lookups, rewrite), a
    /// part of `busy_cycles`.
    pub forwarding_cycles: AtomicU64,
    pub idle_cycles: AtomicU64,
}

/// Adds `n` to a counter that only the calling thread writes.
#[inline(always)]
pub fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed) + n, Relaxed);
}

impl WorkerCounters {
    /// Zeroed counters for the worker on `lcore`.
    pub fn new(lcore: u32) -> WorkerCounters {
        WorkerCounters {
            lcore,
            rx_packets: AtomicU64::new(0),
            tx_packets: AtomicU64::new(0),
            tx_refused: AtomicU64::new(0),
            injected: AtomicU64::new(0),
            slow_path: AtomicU64::new(0),
            punt_overflow: AtomicU64::new(0),
            drops: [const { AtomicU64::new(0) }; MAX_DROP_REASONS],
            bursts: AtomicU64::new(0),
            burst_sizes: [const { AtomicU64::new(0) }; BURST_BUCKETS.len()],
            busy_cycles: AtomicU64::new(0),
            forwarding_cycles: AtomicU64::new(0),
            idle_cycles: AtomicU64::new(0),
        }
    }

    /// A consistent-enough copy for reporting.
    pub fn snapshot(&self) -> WorkerTotals {
        WorkerTotals {
            rx_packets: self.rx_packets.load(Relaxed),
            tx_packets: self.tx_packets.load(Relaxed),
            tx_refused: self.tx_refused.load(Relaxed),
            injected: self.injected.load(Relaxed),
            slow_path: self.slow_path.load(Relaxed),
            punt_overflow: self.punt_overflow.load(Relaxed),
            drops: std::array::from_fn(|i| self.drops[i].load(Relaxed)),
            bursts: self.bursts.load(Relaxed),
            burst_sizes: std::array::from_fn(|i| self.burst_sizes[i].load(Relaxed)),
            busy_cycles: self.busy_cycles.load(Relaxed),
            forwarding_cycles: self.forwarding_cycles.load(Relaxed),
            idle_cycles: self.idle_cycles.load(Relaxed),
        }
    }
}

/// Plain totals, summable across workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerTotals {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub tx_refused: u64,
    pub injected: u64,
    pub slow_path: u64,
    pub punt_overflow: u64,
    pub drops: [u64; MAX_DROP_REASONS],
    pub bursts: u64,
    pub burst_sizes: [u64; BURST_BUCKETS.len()],
    pub busy_cycles: u64,
    pub forwarding_cycles: u64,
    pub idle_cycles: u64,
}

impl WorkerTotals {
    /// Field-wise sum.
    pub fn add(&mut self, o: &WorkerTotals) {
        self.rx_packets += o.rx_packets;
        self.tx_packets += o.tx_packets;
        self.tx_refused += o.tx_refused;
        self.injected += o.injected;
        self.slow_path += o.slow_path;
        self.punt_overflow += o.punt_overflow;
        for (a, b) in self.drops.iter_mut().zip(o.drops.iter()) {
            *a += b;
        }
        self.bursts += o.bursts;
        for (a, b) in self.burst_sizes.iter_mut().zip(o.burst_sizes.iter()) {
            *a += b;
        }
        self.busy_cycles += o.busy_cycles;
        self.forwarding_cycles += o.forwarding_cycles;
        self.idle_cycles += o.idle_cycles;
    }

    /// Packets dropped by the pipeline, all reasons.
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_cache_line_aligned_and_sum() {
        assert_eq!(std::mem::align_of::<WorkerCounters>(), 64);
        let c = WorkerCounters::new(1);
        bump(&c.rx_packets, 5);
        bump(&c.drops[3], 2);
        let mut t = WorkerTotals::default();
        t.add(&c.snapshot());
        t.add(&c.snapshot());
        assert_eq!(t.rx_packets, 10);
        assert_eq!(t.dropped(), 4);
    }

    #[test]
    fn burst_buckets_are_upper_bounds() {
        for n in 1..=64usize {
            let b = burst_bucket(n);
            assert!(n as u64 <= BURST_BUCKETS[b], "{n} -> {b}");
            assert!(b == 0 || n as u64 > BURST_BUCKETS[b - 1], "{n} -> {b}");
        }
    }
}

/// Helpers for tests outside this crate.
#[doc(hidden)]
pub mod for_tests {
    use super::*;

    /// Records one burst of `rx` packets of which `dropped` were dropped (reason 0).
    pub fn bump_worker(c: &WorkerCounters, rx: u64, dropped: u64, burst: usize) {
        bump(&c.rx_packets, rx);
        bump(&c.drops[0], dropped);
        bump(&c.bursts, 1);
        bump(&c.burst_sizes[burst_bucket(burst)], 1);
    }
}
