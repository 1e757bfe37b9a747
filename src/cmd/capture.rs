//! `mplsrouter capture --port P --out F.pcap [--count N] [--direction rx|tx|both]
//! [--snaplen B] [--pps N] [--filter EXPR]`: frames a port received (as received) or
//! transmitted (as rewritten by the workers, and what the slow path sends), into a pcap
//! for Wireshark: the first
//! `--snaplen` bytes of each (default the whole frame, up to 9216), with its real
//! length. Bounded by `--count` (at most 1000), `--timeout` and `--pps` (frames per
//! second the workers copy; those over it are counted and reported, not captured).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use clap::ValueEnum;
use router::ctlsock::proto::{CapturedFrame, Direction, Reply, Request};

use super::ctl::SocketArgs;

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum DirArg {
    Rx,
    Tx,
    Both,
}

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
    /// Received frames (as received), transmitted frames (as sent), or both.
    #[arg(long, value_enum, default_value = "rx")]
    pub direction: DirArg,
    /// Bytes kept of each frame (default: the whole frame, up to 9216).
    #[arg(long)]
    pub snaplen: Option<u32>,
    /// Frames per second taken at most (default 1000, at most 100000).
    #[arg(long)]
    pub pps: Option<u32>,
    /// Only frames that pass EXPR (the `trace --filter` language).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
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
pub fn pcap(frames: &[CapturedFrame], snaplen: u32) -> Result<Vec<u8>> {
    let mut o = Vec::new();
    o.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    o.extend_from_slice(&2u16.to_le_bytes());
    o.extend_from_slice(&4u16.to_le_bytes());
    o.extend_from_slice(&0i32.to_le_bytes());
    o.extend_from_slice(&0u32.to_le_bytes());
    o.extend_from_slice(&snaplen.to_le_bytes());
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
        direction: Some(match a.direction {
            DirArg::Rx => Direction::Rx,
            DirArg::Tx => Direction::Tx,
            DirArg::Both => Direction::Both,
        }),
        snaplen: a.snaplen,
        pps: a.pps,
        filter: a.filter.clone(),
    };
    let wait = Duration::from_secs_f64(a.timeout + 10.0);
    let Reply::Capture(c) = a.socket.ask_within(&req, wait)? else {
        bail!("the router answered a capture with something else");
    };
    let bytes = pcap(&c.frames, c.snaplen)?;
    std::fs::File::create(&a.out)
        .and_then(|mut f| f.write_all(&bytes))
        .with_context(|| format!("writing {}", a.out.display()))?;
    if a.socket.json {
        let summary = serde_json::json!({
            "frames": c.frames.len(),
            "snaplen": c.snaplen,
            "skipped_rate": c.skipped_rate,
            "skipped_queue_full": c.skipped_queue_full,
            "out": a.out,
        });
        println!("{summary}");
        return Ok(0);
    }
    println!(
        "{} frames of {} ({:?}) written to {}; skipped: {} over the pps limit, {} for a full queue",
        c.frames.len(),
        a.port,
        a.direction,
        a.out.display(),
        c.skipped_rate,
        c.skipped_queue_full
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
            direction: "rx".into(),
            time_us: 1_500_000,
            len: 1514,
            data: "0102".repeat(64),
        };
        let p = pcap(&[f], 128).unwrap();
        assert_eq!(&p[..4], &0xa1b2_c3d4u32.to_le_bytes());
        assert_eq!(u32::from_le_bytes(p[16..20].try_into().unwrap()), 128);
        let rec = &p[24..];
        let w = |i: usize| u32::from_le_bytes(rec[i..i + 4].try_into().unwrap());
        assert_eq!((w(0), w(4), w(8), w(12)), (1, 500_000, 128, 1514));
        assert_eq!(rec.len(), 16 + 128);
        let bad = CapturedFrame {
            lcore: 1,
            direction: "tx".into(),
            time_us: 0,
            len: 1,
            data: "zz".into(),
        };
        assert!(pcap(&[bad], 128).is_err());
    }
}
