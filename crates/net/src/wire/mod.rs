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

/// Most label stack entries [`ip_packet`] walks.
pub const MAX_WALKED_LABELS: usize = 16;

/// The IP packet (v4 or v6, unchecked) an Ethernet frame carries below one VLAN tag and
/// any labels, or `None` for other ethertypes and truncated headers: for code off the fast
/// path (the slow path, the punt classifier, tools) that needs a packet's addresses.
pub fn ip_packet(frame: &[u8]) -> Option<&[u8]> {
    let eth = ethernet::EthernetFrame::new_checked(frame).ok()?;
    let payload = frame.get(eth.header_len()..)?;
    match eth.ethertype() {
        ethernet::ETHERTYPE_MPLS => {
            let labels = mpls::LabelStack::new_checked(payload, MAX_WALKED_LABELS).ok()?;
            payload.get(labels.len()..)
        }
        ethernet::ETHERTYPE_IPV4 | ethernet::ETHERTYPE_IPV6 => Some(payload),
        _ => None,
    }
}

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

#[cfg(test)]
mod tests {
    use super::ip_packet;

    /// Ethernet (optionally tagged) + `labels` (S bit on the last) + `ip`.
    fn frame(ethertype: u16, tag: bool, labels: &[u32], ip: &[u8]) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        if tag {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        }
        f.extend_from_slice(&ethertype.to_be_bytes());
        for (i, l) in labels.iter().enumerate() {
            let s = u32::from(i + 1 == labels.len());
            f.extend_from_slice(&((l << 12) | (s << 8) | 64).to_be_bytes());
        }
        f.extend_from_slice(ip);
        f
    }

    #[test]
    fn the_ip_packet_below_a_tag_and_labels_or_none() {
        let ip4 = [0x45u8; 20];
        let ip6 = [0x60u8; 40];
        assert_eq!(ip_packet(&frame(0x0800, false, &[], &ip4)), Some(&ip4[..]));
        assert_eq!(ip_packet(&frame(0x0800, true, &[], &ip4)), Some(&ip4[..]));
        assert_eq!(ip_packet(&frame(0x86dd, false, &[], &ip6)), Some(&ip6[..]));
        assert_eq!(
            ip_packet(&frame(0x8847, true, &[1000, 2000], &ip4)),
            Some(&ip4[..])
        );
        assert_eq!(ip_packet(&frame(0x0806, false, &[], &ip4)), None, "ARP");
        assert_eq!(ip_packet(&[0u8; 10]), None, "shorter than Ethernet");
        let no_bottom = frame(0x8847, false, &[1000], &[]);
        let mut cut = no_bottom.clone();
        cut[16] &= !1; // clear the S bit: the stack never ends
        assert_eq!(ip_packet(&cut), None, "label stack without a bottom");
    }
}
