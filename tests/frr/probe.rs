//! Probe packets through the router and what came out, decoded by tshark: frames are
//! built here, sent on a veth the router's input port captures (`send_frames.py`), and
//! found again in the output ports' pcaps by their IPv4 identification field.
//!
//! Every round ends with one control probe per output port, on routes from the YAML
//! file; once each is in its port's capture, everything sent before it has been through
//! the router and captured, so a probe that did not come out was dropped, not late.
#![allow(dead_code)]

use std::io::Write;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{checksum, tshark};

pub const ROUTER_IN_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const HOST_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];

/// One packet to send: labels (outermost first, empty for plain IPv4), then IPv4/UDP.
#[derive(Clone, Debug)]
pub struct Probe {
    pub labels: Vec<u32>,
    pub dst: Ipv4Addr,
    pub sport: u16,
}

/// One frame as it left the router.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seen {
    pub port: String,
    pub eth_dst: String,
    pub labels: Vec<u32>,
    pub ip_dst: String,
}

/// The Ethernet frame of `p` with IPv4 identification `id`.
pub fn frame(p: &Probe, id: u16) -> Vec<u8> {
    let mut f = Vec::with_capacity(80);
    f.extend_from_slice(&ROUTER_IN_MAC);
    f.extend_from_slice(&HOST_MAC);
    f.extend_from_slice(if p.labels.is_empty() {
        &[0x08, 0x00]
    } else {
        &[0x88, 0x47]
    });
    for (i, l) in p.labels.iter().enumerate() {
        let bos = u32::from(i + 1 == p.labels.len());
        f.extend_from_slice(&((l << 12) | (bos << 8) | 64).to_be_bytes());
    }
    let payload = b"mplsrouter-frr-probe";
    let udp_len = 8 + payload.len() as u16;
    let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0];
    ip[2..4].copy_from_slice(&(20 + udp_len).to_be_bytes());
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    ip.extend_from_slice(&[10, 0, 0, 2]);
    ip.extend_from_slice(&p.dst.octets());
    let c = checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&p.sport.to_be_bytes());
    f.extend_from_slice(&9u16.to_be_bytes());
    f.extend_from_slice(&udp_len.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

/// Sends probes into the router and collects what came out of its output pcaps.
pub struct Prober {
    pub ns: String,
    pub iface: String,
    /// (router port name, its tx pcap).
    pub outputs: Vec<(String, PathBuf)>,
    /// One per output, in the order of `outputs`.
    pub controls: Vec<Probe>,
    next_id: u16,
}

impl Prober {
    pub fn new(
        ns: &str,
        iface: &str,
        outputs: Vec<(String, PathBuf)>,
        controls: Vec<Probe>,
    ) -> Prober {
        Prober {
            ns: ns.into(),
            iface: iface.into(),
            outputs,
            controls,
            next_id: 1,
        }
    }

    fn id(&mut self) -> u16 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        id
    }

    fn send(&self, frames: &[Vec<u8>]) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/frr/send_frames.py");
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.ns, "python3", script, &self.iface])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut input = String::new();
        for f in frames {
            for b in f {
                input += &format!("{b:02x}");
            }
            input.push('\n');
        }
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success(), "send_frames.py failed");
    }

    /// Every frame out of the router, by IPv4 identification.
    pub fn decode_all(&self) -> Vec<(u16, Seen)> {
        let fields = ["ip.id", "eth.src", "eth.dst", "mpls.label", "ip.dst"];
        let mut all = Vec::new();
        for (port, pcap) in &self.outputs {
            if !pcap.exists() || std::fs::metadata(pcap).map(|m| m.len()).unwrap_or(0) < 24 {
                continue;
            }
            for d in tshark(pcap, &fields) {
                // Only what the router sent (its ports' MACs end in :01), not the host.
                if !d.get("eth.src").ends_with(":01") {
                    continue;
                }
                let Some(id) = d.list("ip.id").last().and_then(|s| parse_num(s)) else {
                    continue;
                };
                let labels = d
                    .list("mpls.label")
                    .iter()
                    .filter_map(|s| parse_num(s))
                    .collect();
                let seen = Seen {
                    port: port.clone(),
                    eth_dst: d.get("eth.dst").to_string(),
                    labels,
                    ip_dst: d.list("ip.dst").last().cloned().unwrap_or_default(),
                };
                all.push((id as u16, seen));
            }
        }
        all
    }

    /// Sends `probes` then the control probes; once each control probe is in its
    /// output's capture, returns what came out for each probe. Err when a control probe
    /// is not out within 3 s.
    pub fn round(&mut self, probes: &[Probe]) -> Result<Vec<Vec<Seen>>, String> {
        let ids: Vec<u16> = probes.iter().map(|_| self.id()).collect();
        let controls: Vec<(Probe, u16)> = self
            .controls
            .clone()
            .into_iter()
            .map(|c| (c, self.id()))
            .collect();
        let mut frames: Vec<Vec<u8>> = probes
            .iter()
            .zip(&ids)
            .map(|(p, id)| frame(p, *id))
            .collect();
        frames.extend(controls.iter().map(|(c, id)| frame(c, *id)));
        self.send(&frames);
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut pause = Duration::from_millis(5);
        while !self
            .outputs
            .iter()
            .zip(&controls)
            .all(|((_, pcap), (_, id))| has_ipv4_id(pcap, *id))
        {
            if Instant::now() >= deadline {
                return Err("a control probe (a route of the routes file) did not come out".into());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(100));
        }
        let all = self.decode_all();
        Ok(ids
            .iter()
            .map(|id| {
                all.iter()
                    .filter(|(i, _)| i == id)
                    .map(|(_, s)| s.clone())
                    .collect()
            })
            .collect())
    }
}

/// Whether `pcap` holds a plain IPv4 frame from the router (source MAC ending in :01)
/// with identification `id`. A quick scan without tshark; a partial last record (the
/// capture is still being written) ends it.
fn has_ipv4_id(pcap: &Path, id: u16) -> bool {
    let Ok(f) = std::fs::File::open(pcap) else {
        return false;
    };
    let Ok(mut r) = pcap_file::pcap::PcapReader::new(f) else {
        return false;
    };
    while let Some(Ok(p)) = r.next_packet() {
        let d = &p.data;
        if d.len() >= 20 && d[11] == 1 && d[12..14] == [8, 0] && d[18..20] == id.to_be_bytes() {
            return true;
        }
    }
    false
}

/// tshark prints numbers in decimal or 0x-hex depending on the field.
pub fn parse_num(s: &str) -> Option<u32> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}
