//! Jumbo frames through the router: two hosts in network namespaces with MTU 9000,
//! the router's ports on `net_af_packet` over veths, `ping -s 8000 -M do` across it
//! (8028-byte IPv4 packets, DF set: they pass whole or not at all).
//!
//! Needs root (as CI runs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;

use std::time::Duration;

use common::{is_root, Launch, Netns, Router, TempDir};

/// A veth pair between two namespaces, both ends up with `mtu` and checksum offload off.
fn link(ns_a: &str, a: &str, ns_b: &str, b: &str, mtu: u16) {
    let o = common::VethOpts {
        mtu: Some(mtu),
        ..Default::default()
    };
    common::veth(ns_a, a, ns_b, b, o);
}

#[test]
fn a_9000_byte_mtu_carries_8000_byte_pings_whole() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let dir = TempDir::new("netns-jumbo");
    let mut ns = Netns::new("jb");
    let (h1, h2, r) = (ns.add("h1"), ns.add("h2"), ns.add("r"));
    link(&h1, "eth0", &r, "r-h1", 9000);
    link(&h2, "eth0", &r, "r-h2", 9000);
    for (h, a, gw) in [
        (&h1, "10.1.0.2/24", "10.1.0.1"),
        (&h2, "10.2.0.2/24", "10.2.0.1"),
    ] {
        common::host_addr(h, "eth0", a, gw);
    }
    // No framesz in the vdev strings: the router sizes af_packet's ring frames and its
    // mbufs for the MTU.
    let cfg = dir.path("jumbo.yaml");
    std::fs::write(
        &cfg,
        format!(
            "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {r}}}\n\
             ports:\n\
             \x20 - {{name: h1, vdev: \"net_af_packet_{r}0,iface=r-h1\", addresses: [10.1.0.1/24], mtu: 9000}}\n\
             \x20 - {{name: h2, vdev: \"net_af_packet_{r}1,iface=r-h2\", addresses: [10.2.0.1/24], mtu: 9000}}\n\
             metrics_listen: 127.0.0.1:0\n\
             idle: {{backoff: {{}}}}\n"
        ),
    )
    .unwrap();
    let launch = Launch::new(&cfg, 60.0)
        .netns(&r)
        .log(dir.path("router.log"))
        .ready(Some("metrics: http"), Duration::from_secs(20));
    let mut router = Router::start(&launch);

    // Small pings first (ARP resolved both ways), then jumbo ones with DF.
    let small = common::ping(&h1, "10.2.0.2", &["-c", "2", "-i", "0.2", "-W", "2"]);
    let jumbo = common::ping(
        &h1,
        "10.2.0.2",
        &["-c", "5", "-i", "0.2", "-W", "2", "-s", "8000", "-M", "do"],
    );
    router.stop();
    let out = router.stdout();
    assert!(
        common::loss_line(&small).contains(" 0% packet loss"),
        "{}\n{out}",
        common::loss_line(&small)
    );
    assert!(
        common::loss_line(&jumbo).contains(" 0% packet loss"),
        "8000-byte pings: {}\n{}\n{out}",
        common::loss_line(&jumbo),
        String::from_utf8_lossy(&jumbo.stdout)
    );
    assert!(
        String::from_utf8_lossy(&jumbo.stdout).contains("8008 bytes from 10.2.0.2"),
        "whole replies: {}",
        String::from_utf8_lossy(&jumbo.stdout)
    );
    assert!(!out.contains("truncated="), "no frame cut short: {out}");
    assert!(out.contains("mbufs not returned to the pool: 0"), "{out}");
    assert!(
        out.contains("mbufs unaccounted for by the workers: 0"),
        "{out}"
    );
}
