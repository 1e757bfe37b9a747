//! Packet builders and an independent decoder for the pipeline tests.
//!
//! IPv4/UDP are built and checked with etherparse; the MPLS label stack (which etherparse
//! 0.16 does not know) is encoded and decoded by hand here, separately from `net::wire`.
#![allow(dead_code)]

use etherparse::{IpNumber, Ipv4Header, UdpHeader};
use net::fib::{Adjacency, Fib, FibBuilder, Ipv4Route, NextHop, RouteTarget, TtlMode};
use net::packet::{PacketBuf, VecBuf};
use net::pipeline::{LocalAddrs, Pipeline, PipelineConfig, Verdict};

pub const ROUTER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
pub const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x99];
pub const IN_PORT: u16 = 0;
pub const ROUTER_ADDR: [u8; 4] = [192, 0, 2, 1];

pub fn nh_mac(port: u16) -> [u8; 6] {
    [0x02, 0xaa, 0, 0, 0, port as u8]
}
pub fn port_mac(port: u16) -> [u8; 6] {
    [0x02, 0xbb, 0, 0, 0, port as u8]
}

/// An IPv4/UDP datagram description.
#[derive(Clone, Debug)]
pub struct Ip4 {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub ttl: u8,
    pub dscp: u8,
    pub df: bool,
    pub mf: bool,
    pub frag_off: u16,
    pub sport: u16,
    pub dport: u16,
    pub payload_len: usize,
}

impl Ip4 {
    pub fn new(src: [u8; 4], dst: [u8; 4]) -> Ip4 {
        Ip4 {
            src,
            dst,
            ttl: 64,
            dscp: 0,
            df: true,
            mf: false,
            frag_off: 0,
            sport: 40000,
            dport: 53,
            payload_len: 18,
        }
    }
    pub fn ttl(mut self, t: u8) -> Self {
        self.ttl = t;
        self
    }
    pub fn len(mut self, l: usize) -> Self {
        self.payload_len = l;
        self
    }
    pub fn bytes(&self) -> Vec<u8> {
        let payload: Vec<u8> = (0..self.payload_len).map(|i| i as u8).collect();
        let mut ip = Ipv4Header::new(
            (8 + self.payload_len) as u16,
            self.ttl,
            IpNumber::UDP,
            self.src,
            self.dst,
        )
        .unwrap();
        ip.dscp = etherparse::Ipv4Dscp::try_new(self.dscp).unwrap();
        ip.dont_fragment = self.df;
        ip.more_fragments = self.mf;
        ip.fragment_offset = etherparse::IpFragOffset::try_new(self.frag_off).unwrap();
        ip.identification = 0x4242;
        ip.header_checksum = ip.calc_header_checksum();
        let udp = UdpHeader::with_ipv4_checksum(self.sport, self.dport, &ip, &payload).unwrap();
        let mut out = Vec::new();
        ip.write(&mut out).unwrap();
        udp.write(&mut out).unwrap();
        out.extend_from_slice(&payload);
        out
    }
}

/// The MAC of the router's port `port` (`ROUTER_MAC` on `IN_PORT`).
pub fn router_mac(port: u16) -> [u8; 6] {
    if port == IN_PORT {
        ROUTER_MAC
    } else {
        port_mac(port)
    }
}

/// The router's addresses as [`builder`] gives them, with [`router_mac`] on ports 0..4.
pub fn local() -> LocalAddrs {
    let macs: Vec<_> = (0..4).map(router_mac).collect();
    LocalAddrs::new(&macs, (0..4u8).map(|p| [192, 0, 2 + p, 1]))
}

/// The pipeline the tests run: these settings, [`local`] addresses.
pub fn pipeline(cfg: PipelineConfig) -> Pipeline {
    Pipeline::new(cfg, local())
}

/// An Ethernet frame to the router.
pub fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    eth_to(ROUTER_MAC, ethertype, payload)
}

/// An Ethernet frame to `dst`.
pub fn eth_to(dst: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// One label stack entry word.
pub fn lse(label: u32, tc: u8, bos: bool, ttl: u8) -> [u8; 4] {
    ((label << 12) | ((tc as u32) << 9) | ((bos as u32) << 8) | ttl as u32).to_be_bytes()
}

/// An MPLS frame: `labels` are (label, tc, ttl), top first; S set on the last.
pub fn mpls(labels: &[(u32, u8, u8)], payload: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    for (i, &(l, tc, ttl)) in labels.iter().enumerate() {
        p.extend_from_slice(&lse(l, tc, i + 1 == labels.len(), ttl));
    }
    p.extend_from_slice(payload);
    eth(0x8847, &p)
}

pub fn ipv4_frame(ip: &Ip4) -> Vec<u8> {
    eth(0x0800, &ip.bytes())
}

/// A label stack entry as decoded: (label, tc, bos, ttl).
pub type Lse = (u32, u8, bool, u8);

/// An output frame decoded independently of `net::wire`.
#[derive(Debug)]
pub struct Decoded {
    pub dst: [u8; 6],
    pub src: [u8; 6],
    pub ethertype: u16,
    pub labels: Vec<Lse>,
    /// The IPv4 header, checked by etherparse (checksum, total length == rest of frame).
    pub ip: Option<Ipv4Header>,
    /// Everything after the label stack.
    pub payload: Vec<u8>,
}

/// Decodes a frame; asserts IPv4 header and UDP checksums and total length when the
/// payload is IPv4 (exact for plain IPv4, at most the rest of the frame below labels).
pub fn decode(frame: &[u8]) -> Decoded {
    let (eh, rest) = etherparse::Ethernet2Header::from_slice(frame).expect("ethernet");
    let mut labels = Vec::new();
    let mut rest = rest;
    if eh.ether_type.0 == 0x8847 {
        loop {
            let w = u32::from_be_bytes(rest[..4].try_into().expect("label"));
            let e = (w >> 12, ((w >> 9) & 7) as u8, w & 0x100 != 0, w as u8);
            labels.push(e);
            rest = &rest[4..];
            if e.2 {
                break;
            }
        }
    }
    let payload = rest.to_vec();
    let is_ip = eh.ether_type.0 == 0x0800 || labels.last().is_some_and(|l| l.2);
    let ip = if is_ip && rest.first().is_some_and(|b| b >> 4 == 4) {
        let (h, ip_payload) = Ipv4Header::from_slice(rest).expect("ipv4 header");
        assert_eq!(h.header_checksum, h.calc_header_checksum(), "IPv4 checksum");
        if labels.is_empty() {
            assert_eq!(
                h.total_len as usize,
                rest.len(),
                "IPv4 total length must match the frame (padding trimmed)"
            );
        } else {
            // Label-switched: bytes after the datagram travel on untouched.
            assert!(
                h.total_len as usize <= rest.len(),
                "IPv4 total length beyond the frame"
            );
        }
        if h.protocol == IpNumber::UDP && !h.more_fragments && h.fragment_offset.value() == 0 {
            let (u, data) = UdpHeader::from_slice(ip_payload).expect("udp");
            if u.checksum != 0 {
                assert_eq!(
                    u.checksum,
                    u.calc_checksum_ipv4(&h, data).unwrap(),
                    "UDP checksum"
                );
            }
        }
        Some(h)
    } else {
        None
    };
    Decoded {
        dst: eh.destination,
        src: eh.source,
        ethertype: eh.ether_type.0,
        labels,
        ip,
        payload,
    }
}

/// A resolved adjacency on `port` pushing `labels`.
pub fn adj(port: u16, labels: &[u32]) -> Adjacency {
    Adjacency::new(
        port,
        1500,
        [10, 0, port as u8, 2],
        Some(nh_mac(port)),
        port_mac(port),
        labels,
    )
}

pub fn via(a: u32) -> RouteTarget {
    RouteTarget::NextHop(NextHop::Adjacency(a))
}

pub fn route(target: RouteTarget, ttl_mode: TtlMode) -> Ipv4Route {
    Ipv4Route { target, ttl_mode }
}

pub fn addr(a: [u8; 4]) -> u32 {
    u32::from_be_bytes(a)
}

/// A builder with the router's address on ports 0..4.
pub fn builder() -> FibBuilder {
    let mut b = FibBuilder::new();
    for p in 0..4u16 {
        b.set_port_address(p, [192, 0, 2 + p as u8, 1]);
    }
    b
}

pub fn run_with(cfg: PipelineConfig, fib: &Fib, frames: &[Vec<u8>]) -> Vec<(Verdict, Vec<u8>)> {
    let mut pkts: Vec<VecBuf> = frames.iter().map(|f| VecBuf::new(f)).collect();
    let mut verdicts = vec![Verdict::Forward { port: u16::MAX }; pkts.len()];
    pipeline(cfg).process_burst(fib, IN_PORT, &mut pkts, &mut verdicts);
    verdicts
        .into_iter()
        .zip(pkts.iter().map(|p| p.data().to_vec()))
        .collect()
}

pub fn run(fib: &Fib, frames: &[Vec<u8>]) -> Vec<(Verdict, Vec<u8>)> {
    run_with(PipelineConfig::default(), fib, frames)
}

/// Runs one frame; returns its verdict and the frame afterwards.
pub fn run1(fib: &Fib, frame: Vec<u8>) -> (Verdict, Vec<u8>) {
    run(fib, &[frame]).pop().unwrap()
}
