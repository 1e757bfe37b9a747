//! The control socket from tests: `mplsrouter ARGS --json --socket SOCK` parsed, hex as
//! the replies spell frames, waiting for the socket, and a startup config whose `in` port
//! replays `in.pcap` forever (for `trace` and `capture`, which wait for live packets).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::{bin, TempDir};

/// `mplsrouter ARGS` (no socket added).
pub fn cli(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// `mplsrouter ARGS --json --socket SOCK`, which must succeed, parsed.
pub fn json<T: serde::de::DeserializeOwned>(sock: &Path, args: &[&str]) -> T {
    let mut a = args.to_vec();
    a.extend(["--json", "--socket", sock.to_str().unwrap()]);
    let out = cli(&a);
    assert!(
        out.status.success(),
        "{a:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{a:?}: {e}\n{}", String::from_utf8_lossy(&out.stdout)))
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Waits (at most 20 s) for `path` (the control socket) to appear.
pub fn wait_for(path: &Path) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Two ports: `in` replays `dir/in.pcap` forever, `out` is a `net_null` sink; each with
/// the addresses given (YAML list items); `control_socket: ctl.sock`.
pub fn replay_config(dir: &TempDir, tag: &str, in_addrs: &str, out_addrs: &str) -> PathBuf {
    let pid = std::process::id();
    let cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: mplsr-{tag}-{pid}}}\n\
         ports:\n\
         \x20 - {{name: in, vdev: \"net_pcap_{tag}{pid},rx_pcap={d}/in.pcap,infinite_rx=1\", mac: \"02:00:00:00:00:01\", addresses: [{in_addrs}]}}\n\
         \x20 - {{name: out, vdev: \"net_null_{tag}{pid},no-rx=1\", mac: \"02:00:00:00:01:01\", addresses: [{out_addrs}]}}\n\
         routes: routes.yaml\n\
         metrics_listen: 127.0.0.1:0\n\
         control_socket: ctl.sock\n\
         idle: {{backoff: {{}}}}\n",
        d = dir.0.display()
    );
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}
