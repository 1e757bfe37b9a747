//! Packets received by address family (IPv4, IPv6, MPLS, other), for the per-family
//! metrics, and of those the ones forwarded.
//!
//! The counts are kept per chunk where the fast paths already sort packets (the lengths
//! of their queues), and per packet only on the staged path, which reads the ethertype
//! anyway: the fast paths must never pay a per-packet instruction for them. Forwarded
//! packets are never counted one by one either: they are the received ones less those
//! not forwarded (drops and punts, whose frames stay as received), which the caller
//! counts where it handles them, by [`Family::of_unforwarded`].

use super::{DropReason, Verdict};
use crate::wire::be16;
use crate::wire::ethernet::{
    ETHERTYPE_IPV4, ETHERTYPE_IPV6, ETHERTYPE_MPLS, ETHERTYPE_VLAN, HEADER_LEN, VLAN_TAG_LEN,
};

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

    /// The family the pipeline counted a packet under that it did not forward (its
    /// verdict a drop or a punt, its frame as received), from the frame and the verdict:
    /// the ethertype after a tag, `Other` for a frame too short for its headers, a tag
    /// refused, or a tagged frame for another host (the rule of the stages' classify).
    #[inline]
    pub fn of_unforwarded(data: &[u8], v: Verdict) -> Family {
        if data.len() < HEADER_LEN {
            return Family::Other;
        }
        let et = be16(data, HEADER_LEN - 2);
        if et != ETHERTYPE_VLAN {
            return Family::of(et);
        }
        let refused = matches!(
            v,
            Verdict::Drop(DropReason::VlanTagged | DropReason::OtherHost)
        );
        if refused || data.len() < HEADER_LEN + VLAN_TAG_LEN {
            return Family::Other;
        }
        Family::of(be16(data, HEADER_LEN + 2))
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
