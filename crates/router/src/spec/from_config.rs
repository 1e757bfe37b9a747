//! The startup config (plus the command line's overrides) as a [`RuntimeSpec`].
//!
//! The one place that maps YAML settings onto the runtime's knobs; the CLI only parses
//! its arguments into [`RunOptions`]. Must never touch DPDK or the host: pure mapping.

use std::time::Duration;

use config::startup::{IdlePolicy as CfgIdle, StartupConfig, TtlExpiryReply};
use net::icmp::{IcmpConfig, MplsReply};
use net::pipeline::PipelineConfig;

use super::{IdlePolicy, PortSpec, Routing, RuntimeSpec, TestFault, WorkerSpec};
use crate::metrics::BuildInfo;

// `burst_size` is refused above the config's limit, which must be what a worker's burst
// holds: a larger setting would otherwise be cut to it without a word.
const _: () = assert!(config::startup::MAX_BURST as usize == dpdk::BURST_MAX);

/// What the command line adds to (or overrides in) the startup config.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Stop by itself after this long.
    pub duration: Option<Duration>,
    /// Print a counters line this often (None: only the final summary).
    pub stats_interval: Option<Duration>,
    /// Hugepages or not, whatever the config says (None: as the config says).
    pub huge: Option<bool>,
    /// EAL core list (`-l`).
    pub lcores: Option<String>,
    /// Extra EAL `--vdev` devices.
    pub vdevs: Vec<String>,
    /// EAL `--file-prefix` (default: from the config, else `mplsrouter-<pid>`).
    pub file_prefix: Option<String>,
    /// Version information for the build-info metric.
    pub build: BuildInfo,
    /// Test only: a fault to inject.
    pub test_fault: Option<TestFault>,
}

impl RuntimeSpec {
    /// The runtime's view of `cfg` with `opts` applied.
    pub fn from_config(mut cfg: StartupConfig, opts: RunOptions) -> RuntimeSpec {
        apply_overrides(&mut cfg, &opts);
        RuntimeSpec {
            eal_args: eal_args(&cfg),
            ports: cfg.ports.iter().map(port_spec).collect(),
            workers: cfg
                .workers()
                .into_iter()
                .map(|w| WorkerSpec {
                    lcore: w.lcore,
                    rx: w.rx,
                })
                .collect(),
            mempool_size: cfg.mempool_size(),
            mempool_cache: cfg.mempool.cache,
            burst: cfg.burst_size as usize,
            idle: idle_policy(&cfg.idle),
            duration: opts.duration,
            stats_interval: opts.stats_interval,
            metrics_listen: Some(cfg.metrics_listen),
            build: opts.build,
            mbuf_data_room: cfg.mbuf_data_room(),
            test_fault: opts.test_fault,
            routing: routing(cfg),
        }
    }
}

/// Applies the command-line overrides to the loaded config.
fn apply_overrides(cfg: &mut StartupConfig, o: &RunOptions) {
    if let Some(huge) = o.huge {
        cfg.eal.no_huge = !huge;
    }
    if let Some(l) = &o.lcores {
        cfg.eal.lcores = Some(config::de::Spanned::new(l.clone(), Default::default()));
    }
    cfg.eal.vdevs.extend(o.vdevs.iter().cloned());
    if let Some(p) = &o.file_prefix {
        cfg.eal.file_prefix = Some(p.clone());
    }
    if cfg.eal.file_prefix.is_none() {
        // A unique prefix per process: two routers on one host never share runtime files,
        // and a second run right after the first never trips over stale ones.
        cfg.eal.file_prefix = Some(format!("mplsrouter-{}", std::process::id()));
    }
}

/// The EAL argument vector; without hugepages, no shared config files either.
fn eal_args(cfg: &StartupConfig) -> Vec<String> {
    let mut eal_args = cfg.eal_args("mplsrouter");
    if cfg.eal.no_huge
        && !eal_args
            .iter()
            .any(|x| x == "--no-shconf" || x == "--in-memory")
    {
        eal_args.push("--no-shconf".into());
    }
    eal_args
}

fn port_spec(p: &config::startup::PortConfig) -> PortSpec {
    PortSpec {
        name: p.name.value.clone(),
        device: p.device_name().to_string(),
        rx_queues: p.rx_queues.value,
        rx_desc: p.rx_desc.value,
        tx_desc: p.tx_desc.value,
        mtu: Some(p.mtu.value),
        mac: p.mac.map(|m| m.0),
        vdev: p.vdev.is_some(),
        promiscuous: p.promiscuous(),
    }
}

fn idle_policy(idle: &CfgIdle) -> IdlePolicy {
    match *idle {
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
    }
}

/// The tables' inputs and the pipeline and ICMP settings.
fn routing(cfg: StartupConfig) -> Routing {
    let rate = &cfg.icmp_rate_limit;
    Routing {
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
            rate_per_sec: rate.per_second,
            burst: rate.burst,
            echo_rate_per_sec: rate.echo_per_second.unwrap_or(rate.per_second),
            echo_burst: rate.echo_burst.unwrap_or(rate.burst),
            max_label_depth: cfg.max_label_depth as usize,
            ..IcmpConfig::default()
        },
        startup: cfg,
    }
}
