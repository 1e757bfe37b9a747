//! `mplsrouter_fpm_*` metric families, read from [`FpmStats`] at scrape time. Registered
//! only when the `fpm:` section is present.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use fpm::{State, ERROR_REASONS, MESSAGE_KINDS};
use prometheus::core::{Collector, Desc};
use prometheus::proto::{Counter, Gauge, LabelPair, Metric, MetricFamily, MetricType};

use super::stats::{FpmStats, KINDS};
use crate::metrics::ControlStats;

const C: MetricType = MetricType::COUNTER;
const G: MetricType = MetricType::GAUGE;

/// (name, help, type, label names).
const FAMILIES: &[(&str, &str, MetricType, &[&str])] = &[
    ("mplsrouter_fpm_session_state", "FPM session state (1 for the current one).", G, &["state"]),
    ("mplsrouter_fpm_connects_total", "FPM connections accepted.", C, &[]),
    ("mplsrouter_fpm_frames_total", "FPM frames received.", C, &[]),
    ("mplsrouter_fpm_messages_total", "Netlink messages received over FPM, by type.", C, &["type"]),
    ("mplsrouter_fpm_errors_total", "FPM input refused, by reason (framing errors close the session; others skip one message).", C, &["reason"]),
    ("mplsrouter_fpm_resyncs_total", "Resyncs completed (stale routes swept after a connect).", C, &[]),
    ("mplsrouter_fpm_stale_swept_total", "Routes withdrawn because a new session did not send them again.", C, &[]),
    ("mplsrouter_fpm_hold_withdrawals_total", "Times the hold time ran out after a disconnect and every FPM route was withdrawn.", C, &[]),
    ("mplsrouter_fpm_last_resync_timestamp_seconds", "Unix time the last resync completed (0: never).", G, &[]),
    ("mplsrouter_fpm_changes_total", "Route and label changes received by the control side.", C, &[]),
    ("mplsrouter_fpm_publishes_total", "Tables published for FPM changes (each coalesces one publish interval).", C, &[]),
    ("mplsrouter_fpm_rejected_total", "FPM changes the table refused (logged).", C, &[]),
    ("mplsrouter_fpm_overridden", "FPM entries hidden because the routes file binds the same prefix or label.", G, &["kind"]),
    ("mplsrouter_fpm_last_publish_latency_seconds", "From reading the oldest change of the last FPM publish off the socket to its table being published.", G, &[]),
    ("mplsrouter_fib_entries_by_source", "Table entries by where they come from (file includes connected, local and learned routes).", G, &["source", "kind"]),
];

/// Collector of the FPM families.
pub struct FpmCollector {
    stats: Arc<FpmStats>,
    control: Arc<ControlStats>,
    descs: Vec<Desc>,
}

struct Fam(MetricFamily);

impl Fam {
    fn new(name: &str) -> Fam {
        let (n, h, t, _) = FAMILIES
            .iter()
            .find(|f| f.0 == name)
            .expect("declared family");
        let mut f = MetricFamily::default();
        f.set_name(n.to_string());
        f.set_help(h.to_string());
        f.set_field_type(*t);
        Fam(f)
    }
    fn add(mut self, labels: &[(&str, &str)], v: f64) -> Fam {
        let pairs = labels
            .iter()
            .map(|(k, v)| {
                let mut l = LabelPair::default();
                l.set_name(k.to_string());
                l.set_value(v.to_string());
                l
            })
            .collect();
        let mut m = Metric::from_label(pairs);
        if self.0.get_field_type() == C {
            let mut c = Counter::default();
            c.set_value(v);
            m.set_counter(c);
        } else {
            let mut g = Gauge::default();
            g.set_value(v);
            m.set_gauge(g);
        }
        self.0.mut_metric().push(m);
        self
    }
}

impl FpmCollector {
    pub fn new(stats: Arc<FpmStats>, control: Arc<ControlStats>) -> FpmCollector {
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
        FpmCollector {
            stats,
            control,
            descs,
        }
    }
}

impl Collector for FpmCollector {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let s = &self.stats;
        let one = |name: &str, v: u64| Fam::new(name).add(&[], v as f64).0;
        let mut state = Fam::new("mplsrouter_fpm_session_state");
        let cur = s.state();
        for st in State::ALL {
            state = state.add(&[("state", st.as_str())], (st == cur) as u8 as f64);
        }
        let mut msgs = Fam::new("mplsrouter_fpm_messages_total");
        for (i, k) in MESSAGE_KINDS.iter().enumerate() {
            msgs = msgs.add(&[("type", k)], s.messages[i].load(Relaxed) as f64);
        }
        let mut errs = Fam::new("mplsrouter_fpm_errors_total");
        for (i, r) in ERROR_REASONS.iter().enumerate() {
            errs = errs.add(&[("reason", r)], s.errors[i].load(Relaxed) as f64);
        }
        let active = s.active.each_ref().map(|a| a.load(Relaxed));
        let fib = [
            self.control.fib_ipv4_routes.load(Relaxed),
            self.control.fib_ipv6_routes.load(Relaxed),
            self.control.fib_labels.load(Relaxed),
        ];
        let mut by_source = Fam::new("mplsrouter_fib_entries_by_source");
        let mut over = Fam::new("mplsrouter_fpm_overridden");
        for (i, kind) in KINDS.iter().enumerate() {
            by_source = by_source
                .add(&[("source", "fpm"), ("kind", kind)], active[i] as f64)
                .add(
                    &[("source", "file"), ("kind", kind)],
                    fib[i].saturating_sub(active[i]) as f64,
                );
            over = over.add(&[("kind", kind)], s.overridden[i].load(Relaxed) as f64);
        }
        vec![
            state.0,
            one("mplsrouter_fpm_connects_total", s.connects.load(Relaxed)),
            one("mplsrouter_fpm_frames_total", s.frames.load(Relaxed)),
            msgs.0,
            errs.0,
            one("mplsrouter_fpm_resyncs_total", s.resyncs.load(Relaxed)),
            one("mplsrouter_fpm_stale_swept_total", s.swept.load(Relaxed)),
            one(
                "mplsrouter_fpm_hold_withdrawals_total",
                s.hold_withdrawals.load(Relaxed),
            ),
            Fam::new("mplsrouter_fpm_last_resync_timestamp_seconds")
                .add(&[], s.last_resync_ms.load(Relaxed) as f64 / 1e3)
                .0,
            one("mplsrouter_fpm_changes_total", s.changes.load(Relaxed)),
            one("mplsrouter_fpm_publishes_total", s.publishes.load(Relaxed)),
            one("mplsrouter_fpm_rejected_total", s.rejected.load(Relaxed)),
            over.0,
            by_source.0,
            Fam::new("mplsrouter_fpm_last_publish_latency_seconds")
                .add(&[], s.last_publish_latency_us.load(Relaxed) as f64 / 1e6)
                .0,
        ]
    }
}
