//! `mplsrouter trace [--count N] [--port P]`: what the next packets did, each with its
//! received headers, the decisions (label entry, route, ECMP member, TTL, rewrite) and
//! the verdict, captured by the workers while the trace is armed.

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
}

fn text(n: usize, p: &TracedPacket) -> String {
    let mut o = format!("packet {n}: lcore {}\n", p.lcore);
    for h in &p.headers {
        let _ = writeln!(o, "  {h}");
    }
    for l in decision(&p.decision).lines() {
        let _ = writeln!(o, "  {l}");
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
