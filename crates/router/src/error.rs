//! Errors of the runtime, each naming what to fix.

/// Why the router could not start or stopped abnormally. Each variant keeps the error it
/// wraps as its `source`; the message names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error("DPDK EAL init failed: {error}\n  hint: {hint}")]
    Eal {
        #[source]
        error: dpdk::DpdkError,
        /// What to fix, from the EAL arguments and the host (see `eal_hint`).
        hint: String,
    },
    #[error("port {name:?} (device {device:?}): {error}")]
    Port {
        name: String,
        device: String,
        #[source]
        error: dpdk::DpdkError,
    },
    #[error("mempool: {0}")]
    Mempool(#[source] dpdk::DpdkError),
    /// The lcore would not take the worker (busy, not enabled).
    #[error("worker on lcore {lcore}: {source}")]
    Launch {
        lcore: u32,
        #[source]
        source: dpdk::DpdkError,
    },
    /// A worker found no reader slot in the tables' RCU.
    #[error("invalid runtime setup: {0}")]
    Readers(#[from] net::rcu::RcuError),
    /// A worker ended abnormally (panicked, or without a result).
    #[error(transparent)]
    Worker(#[from] dpdk::lcore::JoinError),
    #[error("the slow-path thread panicked: {message}")]
    SlowPath { message: String },
    #[error("the control-interface thread panicked: {message}")]
    ControlInterfaceThread { message: String },
    /// A thread ended while the router was running (its own error, if any, is reported
    /// in its place when it was joined).
    #[error("{0} while the router was running")]
    Died(ThreadDeath),
    #[error("routes: {}", config_text(.0))]
    Config(#[from] config::ConfigError),
    #[error("routes: the routes loader stopped without a result (it panicked)")]
    LoaderDied,
    #[error("invalid runtime setup: {0}")]
    Spec(#[from] SpecError),
    #[error("invalid runtime setup: spawn {thread}: {source}")]
    Spawn {
        thread: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid runtime setup: fpm: cannot listen on {listen}: {source}")]
    Fpm {
        listen: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Metrics(#[from] crate::metrics::MetricsError),
    #[error(transparent)]
    Control(#[from] crate::ctlsock::CtlError),
    #[error("signal handler: {0}")]
    Signal(#[source] std::io::Error),
    #[error(transparent)]
    ControlInterface(#[from] crate::cpif::CpifError),
    /// SIGINT or SIGTERM arrived before any worker started: not a failure (exit 0).
    #[error("stopped by a signal during startup")]
    StoppedDuringStartup,
}

/// A config error's text without its leading "error: " (the binary says "error:" once).
fn config_text(e: &config::ConfigError) -> String {
    let t = e.to_string();
    t.strip_prefix("error: ").map(str::to_owned).unwrap_or(t)
}

/// Which thread ended while the router was running.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ThreadDeath {
    #[error("the worker on lcore {0} stopped")]
    Worker(u32),
    #[error("the control-interface thread stopped")]
    ControlInterface,
    #[error("the slow-path thread stopped")]
    SlowPath,
}

/// A runtime spec the EAL's lcores or the ports cannot satisfy.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error(
        "no worker lcore: give the EAL at least two lcores (e.g. -l 0,1); \
         the first runs the control side"
    )]
    NoWorkerLcore,
    #[error("worker lcore {lcore} is not an enabled worker lcore (enabled: {enabled:?})")]
    LcoreNotEnabled { lcore: u32, enabled: Vec<u32> },
    #[error("worker on lcore {lcore} polls unknown port index {port}")]
    UnknownPort { lcore: u32, port: u16 },
    #[error("worker on lcore {lcore} polls queue {queue} of port {port:?}, which has {rx_queues} rx queues")]
    UnknownQueue {
        lcore: u32,
        queue: u16,
        port: String,
        rx_queues: u16,
    },
}

/// What most likely made EAL init fail: the file prefix in use by another process, no
/// hugepages reserved while the config wants them, else a device string the EAL cannot
/// create (named, so the user knows which line).
pub fn eal_hint(error: &dpdk::DpdkError, eal_args: &[String], meminfo: &str) -> String {
    if error.errno == libc::EBUSY {
        return "stop the other router, or give this one its own file prefix \
                (eal.file_prefix in the config, or run --file-prefix NAME)"
            .to_string();
    }
    let no_huge = eal_args.iter().any(|a| a == "--no-huge");
    let huge_total = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("HugePages_Total:"))
        .and_then(|v| v.trim().parse::<u64>().ok());
    if !no_huge && huge_total == Some(0) {
        return "the config wants hugepages (eal.no_huge: false) but none are reserved \
                (HugePages_Total: 0 in /proc/meminfo): reserve some (scripts/setup-hugepages.sh) \
                or set eal.no_huge: true (run --no-huge)"
            .to_string();
    }
    let devices: Vec<&str> = eal_args
        .windows(2)
        .filter(|w| w[0] == "--vdev" || w[0] == "-a" || w[0] == "--allow")
        .map(|w| w[1].as_str())
        .collect();
    format!(
        "check the port devices (vdev strings and PCI addresses) in the config: {}; \
         PCI ports must be bound to vfio-pci (scripts/bind-nic.sh --status); \
         without hugepages set eal.no_huge: true (run --no-huge)",
        if devices.is_empty() {
            "none given".to_string()
        } else {
            devices.join(", ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::eal_hint;

    fn err(errno: i32) -> dpdk::DpdkError {
        dpdk::DpdkError {
            op: "rte_eal_init".into(),
            errno,
            msg: String::new(),
        }
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hint_names_missing_hugepages_or_the_devices() {
        let none = "MemTotal: 1 kB\nHugePages_Total:       0\n";
        let some = "HugePages_Total:      64\n";
        let h = eal_hint(
            &err(libc::EINVAL),
            &args(&["x", "--vdev", "net_null0"]),
            none,
        );
        assert!(h.contains("HugePages_Total: 0"), "{h}");
        let h = eal_hint(
            &err(libc::EINVAL),
            &args(&["x", "--no-huge", "--vdev", "net_bogus0"]),
            none,
        );
        assert!(
            h.contains("net_bogus0") && !h.contains("HugePages_Total"),
            "{h}"
        );
        let h = eal_hint(
            &err(libc::EINVAL),
            &args(&["x", "-a", "0000:01:00.0"]),
            some,
        );
        assert!(h.contains("0000:01:00.0"), "{h}");
        let h = eal_hint(&err(libc::EBUSY), &args(&["x"]), none);
        assert!(h.contains("file prefix") && !h.contains("HugePages"), "{h}");
    }
}
