//! Errors of the runtime, each naming what to fix.

/// Why the router could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RouterError {
    #[error("DPDK EAL init failed: {error}\n  hint: {hint}")]
    Eal {
        error: dpdk::DpdkError,
        /// What to fix, from the EAL arguments and the host (see `eal_hint`).
        hint: String,
    },
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
    #[error("the slow-path thread panicked: {0}")]
    SlowPath(String),
    #[error("{0}")]
    Died(String),
    #[error("routes: {0}")]
    Config(String),
    #[error("invalid runtime setup: {0}")]
    Spec(String),
    #[error(transparent)]
    Metrics(#[from] crate::metrics::MetricsError),
    #[error(transparent)]
    Control(#[from] crate::ctlsock::CtlError),
    #[error("signal handler: {0}")]
    Signal(std::io::Error),
    #[error(transparent)]
    ControlInterface(#[from] crate::cpif::CpifError),
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
