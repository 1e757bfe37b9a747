//! Counters and gauges kept by the control side (reloads, tables, slow path).
//!
//! Written by the control and slow-path threads (never by a worker), so plain atomic
//! adds are fine here.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use net::fib::FibStats;
use prometheus::{Histogram, HistogramOpts};

use super::slow::SlowPathStats;

/// ICMP messages the router generates, by type (the metric label values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IcmpKind {
    EchoReply,
    TimeExceeded,
    DestUnreachable,
    /// ICMPv6 packet too big (IPv4's fragmentation needed is a destination unreachable).
    PacketTooBig,
}

impl IcmpKind {
    pub const ALL: [IcmpKind; 4] = [
        IcmpKind::EchoReply,
        IcmpKind::TimeExceeded,
        IcmpKind::DestUnreachable,
        IcmpKind::PacketTooBig,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            IcmpKind::EchoReply => "echo_reply",
            IcmpKind::TimeExceeded => "time_exceeded",
            IcmpKind::DestUnreachable => "dest_unreachable",
            IcmpKind::PacketTooBig => "packet_too_big",
        }
    }
}

/// Control-side state exported as metrics.
#[derive(Debug)]
pub struct ControlStats {
    pub fib_generation: AtomicU64,
    pub fib_ipv4_routes: AtomicU64,
    pub fib_ipv6_routes: AtomicU64,
    /// Bytes a lookup can read, per family: [Lpm4, Lpm6].
    pub fib_lpm_bytes: [AtomicU64; 2],
    pub fib_labels: AtomicU64,
    pub fib_next_hops: AtomicU64,
    pub fib_ecmp_groups: AtomicU64,
    pub fib_bytes: AtomicU64,
    pub reloads_ok: AtomicU64,
    pub reloads_error: AtomicU64,
    /// Unix time of the last successful table load, in milliseconds (0: never).
    pub last_good_reload_ms: AtomicU64,
    pub reload_duration: Histogram,
    pub arp_entries: AtomicU64,
    pub arp_pending: AtomicU64,
    /// Addresses marked incomplete for the workers ([`crate::punt::marks`]).
    pub arp_incomplete: AtomicU64,
    /// Learned neighbours and addresses being resolved, by family ([IPv4 (ARP), IPv6
    /// (NDP)]); updated on the slow path's periodic tick.
    pub neighbors: [AtomicU64; 2],
    pub resolving: [AtomicU64; 2],
    /// Where every mbuf of the slow path went.
    pub slow: SlowPathStats,
    pub icmp_sent: [AtomicU64; IcmpKind::ALL.len()],
    /// Of those, the ICMPv6 ones.
    pub icmp6_sent: [AtomicU64; IcmpKind::ALL.len()],
    pub icmp_rate_limited: AtomicU64,
    /// Retired table snapshots not yet freed (waiting for workers to pass an epoch).
    pub rcu_pending: AtomicU64,
    /// The control interfaces' frames up and down.
    pub cpif: crate::cpif::CpifStats,
}

impl Default for ControlStats {
    fn default() -> Self {
        ControlStats::new()
    }
}

impl ControlStats {
    pub fn new() -> ControlStats {
        let reload_duration = Histogram::with_opts(
            HistogramOpts::new(
                "mplsrouter_reload_duration_seconds",
                "Time from reading a routes file to publishing its table.",
            )
            .buckets(vec![
                0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ]),
        )
        .expect("valid histogram options");
        ControlStats {
            fib_generation: AtomicU64::new(0),
            fib_ipv4_routes: AtomicU64::new(0),
            fib_ipv6_routes: AtomicU64::new(0),
            fib_lpm_bytes: [const { AtomicU64::new(0) }; 2],
            fib_labels: AtomicU64::new(0),
            fib_next_hops: AtomicU64::new(0),
            fib_ecmp_groups: AtomicU64::new(0),
            fib_bytes: AtomicU64::new(0),
            reloads_ok: AtomicU64::new(0),
            reloads_error: AtomicU64::new(0),
            last_good_reload_ms: AtomicU64::new(0),
            reload_duration,
            arp_entries: AtomicU64::new(0),
            arp_pending: AtomicU64::new(0),
            arp_incomplete: AtomicU64::new(0),
            neighbors: [const { AtomicU64::new(0) }; 2],
            resolving: [const { AtomicU64::new(0) }; 2],
            slow: SlowPathStats::default(),
            icmp_sent: [const { AtomicU64::new(0) }; IcmpKind::ALL.len()],
            icmp6_sent: [const { AtomicU64::new(0) }; IcmpKind::ALL.len()],
            icmp_rate_limited: AtomicU64::new(0),
            rcu_pending: AtomicU64::new(0),
            cpif: Default::default(),
        }
    }

    /// Records the sizes of a newly published table.
    pub fn set_fib(&self, generation: u64, s: &FibStats) {
        self.fib_generation.store(generation, Relaxed);
        self.fib_ipv4_routes.store(s.ipv4_routes as u64, Relaxed);
        self.fib_ipv6_routes.store(s.ipv6_routes as u64, Relaxed);
        self.fib_lpm_bytes[0].store(s.lpm4_bytes as u64, Relaxed);
        self.fib_lpm_bytes[1].store(s.lpm6_bytes as u64, Relaxed);
        self.fib_labels.store(s.labels as u64, Relaxed);
        self.fib_next_hops.store(s.adjacencies as u64, Relaxed);
        self.fib_ecmp_groups.store(s.ecmp_groups as u64, Relaxed);
        self.fib_bytes.store(s.bytes as u64, Relaxed);
    }

    /// Records a reload attempt and how long it took.
    pub fn record_reload(&self, ok: bool, seconds: f64) {
        self.reload_duration.observe(seconds);
        if ok {
            self.reloads_ok.fetch_add(1, Relaxed);
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            self.last_good_reload_ms.store(now, Relaxed);
        } else {
            self.reloads_error.fetch_add(1, Relaxed);
        }
    }

    /// Counts one generated ICMP message (`v6`: an ICMPv6 one).
    pub fn icmp(&self, kind: IcmpKind, v6: bool) {
        self.icmp_sent[kind as usize].fetch_add(1, Relaxed);
        if v6 {
            self.icmp6_sent[kind as usize].fetch_add(1, Relaxed);
        }
    }
}
