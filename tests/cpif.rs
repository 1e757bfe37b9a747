//! Control-plane interfaces through the real binary: a host in one network namespace, the
//! router in another on `net_af_packet`, its port's TAP twin (`control_interface:`) in the
//! router's namespace where a TCP server stands in for FRR's daemons.
//!
//! Needs root (as CI runs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{ip_in, is_root, sysctl, KillOnDrop, Launch, Router, TempDir};

/// Host namespace `h` and router namespace `r`, a veth between them; removed on drop.
struct Pair {
    h: String,
    r: String,
    _ns: common::Netns,
}

impl Pair {
    fn new(tag: &str) -> Pair {
        let mut ns = common::Netns::new(tag);
        let (h, r) = (ns.add("h"), ns.add("r"));
        let p = Pair { h, r, _ns: ns };
        common::veth(&p.h, "eth0", &p.r, "r-h1", Default::default());
        ip_in(&p.h, &["addr", "add", "10.1.0.2/24", "dev", "eth0"]);
        // The veth the af_packet port wraps is also a kernel interface of the router's
        // namespace: it must not answer ARP or accept packets for the TAP's addresses
        // itself (a NIC bound to vfio-pci has no such twin).
        sysctl(
            &p.r,
            &[
                "net.ipv4.conf.r-h1.arp_ignore=1",
                "net.ipv4.conf.r-h1.rp_filter=1",
            ],
        );
        p
    }

    fn exec(&self, ns: &str, args: &[&str]) -> Output {
        Command::new("ip")
            .args(["netns", "exec", ns])
            .args(args)
            .output()
            .unwrap()
    }
}

fn config(dir: &TempDir, prefix: &str) -> std::path::PathBuf {
    let routes = dir.path("routes.yaml");
    std::fs::write(&routes, "{}\n").unwrap();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {prefix}}}\n\
         ports:\n  - {{name: h1, vdev: \"net_af_packet_{prefix},iface=r-h1\", \
         addresses: [10.1.0.1/24], control_interface: mr-h1}}\n\
         routes: {}\nmetrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n\
         fpm: {{listen: 127.0.0.1:2620}}\n",
        routes.display()
    );
    let p = dir.path("r.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// The router in namespace `ns` with config `cfg`, stdout in `log` (stderr next to it,
/// `.err`); not waited for (each test waits for the line it needs).
fn start_router(ns: &str, cfg: &std::path::Path, log: std::path::PathBuf) -> Router {
    Router::spawn(&Launch::new(cfg, 60.0).netns(ns).log(log))
}

/// How long a test waits for a line of the router's output.
const WAIT: Duration = Duration::from_secs(20);

const SERVER: &str = "import socket,sys\n\
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
s.bind(('10.1.0.1', 1790)); s.listen(1); s.settimeout(10)\n\
c,a=s.accept(); c.sendall(b'hello ' + a[0].encode()); c.close()\n";

const CLIENT: &str = "import socket\n\
s=socket.create_connection(('10.1.0.1', 1790), timeout=5); print(s.recv(100).decode())\n";

/// A TCP session from the host to the router's address, served by the router
/// namespace's kernel behind the control interface: SYN up, SYN-ACK down, the kernel's
/// ARP for the host down and its answer mirrored up.
fn tcp_through_the_tap(p: &Pair, r: &Router) {
    let server = Command::new("ip")
        .args(["netns", "exec", &p.r, "python3", "-c", SERVER])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = KillOnDrop(Some(server));
    wait_listening(&p.r, "10.1.0.1:1790");
    let out = p.exec(&p.h, &["python3", "-c", CLIENT]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hello 10.1.0.2"),
        "no answer through the control interface: {text}{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        r.output()
    );
    common::wait_bounded(server.0.as_mut().unwrap(), Duration::from_secs(15));
}

/// Waits (bounded, 10 s) until a TCP socket listens on `addr` in namespace `ns`: a
/// loaded machine can take longer than any fixed sleep to start Python.
fn wait_listening(ns: &str, addr: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        let out = Command::new("ip")
            .args(["netns", "exec", ns, "ss", "-Hltn"])
            .output()
            .unwrap();
        if String::from_utf8_lossy(&out.stdout).contains(addr) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on {addr} in {ns} after 10 s");
}

/// The router's metrics page, fetched inside its namespace.
fn scrape(p: &Pair, r: &Router) -> String {
    let url = r.metrics_url();
    let got = p.exec(&p.r, &["curl", "-sf", &url]);
    String::from_utf8_lossy(&got.stdout).into_owned()
}

/// The control interface's IPv4 addresses, from `ip -j addr show`.
fn tap_v4(p: &Pair) -> Vec<String> {
    let addrs: serde_json::Value = serde_json::from_str(&link_json(p, "addr")).unwrap();
    addrs[0]["addr_info"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["family"] == "inet")
        .filter_map(|a| a["local"].as_str().map(str::to_string))
        .collect()
}

/// Whether two echo requests from the host to `dst` get a reply.
fn ping(p: &Pair, dst: &str) -> bool {
    let out = p.exec(&p.h, &["ping", "-c", "2", "-i", "0.2", "-W", "2", dst]);
    out.status.success()
}

/// The MAC the host resolved `ip` to (a REACHABLE, STALE, DELAY or PERMANENT entry).
fn host_neighbor(p: &Pair, ip: &str) -> Option<String> {
    let out = p.exec(&p.h, &["ip", "-j", "neigh", "show", ip, "dev", "eth0"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v.as_array()?
        .iter()
        .find(|n| n["dst"] == ip && n["lladdr"].is_string())
        .and_then(|n| n["lladdr"].as_str().map(str::to_string))
}

/// The control interface's ifindex, from `ip -j link show`.
fn tap_ifindex(p: &Pair) -> u64 {
    let v: serde_json::Value = serde_json::from_str(&link_json(p, "link")).unwrap();
    v[0]["ifindex"].as_u64().expect("an ifindex")
}

/// Sends one FPM frame to the router (in its namespace) and closes the connection.
const FPM_SEND: &str = "import socket,sys
s=socket.create_connection(('127.0.0.1',2620),timeout=5); s.sendall(bytes.fromhex(sys.argv[1])); s.close()";

/// zebra's route 198.51.100.0/24 via 10.9.9.9 (on no port's subnet) over `ifindex`.
fn fpm_route_over(p: &Pair, ifindex: u32) {
    use fpm::encode;
    let key = fpm::msg::Key::Ipv4 {
        addr: u32::from_be_bytes([198, 51, 100, 0]),
        len: 24,
    };
    let body = fpm::msg::RouteBody::Paths(vec![encode::path(
        u32::from_be_bytes([10, 9, 9, 9]),
        ifindex,
        &[],
        1,
    )]);
    let hex: String = encode::frame(&[encode::route(key, Some(&body))])
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let out = p.exec(&p.r, &["python3", "-c", FPM_SEND, &hex]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn link_json(p: &Pair, what: &str) -> String {
    let out = p.exec(&p.r, &["ip", "-j", what, "show", "dev", "mr-h1"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_control_interface_twins_the_port_carries_tcp_and_survives_deletion() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let dir = TempDir::new("cpif");
    let p = Pair::new("cpa");
    let port_mac = {
        let out = p.exec(&p.r, &["cat", "/sys/class/net/r-h1/address"]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let mut r = start_router(&p.r, &config(&dir, &p.r), dir.path("r.log"));
    r.wait_for("control interface \"mr-h1\"", WAIT);

    // Twin: the port's MAC and MTU, its address, up.
    let link = link_json(&p, "link");
    assert!(
        link.contains(&format!("\"address\":\"{port_mac}\"")),
        "{link}"
    );
    assert!(
        link.contains("\"mtu\":1500") && link.contains("\"UP\""),
        "{link}"
    );
    // The carrier is the port's link state (up), set without error.
    assert!(link.contains("\"LOWER_UP\""), "{link}");
    assert!(
        !r.output().contains("cannot set the carrier"),
        "{}",
        r.output()
    );
    let addr = link_json(&p, "addr");
    assert!(
        addr.contains("\"local\":\"10.1.0.1\",\"prefixlen\":24"),
        "{addr}"
    );

    tcp_through_the_tap(&p, &r);
    // A routes reload (a changed file and SIGHUP) leaves the interface as it was.
    let ifindex = link_json(&p, "link");
    std::fs::write(
        dir.path("routes.yaml"),
        "ipv4:\n  - prefix: 192.0.2.0/24\n    via: 10.1.0.2\n",
    )
    .unwrap();
    // An address added to the startup config at the same time is applied: the TAP
    // carries it, the router answers ARP and echo for it.
    let cfg = dir.path("r.yaml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replace("[10.1.0.1/24]", "[10.1.0.1/24, 10.3.0.1/24]"),
    )
    .unwrap();
    assert!(r.signal("HUP"), "kill -HUP failed");
    r.wait_for("reload: generation", WAIT);
    r.wait_for(
        "port \"h1\": addresses [10.1.0.1/24] -> [10.1.0.1/24, 10.3.0.1/24]: applied",
        WAIT,
    );
    assert_eq!(
        link_json(&p, "link"),
        ifindex,
        "the TAP is not recreated by a reload"
    );
    assert_eq!(tap_v4(&p), ["10.1.0.1", "10.3.0.1"]);
    // The kernel behind the TAP answers no ARP here: a reply is the router's own.
    sysctl(&p.r, &["net.ipv4.conf.mr-h1.arp_ignore=8"]);
    ip_in(&p.h, &["addr", "add", "10.3.0.2/24", "dev", "eth0"]);
    assert!(
        ping(&p, "10.3.0.1"),
        "no echo reply from the new address\n{}",
        r.output()
    );
    assert_eq!(
        host_neighbor(&p, "10.3.0.1").as_deref(),
        Some(port_mac.as_str()),
        "the new address is not resolved to the port's MAC"
    );
    // Removed again: the TAP drops it, the router stops answering for it (neither ARP
    // nor, with the host's neighbour entry set by hand, echo).
    std::fs::write(&cfg, &text).unwrap();
    assert!(r.signal("HUP"), "kill -HUP failed");
    r.wait_for(
        "port \"h1\": addresses [10.1.0.1/24, 10.3.0.1/24] -> [10.1.0.1/24]: applied",
        WAIT,
    );
    assert_eq!(tap_v4(&p), ["10.1.0.1"]);
    ip_in(&p.h, &["neigh", "flush", "dev", "eth0"]);
    assert!(!ping(&p, "10.3.0.1"), "a removed address still answers");
    assert_eq!(
        host_neighbor(&p, "10.3.0.1"),
        None,
        "ARP answered for a removed address"
    );
    ip_in(
        &p.h,
        &[
            "neigh", "replace", "10.3.0.1", "lladdr", &port_mac, "dev", "eth0",
        ],
    );
    assert!(
        !ping(&p, "10.3.0.1"),
        "a removed address still answers echo"
    );
    ip_in(&p.h, &["addr", "del", "10.3.0.2/24", "dev", "eth0"]);
    sysctl(&p.r, &["net.ipv4.conf.mr-h1.arp_ignore=0"]);
    tcp_through_the_tap(&p, &r);
    // The router still answers echo requests itself.
    let out = p.exec(
        &p.h,
        &["ping", "-c", "2", "-i", "0.2", "-W", "2", "10.1.0.1"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // A frame the port cannot carry: the kernel is told a bigger MTU from outside.
    ip_in(&p.r, &["link", "set", "mr-h1", "mtu", "4000"]);
    let _ = p.exec(
        &p.r,
        &["ping", "-c", "1", "-W", "1", "-s", "3000", "10.1.0.2"],
    );

    let metrics = scrape(&p, &r);
    for line in [
        "mplsrouter_control_interface_down_dropped_total{reason=\"too_big\"} 1",
        "mplsrouter_control_interface_recreated_total 0",
    ] {
        assert!(metrics.contains(line), "{line} missing:\n{metrics}");
    }
    assert!(
        metrics.contains("mplsrouter_control_interface_frames_total{direction=\"up\"}"),
        "{metrics}"
    );

    // Deleted from outside: logged, recreated with its settings, working again.
    let old_ifindex = tap_ifindex(&p);
    ip_in(&p.r, &["link", "del", "mr-h1"]);
    r.wait_for("control interface \"mr-h1\" recreated", WAIT);
    let addr = link_json(&p, "addr");
    assert!(addr.contains("\"local\":\"10.1.0.1\""), "{addr}");
    tcp_through_the_tap(&p, &r);

    // FPM maps the new ifindex to the port: zebra's route over it is installed, not
    // skipped as on no port (its gateway is on no port's subnet, so only the ifindex
    // can name the port).
    let new_ifindex = tap_ifindex(&p);
    assert_ne!(new_ifindex, old_ifindex);
    r.wait_for("ifindex map refreshed", WAIT);
    fpm_route_over(&p, new_ifindex as u32);
    let start = Instant::now();
    let metrics = loop {
        let m = scrape(&p, &r);
        if m.contains("mplsrouter_fpm_changes_total 1") || start.elapsed() > Duration::from_secs(20)
        {
            break m;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    for line in [
        "mplsrouter_fpm_changes_total 1",
        "mplsrouter_fpm_rejected_total 0",
    ] {
        assert!(
            metrics.contains(line),
            "{line} missing:\n{metrics}\n{}",
            r.output()
        );
    }
    assert!(
        !metrics.contains("mplsrouter_fpm_errors_total{reason=\"no_port\"} 1"),
        "{metrics}"
    );

    let log = r.stop();
    assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
    assert!(
        log.contains("mbufs unaccounted for by the workers: 0"),
        "{log}"
    );
    let line = log
        .lines()
        .find(|l| l.starts_with("control interfaces:"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("too_big=1"), "{line}");
    assert!(line.contains("lost 1 recreated 1"), "{line}");
    assert!(!log.contains("cannot set the carrier"), "{log}");
}

#[test]
fn a_control_interface_name_that_is_taken_stops_startup_naming_the_port() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let dir = TempDir::new("cpif-taken");
    let p = Pair::new("cpb");
    ip_in(
        &p.r,
        &[
            "link", "add", "mr-h1", "type", "veth", "peer", "name", "mr-h1p",
        ],
    );
    let mut r = start_router(&p.r, &config(&dir, &p.r), dir.path("r.log"));
    let (status, out) = r.wait_exit(Duration::from_secs(30));
    assert!(!status.success(), "{out}");
    assert!(
        out.contains("port \"h1\": cannot create control interface \"mr-h1\"")
            && out.contains("hint: the name is taken"),
        "{out}"
    );
}

/// `ip -j link show dev NAME` in `ns`, parsed: (flags, operstate).
fn link_state(ns: &str, name: &str) -> (Vec<String>, String) {
    let out = Command::new("ip")
        .args(["-n", ns, "-j", "link", "show", "dev", name])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let flags = v[0]["flags"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (
        flags,
        v[0]["operstate"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Waits until the TAP's carrier is `up` as `ip -j link show` reports it.
fn wait_carrier(ns: &str, up: bool, r: &Router) {
    let start = Instant::now();
    loop {
        let (flags, oper) = link_state(ns, "mr-t");
        let has = |f: &str| flags.iter().any(|x| x == f);
        let ok = if up {
            // A TAP with carrier reports operstate UNKNOWN (tun sets no operstate).
            has("LOWER_UP") && !has("NO-CARRIER") && oper != "DOWN"
        } else {
            has("NO-CARRIER") && !has("LOWER_UP") && oper == "DOWN"
        };
        if ok {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "mr-t never had carrier {up}: flags {flags:?} operstate {oper}\n{}",
            r.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The TAP's carrier follows the port's link. af_packet reports its link up whatever its
/// interface does, so the port here is DPDK's `net_tap`, whose link is its kernel
/// interface's IFF_UP and IFF_RUNNING: setting that interface down from outside is the
/// cable pulled, and the router's link poll must carry it to the control interface.
#[test]
fn the_control_interface_carrier_follows_the_port_link() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let dir = TempDir::new("cpif-link");
    let mut guard = common::Netns::new("cpl");
    let ns = guard.add("r");
    let routes = dir.path("routes.yaml");
    std::fs::write(&routes, "{}\n").unwrap();
    let cfg = dir.path("r.yaml");
    std::fs::write(
        &cfg,
        format!(
            "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {ns}}}\n\
             ports:\n  - {{name: t, vdev: \"net_tap_{ns},iface=dt-{ns}\", \
             addresses: [10.2.0.1/24], control_interface: mr-t}}\n\
             routes: {}\nmetrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n",
            routes.display()
        ),
    )
    .unwrap();
    let mut r = start_router(&ns, &cfg, dir.path("r.log"));
    r.wait_for("control interface \"mr-t\"", WAIT);
    let wire = format!("dt-{ns}");
    wait_carrier(&ns, true, &r);
    ip_in(&ns, &["link", "set", &wire, "down"]);
    wait_carrier(&ns, false, &r);
    r.wait_for("cpif: \"mr-t\": port link down", WAIT);
    ip_in(&ns, &["link", "set", &wire, "up"]);
    wait_carrier(&ns, true, &r);
    r.wait_for("cpif: \"mr-t\": port link up", WAIT);
    let log = r.stop();
    assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
    assert!(!log.contains("cannot set the carrier"), "{log}");
}
