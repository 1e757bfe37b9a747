//! Linux hosts in network namespaces of their own, linked to the router's namespace by
//! veth pairs: real stacks that answer ARP and ping. Namespaces are removed on drop.
#![allow(dead_code)]

use crate::harness::sh;

/// The test's namespaces (`<tag><pid>-<name>`, removed on drop): the kit's one guard.
pub use crate::common::Netns as Hosts;

/// A veth pair `a`@`ns_a` <-> `b`@`ns_b`, both up, no IPv6, checksum offload off (so
/// af_packet sees complete checksums).
pub fn link(ns_a: &str, a: &str, ns_b: &str, b: &str) {
    let o = crate::common::VethOpts {
        no_ipv6: true,
        ..Default::default()
    };
    crate::common::veth(ns_a, a, ns_b, b, o);
}

/// Gives host `ns` the address `addr` on `iface` and a default route via `gw`.
pub fn host(ns: &str, iface: &str, addr: &str, gw: &str) {
    sh(&["ip", "-n", ns, "addr", "add", addr, "dev", iface]);
    sh(&["ip", "-n", ns, "route", "add", "default", "via", gw]);
}
