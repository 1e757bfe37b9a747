//! A real Prometheus server scrapes a running router: the forwarded-packet count it
//! stores, read back through its HTTP query API, equals the frames in the output pcap.
//!
//! Needs /usr/bin/prometheus (Debian package `prometheus`, scripts/install-deps.sh).
//! Takes about 8 s: Prometheus hands its first targets to the scraper ~5 s after start.
#![forbid(unsafe_code)]

mod common;
mod live;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::TempDir;
use live::{free_port, http_get, KillOnDrop, LiveRouter};
use traffic::{read_pcap, write_pcap, FrameSpec};

const FRAMES: usize = 500;

const ROUTES: &str = "
neighbors:
  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}
ipv4:
  - {prefix: 198.51.100.0/24, via: 10.0.1.2}
";

/// A Prometheus server on loopback with its data in `dir`; killed on drop.
struct Prometheus {
    _child: KillOnDrop,
    addr: String,
}

impl Prometheus {
    fn start(dir: &TempDir, target: &str) -> Prometheus {
        let cfg = format!(
            "global: {{scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}}\n\
             scrape_configs:\n\
             \x20 - job_name: mplsrouter\n\
             \x20   static_configs: [{{targets: [\"{target}\"]}}]\n"
        );
        std::fs::write(dir.path("prom.yml"), cfg).unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let log = std::fs::File::create(dir.path("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--web.listen-address={addr}"))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path("data").display()
            ))
            .arg(format!("--config.file={}", dir.path("prom.yml").display()))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect(
                "prometheus (Debian package prometheus) must be installed: scripts/install-deps.sh",
            );
        let mut p = Prometheus {
            _child: KillOnDrop(Some(child)),
            addr,
        };
        p.wait_ready(dir);
        p
    }

    fn wait_ready(&mut self, dir: &TempDir) {
        let deadline = Instant::now() + Duration::from_secs(15);
        let log = || std::fs::read_to_string(dir.path("prometheus.log")).unwrap_or_default();
        loop {
            if std::net::TcpStream::connect(&self.addr).is_ok()
                && http_get(&self.addr, "/-/ready").0 == 200
            {
                return;
            }
            let exited = self._child.0.as_mut().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none(),
                "prometheus exited ({exited:?}):\n{}",
                log()
            );
            assert!(
                Instant::now() < deadline,
                "prometheus not ready in 15 s:\n{}",
                log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The single value of an instant query, or None while the result is empty.
    fn query(&self, q: &str) -> Option<f64> {
        let enc: String = q
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => {
                    (b as char).to_string()
                }
                b => format!("%{b:02X}"),
            })
            .collect();
        let (code, body) = http_get(&self.addr, &format!("/api/v1/query?query={enc}"));
        assert_eq!(code, 200, "query {q}: {body}");
        assert!(body.contains("\"status\":\"success\""), "query {q}: {body}");
        // {"status":"success","data":{"resultType":"vector","result":[{"metric":{..},"value":[TS,"V"]}]}}
        if body.contains("\"result\":[]") {
            return None;
        }
        assert_eq!(
            body.matches("\"value\":[").count(),
            1,
            "one series expected for {q}: {body}"
        );
        let v = body.split("\"value\":[").nth(1).unwrap();
        let v = v
            .split('"')
            .nth(1)
            .unwrap_or_else(|| panic!("no value in {body}"));
        Some(
            v.parse()
                .unwrap_or_else(|_| panic!("bad value {v:?} in {body}")),
        )
    }
}

fn frame(i: usize) -> Vec<u8> {
    FrameSpec {
        dst_mac: [2, 0, 0, 0, 0, 1],
        src_mac: [2, 0, 0, 0, 0, 2],
        dst_ip: [198, 51, 100, (i % 250) as u8 + 1],
        src_port: 1000 + i as u16,
        ..FrameSpec::default()
    }
    .build()
}

#[test]
fn prometheus_scrapes_the_forwarded_count_of_the_output_pcap() {
    let started = Instant::now();
    let dir = TempDir::new("prometheus");
    std::fs::write(dir.path("routes.yaml"), ROUTES).unwrap();
    let frames: Vec<Vec<u8>> = (0..FRAMES).map(frame).collect();
    write_pcap(&dir.path("in.pcap"), &frames).unwrap();
    let cfg = common::pcap_config(&dir, "");

    // The pcap is played once; the router then idles until SIGTERM (25 s at most).
    let router = LiveRouter::start(&cfg, 25.0);
    let prom = Prometheus::start(&dir, &router.metrics);

    // Wait for two scrapes of the router, so the value read is a settled one.
    let deadline = Instant::now() + Duration::from_secs(20);
    let scrapes = "count_over_time(up{job=\"mplsrouter\"}[1m])";
    while prom.query(scrapes).unwrap_or(0.0) < 2.0 {
        assert!(
            Instant::now() < deadline,
            "Prometheus did not scrape the router twice in 20 s; its log:\n{}",
            std::fs::read_to_string(dir.path("prometheus.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        prom.query("min_over_time(up{job=\"mplsrouter\"}[1m])"),
        Some(1.0),
        "every scrape succeeded"
    );
    let forwarded = prom
        .query("sum(mplsrouter_worker_forwarded_packets_total)")
        .expect("the forwarded counter is stored");
    let rx = prom
        .query("sum(mplsrouter_worker_rx_packets_total)")
        .unwrap();
    let port_tx = prom
        .query("mplsrouter_port_tx_packets_total{port=\"out\"}")
        .unwrap();
    let drops = prom.query("sum(mplsrouter_drops_total)").unwrap();
    // A scrape taken now by the test itself agrees with what Prometheus stored.
    let direct = live::value(
        &router.scrape(),
        "mplsrouter_worker_forwarded_packets_total{worker=\"1\"}",
    );

    let (status, out) = router.stop(Duration::from_secs(15));
    assert!(status.success(), "router failed:\n{out}");
    let written = read_pcap(&dir.path("out.pcap")).unwrap().len();

    assert_eq!(written, FRAMES, "every frame is forwarded:\n{out}");
    assert_eq!(
        forwarded, written as f64,
        "Prometheus' sum vs the output pcap"
    );
    assert_eq!(
        port_tx, written as f64,
        "the port's ethdev counter vs the output pcap"
    );
    assert_eq!(rx, FRAMES as f64);
    assert_eq!(drops, 0.0);
    assert_eq!(direct, forwarded);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
