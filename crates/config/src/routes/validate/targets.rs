//! Checks shared by every route form: ports and subnets, out-label stacks, next hops,
//! ECMP sets and TTL modes. Each records its errors and returns `None` on failure.

use net::fib::{Family, TtlMode, DEFAULT_PIPE_TTL, MAX_LABEL, MAX_PUSH, MIN_UNRESERVED_LABEL};

use super::{KindDraft, NhDraft, TtlDraft, Validator, IMPLICIT_NULL, MAX_ECMP, UNKNOWN_PORT};
use crate::de::Spanned;
use crate::routes::{NhSpec, RouteSpec, TargetSpec};
use crate::types::{is_link_local6, Cidr, IpAny};
use crate::yaml::Mark;

impl Validator<'_> {
    // ---- ports and subnets ----------------------------------------------------------

    pub(super) fn subnets_hint(&self) -> String {
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
    pub(super) fn resolve_port(
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

    /// The port an IPv6 neighbor is reached through: a link-local neighbor needs its
    /// port named; a global one must be on a port's IPv6 subnet.
    pub(super) fn resolve_port6(
        &self,
        ip: Spanned<u128>,
        ip_path: String,
        port: Option<Spanned<&str>>,
        port_path: String,
    ) -> Option<u16> {
        let Some(ports) = self.ctx.ports.as_deref() else {
            return Some(UNKNOWN_PORT);
        };
        let shown = std::net::Ipv6Addr::from(ip.value);
        if let Some(p) = ports
            .iter()
            .find(|p| p.addresses6.iter().any(|a| a.addr == ip.value))
        {
            self.err(
                ip.mark,
                ip_path,
                format!("{shown} is this router's own address on port `{}`", p.name),
                Some("use the neighbor's address".to_string()),
            );
            return None;
        }
        let on_subnet = |p: &crate::startup::PortIface| {
            p.addresses6
                .iter()
                .filter(|a| !is_link_local6(a.addr) && a.contains(ip.value))
                .map(|a| a.len)
                .max()
        };
        let ll = is_link_local6(ip.value);
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
                Some(p) if !ll && on_subnet(p).is_none() => {
                    self.err(
                        ip.mark,
                        ip_path,
                        format!("{shown} is not on an IPv6 subnet of port `{}`", p.name),
                        Some(self.subnets6_hint()),
                    );
                    None
                }
                Some(p) => Some(p.id),
            },
            None if ll => {
                self.err(
                    ip.mark,
                    ip_path,
                    format!("{shown} is link-local: say which port reaches it"),
                    Some("add `port: NAME` (`port NAME` on a compact line)".to_string()),
                );
                None
            }
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
                        format!("{shown} is not on any connected IPv6 subnet"),
                        Some(self.subnets6_hint()),
                    );
                    None
                }
            },
        }
    }

    fn subnets6_hint(&self) -> String {
        let ports = self.ctx.ports.as_deref().unwrap_or_default();
        let list: Vec<String> = ports
            .iter()
            .flat_map(|p| {
                p.addresses6
                    .iter()
                    .filter(|a| !is_link_local6(a.addr))
                    .map(move |a| format!("{} ({})", a.network(), p.name))
            })
            .collect();
        if list.is_empty() {
            "no port has a global IPv6 address: add one to `addresses`, or use a link-local next hop with `port`".into()
        } else {
            format!(
                "a next hop must be directly reachable; connected IPv6 subnets: {}",
                list.join(", ")
            )
        }
    }

    // ---- labels -------------------------------------------------------------------

    /// Checks an out-label stack; `[3]` (implicit null) becomes the empty stack. The
    /// explicit nulls (0 for IPv4, 2 for IPv6; anywhere in the stack, RFC 4182) are
    /// refused only at the bottom of a route of the other family: the egress would pop
    /// it and expect the wrong payload. Label entries (`family` None) may swap to either.
    pub(super) fn check_stack(
        &self,
        stack: &[Spanned<u32>],
        mark: Mark,
        path: &str,
        family: Option<Family>,
    ) -> Option<Vec<u32>> {
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
            } else if let Some((null, f)) = (i + 1 == stack.len())
                .then(|| wrong_null(v, family))
                .flatten()
            {
                self.err(
                    l.mark,
                    p(),
                    format!("label {v} at the bottom of an {f} route's stack is the wrong explicit null"),
                    Some(format!(
                        "the egress pops it and expects {}: use {null} (the {f} explicit null)",
                        if v == 0 { "IPv4" } else { "IPv6" }
                    )),
                );
                ok = false;
            } else if !is_explicit_null(v) && v != IMPLICIT_NULL && v < MIN_UNRESERVED_LABEL {
                self.err(
                    l.mark,
                    p(),
                    format!("label {v} is reserved (RFC 3032/7274) and cannot be pushed"),
                    Some(
                        "use 0 or 2 (IPv4/IPv6 explicit null), 3 (implicit null) or a label from 16 up"
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

    /// A next hop of a route of `family` (`None`: a label entry, either family).
    pub(super) fn resolve_nh(&self, nh: &NhDraft, family: Option<Family>) -> Option<NhSpec> {
        let (via, via6) = match nh.via.value {
            IpAny::V4(a) => (a, None),
            IpAny::V6(a) => (0, Some(a)),
        };
        if family == Some(Family::Ipv4) && via6.is_some() {
            self.err(
                nh.via.mark,
                nh.field("via"),
                format!(
                    "an IPv4 route cannot go via the IPv6 address {}",
                    nh.via.value
                ),
                Some("use the neighbor's IPv4 address".to_string()),
            );
            return None;
        }
        let port = match via6 {
            None => self.resolve_port(
                Spanned::new(via, nh.via.mark),
                nh.field("via"),
                nh.port,
                nh.field("port"),
            ),
            Some(a) => self.resolve_port6(
                Spanned::new(a, nh.via.mark),
                nh.field("via"),
                nh.port,
                nh.field("port"),
            ),
        };
        let labels = match &nh.push {
            Some((stack, m)) => self.check_stack(stack, *m, &nh.field("push"), family),
            None => Some(Vec::new()),
        };
        if family == Some(Family::Ipv6)
            && via6.is_none()
            && labels.as_ref().is_some_and(|l| l.is_empty())
        {
            self.err(
                nh.via.mark,
                nh.field("via"),
                format!(
                    "an IPv6 route via the IPv4 address {} must push a label (6PE, RFC 4798)",
                    nh.via.value
                ),
                Some("add `push: [LABEL]` with the label the egress PE bound for IPv6, or use an IPv6 next hop".to_string()),
            );
            return None;
        }
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
        let labels = labels?;
        let payload = match family {
            Some(f) if labels.is_empty() => f,
            _ => Family::Ipv4,
        };
        Some(NhSpec {
            port: port?,
            via,
            via6,
            labels,
            weight: weight?,
            payload,
        })
    }

    pub(super) fn resolve_nhs(
        &self,
        nhs: &[NhDraft],
        mark: Mark,
        path: &str,
        family: Option<Family>,
    ) -> Option<Vec<NhSpec>> {
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
            match self.resolve_nh(nh, family) {
                Some(s) => {
                    if out.iter().any(|o: &NhSpec| {
                        o.via == s.via
                            && o.via6 == s.via6
                            && o.port == s.port
                            && o.labels == s.labels
                    }) {
                        self.err(
                            nh.via.mark,
                            nh.field("via"),
                            format!("next hop {} is listed twice", nh.via.value),
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

    pub(super) fn ttl(&self, t: &TtlDraft) -> Option<TtlMode> {
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

    pub(super) fn route_spec(
        &self,
        kind: &KindDraft,
        ttl: &TtlDraft,
        family: Family,
    ) -> Option<RouteSpec> {
        let ttl = self.ttl(ttl);
        let target = match kind {
            KindDraft::Local => Some(TargetSpec::Local),
            KindDraft::Blackhole => Some(TargetSpec::Blackhole),
            KindDraft::NextHops(nhs, m, p) => self
                .resolve_nhs(nhs, *m, p, Some(family))
                .map(TargetSpec::NextHops),
        };
        Some(RouteSpec {
            target: target?,
            ttl: ttl?,
        })
    }
}

/// IPv4 explicit null (0) or IPv6 explicit null (2).
fn is_explicit_null(label: u32) -> bool {
    label == 0 || label == 2
}

/// For an explicit null at the bottom of a route's stack whose payload is the other
/// family: the right null and the route's family name.
fn wrong_null(label: u32, family: Option<Family>) -> Option<(u32, &'static str)> {
    match (label, family?) {
        (2, Family::Ipv4) => Some((0, "IPv4")),
        (0, Family::Ipv6) => Some((2, "IPv6")),
        _ => None,
    }
}
