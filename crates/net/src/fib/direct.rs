//! What the fast paths' commonest forwards read of their route, by route id: for a route
//! to one adjacency that carries the family without labels, that adjacency's Ethernet
//! header, port and length limit; for a route to one adjacency that pushes one or two
//! labels (LER imposition, 6PE), the same with the label words and the route's TTL mode
//! too. Copied when the snapshot is frozen (one table for IPv4 datagrams, one for IPv6:
//! routes are shared by both). In the IPv6 table a push's limit is `push_limit`, so that
//! the plain forward's one compare turns it away. Every other route (ECMP, more labels,
//! local, connected, blackhole, the other family's adjacency without labels) gets limits
//! of 0, which no datagram is under, and the fast path decodes it from the route and its
//! adjacency as before.
//!
//! It exists to save those forwards the route's decoding and a second dependent,
//! bounds-checked load (the adjacency by its id): 20 instructions a packet for IPv4 and
//! 31 for IPv6 (docs/benchmarks.md, "Session 22"), and the push its decoding after a
//! failed compare ("Session 24"; 6PE, "Session 32"). It must always be derived from the
//! snapshot's own routes and adjacencies: both `build`s call [`direct_routes`], and
//! nothing changes a frozen snapshot's routes or adjacencies.

use super::{Adjacency, Family, Ipv4Route, NextHop, RouteTarget};
use crate::wire::ethernet::HEADER_LEN as ETH_HEADER_LEN;
use crate::wire::mpls::{field::S_BYTE, ENTRY_LEN};

/// Label stack bytes a [`Direct`] holds: two labels.
pub const DIRECT_PUSH_MAX: usize = 8;

/// One route's forward fields (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Direct {
    /// The Ethernet header (destination, source, and the family's ethertype, or MPLS's
    /// where labels are pushed).
    pub eth: [u8; 14],
    pub port: u16,
    /// The adjacency's [`Adjacency::limit`] (one more than the longest datagram its MTU
    /// carries below the labels it pushes, 0 while its neighbor is unresolved); 0 for
    /// every other route.
    pub limit: u32,
    /// The label stack entries pushed, outermost first, as the adjacency's template has
    /// them but with S set on the bottom one (TC and TTL clear): the last `push` bytes,
    /// after zeros. Right-aligned, so that the fast path writes them in one 8-byte store
    /// ending where the datagram starts, whether one label or two.
    pub lses: [u8; DIRECT_PUSH_MAX],
    /// Bytes of label stack pushed: 0, 4 or 8.
    pub push: u8,
    /// The pushed labels' TTL: 0 for the datagram's own (uniform mode, RFC 3443), else
    /// the pipe mode's.
    pub pipe_ttl: u8,
    /// In the IPv6 table, the [`Direct::limit`] of a push (6PE), whose `limit` is 0 so
    /// that the plain forward's one compare turns it away; 0 for every other entry.
    pub push_limit: u16,
}

// One entry a 32-byte slot: a forward reads one cache line of the table, never two.
const _: () = assert!(std::mem::size_of::<Direct>() == 32);

/// The forward fields of each of `routes` for datagrams of `family`, by route id: a
/// limit only where the adjacency carries that family without labels, or, for IPv4,
/// pushes one or two.
pub(crate) fn direct_routes(
    routes: &[Ipv4Route],
    adjacencies: &[Adjacency],
    family: Family,
) -> Vec<Direct> {
    routes
        .iter()
        .map(|route| match route.target {
            RouteTarget::NextHop(NextHop::Adjacency(a)) => {
                direct(route, &adjacencies[a as usize], family)
            }
            _ => Direct::default(),
        })
        .collect()
}

fn direct(route: &Ipv4Route, adj: &Adjacency, family: Family) -> Direct {
    let push = adj.push_bytes();
    let plain = push == 0 && adj.payload == family;
    let labelled = (1..=DIRECT_PUSH_MAX).contains(&push);
    if !(plain || labelled) {
        return Direct::default();
    }
    let mut lses = [0; DIRECT_PUSH_MAX];
    lses[DIRECT_PUSH_MAX - push..].copy_from_slice(&adj.header_template()[ETH_HEADER_LEN..]);
    if push > 0 {
        lses[DIRECT_PUSH_MAX - ENTRY_LEN + S_BYTE] |= 1;
    }
    let limit = adj.limit() as u32;
    let (limit, push_limit) = match family {
        Family::Ipv6 if labelled => (0, u16::try_from(limit).unwrap_or(0)),
        _ => (limit, 0),
    };
    Direct {
        eth: *adj.ethernet_template(),
        port: adj.port,
        limit,
        lses,
        push: push as u8,
        pipe_ttl: route.ttl_mode.pipe_ttl().unwrap_or(0),
        push_limit,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Fib, FibBuilder, TtlMode};
    use super::*;

    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 9];
    const OWN: [u8; 6] = [2, 0, 0, 0, 0, 1];

    /// Each kind of route in `fib` by its /8 (10: plain, 11: pushes a label, 12: ECMP,
    /// 13: unresolved, 14: local, 15: connected, 16: blackhole, 17: IPv6 adjacency).
    fn fib() -> Fib {
        let mut b = FibBuilder::new();
        let plain = b.add_adjacency(Adjacency::new(3, 1500, [10, 0, 0, 2], Some(MAC), OWN, &[]));
        let push = b.add_adjacency(Adjacency::new(
            3,
            1500,
            [10, 0, 0, 2],
            Some(MAC),
            OWN,
            &[99],
        ));
        let other = b.add_adjacency(Adjacency::new(4, 9000, [10, 0, 1, 2], Some(MAC), OWN, &[]));
        let unresolved = b.add_adjacency(Adjacency::new(3, 1500, [10, 0, 0, 3], None, OWN, &[]));
        let six = b.add_adjacency(Adjacency::new_v6(3, 1500, [1; 16], Some(MAC), OWN, &[]));
        let group = b.add_ecmp(&[(plain, 1), (other, 1)]).unwrap();
        let via = |a| RouteTarget::NextHop(NextHop::Adjacency(a));
        let targets = [
            via(plain),
            via(push),
            RouteTarget::NextHop(NextHop::Ecmp(group)),
            via(unresolved),
            RouteTarget::Local,
            RouteTarget::Connected { port: 3 },
            RouteTarget::Blackhole,
            via(six),
        ];
        for (k, target) in targets.into_iter().enumerate() {
            let route = Ipv4Route {
                target,
                ttl_mode: TtlMode::Uniform,
            };
            b.add_ipv4_route((10 + k as u32) << 24, 8, route).unwrap();
        }
        b.build(1)
    }

    fn direct_of(fib: &Fib, first_octet: u32) -> Direct {
        *fib.direct(fib.lookup_ipv4(first_octet << 24).unwrap())
            .unwrap()
    }

    #[test]
    fn a_route_to_one_plain_adjacency_gets_its_header_port_and_limit() {
        let fib = fib();
        let d = direct_of(&fib, 10);
        assert_eq!(d.eth[..6], MAC);
        assert_eq!(d.eth[6..12], OWN);
        assert_eq!(d.eth[12..], [0x08, 0x00]);
        assert_eq!((d.port, d.limit), (3, 1501));
    }

    #[test]
    fn a_route_pushing_one_label_gets_its_label_word_and_ttl_mode() {
        let fib = fib();
        let d = direct_of(&fib, 11);
        assert_eq!(d.eth[..6], MAC);
        assert_eq!(d.eth[12..], [0x88, 0x47], "MPLS unicast");
        assert_eq!((d.port, d.limit, d.push), (3, 1500 - 4 + 1, 4));
        // Label 99 in the top 20 bits and S set, at the end; TC and TTL left to the fast
        // path.
        assert_eq!(d.lses, [0, 0, 0, 0, 0x00, 0x06, 0x31, 0x00]);
        assert_eq!(d.pipe_ttl, 0, "uniform");
    }

    #[test]
    fn two_labels_and_each_ttl_mode_are_copied() {
        let mut b = FibBuilder::new();
        let two = b.add_adjacency(Adjacency::new(
            5,
            9000,
            [10, 0, 0, 2],
            Some(MAC),
            OWN,
            &[16, 17],
        ));
        let three = b.add_adjacency(Adjacency::new(
            5,
            9000,
            [10, 0, 0, 2],
            Some(MAC),
            OWN,
            &[16, 17, 18],
        ));
        let via = |a| RouteTarget::NextHop(NextHop::Adjacency(a));
        let modes = [TtlMode::Pipe(0), TtlMode::Pipe(9), TtlMode::Uniform];
        for (k, (adj, ttl_mode)) in [(two, modes[0]), (two, modes[1]), (three, modes[2])]
            .into_iter()
            .enumerate()
        {
            let route = Ipv4Route {
                target: via(adj),
                ttl_mode,
            };
            b.add_ipv4_route((10 + k as u32) << 24, 8, route).unwrap();
        }
        let fib = b.build(1);
        let (a, b) = (direct_of(&fib, 10), direct_of(&fib, 11));
        // S on the bottom label only.
        assert_eq!(a.lses, [0, 1, 0, 0, 0, 1, 0x11, 0]);
        assert_eq!((a.push, a.limit, a.pipe_ttl), (8, 9000 - 8 + 1, 255));
        assert_eq!((b.lses, b.push, b.pipe_ttl), (a.lses, 8, 9));
        // More labels than an entry holds: decoded from the route, as before.
        assert_eq!(direct_of(&fib, 12), Direct::default());
    }

    #[test]
    fn every_other_route_gets_no_limit() {
        let fib = fib();
        for first_octet in 12..=17 {
            let d = direct_of(&fib, first_octet);
            assert_eq!((d.limit, d.push_limit), (0, 0), "{first_octet}/8");
        }
    }

    #[test]
    fn an_unresolved_push_gets_no_limit_and_ipv6_datagrams_a_push_limit() {
        let mut b = FibBuilder::new();
        let adj = b.add_adjacency(Adjacency::new(3, 1500, [10, 0, 0, 2], None, OWN, &[99]));
        let route = Ipv4Route {
            target: RouteTarget::NextHop(NextHop::Adjacency(adj)),
            ttl_mode: TtlMode::Uniform,
        };
        b.add_ipv4_route(10 << 24, 8, route).unwrap();
        let unresolved = b.build(1);
        assert_eq!(direct_of(&unresolved, 10).limit, 0, "unresolved");
        let six = unresolved.direct6(unresolved.lookup_ipv4(10 << 24).unwrap());
        assert_eq!(six.map(|d| (d.limit, d.push_limit)), Some((0, 0)));
        // 6PE: the IPv6 table holds the push with its limit apart from the plain one.
        let resolved = fib();
        let four = direct_of(&resolved, 11);
        let six = *resolved
            .direct6(resolved.lookup_ipv4(11 << 24).unwrap())
            .unwrap();
        assert_eq!((four.push, four.limit, four.push_limit), (4, 1497, 0));
        assert_eq!((six.limit, six.push_limit), (0, 1497));
        assert_eq!(
            (six.eth, six.port, six.lses, six.push),
            (four.eth, 3, four.lses, 4)
        );
    }

    #[test]
    fn ipv6_datagrams_get_the_limits_of_adjacencies_carrying_ipv6() {
        let fib = fib();
        let direct6 = |first_octet: u32| {
            *fib.direct6(fib.lookup_ipv4(first_octet << 24).unwrap())
                .unwrap()
        };
        let d = direct6(17);
        assert_eq!(d.eth[..6], MAC);
        assert_eq!(d.eth[12..], [0x86, 0xdd]);
        assert_eq!((d.port, d.limit), (3, 1501));
        for first_octet in 10..=16 {
            assert_eq!(direct6(first_octet).limit, 0, "{first_octet}/8");
            let push_limit = if first_octet == 11 { 1497 } else { 0 };
            assert_eq!(
                direct6(first_octet).push_limit,
                push_limit,
                "{first_octet}/8"
            );
        }
    }

    #[test]
    fn no_route_has_no_entry() {
        assert_eq!(fib().direct(crate::fib::NO_ROUTE), None);
        assert_eq!(fib().direct6(crate::fib::NO_ROUTE), None);
    }

    #[test]
    fn a_derived_snapshot_copies_a_resolved_neighbor() {
        let fib = fib();
        let mut d = fib.derive();
        let resolved = Adjacency::new(3, 1400, [10, 0, 0, 3], Some([6; 6]), OWN, &[]);
        d.set_adjacency(3, resolved).unwrap();
        let moved = Adjacency::new_v6(2, 9000, [1; 16], Some([5; 6]), OWN, &[]);
        d.set_adjacency(4, moved).unwrap();
        let next = d.build(2);
        let six = *next.direct6(next.lookup_ipv4(17 << 24).unwrap()).unwrap();
        assert_eq!(
            (six.eth[..6].to_vec(), six.port, six.limit),
            (vec![5; 6], 2, 9001)
        );
        let e = direct_of(&next, 13);
        assert_eq!(
            (e.eth[..6].to_vec(), e.port, e.limit),
            (vec![6; 6], 3, 1401)
        );
        // The snapshot it came from is unchanged.
        assert_eq!(direct_of(&fib, 13).limit, 0);
    }
}
