//! `trace` and `capture` requests: their bounds, traced packets explained, captured frames (pure: records in, the
//! decisions named as `lookup` names them, with the received headers spelled out).

use std::net::Ipv4Addr;
use std::time::Duration;

use net::fib::Fib;

use super::handle::Handler;
use super::lookup::explain;
use super::proto::*;
use super::table::{mac_str, Names};
use crate::trace::TraceRecord;

/// What a trace request asks for: how many packets, from which port, for how long.
pub fn params(
    h: &Handler,
    count: Option<usize>,
    port: Option<&str>,
    timeout_ms: Option<u64>,
) -> Result<(usize, Option<u16>, Duration), String> {
    let count = count.unwrap_or(DEFAULT_TRACE_COUNT);
    if count == 0 || count > MAX_TRACE_COUNT {
        return Err(format!("count must be 1..={MAX_TRACE_COUNT}"));
    }
    let ms = timeout_ms.unwrap_or(DEFAULT_TRACE_MS);
    if ms == 0 || ms > MAX_TRACE_MS {
        return Err(format!("timeout_ms must be 1..={MAX_TRACE_MS}"));
    }
    let port = port
        .map(|n| {
            h.port_names
                .iter()
                .position(|p| p == n)
                .map(|i| i as u16)
                .ok_or_else(|| format!("no port named `{n}`"))
        })
        .transpose()?;
    Ok((count, port, Duration::from_millis(ms)))
}

/// The received headers, outermost first.
pub fn headers(f: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(eth) = f.get(..14) else {
        return vec![format!("truncated frame of {} bytes", f.len())];
    };
    let ty = u16::from_be_bytes([eth[12], eth[13]]);
    out.push(format!(
        "eth {} > {} type 0x{ty:04x}",
        mac_str(eth[6..12].try_into().unwrap_or_default()),
        mac_str(eth[0..6].try_into().unwrap_or_default())
    ));
    let mut at = 14;
    if ty == 0x8847 {
        while let Some(w) = f.get(at..at + 4) {
            let w = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
            at += 4;
            let bos = w & 0x100 != 0;
            out.push(format!(
                "mpls label {} tc {} ttl {}{}",
                w >> 12,
                (w >> 9) & 7,
                w & 0xff,
                if bos { " bos" } else { "" }
            ));
            if bos {
                break;
            }
        }
    } else if ty != 0x0800 {
        return out;
    }
    let Some(ip) = f.get(at..at + 20).filter(|ip| ip[0] >> 4 == 4) else {
        return out;
    };
    let addr = |o: usize| Ipv4Addr::new(ip[o], ip[o + 1], ip[o + 2], ip[o + 3]);
    out.push(format!(
        "ipv4 {} > {} proto {} ttl {} len {}",
        addr(12),
        addr(16),
        ip[9],
        ip[8],
        u16::from_be_bytes([ip[2], ip[3]])
    ));
    let l4 = at + usize::from(ip[0] & 0xf) * 4;
    if let (6 | 17, Some(p)) = (ip[9], f.get(l4..l4 + 4)) {
        out.push(format!(
            "{} {} > {}",
            if ip[9] == 6 { "tcp" } else { "udp" },
            u16::from_be_bytes([p[0], p[1]]),
            u16::from_be_bytes([p[2], p[3]])
        ));
    }
    out
}

/// Names the decisions of each traced packet against `fib` (the table now, normally
/// the one that decided: its generation is in each answer).
pub fn explain_all(h: &Handler, records: &[TraceRecord], fib: &Fib) -> Reply {
    let names = Names {
        ports: &h.port_names,
        book: &h.book,
    };
    let packets = records
        .iter()
        .map(|r| TracedPacket {
            lcore: r.lcore,
            headers: headers(r.input()),
            decision: explain(fib, &names, r.in_port, r.input(), r.verdict, r.output()),
        })
        .collect();
    Reply::Trace { packets }
}

/// Captured frames as received.
pub fn frames(records: &[TraceRecord]) -> Reply {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    let frames = records
        .iter()
        .map(|r| CapturedFrame {
            lcore: r.lcore,
            time_us: now,
            len: u32::from(r.in_len),
            data: r.input().iter().map(|b| format!("{b:02x}")).collect(),
        })
        .collect();
    Reply::Capture { frames }
}
