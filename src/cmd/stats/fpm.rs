//! The FPM session in `mplsrouter stats`: shown only when the router exports it (the
//! `fpm:` section is on).

use std::fmt::Write;

use super::exposition::Exposition;

/// What one scrape says about the FPM session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fpm {
    pub state: String,
    pub connects: f64,
    pub resyncs: f64,
    pub last_resync: f64,
    pub hold_withdrawals: f64,
    /// (type, count) of messages received.
    pub messages: Vec<(String, f64)>,
    /// (reason, count) of refused input, non-zero only.
    pub errors: Vec<(String, f64)>,
    /// FPM entries live / overridden by the routes file: [ipv4, label].
    pub active: [f64; 2],
    pub overridden: [f64; 2],
}

fn by_label(e: &Exposition, name: &str, label: &str) -> Vec<(String, f64)> {
    e.series(name)
        .filter_map(|s| Some((s.label(label)?.to_string(), s.value)))
        .collect()
}

fn one(e: &Exposition, name: &str, want: &[(&str, &str)]) -> f64 {
    e.series(name)
        .filter(|s| want.iter().all(|(k, v)| s.label(k) == Some(v)))
        .fold(0.0, |a, s| a + s.value)
}

impl Fpm {
    pub fn from_exposition(e: &Exposition) -> Option<Fpm> {
        let state = e
            .series("mplsrouter_fpm_session_state")
            .find(|s| s.value > 0.0)?
            .label("state")?
            .to_string();
        let kinds = ["ipv4", "label"];
        Some(Fpm {
            state,
            connects: one(e, "mplsrouter_fpm_connects_total", &[]),
            resyncs: one(e, "mplsrouter_fpm_resyncs_total", &[]),
            last_resync: one(e, "mplsrouter_fpm_last_resync_timestamp_seconds", &[]),
            hold_withdrawals: one(e, "mplsrouter_fpm_hold_withdrawals_total", &[]),
            messages: by_label(e, "mplsrouter_fpm_messages_total", "type"),
            errors: by_label(e, "mplsrouter_fpm_errors_total", "reason")
                .into_iter()
                .filter(|(_, v)| *v > 0.0)
                .collect(),
            active: kinds.map(|k| {
                one(
                    e,
                    "mplsrouter_fib_entries_by_source",
                    &[("source", "fpm"), ("kind", k)],
                )
            }),
            overridden: kinds.map(|k| one(e, "mplsrouter_fpm_overridden", &[("kind", k)])),
        })
    }

    /// Two lines of text under an `FPM` title.
    pub fn render(&self, out: &mut String, now_unix: f64) {
        let ago = if self.last_resync > 0.0 {
            format!("{:.0} s ago", (now_unix - self.last_resync).max(0.0))
        } else {
            "never".into()
        };
        let list = |v: &[(String, f64)]| {
            let parts: Vec<String> = v.iter().map(|(k, n)| format!("{k} {n:.0}")).collect();
            if parts.is_empty() {
                "none".into()
            } else {
                parts.join(", ")
            }
        };
        let _ = writeln!(
            out,
            "FPM: session {}, {:.0} connects, {:.0} resyncs (last {ago}), {:.0} hold-time withdrawals",
            self.state, self.connects, self.resyncs, self.hold_withdrawals
        );
        let _ = writeln!(
            out,
            "  routes from FPM: {:.0} ipv4, {:.0} labels (overridden by the routes file: {:.0} ipv4, {:.0} labels)",
            self.active[0], self.active[1], self.overridden[0], self.overridden[1]
        );
        let _ = writeln!(out, "  messages: {}", list(&self.messages));
        let _ = writeln!(out, "  errors: {}\n", list(&self.errors));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_only_when_exported_and_with_what_the_scrape_says() {
        let none = Exposition::parse("mplsrouter_fib_labels 3\n").unwrap();
        assert_eq!(Fpm::from_exposition(&none), None);
        let text = "\
mplsrouter_fpm_session_state{state=\"idle\"} 0
mplsrouter_fpm_session_state{state=\"holding\"} 1
mplsrouter_fpm_connects_total 2
mplsrouter_fpm_messages_total{type=\"route_add\"} 7
mplsrouter_fpm_errors_total{reason=\"no_port\"} 1
mplsrouter_fpm_errors_total{reason=\"bad_version\"} 0
mplsrouter_fib_entries_by_source{source=\"fpm\",kind=\"ipv4\"} 5
mplsrouter_fpm_overridden{kind=\"label\"} 1
";
        let f = Fpm::from_exposition(&Exposition::parse(text).unwrap()).unwrap();
        let mut out = String::new();
        f.render(&mut out, 0.0);
        assert!(out.contains("FPM: session holding, 2 connects"), "{out}");
        assert!(out.contains("routes from FPM: 5 ipv4, 0 labels"), "{out}");
        assert!(
            out.contains("overridden by the routes file: 0 ipv4, 1 labels"),
            "{out}"
        );
        assert!(out.contains("errors: no_port 1\n"), "{out}");
        assert!(out.contains("messages: route_add 7"), "{out}");
    }
}
