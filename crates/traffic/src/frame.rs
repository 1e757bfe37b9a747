//! A tiny, independent frame builder for generated traffic.
//!
//! Deliberately does not use `net::wire`: traffic built here is also what the end-to-end
//! tests feed the router, so it must not share bugs with the code under test.

/// Ethernet + optional label stack + IPv4 + UDP, padded to a total frame length.
#[derive(Clone, Debug)]
pub struct FrameSpec {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    /// (label, tc, ttl), outermost first; the S bit is set on the last.
    pub labels: Vec<(u32, u8, u8)>,
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub ttl: u8,
    pub tos: u8,
    pub dont_frag: bool,
    pub src_port: u16,
    pub dst_port: u16,
    /// Frame length without FCS (a 64-byte frame on the wire is 60 bytes here).
    pub frame_len: usize,
}

impl Default for FrameSpec {
    fn default() -> Self {
        FrameSpec {
            dst_mac: [0x02, 0, 0, 0, 0, 0x01],
            src_mac: [0x02, 0, 0, 0, 0, 0xfe],
            labels: Vec::new(),
            src_ip: [192, 0, 2, 1],
            dst_ip: [198, 51, 100, 1],
            ttl: 64,
            tos: 0,
            dont_frag: false,
            src_port: 1024,
            dst_port: 9,
            frame_len: 60,
        }
    }
}

/// The one's-complement sum of RFC 1071, folded.
pub fn internet_checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in data.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        sum += w as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl FrameSpec {
    /// The frame bytes.
    pub fn build(&self) -> Vec<u8> {
        let mut f = Vec::with_capacity(self.frame_len.max(64));
        f.extend_from_slice(&self.dst_mac);
        f.extend_from_slice(&self.src_mac);
        let ethertype: u16 = if self.labels.is_empty() {
            0x0800
        } else {
            0x8847
        };
        f.extend_from_slice(&ethertype.to_be_bytes());
        for (i, &(label, tc, ttl)) in self.labels.iter().enumerate() {
            let s = (i + 1 == self.labels.len()) as u32;
            let w = (label << 12) | ((tc as u32 & 7) << 9) | (s << 8) | ttl as u32;
            f.extend_from_slice(&w.to_be_bytes());
        }
        let l3_start = f.len();
        // IPv4 + UDP sized so the frame reaches frame_len (at least 28 bytes of IP+UDP).
        let ip_len = self.frame_len.saturating_sub(l3_start).max(28);
        let udp_len = ip_len - 20;
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = self.tos;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
        if self.dont_frag {
            ip[6] = 0x40;
        }
        ip[8] = self.ttl;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&self.src_ip);
        ip[16..20].copy_from_slice(&self.dst_ip);
        let c = internet_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&self.src_port.to_be_bytes());
        f.extend_from_slice(&self.dst_port.to_be_bytes());
        f.extend_from_slice(&(udp_len as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]); // UDP checksum 0: "not computed", valid over IPv4
        f.resize(l3_start + ip_len, 0xab);
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_frame_layout() {
        let f = FrameSpec {
            labels: vec![(100, 5, 64), (200, 0, 63)],
            ..Default::default()
        }
        .build();
        assert_eq!(f.len(), 60);
        assert_eq!(&f[12..14], &[0x88, 0x47]);
        let top = u32::from_be_bytes(f[14..18].try_into().unwrap());
        assert_eq!(
            (top >> 12, (top >> 9) & 7, (top >> 8) & 1, top & 0xff),
            (100, 5, 0, 64)
        );
        let bos = u32::from_be_bytes(f[18..22].try_into().unwrap());
        assert_eq!((bos >> 12, (bos >> 8) & 1, bos & 0xff), (200, 1, 63));
        assert_eq!(f[22] >> 4, 4);
        assert_eq!(
            internet_checksum(&f[22..42]),
            0,
            "IPv4 header checksum must verify"
        );
        assert_eq!(u16::from_be_bytes([f[24], f[25]]) as usize, 60 - 22);
    }

    #[test]
    fn checksum_of_rfc1071_example() {
        // RFC 1071 section 3 example words: 0001 f203 f4f5 f6f7 -> sum ddf2, checksum 220d.
        assert_eq!(
            internet_checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
    }
}
