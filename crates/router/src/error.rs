//! Errors of the runtime, each naming what to fix.

/// Why the router could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error("DPDK EAL init failed: {0}\n  hint: without hugepages add --no-huge (or eal.no_huge: true); check vdev strings and PCI addresses")]
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
