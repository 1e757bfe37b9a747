//! Packets received by address family (IPv4, IPv6, MPLS, other), for the per-family
//! metrics.
//!
//! The counts are kept per chunk where the fast paths already sort packets (the lengths
//! of their queues), and per packet only on the staged path, which reads the ethertype
//! anyway: the fast paths must never pay a per-packet instruction for them.

use crate::wire::ethernet::{ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MPLS};

/// The family of a received frame, by its ethertype (after an 802.1Q tag the pipeline
/// accepts; tagged frames it refuses, and truncated ones, are `Other`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Ipv4,
    Ipv6,
    Mpls,
    /// ARP, IS-IS, unknown ethertypes and truncated frames.
    Other,
}

impl Family {
    pub const COUNT: usize = 4;
    /// Every family, in counter-index order.
    pub const ALL: [Family; Family::COUNT] =
        [Family::Ipv4, Family::Ipv6, Family::Mpls, Family::Other];

    /// The stable name (a metric label value).
    pub const fn as_str(self) -> &'static str {
        match self {
            Family::Ipv4 => "ipv4",
            Family::Ipv6 => "ipv6",
            Family::Mpls => "mpls",
            Family::Other => "other",
        }
    }

    /// The family of ethertype `et` (the one after an accepted 802.1Q tag).
    #[inline(always)]
    pub(crate) const fn of(et: u16) -> Family {
        match et {
            ETHERTYPE_IPV4 => Family::Ipv4,
            ETHERTYPE_IPV6 => Family::Ipv6,
            ETHERTYPE_MPLS => Family::Mpls,
            _ => Family::Other,
        }
    }
}

/// Packets the pipeline decided, by [`Family`] (index: `Family as usize`). The caller
/// owns it and adds it to its own counters when it likes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FamilyCounts {
    pub received: [u64; Family::COUNT],
}

impl FamilyCounts {
    #[inline(always)]
    pub(crate) fn add(&mut self, f: Family, n: usize) {
        self.received[f as usize] += n as u64;
    }

    /// Received packets of family `f`.
    pub fn get(&self, f: Family) -> u64 {
        self.received[f as usize]
    }

    /// Every packet counted.
    pub fn total(&self) -> u64 {
        self.received.iter().sum()
    }
}
