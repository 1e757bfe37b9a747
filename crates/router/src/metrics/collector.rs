//! Scrape-time summing of worker, port and control counters into metric families.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{
    Bucket, Counter, Gauge, Histogram, LabelPair, Metric, MetricFamily, MetricType,
};

use super::control::{ControlStats, IcmpKind};
use super::slow::{NdpCount, SlowDrop};
use crate::counters::{WorkerCounters, WorkerTotals, BURST_BUCKETS};
use net::pipeline::Family as AddrFamily;

/// Version information exported as `mplsrouter_build_info`.
#[derive(Clone, Debug)]
pub struct BuildInfo {
    pub version: String,
    pub git_rev: String,
    pub dpdk_version: String,
}

/// Everything `/metrics` shows, read at scrape time.
pub struct RouterCollector {
    /// (config name, DPDK port id)
    ports: Vec<(String, u16)>,
    workers: Vec<Arc<WorkerCounters>>,
    drop_names: Vec<&'static str>,
    control: Arc<ControlStats>,
    build: BuildInfo,
    tsc_hz: u64,
    descs: Vec<Desc>,
}

struct Family {
    f: MetricFamily,
}

fn label_pairs(labels: &[(&str, &str)]) -> Vec<LabelPair> {
    labels
        .iter()
        .map(|(k, v)| {
            let mut l = LabelPair::default();
            l.set_name(k.to_string());
            l.set_value(v.to_string());
            l
        })
        .collect()
}

impl Family {
    fn new(name: &str, help: &str, t: MetricType) -> Family {
        let mut f = MetricFamily::default();
        f.set_name(name.to_string());
        f.set_help(help.to_string());
        f.set_field_type(t);
        Family { f }
    }
    fn counter(mut self, labels: &[(&str, &str)], v: f64) -> Family {
        let mut m = Metric::from_label(label_pairs(labels));
        let mut c = Counter::default();
        c.set_value(v);
        m.set_counter(c);
        self.f.mut_metric().push(m);
        self
    }
    fn gauge(mut self, labels: &[(&str, &str)], v: f64) -> Family {
        let mut m = Metric::from_label(label_pairs(labels));
        let mut g = Gauge::default();
        g.set_value(v);
        m.set_gauge(g);
        self.f.mut_metric().push(m);
        self
    }
}

/// (name, help, type, label names) of every family the collector emits.
const FAMILIES: &[(&str, &str, MetricType, &[&str])] = &[
    (
        "mplsrouter_build_info",
        "Build information (value is always 1).",
        MetricType::GAUGE,
        &["version", "git_rev", "dpdk_version"],
    ),
    (
        "mplsrouter_port_rx_packets_total",
        "Packets received by the port (ethdev).",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_tx_packets_total",
        "Packets transmitted by the port (ethdev).",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_rx_bytes_total",
        "Bytes received by the port (ethdev).",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_tx_bytes_total",
        "Bytes transmitted by the port (ethdev).",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_rx_missed_total",
        "Packets the NIC dropped for lack of RX descriptors.",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_rx_nombuf_total",
        "RX mbuf allocation failures.",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_rx_errors_total",
        "Erroneous received packets.",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_tx_errors_total",
        "Failed transmissions.",
        MetricType::COUNTER,
        &["port"],
    ),
    (
        "mplsrouter_port_link_up",
        "1 when the link is up.",
        MetricType::GAUGE,
        &["port"],
    ),
    (
        "mplsrouter_port_link_speed_bytes_per_second",
        "Link speed.",
        MetricType::GAUGE,
        &["port"],
    ),
    (
        "mplsrouter_worker_rx_packets_total",
        "Packets received by the worker.",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_forwarded_packets_total",
        "Packets the worker handed to a PMD and the PMD accepted.",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_tx_refused_packets_total",
        "Packets a PMD refused (TX queue full); freed.",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_injected_packets_total",
        "Frames the slow path generated (ICMP, ARP) that the worker queued for transmission; included in forwarded.",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_slow_path_packets_total",
        "Packets the worker handed to the slow path.",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_busy_cycles_total",
        "TSC cycles spent on polls that received packets.",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_forwarding_cycles_total",
        "TSC cycles spent in the forwarding stage alone (classify, lookups, rewrite).",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_idle_cycles_total",
        "TSC cycles spent on empty polls.",
        MetricType::COUNTER,
        &["worker"],
    ),
    (
        "mplsrouter_worker_cycles_per_packet",
        "Busy cycles per received packet since start.",
        MetricType::GAUGE,
        &["worker"],
    ),
    (
        "mplsrouter_worker_burst_size",
        "Packets per non-empty receive burst.",
        MetricType::HISTOGRAM,
        &["worker"],
    ),
    (
        "mplsrouter_worker_forwarding_burst_cycles_per_packet",
        "Forwarding stage TSC cycles a packet of each full receive burst (burst_size packets), in quarter-cycle steps; the sum adds bucket midpoints.",
        MetricType::HISTOGRAM,
        &["worker"],
    ),
    (
        "mplsrouter_received_packets_total",
        "Packets the data path decided, by family (ipv4, ipv6, mpls, other).",
        MetricType::COUNTER,
        &["worker", "family"],
    ),
    (
        "mplsrouter_forwarded_packets_total",
        "Packets the data path forwarded (queued for transmission), by the family they were received as (ipv4, ipv6, mpls, other).",
        MetricType::COUNTER,
        &["worker", "family"],
    ),
    (
        "mplsrouter_drops_total",
        "Packets dropped by the data path, by reason.",
        MetricType::COUNTER,
        &["worker", "reason"],
    ),
    (
        "mplsrouter_tsc_hz",
        "TSC frequency, to turn cycles into seconds.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_fib_generation",
        "Generation of the forwarding table in use.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_rcu_pending_snapshots",
        "Retired forwarding tables not freed yet (waiting for workers to pass an epoch).",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_fib_ipv4_routes",
        "IPv4 routes in the forwarding table.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_fib_ipv6_routes",
        "IPv6 routes in the forwarding table.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_fib_lpm_bytes",
        "Bytes a lookup can read in each family's longest-prefix-match table.",
        MetricType::GAUGE,
        &["family"],
    ),
    (
        "mplsrouter_fib_labels",
        "Label entries in the forwarding table.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_fib_next_hops",
        "Adjacencies (next hops) in the forwarding table.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_fib_ecmp_groups",
        "ECMP groups in the forwarding table.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_fib_bytes",
        "Approximate bytes held by the forwarding table.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_reloads_total",
        "Routes reloads by result.",
        MetricType::COUNTER,
        &["result"],
    ),
    (
        "mplsrouter_last_good_reload_timestamp_seconds",
        "Unix time of the last successful table load.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_arp_entries",
        "Neighbors learned by ARP (static ones not included).",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_arp_pending",
        "Addresses being resolved by ARP.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_arp_incomplete",
        "Addresses being resolved whose packets the workers drop instead of punting.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_neighbors",
        "Neighbours learned (IPv4 by ARP, IPv6 by NDP; static ones not included), by family.",
        MetricType::GAUGE,
        &["family"],
    ),
    (
        "mplsrouter_neighbor_resolutions",
        "Addresses being resolved (ARP or NDP), by family.",
        MetricType::GAUGE,
        &["family"],
    ),
    (
        "mplsrouter_arp_held_packets",
        "Packets held while their next hop is being resolved.",
        MetricType::GAUGE,
        &[],
    ),
    (
        "mplsrouter_slow_path_packets_total",
        "Packets the slow path took from the punt queue.",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_slow_path_generated_total",
        "Frames the slow path built (ARP, ICMP).",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_slow_path_handled_total",
        "Punted packets the slow path consumed as intended (ARP read, ICMP answered).",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_slow_path_transmitted_total",
        "Frames the slow path handed to a worker to transmit.",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_slow_path_dropped_total",
        "Packets and frames the slow path dropped, by reason.",
        MetricType::COUNTER,
        &["reason"],
    ),
    (
        "mplsrouter_slow_path_queue_drops_total",
        "Punted packets dropped because the slow-path queue was full.",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_slow_path_control_queue_drops_total",
        "Of those, control traffic (ARP, link-local multicast, TCP/UDP/OSPF to the router): its own queue was full.",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_slow_path_ndp_total",
        "NDP messages the slow path received and sent, by message.",
        MetricType::COUNTER,
        &["message"],
    ),
    (
        "mplsrouter_icmp_sent_total",
        "ICMP messages generated by the router, by type.",
        MetricType::COUNTER,
        &["type"],
    ),
    (
        "mplsrouter_icmpv6_sent_total",
        "Of the ICMP messages generated, the ICMPv6 ones, by type.",
        MetricType::COUNTER,
        &["type"],
    ),
    (
        "mplsrouter_icmp_rate_limited_total",
        "ICMP messages suppressed by the rate limiter.",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_control_interface_frames_total",
        "Frames through the control interfaces: up (written to the kernel), down (read from it and queued for transmission).",
        MetricType::COUNTER,
        &["direction"],
    ),
    (
        "mplsrouter_control_interface_up_failed_total",
        "Frames the kernel refused on a control interface (interface gone).",
        MetricType::COUNTER,
        &[],
    ),
    (
        "mplsrouter_control_interface_down_dropped_total",
        "Frames the kernel sent on a control interface that did not go out of the port, by reason.",
        MetricType::COUNTER,
        &["reason"],
    ),
    (
        "mplsrouter_control_interface_recreated_total",
        "Control interfaces deleted from outside and created again.",
        MetricType::COUNTER,
        &[],
    ),
];

impl RouterCollector {
    pub fn new(
        ports: Vec<(String, u16)>,
        workers: Vec<Arc<WorkerCounters>>,
        drop_names: Vec<&'static str>,
        control: Arc<ControlStats>,
        build: BuildInfo,
    ) -> RouterCollector {
        let descs = FAMILIES
            .iter()
            .map(|(n, h, _, l)| {
                Desc::new(
                    n.to_string(),
                    h.to_string(),
                    l.iter().map(|s| s.to_string()).collect(),
                    HashMap::new(),
                )
                .expect("valid metric descriptor")
            })
            .collect();
        RouterCollector {
            ports,
            workers,
            drop_names,
            control,
            build,
            tsc_hz: dpdk::tsc_hz(),
            descs,
        }
    }

    fn fam(&self, name: &str) -> Family {
        let (n, h, t, _) = FAMILIES
            .iter()
            .find(|f| f.0 == name)
            .expect("family declared in FAMILIES");
        Family::new(n, h, *t)
    }

    fn port_families(&self, out: &mut Vec<MetricFamily>) {
        let stats: Vec<_> = self
            .ports
            .iter()
            .map(|(n, id)| {
                (
                    n.as_str(),
                    dpdk::stats(*id).unwrap_or_default(),
                    dpdk::link(*id),
                )
            })
            .collect();
        type Get = fn(&dpdk::PortStats) -> u64;
        let per_port: [(&str, Get); 8] = [
            ("mplsrouter_port_rx_packets_total", |s| s.ipackets),
            ("mplsrouter_port_tx_packets_total", |s| s.opackets),
            ("mplsrouter_port_rx_bytes_total", |s| s.ibytes),
            ("mplsrouter_port_tx_bytes_total", |s| s.obytes),
            ("mplsrouter_port_rx_missed_total", |s| s.imissed),
            ("mplsrouter_port_rx_nombuf_total", |s| s.rx_nombuf),
            ("mplsrouter_port_rx_errors_total", |s| s.ierrors),
            ("mplsrouter_port_tx_errors_total", |s| s.oerrors),
        ];
        for (name, get) in per_port {
            let mut f = self.fam(name);
            for (p, s, _) in &stats {
                f = f.counter(&[("port", p)], get(s) as f64);
            }
            out.push(f.f);
        }
        let mut up = self.fam("mplsrouter_port_link_up");
        let mut speed = self.fam("mplsrouter_port_link_speed_bytes_per_second");
        for (p, _, l) in &stats {
            up = up.gauge(&[("port", p)], l.up as u8 as f64);
            speed = speed.gauge(&[("port", p)], l.speed_mbps as f64 * 1e6 / 8.0);
        }
        out.push(up.f);
        out.push(speed.f);
    }

    fn worker_families(&self, out: &mut Vec<MetricFamily>) {
        let snaps: Vec<(String, WorkerTotals)> = self
            .workers
            .iter()
            .map(|w| (w.lcore.to_string(), w.snapshot()))
            .collect();
        type Get = fn(&WorkerTotals) -> u64;
        let per_worker: [(&str, Get); 8] = [
            ("mplsrouter_worker_rx_packets_total", |w| w.rx_packets),
            ("mplsrouter_worker_forwarded_packets_total", |w| {
                w.tx_packets
            }),
            ("mplsrouter_worker_tx_refused_packets_total", |w| {
                w.tx_refused
            }),
            ("mplsrouter_worker_injected_packets_total", |w| w.injected),
            ("mplsrouter_worker_slow_path_packets_total", |w| w.slow_path),
            ("mplsrouter_worker_busy_cycles_total", |w| w.busy_cycles),
            ("mplsrouter_worker_forwarding_cycles_total", |w| {
                w.forwarding_cycles
            }),
            ("mplsrouter_worker_idle_cycles_total", |w| w.idle_cycles),
        ];
        for (name, get) in per_worker {
            let mut f = self.fam(name);
            for (w, t) in &snaps {
                f = f.counter(&[("worker", w)], get(t) as f64);
            }
            out.push(f.f);
        }
        type ByFamily = fn(&WorkerTotals) -> &[u64; AddrFamily::COUNT];
        let by_family: [(&str, ByFamily); 2] = [
            ("mplsrouter_received_packets_total", |t| {
                &t.received_by_family
            }),
            ("mplsrouter_forwarded_packets_total", |t| {
                &t.forwarded_by_family
            }),
        ];
        for (name, get) in by_family {
            let mut families = self.fam(name);
            for (w, t) in &snaps {
                for f in AddrFamily::ALL {
                    let n = get(t)[f as usize] as f64;
                    families = families.counter(&[("worker", w), ("family", f.as_str())], n);
                }
            }
            out.push(families.f);
        }
        let mut cpp = self.fam("mplsrouter_worker_cycles_per_packet");
        let mut drops = self.fam("mplsrouter_drops_total");
        let mut hist = self.fam("mplsrouter_worker_burst_size");
        for (w, t) in &snaps {
            let v = if t.rx_packets > 0 {
                t.busy_cycles as f64 / t.rx_packets as f64
            } else {
                0.0
            };
            cpp = cpp.gauge(&[("worker", w)], v);
            for (i, reason) in self.drop_names.iter().enumerate() {
                drops = drops.counter(&[("worker", w), ("reason", reason)], t.drops[i] as f64);
            }
            let mut cum = 0;
            let sizes = BURST_BUCKETS.iter().zip(&t.burst_sizes).map(|(&ub, &n)| {
                cum += n;
                (ub as f64, cum)
            });
            hist.f
                .mut_metric()
                .push(worker_histogram(w, sizes, t.bursts, t.rx_packets as f64));
        }
        let mut stage = self.fam("mplsrouter_worker_forwarding_burst_cycles_per_packet");
        for (w, t) in &snaps {
            let h = &t.forwarding_bursts;
            let below = STAGE_LE.iter().map(|&le| (le, h.below(le)));
            stage
                .f
                .mut_metric()
                .push(worker_histogram(w, below, h.count(), h.midpoint_sum()));
        }
        out.extend([cpp.f, drops.f, hist.f, stage.f]);
    }

    fn control_families(&self, out: &mut Vec<MetricFamily>) {
        let c = &self.control;
        let g = |name: &str, v: u64| self.fam(name).gauge(&[], v as f64).f;
        out.push(
            self.fam("mplsrouter_tsc_hz")
                .gauge(&[], self.tsc_hz as f64)
                .f,
        );
        out.push(g(
            "mplsrouter_fib_generation",
            c.fib_generation.load(Relaxed),
        ));
        out.push(g(
            "mplsrouter_fib_ipv4_routes",
            c.fib_ipv4_routes.load(Relaxed),
        ));
        out.push(g(
            "mplsrouter_rcu_pending_snapshots",
            c.rcu_pending.load(Relaxed),
        ));
        out.push(g(
            "mplsrouter_fib_ipv6_routes",
            c.fib_ipv6_routes.load(Relaxed),
        ));
        out.push(
            self.fam("mplsrouter_fib_lpm_bytes")
                .gauge(
                    &[("family", "ipv4")],
                    c.fib_lpm_bytes[0].load(Relaxed) as f64,
                )
                .gauge(
                    &[("family", "ipv6")],
                    c.fib_lpm_bytes[1].load(Relaxed) as f64,
                )
                .f,
        );
        out.push(g("mplsrouter_fib_labels", c.fib_labels.load(Relaxed)));
        out.push(g("mplsrouter_fib_next_hops", c.fib_next_hops.load(Relaxed)));
        out.push(g(
            "mplsrouter_fib_ecmp_groups",
            c.fib_ecmp_groups.load(Relaxed),
        ));
        out.push(g("mplsrouter_fib_bytes", c.fib_bytes.load(Relaxed)));
        out.push(
            self.fam("mplsrouter_reloads_total")
                .counter(&[("result", "ok")], c.reloads_ok.load(Relaxed) as f64)
                .counter(&[("result", "error")], c.reloads_error.load(Relaxed) as f64)
                .f,
        );
        out.push(
            self.fam("mplsrouter_last_good_reload_timestamp_seconds")
                .gauge(&[], c.last_good_reload_ms.load(Relaxed) as f64 / 1e3)
                .f,
        );
        out.push(g("mplsrouter_arp_entries", c.arp_entries.load(Relaxed)));
        out.push(g("mplsrouter_arp_pending", c.arp_pending.load(Relaxed)));
        out.push(g(
            "mplsrouter_arp_incomplete",
            c.arp_incomplete.load(Relaxed),
        ));
        for (name, v) in [
            ("mplsrouter_neighbors", &c.neighbors),
            ("mplsrouter_neighbor_resolutions", &c.resolving),
        ] {
            let f = self.fam(name);
            let f = f.gauge(&[("family", "ipv4")], v[0].load(Relaxed) as f64);
            out.push(f.gauge(&[("family", "ipv6")], v[1].load(Relaxed) as f64).f);
        }
        self.slow_path_families(out);
        out.push(
            self.fam("mplsrouter_slow_path_queue_drops_total")
                .counter(
                    &[],
                    self.workers
                        .iter()
                        .map(|w| w.punt_overflow.load(Relaxed))
                        .sum::<u64>() as f64,
                )
                .f,
        );
        out.push(
            self.fam("mplsrouter_slow_path_control_queue_drops_total")
                .counter(
                    &[],
                    self.workers
                        .iter()
                        .map(|w| w.punt_overflow_control.load(Relaxed))
                        .sum::<u64>() as f64,
                )
                .f,
        );
        let mut icmp = self.fam("mplsrouter_icmp_sent_total");
        for k in IcmpKind::ALL {
            icmp = icmp.counter(
                &[("type", k.as_str())],
                c.icmp_sent[k as usize].load(Relaxed) as f64,
            );
        }
        out.push(icmp.f);
        let mut icmp6 = self.fam("mplsrouter_icmpv6_sent_total");
        for k in IcmpKind::ALL {
            icmp6 = icmp6.counter(
                &[("type", k.as_str())],
                c.icmp6_sent[k as usize].load(Relaxed) as f64,
            );
        }
        out.push(icmp6.f);
        out.push(
            self.fam("mplsrouter_icmp_rate_limited_total")
                .counter(&[], c.icmp_rate_limited.load(Relaxed) as f64)
                .f,
        );
    }
}

impl RouterCollector {
    fn slow_path_families(&self, out: &mut Vec<MetricFamily>) {
        let s = &self.control.slow;
        let c = |name: &str, v: &std::sync::atomic::AtomicU64| {
            self.fam(name).counter(&[], v.load(Relaxed) as f64).f
        };
        out.push(
            self.fam("mplsrouter_arp_held_packets")
                .gauge(&[], s.held.load(Relaxed) as f64)
                .f,
        );
        out.push(c("mplsrouter_slow_path_packets_total", &s.packets));
        out.push(c("mplsrouter_slow_path_generated_total", &s.generated));
        out.push(c("mplsrouter_slow_path_handled_total", &s.handled));
        out.push(c("mplsrouter_slow_path_transmitted_total", &s.transmitted));
        let mut f = self.fam("mplsrouter_slow_path_dropped_total");
        for &r in SlowDrop::ALL {
            f = f.counter(&[("reason", r.as_str())], s.dropped(r) as f64);
        }
        out.push(f.f);
        let mut f = self.fam("mplsrouter_slow_path_ndp_total");
        for k in NdpCount::ALL {
            f = f.counter(
                &[("message", k.as_str())],
                s.ndp[k as usize].load(Relaxed) as f64,
            );
        }
        out.push(f.f);
        self.cpif_families(out);
    }

    fn cpif_families(&self, out: &mut Vec<MetricFamily>) {
        let s = &self.control.cpif;
        out.push(
            self.fam("mplsrouter_control_interface_frames_total")
                .counter(&[("direction", "up")], s.up.load(Relaxed) as f64)
                .counter(&[("direction", "down")], s.down_sent.load(Relaxed) as f64)
                .f,
        );
        let c = |name: &str, v: &std::sync::atomic::AtomicU64| {
            self.fam(name).counter(&[], v.load(Relaxed) as f64).f
        };
        out.push(c(
            "mplsrouter_control_interface_up_failed_total",
            &s.up_failed,
        ));
        out.push(c(
            "mplsrouter_control_interface_recreated_total",
            &s.recreated,
        ));
        let mut f = self.fam("mplsrouter_control_interface_down_dropped_total");
        for &r in crate::cpif::DownDrop::ALL {
            f = f.counter(&[("reason", r.as_str())], s.dropped(r) as f64);
        }
        out.push(f.f);
    }
}

impl Collector for RouterCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let mut out = Vec::with_capacity(FAMILIES.len() + 1);
        out.push(
            self.fam("mplsrouter_build_info")
                .gauge(
                    &[
                        ("version", &self.build.version),
                        ("git_rev", &self.build.git_rev),
                        ("dpdk_version", &self.build.dpdk_version),
                    ],
                    1.0,
                )
                .f,
        );
        self.port_families(&mut out);
        self.worker_families(&mut out);
        self.control_families(&mut out);
        out
    }
}

/// Upper bounds (cycles a packet) of the exported stage histogram's buckets: the worker
/// keeps quarter-cycle buckets ([`crate::stage_hist`]); a scrape gets these few (with
/// `+Inf`, the 16 that `tests/metrics_e2e.rs` allows a histogram).
const STAGE_LE: [f64; 15] = [
    10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 100.0, 120.0, 160.0, 200.0, 250.0,
];

/// One worker's histogram series: `(upper bound, cumulative count)` buckets, then the
/// count and sum.
fn worker_histogram(
    worker: &str,
    buckets: impl Iterator<Item = (f64, u64)>,
    count: u64,
    sum: f64,
) -> Metric {
    let mut h = Histogram::default();
    h.set_bucket(
        buckets
            .map(|(le, cumulative)| {
                let mut b = Bucket::default();
                b.set_upper_bound(le);
                b.set_cumulative_count(cumulative);
                b
            })
            .collect(),
    );
    h.set_sample_count(count);
    h.set_sample_sum(sum);
    let mut m = Metric::from_label(label_pairs(&[("worker", worker)]));
    m.set_histogram(h);
    m
}
