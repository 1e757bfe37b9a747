//! The whole box with real FRR: namespaces A and B run zebra, ospfd and ldpd on veths;
//! namespace R runs mplsrouter (af_packet ports facing A and B, control interfaces
//! `mr-a` and `mr-b`) and its own zebra (`dplane_fpm_nl` -> the router's FPM listener),
//! ospfd and ldpd on those control interfaces. FRR's `show ... json` is the oracle for
//! the protocols; a labelled frame sent from B with the label R advertised for A's
//! loopback must come out towards A popped (A advertises implicit null), seen by a
//! capture in A decoded by tshark, and the same from A towards B.
//!
//! Needs root and Debian's frr (tests/frr/harness.rs); skipped with a message otherwise.
#![forbid(unsafe_code)]

mod common;
#[path = "frr/harness.rs"]
mod harness;

use std::process::Stdio;
use std::time::Duration;

use common::{ip_in, sysctl};
use harness::{sh, unavailable, wait_until, Frr, FrrConfig};
use serde_json::Value;

const FPM_PORT: u16 = 2625;

/// One side of the topology: a name, its link address, loopback and OSPF networks.
struct Side {
    frr: Frr,
    link: &'static str,
    ip: &'static str,
    lo: &'static str,
}

fn frr_config() -> FrrConfig {
    FrrConfig {
        fpm_port: FPM_PORT,
        next_hop_groups: true,
        zebra: String::new(),
        staticd: String::new(),
    }
}

fn ospfd_conf(rid: &str, ifs: &[&str], nets: &[&str]) -> String {
    let mut s = "hostname ospfd\n".to_string();
    for i in ifs {
        s += &format!(
            "interface {i}\n ip ospf network point-to-point\n ip ospf hello-interval 1\n \
             ip ospf dead-interval 4\n!\n"
        );
    }
    s += &format!(
        "router ospf\n ospf router-id {rid}\n log-adjacency-changes detail\n \
         timers throttle spf 0 50 200\n"
    );
    for n in nets {
        s += &format!(" network {n} area 0\n");
    }
    s
}

fn ldpd_conf(rid: &str, transport: &str, ifs: &[&str]) -> String {
    let mut s = format!(
        "hostname ldpd\nmpls ldp\n router-id {rid}\n discovery hello holdtime 3\n \
         discovery hello interval 1\n address-family ipv4\n  discovery transport-address {transport}\n"
    );
    for i in ifs {
        s += &format!("  interface {i}\n  exit\n");
    }
    s + " exit-address-family\n exit\n"
}

/// IS-IS level 2 on a LAN circuit (hellos to AllL2ISs 01:80:c2:00:00:15, LLC frames).
fn isisd_conf(sysid: &str, ifname: &str) -> String {
    format!(
        "hostname isisd\ninterface {ifname}\n ip router isis 1\n isis circuit-type level-2-only\n \
         isis hello-interval 1\n isis hello-multiplier 3\n!\nrouter isis 1\n \
         net 49.0001.{sysid}.00\n is-type level-2-only\n"
    )
}

fn bgpd_conf(asn: u32, rid: &str, peer: &str, peer_as: u32, network: Option<&str>) -> String {
    let mut s = format!(
        "hostname bgpd\nrouter bgp {asn}\n bgp router-id {rid}\n no bgp ebgp-requires-policy\n \
         no bgp network import-check\n neighbor {peer} remote-as {peer_as}\n \
         neighbor {peer} timers 1 3\n neighbor {peer} timers connect 1\n"
    );
    if let Some(n) = network {
        s += &format!(" address-family ipv4 unicast\n  network {n}\n exit-address-family\n");
    }
    s
}

fn router_config(dir: &std::path::Path, prefix: &str) -> std::path::PathBuf {
    let routes = dir.join("routes.yaml");
    std::fs::write(&routes, "{}\n").unwrap();
    // `punt:` lifts the TTL-expiry budget (issue 23): the flood test needs the TTL-1
    // flood to reach, and fill, the slow path's data queue.
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {prefix}}}\n\
         ports:\n\
         \x20 - {{name: a, vdev: \"net_af_packet_{prefix}a,iface=r-a\", addresses: [10.0.1.2/24], control_interface: mr-a}}\n\
         \x20 - {{name: b, vdev: \"net_af_packet_{prefix}b,iface=r-b\", addresses: [10.0.0.2/24], control_interface: mr-b}}\n\
         metrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n\
         fpm: {{listen: 127.0.0.1:{FPM_PORT}, resync_settle_ms: 3000}}\n\
         punt: {{ttl_expired_pps: 10000000, ttl_expired_burst: 1000000}}\n\
         routes: {}\n",
        routes.display()
    );
    let p = dir.join("router.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// Builds A - R - B with addresses, the router running in R; no FRR daemon yet. (Bind
/// the router last: it drops, and stops, before the namespaces go.)
fn topology() -> (Side, Side, Frr, common::Router) {
    let a = Frr::new("oa", &[], frr_config());
    let b = Frr::new("ob", &[], frr_config());
    let r = Frr::new("or", &[], frr_config());
    common::veth(&a.ns, "a-r", &r.ns, "r-a", Default::default());
    common::veth(&b.ns, "b-r", &r.ns, "r-b", Default::default());
    for (f, i, ip, lo, gw) in [
        (&a, "a-r", "10.0.1.1/24", "10.255.0.1/32", "10.0.1.2"),
        (&b, "b-r", "10.0.0.1/24", "10.255.0.3/32", "10.0.0.2"),
    ] {
        ip_in(&f.ns, &["addr", "add", ip, "dev", i]);
        ip_in(&f.ns, &["addr", "add", lo, "dev", "lo"]);
        // zebra's kernel writes are swallowed by the shim: the hosts reach R's LDP
        // transport address by a kernel default route.
        ip_in(&f.ns, &["route", "add", "default", "via", gw]);
        f.add_mpls_conf(i);
    }
    // A owns the prefix it announces by BGP: its kernel sinks it (no loop back to R).
    ip_in(&a.ns, &["route", "add", "blackhole", ANNOUNCED]);
    // The veths the af_packet ports wrap are kernel interfaces of R too: they must not
    // answer ARP or take packets for the control interfaces' addresses.
    for i in ["r-a", "r-b"] {
        sysctl(
            &r.ns,
            &[
                &format!("net.ipv4.conf.{i}.arp_ignore=1"),
                &format!("net.ipv4.conf.{i}.rp_filter=1"),
            ],
        );
    }
    // The slow path takes data-queue packets slowly (2 ms each), so the test's flood
    // outruns it for its whole length, as a line-rate flood outruns a real slow path:
    // without the control queue, the hellos would be lost with it.
    let launch = common::Launch::new(&router_config(&r.dir, &r.ns), 110.0)
        .netns(&r.ns)
        .log(r.path("router.out"))
        .ready(Some("fpm: listening"), Duration::from_secs(20))
        .env("MPLSROUTER_TEST_FAULT", "slow-data");
    let router = common::Router::start(&launch);
    for i in ["mr-a", "mr-b"] {
        r.add_mpls_conf(i);
    }
    let side = |frr, link, ip, lo| Side { frr, link, ip, lo };
    (
        side(a, "a-r", "10.0.1.1", "10.255.0.1"),
        side(b, "b-r", "10.0.0.1", "10.255.0.3"),
        r,
        router,
    )
}

/// Starts zebra, ospfd and ldpd everywhere.
fn start_frr(a: &mut Side, b: &mut Side, r: &mut Frr) {
    for s in [&mut *a, &mut *b] {
        let net = format!("{}.0/24", s.ip.rsplit_once('.').unwrap().0);
        s.frr.start_zebra();
        s.frr.start_daemon(
            "ospfd",
            &ospfd_conf(s.lo, &[s.link], &[&net, &format!("{}/32", s.lo)]),
        );
        s.frr
            .start_daemon("ldpd", &ldpd_conf(s.lo, s.ip, &[s.link]));
    }
    // IS-IS between R and A over the router's port (LLC frames up and down the TAP).
    a.frr
        .start_daemon("isisd", &isisd_conf("0102.5500.0001", a.link));
    // eBGP between R and A over the router's port; A announces ANNOUNCED.
    a.frr.start_daemon(
        "bgpd",
        &bgpd_conf(65001, a.lo, "10.0.1.2", 65000, Some(ANNOUNCED)),
    );
    start_r(r, a.ip);
}

/// R's FRR: zebra, then ospfd, ldpd and bgpd on the control interfaces.
fn start_r(r: &mut Frr, a_ip: &str) {
    r.start_zebra();
    r.start_daemon(
        "ospfd",
        &ospfd_conf(
            "10.255.0.2",
            &["mr-a", "mr-b"],
            &["10.0.1.0/24", "10.0.0.0/24"],
        ),
    );
    r.start_daemon(
        "ldpd",
        &ldpd_conf("10.255.0.2", "10.0.1.2", &["mr-a", "mr-b"]),
    );
    r.start_daemon("bgpd", &bgpd_conf(65000, "10.255.0.2", a_ip, 65001, None));
    r.start_daemon("isisd", &isisd_conf("0102.5500.0002", "mr-a"));
}

/// The system ids of R's IS-IS neighbours whose adjacency is Up (`show isis neighbor`:
/// FRR 8.4 has no JSON for it; the table's columns are System Id, Interface, L, State).
fn isis_up(r: &Frr) -> Vec<String> {
    let out = r.vtysh(&["show isis neighbor"]);
    let mut up: Vec<String> = out
        .lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            (c.len() >= 4 && c[3] == "Up").then(|| format!("{} {}", c[0], c[1]))
        })
        .collect();
    up.sort();
    up
}

/// Waits for OSPF Full and LDP Operational with both neighbours; R's labels for A's and
/// B's loopbacks, each learned from its owner as implicit null.
fn converge(r: &Frr, want: &[String], logs: &dyn Fn() -> String) -> Vec<u32> {
    let settle = |never: &str, state: fn(&Frr) -> Vec<String>| {
        let ok = wait_until_or(Duration::from_secs(40), || {
            (state(r) == want).then_some(()).or_else(|| {
                std::thread::sleep(Duration::from_millis(250));
                None
            })
        });
        assert!(
            ok.is_some(),
            "{never} with A and B: {:?}\n{}",
            state(r),
            logs()
        );
    };
    settle("OSPF never Full", ospf_full);
    settle("LDP never Operational", ldp_operational);
    let mut labels = Vec::new();
    for lo in ["10.255.0.1/32", "10.255.0.3/32"] {
        let l = wait_until_or(Duration::from_secs(20), || {
            binding(r, lo).ok().or_else(|| {
                std::thread::sleep(Duration::from_millis(250));
                None
            })
        });
        let (local, remote) = l.unwrap_or_else(|| panic!("{:?}\n{}", binding(r, lo), logs()));
        assert_eq!(remote, 3, "{lo}: the owner advertises implicit null");
        assert!(local >= 16, "{lo}: R advertises a real label, got {local}");
        labels.push(local);
    }
    labels
}

/// The prefix A announces to R by BGP.
const ANNOUNCED: &str = "10.99.0.0/24";

fn all_logs(frrs: &[&Frr]) -> String {
    let mut s = String::new();
    for f in frrs {
        s += &format!("===== {}\n{}", f.ns, f.logs());
    }
    let r = frrs[frrs.len() - 1];
    for f in ["router.out", "router.err"] {
        let t = std::fs::read_to_string(r.path(f)).unwrap_or_default();
        let tail: Vec<&str> = t.lines().rev().take(40).collect();
        s += &format!(
            "--- {f}\n{}\n",
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    s
}

/// Router ids of R's OSPF neighbours in state Full.
fn ospf_full(r: &Frr) -> Vec<String> {
    let j = r.json("show ip ospf neighbor json");
    let mut full = Vec::new();
    if let Some(m) = j["neighbors"].as_object() {
        for (id, entries) in m {
            let states = entries.as_array().cloned().unwrap_or_default();
            let is_full = states.iter().any(|e| {
                ["nbrState", "state"]
                    .iter()
                    .any(|k| e[k].as_str().is_some_and(|s| s.starts_with("Full")))
            });
            if is_full {
                full.push(id.clone());
            }
        }
    }
    full.sort();
    full
}

/// LSR ids of R's LDP neighbours in state Operational.
fn ldp_operational(r: &Frr) -> Vec<String> {
    let j = r.json("show mpls ldp neighbor json");
    let mut up: Vec<String> = j["neighbors"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|n| {
            n["state"]
                .as_str()
                .is_some_and(|s| s.eq_ignore_ascii_case("operational"))
        })
        .filter_map(|n| n["neighborId"].as_str().map(str::to_owned))
        .collect();
    up.sort();
    up
}

fn label_of(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().map(|x| x as u32),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The label R advertises for `prefix` (its local binding in use), and the label the
/// downstream neighbour gave (`imp-null` as 3).
fn binding(r: &Frr, prefix: &str) -> Result<(u32, u32), String> {
    let j = r.json("show mpls ldp binding json");
    let list = j["bindings"].as_array().cloned().unwrap_or_default();
    list.iter()
        .filter(|b| b["prefix"].as_str() == Some(prefix))
        .filter(|b| b["inUse"].as_u64() == Some(1) || b["inUse"].as_bool() == Some(true))
        .find_map(|b| {
            let local = label_of(&b["localLabel"])?;
            let remote = match b["remoteLabel"].as_str() {
                Some("imp-null") => Some(3),
                _ => label_of(&b["remoteLabel"]),
            }?;
            Some((local, remote))
        })
        .ok_or_else(|| format!("no binding in use for {prefix}: {j}"))
}

fn mac(ns: &str, ifname: &str) -> String {
    sh(&[
        "ip",
        "netns",
        "exec",
        ns,
        "cat",
        &format!("/sys/class/net/{ifname}/address"),
    ])
    .trim()
    .to_string()
}

/// Frames over an ICMP echo `src` -> `dst` (id 0x4d52, IP TTL `ttl`), with one label
/// (`label`, S=1, TTL 64) unless it is `none`, sent raw from `ifname` to `dst_mac`,
/// `count` of them `gap` seconds apart.
const SENDER: &str = r#"
import socket, struct, sys, time
ifname, dst_mac, label, src, dst, count, ttl, gap = sys.argv[1:9]
def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return (~s) & 0xffff
icmp = struct.pack('!BBHHH', 8, 0, 0, 0x4d52, 1) + b'mplsrouter-cpif-probe'
icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(icmp), 1, 0, int(ttl), 1, 0,
                 socket.inet_aton(src), socket.inet_aton(dst))
ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind((ifname, 0))
mine = open('/sys/class/net/%s/address' % ifname).read().strip()
eth = bytes.fromhex(dst_mac.replace(':', '')) + bytes.fromhex(mine.replace(':', ''))
if label == 'none':
    frame = eth + b'\x08\x00' + ip + icmp
else:
    frame = eth + b'\x88\x47' + struct.pack('!I', (int(label) << 12) | 0x100 | 64) + ip + icmp
gap = float(gap)
for _ in range(int(count)):
    s.send(frame)
    if gap: time.sleep(gap)
"#;

/// A flood of unlabelled frames `src` -> `dst` with IP TTL 1 (punted as TTL expiry: data),
/// sent raw from `ifname` to `dst_mac`, one every ~0.1-0.2 ms (thousands a second, far
/// more than the slowed slow path takes, and evenly spaced: a hello finds the data queue
/// full, not emptied between bursts), for `secs` seconds.
const FLOOD: &str = r#"
import socket, struct, sys, time
ifname, dst_mac, src, dst, secs = sys.argv[1:6]
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 28, 1, 0, 1, 17, 0,
                 socket.inet_aton(src), socket.inet_aton(dst))
s = 0
for i in range(0, 20, 2): s += (ip[i] << 8) + ip[i + 1]
s = (s >> 16) + (s & 0xffff); s += s >> 16
ip = ip[:10] + struct.pack('!H', (~s) & 0xffff) + ip[12:]
udp = struct.pack('!HHHH', 40000, 9, 8, 0)
sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); sock.bind((ifname, 0))
mine = open('/sys/class/net/%s/address' % ifname).read().strip()
frame = bytes.fromhex(dst_mac.replace(':', '')) + bytes.fromhex(mine.replace(':', '')) + b'\x08\x00' + ip + udp
end = time.time() + float(secs)
while time.time() < end:
    sock.send(frame)
    time.sleep(0.0001)
"#;

/// Runs SENDER in `from`'s namespace towards R's `r_port`.
fn send(from: &Side, r: &Frr, r_port: &str, label: Option<u32>, dst: &str, args: [&str; 3]) {
    let label = label.map_or("none".to_string(), |l| l.to_string());
    let dst_mac = mac(&r.ns, r_port);
    let mut a = vec![
        "python3", "-c", SENDER, from.link, &dst_mac, &label, from.ip, dst,
    ];
    a.extend(args);
    let out = from.frr.exec(&a).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sends probes from `from` to `dst` (labelled with `label`, or not) until a capture on
/// `to`'s link shows them; returns the decoded probes.
fn probe_through(
    from: &Side,
    to: &Side,
    dst: &str,
    r: &Frr,
    label: Option<u32>,
    r_port: &str,
    logs: &dyn Fn() -> String,
) -> Vec<common::Decoded> {
    let pcap = to.frr.path("capture.pcap");
    let _ = std::fs::remove_file(&pcap);
    let cap = to
        .frr
        .exec(&[
            "tcpdump",
            "-i",
            to.link,
            "-U",
            "-w",
            pcap.to_str().unwrap(),
            "icmp or mpls",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let fields = [
        "eth.src",
        "mpls.label",
        "ip.src",
        "ip.dst",
        "ip.ttl",
        "icmp.ident",
        "icmp.type",
    ];
    let found = wait_until_or(Duration::from_secs(20), || {
        send(from, r, r_port, label, dst, ["3", "64", "0.1"]);
        std::thread::sleep(Duration::from_millis(300));
        let got: Vec<common::Decoded> = common::tshark(&pcap, &fields)
            .into_iter()
            .filter(|d| {
                d.get("ip.dst") == dst
                    && d.get("icmp.type") == "8"
                    && matches!(d.get("icmp.ident"), "19794" | "0x4d52")
            })
            .collect();
        (!got.is_empty()).then_some(got)
    });
    harness::stop(cap, false);
    found.unwrap_or_else(|| {
        panic!(
            "no probe {} -> {dst} (label {label:?}) came out of R\n{}",
            from.ip,
            logs()
        )
    })
}

fn wait_until_or<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
    }
}

/// Whether R's BGP session with `peer` is Established (`show bgp summary json`).
fn bgp_established(r: &Frr, peer: &str) -> bool {
    let j = r.json("show bgp summary json");
    j["ipv4Unicast"]["peers"][peer]["state"].as_str() == Some("Established")
}

fn adjacency_losses(r: &Frr) -> usize {
    let log = std::fs::read_to_string(r.path("run/ospfd.log")).unwrap_or_default();
    log.lines().filter(|l| l.contains("Full ->")).count()
}

/// OSPF hellos an ospfd sent or received (`key`: helloOut, helloIn), all interfaces
/// (`show ip ospf interface traffic json`).
fn hellos(r: &Frr, key: &str) -> u64 {
    fn sum(v: &Value, key: &str) -> u64 {
        match v {
            Value::Object(m) => m
                .iter()
                .map(|(k, x)| {
                    if k == key {
                        x.as_u64().unwrap_or(0)
                    } else {
                        sum(x, key)
                    }
                })
                .sum(),
            Value::Array(a) => a.iter().map(|x| sum(x, key)).sum(),
            _ => 0,
        }
    }
    sum(&r.json("show ip ospf interface traffic json"), key)
}

fn flood_keeps_adjacencies(
    a: &Side,
    b: &Side,
    r: &Frr,
    want: &[String],
    logs: &dyn Fn() -> String,
) {
    let before = adjacency_losses(r);
    let sent_before = hellos(&a.frr, "helloOut") + hellos(&b.frr, "helloOut");
    let got_before = hellos(r, "helloIn");
    let t0 = std::time::Instant::now();
    let mut senders = Vec::new();
    for s in [a, b] {
        let dst = if s.ip == a.ip { b.lo } else { a.lo };
        let port = if s.ip == a.ip { "r-a" } else { "r-b" };
        let dst_mac = mac(&r.ns, port);
        let args = ["python3", "-c", FLOOD, s.link, &dst_mac, s.ip, dst, "6"];
        senders.push(s.frr.exec(&args).spawn().unwrap());
    }
    let limit = Duration::from_secs(8);
    for mut c in senders {
        while t0.elapsed() < limit && c.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
        if c.try_wait().unwrap().is_none() {
            harness::stop(c, true);
        }
    }
    let flooded = t0.elapsed();
    // Counted for the record: hellos can also be lost before the router sees them (the
    // af_packet ring overflows when the flood starves the worker of CPU on a small
    // machine); what the router itself drops is asserted from its summary at the end.
    let got = hellos(r, "helloIn") - got_before;
    let sent = hellos(&a.frr, "helloOut") + hellos(&b.frr, "helloOut") - sent_before;
    eprintln!("flood of {flooded:?}: A and B sent {sent} OSPF hellos, R's ospfd received {got}");
    // Let a lost adjacency show (dead interval 4 s) before looking.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(ospf_full(r), want, "OSPF after the flood\n{}", logs());
    assert_eq!(ldp_operational(r), want, "LDP after the flood\n{}", logs());
    assert_eq!(
        adjacency_losses(r),
        before,
        "an OSPF adjacency left Full during the {flooded:?} flood\n{}",
        logs()
    );
}

/// ifindex of each of R's control interfaces (`ip -j link show`).
fn control_ifindexes(r: &Frr) -> Vec<u64> {
    ["mr-a", "mr-b"]
        .iter()
        .map(|i| {
            let j: Value =
                serde_json::from_str(&ip_in(&r.ns, &["-j", "link", "show", "dev", i])).unwrap();
            j[0]["ifindex"].as_u64().expect("an ifindex")
        })
        .collect()
}

fn file_reloads(r: &Frr) -> usize {
    let out = std::fs::read_to_string(r.path("router.out")).unwrap_or_default();
    out.matches("reload: generation").count()
}

/// A routes-file reload while FRR runs: the file's new route is forwarded, zebra's
/// label entries (FPM) and the control interfaces stay, OSPF, LDP and BGP do not notice.
fn a_reload_keeps_the_control_plane(
    a: &Side,
    b: &Side,
    r: &Frr,
    want: &[String],
    labels: &[u32],
    logs: &dyn Fn() -> String,
) {
    let (ifindexes, losses, n) = (control_ifindexes(r), adjacency_losses(r), file_reloads(r));
    // A sinks the file's prefix (it would send the probes back to R by its default).
    ip_in(&a.frr.ns, &["route", "add", "blackhole", "192.0.2.0/24"]);
    std::fs::write(
        r.path("routes.yaml"),
        "ipv4:\n  - prefix: 192.0.2.0/24\n    via: 10.0.1.1\n",
    )
    .unwrap();
    wait_until("the routes-file reload", Duration::from_secs(20), || {
        (file_reloads(r) > n).then_some(()).ok_or_else(logs)
    });
    let r_a = mac(&r.ns, "r-a");
    for d in probe_through(b, a, "192.0.2.1", r, None, "r-b", logs) {
        assert_eq!(d.get("eth.src"), r_a, "the file's route, towards A: {d:?}");
    }
    probe_through(b, a, a.lo, r, Some(labels[0]), "r-b", logs);
    assert_eq!(control_ifindexes(r), ifindexes, "the TAPs are untouched");
    assert_eq!(ospf_full(r), want, "OSPF after the reload\n{}", logs());
    assert_eq!(ldp_operational(r), want, "LDP after the reload\n{}", logs());
    assert!(bgp_established(r, a.ip), "BGP after the reload\n{}", logs());
    assert_eq!(adjacency_losses(r), losses, "{}", logs());
}

/// What this test needs beyond the harness: a capture tool, Python for raw frames, ethtool.
fn missing_tools() -> Option<String> {
    ["tcpdump", "python3", "ethtool"].iter().find_map(|t| {
        let ok = std::process::Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .is_ok_and(|o| o.status.success());
        (!ok).then(|| format!("{t} missing (scripts/install-deps.sh)"))
    })
}

#[test]
fn ospf_and_ldp_through_the_control_interfaces_and_label_switching_in_the_data_path() {
    if let Some(why) = unavailable().or_else(missing_tools) {
        eprintln!("SKIPPED: FRR tests {why}");
        return;
    }
    let (mut a, mut b, mut r, mut router) = topology();
    start_frr(&mut a, &mut b, &mut r);
    // FRR's and the router's logs for a failure message (a closure per call: R changes).
    macro_rules! logs {
        () => {
            &|| all_logs(&[&a.frr, &b.frr, &r])
        };
    }

    let want = vec!["10.255.0.1".to_string(), "10.255.0.3".to_string()];
    let labels = converge(&r, &want, logs!());
    // IS-IS: A's hellos (LLC to AllL2ISs) reach R's isisd through the port and its TAP,
    // R's reach A down the TAP and out of the port.
    let isis = wait_until_or(Duration::from_secs(30), || {
        let up = isis_up(&r);
        (!up.is_empty()).then_some(up).or_else(|| {
            std::thread::sleep(Duration::from_millis(250));
            None
        })
    });
    assert_eq!(
        isis,
        Some(vec!["0102.5500.0001 mr-a".to_string()]),
        "IS-IS R <-> A never Up: {}\n{}",
        r.vtysh(&["show isis neighbor"]),
        (logs!())()
    );

    // The data path: a frame labelled for A's loopback, sent by B, leaves R popped.
    let got = probe_through(&b, &a, a.lo, &r, Some(labels[0]), "r-b", logs!());
    let r_a = mac(&r.ns, "r-a");
    for d in &got {
        assert_eq!(d.get("mpls.label"), "", "popped (PHP): {d:?}");
        assert_eq!(d.get("eth.src"), r_a, "sent by R's port towards A: {d:?}");
        assert_eq!(d.get("ip.src"), b.ip);
    }
    let got = probe_through(&a, &b, b.lo, &r, Some(labels[1]), "r-a", logs!());
    assert!(
        got.iter().all(|d| d.get("mpls.label").is_empty()),
        "{got:?}"
    );

    // BGP: R <-> A over the router's port, A's prefix forwarded by R's data path.
    let ok = wait_until_or(Duration::from_secs(30), || {
        bgp_established(&r, a.ip).then_some(()).or_else(|| {
            std::thread::sleep(Duration::from_millis(250));
            None
        })
    });
    assert!(
        ok.is_some(),
        "BGP R <-> A never Established\n{}",
        (logs!())()
    );
    let probe = ANNOUNCED.replace(".0/24", ".1");
    let got = probe_through(&b, &a, &probe, &r, None, "r-b", logs!());
    for d in &got {
        assert_eq!(d.get("eth.src"), r_a, "routed by R towards A: {d:?}");
        assert_eq!(d.get("ip.ttl"), "63", "one IPv4 hop: {d:?}");
    }

    a_reload_keeps_the_control_plane(&a, &b, &r, &want, &labels, logs!());

    // A flood of punted data (TTL 1 through R) does not take the control traffic's
    // places: the adjacencies stay up through it (dead interval 4 s, flood 6 s).
    flood_keeps_adjacencies(&a, &b, &r, &want, logs!());

    // R's FRR restarts: zebra first (killed: its FPM session drops without a withdrawal,
    // the router holds the routes), then the protocol daemons. Established label
    // switching goes on meanwhile; the control interfaces stay; FRR comes back on them.
    r.stop_zebra(true);
    for d in ["isisd", "bgpd", "ldpd", "ospfd"] {
        r.stop_daemon(d, false);
    }
    probe_through(&b, &a, a.lo, &r, Some(labels[0]), "r-b", logs!());
    start_r(&mut r, a.ip);
    let labels = converge(&r, &want, logs!());
    probe_through(&b, &a, a.lo, &r, Some(labels[0]), "r-b", logs!());
    probe_through(&a, &b, b.lo, &r, Some(labels[1]), "r-a", logs!());

    // The router stops cleanly; its summary shows what the flood did.
    let out = router.stop();
    for l in out.lines().filter(|l| {
        l.starts_with("workers:") || l.starts_with("control interfaces:") || l.starts_with("port ")
    }) {
        eprintln!("router: {l}");
    }
    assert!(out.contains("mbufs not returned to the pool: 0"), "{out}");
    assert!(
        out.contains("mbufs unaccounted for by the workers: 0"),
        "{out}"
    );
    // The flood filled the data queue; no control packet was dropped for a full queue.
    let (data, control) = queue_drops(&out);
    assert!(data > 0, "the flood did not congest the slow path: {out}");
    assert_eq!(
        control, 0,
        "control traffic dropped at the slow path: {out}"
    );
}

/// (all, control) punted packets dropped for a full queue, from the run's summary.
fn queue_drops(summary: &str) -> (u64, u64) {
    let line = summary
        .lines()
        .find(|l| l.starts_with("workers:"))
        .unwrap_or_else(|| panic!("no workers line: {summary}"));
    let after = line.split("slow-path-queue-full ").nth(1).unwrap();
    let mut it = after
        .split(|c: char| !c.is_ascii_digit())
        .filter(|x| !x.is_empty());
    let all = it.next().unwrap().parse().unwrap();
    let control = it.next().unwrap().parse().unwrap();
    (all, control)
}
