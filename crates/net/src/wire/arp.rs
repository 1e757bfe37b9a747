//! ARP for Ethernet/IPv4 (RFC 826), for the slow path's neighbor resolution.

use super::{be16, put16, Result, WireError};

pub const OP_REQUEST: u16 = 1;
pub const OP_REPLY: u16 = 2;
/// Bytes of an Ethernet/IPv4 ARP packet.
pub const PACKET_LEN: usize = 28;

/// A checked view of an Ethernet/IPv4 ARP packet.
#[derive(Debug, Clone)]
pub struct ArpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ArpPacket<T> {
    /// Accepts only hardware type Ethernet (1), protocol IPv4, lengths 6 and 4.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let b = buffer.as_ref();
        if b.len() < PACKET_LEN {
            return Err(WireError::Truncated);
        }
        if be16(b, 0) != 1 || be16(b, 2) != 0x0800 || b[4] != 6 || b[5] != 4 {
            return Err(WireError::Malformed("ARP is not Ethernet/IPv4"));
        }
        Ok(ArpPacket { buffer })
    }
    pub fn operation(&self) -> u16 {
        be16(self.buffer.as_ref(), 6)
    }
    pub fn sender_mac(&self) -> [u8; 6] {
        self.buffer.as_ref()[8..14].try_into().unwrap()
    }
    pub fn sender_ip(&self) -> [u8; 4] {
        self.buffer.as_ref()[14..18].try_into().unwrap()
    }
    pub fn target_mac(&self) -> [u8; 6] {
        self.buffer.as_ref()[18..24].try_into().unwrap()
    }
    pub fn target_ip(&self) -> [u8; 4] {
        self.buffer.as_ref()[24..28].try_into().unwrap()
    }
}

/// The fields of an Ethernet/IPv4 ARP packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArpRepr {
    pub operation: u16,
    pub sender_mac: [u8; 6],
    pub sender_ip: [u8; 4],
    pub target_mac: [u8; 6],
    pub target_ip: [u8; 4],
}

impl ArpRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &ArpPacket<T>) -> Result<ArpRepr> {
        Ok(ArpRepr {
            operation: p.operation(),
            sender_mac: p.sender_mac(),
            sender_ip: p.sender_ip(),
            target_mac: p.target_mac(),
            target_ip: p.target_ip(),
        })
    }

    /// The reply to this request from `mac` (the owner of `target_ip`).
    pub fn reply(&self, mac: [u8; 6]) -> ArpRepr {
        ArpRepr {
            operation: OP_REPLY,
            sender_mac: mac,
            sender_ip: self.target_ip,
            target_mac: self.sender_mac,
            target_ip: self.sender_ip,
        }
    }

    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let b = buf.get_mut(..PACKET_LEN).ok_or(WireError::Truncated)?;
        put16(b, 0, 1);
        put16(b, 2, 0x0800);
        b[4] = 6;
        b[5] = 4;
        put16(b, 6, self.operation);
        b[8..14].copy_from_slice(&self.sender_mac);
        b[14..18].copy_from_slice(&self.sender_ip);
        b[18..24].copy_from_slice(&self.target_mac);
        b[24..28].copy_from_slice(&self.target_ip);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_reply_round_trip() {
        let req = ArpRepr {
            operation: OP_REQUEST,
            sender_mac: [1; 6],
            sender_ip: [10, 0, 0, 1],
            target_mac: [0; 6],
            target_ip: [10, 0, 0, 2],
        };
        let mut b = [0u8; PACKET_LEN];
        req.emit(&mut b).unwrap();
        let p = ArpPacket::new_checked(&b[..]).unwrap();
        assert_eq!(ArpRepr::parse(&p).unwrap(), req);
        let rep = req.reply([2; 6]);
        assert_eq!(rep.sender_ip, [10, 0, 0, 2]);
        assert_eq!(rep.target_mac, [1; 6]);
        assert_eq!(&b[..8], &[0, 1, 8, 0, 6, 4, 0, 1]);
        b[5] = 16;
        assert!(ArpPacket::new_checked(&b[..]).is_err());
    }
}
