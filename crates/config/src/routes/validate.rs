//! Semantic checks of a routes file, turning the written model into a [`RouteSet`].
//!
//! Every route form (structured `ipv4`, `routes_compact` line, `prefix_groups` member)
//! is first reduced to a draft carrying source positions, then checked by one code
//! path: labels, ports, subnets, weights, duplicates. Errors are collected, never
//! returned early, so the user sees all of them. Identical targets are interned (a full
//! table has a million prefixes but a handful of distinct targets), and compact lines
//! with an already-seen target text skip target parsing altogether.

use std::collections::HashMap;

use net::fib::{TtlMode, DEFAULT_PIPE_TTL, MAX_LABEL, MAX_PUSH, MIN_UNRESERVED_LABEL};

use super::compact::{self, CompactError, CompactTarget};
use super::model::*;
use super::{LabelSpec, NeighborSpec, NhSpec, RouteContext, RouteSet, RouteSpec, TargetSpec};
use crate::de::{Decoder, Path, Spanned};
use crate::types::Cidr;
use crate::yaml::{Mark, Node, NodeKind};

/// Label value meaning "no label" in a binding (RFC 3032).
const IMPLICIT_NULL: u32 = 3;
/// Most members of one ECMP set (net::fib's bucket count; not re-exported there).
const MAX_ECMP: usize = 256;
/// Port id used when a routes file is checked without its startup config.
pub const UNKNOWN_PORT: u16 = u16::MAX;

struct NhDraft<'a> {
    /// Path of the next hop (`ipv4[2]`, `ipv4[2].nexthops[1]`, `routes_compact[7]`).
    path: String,
    /// Compact lines have one path for all fields.
    compact: bool,
    via: Spanned<u32>,
    port: Option<Spanned<&'a str>>,
    push: Option<(Vec<Spanned<u32>>, Mark)>,
    weight: Option<Spanned<u32>>,
}

impl NhDraft<'_> {
    fn field(&self, f: &str) -> String {
        if self.compact {
            self.path.clone()
        } else {
            format!("{}.{f}", self.path)
        }
    }
}

enum KindDraft<'a> {
    NextHops(Vec<NhDraft<'a>>, Mark, String),
    Local,
    Blackhole,
}

struct TtlDraft {
    pipe: Option<Spanned<bool>>,
    pipe_ttl: Option<Spanned<u8>>,
    path: String,
    compact: bool,
}

pub(super) struct Validator<'c> {
    d: &'c Decoder,
    ctx: &'c RouteContext,
    max_push: usize,
    specs: Vec<RouteSpec>,
    spec_ids: HashMap<RouteSpec, u32>,
    prefixes: HashMap<Cidr, Mark>,
    ipv4: Vec<(Cidr, u32)>,
    labels: Vec<(u32, LabelSpec)>,
    label_marks: HashMap<u32, Mark>,
    neighbors: Vec<NeighborSpec>,
    neighbor_marks: HashMap<u32, Mark>,
    /// Compact target text -> spec id, for targets that validated cleanly.
    compact_cache: HashMap<String, u32>,
}

fn key(base: &Path, k: &str) -> String {
    Path::Key(base, k).to_string()
}

impl<'c> Validator<'c> {
    pub(super) fn new(d: &'c Decoder, ctx: &'c RouteContext) -> Validator<'c> {
        Validator {
            d,
            ctx,
            max_push: (ctx.max_label_depth as usize).min(MAX_PUSH),
            specs: Vec::new(),
            spec_ids: HashMap::new(),
            prefixes: HashMap::new(),
            ipv4: Vec::new(),
            labels: Vec::new(),
            label_marks: HashMap::new(),
            neighbors: Vec::new(),
            neighbor_marks: HashMap::new(),
            compact_cache: HashMap::new(),
        }
    }

    pub(super) fn finish(self) -> RouteSet {
        RouteSet {
            neighbors: self.neighbors,
            specs: self.specs,
            ipv4: self.ipv4,
            labels: self.labels,
            ports_checked: self.ctx.ports.is_some(),
        }
    }

    fn err(
        &self,
        mark: Mark,
        path: String,
        msg: impl Into<String>,
        hint: impl Into<Option<String>>,
    ) {
        self.d.error_at(mark, path, msg, hint.into());
    }

    fn intern(&mut self, spec: RouteSpec) -> u32 {
        if let Some(&id) = self.spec_ids.get(&spec) {
            return id;
        }
        let id = self.specs.len() as u32;
        self.specs.push(spec.clone());
        self.spec_ids.insert(spec, id);
        id
    }

    // ---- ports and subnets ----------------------------------------------------------

    fn subnets_hint(&self) -> String {
        let ports = self.ctx.ports.as_deref().unwrap_or_default();
        let list: Vec<String> = ports
            .iter()
            .flat_map(|p| {
                p.addresses
                    .iter()
                    .map(move |a| format!("{} ({})", a.network(), p.name))
            })
            .collect();
        if list.is_empty() {
            "no port has an address: add `addresses` to the ports in the startup config".into()
        } else {
            format!(
                "a next hop must be directly reachable; connected subnets: {}",
                list.join(", ")
            )
        }
    }

    /// The port an address on a connected subnet is reached through.
    fn resolve_port(
        &self,
        ip: Spanned<u32>,
        ip_path: String,
        port: Option<Spanned<&str>>,
        port_path: String,
    ) -> Option<u16> {
        let Some(ports) = self.ctx.ports.as_deref() else {
            return Some(UNKNOWN_PORT);
        };
        if let Some(p) = ports
            .iter()
            .find(|p| p.addresses.iter().any(|a| a.addr == ip.value))
        {
            self.err(
                ip.mark,
                ip_path,
                format!(
                    "{} is this router's own address on port `{}`",
                    Cidr {
                        addr: ip.value,
                        len: 32
                    }
                    .ip(),
                    p.name
                ),
                Some("use the neighbor's address".to_string()),
            );
            return None;
        }
        let on_subnet = |p: &crate::startup::PortIface| {
            p.addresses
                .iter()
                .filter(|a| a.contains(ip.value))
                .map(|a| a.len)
                .max()
        };
        match port {
            Some(name) => match ports.iter().find(|p| p.name == name.value) {
                None => {
                    let names: Vec<&str> = ports.iter().map(|p| p.name.as_str()).collect();
                    self.err(
                        name.mark,
                        port_path,
                        format!("unknown port `{}`", name.value),
                        Some(format!("known ports: {}", names.join(", "))),
                    );
                    None
                }
                Some(p) if on_subnet(p).is_none() => {
                    self.err(
                        ip.mark,
                        ip_path,
                        format!(
                            "{} is not on a subnet of port `{}`",
                            Cidr {
                                addr: ip.value,
                                len: 32
                            }
                            .ip(),
                            p.name
                        ),
                        Some(self.subnets_hint()),
                    );
                    None
                }
                Some(p) => Some(p.id),
            },
            None => match ports
                .iter()
                .filter_map(|p| Some((on_subnet(p)?, p.id)))
                .max()
            {
                Some((_, id)) => Some(id),
                None => {
                    self.err(
                        ip.mark,
                        ip_path,
                        format!(
                            "{} is not on any connected subnet",
                            Cidr {
                                addr: ip.value,
                                len: 32
                            }
                            .ip()
                        ),
                        Some(self.subnets_hint()),
                    );
                    None
                }
            },
        }
    }

    // ---- labels -------------------------------------------------------------------

    /// Checks an out-label stack; `[3]` (implicit null) becomes the empty stack.
    fn check_stack(&self, stack: &[Spanned<u32>], mark: Mark, path: &str) -> Option<Vec<u32>> {
        let mut ok = true;
        for (i, l) in stack.iter().enumerate() {
            let p = || {
                if path.ends_with(']') {
                    path.to_string()
                } else {
                    format!("{path}[{i}]")
                }
            };
            let v = l.value;
            if v > MAX_LABEL {
                self.err(
                    l.mark,
                    p(),
                    format!("label {v} does not fit in 20 bits"),
                    Some(format!("labels are 0..={MAX_LABEL}")),
                );
                ok = false;
            } else if v == IMPLICIT_NULL && stack.len() > 1 {
                self.err(
                    l.mark,
                    p(),
                    "implicit null (3) can only be the whole stack",
                    Some(
                        "write `push: [3]` alone to forward without a label, or drop the 3"
                            .to_string(),
                    ),
                );
                ok = false;
            } else if v != 0 && v != IMPLICIT_NULL && v < MIN_UNRESERVED_LABEL {
                self.err(
                    l.mark,
                    p(),
                    format!("label {v} is reserved (RFC 3032/7274) and cannot be pushed"),
                    Some(
                        "use 0 (explicit null), 3 (implicit null) or a label from 16 up"
                            .to_string(),
                    ),
                );
                ok = false;
            }
        }
        if stack.len() > self.max_push {
            let why = if self.max_push == MAX_PUSH && (self.ctx.max_label_depth as usize) > MAX_PUSH
            {
                format!("an adjacency pushes at most {MAX_PUSH} labels")
            } else {
                format!("max_label_depth is {}", self.ctx.max_label_depth)
            };
            self.err(
                mark,
                path.to_string(),
                format!("{} labels is deeper than the limit ({why})", stack.len()),
                Some(format!("push at most {} labels", self.max_push)),
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        if stack.len() == 1 && stack[0].value == IMPLICIT_NULL {
            return Some(Vec::new());
        }
        Some(stack.iter().map(|l| l.value).collect())
    }

    // ---- targets ------------------------------------------------------------------

    fn resolve_nh(&self, nh: &NhDraft) -> Option<NhSpec> {
        let port = self.resolve_port(nh.via, nh.field("via"), nh.port, nh.field("port"));
        let labels = match &nh.push {
            Some((stack, m)) => self.check_stack(stack, *m, &nh.field("push")),
            None => Some(Vec::new()),
        };
        let weight = match nh.weight {
            Some(w) if w.value == 0 => {
                self.err(
                    w.mark,
                    nh.field("weight"),
                    "weight 0 would never be chosen",
                    Some("use a weight of at least 1, or remove the next hop".to_string()),
                );
                None
            }
            Some(w) => Some(w.value),
            None => Some(1),
        };
        Some(NhSpec {
            port: port?,
            via: nh.via.value,
            labels: labels?,
            weight: weight?,
        })
    }

    fn resolve_nhs(&self, nhs: &[NhDraft], mark: Mark, path: &str) -> Option<Vec<NhSpec>> {
        if nhs.is_empty() {
            self.err(
                mark,
                path.to_string(),
                "empty ECMP set",
                Some("list at least one next hop, e.g. `- {via: 10.0.1.2}`".to_string()),
            );
            return None;
        }
        if nhs.len() > MAX_ECMP {
            self.err(
                mark,
                path.to_string(),
                format!(
                    "{} next hops: an ECMP set has at most {}",
                    nhs.len(),
                    MAX_ECMP
                ),
                None,
            );
            return None;
        }
        let mut out = Vec::with_capacity(nhs.len());
        let mut ok = true;
        for nh in nhs {
            match self.resolve_nh(nh) {
                Some(s) => {
                    if out.iter().any(|o: &NhSpec| {
                        o.via == s.via && o.port == s.port && o.labels == s.labels
                    }) {
                        self.err(
                            nh.via.mark,
                            nh.field("via"),
                            format!(
                                "next hop {} is listed twice",
                                Cidr {
                                    addr: s.via,
                                    len: 32
                                }
                                .ip()
                            ),
                            Some("give it a higher weight instead".to_string()),
                        );
                        ok = false;
                    }
                    out.push(s)
                }
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn ttl(&self, t: &TtlDraft) -> Option<TtlMode> {
        let f = |k: &str| {
            if t.compact {
                t.path.clone()
            } else {
                format!("{}.{k}", t.path)
            }
        };
        match (t.pipe, t.pipe_ttl) {
            (Some(p), Some(n)) if p.value => {
                if n.value == 0 {
                    self.err(
                        n.mark,
                        f("pipe_ttl"),
                        "pipe_ttl 0 would expire at once",
                        Some(format!("use 1..=255 (default {DEFAULT_PIPE_TTL})")),
                    );
                    return None;
                }
                Some(TtlMode::Pipe(n.value))
            }
            (Some(p), None) if p.value => Some(TtlMode::Pipe(DEFAULT_PIPE_TTL)),
            (_, Some(n)) => {
                self.err(
                    n.mark,
                    f("pipe_ttl"),
                    "pipe_ttl only applies with `ttl_mode: pipe`",
                    Some("add `ttl_mode: pipe` or remove pipe_ttl".to_string()),
                );
                None
            }
            _ => Some(TtlMode::Uniform),
        }
    }

    fn route_spec(&self, kind: &KindDraft, ttl: &TtlDraft) -> Option<RouteSpec> {
        let ttl = self.ttl(ttl);
        let target = match kind {
            KindDraft::Local => Some(TargetSpec::Local),
            KindDraft::Blackhole => Some(TargetSpec::Blackhole),
            KindDraft::NextHops(nhs, m, p) => {
                self.resolve_nhs(nhs, *m, p).map(TargetSpec::NextHops)
            }
        };
        Some(RouteSpec {
            target: target?,
            ttl: ttl?,
        })
    }

    fn add_prefix(&mut self, prefix: Spanned<Cidr>, path: String, spec: Option<u32>) {
        let c = prefix.value;
        if c.has_host_bits() {
            self.err(
                prefix.mark,
                path,
                format!("prefix {c} has host bits set"),
                Some(format!("did you mean {}?", c.network())),
            );
            return;
        }
        if let Some(ports) = &self.ctx.ports {
            for p in ports {
                for a in &p.addresses {
                    let what = if c == a.network() && a.len < 32 {
                        "the connected subnet"
                    } else if c
                        == (Cidr {
                            addr: a.addr,
                            len: 32,
                        })
                    {
                        "the local address"
                    } else {
                        continue;
                    };
                    self.err(
                        prefix.mark,
                        path.clone(),
                        format!(
                            "{c} is {what} of port `{}`, which is installed automatically",
                            p.name
                        ),
                        Some("remove this route".to_string()),
                    );
                    return;
                }
            }
        }
        if let Some(first) = self.prefixes.get(&c) {
            self.err(
                prefix.mark,
                path,
                format!(
                    "duplicate prefix {c} (first defined at line {})",
                    first.line
                ),
                Some("keep one of the two routes; use `nexthops` for ECMP".to_string()),
            );
            return;
        }
        self.prefixes.insert(c, prefix.mark);
        if let Some(id) = spec {
            self.ipv4.push((c, id));
        }
    }

    // ---- sections -----------------------------------------------------------------

    pub(super) fn neighbors(&mut self, node: &Node, path: &Path) {
        for (i, n) in self.d.items::<NeighborCfg>(node, path) {
            let base = Path::Index(path, i);
            let ip = n.ip.value.0;
            if let Some(first) = self.neighbor_marks.get(&ip) {
                self.err(
                    n.ip.mark,
                    key(&base, "ip"),
                    format!(
                        "duplicate neighbor {} (first defined at line {})",
                        n.ip.value, first.line
                    ),
                    Some("a neighbor has one MAC address: remove one entry".to_string()),
                );
                continue;
            }
            self.neighbor_marks.insert(ip, n.ip.mark);
            let port = n
                .port
                .as_ref()
                .map(|p| Spanned::new(p.value.as_str(), p.mark));
            if let Some(port) = self.resolve_port(
                Spanned::new(ip, n.ip.mark),
                key(&base, "ip"),
                port,
                key(&base, "port"),
            ) {
                self.neighbors.push(NeighborSpec {
                    ip,
                    port,
                    mac: n.mac.value.0,
                });
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn structured_kind<'a>(
        &self,
        base: &Path,
        mark: Mark,
        via: &Option<Spanned<crate::types::Ip>>,
        port: &'a Option<Spanned<String>>,
        push: &Option<Spanned<Vec<Spanned<u32>>>>,
        nexthops: &'a Option<Spanned<Vec<NextHopCfg>>>,
        blackhole: Option<Spanned<bool>>,
        local: Option<Spanned<bool>>,
        label_entry: bool,
    ) -> Option<KindDraft<'a>> {
        let mut chosen: Vec<(&str, Mark)> = Vec::new();
        if let Some(v) = via {
            chosen.push(("via", v.mark));
        }
        if let Some(n) = nexthops {
            chosen.push(("nexthops", n.mark));
        }
        if let Some(b) = blackhole.filter(|b| b.value) {
            chosen.push(("blackhole", b.mark));
        }
        if let Some(l) = local.filter(|l| l.value) {
            chosen.push(("local", l.mark));
        }
        if chosen.len() > 1 {
            let names: Vec<&str> = chosen.iter().map(|c| c.0).collect();
            self.err(
                chosen[1].1,
                key(base, chosen[1].0),
                format!("`{}` and `{}` cannot be combined", names[0], names[1]),
                Some("a route has exactly one of: via, nexthops, blackhole, local".to_string()),
            );
            return None;
        }
        let nh_only = |k: &str, m: Mark, what: &str| {
            self.err(
                m,
                key(base, k),
                format!("`{k}` only applies to a single `via`"),
                Some(what.to_string()),
            );
        };
        match chosen.first().map(|c| c.0) {
            None => {
                self.err(
                    mark,
                    base.to_string(),
                    if !label_entry {
                        "no target: add `via`, `nexthops`, `blackhole: true` or `local: true`"
                    } else {
                        "no next hop: add `via` or `nexthops`"
                    },
                    None,
                );
                None
            }
            Some("via") => {
                let v = via.as_ref().expect("chosen");
                Some(KindDraft::NextHops(
                    vec![NhDraft {
                        path: base.to_string(),
                        compact: false,
                        via: Spanned::new(v.value.0, v.mark),
                        port: port
                            .as_ref()
                            .map(|p| Spanned::new(p.value.as_str(), p.mark)),
                        push: push.as_ref().map(|p| (p.value.clone(), p.mark)),
                        weight: None,
                    }],
                    v.mark,
                    key(base, "via"),
                ))
            }
            Some(k) => {
                if let Some(p) = port {
                    nh_only("port", p.mark, "set `port` on each next hop instead");
                    return None;
                }
                if let Some(p) = push {
                    nh_only("push", p.mark, "set `push` on each next hop instead");
                    return None;
                }
                match k {
                    "nexthops" => {
                        let n = nexthops.as_ref().expect("chosen");
                        let np = key(base, "nexthops");
                        let drafts = n
                            .value
                            .iter()
                            .enumerate()
                            .map(|(j, h)| NhDraft {
                                path: format!("{np}[{j}]"),
                                compact: false,
                                via: Spanned::new(h.via.value.0, h.via.mark),
                                port: h
                                    .port
                                    .as_ref()
                                    .map(|p| Spanned::new(p.value.as_str(), p.mark)),
                                push: h.push.as_ref().map(|p| (p.value.clone(), p.mark)),
                                weight: h.weight,
                            })
                            .collect();
                        Some(KindDraft::NextHops(drafts, n.mark, np))
                    }
                    "blackhole" => Some(KindDraft::Blackhole),
                    _ => Some(KindDraft::Local),
                }
            }
        }
    }

    fn ttl_draft(
        base: &Path,
        mode: Option<Spanned<TtlModeCfg>>,
        pipe_ttl: Option<Spanned<u8>>,
    ) -> TtlDraft {
        TtlDraft {
            pipe: mode.map(|m| Spanned::new(m.value == TtlModeCfg::Pipe, m.mark)),
            pipe_ttl,
            path: base.to_string(),
            compact: false,
        }
    }

    pub(super) fn ipv4(&mut self, node: &Node, path: &Path) {
        for (i, r) in self.d.items::<Ipv4RouteCfg>(node, path) {
            let base = Path::Index(path, i);
            let mark = r.prefix.mark;
            let spec = self
                .structured_kind(
                    &base,
                    mark,
                    &r.via,
                    &r.port,
                    &r.push,
                    &r.nexthops,
                    r.blackhole,
                    r.local,
                    false,
                )
                .and_then(|k| self.route_spec(&k, &Self::ttl_draft(&base, r.ttl_mode, r.pipe_ttl)))
                .map(|s| self.intern(s));
            self.add_prefix(r.prefix, key(&base, "prefix"), spec);
        }
    }

    pub(super) fn prefix_groups(&mut self, node: &Node, path: &Path) {
        for (i, g) in self.d.items::<PrefixGroupCfg>(node, path) {
            let base = Path::Index(path, i);
            let spec = self
                .structured_kind(
                    &base,
                    g.prefixes.mark,
                    &g.via,
                    &g.port,
                    &g.push,
                    &g.nexthops,
                    g.blackhole,
                    None,
                    false,
                )
                .and_then(|k| self.route_spec(&k, &Self::ttl_draft(&base, g.ttl_mode, g.pipe_ttl)))
                .map(|s| self.intern(s));
            let pp = key(&base, "prefixes");
            let m = g.prefixes.mark;
            match &g.prefixes.value {
                PrefixList::List(items) => {
                    for (j, s) in items.iter().enumerate() {
                        self.group_prefix(s.value.trim(), s.mark, format!("{pp}[{j}]"), spec);
                    }
                }
                PrefixList::Text(t) => {
                    // A literal block keeps one source line per text line.
                    for (ln, line) in t.lines().enumerate() {
                        let mut off = 0;
                        for tok in line.split_ascii_whitespace() {
                            let at = off + line[off..].find(tok).unwrap_or(0);
                            off = at + tok.len();
                            let mark = Mark {
                                line: m.line + ln as u32,
                                col: m.col + at as u32,
                            };
                            self.group_prefix(tok, mark, pp.clone(), spec);
                        }
                    }
                }
            }
        }
    }

    fn group_prefix(&mut self, tok: &str, mark: Mark, path: String, spec: Option<u32>) {
        match compact::parse_prefix((tok, 0)) {
            Ok(c) => self.add_prefix(Spanned::new(c, mark), path, spec),
            Err(e) => self.err(mark, path, e.message, e.hint),
        }
    }

    pub(super) fn routes_compact(&mut self, node: &Node, path: &Path) {
        let items: &[Node] = match &node.kind {
            NodeKind::Seq(items) => items,
            _ if node.is_null() => &[],
            _ => {
                self.err(
                    node.mark,
                    path.to_string(),
                    format!("expected a list of route lines, found {}", node.kind_name()),
                    Some("write `- 1.0.0.0/24 via 10.0.1.2` lines".to_string()),
                );
                return;
            }
        };
        for (i, item) in items.iter().enumerate() {
            let NodeKind::Scalar { value, plain } = &item.kind else {
                self.err(
                    item.mark,
                    format!("{path}[{i}]"),
                    format!("expected a route line, found {}", item.kind_name()),
                    Some("write `- 1.0.0.0/24 via 10.0.1.2`".to_string()),
                );
                continue;
            };
            // Quoted scalars start one column after their mark.
            let col0 = item.mark.col + u32::from(!plain);
            let at = |off: usize| Mark {
                line: item.mark.line,
                col: col0 + off as u32,
            };
            let line = value.as_str();
            let Some((ptok, rest, base)) = compact::split_prefix(line) else {
                self.err(item.mark, format!("{path}[{i}]"), "empty route line", None);
                continue;
            };
            let prefix = match compact::parse_prefix(ptok) {
                Ok(p) => Spanned::new(p, at(ptok.1)),
                Err(e) => {
                    self.err(at(e.at), format!("{path}[{i}]"), e.message, e.hint);
                    continue;
                }
            };
            let rest = rest.trim_end();
            let spec = match self.compact_cache.get(rest) {
                Some(&id) => Some(id),
                None => {
                    let before = self.d.error_count();
                    let r = self.compact_spec(rest, base, &at, format!("{path}[{i}]"));
                    if let Some(id) = r.filter(|_| self.d.error_count() == before) {
                        self.compact_cache.insert(rest.to_string(), id);
                    }
                    r
                }
            };
            self.add_prefix(prefix, format!("{path}[{i}]"), spec);
        }
    }

    fn compact_spec(
        &mut self,
        rest: &str,
        base: usize,
        at: &dyn Fn(usize) -> Mark,
        p: String,
    ) -> Option<u32> {
        let (target, ttl) = match compact::parse_target(rest, base) {
            Ok(t) => t,
            Err(CompactError {
                at: off,
                message,
                hint,
            }) => {
                self.err(at(off), p, message, hint);
                return None;
            }
        };
        let kind = match target {
            CompactTarget::Blackhole => KindDraft::Blackhole,
            CompactTarget::Local => KindDraft::Local,
            CompactTarget::NextHops(nhs) => {
                let m = at(nhs[0].via.1);
                let drafts = nhs
                    .into_iter()
                    .map(|n| NhDraft {
                        path: p.clone(),
                        compact: true,
                        via: Spanned::new(n.via.0, at(n.via.1)),
                        port: n.port.map(|(s, o)| Spanned::new(s, at(o))),
                        push: n.push.map(|(ls, o)| {
                            (
                                ls.into_iter()
                                    .map(|(l, lo)| Spanned::new(l, at(lo)))
                                    .collect(),
                                at(o),
                            )
                        }),
                        weight: n.weight.map(|(w, o)| Spanned::new(w, at(o))),
                    })
                    .collect();
                KindDraft::NextHops(drafts, m, p.clone())
            }
        };
        let ttl = TtlDraft {
            pipe: ttl.map(|t| Spanned::new(t.pipe.is_some(), at(t.at))),
            pipe_ttl: ttl.and_then(|t| t.pipe.flatten().map(|n| Spanned::new(n, at(t.at)))),
            path: p,
            compact: true,
        };
        let spec = self.route_spec(&kind, &ttl)?;
        Some(self.intern(spec))
    }

    pub(super) fn mpls(&mut self, node: &Node, path: &Path) {
        for (i, e) in self.d.items::<MplsEntryCfg>(node, path) {
            let base = Path::Index(path, i);
            let l = e.in_label;
            let lp = key(&base, "in_label");
            if !(MIN_UNRESERVED_LABEL..=MAX_LABEL).contains(&l.value) {
                self.err(
                    l.mark,
                    lp,
                    format!(
                        "in_label {} is outside {MIN_UNRESERVED_LABEL}..={MAX_LABEL}",
                        l.value
                    ),
                    Some("labels 0..=15 are reserved; labels are 20 bits".to_string()),
                );
                continue;
            }
            if let Some(first) = self.label_marks.get(&l.value) {
                self.err(
                    l.mark,
                    lp,
                    format!(
                        "duplicate in_label {} (first defined at line {})",
                        l.value, first.line
                    ),
                    Some("an in-label has one entry; use `nexthops` for ECMP".to_string()),
                );
                continue;
            }
            self.label_marks.insert(l.value, l.mark);
            if let Some(spec) = self.label_spec(&base, &e) {
                self.labels.push((l.value, spec));
            }
        }
    }

    fn label_spec(&mut self, base: &Path, e: &MplsEntryCfg) -> Option<LabelSpec> {
        let ttl = self.ttl(&Self::ttl_draft(base, e.ttl_mode, e.pipe_ttl));
        let action = e.action.value;
        if action == MplsAction::PopAndLookup {
            let extra = [
                ("via", e.via.map(|v| v.mark)),
                ("port", e.port.as_ref().map(|v| v.mark)),
                ("push", e.push.as_ref().map(|v| v.mark)),
                ("nexthops", e.nexthops.as_ref().map(|v| v.mark)),
            ];
            for (k, m) in extra {
                if let Some(m) = m {
                    self.err(m, key(base, k), format!("pop_and_lookup takes no `{k}`: the next hop comes from looking up what is below the label"), Some(format!("remove `{k}`, or use `pop` to forward to a next hop")));
                    return None;
                }
            }
            return Some(LabelSpec {
                op: net::fib::LabelOp::PopAndLookup,
                nexthops: Vec::new(),
                ttl: ttl?,
            });
        }
        let kind = self.structured_kind(
            base,
            e.in_label.mark,
            &e.via,
            &e.port,
            &e.push,
            &e.nexthops,
            None,
            None,
            true,
        )?;
        let KindDraft::NextHops(drafts, m, p) = &kind else {
            return None;
        };
        let nhs = self.resolve_nhs(drafts, *m, p)?;
        let ttl = ttl?;
        let mut ok = true;
        let need = |min: usize, what: &str| {
            for (d, n) in drafts.iter().zip(&nhs) {
                if n.labels.len() < min
                    && !(min == 1
                        && d.push
                            .as_ref()
                            .is_some_and(|(s, _)| s.len() == 1 && s[0].value == IMPLICIT_NULL))
                {
                    let mark = d.push.as_ref().map_or(d.via.mark, |(_, m)| *m);
                    self.err(
                        mark,
                        d.field("push"),
                        format!("{what} needs at least {min} out-label(s) in `push`"),
                        Some(format!(
                            "add `push: [{}]` with the label(s) the downstream router expects",
                            if min == 1 {
                                "OUT_LABEL"
                            } else {
                                "OUT_LABEL, INNER_LABEL"
                            }
                        )),
                    );
                    return false;
                }
            }
            true
        };
        let op = match action {
            MplsAction::Swap | MplsAction::SwapAndPush => {
                let min = if action == MplsAction::Swap { 1 } else { 2 };
                ok &= need(min, if min == 1 { "swap" } else { "swap_and_push" });
                let nulls = nhs.iter().filter(|n| n.labels.is_empty()).count();
                if ok && nulls == nhs.len() {
                    // Swap to implicit null is a penultimate-hop pop.
                    net::fib::LabelOp::Pop
                } else if ok && nulls > 0 {
                    self.err(
                        *m,
                        p.clone(),
                        "some next hops swap to implicit null (3) and others to a label",
                        Some(
                            "split this into separate in-labels, or use explicit null (0)"
                                .to_string(),
                        ),
                    );
                    return None;
                } else {
                    net::fib::LabelOp::Swap
                }
            }
            MplsAction::Pop => {
                for (d, n) in drafts.iter().zip(&nhs) {
                    if !n.labels.is_empty() {
                        let mark = d.push.as_ref().map_or(d.via.mark, |(_, m)| *m);
                        self.err(
                            mark,
                            d.field("push"),
                            "pop forwards without pushing labels",
                            Some(
                                "use `action: swap` to replace the label, or remove `push`"
                                    .to_string(),
                            ),
                        );
                        ok = false;
                    }
                }
                net::fib::LabelOp::Pop
            }
            MplsAction::PopAndLookup => unreachable!("handled above"),
        };
        ok.then_some(LabelSpec {
            op,
            nexthops: nhs,
            ttl,
        })
    }
}
