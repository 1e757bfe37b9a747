//! What the runtime is asked to bring up, independent of the YAML it came from.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use config::StartupConfig;
use net::icmp::IcmpConfig;
use net::pipeline::PipelineConfig;

use crate::metrics::BuildInfo;

mod from_config;
pub use from_config::RunOptions;

/// One port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortSpec {
    /// The operator's name for the port (metrics label, logs).
    pub name: String,
    /// The ethdev name the EAL gives it: the vdev name (`net_pcap0`) or the PCI address.
    pub device: String,
    pub rx_queues: u16,
    pub rx_desc: u16,
    pub tx_desc: u16,
    pub mtu: Option<u16>,
    /// MAC address to set on the port (None: keep the device's).
    pub mac: Option<[u8; 6]>,
    /// A virtual device (`--vdev`): its MTU belongs to what it wraps (af_packet: the
    /// kernel interface), so a device refusing the configured MTU is a warning, not an
    /// error.
    pub vdev: bool,
    /// Receive frames for every MAC (the pipeline still routes only frames for `mac`).
    pub promiscuous: bool,
}

/// One worker: the lcore it runs on and the (port index, queue) pairs it polls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerSpec {
    pub lcore: u32,
    pub rx: Vec<(u16, u16)>,
}

/// What a worker does when its queues are empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IdlePolicy {
    /// Spin: lowest latency, one full core per worker (bare metal).
    #[default]
    BusyPoll,
    /// After `pause_after` empty polls, pause; after `sleep_after`, sleep from
    /// `min_sleep`, doubling up to `max_sleep`, so several instances can share cores.
    /// Any received packet starts the schedule again.
    Backoff {
        pause_after: u32,
        sleep_after: u32,
        min_sleep: Duration,
        max_sleep: Duration,
    },
}

/// What the router routes with: the startup config (ports, addresses), the routes file,
/// and the pipeline and ICMP settings.
#[derive(Clone, Debug)]
pub struct Routing {
    pub startup: StartupConfig,
    pub routes: Option<PathBuf>,
    pub pipeline: PipelineConfig,
    pub icmp: IcmpConfig,
}

/// Everything [`crate::Router::start`] needs; [`RuntimeSpec::from_config`] makes it from
/// the startup config.
#[derive(Clone, Debug)]
pub struct RuntimeSpec {
    /// Full EAL argument vector, program name first.
    pub eal_args: Vec<String>,
    /// Ports in port-index order (index = what routes refer to).
    pub ports: Vec<PortSpec>,
    /// Workers; empty means one worker on the first worker lcore polling every queue.
    pub workers: Vec<WorkerSpec>,
    pub mempool_size: u32,
    pub mempool_cache: u32,
    pub burst: usize,
    pub idle: IdlePolicy,
    /// Stop by itself after this long.
    pub duration: Option<Duration>,
    /// Print a counters line this often (None: only the final summary).
    pub stats_interval: Option<Duration>,
    /// Serve Prometheus metrics here (None: no endpoint).
    pub metrics_listen: Option<SocketAddr>,
    /// Version information for `--version`-like metrics.
    pub build: BuildInfo,
    /// Mbuf data room (headroom included) of the packet pool: big enough for a frame of
    /// the largest port MTU in one segment.
    pub mbuf_data_room: u16,
    /// Test only: a fault to inject (see [`TestFault`]); None in production.
    pub test_fault: Option<TestFault>,
    /// The tables' inputs and the forwarding settings.
    pub routing: Routing,
}

/// Faults the tests inject to check that a dying thread is noticed. Set only from the
/// `MPLSROUTER_TEST_FAULT` environment variable, read once at start by the binary;
/// documented as test-only, never in a config file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestFault {
    /// The first worker panics as it starts polling.
    WorkerPanic,
    /// The slow-path thread panics as it starts.
    SlowPathPanic,
    /// The slow path sleeps [`SLOW_DATA_DELAY`] after taking each data-queue packet, so
    /// a flood from a few test senders outruns it as a line-rate flood outruns a real
    /// slow path (tests/frr_ospf_ldp.rs: the control queue must keep the adjacencies up).
    SlowData,
}

/// How long the slow path sleeps per data-queue packet under [`TestFault::SlowData`].
pub const SLOW_DATA_DELAY: std::time::Duration = std::time::Duration::from_millis(2);

impl TestFault {
    /// The value of `MPLSROUTER_TEST_FAULT`: `worker-panic`, `slowpath-panic` or
    /// `slow-data`.
    pub fn parse(s: &str) -> Option<TestFault> {
        match s {
            "worker-panic" => Some(TestFault::WorkerPanic),
            "slowpath-panic" => Some(TestFault::SlowPathPanic),
            "slow-data" => Some(TestFault::SlowData),
            _ => None,
        }
    }
}
