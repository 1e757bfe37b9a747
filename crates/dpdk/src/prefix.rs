//! Why `rte_eal_init` failed when DPDK gives no reason code.
//!
//! Some EAL failures return -1 with `rte_errno` still 0; the most common is a second
//! primary process on a file prefix whose config file another process has locked. This
//! module finds the lock holder the same way the EAL takes the lock (a POSIX record lock
//! on `<runtime dir>/<prefix>/config`), so the error names the process to stop. It only
//! inspects; it never takes or breaks a lock.
//!
//! It also finds the prefix's hugepage files (`<hugetlbfs dir>/<prefix>map_<n>`), which
//! the EAL leaves behind at exit unless `--huge-unlink` was given: each one holds a
//! hugepage until it is deleted, so a primary removes its own when it stops.

use std::path::PathBuf;

use crate::error::DpdkError;

/// The value of EAL option `name` (`--name=v` or `--name v`), its first occurrence.
fn arg_value<'a, S: AsRef<str>>(args: &'a [S], name: &str) -> Option<&'a str> {
    let mut it = args.iter().map(|a| a.as_ref());
    while let Some(a) = it.next() {
        match a.strip_prefix(name) {
            Some(v) if v.starts_with('=') => return Some(&v[1..]),
            Some("") => return it.next(),
            _ => {}
        }
    }
    None
}

/// The `--file-prefix` in EAL arguments (DPDK's default is "rte").
pub(crate) fn file_prefix<S: AsRef<str>>(args: &[S]) -> String {
    arg_value(args, "--file-prefix")
        .unwrap_or("rte")
        .to_string()
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

/// Where the EAL may create hugepage files for these arguments: the `--huge-dir`, else
/// every hugetlbfs mount (from `mounts`, the text of /proc/mounts).
pub(crate) fn hugepage_dirs<S: AsRef<str>>(args: &[S], mounts: &str) -> Vec<PathBuf> {
    if let Some(d) = arg_value(args, "--huge-dir") {
        return vec![PathBuf::from(d)];
    }
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"hugetlbfs")).then(|| PathBuf::from(f[1]))
        })
        .collect()
}

/// Removes the hugepage files of `prefix` (`<prefix>map_*`) from `dirs`: how many it
/// removed, and the ones it could not remove. Another prefix's files are never touched,
/// even one that starts with this one ("rte" does not match "rte2map_0").
pub(crate) fn remove_hugepage_files(prefix: &str, dirs: &[PathBuf]) -> (usize, Vec<PathBuf>) {
    let own = format!("{prefix}map_");
    let (mut removed, mut failed) = (0, Vec::new());
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(d) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_name().to_str().is_some_and(|n| n.starts_with(&own)) {
                continue;
            }
            match std::fs::remove_file(e.path()) {
                Ok(()) => removed += 1,
                Err(_) => failed.push(e.path()),
            }
        }
    }
    (removed, failed)
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
    use super::{file_prefix, hugepage_dirs, remove_hugepage_files};
    use std::path::PathBuf;

    #[test]
    fn finds_the_file_prefix_in_both_spellings() {
        assert_eq!(file_prefix(&["x", "--file-prefix", "a"]), "a");
        assert_eq!(file_prefix(&["x", "--file-prefix=b", "-l", "0"]), "b");
        assert_eq!(file_prefix(&["x", "-l", "0"]), "rte");
    }

    #[test]
    fn hugepage_dirs_are_the_huge_dir_or_every_hugetlbfs_mount() {
        let mounts = "proc /proc proc rw 0 0\n\
                      hugetlbfs /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n\
                      nodev /mnt/huge1g hugetlbfs rw,pagesize=1024M 0 0\n";
        assert_eq!(
            hugepage_dirs(&["x", "-l", "0"], mounts),
            [
                PathBuf::from("/dev/hugepages"),
                PathBuf::from("/mnt/huge1g")
            ]
        );
        assert_eq!(
            hugepage_dirs(&["x", "--huge-dir", "/h"], mounts),
            [PathBuf::from("/h")]
        );
        assert_eq!(
            hugepage_dirs(&["x", "--huge-dir=/g"], mounts),
            [PathBuf::from("/g")]
        );
        assert!(hugepage_dirs(&["x"], "proc /proc proc rw 0 0\n").is_empty());
    }

    #[test]
    fn removes_only_its_own_prefixs_hugepage_files() {
        let d = std::env::temp_dir().join(format!("dpdk-prefix-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let names = [
            "rtemap_0",
            "rtemap_17",
            "rte2map_0",
            "rte-other",
            "xrtemap_0",
        ];
        for n in names {
            std::fs::write(d.join(n), b"").unwrap();
        }
        let missing = d.join("missing");
        assert_eq!(
            remove_hugepage_files("rte", &[missing, d.clone()]),
            (2, vec![])
        );
        let mut left: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["rte-other", "rte2map_0", "xrtemap_0"]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
