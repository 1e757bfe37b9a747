//! `mplsrouter show ...`: what a running router holds, read over its control socket, as
//! a table (or `--json`), like VPP's `show ip fib` / `show runtime`.

pub mod render;

use anyhow::{bail, Result};
use clap::{Args, Subcommand, ValueEnum};
use router::ctlsock::proto::{AddrFamily, Reply, Request, Source};

use super::ctl::SocketArgs;

#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    pub socket: SocketArgs,
    #[command(subcommand)]
    pub what: What,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum SourceArg {
    Yaml,
    Fpm,
    Arp,
}

impl From<SourceArg> for Source {
    fn from(s: SourceArg) -> Source {
        match s {
            SourceArg::Yaml => Source::Yaml,
            SourceArg::Fpm => Source::Fpm,
            SourceArg::Arp => Source::Arp,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum FamilyArg {
    Ipv4,
    Ipv6,
}

impl From<FamilyArg> for AddrFamily {
    fn from(f: FamilyArg) -> AddrFamily {
        match f {
            FamilyArg::Ipv4 => AddrFamily::Ipv4,
            FamilyArg::Ipv6 => AddrFamily::Ipv6,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum What {
    /// Routes: the longest match of ADDRESS, the entries under PREFIX, or all of a
    /// family (paged).
    Routes {
        /// A.B.C.D or X::X (longest match), A.B.C.D/N or X::/N (entries under it).
        prefix: Option<String>,
        /// The table listed without a PREFIX (default ipv4).
        #[arg(long, value_enum)]
        family: Option<FamilyArg>,
        #[arg(long, value_enum)]
        source: Option<SourceArg>,
        /// Entries per page (default 100).
        #[arg(long)]
        limit: Option<usize>,
        /// Start after this prefix (the "next page" hint).
        #[arg(long)]
        after: Option<String>,
    },
    /// Label entries: LABEL's, or all (paged).
    Mpls {
        label: Option<u32>,
        #[arg(long, value_enum)]
        source: Option<SourceArg>,
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long)]
        after: Option<u32>,
    },
    /// Neighbours: IP, MAC, port, state, age.
    Neighbors,
    /// Ports: link, MAC, addresses, MTU, queues, counters and rates.
    Ports,
    /// Workers: queues, packets, busy share, cycles per packet, burst sizes.
    Workers,
    /// The table: generation, sizes, memory, reloads.
    Table,
    /// The FPM session: state, peer, routes by source, last resync.
    Fpm,
    /// The control interfaces (TAP twins of the ports): name, ifindex, port, link.
    Interfaces,
}

fn request(w: What) -> Request {
    match w {
        What::Routes {
            prefix,
            family,
            source,
            limit,
            after,
        } => Request::ShowRoutes {
            prefix,
            family: family.map(Into::into),
            source: source.map(Into::into),
            limit,
            after,
        },
        What::Mpls {
            label,
            source,
            limit,
            after,
        } => Request::ShowMpls {
            label,
            source: source.map(Into::into),
            limit,
            after,
        },
        What::Neighbors => Request::ShowNeighbors {},
        What::Ports => Request::ShowPorts {},
        What::Workers => Request::ShowWorkers {},
        What::Table => Request::ShowTable {},
        What::Fpm => Request::ShowFpm {},
        What::Interfaces => Request::ShowInterfaces {},
    }
}

pub fn run(a: ShowArgs) -> Result<i32> {
    let req = request(a.what);
    let reply = a.socket.ask(&req)?;
    if a.socket.json {
        println!("{}", serde_json::to_string_pretty(&reply)?);
        return Ok(0);
    }
    let text = match reply {
        Reply::Routes(r) => render::routes(&r),
        Reply::Mpls(m) => render::mpls(&m),
        Reply::Neighbors { neighbors } => render::neighbors(&neighbors),
        Reply::Ports { ports } => render::ports(&ports),
        Reply::Workers { workers } => render::workers(&workers),
        Reply::Table(t) => render::table(&t),
        Reply::Fpm(f) => render::fpm(&f),
        Reply::Interfaces { interfaces } => render::interfaces(&interfaces),
        Reply::Lookup(_) | Reply::Trace { .. } | Reply::Capture(_) => {
            bail!("the router answered a show with something else")
        }
    };
    print!("{text}");
    Ok(0)
}
