//! FRR as the oracle: what zebra selected (`show ip route json`, `show mpls table json`)
//! turned into what must come out of the router (port, next hop MAC, label stack), and
//! the check of a probe round against it.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::probe::Seen;

/// One way out: router port, destination MAC (the next hop's), labels outermost first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hop {
    pub port: String,
    pub mac: String,
    pub labels: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Forwarded over these next hops (ECMP: each flow over one of them, all used).
    Forward(BTreeSet<Hop>),
    /// FRR has no such route: nothing comes out.
    Dropped,
}

/// How FRR's names map to the router: zebra's interface -> router port, gateway -> MAC
/// (the routes file's static neighbors), gateway subnet (10.0.N.0/24) -> router port.
pub struct World {
    pub ports: BTreeMap<String, String>,
    pub macs: BTreeMap<String, String>,
    pub subnet_port: BTreeMap<String, String>,
}

impl World {
    fn hop(&self, gw: &str, port: String, labels: Vec<u32>) -> Hop {
        let mac = self
            .macs
            .get(gw)
            .unwrap_or_else(|| panic!("no MAC for next hop {gw}"));
        Hop {
            port,
            mac: mac.clone(),
            labels,
        }
    }

    fn port_of_gateway(&self, gw: &str) -> String {
        let subnet = gw.rsplit_once('.').unwrap().0;
        self.subnet_port[subnet].clone()
    }

    /// The expectation for `prefix` from `show ip route json`.
    pub fn ipv4(&self, routes: &Value, prefix: &str) -> Expect {
        let Some(entry) = routes.get(prefix).and_then(Value::as_array).and_then(|a| {
            a.iter()
                .find(|r| r["selected"] == true && r["installed"] == true)
        }) else {
            return Expect::Dropped;
        };
        let hops = entry["nexthops"].as_array().expect("nexthops");
        Expect::Forward(
            hops.iter()
                .filter(|h| h["fib"] == true)
                .map(|h| {
                    let gw = h["ip"].as_str().expect("a gateway");
                    let ifname = h["interfaceName"].as_str().expect("an interface");
                    let port = self.ports.get(ifname).expect("a mapped interface").clone();
                    self.hop(gw, port, labels(&h["labels"]))
                })
                .collect(),
        )
    }

    /// The expectation for in-label `label` (one label in, IPv4 inside) from
    /// `show mpls table json`: implicit null (3) leaves the packet unlabelled.
    pub fn lsp(&self, table: &Value, label: u32) -> Expect {
        let Some(entry) = table
            .get(label.to_string())
            .filter(|e| e["installed"] == true)
        else {
            return Expect::Dropped;
        };
        let hops = entry["nexthops"].as_array().expect("nexthops");
        Expect::Forward(
            hops.iter()
                .filter(|h| h["installed"] == true)
                .map(|h| {
                    let gw = h["nexthop"].as_str().expect("a next hop address");
                    let mut out = labels(&h["outLabelStack"]);
                    out.retain(|l| *l != 3);
                    self.hop(gw, self.port_of_gateway(gw), out)
                })
                .collect(),
        )
    }
}

fn labels(v: &Value) -> Vec<u32> {
    v.as_array()
        .map(|a| a.iter().map(|l| l.as_u64().unwrap() as u32).collect())
        .unwrap_or_default()
}

/// Checks one target's probes against its expectation: forwarded probes come out once,
/// each over one of the expected next hops, and (with several flows) over all of them.
pub fn check(name: &str, expect: &Expect, seen: &[Vec<Seen>]) -> Result<(), String> {
    match expect {
        Expect::Dropped => match seen.iter().flatten().next() {
            None => Ok(()),
            Some(s) => Err(format!(
                "{name}: FRR has no route but the router sent {s:?}"
            )),
        },
        Expect::Forward(hops) => {
            let mut used = BTreeSet::new();
            for (i, out) in seen.iter().enumerate() {
                let [s] = out.as_slice() else {
                    return Err(format!(
                        "{name}: probe {i} came out {} times: {out:?}",
                        out.len()
                    ));
                };
                let hop = Hop {
                    port: s.port.clone(),
                    mac: s.eth_dst.clone(),
                    labels: s.labels.clone(),
                };
                if !hops.contains(&hop) {
                    return Err(format!(
                        "{name}: probe {i} went {hop:?}, FRR selected {hops:?}"
                    ));
                }
                used.insert(hop);
            }
            if seen.len() >= 8 && used != *hops {
                return Err(format!(
                    "{name}: flows used {used:?}, FRR selected {hops:?}"
                ));
            }
            Ok(())
        }
    }
}
