//! The real router in the FRR namespace (so zebra reaches its FPM listener on the shared
//! 127.0.0.1), its ports (`probe_ports`: probes in through a live pcap port, out to Linux
//! hosts that answer ARP and capture), one control route in the routes file, and the
//! `fpm:` section.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::{bin, ip_in, sysctl, Launch, TempDir};
use crate::harness::wait_until;
use crate::hosts::{link, Hosts};

/// The hosts behind the router's ports (they answer its ARP with these MACs).
pub const NEIGHBORS: &[(&str, &str)] = &[
    ("10.0.0.2", "02:00:00:00:00:02"),
    ("10.0.1.2", "02:00:00:00:01:02"),
    ("10.0.1.3", "02:00:00:00:01:03"),
    ("10.0.2.2", "02:00:00:00:02:02"),
];
/// The routes file of the probe layout: one control route out of each output port
/// (see probe.rs), neighbours by ARP.
pub const PROBE_ROUTES: &str = "neighbors: []\nipv4:\n  - {prefix: 100.64.0.0/24, via: 10.0.1.2}\n  - {prefix: 100.64.1.0/24, via: 10.0.2.2}\n";

/// The probe layout: port `in` (pcap) captures the veth `inj0r` live, so frames sent on
/// `inj0` in `ns` enter the router there, and writes what it sends to `in-out.pcap`;
/// `out1`/`out2` are af_packet ports on veths to two Linux hosts (10.0.1.2 and 10.0.2.2,
/// with the MACs of `NEIGHBORS`), which answer the router's ARP unless not `answer_arp`
/// (then only the routes file's static neighbours can reach them); tcpdump on each host
/// writes what the router sent it to `out1.pcap`/`out2.pcap` in `dir`. Returns the ports
/// (YAML list items); the capture processes go to `keep`.
pub fn probe_ports(
    ns: &str,
    dir: &Path,
    hosts: &mut Hosts,
    keep: &mut Vec<Child>,
    answer_arp: bool,
) -> String {
    ip_in(
        ns,
        &[
            "link", "add", "inj0", "type", "veth", "peer", "name", "inj0r",
        ],
    );
    for i in ["inj0", "inj0r"] {
        // No IPv6 chatter (router solicitations, MLD) into the router.
        let knob = format!("net.ipv6.conf.{i}.disable_ipv6=1");
        sysctl(ns, &[&knob]);
        ip_in(ns, &["link", "set", i, "up"]);
    }
    let d = dir.display();
    let n = std::process::id();
    let mut ports = format!(
        "  - {{name: in, vdev: \"net_pcap_fi{n},rx_iface_in=inj0r,tx_pcap={d}/in-out.pcap\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24]}}\n"
    );
    for (k, (ip, mac)) in [(1, NEIGHBORS[1]), (2, NEIGHBORS[3])] {
        let h = hosts.add(&format!("h{k}"));
        let (r, hi) = (format!("r{k}"), format!("h{k}"));
        link(ns, &r, &h, &hi);
        // The router's namespace holds 10.0.k.1 on zebra's interfaces: its kernel must
        // not answer ARP for it on the router's port.
        sysctl(ns, &[&format!("net.ipv4.conf.{r}.arp_ignore=1")]);
        ip_in(&h, &["link", "set", &hi, "address", mac]);
        ip_in(&h, &["addr", "add", &format!("{ip}/24"), "dev", &hi]);
        if !answer_arp {
            let knob = format!("net.ipv4.conf.{hi}.arp_ignore=8");
            sysctl(&h, &[&knob]);
        }
        let pcap = dir.join(format!("out{k}.pcap"));
        keep.push(capture(&h, &hi, &pcap));
        ports += &format!(
            "  - {{name: out{k}, vdev: \"net_af_packet_f{k}{n},iface={r}\", mac: \"02:00:00:00:0{k}:01\", addresses: [10.0.{k}.1/24]}}\n"
        );
    }
    ports
}

/// tcpdump on `iface` in `ns` writing every frame at once (-U) to `pcap`; returns once
/// it is capturing.
fn capture(ns: &str, iface: &str, pcap: &Path) -> Child {
    let err = pcap.with_extension("err");
    let child = Command::new("ip")
        .args([
            "netns", "exec", ns, "tcpdump", "-n", "-U", "-i", iface, "-w",
        ])
        .arg(pcap)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("start tcpdump");
    wait_until("tcpdump capturing", Duration::from_secs(10), || {
        let e = std::fs::read_to_string(&err).unwrap_or_default();
        if e.contains("listening on") {
            Ok(())
        } else {
            Err(e)
        }
    });
    child
}

/// Why the router under test cannot take routes from FPM (a build without the `fpm:`
/// section), or None. Checked with `mplsrouter check` on a minimal config.
pub fn fpm_unsupported() -> Option<String> {
    // A folder of its own per call: the tests of this binary ask at the same time, and a
    // folder named by the process alone was removed under another test's write.
    let dir = TempDir::new("fpmcheck");
    let cfg = dir.path("c.yaml");
    std::fs::write(
        &cfg,
        "eal: {no_huge: true}\nports:\n  - {name: a, vdev: net_null0, addresses: [10.0.0.1/24]}\nfpm: {}\n",
    )
    .unwrap();
    let out = Command::new(bin()).arg("check").arg(&cfg).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("unknown key `fpm`") {
        Some(format!(
            "this router build has no `fpm:` section: {}",
            err.trim()
        ))
    } else {
        None
    }
}

/// The kit's live router (stopped, also on drop, the kit's one way).
pub use crate::common::Router;

/// Starts the router in `ns` with `ports` (YAML list items) and `fpm` as its `fpm:`
/// section (flow YAML) and `routes` as its routes file. Waits for its first table.
pub fn start(ns: &str, dir: &Path, ports: &str, fpm: &str, routes: &str) -> Router {
    std::fs::write(dir.join("routes.yaml"), routes).unwrap();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {ns}-r}}\n\
         ports:\n{ports}\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n\
         fpm: {fpm}\n"
    );
    let cfg_path = dir.join("router.yaml");
    std::fs::write(&cfg_path, cfg).unwrap();
    let launch = Launch::new(&cfg_path, 150.0)
        .netns(ns)
        .log(dir.join("router.log"))
        .ready(Some("tables: generation"), Duration::from_secs(30));
    Router::start(&launch)
}
