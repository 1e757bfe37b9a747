//! Errors of the runtime, each naming what to fix.

/// Why the router could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error("DPDK EAL init failed: {0}\n  hint: no hugepages? reserve them with scripts/setup-hugepages.sh, or run with --no-huge (eal.no_huge: true);\n  a device not found? check vdev strings, and PCI ports with scripts/bind-nic.sh --status")]
    Eal(dpdk::DpdkError),
    #[error("port {name:?} (device {device:?}): {error}")]
    Port {
        name: String,
        device: String,
        error: dpdk::DpdkError,
    },
    #[error("mempool: {0}")]
    Mempool(dpdk::DpdkError),
    #[error("worker on lcore {lcore}: {msg}")]
    Worker { lcore: u32, msg: String },
    #[error("routes: {0}")]
    Config(String),
    #[error("invalid runtime setup: {0}")]
    Spec(String),
    #[error(transparent)]
    Metrics(#[from] crate::metrics::MetricsError),
    #[error("signal handler: {0}")]
    Signal(std::io::Error),
}
