//! Ethernet II, with at most one 802.1Q tag.

use super::{be16, put16, Result, WireError};

/// Byte positions of the header's fields (untagged; a tag follows the source address).
pub mod field {
    use crate::wire::Field;
    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    /// In a tagged frame: the tag's control information, then the inner ethertype.
    pub const VLAN_TCI: Field = 14..16;
    pub const VLAN_ETHERTYPE: Field = 16..18;
    /// Where an untagged frame's payload starts.
    pub const PAYLOAD: usize = 14;
}

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_MPLS: u16 = 0x8847;
pub const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
/// Bytes of an untagged header.
pub const HEADER_LEN: usize = 14;
/// Bytes of an 802.1Q tag.
pub const VLAN_TAG_LEN: usize = 4;

/// A checked view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps a buffer without checking it; accessors may panic until [`Self::check_len`].
    pub fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Wraps a buffer holding at least the whole header (tag included).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Checks the buffer holds the header, including a VLAN tag when there is one.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN
            || (be16(b, 12) == ETHERTYPE_VLAN && b.len() < HEADER_LEN + VLAN_TAG_LEN)
        {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_addr(&self) -> [u8; 6] {
        self.buffer.as_ref()[0..6].try_into().unwrap()
    }

    pub fn src_addr(&self) -> [u8; 6] {
        self.buffer.as_ref()[6..12].try_into().unwrap()
    }

    /// The 802.1Q tag control information (PCP, DEI, VID), if the frame is tagged.
    pub fn vlan_tci(&self) -> Option<u16> {
        let b = self.buffer.as_ref();
        (be16(b, 12) == ETHERTYPE_VLAN).then(|| be16(b, 14))
    }

    /// The ethertype of the payload (after the tag, if any).
    pub fn ethertype(&self) -> u16 {
        let b = self.buffer.as_ref();
        match be16(b, 12) {
            ETHERTYPE_VLAN => be16(b, 16),
            t => t,
        }
    }

    /// Header length: 14, or 18 with a tag.
    pub fn header_len(&self) -> usize {
        if self.vlan_tci().is_some() {
            HEADER_LEN + VLAN_TAG_LEN
        } else {
            HEADER_LEN
        }
    }

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

/// The decoded fields of an Ethernet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    pub dst: [u8; 6],
    pub src: [u8; 6],
    /// 802.1Q TCI when tagged.
    pub vlan: Option<u16>,
    pub ethertype: u16,
}

impl EthernetRepr {
    pub fn parse<T: AsRef<[u8]>>(f: &EthernetFrame<T>) -> Result<EthernetRepr> {
        f.check_len()?;
        Ok(EthernetRepr {
            dst: f.dst_addr(),
            src: f.src_addr(),
            vlan: f.vlan_tci(),
            ethertype: f.ethertype(),
        })
    }

    pub fn header_len(&self) -> usize {
        HEADER_LEN + if self.vlan.is_some() { VLAN_TAG_LEN } else { 0 }
    }

    /// Writes the header at the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        if buf.len() < self.header_len() {
            return Err(WireError::Truncated);
        }
        buf[0..6].copy_from_slice(&self.dst);
        buf[6..12].copy_from_slice(&self.src);
        match self.vlan {
            Some(tci) => {
                put16(buf, 12, ETHERTYPE_VLAN);
                put16(buf, 14, tci);
                put16(buf, 16, self.ethertype);
            }
            None => put16(buf, 12, self.ethertype),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_and_untagged_round_trip() {
        for vlan in [None, Some(0x2005)] {
            let r = EthernetRepr {
                dst: [1, 2, 3, 4, 5, 6],
                src: [7, 8, 9, 10, 11, 12],
                vlan,
                ethertype: ETHERTYPE_MPLS,
            };
            let mut b = [0u8; 18];
            r.emit(&mut b).unwrap();
            let f = EthernetFrame::new_checked(&b[..r.header_len()]).unwrap();
            assert_eq!(EthernetRepr::parse(&f).unwrap(), r);
            assert_eq!(f.payload().len(), 0);
        }
    }

    #[test]
    fn short_frames_are_refused() {
        assert!(EthernetFrame::new_checked(&[0u8; 13][..]).is_err());
        let mut b = [0u8; 17];
        b[12..14].copy_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
        assert_eq!(
            EthernetFrame::new_checked(&b[..]).unwrap_err(),
            WireError::Truncated
        );
    }
}
