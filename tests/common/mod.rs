//! Running the real `mplsrouter` binary in tests: temporary directory, unique EAL file
//! prefix, bounded run time, no process left behind.
#![allow(dead_code)]

pub mod ctl;
pub mod frames6;
pub mod oracles;
pub mod router;
#[allow(unused_imports)]
pub use oracles::{arp_frame, checksum, fill_ipv4_checksum, into_echo_request, promtool_check};
#[allow(unused_imports)]
pub use router::{Launch, Router};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test: `MPLSROUTER_BIN` (scripts/test.sh points it at the release
/// build) or the one cargo built for this test run.
pub fn bin() -> PathBuf {
    std::env::var_os("MPLSROUTER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mplsrouter")))
}

/// A fresh directory for one test, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!(
            "mplsrouter-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("KEEP_TEST_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The standard two-port startup config on pcap vdevs: `in` replays `in.pcap` once and
/// writes what it sends to `in-out.pcap`; `out` writes to `out.pcap`.
pub fn pcap_config(dir: &TempDir, extra: &str) -> PathBuf {
    // One prefix per router: tests of one binary run in parallel, and a router removes
    // its runtime directory when it exits.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let prefix = format!("mplsr-test-{}-{k}", std::process::id());
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {prefix}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_pcap_in{n},rx_pcap={d}/in.pcap,tx_pcap={d}/in-out.pcap\", mac: \"02:00:00:00:00:01\", addresses: [10.0.0.1/24]}}\n\
         \x20 - {{name: out, vdev: \"net_pcap_out{n},tx_pcap={d}/out.pcap\", mac: \"02:00:00:00:01:01\", addresses: [10.0.1.1/24]}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n{extra}",
        n = std::process::id(),
        d = dir.0.display()
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

/// Writes `in.pcap` in `dir`: 64 UDP frames to port `in`'s MAC (02:00:00:00:00:01),
/// source ports 1000-1063 (64 flows), for a router to replay.
pub fn flows_pcap(dir: &TempDir) {
    let frames: Vec<Vec<u8>> = (0..64u16)
        .map(|i| {
            traffic::FrameSpec {
                dst_mac: [2, 0, 0, 0, 0, 1],
                src_port: 1000 + i,
                ..Default::default()
            }
            .build()
        })
        .collect();
    traffic::write_pcap(&dir.path("in.pcap"), &frames).unwrap();
}

/// Runs `mplsrouter run --config CFG --duration SECS` to completion (killed after a
/// generous bound) and returns its output.
pub fn run_for(config: &Path, secs: f64) -> Output {
    let mut child = Command::new(bin())
        .args(["run", "--config"])
        .arg(config)
        .args(["--duration", &secs.to_string(), "--stats-interval", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mplsrouter");
    wait_bounded(&mut child, Duration::from_secs_f64(secs + 30.0));
    child.wait_with_output().unwrap()
}

/// Waits for `child`, killing it when it outlives `limit` (so no test leaves it behind).
pub fn wait_bounded(child: &mut Child, limit: Duration) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("mplsrouter did not stop within {limit:?}");
}

/// The text of the full view (`shared/data/ipv4-fullview-2023.txt.gz`, found in or above
/// the package), or `None`, saying so, when it is absent.
pub fn full_view_text() -> Option<String> {
    use std::io::Read;
    const FILE: &str = "shared/data/ipv4-fullview-2023.txt.gz";
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(p) = manifest
        .ancestors()
        .map(|a| a.join(FILE))
        .find(|p| p.exists())
    else {
        eprintln!("SKIP: {FILE} not found above {}", manifest.display());
        return None;
    };
    let mut s = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap())
        .read_to_string(&mut s)
        .unwrap();
    Some(s)
}

/// One decoded frame: tshark fields by name.
#[derive(Debug, Clone)]
pub struct Decoded(pub std::collections::HashMap<String, String>);

impl Decoded {
    pub fn get(&self, f: &str) -> &str {
        self.0.get(f).map(String::as_str).unwrap_or("")
    }
    pub fn list(&self, f: &str) -> Vec<String> {
        let v = self.get(f);
        if v.is_empty() {
            Vec::new()
        } else {
            v.split(',').map(str::to_owned).collect()
        }
    }
}

/// Decodes every frame of a pcap with tshark (an independent dissector), checksum
/// validation on.
pub fn tshark(pcap: &Path, fields: &[&str]) -> Vec<Decoded> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(pcap).args([
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "icmp.favor_icmp_mpls:TRUE",
        "-T",
        "fields",
        "-E",
        "separator=;",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
    ]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd
        .output()
        .expect("tshark must be installed (scripts/install-deps.sh)");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            Decoded(
                fields
                    .iter()
                    .zip(l.split(';'))
                    .map(|(f, v)| (f.to_string(), v.to_string()))
                    .collect(),
            )
        })
        .collect()
}

/// Runs a command, panicking with its stderr when it fails; returns its stdout.
pub fn sh(args: &[&str]) -> String {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Kills (by PID) and reaps a child process when dropped: a helper process a test
/// started (a server, a capture) never outlives a failed assertion.
pub struct KillOnDrop(pub Option<Child>);

impl KillOnDrop {
    pub fn id(&self) -> u32 {
        self.0.as_ref().expect("child running").id()
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `ip -n NS ARGS...`, panicking with its stderr when it fails; returns its stdout.
pub fn ip_in(ns: &str, args: &[&str]) -> String {
    let mut a = vec!["ip", "-n", ns];
    a.extend_from_slice(args);
    sh(&a)
}

/// Sets sysctl `knobs` (`name=value`) in namespace `ns`, panicking when one fails.
pub fn sysctl(ns: &str, knobs: &[&str]) {
    let mut a = vec!["ip", "netns", "exec", ns, "sysctl", "-qw"];
    a.extend_from_slice(knobs);
    sh(&a);
}

/// Host namespace `ns`: `addr` (with its length) on `iface` and a default route via `gw`.
pub fn host_addr(ns: &str, iface: &str, addr: &str, gw: &str) {
    ip_in(ns, &["addr", "add", addr, "dev", iface]);
    ip_in(ns, &["route", "add", "default", "via", gw]);
}

/// The MAC address of Ethernet interface `iface` in `ns`.
pub fn mac_of(ns: &str, iface: &str) -> String {
    let out = ip_in(ns, &["-o", "link", "show", iface]);
    let at = out.find("link/ether ").expect("an Ethernet interface") + "link/ether ".len();
    out[at..at + 17].to_string()
}

/// Whether the tests run as root (network namespaces need it; CI runs as root).
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n")
        .unwrap_or(false)
}

/// Sends `sig` (`TERM`, `HUP`, ...) to `pid` with the `kill` command (the tests forbid
/// unsafe code, so no FFI); false when `kill` failed (the process is already gone).
pub fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success())
}

/// The network namespaces of one test, `<prefix>-<name>`, removed on drop (their veths
/// go with them). The prefix holds the process id, so tests running at once never share
/// a namespace, and one left by a killed run is replaced.
pub struct Netns {
    prefix: String,
    names: Vec<String>,
}

impl Netns {
    /// Namespaces named `<tag><pid % 100000>-<name>` (short: veth names are derived).
    pub fn new(tag: &str) -> Netns {
        Netns {
            prefix: format!("{tag}{}", std::process::id() % 100000),
            names: Vec::new(),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Creates `<prefix>-<name>` (deleting a stale one first) with its loopback up.
    pub fn add(&mut self, name: &str) -> String {
        let name = format!("{}-{name}", self.prefix);
        let _ = Command::new("ip").args(["netns", "del", &name]).output();
        sh(&["ip", "netns", "add", &name]);
        ip_in(&name, &["link", "set", "lo", "up"]);
        self.names.push(name.clone());
        name
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

/// Stops a child the way [`Router::stop`] does, for one started without it: SIGTERM by
/// PID (a clean stop: the summary is printed, pcap files are flushed), then a bounded
/// wait (SIGKILL by PID, and the test fails, past 20 s); the exit status is not judged.
pub fn stop(child: &mut Child) {
    let pid = child.id();
    signal(pid, "TERM");
    let limit = router::STOP_LIMIT;
    if router::reap_within(child, pid, limit).is_none() {
        panic!("mplsrouter did not stop within {limit:?}");
    }
}

/// `ping EXTRA... DST` run in namespace `ns`.
pub fn ping(ns: &str, dst: &str, extra: &[&str]) -> Output {
    Command::new("ip")
        .args(["netns", "exec", ns, "ping"])
        .args(extra)
        .arg(dst)
        .output()
        .unwrap()
}

/// The `N packets transmitted, ... packet loss` line of a ping's output.
pub fn loss_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.contains("packet loss"))
        .unwrap_or("no ping summary")
        .to_string()
}

/// How [`veth`] sets up each end besides bringing it up with checksum offload off (so
/// af_packet sees complete checksums rather than partial ones).
#[derive(Clone, Copy, Default)]
pub struct VethOpts<'a> {
    /// MTU of both ends.
    pub mtu: Option<u16>,
    /// No IPv6 on either end (no router solicitations or MLD into the router).
    pub no_ipv6: bool,
    /// MAC addresses of the `a` and `b` ends.
    pub macs: Option<(&'a str, &'a str)>,
}

/// A veth pair `a`@`ns_a` <-> `b`@`ns_b`, both ends up: the test kit's one way to wire
/// namespaces.
pub fn veth(ns_a: &str, a: &str, ns_b: &str, b: &str, o: VethOpts) {
    sh(&[
        "ip", "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b,
    ]);
    for (k, (ns, i)) in [(ns_a, a), (ns_b, b)].into_iter().enumerate() {
        if o.no_ipv6 {
            let knob = format!("net.ipv6.conf.{i}.disable_ipv6=1");
            sysctl(ns, &[&knob]);
        }
        if let Some(mtu) = o.mtu {
            ip_in(ns, &["link", "set", i, "mtu", &mtu.to_string()]);
        }
        if let Some(m) = o.macs {
            let mac = if k == 0 { m.0 } else { m.1 };
            ip_in(ns, &["link", "set", i, "address", mac]);
        }
        ip_in(ns, &["link", "set", i, "up"]);
        sh(&[
            "ip", "netns", "exec", ns, "ethtool", "-K", i, "tx", "off", "rx", "off",
        ]);
    }
}
