//! Process-level faults of the runtime, on the real binary: a signal while the tables
//! load, a thread that dies, a stalled process's stats lines, the EAL's runtime
//! directory, a file prefix locked by another process, and how errors read.
#![forbid(unsafe_code)]

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{bin, is_root, wait_bounded, TempDir};

/// A startup config on one `net_null` port (an endless source of 64-byte frames).
fn config(dir: &TempDir, tag: &str, prefix: Option<&str>, routes: Option<&Path>) -> PathBuf {
    let prefix = prefix
        .map(|p| format!(", file_prefix: {p}"))
        .unwrap_or_default();
    let mut cfg = format!(
        "eal: {{lcores: \"0,1\", no_huge: true, memory_mb: 256{prefix}}}\n\
         ports:\n\
         \x20 - {{name: a, vdev: \"net_null_{tag}{pid}\", addresses: [10.0.1.1/24]}}\n\
         metrics_listen: 127.0.0.1:0\n\
         idle: {{backoff: {{}}}}\n",
        pid = std::process::id()
    );
    if let Some(r) = routes {
        cfg += &format!("routes: {}\n", r.display());
    }
    let p = dir.path("startup.yaml");
    std::fs::write(&p, cfg).unwrap();
    p
}

fn unique_prefix(tag: &str) -> String {
    format!("mplsr-rtf-{tag}-{}", std::process::id())
}

fn spawn(cfg: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut c = Command::new(bin());
    c.args(["run", "--config"]).arg(cfg).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mplsrouter")
}

fn signal(pid: u32, sig: &str) {
    assert!(common::signal(pid, sig), "kill -{sig} {pid}");
}

/// Reads a child's stdout line by line into a shared string (so a test can wait for a
/// line while the process runs).
fn tail(child: &mut Child) -> std::sync::Arc<std::sync::Mutex<String>> {
    use std::io::BufRead;
    let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let o = out.clone();
    let r = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(r).lines().map_while(Result::ok) {
            o.lock().unwrap().push_str(&format!("{l}\n"));
        }
    });
    out
}

fn wait_for_line(out: &std::sync::Mutex<String>, text: &str, limit: Duration) {
    let start = Instant::now();
    while !out.lock().unwrap().contains(text) {
        assert!(
            start.elapsed() < limit,
            "no {text:?} within {limit:?}:\n{}",
            out.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    child.stderr.take().unwrap().read_to_string(&mut s).unwrap();
    s
}

/// The full view from `shared/data` as a routes file, or `None` when it is absent.
fn full_view_routes(dir: &TempDir) -> Option<PathBuf> {
    let s = common::full_view_text()?;
    let nhs = [std::net::Ipv4Addr::new(10, 0, 1, 2)];
    let routes = dir.path("routes.yaml");
    std::fs::write(&routes, config::generate::fullview_routes(&s, &nhs).0).unwrap();
    Some(routes)
}

/// SIGTERM while a full view (901,899 routes) is loading stops the router at once and
/// cleanly; before the fix the flag was cleared after the load and the router ran on.
#[test]
fn sigterm_while_the_tables_load_stops_the_router_promptly() {
    let dir = TempDir::new("rtf-sigload");
    let Some(routes) = full_view_routes(&dir) else {
        return;
    };
    let prefix = unique_prefix("sigload");
    let cfg = config(&dir, "sigload", Some(&prefix), Some(&routes));
    let mut child = spawn(&cfg, &["--duration", "120", "--stats-interval", "0"], &[]);
    let out = tail(&mut child);
    wait_for_line(&out, "routes: loading", Duration::from_secs(20));
    signal(child.id(), "TERM");
    let t = Instant::now();
    wait_bounded(&mut child, Duration::from_secs(20));
    let stopped_in = t.elapsed();
    let status = child.wait().unwrap();
    let err = stderr_of(&mut child);
    let out = out.lock().unwrap().clone();
    assert!(status.success(), "clean exit: {status:?}\n{out}\n{err}");
    assert!(
        out.contains("stopped by a signal during startup"),
        "{out}\n{err}"
    );
    assert!(!out.contains("metrics: http"), "no worker started: {out}");
    assert!(
        stopped_in < Duration::from_secs(2),
        "stopped {stopped_in:?} after SIGTERM"
    );
    println!("stopped {stopped_in:?} after SIGTERM during the full-view load");
}

/// A worker (or the slow path) that panics stops the router: the message is logged, the
/// exit status is non-zero, and the process is gone (no lcore left polling).
#[test]
fn a_thread_that_panics_stops_the_router_with_its_message() {
    for (fault, who) in [
        ("worker-panic", "worker on lcore 1"),
        ("slowpath-panic", "slow-path thread"),
    ] {
        let dir = TempDir::new("rtf-panic");
        let cfg = config(&dir, "panic", Some(&unique_prefix("panic")), None);
        let mut child = spawn(
            &cfg,
            &["--duration", "60", "--stats-interval", "0"],
            &[("MPLSROUTER_TEST_FAULT", fault), ("RUST_BACKTRACE", "0")],
        );
        let out = tail(&mut child);
        let t = Instant::now();
        wait_bounded(&mut child, Duration::from_secs(20));
        let status = child.wait().unwrap();
        let err = stderr_of(&mut child);
        let out = out.lock().unwrap().clone();
        assert!(!status.success(), "{fault}: non-zero exit\n{out}\n{err}");
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{fault}: noticed in {:?}",
            t.elapsed()
        );
        assert!(
            err.contains(&format!("{who} stopped while the router was running")),
            "{fault}: the death is logged when it happens: {err}"
        );
        assert!(
            err.contains(&format!(
                "test fault injected (MPLSROUTER_TEST_FAULT={fault})"
            )),
            "{fault}: the panic message is in the error: {err}"
        );
        let last = err.lines().last().unwrap_or("");
        assert!(
            last.starts_with("mplsrouter: error:") && last.contains("panicked"),
            "{fault}: {last}"
        );
        assert!(out.contains("mbufs not returned to the pool: 0"), "{out}");
        assert!(
            !Path::new(&format!("/proc/{}", child.id())).exists(),
            "process gone"
        );
    }
}

/// `[   1.2s]` of each stats line, in seconds.
fn stamps(out: &str) -> Vec<f64> {
    out.lines()
        .filter_map(|l| l.strip_prefix('[')?.split_once("s]"))
        .map(|(t, _)| t.trim().parse().unwrap())
        .collect()
}

/// After a stall (SIGSTOP), the stats lines resume one interval apart: no burst of
/// catch-up lines (each with a rate over a few microseconds).
#[test]
fn stats_lines_after_a_stall_do_not_come_in_a_burst() {
    let dir = TempDir::new("rtf-stall");
    let cfg = config(&dir, "stall", Some(&unique_prefix("stall")), None);
    let mut child = spawn(&cfg, &["--duration", "30", "--stats-interval", "0.2"], &[]);
    let out = tail(&mut child);
    wait_for_line(&out, "[    0.6s]", Duration::from_secs(20));
    signal(child.id(), "STOP");
    std::thread::sleep(Duration::from_millis(1500));
    signal(child.id(), "CONT");
    std::thread::sleep(Duration::from_millis(1000));
    signal(child.id(), "TERM");
    wait_bounded(&mut child, Duration::from_secs(20));
    assert!(child.wait().unwrap().success());
    let out = out.lock().unwrap().clone();
    let t = stamps(&out);
    assert!(t.len() >= 6, "{out}");
    let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|&g| g >= 0.15),
        "lines closer than the interval (a catch-up burst): {t:?}\n{out}"
    );
    assert!(
        gaps.iter().any(|&g| g >= 1.4),
        "one line spans the stall: {t:?}"
    );
    for l in out.lines().filter(|l| l.starts_with('[')) {
        let fwd: u64 = l
            .split("forwarded ")
            .nth(1)
            .and_then(|s| s.split(' ').next()?.parse().ok())
            .unwrap_or_else(|| panic!("no forwarded count in {l}"));
        assert!(fwd < 1 << 40, "forwarded wrapped: {l}");
    }
}

/// With the default per-process file prefix, the EAL's runtime directory
/// (`/var/run/dpdk/mplsrouter-<pid>`) is gone after the router exits.
#[test]
fn the_default_prefix_leaves_no_runtime_directory_behind() {
    if !is_root() {
        eprintln!("SKIP: the runtime directory is /var/run/dpdk only as root");
        return;
    }
    let dir = TempDir::new("rtf-rundir");
    let cfg = config(&dir, "rundir", None, None);
    let mut child = spawn(&cfg, &["--duration", "0.5", "--stats-interval", "0"], &[]);
    let run_dir = PathBuf::from(format!("/var/run/dpdk/mplsrouter-{}", child.id()));
    let out = tail(&mut child);
    wait_bounded(&mut child, Duration::from_secs(20));
    assert!(child.wait().unwrap().success(), "{}", out.lock().unwrap());
    assert!(
        out.lock().unwrap().contains("mplsrouter stopped"),
        "it ran: {}",
        out.lock().unwrap()
    );
    assert!(!run_dir.exists(), "{} left behind", run_dir.display());
}

/// A start that fails in the EAL (a device it cannot create) leaves no runtime
/// directory for its per-process prefix either.
#[test]
fn a_failed_start_leaves_no_runtime_directory_behind() {
    if !is_root() {
        eprintln!("SKIP: the runtime directory is /var/run/dpdk only as root");
        return;
    }
    let dir = TempDir::new("rtf-rundir-fail");
    let cfg = config(&dir, "rundirfail", None, None);
    let mut child = spawn(&cfg, &["--vdev", "net_nosuchdriver0"], &[]);
    let run_dir = PathBuf::from(format!("/var/run/dpdk/mplsrouter-{}", child.id()));
    wait_bounded(&mut child, Duration::from_secs(20));
    let status = child.wait().unwrap();
    let err = stderr_of(&mut child);
    assert!(!status.success(), "{err}");
    assert!(err.contains("EAL init failed"), "{err}");
    assert!(!run_dir.exists(), "{} left behind", run_dir.display());
}

/// A second primary on a file prefix whose config file another process has locked is
/// told which process holds it (DPDK itself reports "Success (errno 0)").
#[test]
fn a_locked_file_prefix_names_the_process_holding_it() {
    if !is_root() {
        eprintln!("SKIP: the runtime directory is /var/run/dpdk only as root");
        return;
    }
    let prefix = unique_prefix("locked");
    let run_dir = PathBuf::from(format!("/var/run/dpdk/{prefix}"));
    std::fs::create_dir_all(&run_dir).unwrap();
    // The lock the EAL takes: a POSIX record lock on <dir>/config, held by a helper.
    let script = format!(
        "import fcntl,sys,time\nf=open('{}/config','a+')\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint('locked',flush=True)\nsys.stdin.read()\n",
        run_dir.display()
    );
    let Ok(mut holder) = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    else {
        eprintln!("SKIP: python3 is needed to hold the lock");
        return;
    };
    let mut line = [0u8; 7];
    holder
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut line)
        .unwrap();
    assert_eq!(&line, b"locked\n");
    let dir = TempDir::new("rtf-locked");
    let cfg = config(&dir, "locked", Some(&prefix), None);
    let out = run_to_end(&cfg, &["--huge", "--duration", "1"]);
    drop(holder.stdin.take());
    let _ = holder.wait();
    let _ = std::fs::remove_dir_all(&run_dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(!err.contains("errno 0"), "{err}");
    assert!(
        err.contains(&format!(
            "file prefix \"{prefix}\" is in use: process {}",
            holder.id()
        )),
        "{err}"
    );
    assert!(
        err.contains("give this one its own file prefix"),
        "hint: {err}"
    );
}

fn run_to_end(cfg: &Path, args: &[&str]) -> Output {
    let mut child = spawn(cfg, args, &[]);
    wait_bounded(&mut child, Duration::from_secs(30));
    child.wait_with_output().unwrap()
}

/// A config error is reported with "error:" once, not "error: error:".
#[test]
fn a_config_error_says_error_once() {
    let dir = TempDir::new("rtf-errtext");
    let cfg = dir.path("bad.yaml");
    std::fs::write(&cfg, "bogus: 1\n").unwrap();
    let out = run_to_end(&cfg, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("mplsrouter: error: "), "{err}");
    assert!(err.contains("unknown key `bogus`"), "{err}");
    assert!(!err.contains("error: error:"), "{err}");
}

/// A routes-file error (found after the EAL is up, reported through the runtime's typed
/// error) also says "error:" once, and its diagnostic once.
#[test]
fn a_routes_error_says_error_once() {
    let dir = TempDir::new("rtf-routes-errtext");
    let routes = dir.path("routes.yaml");
    std::fs::write(&routes, "bogus_section: 1\n").unwrap();
    let cfg = config(&dir, "rerr", Some(&unique_prefix("rerr")), Some(&routes));
    let out = run_to_end(&cfg, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("mplsrouter: error:"))
        .unwrap_or_else(|| panic!("no error line: {err}"));
    assert!(line.contains("routes: "), "{line}");
    assert!(line.contains("bogus_section"), "{line}");
    assert!(!err.contains("error: error:"), "{err}");
    assert!(!line.contains("routes: error:"), "{line}");
    assert_eq!(err.matches("unknown key").count(), 1, "said once: {err}");
}
