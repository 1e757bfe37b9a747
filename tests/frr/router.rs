//! The real router in the FRR namespace (so zebra reaches its FPM listener on the shared
//! 127.0.0.1): three pcap ports, `in` capturing a veth live, `out1`/`out2` writing pcaps;
//! static neighbours and one control route in the routes file; the `fpm:` section.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::bin;
use crate::harness::{sh, stop};

pub const NEIGHBORS: &[(&str, &str)] = &[
    ("10.0.0.2", "02:00:00:00:00:02"),
    ("10.0.1.2", "02:00:00:00:01:02"),
    ("10.0.1.3", "02:00:00:00:01:03"),
    ("10.0.2.2", "02:00:00:00:02:02"),
];
/// The routes file's own route, used as the control probe's destination.
pub const CONTROL_PREFIX: &str = "100.64.0.0/24";

/// Three pcap ports: `in` captures the veth `inj0r` live (frames sent on `inj0` in `ns`
/// enter the router there), `out1`/`out2` write `out1.pcap`/`out2.pcap` in `dir`.
pub fn pcap_ports(ns: &str, dir: &Path) -> String {
    sh(&[
        "ip", "-n", ns, "link", "add", "inj0", "type", "veth", "peer", "name", "inj0r",
    ]);
    for i in ["inj0", "inj0r"] {
        // No IPv6 chatter (router solicitations, MLD) into the router.
        let knob = format!("net.ipv6.conf.{i}.disable_ipv6=1");
        sh(&["ip", "netns", "exec", ns, "sysctl", "-qw", &knob]);
        sh(&["ip", "-n", ns, "link", "set", i, "up"]);
    }
    let d = dir.display();
    let n = std::process::id();
    format!(
        "  - {{name: in, vdev: \"net_pcap_fi{n},rx_iface_in=inj0r,tx_pcap={d}/in-out.pcap\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24]}}\n\
         \x20 - {{name: out1, vdev: \"net_pcap_fo{n},tx_pcap={d}/out1.pcap\", mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24]}}\n\
         \x20 - {{name: out2, vdev: \"net_pcap_ft{n},tx_pcap={d}/out2.pcap\", mac: \"02:00:00:00:02:01\", addresses: [10.0.2.1/24]}}\n"
    )
}

/// The routes file: static neighbours (`NEIGHBORS` unless `arp`) and the control route.
fn routes_file(dir: &Path, arp: bool) {
    let mut routes = String::from("neighbors:\n");
    if arp {
        routes = String::from("neighbors: []\n");
    }
    for (ip, mac) in NEIGHBORS.iter().filter(|_| !arp) {
        routes += &format!("  - {{ip: {ip}, mac: \"{mac}\"}}\n");
    }
    routes += &format!("ipv4:\n  - {{prefix: {CONTROL_PREFIX}, via: 10.0.1.2}}\n");
    std::fs::write(dir.join("routes.yaml"), routes).unwrap();
}

pub struct Router {
    child: Option<Child>,
    pub log: PathBuf,
    pub dir: PathBuf,
}

impl Router {
    /// Starts the router in `ns` with `ports` (YAML list items) and `fpm` as its `fpm:`
    /// section (flow YAML); neighbours static, or by ARP when `arp`. Waits for its
    /// first table.
    pub fn start(ns: &str, dir: &Path, ports: &str, fpm: &str, arp: bool) -> Router {
        routes_file(dir, arp);
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
        let log = dir.join("router.log");
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .arg(bin())
            .args([
                "run",
                "--stats-interval",
                "0",
                "--duration",
                "150",
                "--config",
            ])
            .arg(&cfg_path)
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::from(
                std::fs::File::create(dir.join("router.err")).unwrap(),
            ))
            .spawn()
            .expect("start mplsrouter");
        let mut r = Router {
            child: Some(child),
            log,
            dir: dir.to_path_buf(),
        };
        r.wait_for("tables: generation", Duration::from_secs(30));
        r
    }

    pub fn output(&self) -> String {
        let out = std::fs::read_to_string(&self.log).unwrap_or_default();
        let err = std::fs::read_to_string(self.dir.join("router.err")).unwrap_or_default();
        format!("{out}{err}")
    }

    pub fn wait_for(&mut self, text: &str, limit: Duration) {
        let start = Instant::now();
        while !self.output().contains(text) {
            if let Some(st) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!("router exited ({st}) before {text:?}:\n{}", self.output());
            }
            assert!(
                start.elapsed() < limit,
                "router never printed {text:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the router (SIGTERM) and returns its output.
    pub fn stop(&mut self) -> String {
        if let Some(c) = self.child.take() {
            stop(c, false);
        }
        self.output()
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        if let Some(c) = self.child.take() {
            stop(c, false);
        }
    }
}
