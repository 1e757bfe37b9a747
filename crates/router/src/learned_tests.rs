use super::*;

use std::net::Ipv4Addr;

use config::types::Cidr;
use net::fib::{Fib, FibBuilder};

const NH: u32 = 0x0a00_0007; // 10.0.0.7, next hop of 198.51.100.0/24
const USER: u32 = 0x0a00_0009; // 10.0.0.9, routed by a /32 of the file
const MAC: [u8; 6] = [2, 0, 0, 0, 0, 7];

fn ports() -> Vec<PortIface> {
    vec![PortIface {
        id: 0,
        name: "in".into(),
        mac: [2, 0, 0, 0, 0, 1],
        mtu: 1500,
        addresses6: Vec::new(),
        addresses: vec![Cidr::new(Ipv4Addr::new(10, 0, 0, 1), 24)],
    }]
}

fn route(adj: AdjId) -> Ipv4Route {
    Ipv4Route {
        target: RouteTarget::NextHop(NextHop::Adjacency(adj)),
        ttl_mode: TtlMode::Uniform,
    }
}

/// The routes file's table: 198.51.100.0/24 via 10.0.0.7, 10.0.0.9/32 via 10.0.0.9.
fn file_fib() -> Fib {
    let mut b = FibBuilder::new();
    let src = [2, 0, 0, 0, 0, 1];
    let a = b.add_adjacency(Adjacency::new(0, 1500, NH.to_be_bytes(), None, src, &[]));
    b.add_ipv4_route(0xc633_6400, 24, route(a)).unwrap();
    let u = b.add_adjacency(Adjacency::new(0, 1500, USER.to_be_bytes(), None, src, &[]));
    b.add_ipv4_route(USER, 32, route(u)).unwrap();
    b.build(1)
}

fn adj_of(d: &FibDelta, ip: u32, len: u8) -> Option<&Adjacency> {
    match d.ipv4_route(ip, len)?.target {
        RouteTarget::NextHop(NextHop::Adjacency(a)) => Some(&d.adjacencies()[a as usize]),
        _ => None,
    }
}

#[test]
fn learned_then_gone() {
    let mut l = Learned::default();
    let mut d = file_fib().derive();
    assert!(l.learn(&mut d, &ports(), false, (0, NH, MAC)).unwrap());
    assert_eq!(adj_of(&d, 0xc633_6400, 24).unwrap().dst_mac, Some(MAC));
    assert_eq!(adj_of(&d, NH, 32).unwrap().dst_mac, Some(MAC), "host route");
    assert!(
        !l.learn(&mut d, &ports(), false, (0, NH, MAC)).unwrap(),
        "known"
    );
    assert!(l.forget(&mut d, 0, NH).unwrap());
    assert_eq!(
        adj_of(&d, 0xc633_6400, 24).unwrap().dst_mac,
        None,
        "resolved again when traffic needs it"
    );
    assert!(d.ipv4_route(NH, 32).is_none(), "host route removed");
    assert!(!l.forget(&mut d, 0, NH).unwrap(), "already gone");
}

#[test]
fn a_routes_file_host_route_stays() {
    let mut l = Learned::default();
    let mut d = file_fib().derive();
    l.learn(&mut d, &ports(), false, (0, USER, MAC)).unwrap();
    assert_eq!(adj_of(&d, USER, 32).unwrap().dst_mac, Some(MAC));
    l.forget(&mut d, 0, USER).unwrap();
    let a = adj_of(&d, USER, 32).expect("the file's /32 is kept");
    assert_eq!(a.dst_mac, None);
}

#[test]
fn static_neighbors_win() {
    let mut l = Learned::default();
    let mut d = file_fib().derive();
    assert!(!l.learn(&mut d, &ports(), true, (0, NH, MAC)).unwrap());
    assert_eq!(adj_of(&d, 0xc633_6400, 24).unwrap().dst_mac, None);
    l.learn(&mut d, &ports(), false, (0, NH, MAC)).unwrap();
    // The next routes file makes it static: the learned MAC is not applied again.
    let mut d = file_fib().derive();
    l.reapply(&mut d, &ports(), |_, n| n == NbrAddr::V4(NH))
        .unwrap();
    assert_eq!(adj_of(&d, 0xc633_6400, 24).unwrap().dst_mac, None);
    assert!(d.ipv4_route(NH, 32).is_none());
    assert_eq!(l.len(), 0);
}

#[test]
fn churn_reuses_adjacencies() {
    let mut l = Learned::default();
    let mut d = file_fib().derive();
    let base = d.adjacencies().len();
    for i in 0..1000u32 {
        let ip = 0x0a00_1000 + i;
        l.learn(&mut d, &ports(), false, (0, ip, MAC)).unwrap();
        if i >= 3 {
            l.forget(&mut d, 0, ip - 3).unwrap();
        }
    }
    assert!(
        d.adjacencies().len() <= base + 4,
        "{} adjacencies for at most 3 learned hosts at a time",
        d.adjacencies().len()
    );
    assert_eq!(l.len(), 3);
    for ip in [0x0a00_1000 + 997, 0x0a00_1000 + 999] {
        assert_eq!(adj_of(&d, ip, 32).unwrap().dst_mac, Some(MAC));
        assert_eq!(adj_of(&d, ip, 32).unwrap().neighbor, ip.to_be_bytes());
    }
    assert!(d.ipv4_route(0x0a00_1000 + 996, 32).is_none());
}

#[test]
fn ipv6_neighbours_fill_their_adjacencies_and_a_host_route() {
    let nh6: u128 = 0xfe80_0000_0000_0000_0000_0000_0000_0007;
    let (v4_twin, other) = (NbrAddr::V4(NH), NbrAddr::V6(nh6 + 1));
    let mut b = FibBuilder::new();
    let src = [2, 0, 0, 0, 0, 1];
    let a = Adjacency::new_v6(0, 1500, nh6.to_be_bytes(), None, src, &[]);
    let a = b.add_adjacency(a);
    b.add_ipv6_route(0x2001_0db8_0002 << 80, 48, route(a))
        .unwrap();
    let v4 = b.add_adjacency(Adjacency::new(0, 1500, NH.to_be_bytes(), None, src, &[]));
    b.add_ipv4_route(0xc633_6400, 24, route(v4)).unwrap();
    let mut d = b.build(1).derive();
    let mut l = Learned::default();
    assert!(l
        .learn_addr(&mut d, &ports(), false, (0, NbrAddr::V6(nh6), MAC))
        .unwrap());
    assert!(l
        .learn_addr(&mut d, &ports(), false, (0, other, MAC))
        .unwrap());
    let adjs = d.adjacencies();
    assert_eq!(adjs[a as usize].dst_mac, Some(MAC));
    assert_eq!(
        adjs[v4 as usize].dst_mac, None,
        "an IPv4 next hop is not its twin"
    );
    let host = |d: &FibDelta| match d.ipv6_route(nh6, 128).map(|r| r.target) {
        Some(RouteTarget::NextHop(NextHop::Adjacency(h))) => {
            Some(d.adjacencies()[h as usize].clone())
        }
        _ => None,
    };
    let h = host(&d).expect("a /128 to the neighbour");
    assert_eq!(
        (h.neighbor6, h.dst_mac),
        (Some(nh6.to_be_bytes()), Some(MAC))
    );
    assert!(!l.forget_addr(&mut d, 0, v4_twin).unwrap(), "never learned");
    assert!(l.forget_addr(&mut d, 0, NbrAddr::V6(nh6)).unwrap());
    let a6 = &d.adjacencies()[a as usize];
    assert_eq!((a6.dst_mac, a6.neighbor6), (None, Some(nh6.to_be_bytes())));
    assert_eq!(a6.payload, net::fib::Family::Ipv6, "still carries IPv6");
    assert!(host(&d).is_none(), "host route gone");
}
