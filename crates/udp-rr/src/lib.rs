//! The pure half of `udp_rr`: the statistics of one request/response run (nearest-rank
//! percentiles, rates) and their text and JSON forms, the option parser, and the
//! socket-address rules (either family: `10.9.0.2:7777` or `[2001:db8:9::2]:7777`).
//!
//! Exists so the numbers `scripts/bench/latency.sh` records can be unit-tested without
//! sockets. It must never do I/O or read clocks: `main.rs` measures, this only counts.

#![forbid(unsafe_code)]

pub mod args;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `ADDR:PORT` of either family. An IPv6 address needs brackets (`[2001:db8::2]:7`); a
/// bare one is refused with that hint rather than misread.
pub fn parse_sock_addr(s: &str) -> Result<SocketAddr, String> {
    s.parse().map_err(|_| {
        if !s.starts_with('[') && s.matches(':').count() > 1 {
            format!("{s:?}: an IPv6 address takes brackets, as in [2001:db8::2]:7777")
        } else {
            format!("{s:?} is not ADDR:PORT")
        }
    })
}

/// The wildcard address of `peer`'s family (port 0): what a socket that talks to `peer`
/// binds when no `--bind` is given. An IPv4 wildcard cannot reach an IPv6 peer.
pub fn wildcard_for(peer: &SocketAddr) -> SocketAddr {
    let ip = match peer.ip() {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    };
    SocketAddr::new(ip, 0)
}

/// A `--bind` address that can reach `peer`: the same family, or an error naming both.
pub fn check_family(bind: &SocketAddr, peer: &SocketAddr) -> Result<(), String> {
    if bind.is_ipv4() == peer.is_ipv4() {
        Ok(())
    } else {
        Err(format!(
            "--bind {bind} and --target {peer} are not of the same address family"
        ))
    }
}

/// Percentile `p` (in thousandths of a percent: 50_000 is p50, 99_900 is p99.9) of
/// `sorted` by the nearest-rank method: the smallest sample such that at least p% of
/// the samples are at or below it. `None` for no samples or a `p` outside (0, 100%].
pub fn percentile(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() || p == 0 || p > 100_000 {
        return None;
    }
    let n = sorted.len() as u64;
    let rank = (u64::from(p) * n).div_ceil(100_000).max(1);
    sorted.get(rank as usize - 1).copied()
}

/// What one client run measured. RTTs are in nanoseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub label: String,
    /// Completed transactions in the measured interval (after warm-up).
    pub transactions: u64,
    /// Requests whose response did not come within the timeout (measured interval).
    pub lost: u64,
    pub seconds: f64,
    pub min_ns: u64,
    pub mean_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl Summary {
    /// Sorts `rtts_ns` in place and summarises them; `seconds` is the measured interval.
    pub fn new(label: &str, rtts_ns: &mut [u64], lost: u64, seconds: f64) -> Summary {
        rtts_ns.sort_unstable();
        let pct = |p| percentile(rtts_ns, p).unwrap_or(0);
        let sum: u128 = rtts_ns.iter().map(|&v| u128::from(v)).sum();
        let n = rtts_ns.len() as u64;
        Summary {
            label: label.to_string(),
            transactions: n,
            lost,
            seconds,
            min_ns: rtts_ns.first().copied().unwrap_or(0),
            mean_ns: if n == 0 {
                0
            } else {
                (sum / u128::from(n)) as u64
            },
            p50_ns: pct(50_000),
            p99_ns: pct(99_000),
            p999_ns: pct(99_900),
            max_ns: rtts_ns.last().copied().unwrap_or(0),
        }
    }

    /// Completed transactions per second (netperf's UDP_RR figure).
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.transactions as f64 / self.seconds
        } else {
            0.0
        }
    }

    pub fn text(&self) -> String {
        format!(
            "udp_rr {}: {} transactions in {:.2} s = {:.0} trans/s; rtt us min {} p50 {} p99 {} p99.9 {} max {} mean {}; lost {}",
            self.label,
            self.transactions,
            self.seconds,
            self.rate(),
            us(self.min_ns),
            us(self.p50_ns),
            us(self.p99_ns),
            us(self.p999_ns),
            us(self.max_ns),
            us(self.mean_ns),
            self.lost
        )
    }

    /// One JSON object (no serde: the label is the only string and is escaped here).
    pub fn json(&self) -> String {
        format!(
            "{{\"label\": \"{}\", \"transactions\": {}, \"lost\": {}, \"seconds\": {:.3}, \"trans_per_s\": {:.1}, \"rtt_us\": {{\"min\": {}, \"p50\": {}, \"p99\": {}, \"p999\": {}, \"max\": {}, \"mean\": {}}}}}",
            escape(&self.label),
            self.transactions,
            self.lost,
            self.seconds,
            self.rate(),
            us(self.min_ns),
            us(self.p50_ns),
            us(self.p99_ns),
            us(self.p999_ns),
            us(self.max_ns),
            us(self.mean_ns)
        )
    }
}

/// Nanoseconds as microseconds with one decimal.
fn us(ns: u64) -> String {
    format!("{}.{}", ns / 1000, (ns % 1000) / 100)
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(percentile(&v, 50_000), Some(5));
        assert_eq!(percentile(&v, 90_000), Some(9));
        assert_eq!(percentile(&v, 91_000), Some(10));
        assert_eq!(percentile(&v, 100_000), Some(10));
        assert_eq!(percentile(&v, 1), Some(1));
        // 1000 samples: p99.9 is the 999th, p99 the 990th.
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(percentile(&v, 99_900), Some(999));
        assert_eq!(percentile(&v, 99_000), Some(990));
        // Fewer samples than 1/(1-p): the tail percentile is the maximum.
        let v = [3, 7, 100];
        assert_eq!(percentile(&v, 99_900), Some(100));
        assert_eq!(percentile(&v, 50_000), Some(7));
        assert_eq!(percentile(&[42], 50_000), Some(42));
    }

    #[test]
    fn percentile_refuses_nothing_to_rank() {
        assert_eq!(percentile(&[], 50_000), None);
        assert_eq!(percentile(&[1, 2], 0), None);
        assert_eq!(percentile(&[1, 2], 100_001), None);
    }

    #[test]
    fn summary_sorts_and_rates() {
        let mut v: Vec<u64> = (1..=2000).rev().map(|i| i * 1000).collect();
        let s = Summary::new("x", &mut v, 3, 4.0);
        assert_eq!(s.transactions, 2000);
        assert_eq!(s.rate(), 500.0);
        assert_eq!((s.min_ns, s.max_ns), (1000, 2_000_000));
        assert_eq!(s.p50_ns, 1_000_000);
        assert_eq!(s.p99_ns, 1_980_000);
        assert_eq!(s.p999_ns, 1_998_000);
        assert_eq!(s.mean_ns, 1_000_500);
        assert!(s.text().contains("500 trans/s"), "{}", s.text());
        assert!(s.text().contains("p99.9 1998.0"), "{}", s.text());
    }

    #[test]
    fn json_is_one_object_with_microseconds() {
        let mut v = vec![12_345, 20_000];
        let s = Summary::new("a\"b", &mut v, 0, 1.0);
        let j = s.json();
        assert!(j.starts_with("{\"label\": \"a\\\"b\""), "{j}");
        assert!(j.contains("\"trans_per_s\": 2.0"), "{j}");
        assert!(j.contains("\"p50\": 12.3"), "{j}");
        assert!(j.contains("\"max\": 20.0"), "{j}");
        assert_eq!(j.matches('{').count(), j.matches('}').count());
    }

    #[test]
    fn socket_addresses_of_both_families() {
        let v4 = parse_sock_addr("10.9.0.2:7777").unwrap();
        assert_eq!(v4, SocketAddr::from(([10, 9, 0, 2], 7777)));
        let v6 = parse_sock_addr("[2001:db8:9::2]:7777").unwrap();
        assert_eq!(v6.ip(), "2001:db8:9::2".parse::<IpAddr>().unwrap());
        assert_eq!(v6.port(), 7777);
        assert!(parse_sock_addr("[::]:0").unwrap().ip().is_unspecified());
        let e = parse_sock_addr("2001:db8:9::2:7777").unwrap_err();
        assert!(e.contains("brackets"), "{e}");
        let e = parse_sock_addr("10.9.0.2").unwrap_err();
        assert!(e.contains("not ADDR:PORT"), "{e}");
        assert!(parse_sock_addr("[10.9.0.2]:7").is_err());
    }

    #[test]
    fn wildcard_follows_the_peer_family() {
        let v4 = parse_sock_addr("10.9.0.2:7777").unwrap();
        let v6 = parse_sock_addr("[2001:db8:9::2]:7777").unwrap();
        assert_eq!(wildcard_for(&v4).to_string(), "0.0.0.0:0");
        assert_eq!(wildcard_for(&v6).to_string(), "[::]:0");
        assert!(check_family(&wildcard_for(&v6), &v6).is_ok());
        let e = check_family(&wildcard_for(&v4), &v6).unwrap_err();
        assert!(e.contains("same address family"), "{e}");
    }

    #[test]
    fn empty_run_reports_zeroes() {
        let s = Summary::new("e", &mut [], 5, 2.0);
        assert_eq!((s.transactions, s.lost, s.p999_ns), (0, 5, 0));
        assert_eq!(s.rate(), 0.0);
    }
}
