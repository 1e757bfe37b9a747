//! Traffic generation for demos, benchmarks and end-to-end tests: a frame builder, named
//! scenarios written to pcap files, and pcap reading. Pure: no DPDK, no runtime; kept out
//! of the `router` crate so the tests and the binary's `gen-traffic` do not need it.
//! Never used on the data path. No `unsafe`.

#![forbid(unsafe_code)]

mod frame;
mod frame6;
mod scenario;
mod scenario6;

pub use frame::{internet_checksum, FrameSpec};
pub use frame6::Frame6Spec;
pub use scenario::{GenOptions, Rng, Scenario, Topology, SCENARIOS};
pub use scenario6::Topology6;

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
