//! Linux hosts in network namespaces of their own, linked to the router's namespace by
//! veth pairs: real stacks that answer ARP and ping. Namespaces are removed on drop.
#![allow(dead_code)]

use std::process::Command;

use crate::harness::sh;

pub struct Hosts {
    prefix: String,
    names: Vec<String>,
}

impl Hosts {
    pub fn new(tag: &str) -> Hosts {
        Hosts {
            prefix: format!("{tag}{}", std::process::id() % 100_000),
            names: Vec::new(),
        }
    }

    /// A new namespace `<prefix>-<n>` with loopback up.
    pub fn ns(&mut self, n: &str) -> String {
        let name = format!("{}-{n}", self.prefix);
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        sh(&["ip", "netns", "add", &name]);
        sh(&["ip", "-n", &name, "link", "set", "lo", "up"]);
        self.names.push(name.clone());
        name
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

/// A veth pair `a`@`ns_a` <-> `b`@`ns_b`, both up, no IPv6, checksum offload off (so
/// af_packet sees complete checksums).
pub fn link(ns_a: &str, a: &str, ns_b: &str, b: &str) {
    sh(&[
        "ip", "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b,
    ]);
    for (ns, i) in [(ns_a, a), (ns_b, b)] {
        let v6 = format!("net.ipv6.conf.{i}.disable_ipv6=1");
        sh(&["ip", "netns", "exec", ns, "sysctl", "-qw", &v6]);
        sh(&["ip", "-n", ns, "link", "set", i, "up"]);
        sh(&[
            "ip", "netns", "exec", ns, "ethtool", "-K", i, "tx", "off", "rx", "off",
        ]);
    }
}

/// Gives host `ns` the address `addr` on `iface` and a default route via `gw`.
pub fn host(ns: &str, iface: &str, addr: &str, gw: &str) {
    sh(&["ip", "-n", ns, "addr", "add", addr, "dev", iface]);
    sh(&["ip", "-n", ns, "route", "add", "default", "via", gw]);
}
