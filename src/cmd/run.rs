//! `mplsrouter run`: load the startup config, apply command-line overrides, run.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use config::startup::TtlExpiryReply;
use config::startup::{IdlePolicy as CfgIdle, StartupConfig};
use net::icmp::{IcmpConfig, MplsReply};
use net::pipeline::PipelineConfig;
use router::{IdlePolicy, PortSpec, Routing, RuntimeSpec, TestFault};

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

/// Applies the command-line overrides to the loaded config.
fn apply_overrides(cfg: &mut StartupConfig, a: &RunArgs) {
    if a.no_huge {
        cfg.eal.no_huge = true;
    }
    if a.huge {
        cfg.eal.no_huge = false;
    }
    if let Some(l) = &a.lcores {
        cfg.eal.lcores = Some(config::de::Spanned::new(l.clone(), Default::default()));
    }
    cfg.eal.vdevs.extend(a.vdev.iter().cloned());
    if let Some(p) = &a.file_prefix {
        cfg.eal.file_prefix = Some(p.clone());
    }
    if cfg.eal.file_prefix.is_none() {
        // A unique prefix per process: two routers on one host never share runtime files,
        // and a second run right after the first never trips over stale ones.
        cfg.eal.file_prefix = Some(format!("mplsrouter-{}", std::process::id()));
    }
}

/// The runtime's view of the config.
pub fn runtime_spec(cfg: &StartupConfig, a: &RunArgs) -> RuntimeSpec {
    let mut eal_args = cfg.eal_args("mplsrouter");
    if cfg.eal.no_huge
        && !eal_args
            .iter()
            .any(|x| x == "--no-shconf" || x == "--in-memory")
    {
        eal_args.push("--no-shconf".into());
    }
    RuntimeSpec {
        eal_args,
        ports: cfg
            .ports
            .iter()
            .map(|p| PortSpec {
                name: p.name.value.clone(),
                device: p.device_name().to_string(),
                rx_queues: p.rx_queues.value,
                rx_desc: p.rx_desc.value,
                tx_desc: p.tx_desc.value,
                mtu: Some(p.mtu.value),
                mac: p.mac.map(|m| m.0),
                vdev: p.vdev.is_some(),
                promiscuous: p.promiscuous(),
            })
            .collect(),
        workers: cfg
            .workers()
            .into_iter()
            .map(|w| router::WorkerSpec {
                lcore: w.lcore,
                rx: w.rx,
            })
            .collect(),
        mempool_size: cfg.mempool_size(),
        mempool_cache: cfg.mempool.cache,
        burst: cfg.burst_size as usize,
        idle: match cfg.idle {
            CfgIdle::BusyPoll => IdlePolicy::BusyPoll,
            CfgIdle::Backoff {
                after_empty_polls,
                min_us,
                max_us,
            } => IdlePolicy::Backoff {
                pause_after: after_empty_polls / 2,
                sleep_after: after_empty_polls,
                min_sleep: Duration::from_micros(min_us as u64),
                max_sleep: Duration::from_micros(max_us as u64),
            },
        },
        duration: a.duration.map(Duration::from_secs_f64),
        stats_interval: (a.stats_interval > 0.0).then(|| Duration::from_secs_f64(a.stats_interval)),
        metrics_listen: Some(cfg.metrics_listen),
        build: crate::build_info(),
        mbuf_data_room: cfg.mbuf_data_room(),
        test_fault: test_fault(),
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
    let mut cfg = StartupConfig::load(&a.config).map_err(|e| anyhow::anyhow!("{e}"))?;
    apply_overrides(&mut cfg, &a);
    let spec = runtime_spec(&cfg, &a);
    let routing = Routing {
        routes: cfg.routes.clone(),
        pipeline: PipelineConfig {
            max_label_depth: cfg.max_label_depth as usize,
            ..PipelineConfig::default()
        },
        icmp: IcmpConfig {
            mpls_reply: match cfg.ttl_expiry_reply {
                TtlExpiryReply::AlongLsp => MplsReply::AlongLsp,
                TtlExpiryReply::Direct => MplsReply::Direct,
            },
            rate_per_sec: cfg.icmp_rate_limit.per_second,
            burst: cfg.icmp_rate_limit.burst,
            echo_rate_per_sec: cfg
                .icmp_rate_limit
                .echo_per_second
                .unwrap_or(cfg.icmp_rate_limit.per_second),
            echo_burst: cfg
                .icmp_rate_limit
                .echo_burst
                .unwrap_or(cfg.icmp_rate_limit.burst),
            max_label_depth: cfg.max_label_depth as usize,
            ..IcmpConfig::default()
        },
        startup: cfg,
    };
    let summary =
        router::run(&spec, routing).with_context(|| format!("running {}", a.config.display()))?;
    if summary.mbufs_leaked > 0 {
        eprintln!(
            "mplsrouter: warning: {} mbufs were not returned to the pool",
            summary.mbufs_leaked
        );
        return Ok(2);
    }
    Ok(0)
}
