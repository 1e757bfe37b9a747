//! `mplsrouter check FILE`: validate a startup config (and the routes file it names) or a
//! routes file on its own, and summarise what would be loaded.
//!
//! The kind of file is told by its top-level keys. Exit status: 0 when valid, 1 when not
//! (including unreadable files). [`render`] produces the text the CLI prints.

use std::fmt::Write as _;
use std::path::{Path as FsPath, PathBuf};
use std::time::{Duration, Instant};

use crate::diag::{ConfigError, Diagnostic, Diagnostics};
use crate::read::{self, Limit, DEFAULT_MAX_ROUTES_FILE_BYTES};
use crate::routes::{self, RouteContext, RouteSet, TargetSpec, ROUTES_KEYS};
use crate::startup::{StartupConfig, STARTUP_KEYS};
use crate::yaml::{self, Node, NodeKind};

/// Which of the two file kinds a document is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Startup,
    Routes,
}

/// Tells the kinds apart by top-level keys (`ports`, `eal`, ... vs `ipv4`, `mpls`, ...).
/// A document with neither (empty, or only unknown keys) counts as a routes file, whose
/// checker then reports the unknown keys.
pub fn detect_kind(root: &Node) -> FileKind {
    let NodeKind::Map(pairs) = &root.kind else {
        return FileKind::Routes;
    };
    let keys = || pairs.iter().filter_map(|(k, _)| k.as_str());
    let startup = keys().filter(|k| STARTUP_KEYS.contains(k)).count();
    let routes = keys().filter(|k| ROUTES_KEYS.contains(k)).count();
    if startup > routes {
        FileKind::Startup
    } else {
        FileKind::Routes
    }
}

/// What a valid file would load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckSummary {
    pub kind: FileKind,
    pub file: PathBuf,
    /// The routes file a startup config names, if any.
    pub routes_file: Option<PathBuf>,
    pub ports: usize,
    /// Per port of a startup config: (name, promiscuous mode, whether the config set it).
    pub port_modes: Vec<(String, bool, bool)>,
    pub workers: usize,
    /// Packets a worker takes per poll at most (`burst_size`, 0 for a routes file).
    pub burst_size: u16,
    /// EAL argument vector a startup config produces (empty for a routes file).
    pub eal_args: Vec<String>,
    /// Mbufs in the packet pool (0 for a routes file).
    pub mempool_size: u32,
    /// Data room per mbuf, headroom included (sized for the largest port MTU).
    pub mbuf_data_room: u32,
    /// Memory the packet pool takes, bytes.
    pub mempool_bytes: u64,
    /// Routes written in the routes file.
    pub ipv4_routes: usize,
    /// IPv6 routes written in the routes file.
    pub ipv6_routes: usize,
    pub labels: usize,
    pub neighbors: usize,
    /// Distinct (port, neighbor, label stack) next hops.
    pub next_hops: usize,
    /// Distinct ECMP sets (more than one next hop).
    pub ecmp_groups: usize,
    /// From the compiled table, when ports are known: (prefixes including connected and
    /// local ones, adjacencies, ECMP groups, approximate bytes).
    pub fib: Option<net::fib::FibStats>,
    /// False for a routes file checked on its own.
    pub ports_checked: bool,
    pub elapsed: Duration,
}

/// Checks a file of either kind.
pub fn check_file(path: &FsPath) -> Result<CheckSummary, ConfigError> {
    let start = Instant::now();
    // The kind is known only once it is parsed: a routes file's default limit for both.
    let text = read::read_file(path, Limit::routes(DEFAULT_MAX_ROUTES_FILE_BYTES))?;
    let root = yaml::parse(&text)
        .map_err(|e| ConfigError::Invalid(Diagnostics(vec![Diagnostic::from_syntax(path, e)])))?;
    let mut s = match detect_kind(&root) {
        FileKind::Startup => check_startup(path, &root)?,
        FileKind::Routes => {
            let set = routes::routes_from_node(path, &root, &RouteContext::standalone())?;
            summary(FileKind::Routes, path, &set, None)
        }
    };
    s.elapsed = start.elapsed();
    Ok(s)
}

fn check_startup(path: &FsPath, root: &Node) -> Result<CheckSummary, ConfigError> {
    let (cfg, mut errors) = StartupConfig::from_node_partial(path, root);
    let mut set = None;
    let mut ctx = RouteContext::from_startup(&cfg, |_| [0; 6]);
    if let Some(rp) = &cfg.routes {
        match routes::load_routes(rp, &ctx) {
            Ok(s) => set = Some(s),
            Err(ConfigError::Invalid(d)) => errors.0.extend(d.0),
            Err(e @ ConfigError::Io { .. }) => errors.0.push(Diagnostic {
                file: path.to_path_buf(),
                line: root.get("routes").map_or(1, |n| n.mark.line),
                col: root.get("routes").map_or(1, |n| n.mark.col),
                path: "routes".into(),
                message: e.to_string(),
                hint: Some("the path is relative to this file's directory".into()),
            }),
            Err(ConfigError::Refused { path: rp, why }) => errors.0.push(Diagnostic {
                file: path.to_path_buf(),
                line: root.get("routes").map_or(1, |n| n.mark.line),
                col: root.get("routes").map_or(1, |n| n.mark.col),
                path: "routes".into(),
                message: format!("cannot read {}: {why}", rp.display()),
                hint: Some(why.hint()),
            }),
        }
    }
    if !errors.is_empty() {
        return Err(ConfigError::Invalid(errors));
    }
    let set = set.unwrap_or_default();
    let ports = ctx.ports.take().unwrap_or_default();
    let set = RouteSet {
        ports_checked: true,
        ..set
    };
    let fib = routes::compile(&set, &ports, 0).map_err(|e| {
        ConfigError::Invalid(Diagnostics(vec![Diagnostic {
            file: cfg.routes.clone().unwrap_or_else(|| path.to_path_buf()),
            line: 1,
            col: 1,
            path: String::new(),
            message: e.to_string(),
            hint: Some(
                "this is a bug in mplsrouter's checks; please report it with the file".into(),
            ),
        }]))
    })?;
    let mut s = summary(FileKind::Startup, path, &set, Some(fib.stats()));
    s.routes_file = cfg.routes.clone();
    s.ports = cfg.ports.len();
    s.port_modes = cfg
        .ports
        .iter()
        .map(|p| {
            (
                p.name.value.clone(),
                p.promiscuous(),
                p.promiscuous.is_some(),
            )
        })
        .collect();
    s.workers = cfg.workers().len();
    s.burst_size = cfg.burst_size;
    s.eal_args = cfg.eal_args("mplsrouter");
    s.mempool_size = cfg.mempool_size();
    s.mbuf_data_room = cfg.mbuf_data_room() as u32;
    s.mempool_bytes = cfg.mempool_bytes();
    Ok(s)
}

fn summary(
    kind: FileKind,
    path: &FsPath,
    set: &RouteSet,
    fib: Option<net::fib::FibStats>,
) -> CheckSummary {
    let mut nhs = std::collections::HashSet::new();
    let mut groups = std::collections::HashSet::new();
    let mut add = |list: &[routes::NhSpec]| {
        for n in list {
            nhs.insert((n.port, n.via, n.via6, n.labels.clone()));
        }
        if list.len() > 1 {
            groups.insert(list.to_vec());
        }
    };
    for spec in &set.specs {
        if let TargetSpec::NextHops(list) = &spec.target {
            add(list);
        }
    }
    for (_, l) in &set.labels {
        add(&l.nexthops);
    }
    CheckSummary {
        kind,
        file: path.to_path_buf(),
        routes_file: None,
        ports: 0,
        port_modes: Vec::new(),
        workers: 0,
        burst_size: 0,
        eal_args: Vec::new(),
        mempool_size: 0,
        mbuf_data_room: 0,
        mempool_bytes: 0,
        ipv4_routes: set.ipv4.len(),
        ipv6_routes: set.ipv6.len(),
        labels: set.labels.len(),
        neighbors: set.neighbors.len() + set.neighbors6.len(),
        next_hops: nhs.len(),
        ecmp_groups: groups.len(),
        fib,
        ports_checked: set.ports_checked,
        elapsed: Duration::ZERO,
    }
}

/// The text `mplsrouter check` prints and its exit status (0 valid, 1 not).
pub fn render(result: &Result<CheckSummary, ConfigError>) -> (String, i32) {
    let mut o = String::new();
    match result {
        Err(e) => {
            let _ = writeln!(o, "{e}");
            (o, 1)
        }
        Ok(s) => {
            let what = match s.kind {
                FileKind::Startup => "startup config",
                FileKind::Routes => "routes file",
            };
            let _ = writeln!(o, "{}: valid {what}", s.file.display());
            if s.kind == FileKind::Startup {
                let _ = writeln!(o, "  ports:            {}", s.ports);
                for (name, promiscuous, set) in &s.port_modes {
                    let on = if *promiscuous { "on" } else { "off" };
                    let why = if *set { "" } else { " (default)" };
                    let _ = writeln!(o, "    {name}: promiscuous {on}{why}");
                }
                let _ = writeln!(o, "  workers:          {}", s.workers);
                let _ = writeln!(
                    o,
                    "  burst size:       {} packets a poll at most",
                    s.burst_size
                );
                let _ = writeln!(
                    o,
                    "  mempool:          {} mbufs of {} bytes (data room for the largest MTU), {}",
                    s.mempool_size,
                    s.mbuf_data_room,
                    human_bytes(s.mempool_bytes as usize)
                );
                let _ = writeln!(o, "  eal args:         {}", s.eal_args[1..].join(" "));
                match &s.routes_file {
                    Some(r) => {
                        let _ = writeln!(o, "  routes file:      {}", r.display());
                    }
                    None => {
                        let _ = writeln!(o, "  routes file:      none (only connected routes)");
                    }
                }
            }
            let _ = writeln!(o, "  ipv4 routes:      {}", s.ipv4_routes);
            if s.ipv6_routes > 0 {
                let _ = writeln!(o, "  ipv6 routes:      {}", s.ipv6_routes);
            }
            let _ = writeln!(o, "  mpls labels:      {}", s.labels);
            let _ = writeln!(o, "  neighbors:        {}", s.neighbors);
            let _ = writeln!(o, "  next hops:        {}", s.next_hops);
            let _ = writeln!(o, "  ecmp groups:      {}", s.ecmp_groups);
            if let Some(f) = &s.fib {
                let _ = writeln!(
                    o,
                    "  fib:              {} prefixes (with connected/local), {} labels, {} adjacencies, {} ecmp groups",
                    f.ipv4_routes, f.labels, f.adjacencies, f.ecmp_groups
                );
                if f.ipv6_routes > 0 {
                    let _ = writeln!(
                        o,
                        "  fib ipv6:         {} prefixes (with connected/local), lpm6 {}",
                        f.ipv6_routes,
                        human_bytes(f.lpm6_bytes)
                    );
                }
                let _ = writeln!(o, "  memory estimate:  {}", human_bytes(f.bytes));
            }
            if !s.ports_checked {
                let _ = writeln!(
                    o,
                    "  note: checked without ports; next hops were not checked against connected subnets.\n        Check the startup config that names this file for a full check."
                );
            }
            let _ = writeln!(o, "  checked in {:.0} ms", s.elapsed.as_secs_f64() * 1000.0);
            (o, 0)
        }
    }
}

fn human_bytes(b: usize) -> String {
    match b {
        0..=9_999 => format!("{b} B"),
        10_000..=9_999_999 => format!("{:.1} KiB", b as f64 / 1024.0),
        _ => format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0)),
    }
}
