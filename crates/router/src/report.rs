//! The once-per-interval counters line and the final summary, on stdout.

use std::sync::Arc;
use std::time::Duration;

use dpdk::PortStats;

use crate::counters::{WorkerCounters, WorkerTotals};

/// Turns counter snapshots into rates between two lines.
pub struct Reporter {
    names: Vec<String>,
    dev_ids: Vec<u16>,
    drop_name: fn(usize) -> Option<&'static str>,
    last_ports: Vec<PortStats>,
    last_workers: WorkerTotals,
    last_at: Duration,
}

fn mpps(pkts: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        pkts as f64 / secs / 1e6
    } else {
        0.0
    }
}

impl Reporter {
    pub fn new(
        names: Vec<String>,
        dev_ids: Vec<u16>,
        drop_name: fn(usize) -> Option<&'static str>,
    ) -> Reporter {
        let n = names.len();
        Reporter {
            names,
            dev_ids,
            drop_name,
            last_ports: vec![PortStats::default(); n],
            last_workers: WorkerTotals::default(),
            last_at: Duration::ZERO,
        }
    }

    fn drops_text(&self, drops: &[u64]) -> String {
        let parts: Vec<String> = drops
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, n)| format!("{}={n}", (self.drop_name)(i).unwrap_or("other")))
            .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(" ")
        }
    }

    /// One line of rates since the previous line.
    pub fn line(&mut self, at: Duration, counters: &[Arc<WorkerCounters>]) {
        let secs = (at - self.last_at).as_secs_f64();
        let mut w = WorkerTotals::default();
        for c in counters {
            w.add(&c.snapshot());
        }
        let mut parts = Vec::new();
        for (i, &dev) in self.dev_ids.iter().enumerate() {
            let st = dpdk::stats(dev).unwrap_or_default();
            let prev = self.last_ports[i];
            parts.push(format!(
                "{} rx {:.3} tx {:.3} Mpps",
                self.names[i],
                mpps(st.ipackets.saturating_sub(prev.ipackets), secs),
                mpps(st.opackets.saturating_sub(prev.opackets), secs)
            ));
            self.last_ports[i] = st;
        }
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let drops: Vec<u64> = w
            .drops
            .iter()
            .zip(self.last_workers.drops.iter())
            .map(|(a, b)| a - b)
            .collect();
        println!(
            "[{:>7.1}s] {} | forwarded {} ({:.3} Mpps) dropped {} [{}] slow-path {} (queue full {})",
            at.as_secs_f64(),
            parts.join(" | "),
            d(w.tx_packets - w.injected, self.last_workers.tx_packets - self.last_workers.injected),
            mpps(
                d(w.tx_packets - w.injected, self.last_workers.tx_packets - self.last_workers.injected),
                secs
            ),
            d(w.dropped(), self.last_workers.dropped()),
            self.drops_text(&drops),
            d(w.slow_path, self.last_workers.slow_path),
            d(w.punt_overflow, self.last_workers.punt_overflow),
        );
        self.last_workers = w;
        self.last_at = at;
    }

    /// The final summary after shutdown.
    pub fn summary(
        &self,
        elapsed: Duration,
        w: &WorkerTotals,
        ports: &[(String, PortStats)],
        leaked: u32,
    ) {
        println!(
            "--- mplsrouter stopped after {:.1}s ---",
            elapsed.as_secs_f64()
        );
        for (name, st) in ports {
            println!(
                "port {name}: rx {} pkts {} bytes, tx {} pkts {} bytes, missed {}, rx errors {}, tx errors {}, rx no-mbuf {}",
                st.ipackets, st.ibytes, st.opackets, st.obytes, st.imissed, st.ierrors, st.oerrors, st.rx_nombuf
            );
        }
        let cpp = if w.rx_packets > 0 {
            w.busy_cycles as f64 / w.rx_packets as f64
        } else {
            0.0
        };
        println!(
            "workers: received {} forwarded {} tx-refused {} dropped {} [{}] slow-path {} slow-path-queue-full {} generated {} busy cycles/pkt {:.1} forwarding cycles/pkt {:.1}",
            w.rx_packets,
            w.tx_packets - w.injected,
            w.tx_refused,
            w.dropped(),
            self.drops_text(&w.drops),
            w.slow_path,
            w.punt_overflow,
            w.injected,
            cpp,
            if w.rx_packets > 0 {
                w.forwarding_cycles as f64 / w.rx_packets as f64
            } else {
                0.0
            }
        );
        println!("mbufs not returned to the pool: {leaked}");
    }
}
