//! ARP spoofing against a router between two Linux hosts (network namespaces, veth,
//! `net_af_packet`): spoofed ARP from scapy must not move a static neighbor, and traffic
//! keeps flowing while learned neighbors age (the kernels answer the router's probes).
//! The hosts' own stacks are the oracle: a frame sent to a spoofed MAC never reaches
//! the ping.
//!
//! Needs root and scapy (`/usr/bin/python3`, scripts/install-deps.sh); skipped with a
//! message otherwise.
#![forbid(unsafe_code)]

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{wait_bounded, Launch, Netns, Router, TempDir};

fn can_run() -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout == b"0\n");
    let scapy = Command::new("/usr/bin/python3")
        .args(["-c", "import scapy.all"])
        .output()
        .is_ok_and(|o| o.status.success());
    root && scapy
}

/// Host `h` (eth0, `addr`, default via `gw`) wired to `r_if` in namespace `r`.
fn host(h: &str, r: &str, r_if: &str, addr: &str, gw: &str) {
    common::veth(h, "eth0", r, r_if, Default::default());
    common::host_addr(h, "eth0", addr, gw);
}

fn ping(ns: &str, dst: &str, count: &str) -> String {
    common::loss_line(&common::ping(
        ns,
        dst,
        &["-c", count, "-i", "0.2", "-W", "2"],
    ))
}

#[test]
fn spoofed_arp_does_not_move_a_static_neighbor_and_ageing_keeps_traffic() {
    if !can_run() {
        eprintln!("SKIP: needs root and scapy");
        return;
    }
    let dir = TempDir::new("netns-arp");
    let mut ns = Netns::new("sa");
    let tag = ns.prefix().to_owned();
    let (h1, h2, r) = (ns.add("h1"), ns.add("h2"), ns.add("r"));
    host(&h1, &r, "r-h1", "10.1.0.2/24", "10.1.0.1");
    host(&h2, &r, "r-h2", "10.2.0.2/24", "10.2.0.1");
    let h2_mac = common::mac_of(&h2, "eth0");
    let r_mac = common::mac_of(&r, "r-h2");
    let routes = format!("neighbors:\n  - {{ip: 10.2.0.2, mac: \"{h2_mac}\"}}\n");
    std::fs::write(dir.path("routes.yaml"), routes).unwrap();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {tag}}}\n\
         ports:\n\
         \x20 - {{name: h1, vdev: \"net_af_packet_{tag}0,iface=r-h1\", addresses: [10.1.0.1/24]}}\n\
         \x20 - {{name: h2, vdev: \"net_af_packet_{tag}1,iface=r-h2\", addresses: [10.2.0.1/24]}}\n\
         routes: routes.yaml\nmetrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n\
         arp: {{reachable_ms: 1000}}\n"
    );
    std::fs::write(dir.path("startup.yaml"), cfg).unwrap();
    let launch = Launch::new(&dir.path("startup.yaml"), 60.0)
        .netns(&r)
        .log(dir.path("router.log"));
    let mut router = Router::start(&launch);
    // Warm-up (ARP both ways): the first echo can be lost while the router resolves
    // h2 on a loaded machine; what is under test starts after it.
    let mut warm = ping(&h1, "10.2.0.2", "3");
    for _ in 0..3 {
        if warm.contains(" 0% packet loss") {
            break;
        }
        warm = ping(&h1, "10.2.0.2", "3");
    }
    assert!(
        warm.contains(" 0% packet loss"),
        "{warm}\n{}",
        router.stdout()
    );

    // For 4 s, h2 keeps claiming its static address for another MAC (a reply to the
    // router and a request for it) and the router's own address, while h1 pings h2.
    let evil = "02:66:66:66:66:66";
    let script = format!(
        "from scapy.all import Ether, ARP, sendp\n\
         f = [Ether(src='{evil}', dst='{r_mac}')/ARP(op=2, hwsrc='{evil}', psrc='10.2.0.2', hwdst='{r_mac}', pdst='10.2.0.1'),\n\
         \x20    Ether(src='{evil}', dst='ff:ff:ff:ff:ff:ff')/ARP(op=1, hwsrc='{evil}', psrc='10.2.0.2', pdst='10.2.0.1'),\n\
         \x20    Ether(src='{evil}', dst='ff:ff:ff:ff:ff:ff')/ARP(op=1, hwsrc='{evil}', psrc='10.2.0.1', pdst='10.2.0.1')]\n\
         print('ready', flush=True)\n\
         sendp(f, iface='eth0', inter=0.05, loop=1, count=25, verbose=False)\n"
    );
    let mut spoofer = Command::new("ip")
        .args(["netns", "exec", &h2, "/usr/bin/python3", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(spoofer.stdout.as_mut().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready.trim(), "ready", "scapy did not start");

    // Frames for 10.2.0.2 still go to h2's real MAC (a spoofed MAC would make h2's
    // kernel drop them), over 4 s in which h1's learned entry is also probed and kept.
    let after = ping(&h1, "10.2.0.2", "20");
    wait_bounded(&mut spoofer, Duration::from_secs(20));
    let out = spoofer.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        after.contains(" 0% packet loss"),
        "{after}\n{}",
        router.stdout()
    );

    let log = router.stop();
    assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
}
