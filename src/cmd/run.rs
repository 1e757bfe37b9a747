//! `mplsrouter run`: parse the arguments, load the startup config, run the router
//! (`router::RuntimeSpec::from_config` maps the config and the overrides).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use config::StartupConfig;
use router::{Router, RouterError, RunOptions, RuntimeSpec, TestFault};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Startup config (YAML), e.g. dpdk-config/demo.yaml.
    #[arg(long, short)]
    pub config: PathBuf,
    /// Stop by itself after this many seconds (default: run until SIGINT/SIGTERM).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Seconds between counter lines on stdout (0: only the final summary).
    #[arg(long, default_value_t = 1.0)]
    pub stats_interval: f64,
    /// Run without hugepages, whatever the config says.
    #[arg(long, conflicts_with = "huge")]
    pub no_huge: bool,
    /// Use hugepages, whatever the config says.
    #[arg(long)]
    pub huge: bool,
    /// EAL core list (`-l`), e.g. 0,1 or 0-3; the first runs the control side.
    #[arg(long)]
    pub lcores: Option<String>,
    /// Extra EAL --vdev devices (repeatable).
    #[arg(long)]
    pub vdev: Vec<String>,
    /// EAL --file-prefix (default: from the config, else mplsrouter-<pid>; the router
    /// removes its runtime directory, /var/run/dpdk/<prefix> as root, when it exits).
    #[arg(long)]
    pub file_prefix: Option<String>,
}

impl RunArgs {
    /// The command line's part of the runtime spec.
    fn options(&self) -> RunOptions {
        RunOptions {
            duration: self.duration.map(Duration::from_secs_f64),
            stats_interval: (self.stats_interval > 0.0)
                .then(|| Duration::from_secs_f64(self.stats_interval)),
            huge: match (self.huge, self.no_huge) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            lcores: self.lcores.clone(),
            vdevs: self.vdev.clone(),
            file_prefix: self.file_prefix.clone(),
            build: crate::build_info(),
            test_fault: test_fault(),
        }
    }
}

/// Test only: `MPLSROUTER_TEST_FAULT=worker-panic|slowpath-panic` makes that thread panic
/// as it starts, so tests can check that a dying thread stops the router with an error;
/// `slow-data` slows the slow path's data queue (`router::TestFault::SlowData`).
/// Read once, here; an unknown value is ignored with a warning.
fn test_fault() -> Option<TestFault> {
    let v = std::env::var("MPLSROUTER_TEST_FAULT").ok()?;
    let f = TestFault::parse(&v);
    match f {
        Some(_) => eprintln!("mplsrouter: MPLSROUTER_TEST_FAULT={v}: injecting a test fault"),
        None => eprintln!("mplsrouter: ignoring unknown MPLSROUTER_TEST_FAULT={v}"),
    }
    f
}

pub fn run(a: RunArgs) -> Result<i32> {
    let cfg = StartupConfig::load(&a.config)?;
    let spec = RuntimeSpec::from_config(cfg, a.options());
    let running = || format!("running {}", a.config.display());
    let router = match Router::start(spec) {
        Err(RouterError::StoppedDuringStartup) => return Ok(0),
        r => r.with_context(running)?,
    };
    let stop = router.stop_handle();
    let summary = router.run_until(&stop).with_context(running)?;
    if summary.mbufs_leaked > 0 {
        eprintln!(
            "mplsrouter: warning: {} mbufs were not returned to the pool",
            summary.mbufs_leaked
        );
        return Ok(2);
    }
    Ok(0)
}
