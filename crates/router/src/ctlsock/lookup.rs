//! `lookup`: what the running table does with a synthetic packet. The packet goes
//! through the data path's own [`Pipeline::process_burst`] (fast path included) on the
//! live snapshot, so the answer cannot disagree with forwarding; the table is only read
//! afterwards to name the route, the label entry and the ECMP member the output shows.
//! [`explain`] does the naming for traced packets too.

use std::net::{IpAddr, Ipv4Addr};

use net::fib::{Fib, LabelOp};
use net::packet::VecBuf;
use net::pipeline::{Pipeline, Verdict};

use super::proto::{HopView, LabelOut, LookupReply, LookupRequest};
use super::table::{mac_str, Names};
use traffic::{internet_checksum, Frame6Spec, FrameSpec};

/// The ports as a lookup needs them: names and MACs by port id.
pub struct PortMacs<'a> {
    pub names: &'a [String],
    pub macs: &'a [[u8; 6]],
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn ip(s: &str, what: &str) -> Result<[u8; 4], String> {
    s.parse::<Ipv4Addr>()
        .map(|a| a.octets())
        .map_err(|_| format!("{what} `{s}` is not an IPv4 address"))
}

/// Whether `r` asks about an IPv6 packet: its destination (or, without one, its
/// source) is an IPv6 address.
/// The label stack of the synthetic frame for `r` (its label, if any, with TTL `ttl`).
fn labels(r: &LookupRequest, ttl: u8) -> Result<Vec<(u32, u8, u8)>, String> {
    match r.label {
        Some(l) if l > net::fib::MAX_LABEL => Err(format!("label {l} is over 1048575")),
        Some(l) => Ok(vec![(l, 0, ttl)]),
        None => Ok(Vec::new()),
    }
}

fn is_v6(r: &LookupRequest) -> bool {
    let v6 = |s: &Option<String>| s.as_deref().and_then(|s| s.parse::<IpAddr>().ok());
    matches!(v6(&r.dst).or(v6(&r.src)), Some(IpAddr::V6(_)))
}

/// The synthetic IPv6 frame for `r` (UDP unless `proto` says otherwise).
fn frame6(r: &LookupRequest, in_mac: [u8; 6]) -> Result<Vec<u8>, String> {
    let ttl = r.ttl.unwrap_or(64);
    let ip6 = |s: &str, what: &str| {
        s.parse::<std::net::Ipv6Addr>()
            .map(|a| a.octets())
            .map_err(|_| format!("{what} `{s}` is not an IPv6 address (the other one is)"))
    };
    let mut spec = Frame6Spec {
        dst_mac: in_mac,
        hop_limit: ttl,
        ..Frame6Spec::default()
    };
    if let Some(d) = &r.dst {
        spec.dst_ip = ip6(d, "destination")?;
    }
    if let Some(s) = &r.src {
        spec.src_ip = ip6(s, "source")?;
    }
    spec.labels = labels(r, ttl)?;
    spec.src_port = r.sport.unwrap_or(spec.src_port);
    spec.dst_port = r.dport.unwrap_or(spec.dst_port);
    let mut f = spec.build();
    if let Some(p) = r.proto.filter(|&p| p != 17) {
        f[14 + 4 * spec.labels.len() + 6] = p; // next header (no IPv6 header checksum)
    }
    Ok(f)
}

/// The synthetic frame for `r`, received on a port whose MAC is `in_mac`: IPv6 when
/// its addresses are, else IPv4.
pub fn frame(r: &LookupRequest, in_mac: [u8; 6]) -> Result<Vec<u8>, String> {
    if is_v6(r) {
        return frame6(r, in_mac);
    }
    let ttl = r.ttl.unwrap_or(64);
    let mut spec = FrameSpec {
        dst_mac: in_mac,
        ttl,
        ..FrameSpec::default()
    };
    if let Some(d) = &r.dst {
        spec.dst_ip = ip(d, "destination")?;
    } else if r.label.is_none() {
        return Err("a lookup needs a destination address or a label".into());
    }
    if let Some(s) = &r.src {
        spec.src_ip = ip(s, "source")?;
    }
    spec.labels = labels(r, ttl)?;
    spec.src_port = r.sport.unwrap_or(spec.src_port);
    spec.dst_port = r.dport.unwrap_or(spec.dst_port);
    let mut f = spec.build();
    if let Some(p) = r.proto.filter(|&p| p != 17) {
        let ip = 14 + 4 * spec.labels.len();
        f[ip + 9] = p;
        f[ip + 10..ip + 12].fill(0);
        let c = internet_checksum(&f[ip..ip + 20]);
        f[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    }
    Ok(f)
}

/// Runs the lookup of `r` on `fib` with the data path's pipeline.
pub fn lookup(
    pipeline: &Pipeline,
    fib: &Fib,
    names: &Names,
    ports: &PortMacs,
    r: &LookupRequest,
) -> Result<LookupReply, String> {
    let in_port =
        match &r.in_port {
            None => 0,
            Some(n) => ports.names.iter().position(|p| p == n).ok_or_else(|| {
                format!("no port named `{n}` (ports: {})", ports.names.join(", "))
            })?,
        };
    let in_mac = *ports.macs.get(in_port).ok_or("the router has no ports")?;
    let input = frame(r, in_mac)?;
    let mut pkts = [VecBuf::new(&input)];
    let mut verdicts = [Verdict::Drop(net::pipeline::DropReason::Truncated)];
    pipeline.process_burst(fib, in_port as u16, &mut pkts, &mut verdicts);
    Ok(explain(
        fib,
        names,
        in_port as u16,
        &input,
        verdicts[0],
        &pkts[0].to_vec(),
    ))
}

/// The destination below the stack of a received frame, by family.
#[derive(Clone, Copy)]
enum Dst {
    V4([u8; 4]),
    V6([u8; 16]),
}

/// The top label and the IP destination below the stack of a received frame.
fn keys(frame: &[u8]) -> (Option<u32>, Option<Dst>) {
    let mut at = 14;
    let mut label = None;
    if frame.get(12..14) == Some(&[0x88, 0x47]) {
        while let Some(w) = frame.get(at..at + 4) {
            let w = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
            label.get_or_insert(w >> 12);
            at += 4;
            if w & 0x100 != 0 {
                break;
            }
        }
    } else if frame.get(12..14) != Some(&[0x08, 0x00]) && frame.get(12..14) != Some(&[0x86, 0xdd]) {
        return (None, None);
    }
    let dst = match frame.get(at).map(|b| b >> 4) {
        Some(4) => frame
            .get(at + 16..at + 20)
            .map(|d| Dst::V4([d[0], d[1], d[2], d[3]])),
        Some(6) => frame
            .get(at + 24..at + 40)
            .and_then(|d| d.try_into().ok())
            .map(Dst::V6),
        _ => None,
    };
    (label, dst)
}

/// Names what the data path did with `input` (received on `in_port`): the entries it
/// used, the verdict and, when forwarded as `output`, the rewrite and the member.
pub fn explain(
    fib: &Fib,
    names: &Names,
    in_port: u16,
    input: &[u8],
    verdict: Verdict,
    output: &[u8],
) -> LookupReply {
    let (label, dst) = keys(input);
    let label_entry = label.and_then(|l| fib.lookup_label(l).map(|e| (l, *e)));
    let routed = match &label_entry {
        None => label.is_none(),
        Some((_, e)) => e.op == LabelOp::PopAndLookup,
    };
    let route = dst.filter(|_| routed).and_then(|d| match d {
        Dst::V4(d) => fib
            .ipv4_longest_match(u32::from_be_bytes(d))
            .map(|(a, l, rt)| names.route(fib, a, l, rt)),
        Dst::V6(d) => fib
            .ipv6_longest_match(u128::from_be_bytes(d))
            .map(|(a, l, rt)| names.route6(fib, a, l, rt)),
    });
    let label_entry = label_entry.map(|(l, e)| names.label(fib, l, &e));
    let mut reply = LookupReply {
        generation: fib.generation(),
        in_port: names.port(in_port),
        route,
        label_entry,
        verdict: String::new(),
        reason: None,
        out_port: None,
        next_hop: None,
        dst_mac: None,
        src_mac: None,
        out_labels: Vec::new(),
        out_ip_ttl: None,
        frame_in: hex(input),
        frame_out: None,
    };
    match verdict {
        Verdict::Drop(d) => {
            reply.verdict = "drop".into();
            reply.reason = Some(d.as_str().into());
        }
        Verdict::SlowPath(p) => {
            reply.verdict = "slow_path".into();
            reply.reason = Some(p.as_str().into());
        }
        Verdict::Forward { port } => {
            reply.verdict = "forward".into();
            reply.out_port = Some(names.port(port));
            describe_output(&mut reply, output, port, names);
        }
    }
    reply
}

/// Fills in the rewrite from the output frame, and the member it went to.
fn describe_output(reply: &mut LookupReply, out: &[u8], port: u16, names: &Names) {
    if out.len() < 14 {
        return;
    }
    reply.dst_mac = Some(mac_str(out[0..6].try_into().unwrap_or_default()));
    reply.src_mac = Some(mac_str(out[6..12].try_into().unwrap_or_default()));
    let mut at = 14;
    if out[12..14] == [0x88, 0x47] {
        while let Some(w) = out.get(at..at + 4) {
            let w = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
            at += 4;
            let bos = w & 0x100 != 0;
            reply.out_labels.push(LabelOut {
                label: w >> 12,
                tc: ((w >> 9) & 7) as u8,
                bos,
                ttl: (w & 0xff) as u8,
            });
            if bos {
                break;
            }
        }
    }
    match out.get(at).map(|b| b >> 4) {
        Some(4) => reply.out_ip_ttl = out.get(at + 8).copied(),
        Some(6) => reply.out_ip_ttl = out.get(at + 7).copied(), // the hop limit
        _ => {}
    }
    let hops: &[HopView] = match (&reply.label_entry, &reply.route) {
        (Some(e), _) if !e.next_hops.is_empty() => &e.next_hops,
        (_, Some(r)) => &r.next_hops,
        _ => &[],
    };
    let pushed: Vec<u32> = reply.out_labels.iter().map(|l| l.label).collect();
    let port = names.port(port);
    reply.next_hop = hops
        .iter()
        .find(|h| h.port == port && h.mac == reply.dst_mac && pushed.starts_with(&h.labels))
        .cloned();
    reply.frame_out = Some(hex(out));
}
