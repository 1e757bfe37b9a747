//! `trace` and `capture` requests: their bounds and filter, traced packets explained
//! (with what the slow path did with punted ones), captured frames stamped (pure:
//! records in, the decisions named as `lookup` names them, with the received headers
//! spelled out).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use net::fib::Fib;

use super::collect::Captured;
use super::handle::Handler;
use super::lookup::explain;
use super::proto::*;
use super::table::{mac_str, Names};
use crate::trace::filter::Filter;
use crate::trace::slow::Outcome;
use crate::trace::{CapturePlan, TraceRecord, MAX_SNAP};

/// Parses a request's filter (none: everything).
pub fn filter(expr: Option<&str>) -> Result<Filter, String> {
    Filter::parse(expr.unwrap_or("")).map_err(|e| format!("filter: {e}"))
}

/// What a capture request asks for besides the trace bounds.
pub fn capture_plan(
    port: u16,
    direction: Option<Direction>,
    snaplen: Option<u32>,
    pps: Option<u32>,
) -> Result<CapturePlan, String> {
    let snaplen = snaplen.unwrap_or(MAX_SNAP as u32);
    if snaplen == 0 || snaplen as usize > MAX_SNAP {
        return Err(format!("snaplen must be 1..={MAX_SNAP}"));
    }
    let pps = pps.unwrap_or(DEFAULT_CAPTURE_PPS);
    if pps == 0 || pps > MAX_CAPTURE_PPS {
        return Err(format!("pps must be 1..={MAX_CAPTURE_PPS}"));
    }
    let d = direction.unwrap_or(Direction::Rx);
    Ok(CapturePlan {
        port,
        rx: d != Direction::Tx,
        tx: d != Direction::Rx,
        snaplen,
        pps,
    })
}

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
    }
    let version = match ty {
        0x8847 => f.get(at).map_or(0, |v| v >> 4),
        0x0800 => 4,
        0x86dd => 6,
        _ => 0,
    };
    match version {
        4 => ipv4_lines(f, at, &mut out),
        6 => ipv6_lines(f, at, &mut out),
        _ => {}
    }
    out
}

fn ports_line(proto: u8, p: Option<&[u8]>, out: &mut Vec<String>) {
    if let (6 | 17, Some(p)) = (proto, p) {
        out.push(format!(
            "{} {} > {}",
            if proto == 6 { "tcp" } else { "udp" },
            u16::from_be_bytes([p[0], p[1]]),
            u16::from_be_bytes([p[2], p[3]])
        ));
    }
}

fn ipv4_lines(f: &[u8], at: usize, out: &mut Vec<String>) {
    let Some(ip) = f.get(at..at + 20).filter(|ip| ip[0] >> 4 == 4) else {
        return;
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
    ports_line(ip[9], f.get(l4..l4 + 4), out);
}

/// The fixed header, and the ports past the extension headers (the wire module's
/// bounded walk; a later fragment has none).
fn ipv6_lines(f: &[u8], at: usize, out: &mut Vec<String>) {
    use net::wire::ipv6::{Ipv6Packet, HEADER_LEN};
    let Some(h) = f.get(at..at + HEADER_LEN).map(Ipv6Packet::new_unchecked) else {
        return;
    };
    if h.version() != 6 {
        return;
    }
    out.push(format!(
        "ipv6 {} > {} next {} hlim {} len {}",
        Ipv6Addr::from(h.src_addr()),
        Ipv6Addr::from(h.dst_addr()),
        h.next_header(),
        h.hop_limit(),
        h.payload_len()
    ));
    let rest = &f[at + HEADER_LEN..];
    let payload = &rest[..usize::from(h.payload_len()).min(rest.len())];
    if let Ok(u) = net::wire::ipv6_ext::walk(h.next_header(), payload) {
        let l4 = payload
            .get(u.offset..u.offset + 4)
            .filter(|_| u.has_header());
        ports_line(u.protocol, l4, out);
    }
}

/// Names the decisions of each traced packet against `fib` (the table now, normally
/// the one that decided: its generation is in each answer).
pub fn explain_all(
    h: &Handler,
    records: &[TraceRecord],
    outcomes: &[Option<Outcome>],
    fib: &Fib,
) -> Reply {
    let names = Names {
        ports: &h.port_names,
        book: &h.book,
    };
    let packets = records
        .iter()
        .enumerate()
        .map(|(i, r)| TracedPacket {
            lcore: r.lcore,
            headers: headers(r.input()),
            decision: explain(fib, &names, r.in_port, r.input(), r.verdict, r.output()),
            slow_path: slow_view(r, outcomes.get(i).copied().flatten()),
        })
        .collect();
    Reply::Trace { packets }
}

fn slow_view(r: &TraceRecord, o: Option<Outcome>) -> Option<SlowPathView> {
    if !matches!(r.verdict, net::pipeline::Verdict::SlowPath(_)) {
        return None;
    }
    Some(match o {
        Some(o) => SlowPathView {
            action: o.action.into(),
            detail: o.detail.map(Into::into),
        },
        None => SlowPathView {
            action: "not_seen".into(),
            detail: None,
        },
    })
}

/// Captured frames, stamped by the TSC the workers read.
pub fn frames(c: &Captured, snaplen: u32, tsc_hz: u64) -> Reply {
    let frames = c
        .frames
        .iter()
        .map(|r| {
            let dt = i128::from(r.tsc) - i128::from(c.tsc0);
            let us = i128::from(c.unix_us0) + dt * 1_000_000 / i128::from(tsc_hz.max(1));
            CapturedFrame {
                lcore: r.lcore,
                direction: if r.tx { "tx" } else { "rx" }.into(),
                time_us: us.max(0) as u64,
                len: r.len,
                data: r.bytes().iter().map(|b| format!("{b:02x}")).collect(),
            }
        })
        .collect();
    Reply::Capture(CaptureReply {
        frames,
        snaplen,
        skipped_rate: c.skipped.0,
        skipped_queue_full: c.skipped.1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_bounds_and_directions() {
        let p = |d, s, r| capture_plan(3, d, s, r);
        let c = p(None, None, None).unwrap();
        assert_eq!(
            (c.port, c.rx, c.tx, c.snaplen, c.pps),
            (3, true, false, MAX_SNAP as u32, DEFAULT_CAPTURE_PPS)
        );
        let c = p(Some(Direction::Tx), Some(64), Some(10)).unwrap();
        assert_eq!((c.rx, c.tx, c.snaplen, c.pps), (false, true, 64, 10));
        let c = p(Some(Direction::Both), None, Some(MAX_CAPTURE_PPS)).unwrap();
        assert_eq!((c.rx, c.tx), (true, true));
        for (s, r, says) in [
            (Some(0), None, "snaplen must be"),
            (Some(MAX_SNAP as u32 + 1), None, "snaplen must be"),
            (None, Some(0), "pps must be"),
            (None, Some(MAX_CAPTURE_PPS + 1), "pps must be"),
        ] {
            let e = p(None, s, r).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
        assert!(filter(None).unwrap().is_empty());
        let e = filter(Some("label")).unwrap_err();
        assert!(e.starts_with("filter: "), "{e}");
    }

    #[test]
    fn ipv6_headers_are_spelled_out_plain_and_labelled() {
        let spec = traffic::Frame6Spec {
            src_port: 1001,
            dst_port: 53,
            ..traffic::Frame6Spec::default()
        };
        assert_eq!(
            headers(&spec.build())[1..],
            [
                "ipv6 2001:db8:ffff::1 > 2001:db8:1000::1 next 17 hlim 64 len 8",
                "udp 1001 > 53"
            ]
        );
        // Labelled, with a destination-options header before the UDP header.
        let mut f = traffic::Frame6Spec {
            labels: vec![(1000, 0, 9)],
            ..spec
        }
        .build();
        f[18 + 6] = 60;
        f[18 + 5] += 8;
        f.splice(58..58, [17, 0, 1, 4, 0, 0, 0, 0]);
        assert_eq!(
            headers(&f)[1..],
            [
                "mpls label 1000 tc 0 ttl 9 bos",
                "ipv6 2001:db8:ffff::1 > 2001:db8:1000::1 next 60 hlim 64 len 16",
                "udp 1001 > 53"
            ]
        );
        assert_eq!(
            headers(&f[..57]).len(),
            2,
            "a cut IPv6 header is not spelled out"
        );
    }

    #[test]
    fn frames_are_stamped_from_the_tsc_and_say_their_direction() {
        let rec = |tx, tsc, caplen| crate::trace::CaptureRecord {
            session: 1,
            lcore: 2,
            tx,
            tsc,
            len: 100,
            caplen,
            data: [0xab; MAX_SNAP],
        };
        let c = Captured {
            frames: vec![rec(false, 1_000, 2), rec(true, 3_000, 1), rec(false, 0, 0)],
            tsc0: 1_000,
            unix_us0: 5_000_000,
            skipped: (7, 1),
        };
        // 1,000 cycles per microsecond.
        let Reply::Capture(r) = frames(&c, 64, 1_000_000_000) else {
            panic!()
        };
        let f: Vec<(&str, u64, u32, &str)> = r
            .frames
            .iter()
            .map(|f| (f.direction.as_str(), f.time_us, f.len, f.data.as_str()))
            .collect();
        assert_eq!(
            f,
            [
                ("rx", 5_000_000, 100, "abab"),
                ("tx", 5_000_002, 100, "ab"),
                ("rx", 4_999_999, 100, "")
            ]
        );
        assert_eq!(
            (r.snaplen, r.skipped_rate, r.skipped_queue_full),
            (64, 7, 1)
        );
    }
}
