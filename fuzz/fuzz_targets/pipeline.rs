//! Arbitrary frames through the full pipeline against a small FIB built from the input.
//!
//! Input layout: 32 bytes describe the FIB (adjacencies, ECMP, routes, label entries), the
//! rest is a list of frames, each prefixed by a one-byte length. Invariants checked on
//! every verdict:
//! - dropped and punted packets are exactly as received;
//! - a burst and one-packet bursts through the stages alone give the same verdicts and
//!   bytes (batching and the fast path are invisible);
//! - forwarded frames are Ethernet IPv4 or MPLS, never grew by more than the pushed
//!   labels (the buffer's headroom bounds it anyway), and leave on a port of the FIB;
//! - label stacks end with exactly one S bit, on the bottom entry; the top TTL is not 0;
//! - forwarded IPv4 headers verify, their total length matches the buffer, the rest of
//!   the header and the payload are unchanged, and the TTL went down by exactly one for
//!   IPv4 input (at most the input TTL, never 0, for labelled input); labels imposed on
//!   IPv4 input carry IP TTL - 1 (uniform) or the pipe TTL.
#![no_main]

use libfuzzer_sys::fuzz_target;
use net::fib::{
    Adjacency, Fib, FibBuilder, Ipv4Route, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode,
    MAX_PUSH,
};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig, Verdict};
use net::wire::checksum;

const PIPE_TTL: u8 = 200;
const FIB_BYTES: usize = 32;
const PORTS: u16 = 3;

fn mode(b: u8) -> TtlMode {
    if b & 1 == 0 {
        TtlMode::Uniform
    } else {
        TtlMode::Pipe(PIPE_TTL)
    }
}

fn build_fib(s: &[u8; FIB_BYTES]) -> Fib {
    let mut b = FibBuilder::new();
    for p in 0..PORTS {
        b.set_port_address(p, [10, 0, p as u8, 1]);
    }
    // Four adjacencies: 0..3 labels pushed, small labels so they collide with frames.
    let mut adjs = Vec::new();
    for i in 0..4 {
        let c = s[i];
        let n = (c as usize & 3).min(MAX_PUSH);
        let labels: Vec<u32> = (0..n)
            .map(|k| 16 + ((c as u32 >> 2) + k as u32) % 64)
            .collect();
        let mac = if c & 0x80 != 0 && i != 0 {
            None
        } else {
            Some([2, 0, 0, 0, 9, i as u8])
        };
        let mtu = if s[4 + i] < 16 {
            60 + s[4 + i] as u16 * 4
        } else {
            1500
        };
        adjs.push(b.add_adjacency(Adjacency::new(
            i as u16 % PORTS,
            mtu,
            [10, 0, i as u8, 2],
            mac,
            [2, 0, 0, 0, 0, i as u8],
            &labels,
        )));
    }
    let ecmp = b.add_ecmp(&[(adjs[0], 1), (adjs[1], 2), (adjs[2], 1)]).ok();
    let nh = |c: u8| match (c % 5, ecmp) {
        (4, Some(g)) => NextHop::Ecmp(g),
        (k, _) => NextHop::Adjacency(adjs[k as usize % 4]),
    };
    // Six routes with short prefixes, so that random destinations hit them.
    for i in 0..6 {
        let c = s[8 + 2 * i];
        let len = c % 9;
        let addr = if len == 0 {
            0
        } else {
            ((s[9 + 2 * i] as u32) << 24) & (!0u32 << (32 - len))
        };
        let target = match c >> 5 {
            0 => RouteTarget::Local,
            1 => RouteTarget::Connected { port: 1 },
            2 => RouteTarget::Blackhole,
            _ => RouteTarget::NextHop(nh(c >> 4)),
        };
        let _ = b.add_ipv4_route(
            addr,
            len,
            Ipv4Route {
                target,
                ttl_mode: mode(c >> 3),
            },
        );
    }
    // Eight label entries among labels 16..48.
    for i in 0..8 {
        let c = s[20 + i];
        let op = match c & 3 {
            0 => LabelOp::Swap,
            1 => LabelOp::Pop,
            _ => LabelOp::PopAndLookup,
        };
        let next_hop = (op != LabelOp::PopAndLookup).then(|| nh(c >> 2));
        let e = LabelEntry {
            op,
            next_hop,
            ttl_mode: mode(c >> 5),
        };
        let _ = b.add_label(16 + (s[28 + i % 4] as u32 + i as u32 * 4) % 32, e);
    }
    b.build(1)
}

fn be16(d: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([d[at], d[at + 1]])
}

/// Where the label stack of a frame ends (after the S-bit entry), checked for shape.
fn stack_end(d: &[u8], start: usize, out: bool) -> Option<usize> {
    let mut at = start;
    loop {
        if at + 4 > d.len() {
            assert!(!out, "forwarded label stack runs off the end of the frame");
            return None;
        }
        // Only the top label's TTL counts (RFC 3032 §2.4): kept inner labels may carry
        // anything, the router that exposes them decides.
        if out && at == start {
            assert_ne!(d[at + 3], 0, "forwarded top label with TTL 0");
        }
        at += 4;
        if d[at - 2] & 1 != 0 {
            return Some(at);
        }
    }
}

/// IPv4 header at `at`, if version 4 with a sane IHL inside the frame.
fn ipv4_at(d: &[u8], at: usize) -> Option<(usize, usize)> {
    let v = *d.get(at)?;
    let ihl = (v & 0xf) as usize * 4;
    if v >> 4 != 4 || ihl < 20 || at + ihl > d.len() {
        return None;
    }
    Some((at, ihl))
}

fn check_forwarded(input: &[u8], out: &[u8], port: u16) {
    assert!(port < PORTS, "forwarded to unknown port {port}");
    assert!(out.len() >= 14, "forwarded runt");
    assert!(
        out.len() <= input.len() + 4 * MAX_PUSH,
        "frame grew past the pushed labels"
    );
    // An accepted 802.1Q tag is removed on output.
    let (in_type, in_l3) = match be16(input, 12) {
        0x8100 => (be16(input, 16), 18),
        t => (t, 14),
    };
    let out_type = be16(out, 12);
    let out_ip = match out_type {
        0x0800 => 14,
        0x8847 => stack_end(out, 14, true).unwrap(),
        t => panic!("forwarded with ethertype {t:#06x}"),
    };
    if in_type == 0x0800 {
        // Plain IPv4 in: the header must be fully valid (it passed input checks).
        let (ia, ihl) = ipv4_at(input, in_l3).expect("forwarded IPv4 input had a bad header");
        let in_ttl = input[ia + 8];
        let (oa, oihl) = ipv4_at(out, out_ip).expect("forwarded IPv4 header invalid");
        assert_eq!(oihl, ihl);
        let o = &out[oa..];
        assert_eq!(
            checksum::compute(&o[..oihl]),
            0,
            "bad forwarded IPv4 checksum"
        );
        assert_eq!(be16(o, 2) as usize, o.len(), "IPv4 total length != buffer");
        assert_eq!(o[8], in_ttl - 1, "IPv4 TTL not decremented by exactly one");
        let i = &input[ia..ia + o.len()];
        assert_eq!(&o[..8], &i[..8]);
        assert_eq!(&o[9..10], &i[9..10]);
        assert_eq!(
            &o[12..],
            &i[12..],
            "IPv4 addresses, options or payload changed"
        );
        for k in (14..out_ip).step_by(4) {
            let t = out[k + 3];
            assert!(
                t == in_ttl - 1 || t == PIPE_TTL,
                "imposed label TTL {t} (IP TTL {in_ttl})"
            );
        }
    } else if out_type == 0x0800 {
        // Labelled in, disposed to IPv4: the exposed header was checked and rewritten.
        let (oa, oihl) = ipv4_at(out, out_ip).expect("disposed IPv4 header invalid");
        let o = &out[oa..];
        assert_eq!(
            checksum::compute(&o[..oihl]),
            0,
            "bad disposed IPv4 checksum"
        );
        assert_eq!(be16(o, 2) as usize, o.len(), "IPv4 total length != buffer");
        let ip_in = stack_end(input, in_l3, false).expect("forwarded MPLS input without bottom");
        let in_ttl = input[ip_in + 8];
        assert!(
            o[8] >= 1 && o[8] <= in_ttl,
            "disposed TTL {} from {in_ttl}",
            o[8]
        );
        assert_eq!(&o[12..], &input[ip_in + 12..ip_in + o.len()]);
    }
}

/// The router's MAC on port `p`.
fn port_mac(p: u16) -> [u8; 6] {
    [0x02, 0, 0, 0, 0x01, p as u8]
}

/// Frames of one-byte-length-prefixed records. A record whose first byte is 0 is sent to
/// the input port's MAC (its first 6 bytes replaced), so that most frames get past the
/// destination check; the others are compared as they come (other stations, broadcast,
/// multicast).
fn split_frames(mut data: &[u8], in_port: u16) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    while let Some((&n, rest)) = data.split_first() {
        let n = (n as usize).min(rest.len());
        let mut f = rest[..n].to_vec();
        if f.first() == Some(&0) && f.len() >= 6 {
            f[..6].copy_from_slice(&port_mac(in_port));
        }
        v.push(f);
        data = &rest[n..];
        if v.len() == 80 {
            break;
        }
    }
    v
}

fuzz_target!(|data: &[u8]| {
    if data.len() < FIB_BYTES + 1 {
        return;
    }
    let (head, rest) = data.split_at(FIB_BYTES);
    let fib = build_fib(head.try_into().unwrap());
    if std::env::var_os("FUZZ_DEBUG").is_some() {
        eprintln!("{fib:#?}");
    }
    let flags = rest[0];
    let macs: Vec<_> = (0..PORTS).map(port_mac).collect();
    // The router's addresses, as the FIB gives them.
    let own = (0..PORTS).map(|p| [10, 0, p as u8, 1]);
    let pipeline = Pipeline::new(
        PipelineConfig {
            max_label_depth: 1 + (flags & 7) as usize,
            accept_vlan: flags & 8 != 0,
            punt_ip_options: flags & 16 != 0,
        },
        LocalAddrs::new(&macs, own),
    );
    let in_port = (flags >> 5) as u16 % PORTS;
    let frames = split_frames(&rest[1..], in_port);
    // Small headroom sometimes, so that `no_headroom` is reachable.
    let headroom = if flags & 0x80 != 0 {
        8
    } else {
        net::packet::DEFAULT_HEADROOM
    };
    let mut pkts: Vec<VecBuf> = frames
        .iter()
        .map(|f| VecBuf::with_headroom(f, headroom))
        .collect();
    let mut verdicts = vec![Verdict::Forward { port: u16::MAX }; pkts.len()];
    pipeline.process_burst(&fib, in_port, &mut pkts, &mut verdicts);
    for (i, (p, v)) in pkts.iter().zip(&verdicts).enumerate() {
        if std::env::var_os("FUZZ_DEBUG").is_some() {
            eprintln!("in  {:02x?}\n{v:?}\nout {:02x?}", frames[i], p.data());
        }
        match *v {
            Verdict::Forward { port } => check_forwarded(&frames[i], p.data(), port),
            _ => assert_eq!(
                p.data(),
                frames[i],
                "dropped/punted packet was modified: {v:?}"
            ),
        }
        // The same packet alone, through the stages only (no fast path): same verdict,
        // same bytes.
        let mut one = [VecBuf::with_headroom(&frames[i], headroom)];
        let mut ov = [Verdict::Forward { port: u16::MAX }];
        pipeline.process_burst_staged(&fib, in_port, &mut one, &mut ov);
        assert_eq!(ov[0], *v, "verdict depends on the burst");
        assert_eq!(one[0].data(), p.data(), "output depends on the burst");
    }
});
