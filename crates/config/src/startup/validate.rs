//! Semantic checks of a decoded startup config: ports, addresses, queues, workers,
//! pools. Every problem is recorded with its position; nothing stops at the first.

use super::*;

pub(super) fn validate(
    d: &Decoder,
    cfg: &StartupConfig,
    root: &Node,
    port_idx: &[usize],
    worker_idx: &[usize],
) {
    let ports_p = Path::Key(&Path::Root, "ports");
    if let Some(l) = &cfg.eal.lcores {
        if parse_lcores(&l.value).is_none_or(|v| v.is_empty()) {
            d.error(
                l.mark,
                &Path::Key(&Path::Key(&Path::Root, "eal"), "lcores"),
                format!("`{}` is not an lcore list", l.value),
                Some(
                    "write e.g. `0-3` or `0,2,4` (the first is the main lcore), or \
                     `0@0,1@1,2@1` to place lcores on CPUs (more lcores than CPUs)"
                        .into(),
                ),
            );
        }
    }
    validate_arp(d, cfg, root);
    super::punt::validate(d, &cfg.punt, root);
    if cfg.mempool.cache > 512 {
        let m = root
            .get("mempool")
            .and_then(|n| n.get("cache"))
            .map(|n| n.mark)
            .unwrap_or_default();
        d.error(
            m,
            &Path::Key(&Path::Key(&Path::Root, "mempool"), "cache"),
            format!("mempool cache {} exceeds DPDK's limit", cfg.mempool.cache),
            Some("use at most 512".into()),
        );
    }
    if let Some(size) = cfg.mempool.size {
        let need = cfg.mempool_needed();
        if size < need {
            let m = root
                .get("mempool")
                .and_then(|n| n.get("size"))
                .map(|n| n.mark)
                .unwrap_or_default();
            d.error(
                m,
                &Path::Key(&Path::Key(&Path::Root, "mempool"), "size"),
                format!(
                    "mempool size {size} cannot fill the {need} RX/TX descriptors and lcore caches"
                ),
                Some(format!(
                    "use at least {} (or remove `size` for an automatic one)",
                    (need + 1).next_power_of_two() - 1
                )),
            );
        }
    }
    if let IdlePolicy::Backoff { min_us, max_us, .. } = cfg.idle {
        if min_us == 0 || min_us > max_us {
            let m = root.get("idle").map(|n| n.mark).unwrap_or_default();
            d.error(
                m,
                &Path::Key(&Path::Root, "idle"),
                format!("backoff min_us {min_us} must be >= 1 and <= max_us {max_us}"),
                None,
            );
        }
    }
    let mut addrs: Vec<(Cidr, usize)> = Vec::new();
    let mut addrs6: Vec<(Cidr6, usize)> = Vec::new();
    for (i, p) in cfg.ports.iter().enumerate() {
        let pp = Path::Index(&ports_p, port_idx[i]);
        if cfg.ports[..i].iter().any(|q| q.name.value == p.name.value) {
            d.error(
                p.name.mark,
                &Path::Key(&pp, "name"),
                format!("duplicate port name `{}`", p.name.value),
                Some("give every port its own name".into()),
            );
        }
        if p.name.value.is_empty() || p.name.value.contains(char::is_whitespace) {
            d.error(
                p.name.mark,
                &Path::Key(&pp, "name"),
                "port names must be non-empty and without spaces",
                None,
            );
        }
        validate_control_interface(d, cfg, i, &pp);
        validate_link_local6(d, cfg, i, &pp);
        match (&p.pci, &p.vdev) {
            (Some(_), Some(v)) => d.error(
                v.mark,
                &Path::Key(&pp, "vdev"),
                "a port has either `pci` or `vdev`, not both",
                Some("remove one of them".into()),
            ),
            (None, None) => d.error(
                p.name.mark,
                &pp,
                format!("port `{}` has neither `pci` nor `vdev`", p.name.value),
                Some(
                    "add `pci: 0000:01:00.0` (a NIC) or `vdev: net_null0` (a virtual device)"
                        .into(),
                ),
            ),
            (Some(pci), None) if !is_pci_address(&pci.value) => d.error(
                pci.mark,
                &Path::Key(&pp, "pci"),
                format!("`{}` is not a PCI address", pci.value),
                Some("write DOMAIN:BUS:DEVICE.FUNCTION, e.g. 0000:01:00.0".into()),
            ),
            (None, Some(v)) if !v.value.starts_with("net_") => d.error(
                v.mark,
                &Path::Key(&pp, "vdev"),
                format!("`{}` is not a network vdev", v.value),
                Some(
                    "vdev names start with the driver, e.g. net_null0, net_pcap0,rx_pcap=in.pcap"
                        .into(),
                ),
            ),
            _ => {}
        }
        if !(68..=9600).contains(&p.mtu.value) {
            d.error(
                p.mtu.mark,
                &Path::Key(&pp, "mtu"),
                format!("mtu {} is out of range", p.mtu.value),
                Some("use 68..=9600 (1500 for standard Ethernet)".into()),
            );
        }
        for (key, q) in [("rx_queues", Some(p.rx_queues)), ("tx_queues", p.tx_queues)] {
            if let Some(q) = q {
                if q.value == 0 || q.value > 128 {
                    d.error(
                        q.mark,
                        &Path::Key(&pp, key),
                        format!("{key} must be in 1..=128"),
                        None,
                    );
                }
            }
        }
        for (key, q) in [("rx_desc", p.rx_desc), ("tx_desc", p.tx_desc)] {
            if !(32..=32768).contains(&q.value) || !q.value.is_power_of_two() {
                d.error(
                    q.mark,
                    &Path::Key(&pp, key),
                    format!("{key} {} must be a power of two in 32..=32768", q.value),
                    Some("1024 is a good default".into()),
                );
            }
        }
        for (j, a) in p.addresses.iter().enumerate() {
            let ap = Path::Index(&Path::Key(&pp, "addresses"), j);
            let a = match a.value {
                AnyCidr::V4(c) => Spanned::new(c, a.mark),
                AnyCidr::V6(c) => {
                    check_address6(d, Spanned::new(c, a.mark), &ap, i, &mut addrs6, cfg);
                    continue;
                }
            };
            if a.value.len == 0 || (a.value.len < 31 && !a.value.has_host_bits()) {
                d.error(
                    a.mark,
                    &ap,
                    format!(
                        "{} is a network address, not an address of this router",
                        a.value
                    ),
                    Some(
                        "write the router's own address with the subnet length, e.g. 10.0.0.1/24"
                            .into(),
                    ),
                );
            }
            for (b, owner) in &addrs {
                let overlap =
                    b.network().contains(a.value.addr) || a.value.network().contains(b.addr);
                if overlap {
                    d.error(
                        a.mark,
                        &ap,
                        format!(
                            "{} overlaps {} on port `{}`",
                            a.value, b, cfg.ports[*owner].name.value
                        ),
                        Some("each connected subnet must belong to one port".into()),
                    );
                }
            }
            addrs.push((a.value, i));
        }
    }
    let Some(workers) = &cfg.workers_config else {
        if cfg.lcores().len() < 2 {
            if let Some(l) = &cfg.eal.lcores {
                d.error(
                    l.mark,
                    &Path::Key(&Path::Key(&Path::Root, "eal"), "lcores"),
                    format!("`{}` leaves no lcore for the default worker", l.value),
                    Some(
                        "list at least two lcores: the main one, then the worker's (e.g. 0-1)"
                            .into(),
                    ),
                );
            }
        }
        return;
    };
    let wp = Path::Key(&Path::Root, "workers");
    let lcores = cfg.lcores();
    let mut polled: Vec<(u16, u16)> = Vec::new();
    for (i, w) in workers.iter().enumerate() {
        let p = Path::Index(&wp, worker_idx[i]);
        if workers[..i].iter().any(|x| x.lcore.value == w.lcore.value) {
            d.error(
                w.lcore.mark,
                &Path::Key(&p, "lcore"),
                format!("lcore {} has two workers", w.lcore.value),
                Some("merge their `rx` lists".into()),
            );
        }
        if lcores.first() == Some(&w.lcore.value) {
            d.error(
                w.lcore.mark,
                &Path::Key(&p, "lcore"),
                format!(
                    "lcore {} is the EAL main lcore (control thread)",
                    w.lcore.value
                ),
                Some("use another lcore from eal.lcores".into()),
            );
        } else if !lcores.is_empty() && !lcores.contains(&w.lcore.value) {
            d.error(
                w.lcore.mark,
                &Path::Key(&p, "lcore"),
                format!("lcore {} is not in eal.lcores", w.lcore.value),
                Some("add it to eal.lcores".into()),
            );
        }
        for (j, q) in w.rx.iter().enumerate() {
            let qp = Path::Index(&Path::Key(&p, "rx"), j);
            match cfg.port_id(&q.port.value) {
                None => d.error(
                    q.port.mark,
                    &Path::Key(&qp, "port"),
                    format!("unknown port `{}`", q.port.value),
                    Some(port_names_hint(cfg)),
                ),
                Some(pid) => {
                    let nq = cfg.ports[pid as usize].rx_queues.value;
                    if q.queue.value >= nq {
                        d.error(
                            q.queue.mark,
                            &Path::Key(&qp, "queue"),
                            format!(
                                "port `{}` has {nq} RX queue(s); queue {} does not exist",
                                q.port.value, q.queue.value
                            ),
                            Some(format!("use 0..{nq} or raise ports[].rx_queues")),
                        );
                    } else if polled.contains(&(pid, q.queue.value)) {
                        d.error(
                            q.queue.mark,
                            &qp,
                            format!(
                                "queue {} of port `{}` is polled twice",
                                q.queue.value, q.port.value
                            ),
                            Some("each RX queue belongs to exactly one worker".into()),
                        );
                    } else {
                        polled.push((pid, q.queue.value));
                    }
                }
            }
        }
    }
    let wmark = root.get("workers").map(|n| n.mark).unwrap_or_default();
    if workers.is_empty() {
        d.error(
            wmark,
            &wp,
            "no workers",
            Some("remove `workers` to get one worker polling every queue".into()),
        );
    }
    for (pid, p) in cfg.ports.iter().enumerate() {
        for q in 0..p.rx_queues.value {
            if !polled.contains(&(pid as u16, q)) {
                d.error(wmark, &wp, format!("RX queue {q} of port `{}` is polled by no worker (its packets would be dropped)", p.name.value), Some("add it to a worker's `rx` list or lower rx_queues".into()));
            }
        }
        if let Some(t) = p.tx_queues {
            if (t.value as usize) < workers.len() {
                d.error(t.mark, &Path::Key(&Path::Index(&ports_p, port_idx[pid]), "tx_queues"), format!("{} TX queue(s) for {} workers", t.value, workers.len()), Some("every worker needs its own TX queue on every port; remove tx_queues for the default".into()));
            }
        }
    }
}

/// `arp:` must allow at least one learned neighbor and trust it for at least a second
/// (a shorter time would probe every neighbor all the time).
fn validate_arp(d: &Decoder, cfg: &StartupConfig, root: &Node) {
    let checks = [
        (
            "max_entries",
            cfg.arp.max_entries == 0,
            "use at least 1 (the default is 4096)",
        ),
        (
            "reachable_ms",
            cfg.arp.reachable_ms < 1000,
            "use at least 1000 (the default is 30000)",
        ),
    ];
    for (key, bad, hint) in checks {
        if bad {
            let m = root
                .get("arp")
                .and_then(|n| n.get(key))
                .map(|n| n.mark)
                .unwrap_or_default();
            d.error(
                m,
                &Path::Key(&Path::Key(&Path::Root, "arp"), key),
                format!("arp.{key} is too small"),
                Some(hint.into()),
            );
        }
    }
}

/// Linux's limit on interface names (IFNAMSIZ - 1).
const IFNAME_MAX: usize = 15;

/// `link_local6`: a unicast address of fe80::/10.
fn validate_link_local6(d: &Decoder, cfg: &StartupConfig, i: usize, pp: &Path) {
    let Some(v) = &cfg.ports[i].link_local6 else {
        return;
    };
    let what = match crate::types::parse_ipv6(&v.value) {
        None => "is not an IPv6 address",
        Some(a) if !crate::types::is_link_local6(a) => "is not a link-local address (fe80::/10)",
        Some(_) => return,
    };
    d.error(
        v.mark,
        &Path::Key(pp, "link_local6"),
        format!("`{}` {what}", v.value),
        Some("write one of fe80::/10 without a length, e.g. fe80::1, or leave `link_local6` out for the EUI-64 address from the port's MAC".into()),
    );
}

/// `control_interface`: a valid Linux interface name, used by one port only.
fn validate_control_interface(d: &Decoder, cfg: &StartupConfig, i: usize, pp: &Path) {
    let Some(c) = &cfg.ports[i].control_interface else {
        return;
    };
    let at = Path::Key(pp, "control_interface");
    let n = &c.value;
    let bad_char = n
        .chars()
        .any(|ch| ch == '/' || ch == ':' || ch.is_whitespace() || ch.is_control());
    if n.is_empty() || n.len() > IFNAME_MAX || bad_char || n == "." || n == ".." {
        d.error(
            c.mark,
            &at,
            format!("`{n}` is not a Linux interface name"),
            Some(format!(
                "use 1 to {IFNAME_MAX} bytes without spaces, `/` or `:`, e.g. mr-{}",
                cfg.ports[i].name.value
            )),
        );
    }
    let earlier = cfg.ports[..i]
        .iter()
        .find(|q| q.control_interface.as_ref().is_some_and(|o| o.value == *n));
    if let Some(q) = earlier {
        d.error(
            c.mark,
            &at,
            format!("control interface `{n}` is also port `{}`'s", q.name.value),
            Some("give every port its own control interface".into()),
        );
    }
}

fn port_names_hint(cfg: &StartupConfig) -> String {
    let names: Vec<&str> = cfg.ports.iter().map(|p| p.name.value.as_str()).collect();
    format!("known ports: {}", names.join(", "))
}

fn is_pci_address(s: &str) -> bool {
    // [DOMAIN:]BUS:DEVICE.FUNCTION, all hex.
    let parts: Vec<&str> = s.split(':').collect();
    let (bus_dev, dom_ok) = match parts.as_slice() {
        [d, b, rest] => (
            Some((*b, *rest)),
            d.len() == 4 && d.chars().all(|c| c.is_ascii_hexdigit()),
        ),
        [b, rest] => (Some((*b, *rest)), true),
        _ => (None, false),
    };
    let Some((bus, rest)) = bus_dev else {
        return false;
    };
    let Some((dev, func)) = rest.split_once('.') else {
        return false;
    };
    let hex = |x: &str, n: usize| x.len() == n && x.chars().all(|c| c.is_ascii_hexdigit());
    dom_ok
        && hex(bus, 2)
        && hex(dev, 2)
        && func.len() == 1
        && func.chars().all(|c| ('0'..='7').contains(&c))
}

/// An IPv6 port address: a host address with its subnet length, not overlapping another
/// port's subnet. Link-local subnets (fe80::/64 on every port) may repeat across ports.
fn check_address6(
    d: &Decoder,
    a: Spanned<Cidr6>,
    ap: &Path,
    port: usize,
    seen: &mut Vec<(Cidr6, usize)>,
    cfg: &StartupConfig,
) {
    let c = a.value;
    if c.len == 0 || (c.len < 127 && !c.has_host_bits()) {
        d.error(
            a.mark,
            ap,
            format!("{c} is a network address, not an address of this router"),
            Some(
                "write the router's own address with the subnet length, e.g. 2001:db8:1::1/64"
                    .into(),
            ),
        );
    }
    let ll = crate::types::is_link_local6(c.addr);
    for (b, owner) in seen.iter() {
        let overlap = b.network().contains(c.addr) || c.network().contains(b.addr);
        let both_ll = ll && crate::types::is_link_local6(b.addr);
        if both_ll && (*owner != port || b.addr != c.addr) {
            continue;
        }
        if overlap {
            d.error(
                a.mark,
                ap,
                format!(
                    "{c} overlaps {b} on port `{}`",
                    cfg.ports[*owner].name.value
                ),
                Some("each connected subnet must belong to one port".into()),
            );
        }
    }
    seen.push((c, port));
}
