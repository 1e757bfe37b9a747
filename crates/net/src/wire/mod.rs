//! Wire formats: checked zero-copy views over the headers the router reads and writes.
//!
//! smoltcp style: a view (`EthernetFrame`, `Ipv4Packet`, ...) wraps any `AsRef<[u8]>`;
//! `new_checked` validates lengths once, after which accessors cannot panic. `Repr` types
//! hold the decoded fields for code that builds packets (`parse` / `emit`).
//!
//! This module knows byte layouts only: it never decides what to do with a packet (that is
//! [`crate::pipeline`]) and never allocates.

pub mod arp;
pub mod checksum;
pub mod ethernet;
pub mod icmp;
pub mod icmp_ext;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod ipv6_ext;
pub mod l4;
pub mod mpls;
pub mod ndp;

/// Why a view or `Repr` refused a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer ends before the header (or the length it announces) does.
    #[error("truncated: the buffer ends before the header does")]
    Truncated,
    /// A field holds a value the format does not allow (version, IHL, ...).
    #[error("malformed header: {0}")]
    Malformed(&'static str),
    /// A checksum does not verify.
    #[error("bad checksum")]
    Checksum,
    /// An MPLS label stack has more entries than the configured limit.
    #[error("label stack deeper than {0} entries")]
    TooDeep(usize),
}

/// Result type of the wire views.
pub type Result<T> = core::result::Result<T, WireError>;

/// A field's byte positions within its header (smoltcp's `field::Field`).
pub type Field = core::ops::Range<usize>;

#[inline]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// The big-endian word at `at` (an address field: `be32(b, ipv4::field::DST_ADDR.start)`).
#[inline]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
