//! The slow path's accounting: every mbuf it gets (punted by a worker) or makes (ARP and
//! ICMP it generates) ends transmitted, handled, held or dropped under one reason here.
//!
//! The identity the tests check: `packets + generated == handled + transmitted +
//! sum(dropped by reason) + held`. Written by the slow-path thread only.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

macro_rules! slow_drops {
    ($($v:ident => $s:literal,)*) => {
        /// Why the slow path freed an mbuf without sending it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum SlowDrop { $($v,)* }

        impl SlowDrop {
            pub const ALL: &'static [SlowDrop] = &[$(SlowDrop::$v,)*];
            pub const COUNT: usize = SlowDrop::ALL.len();
            /// The metric label value.
            pub const fn as_str(self) -> &'static str {
                match self { $(SlowDrop::$v => $s,)* }
            }
        }
    };
}

slow_drops! {
    ArpMalformed => "arp_malformed",
    ArpUnknownPort => "arp_unknown_port",
    ArpInvalidSenderMac => "arp_invalid_sender_mac",
    ArpOwnAddress => "arp_own_address",
    ArpOffLink => "arp_off_link",
    ArpStaticNeighbor => "arp_static_neighbor",
    ArpUnsolicited => "arp_unsolicited",
    ArpTableFull => "arp_table_full",
    ArpLocked => "arp_locked",
    ArpHoldFull => "arp_hold_full",
    ArpUnresolved => "arp_unresolved",
    ArpBroadcastTarget => "arp_broadcast_target",
    GleanNoIpv4 => "glean_no_ipv4",
    IcmpRateLimited => "icmp_rate_limited",
    IcmpSuppressed => "icmp_suppressed",
    IcmpNotIpv4 => "icmp_not_ipv4",
    IcmpNoSource => "icmp_no_source",
    IcmpBuildFailed => "icmp_build_failed",
    LocalUnhandled => "local_unhandled",
    Unhandled => "unhandled",
    NoMbuf => "no_mbuf",
    InjectFull => "inject_full",
    PipelineDrop => "pipeline_drop",
    PuntedAgain => "punted_again",
    Shutdown => "shutdown",
    NoControlInterface => "no_control_interface",
    ControlInterfaceWrite => "control_interface_write_failed",
    IcmpNotIpv6 => "icmp_not_ipv6",
    NdpInvalid => "ndp_invalid",
    NdpUnknownPort => "ndp_unknown_port",
    NdpNotForUs => "ndp_not_for_us",
    NdpRouterSolicitation => "ndp_router_solicitation",
    NdpRouterAdvertisement => "ndp_router_advertisement",
    NdpInvalidLladdr => "ndp_invalid_lladdr",
    NdpOwnAddress => "ndp_own_address",
    NdpOffLink => "ndp_off_link",
    NdpUnsolicited => "ndp_unsolicited",
    NdpTableFull => "ndp_table_full",
    NdpNoOverride => "ndp_no_override",
    NdpHoldFull => "ndp_hold_full",
    NdpUnresolved => "ndp_unresolved",
    NdpBadTarget => "ndp_bad_target",
    NdpStaticNeighbor => "ndp_static_neighbor",
}

/// NDP messages the slow path received and sent, by kind (the metric label values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NdpCount {
    NsReceived,
    NaReceived,
    RsReceived,
    RaReceived,
    NsSent,
    NaSent,
    /// A neighbour the router was resolving answered (learned from its NA or NS).
    Resolved,
    /// A resolution ended with nobody answering (its held packets dropped as
    /// `ndp_unresolved`).
    ResolutionFailed,
}

impl NdpCount {
    pub const ALL: [NdpCount; 8] = [
        NdpCount::NsReceived,
        NdpCount::NaReceived,
        NdpCount::RsReceived,
        NdpCount::RaReceived,
        NdpCount::NsSent,
        NdpCount::NaSent,
        NdpCount::Resolved,
        NdpCount::ResolutionFailed,
    ];
    pub const fn as_str(self) -> &'static str {
        match self {
            NdpCount::NsReceived => "ns_received",
            NdpCount::NaReceived => "na_received",
            NdpCount::RsReceived => "rs_received",
            NdpCount::RaReceived => "ra_received",
            NdpCount::NsSent => "ns_sent",
            NdpCount::NaSent => "na_sent",
            NdpCount::Resolved => "resolved",
            NdpCount::ResolutionFailed => "resolution_failed",
        }
    }
}

/// The slow path's mbuf counters.
#[derive(Debug)]
pub struct SlowPathStats {
    /// Mbufs punted by the workers and taken from the queue.
    pub packets: AtomicU64,
    /// Frames the slow path built (ARP replies and requests, ICMP), allocated or not.
    pub generated: AtomicU64,
    /// Punted mbufs consumed as intended (an ARP packet read, a packet answered by ICMP).
    pub handled: AtomicU64,
    /// Mbufs handed to a worker for transmission.
    pub transmitted: AtomicU64,
    pub dropped: [AtomicU64; SlowDrop::COUNT],
    /// Mbufs held for a resolution now (a gauge).
    pub held: AtomicU64,
    /// NDP messages by [`NdpCount`] (not mbuf accounting: a received one is also
    /// counted as handled or dropped, a sent one as generated).
    pub ndp: [AtomicU64; NdpCount::ALL.len()],
}

impl Default for SlowPathStats {
    fn default() -> Self {
        SlowPathStats {
            packets: AtomicU64::new(0),
            generated: AtomicU64::new(0),
            handled: AtomicU64::new(0),
            transmitted: AtomicU64::new(0),
            dropped: [const { AtomicU64::new(0) }; SlowDrop::COUNT],
            held: AtomicU64::new(0),
            ndp: [const { AtomicU64::new(0) }; NdpCount::ALL.len()],
        }
    }
}

impl SlowPathStats {
    /// Counts `n` mbufs dropped for `why`.
    pub fn drop(&self, why: SlowDrop, n: u64) {
        self.dropped[why as usize].fetch_add(n, Relaxed);
    }

    /// Counts one NDP message.
    pub fn ndp(&self, k: NdpCount) {
        self.ndp[k as usize].fetch_add(1, Relaxed);
    }

    pub fn dropped(&self, why: SlowDrop) -> u64 {
        self.dropped[why as usize].load(Relaxed)
    }

    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().map(|d| d.load(Relaxed)).sum()
    }
}
