//! A router on the host kept running while a test scrapes it: the kit's
//! [`crate::common::Router`] (which starts and stops it) plus its `/metrics` endpoint,
//! scraped over plain HTTP/1.0, and the exposition parsed by series.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use crate::common::{Launch, Router};

#[allow(unused_imports)]
pub use crate::common::KillOnDrop;

/// One running `mplsrouter run` on the host, its metrics endpoint known: the test kit's
/// [`Router`] (which stops it, also on drop) with scrapes.
pub struct LiveRouter {
    router: Router,
    /// host:port of the metrics endpoint.
    pub metrics: String,
}

impl LiveRouter {
    /// Starts the router (stopping by itself after `max_secs` at the latest) and waits for
    /// its metrics line.
    pub fn start(config: &Path, max_secs: f64) -> LiveRouter {
        let launch =
            Launch::new(config, max_secs).ready(Some("metrics: http://"), Duration::from_secs(20));
        let router = Router::start(&launch);
        let metrics = router.metrics_addr();
        LiveRouter { router, metrics }
    }

    pub fn pid(&self) -> u32 {
        self.router.pid()
    }

    /// The body of `GET /metrics`.
    pub fn scrape(&self) -> String {
        let (code, body) = http_get(&self.metrics, "/metrics");
        assert_eq!(code, 200, "{body}");
        body
    }

    /// Scrapes (every 20 ms) until `ok` holds and returns that scrape; past `limit` the
    /// test fails saying `what`, with the last scrape and the router's output.
    pub fn scrape_until(&self, what: &str, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let s = self.scrape();
            if ok(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "{what} within {limit:?}:\n{s}\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything the router printed so far (stdout, then stderr).
    pub fn output(&self) -> String {
        self.router.output()
    }

    /// Sends SIGTERM (a clean stop: pcap files are flushed) and waits up to `limit`.
    pub fn stop(mut self, limit: Duration) -> (ExitStatus, String) {
        self.router.stop_within(limit)
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
