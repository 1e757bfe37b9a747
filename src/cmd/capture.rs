//! `mplsrouter capture --port P --out F.pcap [--count N]`: frames as a port received
//! them, into a pcap for Wireshark (the first 128 bytes of each: the pcap's snap length;
//! each record keeps the frame's real length). Bounded by `--count` (at most 1000) and
//! `--timeout`; the workers copy frames only while the capture runs.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use router::ctlsock::proto::{CapturedFrame, Reply, Request};

use super::ctl::SocketArgs;

/// Bytes kept of each frame (the router's trace snapshot).
const SNAPLEN: u32 = 128;

#[derive(Args, Debug)]
pub struct CaptureArgs {
    #[command(flatten)]
    pub socket: SocketArgs,
    /// The port whose received frames are captured.
    #[arg(long)]
    pub port: String,
    /// The pcap file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Frames to capture (1..=1000).
    #[arg(long, default_value_t = 100)]
    pub count: usize,
    /// Seconds to wait for them (at most 60).
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
}

fn unhex(s: &str) -> Result<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| {
            s.get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
                .context("the router sent a frame that is not hex")
        })
        .collect()
}

/// A classic pcap file (microsecond timestamps, Ethernet).
pub fn pcap(frames: &[CapturedFrame]) -> Result<Vec<u8>> {
    let mut o = Vec::new();
    o.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    o.extend_from_slice(&2u16.to_le_bytes());
    o.extend_from_slice(&4u16.to_le_bytes());
    o.extend_from_slice(&0i32.to_le_bytes());
    o.extend_from_slice(&0u32.to_le_bytes());
    o.extend_from_slice(&SNAPLEN.to_le_bytes());
    o.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    for f in frames {
        let data = unhex(&f.data)?;
        o.extend_from_slice(&((f.time_us / 1_000_000) as u32).to_le_bytes());
        o.extend_from_slice(&((f.time_us % 1_000_000) as u32).to_le_bytes());
        o.extend_from_slice(&(data.len() as u32).to_le_bytes());
        o.extend_from_slice(&f.len.max(data.len() as u32).to_le_bytes());
        o.extend_from_slice(&data);
    }
    Ok(o)
}

pub fn run(a: CaptureArgs) -> Result<i32> {
    if !(a.timeout > 0.0 && a.timeout <= 60.0) {
        bail!("--timeout must be in (0, 60] seconds");
    }
    let req = Request::Capture {
        port: a.port.clone(),
        count: Some(a.count),
        timeout_ms: Some((a.timeout * 1000.0) as u64),
    };
    let wait = Duration::from_secs_f64(a.timeout + 10.0);
    let Reply::Capture { frames } = a.socket.ask_within(&req, wait)? else {
        bail!("the router answered a capture with something else");
    };
    let bytes = pcap(&frames)?;
    std::fs::File::create(&a.out)
        .and_then(|mut f| f.write_all(&bytes))
        .with_context(|| format!("writing {}", a.out.display()))?;
    println!(
        "{} frames received on {} written to {}",
        frames.len(),
        a.port,
        a.out.display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pcap_keeps_the_real_length_beside_the_snapped_bytes() {
        let f = CapturedFrame {
            lcore: 1,
            time_us: 1_500_000,
            len: 1514,
            data: "0102".repeat(64),
        };
        let p = pcap(&[f]).unwrap();
        assert_eq!(&p[..4], &0xa1b2_c3d4u32.to_le_bytes());
        assert_eq!(u32::from_le_bytes(p[16..20].try_into().unwrap()), SNAPLEN);
        let rec = &p[24..];
        let w = |i: usize| u32::from_le_bytes(rec[i..i + 4].try_into().unwrap());
        assert_eq!((w(0), w(4), w(8), w(12)), (1, 500_000, 128, 1514));
        assert_eq!(rec.len(), 16 + 128);
        let bad = CapturedFrame {
            lcore: 1,
            time_us: 0,
            len: 1,
            data: "zz".into(),
        };
        assert!(pcap(&[bad]).is_err());
    }
}
