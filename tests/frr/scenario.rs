//! The FRR -> router scenario pieces: what is probed (`TARGETS`), how FRR's JSON answer
//! becomes the expected output (`oracle`), probe rounds checked against it, and the lab
//! (FRR, router, hosts, prober) the end-to-end tests run in.
#![allow(dead_code)]

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use crate::harness::{wait_until, Frr, FrrConfig, Iface};
use crate::hosts::Hosts;
use crate::oracle::{check, Expect, World};
use crate::probe::{Probe, Prober};
use crate::router::{self, Router};

pub fn ports() -> Vec<Iface> {
    (0..3)
        .map(|i| Iface {
            name: format!("port{i}"),
            addr: format!("10.0.{i}.1/24"),
        })
        .collect()
}

/// What the test sends and how FRR's answer is read for it.
pub enum Target {
    Prefix(&'static str, Ipv4Addr),
    Lsp(u32),
}

impl Target {
    pub fn name(&self) -> String {
        match self {
            Target::Prefix(p, _) => p.to_string(),
            Target::Lsp(l) => format!("LSP {l}"),
        }
    }
    /// 16 flows (different UDP source ports), so ECMP spreads them.
    pub fn probes(&self) -> Vec<Probe> {
        (0..16u16)
            .map(|i| match self {
                Target::Prefix(_, dst) => Probe {
                    labels: vec![],
                    dst: *dst,
                    sport: 1000 + i * 7,
                },
                Target::Lsp(l) => Probe {
                    labels: vec![*l],
                    dst: Ipv4Addr::new(172, 16, 0, 1),
                    sport: 1000 + i * 7,
                },
            })
            .collect()
    }
}

pub const LSPS: &[&str] = &[
    "mpls lsp 100 10.0.1.2 200",
    "mpls lsp 101 10.0.2.2 implicit-null",
    "mpls lsp 102 10.0.1.2 300",
    "mpls lsp 102 10.0.2.2 301",
];

pub const TARGETS: &[Target] = &[
    Target::Prefix("192.0.2.0/24", Ipv4Addr::new(192, 0, 2, 10)),
    Target::Prefix("198.51.100.0/24", Ipv4Addr::new(198, 51, 100, 10)),
    Target::Prefix("203.0.113.0/24", Ipv4Addr::new(203, 0, 113, 10)),
    Target::Lsp(100),
    Target::Lsp(101),
    Target::Lsp(102),
];

pub fn world() -> World {
    let ports = [("port0", "in"), ("port1", "out1"), ("port2", "out2")];
    let subnets = [("10.0.0", "in"), ("10.0.1", "out1"), ("10.0.2", "out2")];
    World {
        ports: ports
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        macs: router::NEIGHBORS
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        subnet_port: subnets
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
    }
}

/// FRR's current answer for every target.
pub fn oracle(frr: &Frr) -> Vec<Expect> {
    let (routes, lsps) = (
        frr.json("show ip route json"),
        frr.json("show mpls table json"),
    );
    let w = world();
    TARGETS
        .iter()
        .map(|t| match t {
            Target::Prefix(p, _) => w.ipv4(&routes, p),
            Target::Lsp(l) => w.lsp(&lsps, *l),
        })
        .collect()
}

/// One probe round over all targets, checked against `expect`.
pub fn round(prober: &mut Prober, expect: &[Expect]) -> Result<(), String> {
    let probes: Vec<Vec<Probe>> = TARGETS.iter().map(Target::probes).collect();
    let flat: Vec<Probe> = probes.iter().flatten().cloned().collect();
    let seen = prober.round(&flat)?;
    let mut at = 0;
    let mut errors = Vec::new();
    for ((t, p), e) in TARGETS.iter().zip(&probes).zip(expect) {
        if let Err(msg) = check(&t.name(), e, &seen[at..at + p.len()]) {
            errors.push(msg);
        }
        at += p.len();
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// Waits until the router forwards every target exactly as `expect` (bounded).
pub fn converge(prober: &mut Prober, expect: &[Expect], what: &str, limit: Duration) -> Duration {
    let start = Instant::now();
    wait_until(what, limit, || round(prober, expect));
    start.elapsed()
}

/// Polls FRR until its `show` output satisfies `ok` (FRR itself has applied the config).
pub fn frr_settled(frr: &Frr, what: &str, ok: impl Fn(&[Expect]) -> bool) -> Vec<Expect> {
    wait_until(what, Duration::from_secs(20), || {
        let e = oracle(frr);
        if ok(&e) {
            Ok(e)
        } else {
            Err(format!("{e:?}\n{}", frr.logs()))
        }
    })
}

pub fn all_dropped(n: usize) -> Vec<Expect> {
    vec![Expect::Dropped; n]
}

/// The probe layout with FRR: the router (outputs to Linux hosts, answering ARP or not)
/// and a prober; zebra (with `LSPS` in its config) and staticd running. Fields drop in
/// order: router, then hosts, then FRR.
pub struct Lab {
    pub router: Router,
    pub prober: Prober,
    pub hosts: Hosts,
    pub frr: Frr,
}

pub fn lab(tag: &str, hold: Duration, answer_arp: bool, routes: &str) -> Lab {
    let mut frr = Frr::new(
        tag,
        &ports(),
        FrrConfig {
            fpm_port: 2620,
            next_hop_groups: true,
            // zebra's own config: a restarted zebra reads these LSPs again.
            zebra: LSPS.join("\n"),
            staticd: String::new(),
        },
    );
    let fpm = format!(
        "{{listen: 127.0.0.1:2620, hold_time_s: {}, resync_settle_ms: 1500, \
         interfaces: {{port0: in, port1: out1, port2: out2}}}}",
        hold.as_secs()
    );
    let dir = frr.dir.clone();
    let mut hosts = Hosts::new(&format!("frr{tag}"));
    let ports = router::probe_ports(&frr.ns, &dir, &mut hosts, &mut frr.others, answer_arp);
    let router = router::start(&frr.ns, &dir, &ports, &fpm, routes);
    let outputs = ["out1", "out2"]
        .iter()
        .map(|p| (p.to_string(), frr.path(&format!("{p}.pcap"))))
        .collect();
    let controls = [0, 1].map(|k| Probe {
        labels: vec![],
        dst: Ipv4Addr::new(100, 64, k, 1),
        sport: 7,
    });
    let mut prober = Prober::new(&frr.ns, "inj0", outputs, controls.to_vec());
    // The router learns the hosts' MACs (ARP) before the first measured round.
    wait_until(
        "the control routes forward",
        Duration::from_secs(15),
        || prober.round(&[]).map(|_| ()),
    );
    frr.start_zebra();
    frr.start_staticd();
    Lab {
        router,
        prober,
        hosts,
        frr,
    }
}
