//! Why `rte_eal_init` failed when DPDK gives no reason code.
//!
//! Some EAL failures return -1 with `rte_errno` still 0; the most common is a second
//! primary process on a file prefix whose config file another process has locked. This
//! module finds the lock holder the same way the EAL takes the lock (a POSIX record lock
//! on `<runtime dir>/<prefix>/config`), so the error names the process to stop. It only
//! inspects; it never takes or breaks a lock.

use std::path::PathBuf;

use crate::error::DpdkError;

/// The `--file-prefix` in EAL arguments (DPDK's default is "rte").
pub(crate) fn file_prefix<S: AsRef<str>>(args: &[S]) -> String {
    let mut it = args.iter().map(|a| a.as_ref());
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix("--file-prefix=") {
            return v.to_string();
        }
        if a == "--file-prefix" {
            if let Some(v) = it.next() {
                return v.to_string();
            }
        }
    }
    "rte".to_string()
}

/// Where the EAL keeps the prefix's runtime files (as `eal_create_runtime_dir` does).
pub(crate) fn runtime_dir(prefix: &str) -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    let base = if unsafe { libc::geteuid() } == 0 {
        PathBuf::from("/var/run")
    } else {
        std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"))
    };
    base.join("dpdk").join(prefix)
}

/// The pid holding a write-conflicting record lock on `path`, if any.
fn lock_holder(path: &std::path::Path) -> Option<i32> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).ok()?;
    // SAFETY: a zeroed flock is a valid value; the fields we need are set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    // SAFETY: valid open fd and a valid flock out pointer; F_GETLK only queries.
    let ret = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETLK, &mut fl) };
    (ret == 0 && fl.l_type != libc::F_UNLCK as _).then_some(fl.l_pid)
}

/// The error for an init that failed with `rte_errno` 0.
pub(crate) fn diagnose_silent_failure<S: AsRef<str>>(args: &[S]) -> DpdkError {
    let prefix = file_prefix(args);
    let config = runtime_dir(&prefix).join("config");
    match lock_holder(&config) {
        Some(pid) => DpdkError {
            op: "rte_eal_init".into(),
            errno: libc::EBUSY,
            msg: format!(
                "file prefix {prefix:?} is in use: process {pid} (another DPDK primary \
                 process) holds the lock on {}; stop it or give this one another file prefix",
                config.display()
            ),
        },
        None => DpdkError {
            op: "rte_eal_init".into(),
            errno: 0,
            msg: "failed without a reason code (rte_errno 0); the EAL's log lines above say why"
                .into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::file_prefix;

    #[test]
    fn finds_the_file_prefix_in_both_spellings() {
        assert_eq!(file_prefix(&["x", "--file-prefix", "a"]), "a");
        assert_eq!(file_prefix(&["x", "--file-prefix=b", "-l", "0"]), "b");
        assert_eq!(file_prefix(&["x", "-l", "0"]), "rte");
    }
}
