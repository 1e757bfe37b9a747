//! Independent oracles shared by every test crate: written here from the RFCs and the
//! tools' own checks, never taken from the code under test. Also compiled into
//! `crates/router/tests/metrics_exposition.rs` (by `#[path]`), so each has one definition.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};

/// The Internet checksum (RFC 1071) of `data`: the one's complement of the one's
/// complement sum of its 16-bit big-endian words, an odd last byte padded with zero.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes the IPv4 header checksum of the header at `frame[ip..]` (its IHL honoured,
/// at least 20 bytes).
pub fn fill_ipv4_checksum(frame: &mut [u8], ip: usize) {
    let ihl = (frame[ip] & 0xf) as usize * 4;
    frame[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
    let c = checksum(&frame[ip..ip + ihl.max(20)]);
    frame[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
}

/// `promtool check metrics` on `text`; panics with its complaint.
pub fn promtool_check(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus) must be installed: scripts/install-deps.sh");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool rejected the exposition:\n{}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An Ethernet ARP frame (`op` 1 request, 2 reply), padded to 60 bytes; the target
/// hardware address is zero.
pub fn arp_frame(
    op: u16,
    eth: ([u8; 6], [u8; 6]),
    sha: [u8; 6],
    spa: [u8; 4],
    tpa: [u8; 4],
) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&eth.0);
    f.extend_from_slice(&eth.1);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4]);
    f.extend_from_slice(&op.to_be_bytes());
    f.extend_from_slice(&sha);
    f.extend_from_slice(&spa);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&tpa);
    f.resize(60, 0);
    f
}

/// Turns an untagged IPv4/UDP frame into an ICMP echo request (`id`, `seq`), payload
/// filled with 'a', both checksums written.
pub fn into_echo_request(mut f: Vec<u8>, id: u16, seq: u16) -> Vec<u8> {
    f[23] = 1; // ICMP
    fill_ipv4_checksum(&mut f, 14);
    let icmp = &mut f[34..];
    icmp.fill(0x61);
    icmp[..4].copy_from_slice(&[8, 0, 0, 0]);
    icmp[4..6].copy_from_slice(&id.to_be_bytes());
    icmp[6..8].copy_from_slice(&seq.to_be_bytes());
    let c = checksum(icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    f
}

#[cfg(test)]
mod tests {
    #[test]
    fn checksum_of_rfc1071_example() {
        // RFC 1071, 3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (one's complement).
        assert_eq!(
            super::checksum(&[0, 1, 0xf2, 3, 0xf4, 0xf5, 0xf6, 0xf7]),
            !0xddf2
        );
    }
}
