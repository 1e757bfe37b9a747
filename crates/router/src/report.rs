//! The once-per-interval counters line and the final summary, on stdout.
//!
//! Rates are over the real time since the previous line (a stalled process prints one
//! line with the rate over the whole stall, never a burst of catch-up lines: see
//! [`next_tick`]). Counts are differences of monotonic counters, never of two different
//! counters (which could wrap).

use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// When the line after the one due at `due` is due: one interval later, or, when the
/// process was stalled past that (SIGSTOP, an overloaded host), one interval from `now`,
/// so missed lines are skipped rather than printed in a burst.
pub fn next_tick(due: Instant, interval: Duration, now: Instant) -> Instant {
    let next = due + interval;
    if next > now {
        next
    } else {
        now + interval
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
        let mut w = WorkerTotals::default();
        for c in counters {
            w.add(&c.snapshot());
        }
        let ports: Vec<PortStats> = self
            .dev_ids
            .iter()
            .map(|&d| dpdk::stats(d).unwrap_or_default())
            .collect();
        println!("{}", self.format_line(at, &ports, &w));
    }

    /// The text of [`Reporter::line`] for these counters, remembered for the next line.
    pub fn format_line(&mut self, at: Duration, ports: &[PortStats], w: &WorkerTotals) -> String {
        let secs = at.saturating_sub(self.last_at).as_secs_f64();
        let mut parts = Vec::new();
        for (i, st) in ports.iter().enumerate() {
            let prev = self.last_ports[i];
            parts.push(format!(
                "{} rx {:.3} tx {:.3} Mpps",
                self.names[i],
                mpps(st.ipackets.saturating_sub(prev.ipackets), secs),
                mpps(st.opackets.saturating_sub(prev.opackets), secs)
            ));
            self.last_ports[i] = *st;
        }
        let last = &self.last_workers;
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let drops: Vec<u64> = w
            .drops
            .iter()
            .zip(last.drops.iter())
            .map(|(a, b)| d(*a, *b))
            .collect();
        let forwarded = d(w.forwarded, last.forwarded);
        let text = format!(
            "[{:>7.1}s] {} | forwarded {} ({:.3} Mpps) dropped {} [{}] slow-path {} (queue full {}) generated {}",
            at.as_secs_f64(),
            parts.join(" | "),
            forwarded,
            mpps(forwarded, secs),
            d(w.dropped(), last.dropped()),
            self.drops_text(&drops),
            d(w.slow_path, last.slow_path),
            d(w.punt_overflow, last.punt_overflow),
            d(w.injected, last.injected),
        );
        self.last_workers = *w;
        self.last_at = at;
        text
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
            "workers: received {} forwarded {} tx-refused {} dropped {} [{}] slow-path {} slow-path-queue-full {} (control {}) generated {} busy cycles/pkt {:.1} forwarding cycles/pkt {:.1} ({})",
            w.rx_packets,
            w.forwarded,
            w.tx_refused,
            w.dropped(),
            self.drops_text(&w.drops),
            w.slow_path,
            w.punt_overflow,
            w.punt_overflow_control,
            w.injected,
            cpp,
            if w.rx_packets > 0 {
                w.forwarding_cycles as f64 / w.rx_packets as f64
            } else {
                0.0
            },
            w.forwarding_bursts.summary()
        );
        println!("mbufs not returned to the pool: {leaked}");
        println!("mbufs unaccounted for by the workers: {}", w.unaccounted());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reporter() -> Reporter {
        Reporter::new(vec![], vec![], |_| Some("x"))
    }

    #[test]
    fn forwarded_is_its_own_counter_and_never_wraps() {
        let mut r = reporter();
        // The PMD refused the injected frames: fewer sent than injected. The old line
        // printed tx_packets - injected, which wrapped to 18446744073709551573.
        let w = WorkerTotals {
            tx_packets: 2,
            tx_refused: 45,
            injected: 45,
            forwarded: 2,
            ..WorkerTotals::default()
        };
        let l = r.format_line(Duration::from_secs(1), &[], &w);
        assert!(l.contains("forwarded 2 (0.000 Mpps)"), "{l}");
        let w2 = WorkerTotals {
            forwarded: 1_000_002,
            ..w
        };
        let l = r.format_line(Duration::from_secs(2), &[], &w2);
        assert!(l.contains("forwarded 1000000 (1.000 Mpps)"), "{l}");
    }

    #[test]
    fn a_stall_skips_missed_lines_and_the_rate_spans_the_real_time() {
        let t0 = Instant::now();
        let iv = Duration::from_secs(1);
        assert_eq!(next_tick(t0, iv, t0), t0 + iv);
        // Woken 5.5 intervals late (SIGSTOP): the next line is one interval from now,
        // not five immediate catch-up lines.
        let now = t0 + Duration::from_millis(5500);
        assert_eq!(next_tick(t0, iv, now), now + iv);
        // The one line after the stall divides by the real 5.5 s.
        let mut r = reporter();
        let w = WorkerTotals {
            forwarded: 11_000_000,
            ..WorkerTotals::default()
        };
        let l = r.format_line(Duration::from_millis(5500), &[], &w);
        assert!(l.contains("(2.000 Mpps)"), "{l}");
    }
}
