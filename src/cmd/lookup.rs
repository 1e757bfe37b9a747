//! `mplsrouter lookup ADDRESS | --label L [--flow SRC,DST,PROTO,SPORT,DPORT]`: what the
//! running table does with such a packet, decided by the data path's own pipeline on the
//! live snapshot (the router runs it; see router::ctlsock::lookup).

use std::fmt::Write;

use anyhow::{bail, Context, Result};
use clap::Args;
use router::ctlsock::proto::{LookupReply, LookupRequest, Reply, Request};

use super::ctl::SocketArgs;
use super::show::render;

#[derive(Args, Debug)]
pub struct LookupArgs {
    #[command(flatten)]
    pub socket: SocketArgs,
    /// IPv4 or IPv6 destination (under --label: the payload's destination).
    pub address: Option<String>,
    /// Send the packet with this top label.
    #[arg(long)]
    pub label: Option<u32>,
    /// The flow the ECMP hash sees: SRC,DST,PROTO,SPORT,DPORT (DST overrides ADDRESS;
    /// both addresses of one family).
    #[arg(long)]
    pub flow: Option<String>,
    /// Receiving port (default: the first).
    #[arg(long)]
    pub in_port: Option<String>,
    /// IPv4 TTL or IPv6 hop limit (and the label's TTL), default 64.
    #[arg(long)]
    pub ttl: Option<u8>,
}

/// The request for `a`.
pub fn request(a: &LookupArgs) -> Result<LookupRequest> {
    let mut r = LookupRequest {
        in_port: a.in_port.clone(),
        dst: a.address.clone(),
        label: a.label,
        ttl: a.ttl,
        ..LookupRequest::default()
    };
    if let Some(f) = &a.flow {
        let p: Vec<&str> = f.split(',').map(str::trim).collect();
        let [src, dst, proto, sport, dport] = p[..] else {
            bail!("--flow wants SRC,DST,PROTO,SPORT,DPORT, got `{f}`");
        };
        r.src = Some(src.into());
        r.dst = Some(dst.into());
        r.proto = Some(
            proto
                .parse()
                .with_context(|| format!("--flow: protocol `{proto}`"))?,
        );
        r.sport = Some(
            sport
                .parse()
                .with_context(|| format!("--flow: port `{sport}`"))?,
        );
        r.dport = Some(
            dport
                .parse()
                .with_context(|| format!("--flow: port `{dport}`"))?,
        );
    }
    if r.dst.is_none() && r.label.is_none() {
        bail!("give an ADDRESS, --label or --flow");
    }
    Ok(r)
}

/// The decision as lines of text (also used by `trace`).
pub fn text(r: &LookupReply) -> String {
    let mut o = format!(
        "table generation {}, received on {}\n",
        r.generation, r.in_port
    );
    if let Some(e) = &r.label_entry {
        o += "label entry: ";
        render::label(&mut o, e);
    }
    if let Some(rt) = &r.route {
        o += "route: ";
        render::route(&mut o, rt);
    }
    let _ = write!(o, "verdict: {}", r.verdict);
    if let Some(reason) = &r.reason {
        let _ = write!(o, " ({reason})");
    }
    o += "\n";
    if let Some(p) = &r.out_port {
        let _ = writeln!(
            o,
            "egress {p}: dst {} src {}",
            r.dst_mac.as_deref().unwrap_or("?"),
            r.src_mac.as_deref().unwrap_or("?")
        );
        if let Some(h) = &r.next_hop {
            let _ = writeln!(o, "next hop: {}", render::hop(h));
        }
        for l in &r.out_labels {
            let _ = writeln!(
                o,
                "  label {} tc {} ttl {}{}",
                l.label,
                l.tc,
                l.ttl,
                if l.bos { " bos" } else { "" }
            );
        }
        if let Some(t) = r.out_ip_ttl {
            let _ = writeln!(o, "  ipv4 ttl {t}");
        }
    }
    o
}

pub fn run(a: LookupArgs) -> Result<i32> {
    let req = Request::Lookup(request(&a)?);
    let Reply::Lookup(r) = a.socket.ask(&req)? else {
        bail!("the router answered a lookup with something else");
    };
    if a.socket.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        print!("{}", text(&r));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(address: Option<&str>, label: Option<u32>, flow: Option<&str>) -> LookupArgs {
        LookupArgs {
            socket: SocketArgs {
                socket: None,
                config: None,
                json: false,
            },
            address: address.map(Into::into),
            label,
            flow: flow.map(Into::into),
            in_port: None,
            ttl: None,
        }
    }

    #[test]
    fn a_flow_fills_every_field_and_bad_ones_are_refused() {
        let r = request(&args(
            None,
            None,
            Some("192.0.2.1, 198.51.100.7,6,40000,443"),
        ))
        .unwrap();
        assert_eq!(r.src.as_deref(), Some("192.0.2.1"));
        assert_eq!(r.dst.as_deref(), Some("198.51.100.7"));
        assert_eq!(
            (r.proto, r.sport, r.dport),
            (Some(6), Some(40000), Some(443))
        );
        let r = request(&args(None, Some(1000), None)).unwrap();
        assert_eq!((r.label, r.dst), (Some(1000), None));
        assert!(request(&args(None, None, None)).is_err());
        assert!(request(&args(None, None, Some("1.2.3.4,5.6.7.8,6,1"))).is_err());
        assert!(request(&args(None, None, Some("1.2.3.4,5.6.7.8,600,1,2"))).is_err());
    }
}
