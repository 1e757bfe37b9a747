//! `mplsrouter stats [--url URL] [--watch [SECONDS]]`: the live counters of a running
//! router as a table, read from its `/metrics` endpoint (like VPP's `show runtime`).
//!
//! Only reads the endpoint: it never talks to DPDK, so it runs as any user, next to the
//! router or from another host that can reach `metrics_listen`.

mod exposition;
mod fetch;
mod fpm;
mod table;

use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use clap::Args;

use exposition::Exposition;
use table::Snapshot;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The router's metrics endpoint (`metrics_listen` in the startup config).
    #[arg(long, default_value = "http://127.0.0.1:9550/metrics")]
    pub url: String,
    /// Refresh every SECONDS (default 1) until Ctrl-C, with rates since the last refresh.
    #[arg(long, value_name = "SECONDS", num_args = 0..=1, default_missing_value = "1")]
    pub watch: Option<f64>,
}

/// Clears the terminal and homes the cursor (ANSI).
const CLEAR: &str = "\x1b[H\x1b[2J";

fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Fetches and reads one scrape.
fn scrape(url: &str, timeout: Duration) -> Result<Snapshot> {
    let text = fetch::get(url, timeout)?;
    let e = Exposition::parse(&text)
        .with_context(|| format!("{url} is not in the Prometheus text format"))?;
    if !e.samples.iter().any(|s| s.name.starts_with("mplsrouter_")) {
        bail!("{url} serves no mplsrouter_ metrics: is it the router's metrics endpoint?");
    }
    Ok(Snapshot::from_exposition(&e))
}

pub fn run(a: StatsArgs) -> Result<i32> {
    let Some(every) = a.watch else {
        let s = scrape(&a.url, Duration::from_secs(5))?;
        print!("{}", table::render(&s, None, now_unix()));
        return Ok(0);
    };
    if !(every.is_finite() && every > 0.0) {
        bail!("--watch needs a positive number of seconds, got {every}");
    }
    let every = Duration::from_secs_f64(every);
    let timeout = every.max(Duration::from_secs(1));
    let mut prev: Option<(Snapshot, Instant)> = None;
    let mut stdout = std::io::stdout();
    loop {
        let started = Instant::now();
        let head = format!(
            "{CLEAR}mplsrouter stats: {} every {:.1} s (Ctrl-C to quit)\n\n",
            a.url,
            every.as_secs_f64()
        );
        let body = match scrape(&a.url, timeout) {
            Ok(s) => {
                let p = prev
                    .as_ref()
                    .map(|(p, at)| (p, started.duration_since(*at).as_secs_f64()));
                let body = table::render(&s, p, now_unix());
                prev = Some((s, started));
                body
            }
            Err(e) => {
                // Keep watching: the router may be restarting.
                prev = None;
                format!("error: {e:#}\n(retrying)\n")
            }
        };
        // A closed stdout (piped into head) ends the watch quietly.
        if stdout
            .write_all(format!("{head}{body}").as_bytes())
            .and_then(|_| stdout.flush())
            .is_err()
        {
            return Ok(0);
        }
        std::thread::sleep(every.saturating_sub(started.elapsed()));
    }
}

#[cfg(test)]
mod tests;
