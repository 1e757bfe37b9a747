//! Semantic checks of a routes file, turning the written model into a [`RouteSet`].
//!
//! Every route form (structured `ipv4`, `routes_compact` line, `prefix_groups` member)
//! is first reduced to a draft carrying source positions, then checked by one code
//! path: labels, ports, subnets, weights, duplicates. Errors are collected, never
//! returned early, so the user sees all of them. Identical targets are interned (a full
//! table has a million prefixes but a handful of distinct targets), and compact lines
//! with an already-seen target text skip target parsing altogether.

use net::fib::{Family, MAX_LABEL, MAX_PUSH, MIN_UNRESERVED_LABEL};

mod targets;

use super::compact::{self, CompactError, CompactTarget};
use super::model::*;
use super::{LabelSpec, Neighbor6Spec, NeighborSpec, RouteContext, RouteSet, RouteSpec};
use crate::de::{Decoder, Path, Spanned};
use crate::types::{AnyCidr, Cidr, Cidr6, FastMap, IpAny};
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
    via: Spanned<IpAny>,
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

pub(crate) struct Validator<'c> {
    d: &'c Decoder,
    ctx: &'c RouteContext,
    max_push: usize,
    specs: Vec<RouteSpec>,
    spec_ids: FastMap<RouteSpec, u32>,
    prefixes: FastMap<Cidr, Mark>,
    ipv4: Vec<(Cidr, u32)>,
    prefixes6: FastMap<Cidr6, Mark>,
    ipv6: Vec<(Cidr6, u32)>,
    labels: Vec<(u32, LabelSpec)>,
    label_marks: FastMap<u32, Mark>,
    neighbors: Vec<NeighborSpec>,
    neighbors6: Vec<Neighbor6Spec>,
    neighbor_marks: FastMap<IpAny, Mark>,
    /// Compact target text -> spec id, for targets that validated cleanly (one map per
    /// family: the same text may be valid for one and not the other).
    compact_cache: FastMap<String, u32>,
    compact_cache6: FastMap<String, u32>,
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
            spec_ids: FastMap::default(),
            prefixes: FastMap::default(),
            ipv4: Vec::new(),
            prefixes6: FastMap::default(),
            ipv6: Vec::new(),
            labels: Vec::new(),
            label_marks: FastMap::default(),
            neighbors: Vec::new(),
            neighbors6: Vec::new(),
            neighbor_marks: FastMap::default(),
            compact_cache: FastMap::default(),
            compact_cache6: FastMap::default(),
        }
    }

    /// A validator that interns into `specs` (the running set's), for the reload fast
    /// path. Duplicate prefixes are only detected among the lines it is given.
    pub(crate) fn seeded(
        d: &'c Decoder,
        ctx: &'c RouteContext,
        specs: &[RouteSpec],
    ) -> Validator<'c> {
        let mut v = Validator::new(d, ctx);
        for s in specs {
            v.intern(s.clone());
        }
        v
    }

    /// The routes added so far and every interned spec.
    pub(crate) fn take_ipv4(self) -> (Vec<(Cidr, u32)>, Vec<RouteSpec>) {
        (self.ipv4, self.specs)
    }

    pub(super) fn finish(self) -> RouteSet {
        RouteSet {
            neighbors: self.neighbors,
            neighbors6: self.neighbors6,
            specs: self.specs,
            ipv4: self.ipv4,
            ipv6: self.ipv6,
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

    /// A route for a port's connected subnet or local address (`what`), either family.
    fn installed_automatically(
        &self,
        mark: Mark,
        path: &dyn Fn() -> String,
        c: impl std::fmt::Display,
        what: &str,
        port: &str,
    ) {
        self.err(
            mark,
            path(),
            format!("{c} is {what} of port `{port}`, which is installed automatically"),
            Some("remove this route".to_string()),
        );
    }

    /// A prefix of either family defined twice (first at line `first`).
    fn duplicate(
        &self,
        mark: Mark,
        path: &dyn Fn() -> String,
        c: impl std::fmt::Display,
        first: u32,
    ) {
        self.err(
            mark,
            path(),
            format!("duplicate prefix {c} (first defined at line {first})"),
            Some("keep one of the two routes; use `nexthops` for ECMP".to_string()),
        );
    }

    /// `path` is rendered only for an error: a full view adds a million prefixes.
    fn add_prefix(&mut self, prefix: Spanned<Cidr>, path: &dyn Fn() -> String, spec: Option<u32>) {
        let c = prefix.value;
        if c.has_host_bits() {
            self.err(
                prefix.mark,
                path(),
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
                    return self.installed_automatically(prefix.mark, path, c, what, &p.name);
                }
            }
        }
        if let Some(first) = self.prefixes.get(&c) {
            return self.duplicate(prefix.mark, path, c, first.line);
        }
        self.prefixes.insert(c, prefix.mark);
        if let Some(id) = spec {
            self.ipv4.push((c, id));
        }
    }

    /// [`Self::add_prefix`] for IPv6.
    fn add_prefix6(
        &mut self,
        prefix: Spanned<Cidr6>,
        path: &dyn Fn() -> String,
        spec: Option<u32>,
    ) {
        let c = prefix.value;
        if c.has_host_bits() {
            self.err(
                prefix.mark,
                path(),
                format!("prefix {c} has host bits set"),
                Some(format!("did you mean {}?", c.network())),
            );
            return;
        }
        if let Some(ports) = &self.ctx.ports {
            for p in ports {
                for a in &p.addresses6 {
                    let what = if c == a.network() && a.len < 128 {
                        "the connected subnet"
                    } else if c.addr == a.addr && c.len == 128 {
                        "the local address"
                    } else {
                        continue;
                    };
                    return self.installed_automatically(prefix.mark, path, c, what, &p.name);
                }
            }
        }
        if let Some(first) = self.prefixes6.get(&c) {
            return self.duplicate(prefix.mark, path, c, first.line);
        }
        self.prefixes6.insert(c, prefix.mark);
        if let Some(id) = spec {
            self.ipv6.push((c, id));
        }
    }

    // ---- sections -----------------------------------------------------------------

    pub(super) fn neighbors(&mut self, node: &Node, path: &Path) {
        for (i, n) in self.d.items::<NeighborCfg>(node, path) {
            let base = Path::Index(path, i);
            let ip = n.ip.value;
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
            let mac = n.mac.value.0;
            match ip {
                IpAny::V4(ip) => {
                    if let Some(port) = self.resolve_port(
                        Spanned::new(ip, n.ip.mark),
                        key(&base, "ip"),
                        port,
                        key(&base, "port"),
                    ) {
                        self.neighbors.push(NeighborSpec { ip, port, mac });
                    }
                }
                IpAny::V6(ip) => {
                    if let Some(port) = self.resolve_port6(
                        Spanned::new(ip, n.ip.mark),
                        key(&base, "ip"),
                        port,
                        key(&base, "port"),
                    ) {
                        self.neighbors6.push(Neighbor6Spec { ip, port, mac });
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn structured_kind<'a>(
        &self,
        base: &Path,
        mark: Mark,
        via: &Option<Spanned<IpAny>>,
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
                        via: *v,
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
                                via: h.via,
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
                .and_then(|k| {
                    let ttl = Self::ttl_draft(&base, r.ttl_mode, r.pipe_ttl);
                    self.route_spec(&k, &ttl, Family::Ipv4)
                })
                .map(|s| self.intern(s));
            self.add_prefix(r.prefix, &|| key(&base, "prefix"), spec);
        }
    }

    pub(super) fn ipv6(&mut self, node: &Node, path: &Path) {
        for (i, r) in self.d.items::<Ipv6RouteCfg>(node, path) {
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
                .and_then(|k| {
                    let ttl = Self::ttl_draft(&base, r.ttl_mode, r.pipe_ttl);
                    self.route_spec(&k, &ttl, Family::Ipv6)
                })
                .map(|s| self.intern(s));
            self.add_prefix6(r.prefix, &|| key(&base, "prefix"), spec);
        }
    }

    pub(super) fn prefix_groups(&mut self, node: &Node, path: &Path) {
        for (i, g) in self.d.items::<PrefixGroupCfg>(node, path) {
            let base = Path::Index(path, i);
            let kind = self.structured_kind(
                &base,
                g.prefixes.mark,
                &g.via,
                &g.port,
                &g.push,
                &g.nexthops,
                g.blackhole,
                None,
                false,
            );
            let mut spec = GroupSpec {
                kind: kind.as_ref(),
                ttl: Self::ttl_draft(&base, g.ttl_mode, g.pipe_ttl),
                v4: None,
                v6: None,
            };
            let spec = &mut spec;
            let pp = key(&base, "prefixes");
            let m = g.prefixes.mark;
            match &g.prefixes.value {
                PrefixList::List(items) => {
                    for (j, s) in items.iter().enumerate() {
                        self.group_prefix(s.value.trim(), s.mark, &|| format!("{pp}[{j}]"), spec);
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
                            self.group_prefix(tok, mark, &|| pp.clone(), spec);
                        }
                    }
                }
            }
        }
    }

    fn group_prefix(
        &mut self,
        tok: &str,
        mark: Mark,
        path: &dyn Fn() -> String,
        spec: &mut GroupSpec,
    ) {
        match compact::parse_any_prefix((tok, 0)) {
            Ok(AnyCidr::V4(c)) => {
                let id = self.group_spec(spec, Family::Ipv4);
                self.add_prefix(Spanned::new(c, mark), path, id)
            }
            Ok(AnyCidr::V6(c)) => {
                let id = self.group_spec(spec, Family::Ipv6);
                self.add_prefix6(Spanned::new(c, mark), path, id)
            }
            Err(e) => self.err(mark, path(), e.message, e.hint),
        }
    }

    /// A group's spec for one family, checked the first time a prefix of that family
    /// needs it (a group may mix families when its target suits both).
    fn group_spec(&mut self, g: &mut GroupSpec, family: Family) -> Option<u32> {
        let slot = match family {
            Family::Ipv4 => &mut g.v4,
            Family::Ipv6 => &mut g.v6,
        };
        if let Some(id) = *slot {
            return id;
        }
        let id = g
            .kind
            .and_then(|k| self.route_spec(k, &g.ttl, family))
            .map(|s| self.intern(s));
        match family {
            Family::Ipv4 => g.v4 = Some(id),
            Family::Ipv6 => g.v6 = Some(id),
        }
        id
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
            self.compact_item(value, item.mark.line, col0, &|| format!("{path}[{i}]"));
        }
    }

    /// One `routes_compact` line whose text starts at `line:col0`.
    pub(crate) fn compact_item(
        &mut self,
        line: &str,
        lno: u32,
        col0: u32,
        path: &dyn Fn() -> String,
    ) {
        let at = |off: usize| Mark {
            line: lno,
            col: col0 + off as u32,
        };
        let Some((ptok, rest, base)) = compact::split_prefix(line) else {
            self.err(at(0), path(), "empty route line", None);
            return;
        };
        let prefix = match compact::parse_any_prefix(ptok) {
            Ok(p) => Spanned::new(p, at(ptok.1)),
            Err(e) => {
                self.err(at(e.at), path(), e.message, e.hint);
                return;
            }
        };
        let family = match prefix.value {
            AnyCidr::V4(_) => Family::Ipv4,
            AnyCidr::V6(_) => Family::Ipv6,
        };
        let rest = rest.trim_end();
        let cache = match family {
            Family::Ipv4 => &self.compact_cache,
            Family::Ipv6 => &self.compact_cache6,
        };
        let spec = match cache.get(rest) {
            Some(&id) => Some(id),
            None => {
                let before = self.d.error_count();
                let r = self.compact_spec(rest, base, &at, path(), family);
                if let Some(id) = r.filter(|_| self.d.error_count() == before) {
                    match family {
                        Family::Ipv4 => &mut self.compact_cache,
                        Family::Ipv6 => &mut self.compact_cache6,
                    }
                    .insert(rest.to_string(), id);
                }
                r
            }
        };
        match prefix.value {
            AnyCidr::V4(c) => self.add_prefix(Spanned::new(c, prefix.mark), path, spec),
            AnyCidr::V6(c) => self.add_prefix6(Spanned::new(c, prefix.mark), path, spec),
        }
    }

    fn compact_spec(
        &mut self,
        rest: &str,
        base: usize,
        at: &dyn Fn(usize) -> Mark,
        p: String,
        family: Family,
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
        let spec = self.route_spec(&kind, &ttl, family)?;
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
                ("payload", e.payload.map(|v| v.mark)),
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
        let mut nhs = self.resolve_nhs(drafts, *m, p, None)?;
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
        ok &= self.set_payload(base, e, op, &mut nhs);
        ok.then_some(LabelSpec {
            op,
            nexthops: nhs,
            ttl,
        })
    }
}

/// A prefix group's target, checked per family on first use.
struct GroupSpec<'k, 'a> {
    kind: Option<&'k KindDraft<'a>>,
    ttl: TtlDraft,
    v4: Option<Option<u32>>,
    v6: Option<Option<u32>>,
}

impl Validator<'_> {
    /// The family a pop exposes: `payload:` if given, else the next hop's family. Only a
    /// pop exposes a packet to its next hop, so only a pop takes `payload`.
    fn set_payload(
        &self,
        base: &Path,
        e: &MplsEntryCfg,
        op: net::fib::LabelOp,
        nhs: &mut [super::NhSpec],
    ) -> bool {
        if op != net::fib::LabelOp::Pop {
            if let Some(p) = e.payload {
                self.err(
                    p.mark,
                    key(base, "payload"),
                    "`payload` only applies to `pop`: a swap keeps labels on the packet",
                    Some("remove `payload`".to_string()),
                );
                return false;
            }
            return true;
        }
        for n in nhs {
            n.payload = match e.payload.map(|p| p.value) {
                Some(PayloadCfg::Ipv4) => Family::Ipv4,
                Some(PayloadCfg::Ipv6) => Family::Ipv6,
                None if n.via6.is_some() => Family::Ipv6,
                None => Family::Ipv4,
            };
        }
        true
    }
}
