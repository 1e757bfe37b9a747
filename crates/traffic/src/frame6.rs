//! IPv6 frames for generated traffic: Ethernet, an optional label stack (6PE input, or
//! what an LSR receives), IPv6 and UDP with its checksum.
//!
//! Independent of `net::wire` for the same reason as [`crate::FrameSpec`]: these frames
//! are what benchmarks and end-to-end tests feed the router, so they must not share its
//! bugs. Never emits extension headers (a plain forwarding workload).

use super::frame::internet_checksum;

/// Bytes of an IPv6 header (RFC 8200 §3).
const IPV6_HEADER: usize = 40;
/// Next Header value of UDP.
const NH_UDP: u8 = 17;

/// Ethernet + optional label stack + IPv6 + UDP, padded to a total frame length.
#[derive(Clone, Debug)]
pub struct Frame6Spec {
    pub dst_mac: [u8; 6],
    pub src_mac: [u8; 6],
    /// (label, tc, ttl), outermost first; the S bit is set on the last.
    pub labels: Vec<(u32, u8, u8)>,
    pub src_ip: [u8; 16],
    pub dst_ip: [u8; 16],
    pub hop_limit: u8,
    pub traffic_class: u8,
    /// 20 bits (higher bits are ignored).
    pub flow_label: u32,
    pub src_port: u16,
    pub dst_port: u16,
    /// Frame length without FCS; at least the headers (62 bytes unlabelled).
    pub frame_len: usize,
}

impl Default for Frame6Spec {
    fn default() -> Self {
        Frame6Spec {
            dst_mac: [0x02, 0, 0, 0, 0, 0x01],
            src_mac: [0x02, 0, 0, 0, 0, 0xfe],
            labels: Vec::new(),
            // 2001:db8::/32, the documentation prefix (RFC 3849).
            src_ip: [
                0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            ],
            dst_ip: [
                0x20, 0x01, 0x0d, 0xb8, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            ],
            hop_limit: 64,
            traffic_class: 0,
            flow_label: 0,
            src_port: 1024,
            dst_port: 9,
            frame_len: 62,
        }
    }
}

impl Frame6Spec {
    /// The frame bytes.
    pub fn build(&self) -> Vec<u8> {
        let mut f = Vec::with_capacity(self.frame_len.max(64));
        f.extend_from_slice(&self.dst_mac);
        f.extend_from_slice(&self.src_mac);
        let ethertype: u16 = if self.labels.is_empty() {
            0x86dd
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
        // UDP sized so the frame reaches frame_len (at least its 8-byte header).
        let udp_len = self.frame_len.saturating_sub(l3_start + IPV6_HEADER).max(8);
        let vtf = (6u32 << 28) | ((self.traffic_class as u32) << 20) | (self.flow_label & 0xf_ffff);
        f.extend_from_slice(&vtf.to_be_bytes());
        f.extend_from_slice(&(udp_len as u16).to_be_bytes());
        f.push(NH_UDP);
        f.push(self.hop_limit);
        f.extend_from_slice(&self.src_ip);
        f.extend_from_slice(&self.dst_ip);
        let udp_start = f.len();
        f.extend_from_slice(&self.src_port.to_be_bytes());
        f.extend_from_slice(&self.dst_port.to_be_bytes());
        f.extend_from_slice(&(udp_len as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.resize(udp_start + udp_len, 0xab);
        let c = self.udp_checksum(&f[udp_start..]);
        f[udp_start + 6..udp_start + 8].copy_from_slice(&c.to_be_bytes());
        f
    }

    /// The UDP checksum over the IPv6 pseudo-header (RFC 8200 §8.1): mandatory over
    /// IPv6, and 0 is sent as 0xffff.
    fn udp_checksum(&self, udp: &[u8]) -> u16 {
        let mut buf = Vec::with_capacity(40 + udp.len());
        buf.extend_from_slice(&self.src_ip);
        buf.extend_from_slice(&self.dst_ip);
        buf.extend_from_slice(&(udp.len() as u32).to_be_bytes());
        buf.extend_from_slice(&[0, 0, 0, NH_UDP]);
        buf.extend_from_slice(udp);
        match internet_checksum(&buf) {
            0 => 0xffff,
            c => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checksum of the pseudo-header and the datagram as sent verifies to 0.
    fn udp_verifies(src: &[u8], dst: &[u8], udp: &[u8]) -> bool {
        let mut b = Vec::new();
        b.extend_from_slice(src);
        b.extend_from_slice(dst);
        b.extend_from_slice(&(udp.len() as u32).to_be_bytes());
        b.extend_from_slice(&[0, 0, 0, 17]);
        b.extend_from_slice(udp);
        internet_checksum(&b) == 0
    }

    #[test]
    fn plain_frame_layout() {
        let s = Frame6Spec {
            frame_len: 124,
            traffic_class: 0xb8,
            flow_label: 0x12345,
            hop_limit: 7,
            ..Default::default()
        };
        let f = s.build();
        assert_eq!(f.len(), 124);
        assert_eq!(&f[12..14], &[0x86, 0xdd]);
        let ip = &f[14..];
        assert_eq!(u32::from_be_bytes(ip[..4].try_into().unwrap()), 0x6b81_2345);
        assert_eq!(u16::from_be_bytes([ip[4], ip[5]]) as usize, 124 - 14 - 40);
        assert_eq!((ip[6], ip[7]), (17, 7));
        assert_eq!(&ip[8..24], &s.src_ip);
        assert_eq!(&ip[24..40], &s.dst_ip);
        assert!(udp_verifies(&s.src_ip, &s.dst_ip, &ip[40..]));
        assert_ne!(
            u16::from_be_bytes([ip[46], ip[47]]),
            0,
            "UDP over IPv6 needs a checksum"
        );
    }

    #[test]
    fn labelled_minimum_frame() {
        let f = Frame6Spec {
            labels: vec![(3000, 0, 64), (6001, 0, 64)],
            frame_len: 60,
            ..Default::default()
        }
        .build();
        // Headers alone exceed 60 bytes: 14 + 8 + 40 + 8.
        assert_eq!(f.len(), 70);
        assert_eq!(&f[12..14], &[0x88, 0x47]);
        let bos = u32::from_be_bytes(f[18..22].try_into().unwrap());
        assert_eq!((bos >> 12, (bos >> 8) & 1), (6001, 1));
        assert_eq!(f[22] >> 4, 6);
        assert_eq!(u16::from_be_bytes([f[26], f[27]]), 8);
    }
}
