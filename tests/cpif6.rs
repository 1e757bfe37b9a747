//! IPv6 on the control interfaces through the real binary: a host in one network
//! namespace, the router in another on `net_af_packet`, its port's TAP twin in the
//! router's namespace. The TAP carries the port's IPv6 addresses and the configured
//! link-local one and nothing the kernel made itself; TCP from the host to both reaches
//! the router namespace's kernel; the kernel's own ping -6 to the host (its NS down, the
//! host's NA mirrored up, echo down, reply up) works; a reload adds and removes an
//! address on the TAP; a TAP deleted from outside comes back with its IPv6 addresses.
//! Oracles: the kernels' `ip -j` views, `ping`, and Python sockets.
//!
//! Needs root (as CI runs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{ip_in, is_root, sysctl, KillOnDrop, Launch, Router, TempDir};

const WAIT: Duration = Duration::from_secs(20);

fn exec(ns: &str, args: &[&str]) -> Output {
    Command::new("ip")
        .args(["netns", "exec", ns])
        .args(args)
        .output()
        .unwrap()
}

/// Host `h` (eth0, 2001:db8:1::2/64, no DAD) and router namespace `r` (r-h1, the port's
/// veth, without IPv6: a NIC bound to DPDK has no kernel twin answering NDP).
fn pair(ns: &mut common::Netns) -> (String, String) {
    let (h, r) = (ns.add("h"), ns.add("r"));
    // The host's link-local address is usable at once (no DAD).
    sysctl(&h, &["net.ipv6.conf.default.accept_dad=0"]);
    common::veth(&h, "eth0", &r, "r-h1", Default::default());
    sysctl(&r, &["net.ipv6.conf.r-h1.disable_ipv6=1"]);
    ip_in(
        &h,
        &["addr", "add", "2001:db8:1::2/64", "dev", "eth0", "nodad"],
    );
    (h, r)
}

fn config(dir: &TempDir, prefix: &str) -> std::path::PathBuf {
    let routes = dir.path("routes.yaml");
    std::fs::write(&routes, "{}\n").unwrap();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {prefix}}}\n\
         ports:\n  - {{name: h1, vdev: \"net_af_packet_{prefix},iface=r-h1\", \
         addresses: [10.1.0.1/24, \"2001:db8:1::1/64\"], link_local6: \"fe80::1\", \
         control_interface: mr-h1}}\n\
         routes: {}\nmetrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n",
        routes.display()
    );
    let p = dir.path("r.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// The TAP's IPv6 addresses (`address/len`, sorted) and whether any is tentative or
/// failed DAD.
fn tap_v6(r: &str) -> (Vec<String>, bool) {
    let out = exec(r, &["ip", "-j", "-6", "addr", "show", "dev", "mr-h1"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let infos = v[0]["addr_info"].as_array().cloned().unwrap_or_default();
    let mut addrs: Vec<String> = infos
        .iter()
        .map(|a| format!("{}/{}", a["local"].as_str().unwrap_or("?"), a["prefixlen"]))
        .collect();
    addrs.sort();
    let unsettled = infos
        .iter()
        .any(|a| a["tentative"] == true || a["dadfailed"] == true);
    (addrs, unsettled)
}

fn ipv6_knob(r: &str, key: &str) -> String {
    let out = exec(r, &["cat", &format!("/proc/sys/net/ipv6/conf/mr-h1/{key}")]);
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Serves one TCP connection on [::]:1790 in `r`: says hello to the peer's address.
const SERVER: &str = "import socket\n\
s=socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
s.bind(('::', 1790)); s.listen(1); s.settimeout(10)\n\
c,a=s.accept(); c.sendall(b'hello ' + a[0].encode()); c.close()\n";

const CLIENT: &str = "import socket,sys\n\
s=socket.create_connection((sys.argv[1], 1790), timeout=5); print(s.recv(100).decode())\n";

/// A TCP session from the host to `dst` (one of the router's addresses), served by the
/// router namespace's kernel behind the TAP; the greeting names the host's address.
fn tcp6(h: &str, r: &str, dst: &str, from: &str, router: &Router) {
    let server = Command::new("ip")
        .args(["netns", "exec", r, "python3", "-c", SERVER])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = KillOnDrop(Some(server));
    wait_listening(r, ":1790");
    let out = exec(h, &["python3", "-c", CLIENT, dst]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("hello {from}")),
        "no answer from {dst} through the control interface: {text}{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        router.output()
    );
    common::wait_bounded(server.0.as_mut().unwrap(), Duration::from_secs(15));
}

fn wait_listening(ns: &str, addr: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        let out = exec(ns, &["ss", "-Hltn"]);
        if String::from_utf8_lossy(&out.stdout).contains(addr) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on {addr} in {ns} after 10 s");
}

/// The host's link-local address on eth0 (waited for: at most 5 s).
fn host_link_local(h: &str) -> String {
    let start = Instant::now();
    loop {
        let out = ip_in(
            h,
            &["-j", "-6", "addr", "show", "dev", "eth0", "scope", "link"],
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        // Filtered out addresses are left as empty objects.
        let infos = v[0]["addr_info"].as_array().cloned().unwrap_or_default();
        if let Some(a) = infos.iter().find_map(|a| a["local"].as_str()) {
            return a.to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no link-local address on the host: {out}\n{}",
            ip_in(h, &["addr"])
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The MAC the router namespace's kernel resolved `ip` to on the TAP.
fn kernel_neighbor(r: &str, ip: &str) -> Option<String> {
    let out = ip_in(r, &["-j", "-6", "neigh", "show", ip, "dev", "mr-h1"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    v.as_array()?
        .iter()
        .find_map(|n| n["lladdr"].as_str().map(str::to_string))
}

fn ping6(ns: &str, dst: &str) -> Output {
    exec(ns, &["ping", "-6", "-c", "2", "-i", "0.2", "-W", "2", dst])
}

fn wait_tap_v6(r: &str, want: &[&str], router: &Router) {
    let start = Instant::now();
    loop {
        let (got, unsettled) = tap_v6(r);
        if got == want && !unsettled {
            return;
        }
        assert!(
            start.elapsed() < WAIT,
            "the TAP's IPv6 addresses: {got:?} (unsettled {unsettled}), want {want:?}\n{}",
            router.output()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Changes the port's `addresses:` in the startup config and reloads; waits until the
/// router says the change of its IPv6 addresses (`change`, `[...] -> [...]`) is applied.
fn reload_addresses(
    router: &mut Router,
    cfg: &std::path::Path,
    from: &str,
    to: &str,
    change: &str,
) {
    let text = std::fs::read_to_string(cfg).unwrap();
    std::fs::write(cfg, text.replace(from, to)).unwrap();
    assert!(router.signal("HUP"), "kill -HUP failed");
    router.wait_for(&format!("port \"h1\": addresses6 {change}: applied"), WAIT);
}

#[test]
fn the_control_interface_carries_the_ports_ipv6_addresses_and_traffic() {
    if !is_root() {
        eprintln!("SKIP: netns tests need root");
        return;
    }
    let dir = TempDir::new("cpif6");
    let mut ns = common::Netns::new("cp6");
    let (h, r) = pair(&mut ns);
    let cfg = config(&dir, &r);
    let mut router = Router::spawn(&Launch::new(&cfg, 60.0).netns(&r).log(dir.path("r.log")));
    router.wait_for("control interface \"mr-h1\"", WAIT);

    // The router's addresses, the configured link-local one instead of EUI-64, none of
    // the kernel's making, none tentative; no autoconfiguration.
    wait_tap_v6(&r, &["2001:db8:1::1/64", "fe80::1/64"], &router);
    for (k, v) in [
        ("addr_gen_mode", "1"),
        ("accept_ra", "0"),
        ("autoconf", "0"),
    ] {
        assert_eq!(ipv6_knob(&r, k), v, "net.ipv6.conf.mr-h1.{k}");
    }

    // TCP to the global and to the link-local address, up through the TAP.
    tcp6(&h, &r, "2001:db8:1::1", "2001:db8:1::2", &router);
    let ll = host_link_local(&h);
    tcp6(&h, &r, "fe80::1%eth0", &ll, &router);
    // The kernel resolved the host from the NDP the router mirrored up.
    let host_mac = common::mac_of(&h, "eth0");
    assert_eq!(
        kernel_neighbor(&r, "2001:db8:1::2").as_deref(),
        Some(host_mac.as_str())
    );
    // The kernel's own ping -6: its NS and echo requests down, the host's NA mirrored
    // and echo replies sent up (the router answers only echo requests itself).
    ip_in(&r, &["-6", "neigh", "flush", "dev", "mr-h1"]);
    for dst in ["2001:db8:1::2".to_string(), format!("{ll}%mr-h1")] {
        let out = ping6(&r, &dst);
        assert!(
            out.status.success(),
            "the kernel's ping -6 {dst}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            router.output()
        );
    }
    // The router still answers echo itself.
    assert!(ping6(&h, "2001:db8:1::1").status.success());

    // A reload adds an address to the TAP, and removes it again.
    let before = "[10.1.0.1/24, \"2001:db8:1::1/64\"]";
    let after = "[10.1.0.1/24, \"2001:db8:1::1/64\", \"2001:db8:3::1/64\"]";
    let (one, two) = (
        "[fe80::1/64, 2001:db8:1::1/64]",
        "[fe80::1/64, 2001:db8:1::1/64, 2001:db8:3::1/64]",
    );
    reload_addresses(&mut router, &cfg, before, after, &format!("{one} -> {two}"));
    wait_tap_v6(
        &r,
        &["2001:db8:1::1/64", "2001:db8:3::1/64", "fe80::1/64"],
        &router,
    );
    reload_addresses(&mut router, &cfg, after, before, &format!("{two} -> {one}"));
    wait_tap_v6(&r, &["2001:db8:1::1/64", "fe80::1/64"], &router);

    // Deleted from outside: recreated with its IPv6 addresses, working again.
    ip_in(&r, &["link", "del", "mr-h1"]);
    router.wait_for("control interface \"mr-h1\" recreated", WAIT);
    wait_tap_v6(&r, &["2001:db8:1::1/64", "fe80::1/64"], &router);
    tcp6(&h, &r, "2001:db8:1::1", "2001:db8:1::2", &router);

    let log = router.stop();
    assert!(log.contains("mbufs not returned to the pool: 0"), "{log}");
    assert!(
        log.contains("mbufs unaccounted for by the workers: 0"),
        "{log}"
    );
}
