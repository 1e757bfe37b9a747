//! A router kept running while a test talks to it: its `/metrics` address from stdout,
//! scrapes over plain HTTP/1.0, and a guard that stops it (and any other child) on drop,
//! so a failing assertion leaves no process behind.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::bin;

/// Kills and reaps a child process when dropped.
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

/// One running `mplsrouter run`.
pub struct LiveRouter {
    child: KillOnDrop,
    /// host:port of the metrics endpoint.
    pub metrics: String,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

fn collect(
    r: impl Read + Send + 'static,
    into: Arc<Mutex<String>>,
    lines: Option<mpsc::Sender<String>>,
) {
    std::thread::spawn(move || {
        for l in BufReader::new(r).lines() {
            let Ok(l) = l else { break };
            into.lock().unwrap().push_str(&format!("{l}\n"));
            if let Some(tx) = &lines {
                let _ = tx.send(l);
            }
        }
    });
}

impl LiveRouter {
    /// Starts the router (stopping by itself after `max_secs` at the latest) and waits for
    /// its metrics line.
    pub fn start(config: &Path, max_secs: f64) -> LiveRouter {
        let mut child = Command::new(bin())
            .args(["run", "--config"])
            .arg(config)
            .args(["--duration", &max_secs.to_string(), "--stats-interval", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mplsrouter");
        let (stdout, stderr) = (Arc::default(), Arc::default());
        let (tx, rx) = mpsc::channel();
        collect(child.stdout.take().unwrap(), Arc::clone(&stdout), Some(tx));
        collect(child.stderr.take().unwrap(), Arc::clone(&stderr), None);
        let child = KillOnDrop(Some(child));
        let deadline = Instant::now() + Duration::from_secs(20);
        let metrics = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) => {
                    if let Some(a) = l.strip_prefix("metrics: http://") {
                        break a.trim_end_matches("/metrics").to_string();
                    }
                }
                Err(_) => panic!(
                    "the router printed no metrics address:\n{}\n{}",
                    stdout.lock().unwrap(),
                    stderr.lock().unwrap()
                ),
            }
        };
        LiveRouter {
            child,
            metrics,
            stdout,
            stderr,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The body of `GET /metrics`.
    pub fn scrape(&self) -> String {
        let (code, body) = http_get(&self.metrics, "/metrics");
        assert_eq!(code, 200, "{body}");
        body
    }

    /// Everything the router printed so far (stdout, then stderr).
    pub fn output(&self) -> String {
        format!(
            "{}{}",
            self.stdout.lock().unwrap(),
            self.stderr.lock().unwrap()
        )
    }

    /// Sends SIGTERM (a clean stop: pcap files are flushed) and waits up to `limit`.
    pub fn stop(mut self, limit: Duration) -> (ExitStatus, String) {
        assert!(
            crate::common::signal(self.pid(), "TERM"),
            "kill -TERM failed"
        );
        let start = Instant::now();
        let child = self.child.0.as_mut().unwrap();
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                // Let the reader threads drain the pipes.
                std::thread::sleep(Duration::from_millis(50));
                return (s, self.output());
            }
            assert!(
                start.elapsed() < limit,
                "the router did not stop within {limit:?} of SIGTERM:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `GET path` over HTTP/1.0; returns the status code and the body.
pub fn http_get(hostport: &str, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(hostport)
        .unwrap_or_else(|e| panic!("connect to {hostport}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {hostport}\r\n\r\n").unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP response: {raw}"));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("bad status line: {head}"));
    (code, body.to_string())
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sum of every series of `name` whose labels contain `labels` ("" for any).
pub fn sum(text: &str, name: &str, labels: &str) -> u64 {
    samples(text)
        .into_iter()
        .filter(|(s, _)| s == name || s.starts_with(&format!("{name}{{")))
        .filter(|(s, _)| s.contains(labels))
        .map(|(_, v)| v as u64)
        .sum()
}

/// Every sample line of an exposition as (series, value): `name{labels}` -> value.
pub fn samples(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (series, v) = l.rsplit_once(' ').unwrap_or_else(|| panic!("bad line {l}"));
            let v = match v {
                "+Inf" => f64::INFINITY,
                "-Inf" => f64::NEG_INFINITY,
                v => v.parse().unwrap_or_else(|_| panic!("bad value in {l}")),
            };
            (series.to_string(), v)
        })
        .collect()
}

/// The value of one series (exact `name{labels}` as exposed).
pub fn value(text: &str, series: &str) -> f64 {
    samples(text)
        .into_iter()
        .find(|(s, _)| s == series)
        .unwrap_or_else(|| panic!("no series {series} in:\n{text}"))
        .1
}
