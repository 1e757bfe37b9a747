//! A router process inside a network namespace, its ports on `net_af_packet` over veths:
//! started from a config written here, waited for until its tables are up, stopped with
//! SIGTERM (and reaped) on drop, so a failing test leaves no process behind.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::{bin, TempDir};

/// One router port: config name, veth in the router's namespace, the contents of its
/// `addresses: [...]` list (`10.1.0.1/24, "2001:db8:1::1/64"`), and more keys
/// (`, mtu: 1280`), empty for none.
pub struct Port<'a>(pub &'a str, pub &'a str, pub &'a str, pub &'a str);

/// The running router; its output (startup lines, errors, EAL's log and the stop summary)
/// goes to `<name>.log` in the test's directory.
pub struct NsRouter {
    ns: String,
    child: Option<Child>,
    log: PathBuf,
}

impl NsRouter {
    /// Writes `<name>.yaml` and `<name>-routes.yaml` into `dir`, starts the router in
    /// `ns` (at most 120 s) and waits (at most 20 s) for its first table generation.
    pub fn start(ns: &str, dir: &TempDir, name: &str, ports: &[Port], routes: &str) -> NsRouter {
        let routes_path = dir.path(&format!("{name}-routes.yaml"));
        std::fs::write(&routes_path, routes).unwrap();
        let mut cfg = format!(
            "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256, file_prefix: {ns}-{name}}}\nports:\n"
        );
        for (i, Port(pname, iface, addrs, extra)) in ports.iter().enumerate() {
            cfg += &format!(
                "  - {{name: {pname}, vdev: \"net_af_packet_{name}{i},iface={iface}\", addresses: [{addrs}]{extra}}}\n"
            );
        }
        cfg += &format!(
            "routes: {}\nmetrics_listen: 127.0.0.1:0\nidle: {{backoff: {{}}}}\n",
            routes_path.display()
        );
        let cfg_path = dir.path(&format!("{name}.yaml"));
        std::fs::write(&cfg_path, cfg).unwrap();
        let log = dir.path(&format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .arg(bin())
            .args(["run", "--stats-interval", "0", "--duration", "120"])
            .arg("--config")
            .arg(&cfg_path)
            .stderr(out.try_clone().unwrap())
            .stdout(out)
            .spawn()
            .unwrap();
        let mut r = NsRouter {
            ns: ns.to_owned(),
            child: Some(child),
            log,
        };
        r.wait_for("tables: generation");
        r
    }

    /// What the router has printed so far.
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (at most 20 s) until the router has printed `text`; fails at once, with its
    /// output, if the router exits first (a config it rejects, say).
    pub fn wait_for(&mut self, text: &str) {
        let start = Instant::now();
        while !self.output().contains(text) {
            let exited = self.child.as_mut().map(|c| c.try_wait().ok().flatten());
            assert!(
                !matches!(exited, Some(Some(_))),
                "router exited ({exited:?}) before printing {text:?}:\n{}",
                self.output()
            );
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "router never printed {text:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The non-zero samples of the live `/metrics` whose line contains one of `words`
    /// (`drop`, `slow`, ...): where packets went, for a failure message. Empty when the
    /// router is not running or does not answer within 2 s.
    pub fn metrics_nonzero(&self, words: &[&str]) -> String {
        let out = self.output();
        let Some(url) = out
            .lines()
            .find_map(|l| l.strip_prefix("metrics: "))
            .filter(|_| self.child.is_some())
        else {
            return String::new();
        };
        let got = Command::new("ip")
            .args(["netns", "exec", &self.ns, "curl", "-sf", "--max-time", "2"])
            .arg(url.trim())
            .output();
        let text = match got {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
            Ok(o) => {
                return format!(
                    "(metrics: curl {}: {})",
                    o.status,
                    String::from_utf8_lossy(&o.stderr)
                )
            }
            Err(e) => return format!("(metrics: curl: {e})"),
        };
        text.lines()
            .filter(|l| !l.starts_with('#') && words.iter().any(|w| l.contains(w)))
            .filter(|l| l.rsplit(' ').next().is_some_and(|v| v != "0"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Stops the router (SIGTERM, bounded wait) and returns its output, stop summary
    /// (ports, drops by reason, slow-path counts) included. Idempotent.
    pub fn stop(&mut self) -> String {
        if let Some(mut c) = self.child.take() {
            super::stop(&mut c);
        }
        self.output()
    }
}

impl Drop for NsRouter {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            super::signal(c.id(), "TERM");
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(10) {
                if c.try_wait().ok().flatten().is_some() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
