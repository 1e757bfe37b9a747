//! The routes file: neighbors, IPv4 routes, MPLS label entries.
//!
//! [`parse_routes`] reads the YAML, checks everything (collecting every error with its
//! position) and yields a [`RouteSet`]: validated, position-free, with next hops
//! resolved to port ids. [`compile`] turns a `RouteSet` plus the ports into a
//! [`net::fib::Fib`]. The split lets `check` and reload share the checks, and lets the
//! reload path keep the last good `RouteSet`.
//!
//! File format (see `dpdk-config/routes.example.yaml`):
//! - `neighbors`: `{ip, mac, port?}` static ARP entries.
//! - `ipv4`: `{prefix, via | nexthops | blackhole | local, port?, push?, ttl_mode?, pipe_ttl?}`.
//! - `ipv6`: the same; `via` an IPv6 neighbor, or an IPv4 one with `push` (6PE).
//! - `mpls`: `{in_label, action: swap | swap_and_push | pop | pop_and_lookup, via | nexthops, push?, payload?, ...}`.
//! - `neighbors`, `routes_compact` and `prefix_groups` take either family (an IPv6
//!   address or prefix is told by its `:`).
//! - `routes_compact`: one line per route, see [`compact`].
//! - `prefix_groups`: `{via | nexthops | blackhole, ..., prefixes: [..] or "| block"}`.

pub mod compact;
pub(crate) mod compile;
pub mod model;
pub(crate) mod validate;

use std::path::Path as FsPath;

use net::fib::{Family, LabelOp, TtlMode};

pub use compile::{compile, CompileError};
pub use model::ROUTES_KEYS;
pub use validate::UNKNOWN_PORT;

use crate::de::{Decoder, Path};
use crate::diag::{ConfigError, Diagnostic, Diagnostics};
use crate::startup::{PortIface, StartupConfig, DEFAULT_MAX_LABEL_DEPTH};
use crate::yaml::{self, Node};

/// What the routes are checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteContext {
    /// The router's ports; `None` checks a routes file on its own (ports and subnets
    /// are then not checked and the result cannot be compiled).
    pub ports: Option<Vec<PortIface>>,
    pub max_label_depth: u8,
    /// Largest routes file read (`max_routes_file_bytes`).
    pub max_file_bytes: u64,
}

impl RouteContext {
    /// Context from a startup config; `mac(port id)` supplies MACs the config does not
    /// override (the runtime reads them from the NICs).
    pub fn from_startup(cfg: &StartupConfig, mac: impl FnMut(u16) -> [u8; 6]) -> RouteContext {
        RouteContext {
            ports: Some(cfg.port_ifaces(mac)),
            max_label_depth: cfg.max_label_depth,
            max_file_bytes: cfg.max_routes_file_bytes,
        }
    }

    /// No ports known: only what a routes file says by itself is checked.
    pub fn standalone() -> RouteContext {
        RouteContext {
            ports: None,
            max_label_depth: DEFAULT_MAX_LABEL_DEPTH,
            max_file_bytes: crate::read::DEFAULT_MAX_ROUTES_FILE_BYTES,
        }
    }
}

/// A next hop after validation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NhSpec {
    /// Port id ([`UNKNOWN_PORT`] when checked without ports).
    pub port: u16,
    /// Host byte order; 0 when the neighbor is known by `via6`.
    pub via: u32,
    /// An IPv6 neighbor (resolved by NDP).
    pub via6: Option<u128>,
    /// Labels written on egress, outermost first; implicit null already removed.
    pub labels: Vec<u32>,
    pub weight: u32,
    /// The family the adjacency carries when `labels` is empty (IPv4 whenever labels are
    /// pushed, so an IPv4 route and a 6PE route through one LSP share an adjacency).
    pub payload: Family,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TargetSpec {
    /// One next hop, or an ECMP set.
    NextHops(Vec<NhSpec>),
    Local,
    Blackhole,
}

/// A validated IPv4 route target; many prefixes share one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RouteSpec {
    pub target: TargetSpec,
    pub ttl: TtlMode,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LabelSpec {
    pub op: LabelOp,
    /// Empty for `PopAndLookup`.
    pub nexthops: Vec<NhSpec>,
    pub ttl: TtlMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NeighborSpec {
    pub ip: u32,
    pub port: u16,
    pub mac: [u8; 6],
}

/// A static IPv6 neighbor (static NDP entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Neighbor6Spec {
    pub ip: u128,
    pub port: u16,
    pub mac: [u8; 6],
}

/// A validated routes file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteSet {
    pub neighbors: Vec<NeighborSpec>,
    pub neighbors6: Vec<Neighbor6Spec>,
    /// Distinct route targets; `ipv4` refers to them by index.
    pub specs: Vec<RouteSpec>,
    /// (prefix, index into `specs`) in file order.
    pub ipv4: Vec<(crate::types::Cidr, u32)>,
    /// IPv6 prefixes and their index into `specs`, in file order.
    pub ipv6: Vec<(crate::types::Cidr6, u32)>,
    pub labels: Vec<(u32, LabelSpec)>,
    /// False when checked without ports ([`RouteContext::standalone`]).
    pub ports_checked: bool,
}

/// Parses and validates a routes file's text; `path` is used in messages.
pub fn parse_routes(
    path: &FsPath,
    text: &str,
    ctx: &RouteContext,
) -> Result<RouteSet, ConfigError> {
    let root = yaml::parse(text)
        .map_err(|e| ConfigError::Invalid(Diagnostics(vec![Diagnostic::from_syntax(path, e)])))?;
    routes_from_node(path, &root, ctx)
}

pub(crate) fn routes_from_node(
    path: &FsPath,
    root: &Node,
    ctx: &RouteContext,
) -> Result<RouteSet, ConfigError> {
    let d = Decoder::new();
    let set = {
        let mut v = validate::Validator::new(&d, ctx);
        let sections = d.top_level(root, ROUTES_KEYS, "a routes file");
        // Neighbors first: nothing depends on order, but messages read better.
        for want in ROUTES_KEYS {
            for (k, node) in sections.iter().filter(|(k, _)| k == want) {
                let p = Path::Key(&Path::Root, k);
                match *k {
                    "neighbors" => v.neighbors(node, &p),
                    "ipv4" => v.ipv4(node, &p),
                    "ipv6" => v.ipv6(node, &p),
                    "mpls" => v.mpls(node, &p),
                    "routes_compact" => v.routes_compact(node, &p),
                    _ => v.prefix_groups(node, &p),
                }
            }
        }
        v.finish()
    };
    if d.has_errors() {
        return Err(ConfigError::Invalid(Diagnostics::from_de(
            path,
            d.into_errors(),
        )));
    }
    Ok(set)
}

/// A table with only the ports' connected subnets and local addresses, for a startup
/// config without a routes file.
pub fn connected_only(ports: &[PortIface], generation: u64) -> Result<net::fib::Fib, CompileError> {
    let set = RouteSet {
        ports_checked: true,
        ..RouteSet::default()
    };
    compile(&set, ports, generation)
}

/// Reads and validates a routes file.
pub fn load_routes(path: &FsPath, ctx: &RouteContext) -> Result<RouteSet, ConfigError> {
    let text = crate::read::read_file(path, crate::read::Limit::routes(ctx.max_file_bytes))?;
    parse_routes(path, &text, ctx)
}
