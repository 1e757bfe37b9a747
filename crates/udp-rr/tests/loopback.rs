//! The built `udp_rr` binary over loopback in both families: server and client complete
//! transactions and write their JSON, and flood reaches sink. The kernel's loopback is
//! the far end; nothing here asserts a latency. IPv6 is skipped (with a message) where
//! `::1` cannot be bound.
#![forbid(unsafe_code)]

use std::net::UdpSocket;
use std::process::{Child, Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_udp_rr");

/// A free UDP port on `host` (`127.0.0.1` or `::1`), or `None` if it cannot be bound.
fn free_port(host: &str) -> Option<u16> {
    let sock = UdpSocket::bind(format!("{}:0", bracket(host))).ok()?;
    Some(sock.local_addr().ok()?.port())
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN).args(args).spawn().expect("udp_rr runs")
}

fn run(args: &[&str]) -> Output {
    let o = Command::new(BIN).args(args).output().expect("udp_rr runs");
    assert!(o.status.success(), "udp_rr {args:?}: {o:?}");
    o
}

/// Server and client over `host`: at least one transaction, and the JSON names it.
fn round_trips(host: &str) {
    let Some(port) = free_port(host) else {
        eprintln!("SKIP: cannot bind {host}");
        return;
    };
    let at = format!("{}:{port}", bracket(host));
    let mut server = spawn(&["server", "--bind", &at, "--duration", "5"]);
    let dir = std::env::temp_dir().join(format!("udp_rr_{}_{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("row.json");
    let out = run(&[
        "client",
        "--target",
        &at,
        "--duration",
        "0.5",
        "--warmup",
        "0.2",
        "--label",
        "lo",
        "--json",
        json.to_str().unwrap(),
    ]);
    server.kill().ok();
    server.wait().ok();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let j = std::fs::read_to_string(&json).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let n: u64 = j
        .split("\"transactions\": ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no transactions in {j}"));
    assert!(n > 0, "{text}\n{j}");
    assert!(text.contains("udp_rr lo:"), "{text}");
}

#[test]
fn ipv4_round_trips() {
    round_trips("127.0.0.1");
}

#[test]
fn ipv6_round_trips() {
    round_trips("::1");
}

#[test]
fn ipv6_flood_reaches_the_sink() {
    let Some(port) = free_port("::1") else {
        eprintln!("SKIP: cannot bind ::1");
        return;
    };
    let at = format!("[::1]:{port}");
    let sink = Command::new(BIN)
        .args(["sink", "--bind", &at, "--duration", "1.5"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let f = run(&[
        "flood",
        "--target",
        &at,
        "--rate",
        "2000",
        "--duration",
        "0.5",
    ]);
    let s = sink.wait_with_output().unwrap();
    let (f, s) = (
        String::from_utf8_lossy(&f.stdout),
        String::from_utf8_lossy(&s.stdout),
    );
    let got: u64 = s
        .split_whitespace()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(got > 0, "flood: {f}\nsink: {s}");
}

#[test]
fn a_bind_of_the_other_family_is_refused() {
    let o = Command::new(BIN)
        .args([
            "client",
            "--target",
            "[::1]:9",
            "--bind",
            "127.0.0.1:0",
            "--duration",
            "0.1",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("same address family"));
}
