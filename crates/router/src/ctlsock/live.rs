//! The live side of `show ports`, `show workers` and `show table`: ethdev counters and
//! link state by port id, the workers' counters and the control side's table counters.
//! Read-only; the rates come from two samples taken for the request.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use config::startup::PortIface;

use super::board::{NeighborBoard, NeighborEntry};
use super::handle::Live;
use super::live_cp::{self, FpmLive};
use super::proto::{PortView, TableView, WorkerView};
use super::table::mac_str;
use crate::counters::{WorkerCounters, BURST_BUCKETS};
use crate::metrics::ControlStats;

/// How long `show ports` samples the counters for its rates.
const RATE_SAMPLE: Duration = Duration::from_millis(200);

/// The running router, as the control socket reads it.
pub struct LiveRouter {
    pub ports: Vec<PortIface>,
    pub dev_ids: Vec<u16>,
    pub rx_queues: Vec<u16>,
    pub tx_queues: u16,
    /// Per worker: its counters and the `port/queue` names it polls.
    pub workers: Vec<(Arc<WorkerCounters>, Vec<String>)>,
    pub control: Arc<ControlStats>,
    /// The slow path's neighbours.
    pub board: Option<Arc<NeighborBoard>>,
    pub fpm: Option<FpmLive>,
    pub cpif: Option<Arc<crate::cpif::ControlIfaces>>,
    pub port_names: Vec<String>,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl Live for LiveRouter {
    fn ports(&self) -> Vec<PortView> {
        let sample = || -> Vec<dpdk::PortStats> {
            self.dev_ids
                .iter()
                .map(|&d| dpdk::stats(d).unwrap_or_default())
                .collect()
        };
        let (t0, a) = (Instant::now(), sample());
        std::thread::sleep(RATE_SAMPLE);
        let (dt, b) = (t0.elapsed().as_secs_f64(), sample());
        let rate = |x: u64, y: u64| y.saturating_sub(x) as f64 / dt;
        self.ports
            .iter()
            .zip(&self.dev_ids)
            .enumerate()
            .map(|(i, (p, &d))| {
                let link = dpdk::link(d);
                PortView {
                    name: p.name.clone(),
                    link_up: link.up,
                    speed_mbps: link.speed_mbps,
                    mac: mac_str(p.mac),
                    addresses: p.addresses.iter().map(|c| c.to_string()).collect(),
                    mtu: p.mtu,
                    rx_queues: self.rx_queues.get(i).copied().unwrap_or(1),
                    tx_queues: self.tx_queues,
                    rx_packets: b[i].ipackets,
                    tx_packets: b[i].opackets,
                    rx_missed: b[i].imissed,
                    rx_errors: b[i].ierrors,
                    tx_errors: b[i].oerrors,
                    rx_pps: rate(a[i].ipackets, b[i].ipackets),
                    tx_pps: rate(a[i].opackets, b[i].opackets),
                    rx_bps: 8.0 * rate(a[i].ibytes, b[i].ibytes),
                    tx_bps: 8.0 * rate(a[i].obytes, b[i].obytes),
                }
            })
            .collect()
    }

    fn workers(&self) -> Vec<WorkerView> {
        self.workers
            .iter()
            .map(|(c, queues)| {
                let t = c.snapshot();
                WorkerView {
                    lcore: c.lcore,
                    queues: queues.clone(),
                    rx_packets: t.rx_packets,
                    tx_packets: t.tx_packets,
                    forwarded: t.forwarded,
                    dropped: t.dropped(),
                    slow_path: t.slow_path,
                    busy_share: ratio(t.busy_cycles, t.busy_cycles + t.idle_cycles),
                    cycles_per_packet: ratio(t.busy_cycles, t.rx_packets),
                    bursts: t.bursts,
                    packets_per_burst: ratio(t.rx_packets, t.bursts),
                    burst_sizes: BURST_BUCKETS.iter().copied().zip(t.burst_sizes).collect(),
                }
            })
            .collect()
    }

    fn neighbors(&self) -> Option<Arc<Vec<NeighborEntry>>> {
        self.board.as_ref().map(|b| b.read())
    }

    fn fpm(&self) -> super::proto::FpmView {
        self.fpm
            .as_ref()
            .map_or_else(super::proto::FpmView::disabled, live_cp::fpm_view)
    }

    fn interfaces(&self) -> Vec<super::proto::InterfaceView> {
        self.cpif
            .as_ref()
            .map(|c| live_cp::interfaces_view(c, &self.port_names))
            .unwrap_or_default()
    }

    fn table(&self) -> TableView {
        let c = &self.control;
        TableView {
            generation: c.fib_generation.load(Relaxed),
            ipv4_routes: c.fib_ipv4_routes.load(Relaxed),
            ipv6_routes: c.fib_ipv6_routes.load(Relaxed),
            lpm4_bytes: c.fib_lpm_bytes[0].load(Relaxed),
            lpm6_bytes: c.fib_lpm_bytes[1].load(Relaxed),
            labels: c.fib_labels.load(Relaxed),
            next_hops: c.fib_next_hops.load(Relaxed),
            ecmp_groups: c.fib_ecmp_groups.load(Relaxed),
            bytes: c.fib_bytes.load(Relaxed),
            reloads_ok: c.reloads_ok.load(Relaxed),
            reloads_error: c.reloads_error.load(Relaxed),
            last_good_reload_ms: c.last_good_reload_ms.load(Relaxed),
            rcu_pending: c.rcu_pending.load(Relaxed),
        }
    }
}
