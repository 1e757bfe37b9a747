//! Linux hosts in network namespaces of their own, linked to the router's namespace by
//! veth pairs: real stacks that answer ARP and ping. Namespaces are removed on drop.
#![allow(dead_code)]

use crate::harness::sh;

/// The test's namespaces (`<tag><pid>-<name>`, removed on drop): the kit's one guard.
pub use crate::common::Netns as Hosts;

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
