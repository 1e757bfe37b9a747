//! Traffic generation for demos, benchmarks and end-to-end tests: named scenarios written
//! to pcap files (no DPDK involved).

mod frame;
mod scenario;

pub use frame::{internet_checksum, FrameSpec};
pub use scenario::{GenOptions, Rng, Scenario, Topology, SCENARIOS};

use std::io;
use std::path::Path;
use std::time::Duration;

/// Writes `frames` to a pcap file (Ethernet link type, microsecond timestamps).
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) -> io::Result<()> {
    let f = io::BufWriter::new(std::fs::File::create(path)?);
    let mut w = pcap_file::pcap::PcapWriter::new(f).map_err(io::Error::other)?;
    for (i, fr) in frames.iter().enumerate() {
        let p =
            pcap_file::pcap::PcapPacket::new(Duration::from_micros(i as u64), fr.len() as u32, fr);
        w.write_packet(&p).map_err(io::Error::other)?;
    }
    Ok(())
}

/// Reads every frame of a pcap file.
pub fn read_pcap(path: &Path) -> io::Result<Vec<Vec<u8>>> {
    let f = io::BufReader::new(std::fs::File::open(path)?);
    let mut r = pcap_file::pcap::PcapReader::new(f).map_err(io::Error::other)?;
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.map_err(io::Error::other)?.data.into_owned());
    }
    Ok(out)
}

/// Parses a prefix list: one `a.b.c.d/len` per line, `#` comments and blank lines skipped.
/// Returns (network address in host order, length); host bits are cleared.
pub fn parse_prefix_list(text: &str) -> Result<Vec<(u32, u8)>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let bad = || format!("line {}: {line:?} is not a.b.c.d/len", n + 1);
        let (a, l) = line.split_once('/').ok_or_else(bad)?;
        let addr: std::net::Ipv4Addr = a.parse().map_err(|_| bad())?;
        let len: u8 = l.parse().map_err(|_| bad())?;
        if len > 32 {
            return Err(bad());
        }
        let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
        out.push((u32::from(addr) & mask, len));
    }
    Ok(out)
}
