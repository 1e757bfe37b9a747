//! `mplsrouter trace [--count N] [--port P] [--filter EXPR]`: what the next packets did, each with its
//! received headers, the decisions (label entry, route, ECMP member, TTL, rewrite) and
//! the verdict (and, for a punted packet, what the slow path did with it), captured by the
//! workers while the trace is armed.

use std::fmt::Write;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;
use router::ctlsock::proto::{Reply, Request, TracedPacket};

use super::ctl::SocketArgs;
use super::lookup::text as decision;

#[derive(Args, Debug)]
pub struct TraceArgs {
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Packets to trace (1..=1000).
    #[arg(long, default_value_t = 10)]
    pub count: usize,
    /// Only packets received on this port.
    #[arg(long)]
    pub port: Option<String>,
    /// Seconds to wait for them (at most 60).
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Only packets that pass EXPR: `TERM [and TERM]...`, a TERM being `[not]` one of
    /// `dst|src|host|net ADDR[/N]` (IPv4 or IPv6), `label L`,
    /// `proto udp|tcp|icmp|icmp6|N`, `udp`, `tcp`, `icmp`, `icmp6`, `port|sport|dport N`,
    /// `mpls`, `ip`, `ip6`, `arp`. IPv4 and IPv6 are matched plain or under labels; IPv6
    /// protocol and ports are read past extension headers.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
}

fn text(n: usize, p: &TracedPacket) -> String {
    let mut o = format!("packet {n}: lcore {}\n", p.lcore);
    for h in &p.headers {
        let _ = writeln!(o, "  {h}");
    }
    for l in decision(&p.decision).lines() {
        let _ = writeln!(o, "  {l}");
    }
    if let Some(s) = &p.slow_path {
        let detail = s
            .detail
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        let _ = writeln!(o, "  slow path: {}{detail}", s.action);
    }
    o
}

pub fn run(a: TraceArgs) -> Result<i32> {
    if !(a.timeout > 0.0 && a.timeout <= 60.0) {
        bail!("--timeout must be in (0, 60] seconds");
    }
    let req = Request::Trace {
        count: Some(a.count),
        port: a.port.clone(),
        timeout_ms: Some((a.timeout * 1000.0) as u64),
        filter: a.filter.clone(),
    };
    let wait = Duration::from_secs_f64(a.timeout + 10.0);
    let Reply::Trace { packets } = a.socket.ask_within(&req, wait)? else {
        bail!("the router answered a trace with something else");
    };
    if a.socket.json {
        println!("{}", serde_json::to_string_pretty(&packets)?);
        return Ok(0);
    }
    if packets.is_empty() {
        println!("no packet within {} s", a.timeout);
    }
    for (i, p) in packets.iter().enumerate() {
        print!("{}", text(i + 1, p));
    }
    Ok(0)
}
