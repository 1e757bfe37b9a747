//! Per-worker counters: written by one worker only, read by the control side.
//!
//! Each worker owns one cache-line-aligned [`WorkerCounters`]. The worker adds with a
//! relaxed load and a relaxed store (plain moves, no locked read-modify-write: it is the
//! only writer); readers sum snapshots at report or scrape time.

use std::sync::atomic::{fence, AtomicU64, Ordering::*};

use net::pipeline::{DropReason, Family, FamilyCounts};

use crate::stage_hist::{StageHist, BUCKETS as STAGE_BUCKETS};

/// Room for the drop reasons: the pipeline's ([`DropReason`], by index) then the
/// runtime's own ([`RuntimeDrop`]).
pub const MAX_DROP_REASONS: usize = 40;

/// Drops the worker decides itself, outside the pipeline. Counted in the same per-reason
/// array, after the pipeline's reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeDrop {
    /// The pipeline chose an egress port index that has no TX queue here.
    UnknownEgressPort,
    /// The slow path asked to send a frame on a port index that does not exist.
    InjectUnknownPort,
    /// A received mbuf chained over several segments: the pipeline reads one segment,
    /// so chains never reach it (the mempool's data room is sized for the largest MTU).
    MultiSegment,
    /// Punts over their reason's budget ([`crate::punt`]), dropped in the worker.
    GleanThrottled,
    TtlExpiredThrottled,
    FragNeededThrottled,
    EchoThrottled,
    ArpThrottled,
    OtherThrottled,
    /// Towards a neighbour whose ARP request is outstanding: not punted again.
    NeighborIncomplete,
    /// IPv6 packets without a route over their budget (each would draw an ICMPv6
    /// destination unreachable).
    UnreachableThrottled,
}

impl RuntimeDrop {
    /// Every runtime reason, in counter-index order.
    pub const ALL: [RuntimeDrop; 11] = [
        RuntimeDrop::UnknownEgressPort,
        RuntimeDrop::InjectUnknownPort,
        RuntimeDrop::MultiSegment,
        RuntimeDrop::GleanThrottled,
        RuntimeDrop::TtlExpiredThrottled,
        RuntimeDrop::FragNeededThrottled,
        RuntimeDrop::EchoThrottled,
        RuntimeDrop::ArpThrottled,
        RuntimeDrop::OtherThrottled,
        RuntimeDrop::NeighborIncomplete,
        RuntimeDrop::UnreachableThrottled,
    ];

    /// The stable snake_case name (a metric label value).
    pub const fn as_str(self) -> &'static str {
        match self {
            RuntimeDrop::UnknownEgressPort => "unknown_egress_port",
            RuntimeDrop::InjectUnknownPort => "inject_unknown_port",
            RuntimeDrop::MultiSegment => "multi_segment",
            RuntimeDrop::GleanThrottled => "glean_throttled",
            RuntimeDrop::TtlExpiredThrottled => "ttl_expired_throttled",
            RuntimeDrop::FragNeededThrottled => "frag_needed_throttled",
            RuntimeDrop::EchoThrottled => "echo_throttled",
            RuntimeDrop::ArpThrottled => "arp_throttled",
            RuntimeDrop::OtherThrottled => "other_throttled",
            RuntimeDrop::NeighborIncomplete => "neighbor_incomplete",
            RuntimeDrop::UnreachableThrottled => "unreachable_throttled",
        }
    }

    /// Position in the per-reason counter array.
    pub const fn index(self) -> usize {
        DropReason::COUNT + self as usize
    }
}

const _: () = assert!(DropReason::COUNT + RuntimeDrop::ALL.len() <= MAX_DROP_REASONS);

/// The name of drop counter `i`: a pipeline reason, a runtime reason, or None past both.
pub fn drop_reason_name(i: usize) -> Option<&'static str> {
    match DropReason::ALL.get(i) {
        Some(r) => Some(r.as_str()),
        None => RuntimeDrop::ALL
            .get(i.checked_sub(DropReason::COUNT)?)
            .map(|r| r.as_str()),
    }
}

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
    /// Packets handed to a PMD's TX queue and accepted (forwarded and injected ones).
    pub tx_packets: AtomicU64,
    /// Packets a PMD refused (queue full), freed.
    pub tx_refused: AtomicU64,
    /// Received packets the pipeline forwarded, queued on a TX buffer (the PMD may
    /// still refuse some: `tx_refused`).
    pub forwarded: AtomicU64,
    /// Frames this worker took from the slow path's inject queue (ICMP, ARP). Those
    /// queued for TX end in `tx_packets`/`tx_refused`; those for an unknown port are
    /// dropped as [`RuntimeDrop::InjectUnknownPort`].
    pub injected: AtomicU64,
    /// Packets handed to the slow path.
    pub slow_path: AtomicU64,
    /// Packets for the slow path dropped because their queue was full.
    pub punt_overflow: AtomicU64,
    /// Of those, control traffic (its own queue was full: never while the slow path
    /// keeps up with control traffic, whatever the data flood).
    pub punt_overflow_control: AtomicU64,
    /// Packets dropped by the pipeline, by reason index.
    pub drops: [AtomicU64; MAX_DROP_REASONS],
    /// Packets the pipeline decided, by [`Family`] index (published once per poll).
    pub received_by_family: [AtomicU64; Family::COUNT],
    /// Of those, the ones dropped or punted, by the family they were received as; bumped
    /// before `received_by_family` in a poll, and only in a poll that had some.
    pub unforwarded_by_family: [AtomicU64; Family::COUNT],
    /// Forwarded by family as last read ([`WorkerCounters::snapshot`]: never lower).
    forwarded_seen: [AtomicU64; Family::COUNT],
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
    /// Full bursts by their stage cycles a packet ([`crate::stage_hist`]): last, so that
    /// the counters bumped on every poll share their cache lines.
    pub forwarding_burst_cycles: [AtomicU64; STAGE_BUCKETS],
}

/// A poll's packets not forwarded (dropped, punted), by [`Family`] index as received.
pub type Unforwarded = [u64; Family::COUNT];

/// Publishes a poll's packets by family: the dropped and punted ones (if any) before the
/// received, so that a reader that sees a poll's received sees its not forwarded too
/// ([`WorkerCounters::forwarded_by_family`]). Per poll, never per packet.
#[inline(always)]
pub fn bump_families(c: &WorkerCounters, f: &FamilyCounts, unforwarded: &Unforwarded) {
    if *unforwarded != [0; Family::COUNT] {
        for (c, &n) in c.unforwarded_by_family.iter().zip(unforwarded) {
            bump(c, n);
        }
        // A compiler barrier on x86-64: orders the stores above before those below.
        fence(Release);
    }
    for (c, &n) in c.received_by_family.iter().zip(&f.received) {
        bump(c, n);
    }
}

/// Adds `n` to a counter that only the calling thread writes.
#[inline(always)]
pub fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed) + n, Relaxed);
}

impl WorkerCounters {
    /// Forwarded packets by family: received less not forwarded, the received read
    /// first (a poll's not forwarded are published before its received, so the
    /// difference is never above the truth), and never lower than a previous read.
    pub fn forwarded_by_family(&self) -> [u64; Family::COUNT] {
        let received: [u64; Family::COUNT] =
            std::array::from_fn(|i| self.received_by_family[i].load(Relaxed));
        fence(Acquire);
        std::array::from_fn(|i| {
            let f = received[i].saturating_sub(self.unforwarded_by_family[i].load(Relaxed));
            self.forwarded_seen[i].fetch_max(f, Relaxed).max(f)
        })
    }

    /// Zeroed counters for the worker on `lcore`.
    pub fn new(lcore: u32) -> WorkerCounters {
        WorkerCounters {
            lcore,
            rx_packets: AtomicU64::new(0),
            tx_packets: AtomicU64::new(0),
            tx_refused: AtomicU64::new(0),
            forwarded: AtomicU64::new(0),
            injected: AtomicU64::new(0),
            slow_path: AtomicU64::new(0),
            punt_overflow: AtomicU64::new(0),
            punt_overflow_control: AtomicU64::new(0),
            drops: [const { AtomicU64::new(0) }; MAX_DROP_REASONS],
            received_by_family: [const { AtomicU64::new(0) }; Family::COUNT],
            unforwarded_by_family: [const { AtomicU64::new(0) }; Family::COUNT],
            forwarded_seen: [const { AtomicU64::new(0) }; Family::COUNT],
            bursts: AtomicU64::new(0),
            burst_sizes: [const { AtomicU64::new(0) }; BURST_BUCKETS.len()],
            busy_cycles: AtomicU64::new(0),
            forwarding_cycles: AtomicU64::new(0),
            idle_cycles: AtomicU64::new(0),
            forwarding_burst_cycles: [const { AtomicU64::new(0) }; STAGE_BUCKETS],
        }
    }

    /// A consistent-enough copy for reporting.
    pub fn snapshot(&self) -> WorkerTotals {
        WorkerTotals {
            rx_packets: self.rx_packets.load(Relaxed),
            tx_packets: self.tx_packets.load(Relaxed),
            tx_refused: self.tx_refused.load(Relaxed),
            forwarded: self.forwarded.load(Relaxed),
            injected: self.injected.load(Relaxed),
            slow_path: self.slow_path.load(Relaxed),
            punt_overflow: self.punt_overflow.load(Relaxed),
            punt_overflow_control: self.punt_overflow_control.load(Relaxed),
            drops: std::array::from_fn(|i| self.drops[i].load(Relaxed)),
            received_by_family: std::array::from_fn(|i| self.received_by_family[i].load(Relaxed)),
            forwarded_by_family: self.forwarded_by_family(),
            bursts: self.bursts.load(Relaxed),
            burst_sizes: std::array::from_fn(|i| self.burst_sizes[i].load(Relaxed)),
            busy_cycles: self.busy_cycles.load(Relaxed),
            forwarding_cycles: self.forwarding_cycles.load(Relaxed),
            forwarding_bursts: StageHist(std::array::from_fn(|i| {
                self.forwarding_burst_cycles[i].load(Relaxed)
            })),
            idle_cycles: self.idle_cycles.load(Relaxed),
        }
    }
}

/// Plain totals, summable across workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkerTotals {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub tx_refused: u64,
    pub forwarded: u64,
    pub injected: u64,
    pub slow_path: u64,
    pub punt_overflow: u64,
    pub punt_overflow_control: u64,
    pub drops: [u64; MAX_DROP_REASONS],
    /// Packets the pipeline decided, by [`Family`] index.
    pub received_by_family: [u64; Family::COUNT],
    /// Of those, the ones forwarded, by [`Family`] index.
    pub forwarded_by_family: [u64; Family::COUNT],
    pub bursts: u64,
    pub burst_sizes: [u64; BURST_BUCKETS.len()],
    pub busy_cycles: u64,
    pub forwarding_cycles: u64,
    /// Full bursts by their stage cycles a packet.
    pub forwarding_bursts: StageHist,
    pub idle_cycles: u64,
}

impl Default for WorkerTotals {
    // By hand: `Default` is derived for arrays of at most 32 elements.
    fn default() -> WorkerTotals {
        WorkerTotals {
            rx_packets: 0,
            tx_packets: 0,
            tx_refused: 0,
            forwarded: 0,
            injected: 0,
            slow_path: 0,
            punt_overflow: 0,
            punt_overflow_control: 0,
            drops: [0; MAX_DROP_REASONS],
            received_by_family: [0; Family::COUNT],
            forwarded_by_family: [0; Family::COUNT],
            bursts: 0,
            burst_sizes: [0; BURST_BUCKETS.len()],
            busy_cycles: 0,
            forwarding_cycles: 0,
            forwarding_bursts: StageHist::default(),
            idle_cycles: 0,
        }
    }
}

impl WorkerTotals {
    /// Field-wise sum.
    pub fn add(&mut self, o: &WorkerTotals) {
        self.rx_packets += o.rx_packets;
        self.tx_packets += o.tx_packets;
        self.tx_refused += o.tx_refused;
        self.forwarded += o.forwarded;
        self.injected += o.injected;
        self.slow_path += o.slow_path;
        self.punt_overflow += o.punt_overflow;
        self.punt_overflow_control += o.punt_overflow_control;
        for (a, b) in self.drops.iter_mut().zip(o.drops.iter()) {
            *a += b;
        }
        for (a, b) in self
            .received_by_family
            .iter_mut()
            .zip(&o.received_by_family)
        {
            *a += b;
        }
        for (a, b) in self
            .forwarded_by_family
            .iter_mut()
            .zip(&o.forwarded_by_family)
        {
            *a += b;
        }
        self.bursts += o.bursts;
        for (a, b) in self.burst_sizes.iter_mut().zip(o.burst_sizes.iter()) {
            *a += b;
        }
        self.busy_cycles += o.busy_cycles;
        self.forwarding_cycles += o.forwarding_cycles;
        self.forwarding_bursts.add(&o.forwarding_bursts);
        self.idle_cycles += o.idle_cycles;
    }

    /// Packets dropped, all reasons (the pipeline's and the runtime's).
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// Mbufs that came in (received, or taken from the inject queue) but did not leave
    /// counted: sent, refused by the PMD, dropped by reason, or punted (queued to the
    /// slow path or dropped for a full queue). 0 once the TX buffers are flushed; a
    /// positive value means mbufs went missing, a negative one double counting.
    pub fn unaccounted(&self) -> i128 {
        let came_in = self.rx_packets as i128 + self.injected as i128;
        let left = self.tx_packets as i128
            + self.tx_refused as i128
            + self.dropped() as i128
            + self.slow_path as i128
            + self.punt_overflow as i128;
        came_in - left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_by_family_is_received_less_not_forwarded_and_never_falls() {
        let c = WorkerCounters::new(1);
        let f = FamilyCounts {
            received: [10, 4, 6, 1],
        };
        bump_families(&c, &f, &[2, 0, 6, 1]);
        assert_eq!(c.snapshot().forwarded_by_family, [8, 4, 0, 0]);
        // A poll with nothing dropped publishes the received alone.
        let f = FamilyCounts {
            received: [1, 1, 0, 0],
        };
        bump_families(&c, &f, &[0; Family::COUNT]);
        assert_eq!(c.forwarded_by_family(), [9, 5, 0, 0]);
        // A torn read (not forwarded seen ahead of their received) never lowers it.
        bump(&c.unforwarded_by_family[0], 3);
        assert_eq!(c.forwarded_by_family(), [9, 5, 0, 0]);
        bump(&c.received_by_family[0], 5);
        assert_eq!(c.forwarded_by_family(), [11, 5, 0, 0]);
    }

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
    fn runtime_drop_reasons_follow_the_pipeline_ones_by_name() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(drop_reason_name(i), Some(r.as_str()));
        }
        for r in RuntimeDrop::ALL {
            assert_eq!(drop_reason_name(r.index()), Some(r.as_str()));
        }
        let end = DropReason::COUNT + RuntimeDrop::ALL.len();
        assert_eq!(drop_reason_name(end), None);
        let names: std::collections::HashSet<_> = (0..end).map_while(drop_reason_name).collect();
        assert_eq!(names.len(), end, "every counter has its own name");
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

    /// Records one full burst of `burst` packets that spent `cycles` in the stage, as the
    /// worker does.
    pub fn stage_burst(c: &WorkerCounters, burst: usize, cycles: u64) {
        let b = crate::stage_hist::StageScale::new(burst).bucket(cycles);
        bump(&c.forwarding_burst_cycles[b], 1);
    }
}
