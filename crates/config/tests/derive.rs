//! A reload that derives the new table from the last one must answer exactly like a full
//! compile of the same routes; checked over a long run of random edits that take the
//! fast path (compact lines) and the full parse (neighbors' /32 overrides, labels).
#![forbid(unsafe_code)]

mod common;

use common::ctx;

use config::{compile, ReloadOutcome, ReloadState};
use net::fib::{Adjacency, Fib, LabelEntry, LabelOp, NextHop, RouteTarget, TtlMode};

/// What a next hop means, independent of adjacency and group ids.
#[derive(Debug, PartialEq)]
enum Hop {
    One(Adjacency),
    Ecmp(Vec<(Adjacency, u32)>, Vec<Adjacency>),
}

fn hop(f: &Fib, nh: NextHop) -> Hop {
    match nh {
        NextHop::Adjacency(a) => Hop::One(f.adjacency(a).clone()),
        NextHop::Ecmp(g) => {
            let g = f.ecmp_group(g);
            Hop::Ecmp(
                g.members()
                    .iter()
                    .map(|&(a, w)| (f.adjacency(a).clone(), w))
                    .collect(),
                (0..net::fib::ECMP_BUCKETS as u32)
                    .map(|h| f.adjacency(g.select(h)).clone())
                    .collect(),
            )
        }
    }
}

fn route(f: &Fib, dst: u32) -> Option<(Option<Hop>, RouteTarget, TtlMode)> {
    let r = f.route(f.lookup_ipv4(dst)?);
    let h = match r.target {
        RouteTarget::NextHop(nh) => Some(hop(f, nh)),
        _ => None,
    };
    // Ids inside the target differ between the two tables: compare hops instead.
    let t = match r.target {
        RouteTarget::NextHop(_) => RouteTarget::Blackhole,
        t => t,
    };
    Some((h, t, r.ttl_mode))
}

fn label(f: &Fib, l: u32) -> Option<(LabelOp, Option<Hop>, TtlMode)> {
    let LabelEntry {
        op,
        next_hop,
        ttl_mode,
    } = *f.lookup_label(l)?;
    Some((op, next_hop.map(|nh| hop(f, nh)), ttl_mode))
}

fn same(derived: &Fib, full: &Fib, keys: &[u32]) {
    for &k in keys {
        assert_eq!(
            route(derived, k),
            route(full, k),
            "dst {}",
            std::net::Ipv4Addr::from(k)
        );
    }
    for l in 0..200 {
        assert_eq!(label(derived, l), label(full, l), "label {l}");
    }
    let (a, b) = (derived.stats(), full.stats());
    assert_eq!((a.ipv4_routes, a.labels), (b.ipv4_routes, b.labels));
    assert_eq!(derived.port_address(1), full.port_address(1));
}

#[test]
fn derived_reloads_equal_a_full_compile() {
    let ctx = ctx();
    let ports = ctx.ports.clone().unwrap();
    let mut seed = 0x9e37_79b9_u64;
    let mut rnd = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    let targets = [
        "via 10.0.1.2",
        "via 10.0.1.3 push 100",
        "via 10.0.1.7",
        "via 10.0.1.2 via 10.0.0.3 weight 3",
        "via 10.0.1.4 push 70,80 via 10.0.1.5 ttl pipe 9",
        "blackhole",
        "local",
    ];
    let mpls_ops = [
        "action: swap, via: 10.0.1.2, push: [200]",
        "action: pop, via: 10.0.1.3",
        "action: pop_and_lookup",
        "action: swap, nexthops: [{via: 10.0.1.2, push: [50]}, {via: 10.0.1.9, push: [60]}]",
    ];
    let neighbors = "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n  - {ip: 10.0.1.7, mac: \"02:00:00:00:01:07\"}\n";
    let mut lines: Vec<String> = (0..600)
        .map(|i| {
            format!(
                "  - 20.{}.{}.0/{} {}",
                i >> 6,
                (i & 63) << 2,
                22 + i % 3,
                targets[i % targets.len()]
            )
        })
        .collect();
    let mut labels: Vec<Option<usize>> = (0..40).map(|i| (i % 3 != 0).then_some(i % 4)).collect();
    let mut override_nbr = true;
    let text = |lines: &[String], labels: &[Option<usize>], ov: bool| {
        let mut s = String::from(neighbors);
        s += "ipv4:\n  - {prefix: 9.0.0.0/8, via: 10.0.0.2}\n";
        if ov {
            s += "  - {prefix: 10.0.1.7/32, via: 10.0.1.3}\n";
        }
        s += "mpls:\n";
        for (i, l) in labels.iter().enumerate() {
            if let Some(k) = l {
                s += &format!("  - {{in_label: {}, {}}}\n", 100 + i, mpls_ops[*k]);
            }
        }
        s += "routes_compact:\n";
        s += &lines.join("\n");
        s + "\n"
    };
    let mut st = ReloadState::new("/x/routes.yaml", ctx.clone());
    st.apply_text(text(&lines, &labels, override_nbr)).unwrap();
    let (mut derived, mut fast) = (0, 0);
    let mut next = 0u32;
    for step in 0..150 {
        let k = rnd(lines.len());
        match rnd(8) {
            0 | 1 => {
                let p = lines[k].split(' ').nth(3).unwrap().to_string();
                lines[k] = format!("  - {p} {}", targets[rnd(targets.len())]);
            }
            2 => {
                lines.remove(k);
            }
            3 | 4 => {
                next += 1;
                let len = [8u32, 16, 24, 32][rnd(4)];
                let a = (30 + (next >> 16)) << 24 | (next & 0xffff) << 8;
                let a = a & !u32::MAX.checked_shr(len).unwrap_or(0);
                let p = format!("{}/{len}", std::net::Ipv4Addr::from(a));
                if lines.iter().all(|l| !l.contains(&format!(" {p} "))) {
                    lines.insert(k, format!("  - {p} {}", targets[rnd(targets.len())]));
                }
            }
            5 | 6 => {
                let (i, v) = (rnd(labels.len()), [None, Some(rnd(4))][rnd(2)]);
                labels[i] = v;
            }
            _ => override_nbr = !override_nbr,
        }
        let out = st.apply_text(text(&lines, &labels, override_nbr)).unwrap();
        let ReloadOutcome::Updated { fib, timings, .. } = out else {
            continue;
        };
        derived += usize::from(timings.derived);
        fast += usize::from(timings.fast_path);
        let full = compile(st.current().unwrap(), &ports, fib.generation()).unwrap();
        let mut keys: Vec<u32> = st
            .current()
            .unwrap()
            .ipv4
            .iter()
            .flat_map(|(c, _)| {
                [
                    c.addr,
                    c.addr | u32::MAX.checked_shr(c.len as u32).unwrap_or(0),
                ]
            })
            .collect();
        keys.extend([
            0x0a00_0001,
            0x0a00_0102,
            0x0a00_0103,
            0x0a00_0107,
            0x0a00_0109,
            0x0a01_0101,
        ]);
        keys.extend((0..300).map(|_| (20 + rnd(20) as u32) << 24 | rnd(1 << 24) as u32));
        same(&fib, &full, &keys);
        assert_eq!(fib.generation(), st.generation(), "step {step}");
    }
    eprintln!("{derived} derived, {fast} on the fast path");
    assert!(derived > 100, "derived only {derived} times");
    assert!(fast > 50, "fast path only {fast} times");
}
