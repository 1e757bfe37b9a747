//! IPv6 and labelled IPv6 frames through the full pipeline against a small dual-stack FIB
//! built from the input: native IPv6 next hops, 6PE (IPv6 routes through an IPv4 next
//! hop with labels, RFC 4798), ECMP over both, label entries that swap, pop towards an
//! IPv6 payload or pop and look up.
//!
//! Input layout: 32 bytes describe the FIB, one byte of flags, then records, each a
//! one-byte length and that many bytes; a record's first byte says how the rest becomes a
//! frame ([`frame`]): raw, IPv6, labelled IPv6 or 802.1Q-tagged IPv6, with the version,
//! payload length and S bits made right unless the mode says not to, and the destination
//! optionally one the router must treat specially (its own address, link-local,
//! multicast, loopback). Invariants checked on every verdict:
//! - dropped and punted packets are exactly as received;
//! - a burst and one-packet bursts through the stages alone give the same verdicts and
//!   bytes (the fast path and batching are invisible);
//! - only frames sent to the input port's MAC are forwarded, to a port of the FIB, never
//!   grown by more than the pushed labels, as IPv6 or MPLS (never IPv4 from IPv6 input);
//! - label stacks end with exactly one S bit, on the bottom entry; the top TTL is not 0;
//! - native IPv6 forwarded: the hop limit went down by exactly one (from 2 or more), the
//!   rest of the header and the datagram are unchanged, neither address is link-local,
//!   unspecified or loopback, the destination is not multicast (RFC 8200, RFC 4291) nor
//!   one of the router's addresses (installed as /128 local routes, as the config does);
//!   labels imposed on it carry hop limit - 1 (uniform) or the pipe TTL;
//! - labelled input disposed to IPv6: version 6, hop limit between 1 and the input's,
//!   addresses unchanged.
#![no_main]

use std::cell::RefCell;
use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use net::fib::{
    Adjacency, Family, Fib, FibBuilder, Ipv4Route, LabelEntry, LabelOp, NextHop, RouteTarget,
    TtlMode, MAX_PUSH,
};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig, Verdict};

const PIPE_TTL: u8 = 200;
const FIB_BYTES: usize = 32;
const PORTS: u16 = 3;
const ETH_IPV6: u16 = 0x86dd;
const ETH_MPLS: u16 = 0x8847;
const ETH_IPV4: u16 = 0x0800;
const IP6_HEADER: usize = 40;

fn mode(b: u8) -> TtlMode {
    if b & 1 == 0 {
        TtlMode::Uniform
    } else {
        TtlMode::Pipe(PIPE_TTL)
    }
}

/// The router's global IPv6 address on port `p`: 2001:db8:p::1.
fn port_addr6(p: u16) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..6].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, p as u8]);
    a[15] = 1;
    a
}

/// The router's MAC on port `p`.
fn port_mac(p: u16) -> [u8; 6] {
    [0x02, 0, 0, 0, 0x01, p as u8]
}

/// Four adjacencies: 0 and 1 to IPv6 neighbours (0..3 labels), 2 to an IPv4 neighbour
/// with 1..3 labels (6PE), 3 to an IPv4 neighbour with 0..3 labels that carries IPv4 or
/// IPv6 when it pushes none (a penultimate hop towards either family).
fn adjacencies(b: &mut FibBuilder, s: &[u8; FIB_BYTES]) -> Vec<u32> {
    (0..4u8)
        .map(|i| {
            let c = s[i as usize];
            let n = match i {
                2 => 1 + c as usize % 3,
                _ => c as usize & 3,
            }
            .min(MAX_PUSH);
            let labels: Vec<u32> = (0..n)
                .map(|k| 16 + ((c as u32 >> 2) + k as u32) % 64)
                .collect();
            let mac = (c & 0x80 == 0 || i == 0).then_some([2, 0, 0, 0, 9, i]);
            let m = s[4 + i as usize];
            let mtu = if m < 16 { 80 + m as u16 * 4 } else { 1500 };
            let (port, src) = (i as u16 % PORTS, [2, 0, 0, 0, 0, i]);
            let adj = if i < 2 {
                let mut nb = port_addr6(port);
                nb[15] = 2 + i;
                Adjacency::new_v6(port, mtu, nb, mac, src, &labels)
            } else {
                let payload = if i == 3 && c & 0x40 != 0 {
                    Family::Ipv6
                } else {
                    Family::Ipv4
                };
                Adjacency::new(port, mtu, [10, 0, i, 2], mac, src, &labels).with_payload(payload)
            };
            b.add_adjacency(adj)
        })
        .collect()
}

fn build_fib(s: &[u8; FIB_BYTES]) -> Fib {
    let mut b = FibBuilder::new();
    for p in 0..PORTS {
        b.set_port_address(p, [10, 0, p as u8, 1]);
        b.set_port_address6(p, port_addr6(p));
    }
    let adjs = adjacencies(&mut b, s);
    // Native and 6PE next hops in one group.
    let ecmp = b.add_ecmp(&[(adjs[0], 1), (adjs[1], 2), (adjs[2], 1)]).ok();
    // IPv6 routes never use adjacency 3 (an IPv4 neighbour that may push no label).
    let nh6 = |c: u8| match (c % 4, ecmp) {
        (3, Some(g)) => NextHop::Ecmp(g),
        (k, _) => NextHop::Adjacency(adjs[k as usize % 3]),
    };
    // The router's own addresses, as the config installs them (before the fuzzed routes,
    // which may not replace them).
    for p in 0..PORTS {
        let own = u128::from_be_bytes(port_addr6(p));
        let local = Ipv4Route {
            target: RouteTarget::Local,
            ttl_mode: TtlMode::Uniform,
        };
        b.add_ipv6_route(own, 128, local).expect("a /128 per port");
    }
    // Six IPv6 routes with short prefixes, so that random destinations hit them.
    for i in 0..6 {
        let c = s[8 + 2 * i];
        let len = c % 9;
        let top = (s[9 + 2 * i] as u128) << 120;
        let addr = if len == 0 {
            0
        } else {
            top & (!0u128 << (128 - len))
        };
        let target = match c >> 5 {
            0 => RouteTarget::Local,
            1 => RouteTarget::Connected { port: 1 },
            2 => RouteTarget::Blackhole,
            _ => RouteTarget::NextHop(nh6(c >> 4)),
        };
        let route = Ipv4Route {
            target,
            ttl_mode: mode(c >> 3),
        };
        let _ = b.add_ipv6_route(addr, len, route);
    }
    // The IPv4 side for labelled IPv4 payloads: everything to adjacency 3.
    let _ = b.add_ipv4_route(
        0,
        0,
        Ipv4Route {
            target: RouteTarget::NextHop(NextHop::Adjacency(adjs[3])),
            ttl_mode: TtlMode::Uniform,
        },
    );
    // Eight label entries among labels 16..48.
    for i in 0..8 {
        let c = s[20 + i];
        let op = match c & 3 {
            0 => LabelOp::Swap,
            1 => LabelOp::Pop,
            _ => LabelOp::PopAndLookup,
        };
        let next_hop = (op != LabelOp::PopAndLookup).then(|| match (c >> 2) % 5 {
            4 => NextHop::Adjacency(adjs[3]),
            k => nh6(k),
        });
        let e = LabelEntry {
            op,
            next_hop,
            ttl_mode: mode(c >> 5),
        };
        let _ = b.add_label(16 + (s[28 + i % 4] as u32 + i as u32 * 4) % 32, e);
    }
    b.build(1)
}

/// Makes the IPv6 header at the start of `ip` right (version, payload length) unless
/// `m` says not to, and gives it a special destination when `m` asks for one.
fn fix_ipv6(ip: &mut [u8], m: u8, in_port: u16) {
    if ip.len() < IP6_HEADER {
        return;
    }
    if m & 4 == 0 {
        ip[0] = 0x60 | (ip[0] & 0x0f);
    }
    if m & 8 == 0 {
        let n = (ip.len() - IP6_HEADER) as u16;
        ip[4..6].copy_from_slice(&n.to_be_bytes());
    }
    let dst = &mut ip[24..40];
    match (m >> 4) & 7 {
        1 => dst.copy_from_slice(&port_addr6(in_port)),
        2 => dst[..2].copy_from_slice(&[0xfe, 0x80]),
        3 => dst[..2].copy_from_slice(&[0xff, 0x02]),
        4 => dst.copy_from_slice(&1u128.to_be_bytes()),
        5 => ip[8..10].copy_from_slice(&[0xfe, 0x80]),
        _ => {}
    }
}

/// One record as a frame. Mode (its first byte) & 3: 0 raw bytes (sent to the port's MAC
/// when they start with 0), 1 IPv6, 2 labelled (1 to 4 labels among 16..48 unless bit
/// 3, S bits right unless bit 6), 3 802.1Q-tagged IPv6. Bit 7 of a built frame: sent to
/// the all-nodes multicast MAC instead of the port's.
fn frame(rec: &[u8], in_port: u16) -> Vec<u8> {
    let Some((&m, body)) = rec.split_first() else {
        return Vec::new();
    };
    if m & 3 == 0 {
        let mut f = body.to_vec();
        if f.first() == Some(&0) && f.len() >= 6 {
            f[..6].copy_from_slice(&port_mac(in_port));
        }
        return f;
    }
    let mut f = Vec::with_capacity(rec.len() + 18);
    let dst = if m & 0x80 != 0 {
        [0x33, 0x33, 0, 0, 0, 1]
    } else {
        port_mac(in_port)
    };
    f.extend_from_slice(&dst);
    f.extend_from_slice(&[2, 0, 0, 0, 0, 0xfe]);
    let mut rest = body;
    match m & 3 {
        1 => f.extend_from_slice(&ETH_IPV6.to_be_bytes()),
        2 => {
            f.extend_from_slice(&ETH_MPLS.to_be_bytes());
            let n = (1 + ((m >> 4) & 3) as usize).min(rest.len() / 4);
            for k in 0..n {
                let mut w = u32::from_be_bytes(rest[4 * k..4 * k + 4].try_into().unwrap());
                if m & 8 == 0 {
                    w = ((16 + (w >> 12) % 32) << 12) | (w & 0xfff);
                }
                if m & 0x40 == 0 {
                    w = (w & !0x100) | (((k + 1 == n) as u32) << 8);
                }
                f.extend_from_slice(&w.to_be_bytes());
            }
            rest = &rest[4 * n..];
        }
        _ => {
            f.extend_from_slice(&0x8100u16.to_be_bytes());
            f.extend_from_slice(rest.get(..2).unwrap_or(&[0, 0]));
            f.extend_from_slice(&ETH_IPV6.to_be_bytes());
            rest = rest.get(2..).unwrap_or(&[]);
        }
    }
    let at = f.len();
    f.extend_from_slice(rest);
    // A labelled record keeps its special-destination bits for the label choices.
    let special = if m & 3 == 2 { m & 0x0c } else { m & 0x7c };
    fix_ipv6(&mut f[at..], special, in_port);
    f
}

fn split_frames(mut data: &[u8], in_port: u16) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    while let Some((&n, rest)) = data.split_first() {
        let n = (n as usize).min(rest.len());
        v.push(frame(&rest[..n], in_port));
        data = &rest[n..];
        if v.len() == 80 {
            break;
        }
    }
    v
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
        if out && at == start {
            assert_ne!(d[at + 3], 0, "forwarded top label with TTL 0");
        }
        at += 4;
        if d[at - 2] & 1 != 0 {
            return Some(at);
        }
    }
}

/// The IPv6 datagram at `at` (header and payload, without Ethernet padding).
fn datagram(d: &[u8], at: usize) -> &[u8] {
    let ip = &d[at..];
    assert!(
        ip.len() >= IP6_HEADER && ip[0] >> 4 == 6,
        "no IPv6 header at {at}"
    );
    let len = IP6_HEADER + be16(ip, 4) as usize;
    assert!(len <= ip.len(), "IPv6 payload length past the frame");
    &ip[..len]
}

fn never_forwarded(a: &[u8]) -> bool {
    let v = u128::from_be_bytes(a.try_into().unwrap());
    v == 0 || v == 1 || a[0] == 0xfe && a[1] & 0xc0 == 0x80
}

/// Native IPv6 in, forwarded: one hop less, nothing else changed, a forwardable scope.
fn check_native(i: &[u8], out: &[u8], out_ip: usize) {
    let o = datagram(out, out_ip);
    assert!(i[7] > 1, "forwarded with hop limit {}", i[7]);
    assert_eq!(o[7], i[7] - 1, "hop limit not decremented by exactly one");
    assert_eq!(o.len(), i.len(), "IPv6 datagram length changed");
    assert_eq!(&o[..7], &i[..7], "IPv6 header changed");
    assert_eq!(&o[8..], &i[8..], "IPv6 addresses or payload changed");
    assert!(
        !never_forwarded(&i[8..24]),
        "forwarded source {:02x?}",
        &i[8..24]
    );
    assert!(
        !never_forwarded(&i[24..40]),
        "forwarded destination {:02x?}",
        &i[24..40]
    );
    assert_ne!(i[24], 0xff, "forwarded a multicast destination");
    assert!(
        !(0..PORTS).any(|p| i[24..40] == port_addr6(p)),
        "forwarded a packet for the router's own address"
    );
    for k in (14..out_ip).step_by(4) {
        let t = out[k + 3];
        assert!(
            t == i[7] - 1 || t == PIPE_TTL,
            "imposed label TTL {t} (hop limit {})",
            i[7]
        );
    }
}

fn check_forwarded(input: &[u8], out: &[u8], port: u16, in_port: u16) {
    assert!(port < PORTS, "forwarded to unknown port {port}");
    assert_eq!(
        input[..6],
        port_mac(in_port),
        "forwarded a frame not sent to the port's MAC"
    );
    assert!(out.len() >= 14, "forwarded runt");
    assert!(
        out.len() <= input.len() + 4 * MAX_PUSH,
        "frame grew past the pushed labels"
    );
    let (in_type, in_l3) = match be16(input, 12) {
        0x8100 => (be16(input, 16), 18),
        t => (t, 14),
    };
    let out_type = be16(out, 12);
    let out_ip = match out_type {
        ETH_IPV6 | ETH_IPV4 => 14,
        ETH_MPLS => stack_end(out, 14, true).unwrap(),
        t => panic!("forwarded with ethertype {t:#06x}"),
    };
    if in_type == ETH_IPV6 {
        assert_ne!(out_type, ETH_IPV4, "IPv6 input left as IPv4");
        check_native(datagram(input, in_l3), out, out_ip);
    } else if out_type == ETH_IPV6 {
        // Disposed to IPv6: the router may trust the LSP for the payload length, so
        // only what it must have read and written is checked.
        let ip_in = stack_end(input, in_l3, false).expect("forwarded MPLS input without bottom");
        let (i, o) = (&input[ip_in..], &out[out_ip..]);
        assert!(
            i.len() >= IP6_HEADER && o.len() >= IP6_HEADER,
            "disposed a runt as IPv6"
        );
        assert_eq!(o[0] >> 4, 6, "disposed to IPv6 without version 6");
        assert!(
            o[7] >= 1 && o[7] <= i[7],
            "disposed hop limit {} from {}",
            o[7],
            i[7]
        );
        assert_eq!(
            &o[8..IP6_HEADER],
            &i[8..IP6_HEADER],
            "disposed addresses changed"
        );
    }
}

/// Tables kept at most (about 1 MiB each: the tables' top levels).
const FIB_CACHE: usize = 64;

thread_local! {
    /// Tables by the bytes that describe them: building one (an `Lpm4` and an `Lpm6`)
    /// costs far more than its frames, and the corpus shares a few dozen. Each is a pure
    /// function of its bytes, so a reproducer still needs nothing but its input.
    static FIBS: RefCell<HashMap<[u8; FIB_BYTES], Fib>> = RefCell::new(HashMap::new());
}

fuzz_target!(|data: &[u8]| {
    if data.len() < FIB_BYTES + 1 {
        return;
    }
    let (head, rest) = data.split_at(FIB_BYTES);
    let head: [u8; FIB_BYTES] = head.try_into().unwrap();
    FIBS.with(|c| {
        let mut c = c.borrow_mut();
        if !c.contains_key(&head) && c.len() >= FIB_CACHE {
            c.clear();
        }
        run(c.entry(head).or_insert_with(|| build_fib(&head)), rest);
    });
});

/// The frames of `rest` (flags byte first) through `fib`, each verdict checked.
fn run(fib: &Fib, rest: &[u8]) {
    let debug = std::env::var_os("FUZZ_DEBUG").is_some();
    if debug {
        eprintln!("{fib:#?}");
    }
    let flags = rest[0];
    let macs: Vec<_> = (0..PORTS).map(port_mac).collect();
    let own = (0..PORTS).map(|p| [10, 0, p as u8, 1]);
    let pipeline = Pipeline::new(
        PipelineConfig {
            max_label_depth: 1 + (flags & 7) as usize,
            accept_vlan: flags & 8 != 0,
            punt_ip_options: flags & 16 != 0,
        },
        LocalAddrs::new(&macs, own).with_ipv6((0..PORTS).map(|p| (p, port_addr6(p)))),
    );
    let in_port = (flags >> 5) as u16 % PORTS;
    let frames = split_frames(&rest[1..], in_port);
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
    pipeline.process_burst(fib, in_port, &mut pkts, &mut verdicts);
    for (i, (p, v)) in pkts.iter().zip(&verdicts).enumerate() {
        if debug {
            eprintln!("in  {:02x?}\n{v:?}\nout {:02x?}", frames[i], p.data());
        }
        match *v {
            Verdict::Forward { port } => check_forwarded(&frames[i], p.data(), port, in_port),
            _ => assert_eq!(
                p.data(),
                frames[i],
                "dropped/punted packet was modified: {v:?}"
            ),
        }
        let mut one = [VecBuf::with_headroom(&frames[i], headroom)];
        let mut ov = [Verdict::Forward { port: u16::MAX }];
        pipeline.process_burst_staged(fib, in_port, &mut one, &mut ov);
        assert_eq!(ov[0], *v, "verdict depends on the burst");
        assert_eq!(one[0].data(), p.data(), "output depends on the burst");
    }
}
